"""Parse IOS running-config text into per-port 802.1Q state (pure; ciscoconfparse2).

NAPALM has no getter for switchport mode / access VLAN / trunk lists, so the driver reads them from
``show running-config``. Only what the config text says is used (no operational state), which makes the
result reproducible from a saved config.
"""
from __future__ import annotations

import re

from harmless.switch_drivers.base import PortVlanState
from harmless.switch_drivers.ciscomodel import port_states_from_model
from harmless.switch_drivers.ios.model import parse_model
from harmless.switch_drivers.switchport import interface_lines, vlan_blocks
from harmless.switch_drivers.vids import parse_vid_ranges

__all__ = ["ISL_CAPABLE_MODEL", "interface_lines", "needs_trunk_encapsulation", "parse_port_states",
           "parse_switchport_operational", "parse_vlans"]

def parse_port_states(config_text: str) -> dict[str, PortVlanState]:
    """Per-port VLAN state from IOS configuration text, derived from the port model (:mod:`.model`).

    Args:
        config_text: ``show running-config`` output (or any IOS config snippet).

    Returns:
        ``{interface name: PortVlanState}`` for every layer-2 port (routed ports — SVIs, loopbacks, tunnels,
        management, ``no switchport`` ports, every port of a router — are left out). Rules, as IOS applies them:
        no ``switchport mode`` → ``dynamic``; access/dynamic/tunnel ports get ``access_vid``
        (``switchport access vlan``, default 1); trunks get ``native_vid`` (default 1) and ``allowed_vids``
        (None = all, folding ``add``/``remove``/``except`` lines); ``shutdown`` reflects a ``shutdown`` line.
        Unknown modes (e.g. ``private-vlan``) are reported as ``access``.

    Raises:
        ValueError: a malformed VLAN list in a ``switchport trunk allowed vlan`` line.
    """
    return port_states_from_model(parse_model(config_text))


def parse_vlans(config_text: str) -> dict[int, str]:
    """``{vid: name}`` from ``vlan N`` / `` name X`` blocks (name '' when unnamed).

    Args:
        config_text: IOS configuration text.

    Returns:
        VID -> name for every ``vlan`` block in the text, single VIDs and lists (``vlan 10,20,30-32``; a name
        line there names each of them).
    """
    out: dict[int, str] = {}
    for spec, name in vlan_blocks(config_text, r"[\d,\-]+"):
        try:
            vids = parse_vid_ranges(spec) or ()
        except ValueError:
            continue
        for vid in vids:
            out[vid] = name
    return out


#: Catalyst families whose trunks default to ISL/DTP encapsulation "negotiate" (Catalyst 3560/3750/4500/6500
#: configuration guides, "Configuring VLAN trunks"); used only when ``show interfaces switchport`` is unavailable.
ISL_CAPABLE_MODEL = re.compile(r"^(WS-)?C?(3550|3560|3750|4[59]\d\d|65\d\d|76\d\d)", re.I)


def needs_trunk_encapsulation(switchport_text: str | None, model: str = "") -> bool:
    """Whether ``switchport trunk encapsulation dot1q`` must precede ``switchport mode trunk``.

    Args:
        switchport_text: ``show interfaces switchport`` output, or None when the device did not answer it.
        model: the device model (``WS-C3750X-48P``), the fallback when ``switchport_text`` says nothing.

    Returns:
        True when any port reports ``Administrative Trunking Encapsulation: negotiate`` or ``isl``
        (an ISL-capable platform); False when ports report ``dot1q`` (dot1q-only, e.g. 2960, where the
        command does not exist); otherwise whether ``model`` is an ISL-capable family.
    """
    if switchport_text:
        modes = set(re.findall(r"Administrative Trunking Encapsulation:\s*(\S+)", switchport_text))
        if modes & {"negotiate", "isl"}:
            return True
        if modes:
            return False
    return bool(ISL_CAPABLE_MODEL.match(model or ""))


def parse_switchport_operational(switchport_text: str) -> dict[str, dict]:
    """Operational per-port VLAN state from ``show interfaces switchport`` (ntc-templates, textfsm).

    Args:
        switchport_text: the command's output.

    Returns:
        ``{short interface name (Fa0/7): {"admin_mode", "oper_mode", "access_vlan", "native_vlan",
        "trunking_vlans", "negotiation"}}`` as the ntc-templates ``cisco_ios_show_interfaces_switchport``
        template reads them (strings, ``trunking_vlans`` a list such as ``["107", "110-112"]`` or ``["ALL"]``).
    """
    from ntc_templates.parse import parse_output

    rows = parse_output(platform="cisco_ios", command="show interfaces switchport", data=switchport_text)
    return {r["interface"]: {"admin_mode": r["admin_mode"], "oper_mode": r["mode"],
                             "access_vlan": r["access_vlan"], "native_vlan": r["native_vlan"],
                             "trunking_vlans": r["trunking_vlans"], "negotiation": r["switchport_negotiation"]}
            for r in rows}
