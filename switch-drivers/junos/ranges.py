"""Taking migrated ports out of Junos ``interface-range``s (pure): the ``set``/``delete`` commands the tagging config
ends with.

A port that is a member of an interface range gets the range's statements as well as its own. Since Junos OS
14.1X53-D15 the range's statements are *appended* to the port's own, not overridden by them (Juniper, "Interface
Ranges", "Understanding Interface Ranges for Switches"): a migrated port of a range ``DESKS`` whose ``unit 0 family
ethernet-switching vlan members users`` would be a member of ``users`` besides its HARMLESS VLAN (an access port
with two VLANs, which ELS refuses to commit), and a trunk would carry the range's VLANs too. A range's name may also
stand for its members wherever an interface is named (``protocols rstp interface DESKS edge``, ``protocols dot1x
authenticator interface DESKS``, ``switch-options voip interface DESKS``, ``poe interface DESKS``: "Configuration
Expansion Where Interface Range Is Used" in the same documentation).

So the render takes each migrated port out of its ranges and gives it, as its own, everything the range gave it
except what HARMLESS sets itself:

* the range's ``member``/``member-range`` statements that name the port are replaced by statements naming its other
  members (``member-range ge-0/0/0 to ge-0/0/11`` without ge-0/0/3: ``member-range ge-0/0/0 to ge-0/0/2``,
  ``member-range ge-0/0/4 to ge-0/0/11``); a range left without members is deleted, with every statement naming it;
  ``member ge-1/0/*`` is ports 0 through 47 (the same documentation); a ``member-range`` across FPCs or PICs is
  split around the port in interface order (:func:`_split_across`), never shrunk to its ends;
* the range's statements under ``interfaces`` are set on the port (``inactive:`` ones set and deactivated), except
  its VLAN statements (``interface-mode``/``port-mode``, ``vlan members``, ``native-vlan-id``) on an access port or a
  trunk that is not ``shared`` (a shared trunk keeps them: they are the VLANs it carries), and a single-valued
  statement (``description``, ``mtu``, ...) the port sets itself;
* every statement elsewhere that names the range as an ``interface`` is set for the port too, except Layer 2
  protocol tunnelling (``protocols layer2-control mac-rewrite``: HARMLESS sets exactly the port's ``l2pt``) and, on
  a port whose VLANs HARMLESS sets, VLAN-side memberships (``vlans V interface RANGE``).

Every object these commands touch (the range, the ports, e.g. ``protocols rstp``) is HARMLESS's while migrated
(:mod:`..ownership`): ``down`` gives each back as it was.
"""
from __future__ import annotations

import re

from harmless.switch_drivers.junos.conf import SINGLE_VALUED, Path, display_set, read_config
from harmless.switch_drivers.junos.model import (WILDCARD_NUMBERS, _expand_member_range, _expand_wildcard,
                                                 interface_key)

__all__ = ["range_commands"]

_VLAN_STATEMENTS = ("interface-mode", "port-mode", "vlan", "native-vlan-id")
_NUMBERED = re.compile(r"(.*\D)(\d+)$")
Key = tuple[str, int, int, int]
_key = interface_key


def _name(k: Key) -> str:
    return f"{k[0]}{k[1]}/{k[2]}/{k[3]}"


def _across(stmt: Path) -> tuple[Key, Key] | None:
    """The ends of a ``member-range`` across FPCs or PICs (``member-range ge-0/0/40 to ge-1/0/3``, Juniper's own
    example is ``et-1/0/0 to et-4/0/40``): every interface of that type between them in interface order is a member,
    which the configuration alone cannot list. None for any other statement."""
    if stmt[0] != "member-range" or len(stmt) != 4 or stmt[2] != "to":
        return None
    lo, hi = _key(stmt[1]), _key(stmt[3])
    if lo is None or hi is None or lo[0] != hi[0] or lo[1:3] == hi[1:3] or lo > hi:
        return None
    return lo, hi


def _covered(stmt: Path, ports: dict[str, bool]) -> list[str]:
    """The ports one ``member``/``member-range`` statement (its words after the range name) names; of a range across
    FPCs or PICs (:func:`_across`), its ends and the ``ports`` between them."""
    if stmt[0] == "member" and len(stmt) == 2:
        try:
            return _expand_wildcard(stmt[1])
        except ValueError:
            return []
    ends = _across(stmt)
    if ends:
        inside = sorted(k for k in map(_key, ports) if k and k[0] == ends[0][0] and ends[0] < k < ends[1])
        return [stmt[1], *map(_name, inside), stmt[3]]
    if stmt[0] == "member-range" and len(stmt) == 4 and stmt[2] == "to":
        return _expand_member_range(stmt[1], stmt[3])
    return []


def _before(k: Key, last: tuple[int, int]) -> Key | None:
    """The interface just before ``k`` in interface order: the port before it, or the last port of the PIC (FPC)
    before it; ``last`` is the highest PIC and port number the switch may have (None before ``x-0/0/0``)."""
    if k[3] > 0:
        return k[0], k[1], k[2], k[3] - 1
    if k[2] > 0:
        return k[0], k[1], k[2] - 1, last[1]
    return (k[0], k[1] - 1, last[0], last[1]) if k[1] > 0 else None


def _split_across(stmt: Path, moving: list[str], last: tuple[int, int]) -> list[Path]:
    """A ``member-range`` across FPCs/PICs without the ``moving`` ports: the ranges between them, in interface order
    (``ge-0/0/40 to ge-1/0/3`` without ge-1/0/1: ``ge-0/0/40 to ge-1/0/0``, ``ge-1/0/2 to ge-1/0/3``)."""
    lo, hi = _across(stmt)
    out, start = [], lo
    for k in sorted({_key(n) for n in moving}):
        end = _before(k, last)
        if end is not None and start <= end:
            out.append((start, end))
        start = (k[0], k[1], k[2], k[3] + 1)
    if start <= hi:
        out.append((start, hi))
    return [("member", _name(a)) if a == b else ("member-range", _name(a), "to", _name(b)) for a, b in out]


def _highest(ordered: list[tuple[Path, bool]]) -> tuple[int, int]:
    """The highest PIC and port numbers a ``member-range`` across PICs may span: those the configuration names, at
    least 3 and 47 (the numbers ``*`` stands for: :data:`..model.WILDCARD_NUMBERS`)."""
    keys = [k for p, _off in ordered for w in p for k in (_key(w.split(".")[0]),) if k]
    return max([3, *(k[2] for k in keys)]), max([WILDCARD_NUMBERS[-1], *(k[3] for k in keys)])


def _compress(ports: list[str]) -> list[Path]:
    """Member statements naming exactly ``ports``: consecutive numbers of one prefix as a ``member-range``."""
    runs: list[list[str]] = []
    for name in ports:
        m, last = _NUMBERED.match(name), _NUMBERED.match(runs[-1][-1]) if runs else None
        if m and last and m.group(1) == last.group(1) and int(m.group(2)) == int(last.group(2)) + 1:
            runs[-1].append(name)
        else:
            runs.append([name])
    return [("member-range", r[0], "to", r[-1]) if len(r) > 1 else ("member", r[0]) for r in runs]


def _is_vlan(rest: Path) -> bool:
    """A statement under an interface (words after its name) that sets the port's VLANs or 802.1Q mode."""
    if rest[:1] == ("native-vlan-id",):
        return True
    return len(rest) >= 5 and rest[0] == "unit" and rest[2] == "family" and rest[4] in _VLAN_STATEMENTS


def _port_copies(name: str, stmts: list[tuple[Path, bool]], own: set[Path], keep_vlans: bool) -> list[str]:
    """``set`` (and ``deactivate``) lines giving port ``name`` the range's statements ``stmts`` (words after the range
    name, inactive or not) as its own."""
    lines = []
    for rest, off in stmts:
        if (_is_vlan(rest) and not keep_vlans) or (len(rest) >= 2 and rest[-2] in SINGLE_VALUED and any(
                q[:-1] == rest[:-1] for q in own)):
            continue
        path = ("interfaces", name, *rest)
        lines.append(display_set([path]).rstrip("\n"))
        if off:         # a single-valued statement is deactivated by its name (``deactivate ... description``)
            lines.append("deactivate " + display_set([path[:-1] if path[-2] in SINGLE_VALUED else path])[4:]
                         .rstrip("\n"))
    return lines


def _references(active: list[Path], rname: str) -> list[tuple[Path, int]]:
    """Statements outside ``interfaces`` naming range ``rname`` as an interface (``... interface RANGE[.unit] ...``),
    with the index of that word."""
    return [(p, i) for p in active if p[0] != "interfaces" for i in range(1, len(p))
            if p[i - 1] == "interface" and p[i].split(".")[0] == rname]


def _reference_copies(active: list[Path], rname: str, name: str, keep_vlans: bool) -> list[str]:
    """``set`` lines naming port ``name`` where the configuration names range ``rname`` as an interface."""
    out = []
    for p, i in _references(active, rname):
        if p[:3] == ("protocols", "layer2-control", "mac-rewrite") or (p[0] == "vlans" and not keep_vlans):
            continue
        out.append(display_set([(*p[:i], name + p[i][len(rname):], *p[i + 1:])]).rstrip("\n"))
    return out


def _one_range(rname: str, ordered: list[tuple[Path, bool]], ports: dict[str, bool]) -> list[str]:
    """The commands that take the migrated ``ports`` out of range ``rname`` (module doc); [] when none is in it."""
    active = [p for p, off in ordered if not off]
    mine = [(p[3:], off) for p, off in ordered if p[:3] == ("interfaces", "interface-range", rname) and len(p) > 3]
    members = [(s, _covered(s, ports)) for s, off in mine if not off and s[0] in ("member", "member-range")]
    moving = [n for _s, names in members for n in names if n in ports]
    if not moving:
        return []
    head = ("interfaces", "interface-range", rname)
    left = [n for _s, names in members for n in names if n not in ports]
    out = []
    if left:
        for stmt, names in members:
            if any(n in ports for n in names):
                out.append("delete " + display_set([(*head, *stmt)])[4:].rstrip("\n"))
                rest = _split_across(stmt, [n for n in names if n in ports], _highest(ordered)) if _across(stmt) \
                    else _compress([n for n in names if n not in ports])
                out += [display_set([(*head, *s)]).rstrip("\n") for s in rest]
    else:
        out.append("delete " + display_set([head])[4:].rstrip("\n"))
        out += ["delete " + display_set([p[:i + 1]])[4:].rstrip("\n") for p, i in _references(active, rname)]
    stmts = [(s, off) for s, off in mine if s[0] not in ("member", "member-range")]
    for name in dict.fromkeys(moving):
        own = {p[2:] for p in active if p[:2] == ("interfaces", name)}
        out += _port_copies(name, stmts, own, ports[name]) + _reference_copies(active, rname, name, ports[name])
    return list(dict.fromkeys(out))


def range_commands(config_text: str | None, ports: dict[str, bool]) -> list[str]:
    """The commands that take migrated ports out of every interface range they are members of (module doc).

    Args:
        config_text: the device's configuration (curly text or ``set`` commands); None: nothing known, [].
        ports: migrated interface -> whether it keeps its VLAN statements (a ``shared`` trunk); access ports and
            trunks that are not shared get their VLANs from HARMLESS only.

    Returns:
        ``set``/``delete``/``deactivate`` lines in range order, then port order (no line twice). Same input, same
        lines.
    """
    if not config_text or not ports:
        return []
    ordered = read_config(config_text)[0]
    names = dict.fromkeys(p[2] for p, off in ordered if p[:2] == ("interfaces", "interface-range") and len(p) > 2)
    return [ln for rname in names for ln in _one_range(rname, ordered, ports)]
