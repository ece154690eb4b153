"""Junos configuration syntax (pure): curly-brace text and ``set``/``delete`` commands, both as set paths.

A *set path* is the tuple of words of one ``set`` command without the ``set`` (``("interfaces", "ge-0/0/7",
"unit", "0", "family", "ethernet-switching", "interface-mode", "access")``): ``show configuration | display
set`` prints one per leaf, and the curly text (``show configuration``) is the same tree. Parsing both forms
into set paths lets one port-state parser serve both, and lets tests apply rendered ``set``/``delete``
commands to a parsed config (:func:`apply_commands`).

Handled: ``/* */`` and ``#`` comments (``## Last commit ...`` headers, and the ``## SECRET-DATA`` comment Junos
prints after a secret, ``encrypted-password "$6$..."; ## SECRET-DATA``), quoted strings, ``[ a b ]`` lists (one
path per element), interface wildcards glued to a word (``member ge-0/0/[1-4]`` is one word), ``inactive:``
statements (left out of the active paths like the device ignores them; :func:`parse_config` returns them
separately), ``protect:`` / ``replace:`` tags (ignored), ``version ...;``; in set syntax also ``deactivate`` /
``activate`` (the ``| display set`` form of ``inactive:``) and ``protect`` / ``unprotect`` (ignored).

A saved CLI session's lines that are not configuration (the prompt ``user@sw> show configuration``, the member
banner ``{master:0}`` / ``{linecard:1}``, ``[edit]``, the pager's ``---(more)---``) are skipped.

Raises (strict parsers): ValueError with the line number for unbalanced braces/brackets/quotes or text outside
a statement; :func:`read_config` instead reads what it can and lists the rest with the reason.
"""
from __future__ import annotations

import re

Path = tuple[str, ...]

#: a quoted string | a word with glued ``[..]`` wildcards (``ge-0/0/[1-4]``) | a brace, semicolon or bracket | a word
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[^\s{};\[\]"]+(?:\[[^\s\[\]{};"]*\][^\s{};\[\]"]*)+|[{};\[\]]|[^\s{};\[\]"]+')
#: statements that hold one value (``set`` replaces it); everything else accumulates (lists, sets)
SINGLE_VALUED = {"interface-mode", "port-mode", "vlan-id", "native-vlan-id", "description", "host-name",
                 "encapsulation", "version", "mtu", "speed"}


#: lines of a saved CLI session that are not configuration: the prompt line (``user@sw> show configuration``,
#: ``user@sw# show``), the member/context banner (``{master:0}``, ``{linecard:1}``, ``{primary:node0}``), the edit
#: banner (``[edit]``, ``[edit interfaces]``) and the pager (``---(more 45%)---``)
_CLI_CONTEXT = re.compile(r"^\s*(\S+@\S+[>#%]( .*)?|\{[A-Za-z]+[A-Za-z ]*(:[\w-]+)?\}|\[edit( [^\]]*)?\]|"
                          r"-+\(more( \d+%)?\)-+)\s*$")


def _strip_comments(text: str) -> list[tuple[int, str]]:
    out, in_block = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if in_block:
            if "*/" not in line:
                continue
            line, in_block = line.split("*/", 1)[1], False
        while "/*" in line:
            head, _, rest = line.partition("/*")
            if "*/" in rest:
                line = head + rest.split("*/", 1)[1]
            else:
                line, in_block = head, True
        s = line.strip()
        if s.startswith("#") or _CLI_CONTEXT.match(line):
            continue
        out.append((n, line))
    return out


def _problem(problems: list[str] | None, message: str) -> None:
    """Raise ValueError(message) in strict mode (``problems`` None), else record it and go on."""
    if problems is None:
        raise ValueError(message)
    problems.append(message)


def _tokens(text: str, problems: list[str] | None = None):
    """``(line number, token)`` pairs; a line with text that is no token is a problem (strict: ValueError; else
    the rest of that line is skipped and recorded in ``problems``)."""
    for n, line in _strip_comments(text):
        pos = 0
        for m in _TOKEN.finditer(line):
            if line[pos:m.start()].strip():
                _problem(problems, f"line {n}: cannot parse {line.strip()!r}")
                pos = len(line)
                break
            pos = m.end()
            tok = m.group(0)
            if tok.startswith("#"):                 # a trailing comment (``; ## SECRET-DATA``): rest of the line
                pos = len(line)
                break
            if tok.startswith('"') and (len(tok) < 2 or not tok.endswith('"')):
                _problem(problems, f"line {n}: unterminated quoted string in {line.strip()!r}")
                pos = len(line)
                break
            yield n, tok
        if line[pos:].strip():
            _problem(problems, f"line {n}: unterminated quoted string in {line.strip()!r}")


def _unquote(tok: str) -> str:
    return tok[1:-1].replace('\\"', '"') if tok.startswith('"') and len(tok) >= 2 else tok


def parse_curly(text: str) -> list[Path]:
    """Curly-brace Junos config (``show configuration``) → set paths, in document order.

    Args:
        text: configuration text (a saved CLI session's prompt and context lines, :data:`_CLI_CONTEXT`, are
            skipped).

    Returns:
        One path per active leaf statement (list elements expanded); empty blocks (``vlan { }``) give their own
        path. ``inactive:`` statements are left out (see :func:`parse_curly_inactive`).

    Raises:
        ValueError: unbalanced ``{}``/``[]``, a statement without ``;``, or a stray token (message has the line).
    """
    return parse_curly_inactive(text)[0]


def parse_curly_inactive(text: str) -> tuple[list[Path], list[Path]]:
    """Like :func:`parse_curly`, also returning the ``inactive:`` leaves: ``(active paths, inactive paths)``.

    Raises:
        ValueError: as :func:`parse_curly`.
    """
    ordered = _curly_ordered(text)
    return [p for p, off in ordered if not off], [p for p, off in ordered if off]


_TAGS = ("inactive:", "protect:", "replace:")


class _Curly:
    """The state of one curly-text parse: the open blocks, the statement being read, the paths so far. Strict
    (``problems`` None: the first problem raises ValueError) or tolerant (problems recorded, the statement or
    block in question skipped, everything else read)."""

    def __init__(self, problems: list[str] | None):
        self.problems = problems
        self.ordered: list[tuple[Path, bool]] = []
        self.stack: list[list[str] | None] = []        # None: a block skipped (its header could not be read)
        self.inactive: list[bool] = []
        self.empty: list[bool] = []
        self.words: list = []
        self.in_list: list[str] | None = None

    def skipping(self) -> bool:
        return any(b is None for b in self.stack)

    def token(self, line: int, tok: str) -> None:
        if self.in_list is not None:
            self.list_token(line, tok)
        elif tok == "[":
            self.in_list = []
        elif tok == "{":
            self.open(line)
        elif tok == "}":
            self.close(line)
        elif tok == ";":
            self.statement()
        else:
            self.words.append(_unquote(tok))

    def list_token(self, line: int, tok: str) -> None:
        if tok == "]":
            self.words.append(("__list__", tuple(self.in_list)))  # expanded at ';'
            self.in_list = None
        elif tok in "{};[":
            _problem(self.problems, f"line {line}: unexpected {tok!r} inside [ ]")
            self.in_list = None
            self.token(line, tok)
        else:
            self.in_list.append(_unquote(tok))

    def open(self, line: int) -> None:
        words = [w for w in self.words if w not in _TAGS]
        if len(words) > 2 and words[0] in SINGLE_VALUED:        # ``description "x"`` + ``unit 0 {``: a lost ';'
            _problem(self.problems, f"line {line}: statement {' '.join(map(str, words[:2]))!r} lacks ';' (read as "
                                    f"if it had one)")
            self.words = words[:2]
            self.statement()
            self.words = words[2:]
        if not self.words or any(isinstance(w, tuple) for w in self.words):
            _problem(self.problems, f"line {line}: '{{' without a statement")
            self.stack.append(None)
        else:
            self.stack.append([w for w in self.words if w not in _TAGS])
        self.inactive.append(any(self.inactive) or (bool(self.words) and self.words[0] == "inactive:"))
        self.empty.append(True)
        self.words = []

    def close(self, line: int) -> None:
        if self.words:
            _problem(self.problems, f"line {line}: statement {' '.join(map(str, self.words))!r} before '}}' lacks ';'")
            self.words = []
        if not self.stack:
            _problem(self.problems, f"line {line}: unbalanced '}}'")
            return
        if self.empty.pop() and not self.skipping():
            self.ordered.append((tuple(w for part in self.stack for w in part), self.inactive[-1]))
        self.stack.pop()
        self.inactive.pop()
        if self.empty:
            self.empty[-1] = False

    def statement(self) -> None:
        words, self.words = self.words, []
        if not words:
            return
        if self.empty:
            self.empty[-1] = False
        if self.skipping():
            return
        skip = any(self.inactive) or words[0] == "inactive:"
        words = [w for w in words if w not in _TAGS]
        prefix = tuple(w for part in self.stack for w in part)
        lists = [w for w in words if isinstance(w, tuple)]
        plain = tuple(w for w in words if not isinstance(w, tuple))
        if lists:
            self.ordered.extend((prefix + plain + (item,), skip) for item in lists[0][1])
        else:
            self.ordered.append((prefix + plain, skip))


def _curly_ordered(text: str, problems: list[str] | None = None) -> list[tuple[Path, bool]]:
    """Curly text → ``[(path, inactive), ...]`` in document order (strict, or tolerant with ``problems``)."""
    c = _Curly(problems)
    line = 0
    for line, tok in _tokens(text, problems):
        c.token(line, tok)
    if c.in_list is not None or c.words or c.stack:
        _problem(problems, f"line {line}: configuration ends inside a statement or block"
                 + (f" ({len(c.stack)} block(s) not closed)" if c.stack else ""))
    return c.ordered


def parse_set(text: str) -> list[tuple[str, Path]]:
    """``set``/``delete`` commands (``show configuration | display set`` or a rendered candidate) → ops.

    Args:
        text: one command per line; blank lines and ``#`` comments are ignored. ``deactivate``/``activate``
            lines (how ``| display set`` prints ``inactive:``) are returned as such; ``protect``/``unprotect``
            lines are skipped (they do not change what is configured).

    Returns:
        ``[("set" | "delete" | "deactivate" | "activate", path), ...]`` in order (``[ a b ]`` lists expanded into
        one op per element).

    Raises:
        ValueError: a line that is not ``set``/``delete`` + words, or bad quoting/brackets (line number given).
    """
    return _set_ops(text, None)


def _set_ops(text: str, problems: list[str] | None) -> list[tuple[str, Path]]:
    """:func:`parse_set`, strict (``problems`` None) or skipping (and recording) the lines it cannot read."""
    ops: list[tuple[str, Path]] = []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#") or _CLI_CONTEXT.match(line):
            continue
        toks = [t for _, t in _tokens(s, problems)]
        if toks and toks[0] in ("protect", "unprotect"):
            continue
        if not toks or toks[0] not in ("set", "delete", "deactivate", "activate") or len(toks) < 2:
            _problem(problems, f"line {n}: expected 'set ...' or 'delete ...', got {s!r}")
        elif any(t in ("{", "}", ";") for t in toks):
            _problem(problems, f"line {n}: braces/semicolons do not belong in set commands: {s!r}")
        else:
            ops += _set_line_ops(n, s, toks, problems)
    return ops


def _set_line_ops(n: int, s: str, toks: list[str], problems: list[str] | None) -> list[tuple[str, Path]]:
    """The op(s) of one ``set``/``delete`` line (a ``[ a b ]`` list gives one op per element)."""
    words = [_unquote(t) for t in toks[1:]]
    if "[" in words:
        i = words.index("[")
        if words[-1] != "]" or "]" in words[i + 1:-1]:
            _problem(problems, f"line {n}: unbalanced [ ] in {s!r}")
            return []
        return [(toks[0], tuple(words[:i]) + (item,)) for item in words[i + 1:-1]]
    if "]" in words:
        _problem(problems, f"line {n}: unbalanced [ ] in {s!r}")
        return []
    return [(toks[0], tuple(words))]


def apply_commands(paths: list[Path], ops: list[tuple[str, Path]]) -> list[Path]:
    """Apply ``set``/``delete`` ops to a config (set paths), as ``load set`` + commit would.

    ``set`` of a single-valued statement (:data:`SINGLE_VALUED`) replaces its old value; other ``set``s add a
    path (no duplicates); ``delete P`` removes every path starting with ``P``.

    Returns:
        The new list of paths (order: surviving old paths, then new ones).
    """
    out = list(paths)
    for op, p in ops:
        if op in ("deactivate", "activate"):          # plain path lists carry no inactive marks
            continue
        if op == "delete":
            out = [q for q in out if q[:len(p)] != p]
            continue
        if len(p) >= 2 and p[-2] in SINGLE_VALUED:
            out = [q for q in out if not (len(q) == len(p) and q[:-1] == p[:-1])]
        if p not in out:
            out.append(p)
    return out


def display_set(paths: list[Path]) -> str:
    """Set paths → ``set ...`` lines (quoting words with spaces), like ``show configuration | display set``."""
    def word(w: str) -> str:
        return f'"{w}"' if (not w or re.search(r'[\s;{}\[\]"]', w)) else w

    return "".join("set " + " ".join(word(w) for w in p) + "\n" for p in paths)


def parse_config(text: str) -> tuple[list[Path], list[Path]]:
    """A configuration as curly text or as ``set`` commands (detected) → ``(active paths, inactive paths)``.

    Set syntax is replayed in order like ``load set`` would: ``set`` adds, ``delete P`` removes every path under
    ``P``, ``deactivate P`` marks every path under ``P`` inactive (also those set later), ``activate P`` clears it.

    Raises:
        ValueError: the text does not parse (message has the line number).
    """
    ordered = parse_config_ordered(text)
    return [p for p, off in ordered if not off], [p for p, off in ordered if off]


def parse_config_ordered(text: str, problems: list[str] | None = None) -> list[tuple[Path, bool]]:
    """Like :func:`parse_config`, as one list in document order: ``[(path, inactive), ...]``.

    Args:
        text: curly text or ``set`` commands (a saved CLI session's prompt and context lines are skipped).
        problems: None: strict; a list: tolerant, every statement, block or line that cannot be read is left out
            and described there (``"line 12: statement 'vlan-id 10' before '}' lacks ';'"``).

    Raises:
        ValueError: strict only: the text does not parse (message has the line number).
    """
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")
                  and not _CLI_CONTEXT.match(ln)), "")
    if not re.match(r"(set|delete|deactivate|activate|protect|unprotect)\s", first):
        return _curly_ordered(text, problems)
    paths: list[Path] = []
    seen: set[Path] = set()
    off: list[Path] = []
    for op, p in _set_ops(text, problems):
        if op == "set":
            if p not in seen:
                seen.add(p)
                paths.append(p)
        elif op == "delete":
            paths = [q for q in paths if q[:len(p)] != p]
            seen = set(paths)
        elif op == "deactivate":
            off.append(p)
        else:
            off = [q for q in off if q != p]
    return [(q, any(q[:len(o)] == o for o in off)) for q in paths]


def read_config(text: str) -> tuple[list[tuple[Path, bool]], list[str]]:
    """The tolerant reader: ``(parse_config_ordered(text, problems), problems)``; never raises on bad text (what
    it cannot read is in ``problems``, everything else in the paths). What the port model and the driver use, so
    that no single bad statement stops the reading of a saved configuration."""
    problems: list[str] = []
    return parse_config_ordered(text, problems), problems


def compare(running: str, candidate: str) -> str:
    """What loading the ``set``/``delete`` ``candidate`` (``load set`` + commit, :func:`apply_commands`) changes in
    the configuration ``running`` (curly text or set commands), as set lines: ``-set ...`` for each statement it
    removes, then ``+set ...`` for each it adds ('' when nothing changes); an empty container that gets statements
    under it is not listed as removed. Inactive statements of ``running`` are
    compared as they are (the candidate does not activate them).

    Raises:
        ValueError: ``candidate`` is not set/delete commands (a rendered candidate always is).
    """
    before = [p for p, off in read_config(running)[0] if not off]
    after = apply_commands(before, parse_set(candidate))
    gone, new = set(before) - set(after), set(after) - set(before)
    # an empty container (``family ethernet-switching;``) that now has statements under it is not removed
    removed = [p for p in before if p in gone and not any(q[:len(p)] == p for q in new)]
    added = [p for p in after if p in new]
    out = ["-" + ln for ln in display_set(removed).splitlines()] + ["+" + ln for ln in display_set(added).splitlines()]
    return "\n".join(out) + ("\n" if out else "")
