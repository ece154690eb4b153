"""Device configuration diffs in one format for every switch OS: what a change removes and adds, per block (pure).

The format follows NAPALM's ``compare_config``: lines only in the old config are ``-``, lines only in the new one
``+``, each shown inside its context (the ``interface``/``vlan`` block on IOS, EOS and ProCurve, the ``[edit ...]``
hierarchy on Junos), so that a replaced line shows both halves::

     interface GigabitEthernet1/0/5
    -  switchport access vlan 100
    +  switchport access vlan 105
    +vlan 105
    +  name harmless-sw1-p5

Two entry points, both pure and the same online and offline:

* :func:`config_diff` (``before``, ``after``, ``syntax``) compares two whole configurations (e.g. the running config
  and the original ``down`` would restore);
* :func:`merge_diff` (``running``, ``candidate``, ``syntax``) shows what merging a candidate (the config HARMLESS
  renders) into the running config changes, by first computing the config after the merge (:func:`merged`) with
  the OS's merge rules: a setting that holds one value replaces the old one (``switchport access vlan``,
  ``switchport mode``, ``name``; Junos :data:`~.junos.conf.SINGLE_VALUED`), ``no X`` / ``delete X`` removes,
  ``switchport trunk allowed vlan add`` extends the list, ProCurve ``untagged P`` moves port ``P`` out of its old
  VLAN (VLAN-centric: a port is untagged in one VLAN).

Within a block, line order is not compared (the device prints its own canonical order); the lines of a block are
compared as a multiset, whitespace-normalised. ``!`` comments, ``end`` and the ``Building configuration`` /
``Current configuration`` headers are skipped; ProCurve VLAN memberships are compared per port, so ``untagged 1-6,8``
against ``untagged 1-8`` shows ``- untagged 7`` rather than two whole lines.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

from harmless.switch_drivers.eos import vids as eos_vids
from harmless.switch_drivers.ios import vids as ios_vids
from harmless.switch_drivers.junos import conf as junos_conf
from harmless.switch_drivers.procurve.model import format_port_list, parse_blocks, parse_port_list
from harmless.switch_drivers.switchport import fold_allowed

__all__ = ["DeviceDiff", "DiffBlock", "DiffLine", "SYNTAXES", "config_diff", "merge_diff", "merged", "syntax_of"]

#: the configuration syntaxes this module reads
SYNTAXES = ("ios", "eos", "junos", "procurve")
Syntax = Literal["ios", "eos", "junos", "procurve"]
#: child-line indentation each OS prints (used to render a diff)
_INDENT = {"ios": " ", "eos": "   ", "junos": "    ", "procurve": "   "}


class DiffLine(BaseModel):
    """One changed line: ``op`` ``-`` (only in the old config) or ``+`` (only in the new one), ``text``
    whitespace-normalised without indentation (Junos: the statement with its ``;``)."""

    op: Literal["-", "+"]
    text: str


class DiffBlock(BaseModel):
    """The changed lines of one context.

    Attributes:
        context: the block's opening line (``interface GigabitEthernet1/0/5``, ``vlan 105``), the Junos hierarchy
            (``[edit vlans harmless-sw1-p5]``), or ``""`` for top-level lines.
        change: ``added`` (the whole block is new), ``removed`` (the whole block goes), ``changed``.
        lines: the removed lines (old order), then the added lines (new order).
    """

    context: str
    change: Literal["added", "removed", "changed"]
    lines: list[DiffLine] = Field(default_factory=list)


class DeviceDiff(BaseModel):
    """A whole device diff: the changed blocks in config order (``blocks`` empty = nothing changes)."""

    syntax: Syntax
    blocks: list[DiffBlock] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.blocks

    def count(self, op: str) -> int:
        """Lines with ``op`` (``-`` or ``+``), block headers of added/removed blocks included."""
        return sum((b.change == {"-": "removed", "+": "added"}[op] and bool(b.context)) +
                   sum(1 for ln in b.lines if ln.op == op) for b in self.blocks)

    def summary(self) -> str:
        """``"3 lines removed, 9 added"`` (or ``"no change"``)."""
        return "no change" if self.empty else f"{self.count('-')} lines removed, {self.count('+')} added"

    def text(self) -> str:
        """The diff as text (see the module docstring), one line per change, '' when empty."""
        out: list[str] = []
        ind = _INDENT[self.syntax]
        for b in self.blocks:
            if self.syntax == "junos":
                out.append(b.context)
            elif b.context:
                out.append({"added": "+", "removed": "-", "changed": " "}[b.change] + b.context)
            pre = ind if b.context else ""
            out += [f"{ln.op}{pre}{ln.text}" for ln in b.lines]
        return "\n".join(out) + ("\n" if out else "")


def syntax_of(driver: str, optional_args: dict | None = None) -> Syntax:
    """The configuration syntax of an inventory ``driver`` (``netmiko_cli`` by its ``device_type``).

    Raises:
        KeyError: a driver whose syntax is not known.
    """
    if driver == "netmiko_cli":
        return {"cisco_ios": "ios", "hp_procurve": "procurve"}[(optional_args or {}).get("device_type", "cisco_ios")]
    if driver not in SYNTAXES:
        raise KeyError(driver)
    return driver  # type: ignore[return-value]


# ----------------------------------------------------------------------------- reading configs into contexts
#: a parsed config: ``{context: [display lines]}`` in config order ("" = top-level lines)
Contexts = dict[str, list[str]]
_SKIP_TOP = re.compile(r"^(!|end$|building configuration|current configuration|version \d)", re.I)


def _norm(line: str) -> str:
    return " ".join(line.split())


def _cisco_blocks(text: str) -> list[list[str]]:
    """IOS/EOS text → ``[[header, child, ...], ...]``: every unindented line opens a block, indented lines join
    it (raw text, right-stripped); comments, ``end`` and headers are left out."""
    blocks: list[list[str]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        s = line.strip()
        if not s or s.startswith("!"):
            continue
        if line[0] in " \t":
            if blocks and s.lower() not in ("exit", "exit-address-family"):
                blocks[-1].append(line)
        elif not _SKIP_TOP.match(s):
            blocks.append([_norm(s)])
    return blocks


def _cisco_contexts(text: str) -> Contexts:
    out: Contexts = {"": []}
    for header, *children in _cisco_blocks(text):
        if children or header.startswith(("interface ", "vlan ")):
            out.setdefault(header, []).extend(_norm(c) for c in children)
        else:
            out[""].append(header)
    return out


def _expand_members(lines: list[str]) -> list[str]:
    """ProCurve ``[no] untagged|tagged LIST`` lines → one line per port (membership compared per port)."""
    out = []
    for ln in lines:
        m = re.fullmatch(r"(no )?(untagged|tagged|forbid) (\S+)", ln)
        try:
            ports = parse_port_list(m.group(3)) if m else ()
        except ValueError:
            ports = ()
        out += [f"{m.group(1) or ''}{m.group(2)} {p}" for p in ports] if ports else [ln]
    return out


def _procurve_contexts(text: str) -> Contexts:
    out: Contexts = {"": []}
    for b in parse_blocks(text):
        if b.head:
            out.setdefault(b.head, []).extend(_expand_members(b.lines) if b.head.startswith("vlan ") else b.lines)
        else:
            out[""].extend(b.lines)
    return out


#: Junos statements whose value is the last word (``vlan-id 105``, ``members users``): shown with their keyword
_JUNOS_VALUED = junos_conf.SINGLE_VALUED | {"members", "member", "interface", "unit", "vlan-id-list", "address"}


def _junos_contexts(text: str) -> Contexts:
    out: Contexts = {}
    for p in junos_conf.parse_config(text)[0]:
        cut = len(p) - 4 if len(p) >= 5 and p[-4] == "member-range" else \
            len(p) - 2 if len(p) >= 3 and p[-2] in _JUNOS_VALUED else len(p) - 1
        ctx = "[edit " + " ".join(p[:cut]) + "]" if cut > 0 else "[edit]"
        out.setdefault(ctx, []).append(" ".join(_junos_word(w) for w in p[cut:]) + ";")
    return out


def _junos_word(w: str) -> str:
    return f'"{w}"' if (not w or re.search(r'[\s;{}\[\]"]', w)) else w


_CONTEXTS = {"ios": _cisco_contexts, "eos": _cisco_contexts, "junos": _junos_contexts, "procurve": _procurve_contexts}


# ----------------------------------------------------------------------------- comparing
def _compress_members(lines: list[DiffLine]) -> list[DiffLine]:
    """ProCurve per-port membership lines of one op back into port lists (``untagged 7``, ``untagged 8`` →
    ``untagged 7-8``)."""
    groups: dict[tuple[str, str], list[str]] = {}
    out: list[DiffLine] = []
    for ln in lines:
        m = re.fullmatch(r"((?:no )?(?:untagged|tagged|forbid)) (\S+)", ln.text)
        if m and "," not in m.group(2) and "-" not in m.group(2):
            if (ln.op, m.group(1)) not in groups:
                groups[(ln.op, m.group(1))] = []
                out.append(DiffLine(op=ln.op, text=m.group(1)))       # placeholder, filled below
            groups[(ln.op, m.group(1))].append(m.group(2))
        else:
            out.append(ln)
    for ln in out:
        ports = groups.get((ln.op, ln.text))
        if ports is not None:
            ln.text = f"{ln.text} {format_port_list(ports)}"
    return out


def _only(lines: list[str], other: list[str]) -> list[str]:
    """The lines of ``lines`` that ``other`` does not have, as a multiset difference, in ``lines``' order."""
    extra = Counter(lines) - Counter(other)
    out = []
    for ln in lines:
        if extra[ln] > 0:
            extra[ln] -= 1
            out.append(ln)
    return out


def _block(context: str, old: list[str], new: list[str], syntax: str) -> DiffBlock | None:
    """The changed lines of a context both configs have (None: unchanged)."""
    lines = [DiffLine(op="-", text=t) for t in _only(old, new)] + [DiffLine(op="+", text=t) for t in _only(new, old)]
    if syntax == "procurve":
        lines = _compress_members(lines)
    return DiffBlock(context=context, change="changed", lines=lines) if lines else None


def config_diff(before: str, after: str, syntax: str) -> DeviceDiff:
    """What changes from the configuration ``before`` to ``after`` (both as the device prints them). Pure.

    Args:
        before: the configuration now (e.g. ``show running-config``; Junos curly text or ``set`` commands).
        after: the configuration wanted.
        syntax: one of :data:`SYNTAXES` (:func:`syntax_of` gives it for an inventory driver).

    Returns:
        :class:`DeviceDiff`: blocks in ``after``'s order, blocks that only ``before`` has after them.

    Raises:
        ValueError: a configuration that does not parse, or an unknown syntax.
    """
    if syntax not in _CONTEXTS:
        raise ValueError(f"no diff for configuration syntax {syntax!r} (known: {', '.join(SYNTAXES)})")
    old, new = _CONTEXTS[syntax](before), _CONTEXTS[syntax](after)
    blocks: list[DiffBlock] = []
    for ctx in list(new) + [c for c in old if c not in new]:
        if ctx not in old and ctx and syntax != "junos":
            blocks.append(DiffBlock(context=ctx, change="added", lines=[DiffLine(op="+", text=t) for t in new[ctx]]))
        elif ctx not in new and ctx and syntax != "junos":
            blocks.append(DiffBlock(context=ctx, change="removed",
                                    lines=[DiffLine(op="-", text=t) for t in old[ctx]]))
        elif (b := _block(ctx, old.get(ctx, []), new.get(ctx, []), syntax)) is not None:
            blocks.append(b)
    return DeviceDiff(syntax=syntax, blocks=blocks)


# ----------------------------------------------------------------------------- merging a candidate
#: IOS/EOS interface and VLAN settings that hold one value: a new line replaces the old one (Cisco IOS Interface and
#: Hardware Component Command Reference, ``switchport``; Arista EOS User Manual, "Ethernet ports"/"VLANs")
_CISCO_SINGLE = ("switchport mode ", "switchport access vlan ", "switchport trunk native vlan ",
                 "switchport trunk encapsulation ", "switchport voice vlan ", "switchport dot1q ethertype ",
                 "description ", "name ", "speed ", "duplex ", "mtu ", "channel-group ",
                 "switchport trunk allowed vlan ")
_ALLOWED = "switchport trunk allowed vlan "


def _cisco_child(children: list[str], line: str, syntax: str) -> list[str]:
    """``children`` (raw lines of one block) after the candidate child ``line`` is merged."""
    s = _norm(line)
    norm = [_norm(c) for c in children]
    if s.startswith("no "):
        rest = s[3:]
        return [c for c, n in zip(children, norm) if not (n == rest or n.startswith(rest + " "))]
    if s in norm:
        return children
    if re.match(r"switchport trunk allowed vlan (add|remove|except) ", s):
        have = [n for n in norm if n.startswith(_ALLOWED)]
        if not have and s.split()[4] == "add":
            return children                                   # no list = all VLANs: adding keeps all
        vids = fold_allowed(have + [s])
        fmt = ios_vids.format_vid_ranges if syntax == "ios" else eos_vids.format_vid_ranges
        s = _ALLOWED + ("all" if vids is None else fmt(vids))
        line = " " + s
    key = next((k for k in _CISCO_SINGLE if s.startswith(k)), None)
    if key is None:
        return children + [line]
    out, placed = [], False
    for c, n in zip(children, norm):
        if n.startswith(key):
            if not placed:
                out.append(line)
                placed = True
        else:
            out.append(c)
    return out if placed else out + [line]


#: IOS ``[no] mac address-table learning vlan LIST``: the device keeps one ``no ...`` line listing every VLAN that does
#: not learn (a default-on feature turned off; Cisco IE 2000 Switch Software Configuration Guide, "MAC Address Learning
#: on a VLAN"; :data:`harmless.switch_drivers.blocksyntax.LIST_COMMANDS`)
_LEARNING = "mac address-table learning vlan "


def _learning_merged(blocks: list[list[str]], header: str) -> list[list[str]] | None:
    """``blocks`` after the candidate line ``header`` when it is a :data:`_LEARNING` command (the VLANs it names
    added to or taken from the one ``no`` line, which goes where it was, or at the end; gone when no VLAN is left);
    None for any other line."""
    off_form = header.startswith("no " + _LEARNING)
    if not (off_form or header.startswith(_LEARNING)):
        return None
    at = next((i for i, b in enumerate(blocks) if b[0].startswith("no " + _LEARNING)), None)
    off = set(ios_vids.parse_vid_ranges(blocks[at][0][len("no " + _LEARNING):]) or ()) if at is not None else set()
    named = set(ios_vids.parse_vid_ranges(header.split(_LEARNING, 1)[1]) or ())
    off = off | named if off_form else off - named
    line = [f"no {_LEARNING}{ios_vids.format_vid_ranges(sorted(off))}"] if off else None
    rest = [b for i, b in enumerate(blocks) if i != at]
    if line is None:
        return rest
    pos = len(rest) if at is None else at
    return rest[:pos] + [line] + rest[pos:]


def _cisco_merged(running: str, candidate: str, syntax: str) -> str:
    blocks = _cisco_blocks(running)
    index = {b[0]: b for b in blocks}
    for header, *children in _cisco_blocks(candidate):
        learning = _learning_merged(blocks, header) if not children else None
        if learning is not None:
            blocks, index = learning, {b[0]: b for b in learning}
            continue
        if header.startswith("no ") and not children:
            target = header[3:]
            blocks = [b for b in blocks if not (b[0] == target or (len(b) == 1 and b[0].startswith(target + " ")))]
            index = {b[0]: b for b in blocks}
            continue
        block = index.get(header)
        if block is None:
            block = [header]
            last = max((i for i, b in enumerate(blocks) if b[0].split()[0] == header.split()[0]), default=None)
            blocks.insert(len(blocks) if last is None else last + 1, block)
            index[header] = block
        kids = block[1:]
        for c in children:
            kids = _cisco_child(kids, c, syntax)
        block[1:] = kids
    return "\n".join("\n".join([b[0], *(c if c[:1] in " \t" else " " + c for c in b[1:])]) for b in blocks) + "\n"


def _procurve_vlan(blocks: dict, head: str, lines: list[str]) -> None:
    """Merge one candidate ``vlan`` context into ``blocks`` (``{head: [lines]}``): ``untagged`` moves ports out of
    every other VLAN's untagged list, ``tagged`` adds, ``no untagged``/``no tagged`` removes, ``name`` replaces."""
    kids = _expand_members(blocks.setdefault(head, []))
    for ln in _expand_members(lines):
        if ln.startswith("name "):
            kids = [k for k in kids if not k.startswith("name ")] + [ln]
        elif ln.startswith("untagged "):
            for other, okids in blocks.items():
                if other.startswith("vlan ") and other != head:
                    blocks[other] = [k for k in _expand_members(okids) if k != ln]
            kids = [k for k in kids if k != "no " + ln] + ([ln] if ln not in kids else [])
        elif ln.startswith("no "):
            kids = [k for k in kids if k != ln[3:]]
        elif ln not in kids:
            kids.append(ln)
    blocks[head] = kids


def _procurve_merged(running: str, candidate: str) -> str:
    blocks: dict[str, list[str]] = {"": []}
    for b in parse_blocks(running):
        blocks.setdefault(b.head, []).extend(b.lines)
    for b in parse_blocks(candidate):
        if not b.head:
            for ln in b.lines:
                if ln.startswith("no vlan "):
                    blocks.pop(ln[3:], None)
                elif ln not in blocks[""]:
                    blocks[""].append(ln)
        elif b.head.startswith("vlan "):
            _procurve_vlan(blocks, b.head, b.lines)
        else:
            kids = blocks.setdefault(b.head, [])
            for ln in b.lines:
                if ln in ("enable", "no disable"):
                    kids[:] = [k for k in kids if k != "disable"]
                elif ln not in kids:
                    kids.append(ln)
    out = list(blocks.pop(""))
    for head, kids in blocks.items():
        out += [head, *(f"   {k}" for k in kids), "   exit"]
    return "\n".join(out) + "\n"


def _junos_merged(running: str, candidate: str) -> str:
    paths = junos_conf.parse_config(running)[0]
    return junos_conf.display_set(junos_conf.apply_commands(paths, junos_conf.parse_set(candidate)))


def merged(running: str, candidate: str, syntax: str) -> str:
    """The configuration after merging ``candidate`` into ``running`` (pure; what the device will run), in the
    OS's syntax (Junos: ``set`` commands; ProCurve: VLAN memberships as lists).

    Raises:
        ValueError: a configuration or candidate that does not parse, or an unknown syntax.
    """
    if syntax in ("ios", "eos"):
        return _cisco_merged(running, candidate, syntax)
    if syntax == "junos":
        return _junos_merged(running, candidate)
    if syntax == "procurve":
        return _procurve_merged(running, candidate)
    raise ValueError(f"no merge for configuration syntax {syntax!r} (known: {', '.join(SYNTAXES)})")


def merge_diff(running: str, candidate: str, syntax: str) -> DeviceDiff:
    """What merging ``candidate`` into ``running`` removes and adds: :func:`config_diff` of ``running`` and
    :func:`merged`. Pure.

    Raises:
        ValueError: as :func:`merged`.
    """
    return config_diff(running, merged(running, candidate, syntax), syntax)
