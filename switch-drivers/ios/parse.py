"""Parse IOS running-config text into per-port 802.1Q state (pure; ciscoconfparse2).

NAPALM has no getter for switchport mode / access VLAN / trunk lists, so the driver reads them from
``show running-config``. Only what the config text says is used (no operational state), which makes the
result reproducible from a saved config.
"""
from __future__ import annotations

import re

from ciscoconfparse2 import CiscoConfParse

from harmless.switch_drivers.base import PortVlanState
from harmless.switch_drivers.ios.vids import parse_vid_ranges

# Interfaces that are never 802.1Q switch ports (SVIs, loopbacks, tunnels, management).
_NOT_SWITCHPORT = re.compile(r"^(vlan|loopback|tunnel|null|bvi|mgmt|management|dialer|virtual-)", re.I)
_MODES = {"access": "access", "trunk": "trunk", "dot1q-tunnel": "tunnel", "dynamic": "dynamic"}


def _allowed(lines: list[str]) -> tuple[int, ...] | None:
    """Fold ``switchport trunk allowed vlan [add|remove|except] LIST|all|none`` lines, in order.

    Returns None for "all VLANs" (also when no such line exists).
    """
    allowed: set[int] | None = None
    for line in lines:
        m = re.match(r"switchport trunk allowed vlan\s+(?:(add|remove|except)\s+)?(\S+)$", line)
        if not m:
            continue
        op, spec = m.group(1), m.group(2)
        vids = parse_vid_ranges(spec)
        if op is None:
            allowed = None if vids is None else set(vids)
        elif op == "add":
            if allowed is not None:
                allowed = None if vids is None else allowed | set(vids)
        elif op == "remove":
            base = set(range(1, 4095)) if allowed is None else allowed
            allowed = base - set(vids or range(1, 4095))
        elif op == "except":
            allowed = set(range(1, 4095)) - set(vids or ())
    return None if allowed is None else tuple(sorted(allowed))


def parse_port_states(config_text: str) -> dict[str, PortVlanState]:
    """Per-port VLAN state from IOS configuration text.

    Args:
        config_text: ``show running-config`` output (or any IOS config snippet).

    Returns:
        ``{interface name: PortVlanState}`` for every ``interface`` block that is a layer-2 port
        (SVIs, loopbacks, tunnels and ``no switchport`` ports are left out). Rules, as IOS applies them:
        no ``switchport mode`` → ``dynamic``; access/dynamic/tunnel ports get ``access_vid``
        (``switchport access vlan``, default 1); trunks get ``native_vid`` (default 1) and
        ``allowed_vids`` (None = all, folding ``add``/``remove``/``except`` lines); ``shutdown``
        reflects a ``shutdown`` line. Unknown modes (e.g. ``private-vlan``) are reported as ``access``.

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
        mode_word, access_vid, native_vid, shutdown = None, 1, 1, False
        for line in lines:
            if m := re.match(r"switchport mode (\S+)", line):
                mode_word = m.group(1)
            elif m := re.match(r"switchport access vlan (\d+)$", line):
                access_vid = int(m.group(1))
            elif m := re.match(r"switchport trunk native vlan (\d+)$", line):
                native_vid = int(m.group(1))
            elif line == "shutdown":
                shutdown = True
            elif line == "no shutdown":
                shutdown = False
        mode = "dynamic" if mode_word is None else _MODES.get(mode_word, "access")
        if mode == "trunk":
            result[name] = PortVlanState(name=name, mode="trunk", native_vid=native_vid,
                                         allowed_vids=_allowed(lines), shutdown=shutdown)
        else:
            result[name] = PortVlanState(name=name, mode=mode, access_vid=access_vid, shutdown=shutdown)
    return result


def parse_vlans(config_text: str) -> dict[int, str]:
    """``{vid: name}`` from ``vlan N`` / `` name X`` blocks (name '' when unnamed).

    Args:
        config_text: IOS configuration text.

    Returns:
        VID -> name for every single-VID ``vlan`` block in the text.
    """
    parse = CiscoConfParse(config_text.splitlines(), syntax="ios")
    out: dict[int, str] = {}
    for obj in parse.find_objects(r"^vlan\s+\d+\s*$"):
        name = ""
        for child in obj.children:
            if m := re.match(r"^\s*name\s+(.+?)\s*$", child.text):
                name = m.group(1)
        out[int(obj.text.split()[1])] = name
    return out


def interface_lines(config_text: str) -> dict[str, list[str]]:
    """``{interface name: [child lines, whitespace-normalised]}`` for every ``interface`` block (pure).

    Args:
        config_text: IOS configuration text.

    Returns:
        Child lines in config order, e.g. ``{"FastEthernet0/7": ["switchport mode access",
        "switchport nonegotiate"]}``.
    """
    parse = CiscoConfParse(config_text.splitlines(), syntax="ios")
    return {intf.text.split(None, 1)[1].strip(): [" ".join(c.text.split()) for c in intf.children]
            for intf in parse.find_objects(r"^interface\s+\S+")}


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
