"""The write-ahead journal of ``up``/``down``, and how a run reacts to SIGINT/SIGTERM.

Every step that changes a device, the server or the state is announced by a record appended to
``<state dir>/journal.jsonl`` and fsynced (file; directory at creation) **before** the side effect happens. A run that
finishes closes its journal (it is moved to ``journal/<UTC time>-<op>.jsonl`` for the record). A run killed at any
instant (SIGKILL, power loss) leaves an unfinished journal; ``harmless down`` / ``harmless recover`` read it
(:func:`unfinished`) to know which switches may have been touched and what was built, and finish the rollback.

Records (one JSON object per line): ``{"seq", "t" (UTC ISO), "op": "up"|"down"|"recover", "step", "pid", ...}``.
Steps of ``up``: ``up.begin`` → per switch ``backup.saved`` → [``device.revert``: an incremental ``up`` gives back
the objects HARMLESS no longer needs (a port removed from the inventory, a moved VID or trunk), ``rollback_to`` the
pre-run backup, ``keys``] → ``device.commit`` → ``device.committed`` → ``server.build`` → ``server.built`` →
``verified`` → per switch ``device.confirm`` → ``state.save`` → ``up.end``; of a rollback: ``rollback.begin`` → per
switch ``device.restore`` → ``device.restored`` → ``server.remove`` → ``server.removed`` → ``state.clear`` →
``rollback.end``; of ``down``: ``down.begin`` (``discard_changes``) → per switch [``down.target``: the config the
device will end with when the operator's changes are kept (``original``, ``target`` backup entries, ``reverted``,
``kept``, ``discarded`` object labels)] → ``device.restore`` (``to``: the original or that target) →
``device.restored`` → ``server.remove`` → ``server.removed`` → ``state.clear`` → ``down.end``. A torn last line
(power loss during the append) is ignored.

Signals (:func:`interruptible`): SIGINT/SIGTERM only set a flag; the current device step (a commit, a restore)
finishes, and the next *forward* record raises :class:`Interrupted` so the caller rolls back. Rollback records never
raise. A second signal prints that the rollback is being finished.

Fault injection for tests (never set in production): ``HARMLESS_FAULT_AT=<step>[#<n>][:<SIG>][,...]`` (the n-th
record of that step, default 1) sends SIG (or ``HARMLESS_FAULT_SIGNAL``: KILL, INT, TERM) to this process right
after the record is on disk (before its side effect), and ``HARMLESS_FAULT_EXEC=<shell command>`` runs a command
there first (e.g. fill the disk, kill ovs-vswitchd). Several comma-separated points may be given (e.g. a SIGINT that
starts a rollback and a SIGKILL in the middle of it).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from harmless import procs
from harmless import state as st
from harmless.errors import HarmlessError

#: steps that undo (never interrupted, write failures tolerated)
UNDO_STEPS = {"rollback.begin", "device.restore", "device.restored", "server.remove", "server.removed",
              "state.clear", "rollback.end", "down.begin", "down.target", "down.end", "recover.begin", "recover.end",
              "up.end", "backup.restored"}


class Interrupted(HarmlessError):
    """The run was interrupted by SIGINT/SIGTERM; what was applied is rolled back. Exit code 130."""

    exit_code = 130


_interrupt = threading.Event()
_signals_seen = [0]


def interrupted() -> bool:
    """True once SIGINT/SIGTERM arrived during an :func:`interruptible` block."""
    return _interrupt.is_set()


def check_interrupt(problem: str = "interrupted") -> None:
    """Raise :class:`Interrupted` (with ``problem``) if a signal arrived (call between steps, never inside one)."""
    if _interrupt.is_set():
        raise Interrupted("harmless", problem, "")


@contextlib.contextmanager
def interruptible(say: Callable[[str], None]) -> Iterator[None]:
    """SIGINT/SIGTERM during the block set the interrupt flag instead of killing the run.

    Args:
        say: prints one line to the user (first signal: the current step finishes, then everything is rolled back;
            later ones: the rollback is being finished).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _interrupt.clear()
    _signals_seen[0] = 0

    def handler(signum, _frame):
        _signals_seen[0] += 1
        _interrupt.set()
        name = signal.Signals(signum).name
        if _signals_seen[0] == 1:
            say(f"{name}: finishing the current step, then rolling back what was applied (do not power off)")
        else:
            say(f"{name} again: still finishing the rollback, please wait (a SIGKILL now leaves a journal; then run "
                "harmless down)")

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        _interrupt.clear()


def default_path() -> Path:
    """The deployment's journal: ``<state dir>/journal.jsonl`` (other journals, e.g. a lab's, pass their own path)."""
    return st.state_dir() / "journal.jsonl"


def unfinished(path: Path | None = None) -> list[dict] | None:
    """The records of an unfinished journal at ``path`` (default :func:`default_path`), or None.

    A torn last line is dropped; a record that is not JSON in the middle is kept as ``{"step": "corrupt"}``.
    """
    p = path or default_path()
    try:
        lines = p.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return None
    recs = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            recs.append(json.loads(line))
        except json.JSONDecodeError:
            if i < len(lines) - 1:
                recs.append({"step": "corrupt", "line": i + 1})
    return recs or None


def describe(recs: list[dict]) -> str:
    """One line about an unfinished journal: which operation, started when, last step."""
    first, last = recs[0], recs[-1]
    where = f" ({last['switch']})" if last.get("switch") else ""
    return (f"an interrupted harmless {first.get('op', '?')} (pid {first.get('pid', '?')}, started {first.get('t', '?')}) "
            f"stopped after step {last.get('step', '?')}{where}")


def touched_switches(recs: list[dict]) -> list[str]:
    """Switches whose device may have been changed by the journal's run (a commit or restore was started)."""
    out: list[str] = []
    for r in recs:
        if r.get("step") in ("device.revert", "device.commit", "device.restore", "device.confirm") and \
                r.get("switch") not in out:
            out.append(r["switch"])
    return out


class Journal:
    """An open journal; :meth:`record` appends one fsynced record per step.

    Args:
        op: ``up``, ``down``, ``recover``, ... (written into every record).
        say: prints warnings (a rollback record that could not be written).
        append: continue an existing journal (sequence numbers go on) instead of starting a new one.
        path: the journal file (default :func:`default_path`, the deployment's); closing archives it in a
            ``journal/`` folder beside it.

    Raises:
        StateWriteError: the journal cannot be created (then nothing was done).
    """

    def __init__(self, op: str, say: Callable[[str], None] = lambda _m: None, append: bool = False,
                 path: Path | None = None):
        self.op = op
        self.path = path or default_path()
        self.say = say
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        p = self.path
        existed = p.exists()
        try:
            self._fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND | (0 if append else os.O_TRUNC), 0o600)
            if not existed:
                st.fsync_dir(p.parent)
        except OSError as e:
            raise st.StateWriteError(str(p), f"cannot write the journal ({e.strerror})",
                                     "free space on (or remount read-write) the state directory") from None
        prev = unfinished(p) if append else None
        self._seq = len(prev or [])
        self.closed = False

    def record(self, step: str, **data) -> None:
        """Append ``step`` (with ``data``) and fsync it, before the side effect it announces.

        Forward steps first check for a pending signal (:class:`Interrupted`) and raise StateWriteError when the
        record cannot be written; undo steps (:data:`UNDO_STEPS`) do neither (a warning is printed instead).
        """
        undo = step in UNDO_STEPS
        if not undo:
            check_interrupt()
        with self._lock:
            self._seq += 1
            rec = {"seq": self._seq, "t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "op": self.op,
                   "step": step, "pid": os.getpid(), **data}
            try:
                os.write(self._fd, (json.dumps(rec, sort_keys=True) + "\n").encode())
                os.fsync(self._fd)
            except OSError as e:
                if undo:
                    self.say(f"could not journal {step} ({e.strerror}); continuing the rollback")
                else:
                    raise st.StateWriteError(str(self.path), f"cannot write the journal ({e.strerror})",
                                             "free space on (or remount read-write) the state directory's file "
                                             "system; what was applied is rolled back") from None
            n = self._counts[step] = self._counts.get(step, 0) + 1
        _fault_hook(step, n)

    def close(self) -> None:
        """The run ended (done, or fully rolled back): archive the journal. Failures to archive are ignored
        (an unfinished-looking journal whose last record is an ``*.end`` is treated as finished)."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            os.close(self._fd)
        archive(self.op, self.path)


def archive(op: str, path: Path | None = None) -> None:
    """Move the journal at ``path`` (default :func:`default_path`) to ``journal/<UTC time>-<pid>-<op>.jsonl`` beside
    it (best effort)."""
    p = path or default_path()
    with contextlib.suppress(OSError):
        d = p.parent / "journal"
        d.mkdir(exist_ok=True, mode=0o700)
        os.replace(p, d / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}-{op}.jsonl")
        st.fsync_dir(p.parent)


def tidy(path: Path | None = None) -> None:
    """Archive a journal whose run ended but was killed before archiving it (its last record is an ``*.end``)."""
    recs = unfinished(path)
    if recs and is_finished(recs):
        archive(str(recs[0].get("op", "run")), path)


def is_finished(recs: list[dict] | None) -> bool:
    """True when there is no journal or its last record ends the run (``up.end``/``down.end``/...)."""
    return not recs or str(recs[-1].get("step", "")).endswith(".end")


# ----------------------------------------------------------------------------- test-only fault injection
def _fault_hook(step: str, n: int) -> None:
    spec = os.environ.get("HARMLESS_FAULT_AT")
    if not spec:
        return
    for item in spec.split(","):
        where, _, sig = item.partition(":")
        want, _, k = where.partition("#")
        if want != step or n != int(k or 1):
            continue
        cmd = os.environ.get("HARMLESS_FAULT_EXEC")
        if cmd:
            procs.run(["sh", "-c", cmd], timeout=300, check=False)
        sig = (sig or os.environ.get("HARMLESS_FAULT_SIGNAL") or "").upper()
        if sig:
            os.kill(os.getpid(), getattr(signal, f"SIG{sig}"))
            if sig in ("INT", "TERM"):
                time.sleep(0.05)   # let the handler run in the main thread before the side effect
