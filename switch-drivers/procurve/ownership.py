"""ProCurve / Aruba-OS configs as objects: VLAN-centric text, port-centric ownership (pure).

ProCurve writes port membership inside the VLAN contexts (``vlan 107`` / ``untagged 7`` / ``tagged 25``; HPE
ArubaOS-Switch Advanced Traffic Management Guide, "Configuring port-based VLANs"), so one VLAN block mixes what
HARMLESS wrote (port 7 moved out of VLAN 100) with what the operator owns (port 12 still in VLAN 100). The objects
therefore are:

* ``vlan N``: the VLAN's own lines (header, ``name``, ``ip address``, ...), without memberships;
* ``port P``: every membership of one port, one line each (``vlan 100 untagged``, ``vlan 1 no untagged``,
  ``vlan 107 tagged``), sorted by VID;
* any other context (``interface 7``, ``router ospf``) or top-level line, as it stands.

:meth:`ProcurveSyntax.assemble` writes VLAN blocks back in the order the switch prints them (``name``, ``no
untagged``, ``untagged``, ``tagged``, then the VLAN's other lines, ``exit``; VLANs by VID), port lists as ranges, so
the line-wise restore of the netmiko driver reproduces the text exactly.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from harmless.switch_drivers.ownership import ConfigSyntax, Lines, Units, norm
from harmless.switch_drivers.procurve.model import _OPENER, format_port_list, parse_port_list, port_key

_MEMBER = re.compile(r"^(no )?(untagged|tagged|forbid) (\S+)$")
_VLAN = re.compile(r"^vlan (\d+)$")
#: membership kinds in the order the switch prints them inside a VLAN context
_KINDS = ("no untagged", "untagged", "tagged", "forbid", "no tagged", "no forbid")
_IND = "   "


def _segments(text: str) -> list[tuple[str | None, list[str]]]:
    """``[(key or None, stripped lines)]``: contexts (opener + lines, without ``exit``), top-level lines, and
    separators (blank, ``;`` comments, the ``Running configuration:`` banner) as None."""
    out: list[tuple[str | None, list[str]]] = []
    raw = text.splitlines()
    indented = any(ln[:1] in (" ", "\t") and ln.strip() for ln in raw)
    ctx = False
    for ln in raw:
        s = " ".join(ln.split())
        if not s or s.startswith(";") or s.startswith("Running configuration"):
            out.append((None, [ln.rstrip()]))
            ctx = ctx and not indented
            continue
        if s == "exit":
            ctx = False
            continue
        if ctx and indented and ln[:1] not in (" ", "\t"):
            ctx = False
        if _OPENER.match(s):
            out.append((norm(s), [s]))
            ctx = True
        elif ctx:
            out[-1][1].append(s)
        else:
            out.append((norm(s), [s]))
    return out


def _members(vid: str, lines: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """A VLAN context's own lines and ``{port: ["vlan N untagged", ...]}`` from its membership lines."""
    own, ports = [], {}
    for s in lines:
        m = _MEMBER.match(s)
        if not m:
            own.append(s)
            continue
        for p in parse_port_list(m.group(3)):
            ports.setdefault(p, []).append(f"vlan {vid} {m.group(1) or ''}{m.group(2)}")
    return own, ports


def _member_sort(line: str) -> tuple[int, int]:
    w = line.split()
    return int(w[1]), _KINDS.index(" ".join(w[2:]))


class ProcurveSyntax(ConfigSyntax):
    """The ProCurve syntax (see the module doc)."""

    name = "procurve"

    def units(self, text: str) -> Units:
        out: dict[str, tuple[str, ...]] = {}
        ports: dict[str, list[str]] = {}
        for key, lines in _segments(text):
            if key is None:
                continue
            m = _VLAN.match(key)
            if m:
                own, members = _members(m.group(1), lines[1:])
                out[key] = out.get(key, ()) + ((lines[0], *own) if key not in out else tuple(own))
                for p, ms in members.items():
                    ports.setdefault(p, []).extend(ms)
            else:
                out[key] = out.get(key, ()) + tuple(lines)
        for p in sorted(ports, key=port_key):
            out[f"port {p.lower()}"] = tuple(sorted(set(ports[p]), key=_member_sort))
        return out

    def touched(self, candidate: str) -> list[str]:
        """``vlan N`` of every context and ``no vlan N``, ``port P`` of every port the candidate lists."""
        keys: list[str] = []
        for key, lines in _segments(candidate):
            if key is None:
                continue
            m = _VLAN.match(key)
            new = [key[3:] if key.startswith("no ") else key]
            if m:
                new += [f"port {p.lower()}" for p in _members(m.group(1), lines[1:])[1]]
            keys += [k for k in new if k not in keys]
        return keys

    def label(self, key: str, lines: Lines) -> str:
        return key if key.startswith("port ") else super().label(key, lines)

    def assemble(self, text: str, replace: Mapping[str, Lines], order: Iterable[str] = ()) -> str:
        """The config text with the objects of ``replace`` applied; VLAN blocks are rewritten from the target's
        VLAN and port objects, everything else keeps the device's text."""
        target = dict(self.units(text))
        for k, v in replace.items():
            if v is None:
                target.pop(k, None)
            else:
                target[k] = v
        members = _membership(target)
        vlans = sorted((int(_VLAN.match(k).group(1)), k) for k in target if _VLAN.match(k))
        out: list[str] = []
        written: set[str] = set()
        segs = _segments(text)
        last_vlan = max((i for i, (k, _l) in enumerate(segs) if k and _VLAN.match(k)), default=None)
        for i, (key, lines) in enumerate(segs):
            if key is not None and _VLAN.match(key):
                vid = int(_VLAN.match(key).group(1))
                out += _vlan_blocks([(v, k) for v, k in vlans if v <= vid and k not in written], target, members)
                written |= {k for v, k in vlans if v <= vid}
            elif key is None:
                out += lines
            elif key not in replace:
                out += _context(tuple(lines))
            elif replace[key]:
                out += _context(replace[key])
            if i == last_vlan or (last_vlan is None and i == len(segs) - 1):
                out += _vlan_blocks([(v, k) for v, k in vlans if k not in written], target, members)
                written |= {k for _v, k in vlans}
        return "\n".join(out) + "\n"


def _context(lines: tuple[str, ...]) -> list[str]:
    """An object's lines as config text (a context indented and closed with ``exit``)."""
    if len(lines) == 1 and not _OPENER.match(lines[0]):
        return list(lines)
    return [lines[0]] + [_IND + x for x in lines[1:]] + [_IND + "exit"]


def _membership(target: Units) -> dict[int, dict[str, list[str]]]:
    """``{vid: {kind: [ports]}}`` from the ``port P`` objects of a target."""
    out: dict[int, dict[str, list[str]]] = {}
    for key, lines in target.items():
        if not key.startswith("port "):
            continue
        for ln in lines:
            w = ln.split()
            out.setdefault(int(w[1]), {}).setdefault(" ".join(w[2:]), []).append(key[5:])
    return out


def _vlan_blocks(vlans: list[tuple[int, str]], target: Units, members: dict) -> list[str]:
    """VLAN contexts as the switch prints them: header, ``name``, memberships, the other lines, ``exit``."""
    out: list[str] = []
    for vid, key in vlans:
        head, *own = target[key]
        names = [x for x in own if x.startswith("name ")]
        rest = [x for x in own if not x.startswith("name ")]
        kinds = members.get(vid, {})
        ms = [f"{k} {format_port_list(kinds[k])}" for k in _KINDS if kinds.get(k)]
        out += [head] + [_IND + x for x in names + ms + rest] + [_IND + "exit"]
    return out
