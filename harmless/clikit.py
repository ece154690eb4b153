"""What every ``harmless`` command module shares: the consoles, progress lines, error handling and the root check.

The top-level CLI (:mod:`harmless.cli`) and the component command groups (``harmless oshi``, ``harmless capex``,
``harmless bench``, ...) import these from here, never from each other, so no command module imports
:mod:`harmless.cli` (which imports them all to register them).

Errors print one line ``error: <file>: <field>: <problem> (fix: ...)`` on stderr, no traceback; the exit code is the
:class:`harmless.errors.HarmlessError`'s (2 bad input, nothing changed; 1 failure), 130 on Ctrl-C.
"""
from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from harmless.errors import HarmlessError


class _Console(Console):
    """rich's Console, except that a broken pipe only silences it (rich's own ``on_broken_pipe`` exits with 1, which
    would make a finished ``harmless up | true`` report a failure)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True


#: human output (stdout); machine output (``--json``) is printed with ``click.echo`` or ``out.print_json``
out = _Console()
#: progress lines and errors (stderr)
err = _Console(stderr=True)


class QuietStream:
    """``sys.stdout``/``sys.stderr`` whose write errors never reach the program: a closed pipe (``harmless up |
    true``, ``| head -n 1``: EPIPE), a hung-up terminal (EIO), a full disk behind a redirection (ENOSPC).

    After the first error the stream is dead: its descriptor is pointed at ``/dev/null`` (what is still buffered,
    and the interpreter's flush at exit, then go nowhere instead of failing again: Python documentation, module
    ``signal``, "Note on SIGPIPE") and later writes are dropped. What a run does and its exit code never depend on
    whether anybody still reads its output.

    Args:
        stream: the text stream to wrap (anything else is delegated to it).
    """

    def __init__(self, stream: TextIO):
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._stream.write(text)
            except (OSError, ValueError):
                self._break()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._break()

    def _break(self) -> None:
        self.broken = True
        try:
            fd = self._stream.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
        except (OSError, ValueError):     # no descriptor (a test's stream) or already gone
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def guard_output() -> None:
    """Make output errors harmless for the rest of the process (the CLI calls it first thing).

    A standard descriptor (0, 1, 2) closed when harmless starts (``harmless up >&-``) is opened on ``/dev/null``
    (so no file HARMLESS opens later, e.g. the journal, can take its number and receive output), and
    ``sys.stdout``/``sys.stderr`` become :class:`QuietStream` wrappers. Idempotent.
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    for name, fd in (("stdout", 1), ("stderr", 2)):
        stream = getattr(sys, name)
        if stream is None:
            stream = open(fd, "w", closefd=False)  # noqa: SIM115 - lives as long as the process
        if not isinstance(stream, QuietStream):
            setattr(sys, name, QuietStream(stream))


def progress(quiet: bool) -> Callable[[str], None]:
    """A progress callback printing ``· msg`` on stderr, or doing nothing when ``quiet``."""
    def p(msg: str) -> None:
        if not quiet:
            err.print(f"[dim]·[/dim] {msg}", highlight=False)
    return p


def handle_errors(fn):
    """Decorator for click commands: HarmlessError → one ``error:`` line and its exit code; Ctrl-C → exit 130;
    anything else → one ``internal error:`` line and exit 1 (a traceback only with ``HARMLESS_DEBUG=1``)."""
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        try:
            return fn(*a, **kw)
        except HarmlessError as e:
            err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False, soft_wrap=True)
            sys.exit(e.exit_code)
        except KeyboardInterrupt:
            err.print("[red]interrupted[/red]")
            sys.exit(130)
        except Exception as e:  # noqa: BLE001
            if os.environ.get("HARMLESS_DEBUG"):
                raise
            err.print(f"[red]internal error:[/red] {type(e).__name__}: {e} (set HARMLESS_DEBUG=1 for a traceback)",
                      highlight=False, soft_wrap=True)
            sys.exit(1)
    return wrapper


def need_root() -> None:
    """Raise HarmlessError (exit 1) unless running as root (namespaces, OVS and the state directory need it)."""
    if os.geteuid() != 0:
        raise HarmlessError("harmless", "this command needs root (network namespaces, OVS, the state directory)",
                            "run it with sudo")
