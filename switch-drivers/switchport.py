"""Cisco-style ``interface``/``switchport``/``vlan`` config parsing shared by the IOS and EOS drivers (pure).

IOS and EOS print the same switchport syntax (``switchport mode``, ``switchport access vlan``,
``switchport trunk native vlan``, ``switchport trunk allowed vlan [add|remove|except] LIST``) inside
``interface`` blocks, and ciscoconfparse2's ``ios`` syntax reads both. What differs per OS is passed in: which
interface names are never switch ports, how a ``switchport mode`` word (or its absence) maps to a
:class:`PortVlanState` mode, and which ``vlan`` block headers exist.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ciscoconfparse2 import CiscoConfParse

from harmless.switch_drivers.base import PortVlanState
from harmless.switch_drivers.vids import MAX_VID, MIN_VID, parse_vid_ranges

__all__ = ["allowed_line_problem", "fold_allowed", "interface_lines", "port_states", "vlan_blocks"]

_ALL_VIDS = range(MIN_VID, MAX_VID + 1)


def interface_lines(config_text: str) -> dict[str, list[str]]:
    """``{interface name: [child lines, whitespace-normalised]}`` for every ``interface`` block (pure).

    Args:
        config_text: IOS/EOS configuration text.

    Returns:
        Child lines in config order, e.g. ``{"FastEthernet0/7": ["switchport mode access",
        "switchport nonegotiate"]}``.
    """
    parse = CiscoConfParse(config_text.splitlines(), syntax="ios")
    return {intf.text.split(None, 1)[1].strip(): [" ".join(c.text.split()) for c in intf.children]
            for intf in parse.find_objects(r"^interface\s+\S+")}


#: one ``switchport trunk allowed vlan`` line: the optional operation and the VLAN list (one word: IOS and EOS take
#: no space inside a list; Catalyst 2950/2955 Command Reference, "switchport trunk": "Separate nonconsecutive VLAN
#: IDs with a comma; do not enter a space after the comma")
_ALLOWED = re.compile(r"switchport trunk allowed vlan\s+(?:(add|remove|except)\s+)?(\S+)$")


def allowed_line_problem(line: str) -> str | None:
    """Why a ``switchport trunk allowed vlan ...`` line cannot be read, None when it can (or is another line).

    ``"switchport trunk allowed vlan 3, 4"`` → ``"a space inside the VLAN list, which the device does not take: 3,4"``;
    ``"... vlan 10-5"`` → the :func:`parse_vid_ranges` error.
    """
    if not line.startswith("switchport trunk allowed vlan"):
        return None
    m = _ALLOWED.match(line)
    if not m:
        rest = line[len("switchport trunk allowed vlan"):].strip()
        joined = re.sub(r"\s*([,-])\s*", r"\1", rest)
        return (f"a space inside the VLAN list, which the device does not take: {joined}" if joined != rest
                else "not a VLAN list")
    try:
        parse_vid_ranges(m.group(2))
    except ValueError as e:
        return str(e)
    return None


def fold_allowed(lines: list[str]) -> tuple[int, ...] | None:
    """Fold ``switchport trunk allowed vlan [add|remove|except] LIST|all|none`` lines, in order.

    Args:
        lines: the interface's child lines, whitespace-normalised.

    Returns:
        Sorted VIDs, or None for "all VLANs" (also when no such line exists). A line that cannot be read
        (:func:`allowed_line_problem`) is skipped here; the port model lists it in the port's ``unparsed`` with
        the reason, so it never silently reads as "all VLANs".
    """
    allowed: set[int] | None = None
    for line in lines:
        m = _ALLOWED.match(line)
        if not m or allowed_line_problem(line):
            continue
        op, vids = m.group(1), parse_vid_ranges(m.group(2))
        if op is None:
            allowed = None if vids is None else set(vids)
        elif op == "add":
            if allowed is not None:
                allowed = None if vids is None else allowed | set(vids)
        elif op == "remove":
            allowed = (set(_ALL_VIDS) if allowed is None else allowed) - set(vids or _ALL_VIDS)
        else:  # except
            allowed = set(_ALL_VIDS) - set(vids or ())
    return None if allowed is None else tuple(sorted(allowed))


def port_states(config_text: str, not_switchport: re.Pattern, mode_of: Callable[[str | None], str]
                ) -> dict[str, PortVlanState]:
    """Per-port VLAN state from the ``interface`` blocks of IOS/EOS configuration text.

    Args:
        config_text: running-config text (or a snippet).
        not_switchport: interface names this matches (SVIs, loopbacks, ...) are left out; so are blocks with
            ``no switchport``.
        mode_of: maps the text after the last ``switchport mode`` (``"trunk"``, ``"private-vlan host"``), or
            None when the block has none, to a :class:`PortVlanState` mode.

    Returns:
        ``{interface name: PortVlanState}``: access/dynamic/tunnel ports get ``access_vid``
        (``switchport access vlan``, default 1); trunks get ``native_vid`` (default 1) and ``allowed_vids``
        (:func:`fold_allowed`); ``shutdown`` follows the last ``shutdown``/``no shutdown`` line.

    Raises:
        ValueError: a malformed VLAN list in a ``switchport`` line.
    """
    result: dict[str, PortVlanState] = {}
    for name, lines in interface_lines(config_text).items():
        if not_switchport.match(name) or "no switchport" in lines:
            continue
        mode_word, access_vid, native_vid, shutdown = None, 1, 1, False
        for line in lines:
            if m := re.match(r"switchport mode (\S.*)$", line):
                mode_word = m.group(1)
            elif m := re.match(r"switchport access vlan (\d+)$", line):
                access_vid = int(m.group(1))
            elif m := re.match(r"switchport trunk native vlan (\d+)$", line):
                native_vid = int(m.group(1))
            elif line == "shutdown":
                shutdown = True
            elif line == "no shutdown":
                shutdown = False
        mode = mode_of(mode_word)
        if mode == "trunk":
            result[name] = PortVlanState(name=name, mode="trunk", native_vid=native_vid,
                                         allowed_vids=fold_allowed(lines), shutdown=shutdown)
        else:
            result[name] = PortVlanState(name=name, mode=mode, access_vid=access_vid, shutdown=shutdown)
    return result


def vlan_blocks(config_text: str, vid_spec: str = r"\d+") -> Iterator[tuple[str, str]]:
    """``(VID spec, name)`` for every ``vlan <spec>`` block whose spec matches the regex ``vid_spec``.

    Args:
        config_text: IOS/EOS configuration text.
        vid_spec: regex for the header's VLAN list (``\\d+`` single VIDs; ``[\\d,\\-]+`` also ``10,20-21``).

    Returns:
        Iterator of e.g. ``("110", "harmless-sw1-p7")``; name ``""`` when the block has no ``name`` line.
    """
    parse = CiscoConfParse(config_text.splitlines(), syntax="ios")
    for obj in parse.find_objects(rf"^vlan\s+{vid_spec}\s*$"):
        name = ""
        for child in obj.children:
            if m := re.match(r"^\s*name\s+(.+?)\s*$", child.text):
                name = m.group(1)
        yield obj.text.split()[1], name
