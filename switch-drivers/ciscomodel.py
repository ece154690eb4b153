"""The per-port model (:mod:`.portmodel`) from Cisco-style running-config text, shared by IOS and EOS (pure).

IOS and EOS print the same ``interface``/``switchport``/``vlan`` syntax, read here with ciscoconfparse2's ``ios``
syntax; what differs per OS is a :class:`Dialect` (how a port without ``switchport mode`` behaves, the LAG interface
spelling, whether the switch is a router). The vendor modules (``ios/model.py``, ``eos/model.py``) add what only
``show`` commands give (VTP status, port-channel summary, MLAG) and call :func:`build_model`.

What is read, per interface (after expanding an IOS-XE ``source template``, the template's lines first):

* mode: ``no switchport`` → ``routed``; SVIs, loopbacks, tunnels, sub-interfaces and management ports → ``routed``;
  ``switchport mode access|trunk|dot1q-tunnel`` as written, ``dynamic auto|desirable`` → ``dynamic``, other modes
  (``private-vlan ...``, EOS ``trunk phone``) → ``unknown`` (the line stays in ``unparsed``); no mode line → the
  dialect's default (IOS ``dynamic``, EOS ``access``; ``routed`` on an IOS router or an EOS switch with
  ``switchport default mode routed``, and on an IOS switch port that has an ``ip address`` but no switchport line);
* VLANs: access (default 1), trunk native (default 1) and allowed (``add``/``remove``/``except`` folded in order),
  voice (``switchport voice vlan N``, EOS ``switchport phone vlan N``);
* LAG: ``channel-group N mode ...`` → member of ``<Port-channel>N`` (a member without switchport lines of its own
  shows its LAG's mode and VLANs, as on EOS); the LAG interface itself ``is_lag``; MLAG peer
  link (EOS ``mlag configuration`` / ``peer-link``, IOS-XE ``stackwise-virtual link``) on the LAG and its members;
* 802.1X/MAB (``dot1x ...``, ``authentication ...``, ``mab``, ``access-session ...``, ``service-policy type control
  subscriber ...``), port security (``switchport port-security`` enables it; its other lines, sticky MACs included,
  belong to it), description, shutdown.

Every other line of an interface is kept in ``unparsed``. ``vlans`` holds every VID defined (``vlan 10``, ``vlan
10,20,30``, ``vlan 100-105``, private-VLAN associations) or referenced (access, native, explicitly listed allowed,
voice, SVI ``interface VlanN``, ``encapsulation dot1Q N``), plus the dialect's built-in VLANs (not on a router).
"""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ciscoconfparse2 import CiscoConfParse

from harmless.switch_drivers.base import PortVlanState
from harmless.switch_drivers.l2pt import PROTOCOLS
from harmless.switch_drivers.portmodel import PortInfo, SwitchModel
from harmless.switch_drivers.switchport import allowed_line_problem, fold_allowed
from harmless.switch_drivers.vids import parse_vid_ranges

__all__ = ["L2PT_LINE", "Dialect", "block_children", "build_model", "global_lines", "l2pt_of_lines",
           "port_states_from_model"]

#: interfaces that are never switch ports (SVIs, loopbacks, tunnels, virtual interfaces)
_LOGICAL = re.compile(r"^(vlan|loopback|tunnel|null|bvi|bdi|dialer|virtual-|vxlan|recirc|nve|cellular|async)", re.I)
#: management port names (IOS ``FastEthernet0``/``GigabitEthernet0`` without slot, ``Management1``, ``mgmt0``)
_MGMT_NAME = re.compile(r"^(management\d|mgmt\d|mgmteth|(fastethernet|gigabitethernet)0$)", re.I)
#: VRFs that hold a management port (IOS-XE ``Mgmt-vrf``, ISR ``Mgmt-intf``, EOS ``MGMT``)
_MGMT_VRF = re.compile(r"^(ip )?vrf forwarding (mgmt\S*|management)$|^vrf (mgmt\S*|management)$", re.I)
_DOT1X = re.compile(r"^(dot1x|authentication|mab|access-session|service-policy type control subscriber)\b")
#: IOS ``l2protocol-tunnel [point-to-point] [protocol]`` (Catalyst command references, ``l2protocol-tunnel``: without a
#: keyword CDP, STP and VTP, or with ``point-to-point`` PAgP, LACP and UDLD); thresholds and CoS stay ``unparsed``
L2PT_LINE = re.compile(r"^l2protocol-tunnel(?: (point-to-point))?(?: (cdp|stp|vtp|lldp|pagp|lacp|udld))?$")
_L2PT_BARE = {None: ("cdp", "stp", "vtp"), "point-to-point": ("pagp", "lacp", "udld")}


@dataclass(frozen=True)
class Dialect:
    """What differs between the Cisco-style OSes.

    Attributes:
        lag_prefix: LAG interface name before the number (``Port-channel`` on IOS, ``Port-Channel`` on EOS).
        no_mode: mode of a switch port without ``switchport mode`` (IOS ``dynamic``, EOS ``access``).
        builtin_vlans: VLANs the OS always has (IOS 1 and 1002-1005, EOS 1).
        lags_follow_default: with ``default_routed`` (see :func:`build_model`), a LAG interface without a
            ``switchport`` line is routed too (IOS on a Catalyst 6500: every interface is layer 3 until
            ``switchport``); False on EOS, where ``switchport default mode routed`` concerns Ethernet ports.
        bare_switchport_routed: a physical port printing a bare ``switchport`` line means the platform's ports are
            routed by default (:func:`prints_bare_switchport`): IOS.
    """

    lag_prefix: str
    no_mode: str
    builtin_vlans: tuple[int, ...]
    lags_follow_default: bool = False
    bare_switchport_routed: bool = False


def _norm(text: str) -> str:
    return " ".join(text.split())


def _vids(spec: str) -> set[int]:
    try:
        return set(parse_vid_ranges(spec) or ())
    except ValueError:
        return set()


def _lag_number(name: str) -> str | None:
    m = re.match(r"(?i)^port-?channel\s*(\d+)$", name)
    return m.group(1) if m else None


@dataclass
class _Parsed:
    """Config-level facts the per-port pass needs."""

    templates: dict[str, list[str]]
    vlans: set[int]
    vlan_names: dict[int, str]


def _globals(parse: CiscoConfParse) -> _Parsed:
    templates: dict[str, list[str]] = {}
    for obj in parse.find_objects(r"^template\s+\S+"):
        templates[obj.text.split()[1]] = [_norm(c.text) for c in obj.all_children]
    vlans: set[int] = set()
    names: dict[int, str] = {}
    for obj in parse.find_objects(r"^vlan\s+\d[\d,\-\s]*$"):
        ids = _vids(obj.text.split(None, 1)[1].replace(" ", ""))
        vlans |= ids
        for c in obj.children:
            t = _norm(c.text)
            if (m := re.match(r"name (.+)$", t)) and len(ids) == 1:
                names[next(iter(ids))] = m.group(1)
            elif m := re.match(r"private-vlan association (?:add )?(\S+)$", t):
                vlans |= _vids(m.group(1))
    return _Parsed(templates, vlans, names)


def _mode_word(lines: list[str]) -> str | None:
    word = None
    for ln in lines:
        if m := re.match(r"switchport mode (.+)$", ln):
            word = m.group(1)
        elif ln == "no switchport mode":
            word = None
    return word


def _switched(name: str, lines: list[str], dialect: Dialect, router: bool, default_routed: bool) -> bool | None:
    """True: a switch port; False: routed; decided by the last ``[no] switchport`` line, else the defaults."""
    last = None
    for ln in lines:
        if ln == "switchport":
            last = True
        elif ln == "no switchport":
            last = False
    if last is not None:
        return last
    if any(ln.startswith("switchport ") for ln in lines):
        return True
    if router or default_routed:
        return False
    if any(re.match(r"ip address \d", ln) for ln in lines):   # only a routed port can hold an address
        return False
    return True


def l2pt_of_lines(lines: Iterable[str]) -> tuple[str, ...]:
    """The link-local protocols an interface's IOS ``l2protocol-tunnel`` lines tunnel, in
    :data:`harmless.switch_drivers.l2pt.PROTOCOLS` order (pure; lines whitespace-normalised)."""
    got: set[str] = set()
    for ln in lines:
        if m := L2PT_LINE.match(ln):
            got.update((m.group(2),) if m.group(2) else _L2PT_BARE[m.group(1)])
    return tuple(p for p in PROTOCOLS if p in got)


def _understood(ln: str, mode_known: bool) -> bool:
    """Lines the model represents (everything else goes to ``unparsed``)."""
    if ln in ("shutdown", "no shutdown", "switchport", "no switchport", "no switchport mode"):
        return True
    if L2PT_LINE.match(ln):
        return True
    if ln.startswith(("description ", "source template ", "channel-group ", "channel-protocol ",
                      "stackwise-virtual link ", "switch virtual link ")):
        return True
    if ln.startswith("switchport mode "):
        return mode_known
    if ln.startswith("switchport trunk allowed vlan "):
        return allowed_line_problem(ln) is None
    if re.match(r"switchport (access vlan \d+|trunk native vlan \d+|voice vlan \d+|"
                r"phone vlan \d+|port-security.*)$", ln):
        return True
    return bool(_DOT1X.match(ln))


def _interface_blocks(parse: CiscoConfParse, g: _Parsed) -> list[tuple[str, list[str]]]:
    """``interface X`` blocks → ``[(name, lines)]`` in config order, ``source template T`` lines expanded first."""
    blocks: list[tuple[str, list[str]]] = []
    for obj in parse.find_objects(r"^interface\s+\S+"):
        name = obj.text.split(None, 1)[1].strip()
        own = [_norm(c.text) for c in obj.all_children]
        lines: list[str] = []
        for ln in own:
            if m := re.match(r"source template (\S+)$", ln):
                lines += g.templates.get(m.group(1), [])
        blocks.append((name, lines + own))
    return blocks


def _lag_map(blocks: list[tuple[str, list[str]]], dialect: Dialect,
             lag_members: dict[str, str] | None) -> dict[str, str]:
    """Member interface → its LAG's name, from ``channel-group N`` lines, then ``lag_members`` where the config is
    silent."""
    names = [n for n, _ in blocks]
    lag_of: dict[str, str] = {}
    for name, lines in blocks:
        for ln in lines:
            if m := re.match(r"channel-group (\d+)\b", ln):
                lag_of[name] = next((n for n in names if _lag_number(n) == m.group(1)),
                                    f"{dialect.lag_prefix}{m.group(1)}")
    for member, lag in (lag_members or {}).items():
        lag_of.setdefault(member, lag)
    return lag_of


def _peer_lags(blocks: list[tuple[str, list[str]]], lag_of: dict[str, str], mlag_peer_link: str | None) -> set[str]:
    """The LAGs (or ports) that are an MLAG / StackWise Virtual peer link."""
    names = [n for n, _ in blocks]
    peer_lags: set[str] = set()
    if mlag_peer_link:
        peer_lags.add(next((n for n in names if n.lower() == mlag_peer_link.lower()
                            or (_lag_number(n) and _lag_number(n) == _lag_number(mlag_peer_link))),
                           mlag_peer_link))
    for name, lines in blocks:
        if any(re.match(r"(stackwise-virtual|switch virtual) link \d+", ln) for ln in lines):
            peer_lags.add(lag_of.get(name, name))
    return peer_lags


def _port_settings(lines: list[str], vlans: set[int]) -> dict:
    """The per-port lines the model reads: description, shutdown, access/native/voice VID, 802.1X, port security;
    VIDs named by allowed-VLAN and private-VLAN lines are added to ``vlans``."""
    out = {"access_vid": None, "native_vid": None, "voice_vid": None, "description": None, "shutdown": False,
           "dot1x": False, "port_security": False}
    for ln in lines:
        if m := re.match(r"description (.+)$", ln):
            out["description"] = m.group(1)
        elif ln in ("shutdown", "no shutdown"):
            out["shutdown"] = ln == "shutdown"
        elif m := re.match(r"switchport access vlan (\d+)$", ln):
            out["access_vid"] = int(m.group(1))
        elif m := re.match(r"switchport trunk native vlan (\d+)$", ln):
            out["native_vid"] = int(m.group(1))
        elif m := re.match(r"switchport (?:voice|phone) vlan (\d+)$", ln):
            out["voice_vid"] = int(m.group(1))
        elif m := re.match(r"switchport trunk allowed vlan (?:add )?([\d,\-]+)$", ln):
            vlans |= _vids(m.group(1))
        elif ln.startswith("switchport trunk allowed vlan ") and allowed_line_problem(ln):
            # unreadable (kept in unparsed): still avoid every VID it names, never take one of them
            vlans |= {v for a, b in re.findall(r"(\d+)(?:\s*-\s*(\d+))?", ln[29:])
                      for v in range(int(a), int(b or a) + 1) if 1 <= v <= 4094}
        elif ln == "switchport port-security":
            out["port_security"] = True
        elif _DOT1X.match(ln):
            out["dot1x"] = True
        elif m := re.match(r"switchport private-vlan (?:host-association|mapping(?: trunk)?) (?:\d+ )?(.+)$",
                           ln):
            vlans |= {int(v) for v in re.findall(r"\d+", m.group(0).split(None, 3)[-1])}
    return out


def _mode(name: str, lines: list[str], dialect: Dialect, router: bool, default_routed: bool, mgmt: bool) -> str:
    """The port's mode: ``routed`` (logical, management or not switched), the dialect's default without a
    ``switchport mode`` line, else the mode word's (``dynamic ...`` → ``dynamic``, other words ``unknown``)."""
    logical = bool(_LOGICAL.match(name)) or "." in name
    is_lag = _lag_number(name) is not None
    switched = (not logical and not mgmt
                and _switched(name, lines, dialect, router,
                                    default_routed and (dialect.lags_follow_default or not is_lag)))
    word = _mode_word(lines) if switched else None
    if not switched:
        return "routed"
    if word is None:
        return dialect.no_mode
    return {"access": "access", "trunk": "trunk", "dot1q-tunnel": "dot1q-tunnel"}.get(
        word, "dynamic" if word.startswith("dynamic") else "unknown")


def _port_info(name: str, lines: list[str], mode: str, mgmt: bool, vlans: set[int]) -> PortInfo:
    """One interface block → :class:`PortInfo` (``lag``/``mlag_peer_link`` left for the caller); the VIDs it uses
    are added to ``vlans``."""
    if m := re.match(r"(?i)^vlan(\d+)$", name):
        vlans.add(int(m.group(1)))
    for ln in lines:
        if m := re.match(r"(?i)encapsulation dot1q (\d+)", ln):
            vlans.add(int(m.group(1)))
    st = _port_settings(lines, vlans)
    # every VID a line names is in use, whatever the mode (a trunk's stale access VLAN, EOS ``trunk phone``'s native
    # VLAN: the PCs behind the phones): the planner must never take it
    vlans.update(v for v in (st["access_vid"], st["native_vid"]) if v is not None)
    allowed: tuple[int, ...] | str | None = None
    if mode in ("access", "dynamic", "dot1q-tunnel"):
        st["access_vid"] = st["access_vid"] or 1
        vlans.add(st["access_vid"])
        st["native_vid"] = None
    elif mode == "trunk":
        st["native_vid"] = st["native_vid"] or 1
        vlans.add(st["native_vid"])
        folded = fold_allowed(lines)
        allowed = "all" if folded is None else folded
        st["access_vid"] = None
    elif mode == "routed":
        st["access_vid"] = st["native_vid"] = None
    if st["voice_vid"] is not None:
        vlans.add(st["voice_vid"])
    unparsed = tuple(ln if not (why := allowed_line_problem(ln)) else f"{ln} ({why})"
                     for ln in lines if not _understood(ln, mode != "unknown"))
    return PortInfo(interface=name, mode=mode, allowed_vids=allowed, is_lag=_lag_number(name) is not None,
                    management=mgmt, unparsed=unparsed, l2pt=l2pt_of_lines(lines), **st)


def build_model(config_text: str, dialect: Dialect, *, router: bool = False, default_routed: bool = False,
                vtp_mode: str | None = None, stp_mode: str | None = None, mlag_peer_link: str | None = None,
                lag_members: dict[str, str] | None = None) -> SwitchModel:
    """The :class:`SwitchModel` of a Cisco-style config (pure).

    Args:
        config_text: running config (IOS or EOS syntax).
        dialect: the OS's :class:`Dialect`.
        router: the device is a router (ports without switchport lines are routed).
        default_routed: EOS ``switchport default mode routed``.
        vtp_mode: the VTP mode the vendor module decided (config line or ``show vtp status``), or None.
        stp_mode: spanning-tree mode, or None when unknown.
        mlag_peer_link: name of the MLAG peer-link LAG (EOS), or None.
        lag_members: ``{member interface: LAG name}`` from a port-channel summary, merged over the config's
            ``channel-group`` lines (the config wins where both name one).

    Returns:
        The model (ports in config order). Raises nothing for odd lines: they end in ``unparsed``.
    """
    parse = CiscoConfParse(config_text.splitlines(), syntax="ios")
    g = _globals(parse)
    vlans = set(g.vlans) | (set() if router else set(dialect.builtin_vlans))
    blocks = _interface_blocks(parse, g)
    stack_style = any(re.match(r"(?i)^\D+\d+/\d+/\d+$", n) for n, _ in blocks)
    default_routed = default_routed or (dialect.bare_switchport_routed and prints_bare_switchport(blocks))
    lag_of = _lag_map(blocks, dialect, lag_members)
    peer_lags = _peer_lags(blocks, lag_of, mlag_peer_link)
    ports = []
    for name, lines in blocks:
        mgmt = bool(_MGMT_NAME.match(name)) or any(_MGMT_VRF.match(ln) for ln in lines) or (
            stack_style and not router and name.lower() in ("gigabitethernet0/0", "fastethernet0/0"))
        mode = _mode(name, lines, dialect, router, default_routed, mgmt)
        info = _port_info(name, lines, mode, mgmt, vlans)
        ports.append(replace(info, lag=lag_of.get(name),
                             mlag_peer_link=name in peer_lags or lag_of.get(name) in peer_lags))
    ports = _inherit_lag_l2(ports, {name: lines for name, lines in blocks})
    vlans = {v for v in vlans if 1 <= v <= 4094}
    return SwitchModel(vtp_mode=vtp_mode, vlans=tuple(sorted(vlans)), ports=tuple(ports), stp_mode=stp_mode,
                       vlan_names=dict(sorted(g.vlan_names.items())), vlan_addresses=_svi_addresses(blocks))


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _svi_addresses(blocks: list[tuple[str, list[str]]]) -> dict[int, tuple[str, ...]]:
    """VID -> the addresses of its SVI ``interface VlanN``: ``ip address A M [secondary]`` (IOS), ``ip address A/L``
    (EOS), ``ipv6 address X/L``; ``ip address dhcp`` and ``no ip address`` give none."""
    out: dict[int, tuple[str, ...]] = {}
    for name, lines in blocks:
        if not (m := re.fullmatch(r"(?i)vlan\s*(\d+)", name)):
            continue
        addrs = [a.group(1) for ln in lines if (a := re.match(r"(?:ip|ipv6) address ([^\s/]+)", ln))
                 and _is_ip(a.group(1))]
        if addrs:
            out[int(m.group(1))] = tuple(dict.fromkeys(addrs))
    return out


def prints_bare_switchport(blocks: list[tuple[str, list[str]]]) -> bool:
    """True when a physical port's block holds a bare ``switchport`` line (and no ``no switchport``): the running
    config of a platform whose interfaces are layer 3 by default, which prints ``switchport`` on its layer-2 ports.

    Catalyst 6500 in native IOS: "By default, LAN ports are configured as Layer 3 (routed) interfaces ... enter the
    switchport command to configure a port as a Layer 2 switch port" (Catalyst 6500 Release 12.2SX Software
    Configuration Guide, "Configuring LAN Ports for Layer 2 Switching", "Default Layer 2 LAN Interface
    Configuration"; also Cisco's CatOS-to-IOS guide OL-11615-01: "In Cisco IOS, by default, all ports are configured
    as routed interfaces"). Switches whose ports are layer 2 by default (2960, 3560/3750, 4500, 9000) never print the
    default ``switchport``; a 4500 prints it on a ``Port-channel`` only, so LAGs and logical interfaces do not count.
    """
    for name, lines in blocks:
        if _LOGICAL.match(name) or "." in name or _lag_number(name) is not None or _MGMT_NAME.match(name):
            continue
        if "switchport" in lines and "no switchport" not in lines:
            return True
    return False


def _inherit_lag_l2(ports: list[PortInfo], lines: dict[str, list[str]]) -> list[PortInfo]:
    """A LAG member without switchport lines of its own carries its LAG's layer-2 settings (EOS prints the
    port-channel's switchport config on the Port-Channel only; IOS copies it onto every member)."""
    by_name = {p.interface: p for p in ports}
    out = []
    for p in ports:
        lag = by_name.get(p.lag) if p.lag else None
        if lag is not None and p.mode != "routed" and not any(ln.startswith("switchport") for ln in lines[p.interface]):
            p = replace(p, mode=lag.mode, access_vid=lag.access_vid, native_vid=lag.native_vid,
                        allowed_vids=lag.allowed_vids)
        out.append(p)
    return out


def global_lines(config_text: str) -> list[str]:
    """Top-level lines of a Cisco-style config, whitespace-normalised (``vtp mode transparent``, ...)."""
    return [_norm(ln) for ln in config_text.splitlines() if ln.strip() and ln[0] not in " \t!"]


def block_children(config_text: str, header: str) -> list[str]:
    """Child lines of the top-level block whose header matches the regex ``header`` (first match), normalised."""
    parse = CiscoConfParse(config_text.splitlines(), syntax="ios")
    objs = parse.find_objects(header)
    return [_norm(c.text) for c in objs[0].all_children] if objs else []


#: model mode -> the older :class:`PortVlanState` mode (``dot1q-tunnel`` was called ``tunnel``)
_STATE_MODE = {"access": "access", "trunk": "trunk", "dynamic": "dynamic", "dot1q-tunnel": "tunnel",
               "unknown": "access"}


def port_states_from_model(model: SwitchModel, skip: Iterable[str] = ()) -> dict[str, PortVlanState]:
    """``{interface: PortVlanState}`` of a model's layer-2 ports (the orchestrator's per-port snapshot).

    Routed ports (SVIs, loopbacks, management, ``no switchport``) are left out; ``unknown`` modes
    (private-VLAN ports) are reported as ``access`` with their access VID (default 1), as before the model existed.
    """
    out = {}
    for p in model.ports:
        if p.mode == "routed" or p.interface in skip:
            continue
        mode = _STATE_MODE[p.mode]
        if mode == "trunk":
            out[p.interface] = PortVlanState(p.interface, "trunk", native_vid=p.native_vid,
                                             allowed_vids=None if p.allowed_vids == "all" else p.allowed_vids,
                                             shutdown=p.shutdown)
        else:
            out[p.interface] = PortVlanState(p.interface, mode, access_vid=p.access_vid or 1, shutdown=p.shutdown)
    return out
