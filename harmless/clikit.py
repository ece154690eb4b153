"""What every ``harmless`` command module shares: the consoles, progress lines, error handling and the root check.

The top-level CLI (:mod:`harmless.cli`) and the component command groups (``harmless oshi``, ``harmless capex``,
``harmless bench``, ...) import these from here, never from each other, so no command module imports
:mod:`harmless.cli` (which imports them all to register them).

Errors print one line ``error: <file>: <field>: <problem> (fix: ...)`` on stderr, no traceback; the exit code is the
:class:`harmless.errors.HarmlessError`'s (2 bad input, nothing changed; 1 failure), 130 on Ctrl-C; nothing to do
(:class:`harmless.errors.NothingToDo`) says so and exits 0.

The command-line convention (docs/cli.md) lives here too, so every command spells it the same way: the exit codes
(:data:`EXIT_OK` ...), the shared options (:func:`inventory_option`, :func:`json_option`, :func:`quiet_option`,
:func:`dry_run_option`, :func:`switch_option`, :func:`config_option`) and the one table printer
(:func:`print_table`: whole headers and cells in a terminal, plain tab-separated lines in a pipe).
"""
from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from harmless.errors import HarmlessError, InputError, NothingToDo, Refused, did_you_mean, report_lines, summary


class _Out(Console):
    """The stdout console: soft-wrapped (a long line stays one line) whenever it is not a terminal, decided at each
    print (the file behind ``sys.stdout`` can change, e.g. under click's test runner)."""

    @property
    def soft_wrap(self) -> bool:
        return not self.is_terminal

    @soft_wrap.setter
    def soft_wrap(self, _value: bool) -> None:
        """Set by Console.__init__; the property decides."""


#: human output (stdout); machine output (``--json``) is printed with ``click.echo`` or ``out.print_json``
out = _Out()
#: progress lines and errors (stderr)
err = Console(stderr=True)


def progress(quiet: bool) -> Callable[[str], None]:
    """A progress callback printing ``· msg`` on stderr, or doing nothing when ``quiet``."""
    def p(msg: str) -> None:
        if not quiet:
            err.print(f"[dim]·[/dim] {escape(msg)}", highlight=False)
    return p


def handle_errors(fn):
    """Decorator for click commands: HarmlessError → one ``error:`` line and its exit code; Ctrl-C → exit 130;
    anything else → one ``internal error:`` line and exit 1 (a traceback only with ``HARMLESS_DEBUG=1``)."""
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        try:
            return fn(*a, **kw)
        except NothingToDo as e:
            err.print(escape(str(e)), highlight=False, soft_wrap=True)
            sys.exit(EXIT_OK)
        except Refused as e:                # every refusal at once, with the warnings and notes found with them
            print_findings(e.findings, err)
            err.print(f"{summary(e.findings)}: nothing was changed", highlight=False, soft_wrap=True)
            sys.exit(e.exit_code)
        except HarmlessError as e:
            err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False, soft_wrap=True)
            sys.exit(e.exit_code)
        except KeyboardInterrupt:
            err.print("[red]interrupted[/red]")
            sys.exit(EXIT_INTERRUPTED)
        except Exception as e:  # noqa: BLE001
            if os.environ.get("HARMLESS_DEBUG"):
                raise
            err.print(f"[red]internal error:[/red] {type(e).__name__}: {escape(str(e))} (set HARMLESS_DEBUG=1 for a "
                      "traceback)", highlight=False, soft_wrap=True)
            sys.exit(EXIT_FAILURE)
    return wrapper


_COLOURS = {"error": "red", "warning": "yellow", "note": "cyan"}


def print_findings(findings, console: Console | None = None) -> None:
    """Print findings (:class:`harmless.errors.Finding`) one line each, ``error:``/``warning:``/``note:``, shared
    explanations once (:func:`harmless.errors.report_lines`)."""
    console = console or err
    for label, text in report_lines(list(findings)):          # stderr: one line each, as every error line; stdout:
        console.print(f"[{_COLOURS[label]}]{label}:[/] {escape(text)}", highlight=False,    # wrapped in a terminal
                      soft_wrap=True if console is err else None)


def need_root() -> None:
    """Raise HarmlessError (exit 1) unless running as root (namespaces, OVS and the state directory need it)."""
    if os.geteuid() != 0:
        raise HarmlessError("harmless", "this command needs root (network namespaces, OVS, the state directory)",
                            "run it with sudo")


# ----------------------------------------------------------------------------- exit codes (docs/cli.md)
#: the exit codes of every command (docs/cli.md): 0 done, or nothing to do
EXIT_OK = 0
#: a failure (a device, OVS, the lock, a state write); what this run applied was rolled back
EXIT_FAILURE = 1
#: refused: bad input (arguments, inventory, saved config) or a state that needs a human; nothing was changed
EXIT_INPUT = 2
#: ``up``: some switches migrated, the others failed and were rolled back alone
EXIT_PARTIAL = 3
#: ``up --keep-on-no-controller``: the deployment was kept although no controller connected
EXIT_NO_CONTROLLER = 4
#: ``down`` (or ``up``) stopped: the operator changed what HARMLESS owns (``harmless.ownership.DriftConflict``);
#: nothing was changed, the switch is still migrated
EXIT_CONFLICT = 5
#: interrupted (Ctrl-C, SIGTERM); what was applied was rolled back
EXIT_INTERRUPTED = 130


# ----------------------------------------------------------------------------- the shared options (docs/cli.md)
def inventory_option(required: bool = True, help: str = "inventory YAML file"):
    """``-i/--inventory FILE``: the one spelling of the inventory on every command that reads one."""
    # no explicit default: click >= 8.3 takes a given default (even None) as a value and skips the required check;
    # no dir_okay=False: a directory (or a FIFO) is refused by load_inventory as one error line, not click's usage
    return click.option("-i", "--inventory", required=required, metavar="FILE", type=click.Path(), help=help)


def json_option(what: str = "the result as one JSON object"):
    """``--json`` (parameter ``as_json``): print ``what`` on stdout instead of text for people."""
    return click.option("--json", "as_json", is_flag=True, help=f"print {what}")


def quiet_option():
    """``-q/--quiet`` (parameter ``quiet``): no progress lines on stderr (errors and the result still print)."""
    return click.option("-q", "--quiet", is_flag=True, help="no progress lines on stderr (errors and the result "
                                                              "still print)")


def dry_run_option(help: str = "show what would change; change nothing"):
    """``--dry-run`` (parameter ``dry_run``): on every command that changes something."""
    return click.option("--dry-run", is_flag=True, help=help)


def switch_option(help: str = "only this switch (its name in the inventory or the deployment)"):
    """``--switch NAME`` (parameter ``switch``): where a command acts per switch."""
    return click.option("--switch", "switch", default=None, metavar="NAME", help=help)


def config_option(help: str):
    """``--config [SWITCH=]FILE`` (parameter ``configs``, repeatable): a saved running config, offline."""
    return click.option("--config", "configs", multiple=True, metavar="[SWITCH=]FILE", help=help)


def split_configs(values: tuple[str, ...] | list[str]) -> list[tuple[str | None, Path]]:
    """``--config`` values as ``[(switch or None, file)]``: ``sw1=run.cfg`` names the switch, ``run.cfg`` does not.

    A value whose part before the first ``=`` is not a switch name (a path with ``=`` in a folder name) is a file.

    Raises:
        InputError: an empty value, ``SWITCH=`` without a file, or one switch given twice.
    """
    from harmless.inventory import NAME_RE
    pairs: list[tuple[str | None, Path]] = []
    for v in values:
        name, sep, path = v.partition("=")
        if not sep or not NAME_RE.match(name):
            name, path = None, v
        if not path:
            raise InputError("--config", f"{v!r} names no file", "write --config FILE or --config SWITCH=FILE")
        if name is not None and any(n == name for n, _ in pairs):
            raise InputError("--config", f"switch {name} is given twice", "give one saved config per switch")
        pairs.append((name, Path(path)))
    return pairs


def pick_switch(names: list[str], switch: str | None, where: str) -> list[str]:
    """The switch names a ``--switch`` selects from ``names`` (all of them when ``switch`` is None).

    Raises:
        InputError: ``switch`` is not among ``names`` (with the closest names).
    """
    if switch is None:
        return list(names)
    if switch not in names:
        raise InputError(where, f"no switch named {switch!r}" + did_you_mean(switch, names),
                         f"use one of: {', '.join(names) or '(none)'}")
    return [switch]


# ----------------------------------------------------------------------------- tables (docs/cli.md)
#: a column keeps cells up to this many characters on one line (longer ones wrap); free text wraps from 20
WHOLE_CELL = 24
FREE_TEXT_MIN = 20


@dataclass(frozen=True)
class Col:
    """One column of :func:`print_table`.

    Attributes:
        header: the header, always printed whole.
        justify: ``left`` or ``right`` (numbers).
        free: free text (a description, an error): may wrap at spaces from :data:`FREE_TEXT_MIN` characters;
            other columns keep cells of up to :data:`WHOLE_CELL` characters on one line.
    """

    header: str
    justify: Literal["left", "right"] = "left"
    free: bool = False


Cell = str | Text


def _plain(cell: Cell) -> str:
    s = cell.plain if isinstance(cell, Text) else str(cell)
    return " ".join(s.split()) if ("\n" in s or "\t" in s) else s


def _min_width(col: Col, cells: list[str]) -> int:
    """Narrowest width that keeps the header whole and the column's cells (words, for free text) on one line."""
    longest = max((len(w) for c in cells for w in (c.split() if col.free else [c])), default=0)
    return max(len(col.header), min(longest, FREE_TEXT_MIN if col.free else WHOLE_CELL), 1)


def _blocks(mins: list[int], keys: int, width: int) -> list[list[int]]:
    """Column indexes per block: the key columns in every block, then as many others as fit ``width`` (a rich
    table with borders takes ``1 + sum(w + 3)`` characters); a column that fits nowhere gets a block of its own."""
    def size(idx: list[int]) -> int:
        return 1 + sum(mins[i] + 3 for i in idx)
    blocks: list[list[int]] = []
    cur = list(range(keys))
    for i in range(keys, len(mins)):
        if len(cur) > keys and size(cur + [i]) > width:
            blocks.append(cur)
            cur = list(range(keys))
        cur.append(i)
    blocks.append(cur)
    return blocks


def _widths(idx: list[int], mins: list[int], maxs: list[int], width: int) -> list[int]:
    """Widths of a block's columns: their minimum, then the spare room one character at a time to the columns
    whose longest cell is wider."""
    w = [mins[i] for i in idx]
    spare = width - (1 + sum(x + 3 for x in w))
    while spare > 0:
        wants = [k for k, i in enumerate(idx) if w[k] < maxs[i]]
        if not wants:
            break
        for k in wants[:spare]:
            w[k] += 1
        spare -= min(spare, len(wants))
    return w


def print_table(title: str | None, cols: list[Col], rows: list[list[Cell]], keys: int = 1,
                console: Console | None = None) -> None:
    """Print a table whole: in a terminal as rich tables, in a pipe or file as plain lines (docs/cli.md).

    Terminal: headers are never cut and cells are never truncated. Columns keep their widest cell when the
    terminal is wide enough; otherwise cells wrap (free text at spaces, others from :data:`WHOLE_CELL` characters),
    and when even the narrowest columns do not fit the width, the table continues in further blocks below, each
    repeating the first ``keys`` columns (as R and pandas print wide data frames).
    Not a terminal: an optional ``# title`` line, a header line, then one line per row, the cells separated by a tab,
    every cell whole (tabs and newlines in a cell become spaces).

    Args:
        title: printed above the table (None: no title).
        cols: the columns; rows: one list of cells (str, or rich Text for style) per row, ``len(cols)`` each.
        keys: how many leading columns identify a row (repeated in every block).
        console: where to print (default :data:`out`).
    """
    con = console or out
    text = [[_plain(c) for c in row] for row in rows]
    if not con.is_terminal:
        lines = ([f"# {title}"] if title else []) + ["\t".join(c.header for c in cols)]
        print("\n".join(lines + ["\t".join(r) for r in text]), file=con.file)   # rich would expand the tabs
        return
    mins = [_min_width(c, [r[i] for r in text]) for i, c in enumerate(cols)]
    for i in range(keys):           # a key cell stays on one line (up to half the width): rows stay easy to follow
        mins[i] = max(mins[i], min(max((len(r[i]) for r in text), default=0), con.width // 2))
    maxs = [max([mins[i], *(len(r[i]) for r in text)]) for i in range(len(cols))]
    for n, idx in enumerate(_blocks(mins, keys, con.width)):
        t = Table(title=title if n == 0 else None, title_justify="left")
        for i, w in zip(idx, _widths(idx, mins, maxs, con.width)):
            t.add_column(Text(cols[i].header), justify=cols[i].justify, width=w, overflow="fold")
        for row in rows:
            t.add_row(*(row[i] if isinstance(row[i], Text) else Text(_plain(row[i])) for i in idx))
        con.print(t)
