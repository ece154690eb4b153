"""Persisted state of a HARMLESS deployment: ``<state dir>/state.json``, the backups and their index, the lock.

The state directory is ``$HARMLESS_STATE_DIR`` or ``/var/lib/harmless``. It holds:
  * ``state.json`` (mode 0600): the applied plan, the inventory path and its non-secret switch entries (how to reach
    each device again for ``down``; the password stays a *reference*), the OVS instance used, and per switch the
    original backup. A versioned schema (:class:`DeploymentState`, ``version`` = :data:`STATE_VERSION`); a file that
    is not valid JSON, not of the schema or of an unknown version raises :class:`StateError` (one line: file + fix).
  * ``backups/<switch>-<UTC time>.cfg`` (mode 0600) and ``backups/index.json``: every config HARMLESS saved, with its
    SHA-256 (and, for an original, where its copies off this server are: :func:`set_copies`, :mod:`harmless.originals`). The backup taken at a switch's first migration is its **original**; it stays the *active* original until
    a ``down`` proves the device equals it (then it is marked ``restored``), and it is never overwritten or deleted.
    The index also keeps the switch's non-secret connection record, so ``down`` can restore the original even when
    ``state.json`` was lost or corrupted.
  * ``journal.jsonl``: the write-ahead journal of the running or interrupted ``up``/``down`` (:mod:`harmless.journal`).
  * ``lock``: held (``flock``) by the one writer (``up``, ``down``, ``recover``, ``watch`` changes).
  * ``ovs/``: the private OVS instance (when HARMLESS runs its own).
Passwords are never written here. Every write is atomic (temp file, fsync, rename, fsync of the directory); a write
that fails (disk full, read-only) raises :class:`StateWriteError` before anything that depends on it happens.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harmless.errors import HarmlessError

#: version of state.json this harmless writes and reads (1 = harmless 0.1, without ``version``, and 2, without
#: ``owned``: read and upgraded)
STATE_VERSION = 3


class StateError(HarmlessError):
    """state.json (or the backup index) is corrupt, of an unknown version, or unreadable. Exit code 2."""

    exit_code = 2


class StateWriteError(HarmlessError):
    """A write to the state directory failed (disk full, read-only file system, permissions)."""


class LockedError(HarmlessError):
    """Another harmless process holds the state directory's lock. Exit code 1."""


def state_dir() -> Path:
    """The state directory (created 0700 if missing)."""
    d = Path(os.environ.get("HARMLESS_STATE_DIR", "/var/lib/harmless"))
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        raise StateWriteError(str(d), f"cannot create the state directory ({e.strerror})",
                              "check the path and permissions, or set HARMLESS_STATE_DIR") from None
    return d


def fsync_dir(d: Path) -> None:
    """fsync a directory so a rename/creation in it survives power loss."""
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, mode 0600, fsynced (file and directory).

    Raises:
        StateWriteError: the disk is full, read-only, or the path is not writable (the old file is untouched).
    """
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise StateWriteError(str(path), f"cannot write ({e.strerror})",
                              "free space on (or remount read-write) the state directory's file system, then run "
                              "harmless down to finish restoring") from None


# ----------------------------------------------------------------------------- state.json schema
class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BackupRef(_M):
    """A saved running config: its file and SHA-256 (hex)."""

    file: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class DpdkRef(_M):
    """The DPDK options a private OVS-DPDK instance was started with (:class:`harmless.ovs.DpdkOptions`)."""

    hugepages: bool = True
    socket_mem_mb: int = 1024
    lcore_mask: str = "0x1"
    pmd_cpu_mask: str = "0x2"


class OvsRef(_M):
    """The OVS instance a deployment uses: private (``base_dir``, ``netns``) or the system's.

    ``dpdk``: the DPDK options of a private ``dpdk`` instance (None in states written before they were recorded:
    :func:`harmless.deployment.state_ovs` then reads them from the inventory).
    """

    private: bool
    base_dir: str | None = None
    netns: str | None = None
    datapath: str = "netdev"
    dpdk: DpdkRef | None = None


class OwnedObject(_M):
    """One config object HARMLESS wrote on a switch (a migrated port, one of its VLANs, a trunk): what it was before
    and what HARMLESS left there (:mod:`harmless.switch_drivers.ownership`).

    Attributes:
        key: the object's key in the switch's config syntax (``interface fastethernet0/7``, ``vlans hl107``,
            ``port 7``).
        label: how it is named to people (``interface FastEthernet0/7``).
        base: its lines before HARMLESS first wrote it (None: it did not exist).
        ours: its lines as HARMLESS left them after its last commit (None: HARMLESS removed it).
    """

    key: str
    label: str
    base: list[str] | None = None
    ours: list[str] | None = None


class Ownership(_M):
    """What HARMLESS owns on one switch: every object its tagging config addresses, in the switch's config syntax
    (``blocks`` for IOS/EOS, ``junos``, ``procurve``). ``down`` reverts exactly these and keeps the rest."""

    syntax: str
    objects: list[OwnedObject] = Field(default_factory=list)


class DeploymentState(_M):
    """Schema of state.json (version :data:`STATE_VERSION`), what :func:`load` returns and :func:`save` writes.

    Attributes:
        inventory: the inventory file (absolute path).
        plan: the deployed plan (``harmless.plan.Plan.to_dict()``; ``Plan.from_dict`` reads it back: the plan is a
            layer above the state).
        backups: per switch its original backup.
        ports_before: per switch, per port the 802.1Q state before the first migration
            (``dataclasses.asdict`` of :class:`harmless.switch_drivers.base.PortState`).
        switches: per switch its non-secret inventory entry (``harmless.inventory.Switch.model_dump(mode="json")``).
        ovs: the server's OVS instance.
        qos_live: live ``harmless qos set`` values, ``{switch: {interface: {"qos", "inventory", "time"}}}``
            (:mod:`harmless.qos.live`).
        port_admin: legacy ports HARMLESS shut on the device because a controller took their br-of port down
            (OFPPC_PORT_DOWN, :mod:`harmless.portmod`), ``{switch: {interface: {"ofport", "time"}}}``: written before
            the device is changed, removed before it is re-enabled; ``down`` gives the original config back anyway.
        owned: per switch what HARMLESS wrote (:class:`Ownership`); a switch without it (a state of version 2) is
            given back its original exactly by ``down``.
    """

    version: Literal[3] = 3
    inventory: str
    plan: dict | None = None
    backups: dict[str, BackupRef] = Field(default_factory=dict)
    ports_before: dict[str, dict[str, dict]] = Field(default_factory=dict)
    switches: dict[str, dict] = Field(default_factory=dict)
    ovs: OvsRef | None = None
    phase: Literal["applying", "up"] = "up"
    updated: str | None = None
    qos_live: dict[str, dict[str, dict]] = Field(default_factory=dict)
    port_admin: dict[str, dict[str, dict]] = Field(default_factory=dict)
    owned: dict[str, Ownership] = Field(default_factory=dict)

    @property
    def deployed(self) -> bool:
        """True when a plan is deployed."""
        return bool(self.plan)


def state_file() -> Path:
    return state_dir() / "state.json"


_FIX_CORRUPT = ("run harmless down: it restores every switch from its retained original backup (harmless backups "
                "lists them) and removes the bridges, then moves this file aside")


def load() -> DeploymentState | None:
    """The current deployment state (validated), or None when nothing is deployed.

    Raises:
        StateError: the file is unreadable, not JSON, not of the schema or of an unknown version.
    """
    p = state_file()
    try:
        text = p.read_text()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise StateError(str(p), f"cannot read the state ({getattr(e, 'strerror', None) or e})", _FIX_CORRUPT) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise StateError(str(p), f"the state is corrupt (not JSON: {e.msg} at line {e.lineno})", _FIX_CORRUPT) from None
    if not isinstance(data, dict):
        raise StateError(str(p), "the state is corrupt (not a JSON object)", _FIX_CORRUPT)
    version = data.get("version", 1)
    if version in (1, 2):
        data = {**data, "version": STATE_VERSION}
    elif version != STATE_VERSION:
        raise StateError(str(p), f"state version {version!r} is not one this harmless reads (it reads "
                         f"{STATE_VERSION})", "use the harmless version that wrote it to run harmless down, or "
                         "run this one's harmless down, which restores from the retained original backups")
    try:
        return DeploymentState.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise StateError(str(p), f"the state is corrupt ({loc}: {err['msg']})", _FIX_CORRUPT) from None


def save(state: DeploymentState) -> None:
    """Validate and write the state atomically (mode 0600, fsynced). Raises StateWriteError (disk) or ValueError."""
    doc = DeploymentState.model_validate({**state.model_dump(mode="json"), "version": STATE_VERSION}
                                         ).model_dump(mode="json")
    write_private(state_file(), json.dumps(doc, indent=2, sort_keys=True))


def clear() -> None:
    """Forget the deployment (backups are kept for the record). Raises StateWriteError when it cannot."""
    p = state_file()
    try:
        if p.exists():
            p.unlink()
            fsync_dir(p.parent)
    except OSError as e:
        raise StateWriteError(str(p), f"cannot remove the state ({e.strerror})",
                              "check the state directory's file system") from None


def set_aside(reason: str = "corrupt") -> Path | None:
    """Move an unusable state.json aside (``state.json.<reason>-<UTC time>``); returns the new path or None."""
    p = state_file()
    if not p.exists():
        return None
    dst = p.with_name(f"state.json.{reason}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    os.replace(p, dst)
    fsync_dir(p.parent)
    return dst


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ----------------------------------------------------------------------------- backups and their index
def backups_dir() -> Path:
    d = state_dir() / "backups"
    d.mkdir(exist_ok=True, mode=0o700)
    return d


def _index_path() -> Path:
    return backups_dir() / "index.json"


def backup_index() -> list[dict]:
    """Every backup HARMLESS saved, oldest first: ``[{"switch", "file", "sha256", "time", "role": "original" |
    "pre-run" | "merged", "status": "active" | "restored" | "superseded", "record": {non-secret switch entry}}]``; an
    active original may carry ``owned`` (:func:`set_owned`), a restored one ``restored_with_changes``.

    Raises:
        StateError: the index is corrupt.
    """
    p = _index_path()
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as e:
        raise StateError(str(p), f"the backup index is corrupt ({e})",
                         "the backup files beside it are intact; move the index aside and name the original "
                         "backup file to restore by hand") from None
    return list(data.get("backups", []))


def _write_index(entries: list[dict]) -> None:
    write_private(_index_path(), json.dumps({"version": 1, "backups": entries}, indent=2))


#: serialises read-modify-write of the index between threads (switches are saved in parallel)
_INDEX_LOCK = threading.RLock()


def save_backup(switch: str, config: str, role: str = "original", record: dict | None = None) -> dict:
    """Save a running config (fsynced, 0600) and register it in the index. Never overwrites a file.

    Args:
        switch: switch name.
        config: the running config text.
        role: ``original`` (first migration: what ``down`` gives back), ``pre-run`` (before an incremental ``up``,
            for ``recover``) or ``merged`` (what ``down`` replaces the config with when it keeps the operator's
            changes: the original + those changes).
        record: the non-secret inventory entry of the switch (to reconnect without state.json).

    Returns:
        ``{"file": path, "sha256": hex}``.

    Raises:
        StateWriteError: the disk is full or read-only (nothing is registered then).
    """
    d = backups_dir()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    with _INDEX_LOCK:
        p = d / f"{switch}-{stamp}.cfg"
        n = 1
        while p.exists():
            n += 1
            p = d / f"{switch}-{stamp}-{n}.cfg"
        write_private(p, config)
    entry = {"file": str(p), "sha256": sha256(config)}
    with _INDEX_LOCK:
        entries = backup_index()
        entries.append({"switch": switch, **entry, "time": stamp, "role": role, "status": "active",
                        "record": record or {}})
        _write_index(entries)
    return entry


def active_original(switch: str) -> dict | None:
    """The switch's active original backup entry of the index (never proven restored), or None."""
    for e in reversed(backup_index()):
        if e["switch"] == switch and e["role"] == "original" and e["status"] == "active":
            return e
    return None


def active_originals() -> list[dict]:
    """Every switch's active original backup entry (the configs ``down`` must give back)."""
    seen, out = set(), []
    for e in reversed(backup_index()):
        if e["role"] == "original" and e["status"] == "active" and e["switch"] not in seen:
            seen.add(e["switch"])
            out.append(e)
    return list(reversed(out))


def mark_restored(switch: str, file: str, kept: str | None = None) -> None:
    """Record that HARMLESS's changes are gone from the device (it is no longer the active original): the device was
    proven equal to this original, or, with ``kept``, to the config in that backup file (the original with the
    operator's later changes kept, :mod:`harmless.ownership`)."""
    with _INDEX_LOCK:
        entries = backup_index()
        for e in entries:
            if e["switch"] == switch and e["file"] == file and e["status"] == "active":
                e["status"] = "restored"
                e["restored"] = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
                if kept:
                    e["restored_with_changes"] = kept
        _write_index(entries)


def set_owned(switch: str, file: str, owned: dict | None) -> None:
    """Keep a copy of what HARMLESS owns on ``switch`` (an :class:`Ownership` dump) with its active original ``file``
    in the index, so ``down`` keeps the operator's changes also when state.json is lost. Raises StateWriteError."""
    with _INDEX_LOCK:
        entries = backup_index()
        for e in entries:
            if e["switch"] == switch and e["file"] == file and e["status"] == "active":
                e["owned"] = owned
        _write_index(entries)


def mark_superseded(switch: str, file: str) -> None:
    """An active original that no longer matches a device free of HARMLESS VLANs (changed by hand since): kept on
    disk and in the index, but no longer what ``down`` gives back."""
    with _INDEX_LOCK:
        entries = backup_index()
        for e in entries:
            if e["switch"] == switch and e["file"] == file and e["status"] == "active":
                e["status"] = "superseded"
        _write_index(entries)


def set_copies(switch: str, file: str, copies: list[dict]) -> None:
    """Record where copies of the original ``file`` of ``switch`` are kept besides this server (issue #23:
    ``[{"kind": "switch" | "directory", "where": ...}]``, :class:`harmless.originals.Location` dumps) in its index entry,
    so ``down`` removes them once the device is proven back, also when state.json is lost. Raises StateWriteError."""
    with _INDEX_LOCK:
        entries = backup_index()
        for e in entries:
            if e["switch"] == switch and e["file"] == file:
                e["copies"] = copies
        _write_index(entries)


def copies_of(switch: str, file: str) -> list[dict]:
    """The copies :func:`set_copies` recorded for the backup ``file`` of ``switch`` ([] when none)."""
    for e in backup_index():
        if e["switch"] == switch and e["file"] == file:
            return list(e.get("copies") or [])
    return []


def read_backup(entry: dict) -> str:
    """Read a backup and check its SHA-256.

    Raises:
        StateError: the file is missing or was altered (its SHA-256 differs from the recorded one).
    """
    try:
        text = Path(entry["file"]).read_text()
    except OSError as e:
        raise StateError(entry["file"], f"cannot read the backup ({e.strerror})",
                         "restore the file from your own copies; harmless backups lists what it saved") from None
    if sha256(text) != entry["sha256"]:
        raise StateError(entry["file"], "the backup does not match its recorded SHA-256 (altered)",
                         "restore the file from your own copies; harmless backups lists what it saved")
    return text


# ----------------------------------------------------------------------------- the writer lock
@contextlib.contextmanager
def using(d: Path | str):
    """Run what is inside with the state directory ``d`` (``HARMLESS_STATE_DIR``), then put the old value back.

    For labs and tests that drive HARMLESS with a private state directory (the OSHI and overlay labs).
    """
    old = os.environ.get("HARMLESS_STATE_DIR")
    os.environ["HARMLESS_STATE_DIR"] = str(d)
    try:
        yield Path(d)
    finally:
        if old is None:
            os.environ.pop("HARMLESS_STATE_DIR", None)
        else:
            os.environ["HARMLESS_STATE_DIR"] = old


@contextlib.contextmanager
def lock(command: str | None = None, wait_s: float = 0.0) -> Iterator[None]:
    """Hold the state directory's lock for the block (one writer at a time; released when the process dies).

    Args:
        command: what the holder is doing, shown to a refused second writer (default: this process's argv).
        wait_s: keep trying this long (s) before refusing (``up``/``down`` wait out a ``watch`` round that holds
            the lock for a few milliseconds).

    Raises:
        LockedError: another process holds it (the message names its pid and command).
    """
    p = state_dir() / "lock"
    try:
        fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise StateWriteError(str(p), f"cannot open the lock ({e.strerror})",
                              "remount the state directory's file system read-write (or free space) and run again; "
                              "nothing was changed") from None
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
            holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "unknown"
            raise LockedError(str(p), f"another harmless holds the lock ({holder})",
                              "wait for it to finish (harmless status shows what is deployed); the lock is released "
                              "automatically when that process ends") from None
        info = f"pid {os.getpid()}: {command or ' '.join(['harmless', *sys.argv[1:]])}"
        with contextlib.suppress(OSError):   # who holds it is only shown to others: a full disk must not stop a down
            os.ftruncate(fd, 0)
            os.pwrite(fd, info.encode(), 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


_shared = {"holders": 0, "cm": None}
_shared_mutex = threading.Lock()


@contextlib.contextmanager
def shared_lock(command: str | None = None, wait_s: float = 0.0) -> Iterator[None]:
    """:func:`lock` shared by the threads of one process (``harmless watch``: its link mirror, its port-mod watcher
    and their device worker): the first holder takes the state directory's lock, the others join it, the last one
    out releases it. Other processes are kept out as by :func:`lock`; the threads coordinate among themselves (a
    thread holding it for a device commit does not delay another's OVS change).

    Raises:
        LockedError: another process holds the lock (after ``wait_s`` seconds).
    """
    with _shared_mutex:
        if _shared["holders"] == 0:
            cm = lock(command, wait_s)
            cm.__enter__()
            _shared["cm"] = cm
        _shared["holders"] += 1
    try:
        yield
    finally:
        with _shared_mutex:
            _shared["holders"] -= 1
            if _shared["holders"] == 0:
                cm, _shared["cm"] = _shared["cm"], None
                cm.__exit__(None, None, None)


def lock_holder() -> str | None:
    """Who holds the lock now (``"pid N: command"``), or None when it is free."""
    p = state_dir() / "lock"
    if not p.exists():
        return None
    fd = os.open(p, os.O_RDWR)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 4096, 0).decode(errors="replace").strip() or "unknown"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def jsonable(obj: Any) -> Any:
    """``obj`` as it reads back from JSON (tuples become lists): compare live values with stored ones through this."""
    return json.loads(json.dumps(obj))
