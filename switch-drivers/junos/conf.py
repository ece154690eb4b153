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

Raises (parsers): ValueError with the line number for unbalanced braces/brackets/quotes or text outside
a statement.
"""
from __future__ import annotations

import re

Path = tuple[str, ...]

#: a quoted string | a word with glued ``[..]`` wildcards (``ge-0/0/[1-4]``) | a brace, semicolon or bracket | a word
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[^\s{};\[\]"]+(?:\[[^\s\[\]{};"]*\][^\s{};\[\]"]*)+|[{};\[\]]|[^\s{};\[\]"]+')
#: statements that hold one value (``set`` replaces it); everything else accumulates (lists, sets)
SINGLE_VALUED = {"interface-mode", "port-mode", "vlan-id", "native-vlan-id", "description", "host-name",
                 "encapsulation", "version", "mtu", "speed"}


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
        if s.startswith("#"):
            continue
        out.append((n, line))
    return out


def _tokens(text: str):
    for n, line in _strip_comments(text):
        pos = 0
        for m in _TOKEN.finditer(line):
            if line[pos:m.start()].strip():
                raise ValueError(f"line {n}: cannot parse {line.strip()!r}")
            pos = m.end()
            tok = m.group(0)
            if tok.startswith("#"):                 # a trailing comment (``; ## SECRET-DATA``): rest of the line
                pos = len(line)
                break
            if tok.startswith('"') and (len(tok) < 2 or not tok.endswith('"')):
                raise ValueError(f"line {n}: unterminated quoted string")
            yield n, tok
        if line[pos:].strip():
            raise ValueError(f"line {n}: unterminated quoted string in {line.strip()!r}")


def _unquote(tok: str) -> str:
    return tok[1:-1].replace('\\"', '"') if tok.startswith('"') and len(tok) >= 2 else tok


def parse_curly(text: str) -> list[Path]:
    """Curly-brace Junos config (``show configuration``) → set paths, in document order.

    Args:
        text: configuration text.

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


def _curly_ordered(text: str) -> list[tuple[Path, bool]]:
    """Curly text → ``[(path, inactive), ...]`` in document order."""
    ordered: list[tuple[Path, bool]] = []
    stack: list[list[str]] = []
    inactive_depth: list[bool] = []
    words: list[str] = []
    in_list: list[str] | None = None
    empty_block: list[bool] = []
    line = 0
    for line, tok in _tokens(text):
        if in_list is not None:
            if tok == "]":
                words.append(("__list__", tuple(in_list)))  # type: ignore[arg-type]  # expanded at ';'
                in_list = None
            elif tok in "{};[":
                raise ValueError(f"line {line}: unexpected {tok!r} inside [ ]")
            else:
                in_list.append(_unquote(tok))
            continue
        if tok == "[":
            in_list = []
        elif tok == "{":
            if not words:
                raise ValueError(f"line {line}: '{{' without a statement")
            inactive = any(inactive_depth) or words[0] == "inactive:"
            stack.append([w for w in words if w not in ("inactive:", "protect:", "replace:")])
            inactive_depth.append(inactive)
            empty_block.append(True)
            words = []
        elif tok == "}":
            if words:
                raise ValueError(f"line {line}: statement before '}}' lacks ';'")
            if not stack:
                raise ValueError(f"line {line}: unbalanced '}}'")
            if empty_block.pop():
                ordered.append((tuple(w for part in stack for w in part), inactive_depth[-1]))
            stack.pop()
            inactive_depth.pop()
            if empty_block:
                empty_block[-1] = False
        elif tok == ";":
            if not words:
                continue
            if empty_block:
                empty_block[-1] = False
            skip = any(inactive_depth) or words[0] == "inactive:"
            words = [w for w in words if w not in ("inactive:", "protect:", "replace:")]
            prefix = tuple(w for part in stack for w in part)
            lists = [w for w in words if isinstance(w, tuple)]
            plain = tuple(w for w in words if not isinstance(w, tuple))
            if lists:
                ordered.extend((prefix + plain + (item,), skip) for item in lists[0][1])
            else:
                ordered.append((prefix + plain, skip))
            words = []
        else:
            words.append(_unquote(tok))
    if in_list is not None or words or stack:
        raise ValueError(f"line {line}: configuration ends inside a statement or block")
    return ordered


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
    ops: list[tuple[str, Path]] = []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        toks = [t for _, t in _tokens(s)]
        if toks and toks[0] in ("protect", "unprotect"):
            continue
        if not toks or toks[0] not in ("set", "delete", "deactivate", "activate") or len(toks) < 2:
            raise ValueError(f"line {n}: expected 'set ...' or 'delete ...', got {s!r}")
        if any(t in ("{", "}", ";") for t in toks):
            raise ValueError(f"line {n}: braces/semicolons do not belong in set commands: {s!r}")
        words = [_unquote(t) for t in toks[1:]]
        if "[" in words:
            i = words.index("[")
            if words[-1] != "]" or "]" in words[i + 1:-1]:
                raise ValueError(f"line {n}: unbalanced [ ] in {s!r}")
            ops.extend((toks[0], tuple(words[:i]) + (item,)) for item in words[i + 1:-1])
        elif "]" in words:
            raise ValueError(f"line {n}: unbalanced [ ] in {s!r}")
        else:
            ops.append((toks[0], tuple(words)))
    return ops


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


def parse_config_ordered(text: str) -> list[tuple[Path, bool]]:
    """Like :func:`parse_config`, as one list in document order: ``[(path, inactive), ...]``.

    Raises:
        ValueError: the text does not parse (message has the line number).
    """
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
    if not re.match(r"(set|delete|deactivate|activate|protect|unprotect)\s", first):
        return _curly_ordered(text)
    paths: list[Path] = []
    seen: set[Path] = set()
    off: list[Path] = []
    for op, p in parse_set(text):
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
