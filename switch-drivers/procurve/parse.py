"""ProCurve / Aruba-OS switch running config → VLANs and per-port state (pure).

ProCurve ports are numbers (``7``), module-letter + number (``A1``), stack member + port (``1/A1``, ``1/7``),
interconnect ports (``C1i``) or trunks (``Trk1``); port lists look like ``1-6,8,A1-A4,Trk1``. A port is untagged in at most one VLAN and tagged in
any number of VLANs. The syntax is read by :mod:`.model` (one block parser for the driver and the port model; it
also reads configs pasted without indentation, which the earlier ttp template could not).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from harmless.switch_drivers.base import PortVlanState
from harmless.switch_drivers.procurve.model import (format_port_list, parse_blocks, parse_port_list, port_key,
                                                     read_port_list)



def _port_key(port: str) -> tuple:
    """Validation and sort key of one port name (see :func:`.model.port_key`). Raises ValueError."""
    return port_key(port)


def parse_ports(text: str) -> tuple[str, ...]:
    """``"1-3,7,A1-A2,1/A1-1/A2,Trk1"`` → ``("1", "2", "3", "7", "A1", "A2", "1/A1", "1/A2", "Trk1")`` (sorted,
    distinct; see :func:`.model.parse_port_list`).

    Raises:
        ValueError: malformed item or a range across stack members / modules / reversed.
    """
    return parse_port_list(text)


def format_ports(ports) -> str:
    """Ports in ProCurve list syntax, runs of two or more as ``a-b`` (``["1","2","7"]`` → ``"1-2,7"``)."""
    return format_port_list(ports)


@dataclass(frozen=True)
class Vlan:
    """One ``vlan`` block: VID, name, untagged and tagged ports."""

    vid: int
    name: str
    untagged: tuple[str, ...] = ()
    tagged: tuple[str, ...] = ()


def parse_config(text: str, strict: bool = True) -> tuple[str, dict[int, Vlan]]:
    """``(hostname, {vid: Vlan})`` from ``show running-config``, indented or pasted without indentation (the
    block parser of :func:`.model.parse_blocks`, which the port model uses too).

    Args:
        strict: raise on a port list item that cannot be read (the line-wise diff and restore must not guess);
            False: leave the item out (reading facts: the port model lists the line in its ``unparsed``).

    Raises:
        ValueError: strict only: a malformed port list (message names the line).
    """
    host = ""
    vlans: dict[int, Vlan] = {}
    for b in parse_blocks(text):
        if not b.head and (m := re.fullmatch(r'hostname (.+)', b.lines[0])):
            host = m.group(1).strip().strip('"')
        elif m := re.fullmatch(r"vlan (\d+)", b.head):
            name, untagged, tagged = "", [], []
            for ln in b.lines:
                if nm := re.fullmatch(r"name (.+)", ln):
                    name = nm.group(1).strip().strip('"')
                elif pm := re.fullmatch(r"(untagged|tagged) (\S+)", ln):
                    ports, bad = read_port_list(pm.group(2))
                    if bad and strict:
                        raise ValueError(f"line {b.line_no}: {bad[0]}")
                    (untagged if pm.group(1) == "untagged" else tagged).extend(ports)
            vid = int(m.group(1))
            vlans[vid] = Vlan(vid, name, tuple(sorted(set(untagged), key=port_key)),
                              tuple(sorted(set(tagged), key=port_key)))
    return host, vlans


def port_states(text: str) -> dict[str, PortVlanState]:
    """Per-port state: a port with tagged VLANs is a ``trunk`` (native = its untagged VLAN or None, allowed =
    tagged ∪ untagged), otherwise ``access`` with its untagged VLAN. Ports in no VLAN are left out, so are port list
    items that cannot be read (the port model lists their lines in its ``unparsed``)."""
    _host, vlans = parse_config(text, strict=False)
    untagged: dict[str, int] = {}
    tagged: dict[str, set[int]] = {}
    for v in vlans.values():
        for p in v.untagged:
            untagged[p] = v.vid
        for p in v.tagged:
            tagged.setdefault(p, set()).add(v.vid)
    out = {}
    for p in sorted(set(untagged) | set(tagged), key=port_key):
        if p in tagged:
            allowed = set(tagged[p]) | ({untagged[p]} if p in untagged else set())
            out[p] = PortVlanState(p, "trunk", native_vid=untagged.get(p), allowed_vids=tuple(sorted(allowed)))
        else:
            out[p] = PortVlanState(p, "access", access_vid=untagged[p])
    return out


def vlan_names(text: str) -> dict[int, str]:
    """``{vid: name}`` of every VLAN in the config."""
    return {vid: v.name for vid, v in parse_config(text, strict=False)[1].items()}
