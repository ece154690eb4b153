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

from rich.console import Console
from rich.markup import escape

from harmless.errors import HarmlessError, Refused, report_lines, summary

#: human output (stdout); machine output (``--json``) is printed with ``click.echo`` or ``out.print_json``
out = Console()
#: progress lines and errors (stderr)
err = Console(stderr=True)


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
        except Refused as e:                # every refusal at once, with the warnings and notes found with them
            print_findings(e.findings, err)
            err.print(f"{summary(e.findings)}: nothing was changed", highlight=False, soft_wrap=True)
            sys.exit(e.exit_code)
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


_COLOURS = {"error": "red", "warning": "yellow", "note": "cyan"}


def print_findings(findings, console: Console | None = None) -> None:
    """Print findings (:class:`harmless.errors.Finding`) one line each, ``error:``/``warning:``/``note:``, shared
    explanations once (:func:`harmless.errors.report_lines`)."""
    for label, text in report_lines(list(findings)):
        (console or err).print(f"[{_COLOURS[label]}]{label}:[/] {escape(text)}", highlight=False, soft_wrap=True)


def need_root() -> None:
    """Raise HarmlessError (exit 1) unless running as root (namespaces, OVS and the state directory need it)."""
    if os.geteuid() != 0:
        raise HarmlessError("harmless", "this command needs root (network namespaces, OVS, the state directory)",
                            "run it with sudo")
