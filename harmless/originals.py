"""Where each switch's original config lives besides the server, and how any machine finds and verifies it (#23).

The original (the running config saved before HARMLESS's first change, :mod:`harmless.state`) is also kept where a
machine that never saw the deployment can reach it:

* on the switch's own file system, where the platform has one HARMLESS can use (:meth:`SwitchDriver.file_store`:
  IOS/EOS ``flash:``, Junos ``/var/tmp/``; ProCurve has none: docs/high-availability.md);
* in an off-box directory the inventory names (``originals.directory``: a mounted share, a git work tree), as
  ``<directory>/<switch>/``.

Each place holds two files: :data:`ORIGINAL` (the config, byte for byte as HARMLESS read it) and :data:`MANIFEST`
beside it, whose first line is ``<SHA-256>  harmless-original.cfg`` (``sha256sum -c`` reads it) and whose ``#`` lines
carry the switch, the time, the size and, when given, what HARMLESS changed on the switch (``owned``, base64 of its
JSON, for ``down``'s three-way merge). Base64 and hex keep the manifest free of characters a device's file transfer
could alter (IOS's Tcl ``puts`` cannot carry curly braces).

A copy is used only when its text hashes to the SHA-256 recorded next to it (:func:`verify`); a copy that does not
(altered, truncated, damaged) is refused with :class:`CopyError`, unless another copy verifies with exactly the SHA-256
the damaged one's manifest records. Copies that verify but hold different originals are refused too.

The typed API is what ``up`` and ``down`` call, and what a standby server calls to replicate and check originals:
:func:`places` (where a switch's copies go, from the inventory) and :func:`places_of` (from recorded locations),
:func:`store` (write, read back, verify), :func:`locate` (every copy, verified or not), :func:`fetch` (the one
original to use, or :class:`CopyError`), :func:`verify` (a text against a :class:`Manifest`), :func:`remove`.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from harmless import state as st
from harmless.errors import DeviceError, HarmlessError
from harmless.inventory import OriginalsSettings
from harmless.switch_drivers.base import SwitchDriver

#: the config file of a copy (on the switch, and in ``<directory>/<switch>/``)
ORIGINAL = "harmless-original.cfg"
#: its manifest: ``<SHA-256>  harmless-original.cfg`` then ``# key: value`` lines
MANIFEST = "harmless-original.sha256"
_HEAD = re.compile(r"^([0-9a-f]{64})  (\S+)$")


class CopyError(HarmlessError):
    """A copy of an original is damaged, altered, contradicts another copy, or cannot be written. Exit code 2
    (nothing was changed on any device)."""

    exit_code = 2


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Location(_M):
    """One place a copy lives: ``kind`` ``switch`` (``where`` = ``<switch> <file store><file>``) or ``directory``
    (``where`` = the file's path)."""

    kind: Literal["switch", "directory"]
    where: str

    def __str__(self) -> str:
        return f"{'the switch' if self.kind == 'switch' else 'the off-box directory'}: {self.where}"


class Manifest(_M):
    """What is recorded next to a copy (the :data:`MANIFEST` file).

    Attributes:
        switch: the switch's name in the inventory.
        sha256: SHA-256 (hex) of the original's text (UTF-8), as in the state's backup index.
        size: its length in bytes.
        saved: when HARMLESS stored the copy (UTC, ``%Y-%m-%dT%H:%M:%SZ``).
        owned: what HARMLESS changed on the switch (``harmless.state.Ownership`` as JSON), None when not recorded.
    """

    switch: str = Field(pattern=r"^[a-z0-9]{1,9}$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)
    saved: str
    owned: dict | None = None

    def render(self) -> str:
        """The manifest file's text."""
        lines = [f"{self.sha256}  {ORIGINAL}", "# harmless original copy, version 1 (do not edit: harmless down "
                 "verifies the config against the SHA-256 above)", f"# switch: {self.switch}",
                 f"# saved: {self.saved}", f"# size: {self.size}"]
        if self.owned is not None:
            data = base64.b64encode(json.dumps(self.owned, sort_keys=True).encode()).decode()
            lines += [f"# owned: {data[i:i + 76]}" for i in range(0, len(data), 76)]
        return "\n".join(lines) + "\n"

    @classmethod
    def parse(cls, text: str, where: str) -> "Manifest":
        """Read a manifest's text.

        Raises:
            CopyError: not a manifest of this format (``where`` names the file).
        """
        lines = [ln.strip() for ln in text.replace("\r\n", "\n").splitlines() if ln.strip()]
        head = _HEAD.match(lines[0]) if lines else None
        fields: dict[str, str] = {}
        for ln in lines[1:]:
            key, sep, val = ln.removeprefix("#").strip().partition(": ")
            if sep and key in ("switch", "saved", "size", "owned"):
                fields[key] = fields.get(key, "") + val.strip() if key == "owned" else val.strip()
        try:
            if head is None or head.group(2) != ORIGINAL:
                raise ValueError(f"the first line is not '<SHA-256>  {ORIGINAL}'")
            owned = json.loads(base64.b64decode(fields["owned"], validate=True)) if "owned" in fields else None
            return cls(switch=fields.get("switch", ""), sha256=head.group(1), size=int(fields.get("size", "-1")),
                       saved=fields.get("saved", ""), owned=owned)
        except (ValueError, TypeError) as e:
            raise CopyError(where, f"the manifest is damaged ({str(e).splitlines()[0]})",
                            "remove the copy (it cannot be verified) or restore it from another copy") from None


def sha256(text: str) -> str:
    """SHA-256 (hex) of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode()).hexdigest()


def verify(text: str, manifest: Manifest) -> str | None:
    """The original a copy holds: ``text`` (or the same text with the line endings a transfer may add or drop: CRLF
    as LF, a final newline more or less) when it hashes to ``manifest.sha256``; None when no variant does."""
    base = text.replace("\r\n", "\n")
    for cand in (text, base, base.rstrip("\n"), base.rstrip("\n") + "\n"):
        if sha256(cand) == manifest.sha256:
            return cand
    return None


# ----------------------------------------------------------------------------- the places a copy can live
class Place:
    """One place for a switch's copy: the switch's file store or its folder in the off-box directory.

    Args:
        switch: the switch's name.
        drv: an open driver session (the switch's file store), or None for a directory place.
        directory: the off-box directory (its ``<switch>/`` folder is used), or None for the switch.
    """

    def __init__(self, switch: str, drv: SwitchDriver | None = None, directory: str | Path | None = None):
        self.switch, self.drv = switch, drv
        self.dir = Path(directory).expanduser() / switch if directory is not None else None

    def location(self, name: str = ORIGINAL) -> Location:
        """Where the file ``name`` of this place is."""
        if self.dir is not None:
            return Location(kind="directory", where=str(self.dir / name))
        return Location(kind="switch", where=f"{self.switch} {self.drv.file_store()}{name}")

    def write(self, name: str, text: str, config: bool = False) -> None:
        """Write ``name`` (``config``: the switch's running config at this moment, see
        :meth:`SwitchDriver.write_config_copy`). Raises CopyError (directory) or DeviceError (switch)."""
        if self.dir is None:
            (self.drv.write_config_copy if config else self.drv.write_file)(name, text)
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            st.write_private(self.dir / name, text)
        except (OSError, st.StateWriteError) as e:
            raise CopyError(str(self.dir / name), f"cannot write the off-box copy ({getattr(e, 'problem', e)})",
                            "make originals.directory a writable directory (mounted, with free space)") from None

    def read(self, name: str, config: bool = False) -> str | None:
        """The text of ``name`` (``config``: :meth:`SwitchDriver.read_config_copy`), None when it does not exist."""
        if self.dir is None:
            return (self.drv.read_config_copy if config else self.drv.read_file)(name)
        try:
            return (self.dir / name).read_text()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as e:
            raise CopyError(str(self.dir / name), f"cannot read the off-box copy ({e})",
                            "check the directory's mount and permissions") from None

    def delete(self, name: str) -> None:
        """Delete ``name`` (missing: nothing to do)."""
        if self.dir is None:
            self.drv.delete_file(name)
            return
        try:
            (self.dir / name).unlink(missing_ok=True)
            if self.dir.exists() and not any(self.dir.iterdir()):
                self.dir.rmdir()
            st.fsync_dir(self.dir.parent)
        except OSError as e:
            raise CopyError(str(self.dir / name), f"cannot remove the off-box copy ({e.strerror})",
                            "check the directory's permissions, or remove the file by hand") from None


def places(switch: str, drv: SwitchDriver | None, settings: OriginalsSettings) -> list[Place]:
    """The places the inventory's ``originals`` settings give ``switch``: its file store (when ``on_switch`` and the
    platform has one) and the off-box ``directory`` (when set). The server's own backup is not among them."""
    out = []
    if settings.on_switch and drv is not None and drv.file_store() is not None:
        out.append(Place(switch, drv=drv))
    if settings.directory:
        out.append(Place(switch, directory=settings.directory))
    return out


def places_of(switch: str, locations: list[Location | dict], drv: SwitchDriver | None) -> list[Place]:
    """The places the recorded ``locations`` name (a switch place needs the open ``drv``; without one it is left
    out). Duplicates are dropped."""
    out: dict[str, Place] = {}
    for loc in locations:
        loc = Location.model_validate(loc)
        if loc.kind == "switch" and drv is not None:
            out.setdefault("switch", Place(switch, drv=drv))
        elif loc.kind == "directory":
            d = Path(loc.where).parent.parent
            out.setdefault(str(d), Place(switch, directory=d))
    return list(out.values())


def check_directory(settings: OriginalsSettings, where: str) -> None:
    """Before any change: the off-box directory (if any) exists and is writable.

    Raises:
        CopyError: naming ``{where}.directory`` and the fix.
    """
    if not settings.directory:
        return
    d = Path(settings.directory).expanduser()
    if not d.is_dir():
        raise CopyError(f"{where}.directory", f"{d} is not a directory", "create it (or mount the share) first")
    if not os.access(d, os.W_OK | os.X_OK):
        raise CopyError(f"{where}.directory", f"{d} is not writable by this user", "fix its permissions")


# ----------------------------------------------------------------------------- store, fetch, remove
def store(place: Place, text: str, owned: dict | None = None) -> Location:
    """Keep ``text`` (the switch's original, equal to its running config at this moment on a switch place) in
    ``place`` with its manifest, read both back and verify them.

    Args:
        place: where.
        text: the original config, exactly as the state's backup holds it.
        owned: what HARMLESS changed on the switch (for ``down``'s merge), or None.

    Returns:
        The location of the config file.

    Raises:
        CopyError: the copy read back differs (the config changed while it was copied, or the transfer altered it);
        DeviceError: the switch refused a file operation.
    """
    m = Manifest(switch=place.switch, sha256=sha256(text), size=len(text.encode()),
                 saved=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), owned=owned)
    place.write(ORIGINAL, text, config=True)
    if verify(place.read(ORIGINAL, config=True) or "", m) is None and place.dir is None:
        place.write(ORIGINAL, text)            # the device's own copy reads back differently: write the text itself
    if verify(place.read(ORIGINAL, config=True) or "", m) is None:
        raise CopyError(str(place.location()), "the copy read back does not match the original's SHA-256",
                        "the running config may have changed while it was copied: run harmless up again")
    place.write(MANIFEST, m.render())
    back = place.read(MANIFEST)
    if back is None or Manifest.parse(back, str(place.location(MANIFEST))) != m:
        raise CopyError(str(place.location(MANIFEST)), "the manifest read back differs from what was written",
                        "check the file store (free space), then run harmless up again")
    return place.location()


def update_owned(place: Place, sha: str, owned: dict | None) -> Location:
    """Rewrite the manifest in ``place`` with ``owned`` (what HARMLESS changed on the switch now), the original's
    record unchanged; read it back.

    Raises:
        CopyError: no manifest there, one of another original (``sha`` differs), or it reads back differently;
        DeviceError: the switch refused.
    """
    where = str(place.location(MANIFEST))
    raw = place.read(MANIFEST)
    if raw is None:
        raise CopyError(where, "the copy's manifest is gone", "run harmless down, then harmless up, to store it again")
    m = Manifest.parse(raw, where)
    if m.sha256 != sha:
        raise CopyError(where, f"it is the manifest of another original (SHA-256 {m.sha256[:16]}...)",
                        "remove the copy by hand; run harmless down, then harmless up")
    new = m.model_copy(update={"owned": owned})
    place.write(MANIFEST, new.render())
    back = place.read(MANIFEST)
    if back is None or Manifest.parse(back, where) != new:
        raise CopyError(where, "the manifest read back differs from what was written", "check the file store")
    return place.location(MANIFEST)


class Found(_M):
    """What one place holds: the verified original (``text``, None when it does not verify), its manifest (None
    when missing or damaged) and why it was refused (``problem``, None when it verified)."""

    location: Location
    text: str | None = None
    manifest: Manifest | None = None
    problem: str | None = None


def look(place: Place) -> Found | None:
    """The copy in ``place``, verified (None: no copy there). Raises DeviceError when the switch cannot be read."""
    cfg, raw = place.read(ORIGINAL, config=True), place.read(MANIFEST)
    if cfg is None and raw is None:
        return None
    loc = place.location()
    if raw is None:
        return Found(location=loc, problem=f"no {MANIFEST} next to it: its SHA-256 is unknown")
    try:
        m = Manifest.parse(raw, str(place.location(MANIFEST)))
    except CopyError as e:
        return Found(location=loc, problem=e.problem)
    if m.switch != place.switch:
        return Found(location=loc, manifest=m, problem=f"it is the original of switch {m.switch}, not {place.switch}")
    if cfg is None:
        return Found(location=loc, manifest=m, problem=f"{ORIGINAL} is missing")
    text = verify(cfg, m)
    if text is None:
        return Found(location=loc, manifest=m, problem=f"its SHA-256 is {sha256(cfg)}, the manifest records "
                                                        f"{m.sha256} (altered or damaged)")
    return Found(location=loc, text=text, manifest=m)


def locate(where: list[Place]) -> list[Found]:
    """Every copy the places hold, each verified or with why not (nothing raised for a bad copy; :func:`fetch`
    decides). Raises DeviceError / CopyError only when a place cannot be read at all."""
    return [f for f in (look(p) for p in where) if f is not None]


class Fetched(_M):
    """The original a machine found for one switch: ``text`` (verified), ``manifest``, ``location`` (the copy used),
    ``also`` (other copies that verified with the same SHA-256), ``warnings`` (damaged copies passed over)."""

    text: str
    manifest: Manifest
    location: Location
    also: list[Location] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def fetch(switch: str, where: list[Place]) -> Fetched | None:
    """The switch's original from its copies, verified (None when no place holds a copy).

    Raises:
        CopyError: a copy does not verify and no other copy verifies with the SHA-256 its manifest records, or two
            copies hold different originals (nothing is used; the message names each copy and the fix).
        DeviceError: the switch cannot be read.
    """
    found = locate(where)
    good = [f for f in found if f.text is not None]
    bad = [f for f in found if f.text is None]
    shas = {f.manifest.sha256 for f in good}
    if len(shas) > 1:
        raise CopyError(switch, "its copies hold different originals: " + "; ".join(
            f"{f.location.where} SHA-256 {f.manifest.sha256[:16]}..." for f in good),
            "remove the copy that is not the original (the one saved by the first harmless up), then run down again")
    vouched = bool(good) and all(f.manifest is not None and f.manifest.sha256 in shas for f in bad)
    if bad and not vouched:
        raise CopyError(str(bad[0].location), f"the copy of {switch}'s original is refused: {bad[0].problem}",
                        "nothing was changed; restore the copy from another copy of the original (or from your own "
                        "backup of the switch) and run harmless down again")
    if not good:
        return None
    return Fetched(text=good[0].text, manifest=good[0].manifest, location=good[0].location,
                   also=[f.location for f in good[1:]],
                   warnings=[f"{f.location.where}: {f.problem} (the other copy verified; this one was not used)"
                             for f in bad])


def remove(where: list[Place]) -> list[Location]:
    """Delete the copy (config and manifest) from every place; returns where copies were removed from.

    Raises:
        CopyError / DeviceError: a place refused (the others are still tried first).
    """
    done, errors = [], []
    for p in where:
        try:
            p.delete(ORIGINAL)             # the config first: a manifest left alone vouches for nothing
            p.delete(MANIFEST)
            done.append(p.location())
        except (CopyError, DeviceError) as e:
            errors.append(e)
    if errors:
        raise errors[0]
    return done
