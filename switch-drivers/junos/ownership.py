"""Junos configs as objects, and a merged config written back as curly text for ``load override`` (pure).

A configuration (``show configuration``, curly braces) is read as *leaves*: every statement with the blocks that
enclose it, each block opener and the statement keeping its own words (``unit 0``, ``family ethernet-switching``,
``members users``) and its ``inactive:`` mark (Junos OS CLI User Guide, "Configuration statements and
identifiers": a statement is ``name value;``, a container ``name { ... }``). One leaf reads, on one line, as valid
curly text (``interfaces { ge-0/0/7 { unit 0 { family ethernet-switching { vlan { members users; } } } } }``), which
is how an object's lines are stored, and :func:`render` rebuilds indented curly text from leaves, so a merged
config can be loaded with ``load override`` (NAPALM ``load_replace_candidate``).

Objects (:func:`object_key`): ``interfaces <port>`` (everything under the port; also a non-ELS VLAN-side
membership ``vlans <name> interface <port>.<unit>``, which is the port's), ``vlans <name>``, and for any other
hierarchy its first two words (``system host-name``, ``protocols rstp``).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from harmless.switch_drivers.junos.conf import _tokens, _unquote, parse_set
from harmless.switch_drivers.ownership import ConfigSyntax, Lines, Units

#: one block opener or statement: its words and whether it is marked ``inactive:``
Segment = tuple[tuple[str, ...], bool]
#: one leaf: the segments from the top, and whether the last one is an empty block (``{ }``) rather than ``;``
Leaf = tuple[tuple[Segment, ...], bool]
_TAGS = ("inactive:", "protect:", "replace:")


def _statement(words: list) -> list[Segment]:
    """The segments of one ``;``-statement (a ``[ a b ]`` list gives one segment per element)."""
    inactive = "inactive:" in words
    plain = [w for w in words if w not in _TAGS]
    lists = [w for w in plain if isinstance(w, tuple)]
    head = tuple(w for w in plain if not isinstance(w, tuple))
    if lists:
        return [(head + (item,), inactive) for item in lists[0]]
    return [(head, inactive)]


def leaves(text: str) -> list[Leaf]:
    """Curly Junos text → leaves in document order (comments and ``## Last commit`` lines are dropped).

    Raises:
        ValueError: unbalanced braces/brackets, a statement without ``;`` (the message has the line).
    """
    out: list[Leaf] = []
    stack: list[Segment] = []
    empty: list[bool] = []
    words: list = []
    in_list: list[str] | None = None
    line = 0
    for line, tok in _tokens(text):
        if in_list is not None:
            if tok == "]":
                words.append(tuple(in_list))
                in_list = None
            elif tok in "{};[":
                raise ValueError(f"line {line}: unexpected {tok!r} inside [ ]")
            else:
                in_list.append(_unquote(tok))
        elif tok == "[":
            in_list = []
        elif tok == "{":
            if not words:
                raise ValueError(f"line {line}: '{{' without a statement")
            stack.append(_statement(words)[0])
            empty.append(True)
            words = []
        elif tok == "}":
            if words or not stack:
                raise ValueError(f"line {line}: unbalanced '}}' or a statement without ';'")
            if empty.pop():
                out.append((tuple(stack), True))
            stack.pop()
            if empty:
                empty[-1] = False
        elif tok == ";":
            if words:
                out += [(tuple(stack) + (seg,), False) for seg in _statement(words)]
                if empty:
                    empty[-1] = False
            words = []
        else:
            words.append(_unquote(tok))
    if in_list is not None or words or stack:
        raise ValueError(f"line {line}: configuration ends inside a statement or block")
    return out


def _word(w: str) -> str:
    return f'"{w}"' if (not w or re.search(r'[\s;{}\[\]"#]', w)) else w


def _seg_text(seg: Segment) -> str:
    return ("inactive: " if seg[1] else "") + " ".join(_word(w) for w in seg[0])


def leaf_line(leaf: Leaf) -> str:
    """One leaf as one line of valid curly text (``a { b { c d; } }``)."""
    segs, empty_block = leaf
    opens = [_seg_text(s) + " {" for s in segs[:-1]]
    last = _seg_text(segs[-1]) + (" { }" if empty_block else ";")
    return " ".join(opens + [last] + ["}"] * (len(segs) - 1))


def path(leaf: Leaf) -> tuple[str, ...]:
    """The words of a leaf from the top (its ``set`` path)."""
    return tuple(w for seg in leaf[0] for w in seg[0])


def render(items: Iterable[Leaf]) -> str:
    """Indented curly text (4 spaces per level) holding every leaf, blocks merged in first-seen order."""
    tree: dict = {}
    for segs, empty_block in items:
        node = tree
        for seg in segs[:-1]:
            node = node.setdefault(seg, {})
        node.setdefault(segs[-1], {} if empty_block else None)
    lines: list[str] = []

    def emit(node: dict, depth: int) -> None:
        pad = "    " * depth
        for seg, child in node.items():
            if child is None:
                lines.append(f"{pad}{_seg_text(seg)};")
            elif not child:
                lines.append(f"{pad}{_seg_text(seg)} {{ }}")
            else:
                lines.append(f"{pad}{_seg_text(seg)} {{")
                emit(child, depth + 1)
                lines.append(f"{pad}}}")
    emit(tree, 0)
    return "\n".join(lines) + "\n"


def object_key(words: tuple[str, ...]) -> str:
    """The object a statement belongs to (module doc): ``interfaces ge-0/0/7``, ``vlans hl107``, ``system host-name``.
    """
    if words[0] == "vlans" and len(words) >= 4 and words[2] == "interface":
        return "interfaces " + words[3].split(".")[0]
    if words[:2] == ("interfaces", "interface-range") and len(words) >= 3:
        return " ".join(words[:3])
    return " ".join(words[:2])


class JunosSyntax(ConfigSyntax):
    """The Junos syntax: curly running configs, ``set``/``delete`` candidates (see the module doc)."""

    name = "junos"

    def units(self, text: str) -> Units:
        """``{object key: (leaf lines...)}`` in document order."""
        out: dict[str, tuple[str, ...]] = {}
        for leaf in leaves(text):
            key = object_key(path(leaf))
            out[key] = out.get(key, ()) + (leaf_line(leaf),)
        return out

    def touched(self, candidate: str) -> list[str]:
        """Keys of every ``set``/``delete`` path of the candidate (``load set`` commands)."""
        keys: list[str] = []
        for _op, p in parse_set(candidate):
            k = object_key(p)
            if k not in keys:
                keys.append(k)
        return keys

    def assemble(self, text: str, replace: Mapping[str, Lines], order: Iterable[str] = ()) -> str:
        """Curly text of ``text`` with the objects of ``replace`` replaced (their leaves where the object was first
        seen; a new object at the end: Junos orders statements itself)."""
        out: list[Leaf] = []
        done: set[str] = set()
        for leaf in leaves(text):
            key = object_key(path(leaf))
            if key not in replace:
                out.append(leaf)
            elif key not in done:
                done.add(key)
                out += [x for ln in replace[key] or () for x in leaves(ln)]
        for key, lines in replace.items():
            if key not in done and lines:
                out += [x for ln in lines for x in leaves(ln)]
        return render(out)

    def label(self, key: str, lines: Lines) -> str:
        return key

    def show(self, lines: Lines) -> list[str]:
        """``set ...`` lines (``deactivate ...`` after a statement marked inactive), like ``| display set``."""
        out = []
        for ln in lines or ():
            for segs, _empty in leaves(ln):
                words = " ".join(_word(w) for seg in segs for w in seg[0])
                out.append(f"set {words}")
                off = next((i for i, s in enumerate(segs) if s[1]), None)
                if off is not None:
                    out.append("deactivate " + " ".join(_word(w) for seg in segs[:off + 1] for w in seg[0]))
        return out
