"""Reading back the tables the CLI prints (:func:`harmless.clikit.print_table`), to assert that every column and cell
survived the terminal width or the pipe.

- :func:`read_terminal`: rich's boxed tables (``┏ ┃ ┡ │ └``) as the terminal shows them: the columns are cut at the
  positions of the header line's ``┃``, a row that wraps over several lines is joined again (a new row starts where
  the first column has text), and the blocks of a table too wide for the terminal, which repeat the key columns, are
  joined into one table.
- :func:`read_plain`: the plain form printed when stdout is not a terminal: ``# title``, a header line, one line per
  row, the cells separated by tabs; a line with another number of tabs ends the table.

Both return ``[Table(title, headers, rows)]`` with every cell as text; :func:`squash` compares a wrapped cell with
its value (wrapping only adds line breaks, at a space or inside a word).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def column(self, header: str) -> list[str]:
        i = self.headers.index(header)
        return [r[i] for r in self.rows]

    def by_key(self) -> dict[str, list[str]]:
        """``{first cell: the other cells}``."""
        return {r[0]: r[1:] for r in self.rows}


def squash(s: str) -> str:
    """The text without any whitespace (what a wrapped cell and its value have in common)."""
    return "".join(s.split())


def _cells(line: str, cuts: list[int]) -> list[str]:
    return [line[a + 1:b].strip() for a, b in zip(cuts, cuts[1:])]


def _one_block(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of one boxed table (its lines from ``┏`` to ``└``)."""
    head = [ln for ln in lines if ln.startswith("┃")]
    cuts = [i for i, ch in enumerate(head[0]) if ch == "┃"]
    headers = [" ".join(p for p in parts if p) for parts in zip(*(_cells(h, cuts) for h in head))]
    rows: list[list[list[str]]] = []
    for ln in lines:
        if not ln.startswith("│"):
            continue
        assert [i for i, ch in enumerate(ln) if ch == "│"] == cuts, f"a row that does not line up: {ln!r}"
        cells = _cells(ln, cuts)
        if cells[0] or not rows:
            rows.append([[c] if c else [] for c in cells])
        else:
            for parts, c in zip(rows[-1], cells):
                if c:
                    parts.append(c)
    return headers, [[" ".join(parts) for parts in row] for row in rows]


def read_terminal(text: str, keys: int = 1) -> list[Table]:
    """The tables of a terminal's output (ANSI styles removed); blocks that continue a table (same first ``keys``
    headers and row keys, no title between) are joined."""
    tables: list[Table] = []
    title: list[str] = []
    block: list[str] | None = None
    for ln in ANSI.sub("", text).splitlines():
        if block is not None:
            block.append(ln)
            if ln.startswith("└"):
                headers, rows = _one_block(block)
                prev = tables[-1] if tables else None
                if (not title and prev and prev.headers[:keys] == headers[:keys]
                        and [r[:keys] for r in prev.rows] == [r[:keys] for r in rows]):
                    prev.headers += headers[keys:]
                    for pr, r in zip(prev.rows, rows):
                        pr += r[keys:]
                else:
                    tables.append(Table(" ".join(title), headers, rows))
                title, block = [], None
        elif ln.startswith("┏"):
            block = [ln]
        elif ln.strip():
            title.append(ln.strip())
    return tables


def read_plain(text: str) -> list[Table]:
    """The tables of the plain (not a terminal) output."""
    tables: list[Table] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("# ") and i + 1 < len(lines):
            t = Table(lines[i][2:], lines[i + 1].split("\t"))
            i += 2
            while i < len(lines) and lines[i].count("\t") == len(t.headers) - 1:
                t.rows.append(lines[i].split("\t"))
                i += 1
            tables.append(t)
        else:
            i += 1
    return tables
