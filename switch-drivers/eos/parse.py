"""Parse EOS running-config text into per-port 802.1Q state and VLANs (pure; ciscoconfparse2 ``ios`` syntax, which EOS shares).

NAPALM has no getter for switchport mode / access VLAN / trunk lists, so the driver reads them from
``show running-config``. Only the config text is used, so the result is reproducible from a saved config.
EOS defaults (what the running config leaves out): a switch port is ``switchport mode access`` in VLAN 1;
a trunk's native VLAN is 1 and it allows all VLANs.
"""
from __future__ import annotations

import re

from ciscoconfparse2 import CiscoConfParse

from harmless.switch_drivers.base import PortVlanState
from harmless.switch_drivers.eos.vids import parse_vid_ranges

# Interfaces that are never 802.1Q switch ports.
_NOT_SWITCHPORT = re.compile(r"^(vlan|loopback|management|tunnel|vxlan|recirc|dps)", re.I)
_MODES = {"access": "access", "trunk": "trunk", "dot1q-tunnel": "tunnel"}


def fold_allowed(lines: list[str]) -> tuple[int, ...] | None:
    """Fold ``switchport trunk allowed vlan [add|remove|except] LIST|all|none`` lines, in order.

    Args:
        lines: the interface's child lines, whitespace-normalised.

    Returns:
        Sorted VIDs, or None for "all VLANs" (also when no such line exists).
    """
    allowed: set[int] | None = None
    for line in lines:
        m = re.match(r"switchport trunk allowed vlan\s+(?:(add|remove|except)\s+)?(\S+)$", line)
        if not m:
            continue
        op, vids = m.group(1), parse_vid_ranges(m.group(2))
        if op is None:
            allowed = None if vids is None else set(vids)
        elif op == "add":
            if allowed is not None:
                allowed = None if vids is None else allowed | set(vids)
        elif op == "remove":
            allowed = (set(range(1, 4095)) if allowed is None else allowed) - set(vids or range(1, 4095))
        else:  # except
            allowed = set(range(1, 4095)) - set(vids or ())
    return None if allowed is None else tuple(sorted(allowed))


def parse_port_states(config_text: str) -> dict[str, PortVlanState]:
    """Per-port VLAN state from EOS configuration text.

    Args:
        config_text: ``show running-config`` output (or any EOS config snippet).

    Returns:
        ``{interface name: PortVlanState}`` for every ``interface`` block that is a layer-2 port (SVIs,
        loopbacks, management and ``no switchport`` ports are left out). No ``switchport mode`` →
        ``access``; access and ``dot1q-tunnel`` (→ ``tunnel``) ports get ``access_vid`` (default 1); trunks
        get ``native_vid`` (default 1) and ``allowed_vids`` (None = all); ``shutdown`` reflects the config.

    Raises:
        ValueError: a malformed VLAN list in a ``switchport`` line.
    """
    parse = CiscoConfParse(config_text.splitlines(), syntax="ios")
    result: dict[str, PortVlanState] = {}
    for intf in parse.find_objects(r"^interface\s+\S+"):
        name = intf.text.split(None, 1)[1].strip()
        if _NOT_SWITCHPORT.match(name):
            continue
        lines = [" ".join(c.text.split()) for c in intf.children]
        if "no switchport" in lines:
            continue
        mode, access_vid, native_vid, shutdown = "access", 1, 1, False
        for line in lines:
            if m := re.match(r"switchport mode (\S+)$", line):
                mode = _MODES.get(m.group(1), "access")
            elif m := re.match(r"switchport access vlan (\d+)$", line):
                access_vid = int(m.group(1))
            elif m := re.match(r"switchport trunk native vlan (\d+)$", line):
                native_vid = int(m.group(1))
            elif line == "shutdown":
                shutdown = True
            elif line == "no shutdown":
                shutdown = False
        if mode == "trunk":
            result[name] = PortVlanState(name=name, mode="trunk", native_vid=native_vid,
                                         allowed_vids=fold_allowed(lines), shutdown=shutdown)
        else:
            result[name] = PortVlanState(name=name, mode=mode, access_vid=access_vid, shutdown=shutdown)
    return result


def parse_vlans(config_text: str) -> dict[int, str]:
    """``{vid: name}`` from ``vlan N`` blocks (EOS always has VLAN 1 ``default``; '' when unnamed).

    Args:
        config_text: EOS configuration text.

    Returns:
        VID -> name for VLAN 1 and every single-VID or list ``vlan`` block (``vlan 10,20-21``).
    """
    parse = CiscoConfParse(config_text.splitlines(), syntax="ios")
    out: dict[int, str] = {1: "default"}
    for obj in parse.find_objects(r"^vlan\s+[\d,\-]+\s*$"):
        name = ""
        for child in obj.children:
            if m := re.match(r"^\s*name\s+(.+?)\s*$", child.text):
                name = m.group(1)
        for vid in parse_vid_ranges(obj.text.split()[1]) or ():
            out[vid] = name
    return out


def tpid_of(config_text: str, interface: str) -> int:
    """The TPID an interface puts on tagged frames (``switchport dot1q ethertype``; default 0x8100)."""
    parse = CiscoConfParse(config_text.splitlines(), syntax="ios")
    for intf in parse.find_objects(rf"^interface\s+{re.escape(interface)}\s*$"):
        for c in intf.children:
            if m := re.match(r"^\s*switchport dot1q ethertype\s+(0x[0-9a-fA-F]+)\s*$", c.text):
                return int(m.group(1), 16)
    return 0x8100
