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
from harmless.switch_drivers.ciscomodel import port_states_from_model
from harmless.switch_drivers.eos.model import parse_model
from harmless.switch_drivers.switchport import fold_allowed, vlan_blocks
from harmless.switch_drivers.vids import parse_vid_ranges

__all__ = ["fold_allowed", "parse_port_states", "parse_vlans", "tpid_of"]

def parse_port_states(config_text: str) -> dict[str, PortVlanState]:
    """Per-port VLAN state from EOS configuration text, derived from the port model (:mod:`.model`).

    Args:
        config_text: ``show running-config`` output (or any EOS config snippet).

    Returns:
        ``{interface name: PortVlanState}`` for every interface that is a layer-2 port (SVIs, loopbacks,
        management, ``no switchport`` ports and, with ``switchport default mode routed``, ports without a
        ``switchport`` line are left out). No ``switchport mode`` → ``access``; access and ``dot1q-tunnel``
        (→ ``tunnel``) ports get ``access_vid`` (default 1); trunks get ``native_vid`` (default 1) and
        ``allowed_vids`` (None = all); ``shutdown`` reflects the config.

    Raises:
        ValueError: a malformed VLAN list in a ``switchport trunk allowed vlan`` line.
    """
    return port_states_from_model(parse_model(config_text))


def parse_vlans(config_text: str) -> dict[int, str]:
    """``{vid: name}`` from ``vlan N`` blocks (EOS always has VLAN 1 ``default``; '' when unnamed).

    Args:
        config_text: EOS configuration text.

    Returns:
        VID -> name for VLAN 1 and every single-VID or list ``vlan`` block (``vlan 10,20-21``).
    """
    out: dict[int, str] = {1: "default"}
    for spec, name in vlan_blocks(config_text, r"[\d,\-]+"):
        for vid in parse_vid_ranges(spec) or ():
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
