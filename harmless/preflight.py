"""Preflight: refuse, before anything is touched, what would break the network (issue #12; docs/preflight.md).

Pure functions of the inventory switch, its port model (:class:`~harmless.switch_drivers.portmodel.SwitchModel`,
what every port *is* now) and a little session information (:class:`Session`). Each refusal is one
:class:`~harmless.errors.InputError` naming the switch, the port, what it is now and the fix; nothing has been
changed when it is raised (``plan`` and ``up`` run the rules before the first change).

Rules (override in brackets, only where a user can have a good reason):

* access port is a trunk, a LAG member or a LAG, an MLAG peer link, a routed port, the management interface (also
  the SVI carrying the switch's management address), an access port of the management VLAN (the VLAN whose layer-3
  interface carries the inventory's ``host``), the port HARMLESS's own session arrives on, of an unknown mode
  (private VLAN, EOS ``trunk phone``, ...), or a dot1q-tunnel port without ``qinq: true`` → refused [none];
* access port with a voice VLAN, 802.1X/MAB or port security → refused [per port ``keep: [voice, dot1x,
  port_security]``: the switch keeps running the feature, see :data:`KEEP_CONSEQUENCE`];
* trunk is a member of a LAG it is not, an MLAG peer link, a routed or the management port → refused [none];
* VTP client → refused [none: a client cannot create VLANs]; VTP server → refused [switch ``vtp: allow``];
* the configuration has lines the reader cannot read (the port model's own ``unparsed``: a saved config that was
  edited or cut) → refused [none: what its ports are is not certain];
* the plan would run more PVST+/Rapid-PVST+ instances than the platform has (:data:`STP_INSTANCE_LIMITS`) →
  refused [switch ``stp_instance_limit: N`` when the user knows the platform's real figure];
* a chosen VID is a VLAN the switch defines or references (the planner avoids them; this is the guard), or (EOS) an
  internal VLAN of its routed ports → refused.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from harmless.errors import InputError
from harmless.inventory import AccessPort, Switch
from harmless.switch_drivers.base import DeviceFacts
from harmless.switch_drivers.portmodel import PortInfo, SwitchModel, management_vlans

__all__ = ["KEEP_CONSEQUENCE", "STP_INSTANCE_LIMITS", "Session", "check_chosen", "check_facts", "check_plan",
           "check_switch", "model_vlans", "session_of", "stp_limit"]

#: PVST+ / Rapid PVST+ instances a platform runs at most, by model-name prefix (first match wins). Sources:
#: Catalyst 2960 Switch Software Configuration Guide (78-16881-01), ch. "Configuring VLANs", "Supported VLANs": "PVST+
#: or rapid PVST+ with a maximum of 128 spanning-tree instances" (LAN Base); the LAN Lite image (models ending in
#: "-S") supports 64 VLANs (Catalyst 2960 data sheet), and PVST+ runs one instance per VLAN, so at most 64;
#: Catalyst 3560 / 3750 Switch Software Configuration Guides, same section: 128 (per switch / per stack).
STP_INSTANCE_LIMITS: tuple[tuple[str, int], ...] = (
    (r"^WS-C2960\S*-S$", 64),
    (r"^WS-C2960", 128),
    (r"^WS-C3560", 128),
    (r"^WS-C3750", 128),
)
#: spanning-tree modes with one instance per VLAN
PER_VLAN_STP = ("pvst", "rapid-pvst")
#: IOS/EOS VLANs that never run spanning tree (FDDI/Token Ring defaults)
_NO_STP = {1002, 1003, 1004, 1005}

#: what ``keep`` means on a migrated port (also in the docs and in ``plan``'s notes)
KEEP_CONSEQUENCE = {
    "voice": "the voice VLAN stays on the legacy switch: the phone's tagged voice traffic is switched there and "
             "never reaches br-of; only the untagged data VLAN (the PC behind the phone) is hairpinned",
    "dot1x": "802.1X/MAB keeps running on the legacy switch: a host must still authenticate before its frames "
             "reach br-of, and a VLAN assigned by the RADIUS server moves the port out of its HARMLESS VLAN "
             "(that host then bypasses br-of)",
    "port_security": "port security keeps running on the legacy switch: its MAC limit and violation action still "
                     "apply, and secure (sticky) MACs learned in the old access VLAN may be cleared when the "
                     "access VLAN changes (down restores the saved config, sticky lines included)",
}


@dataclass(frozen=True)
class Session:
    """What preflight knows about the device session besides the port model.

    Attributes:
        where: ``"<inventory>: switches[i]"``, the prefix of every error location.
        platform: device model as the driver reports it (``WS-C2960-24TT-L``), '' when unknown (offline).
        session_port: the interface HARMLESS's own management session arrives on, None when unknown.
        defined_vlans: VLANs that exist on the device (``show vlan``), used for the spanning-tree count; empty =
            take the model's VLANs.
        driver: inventory driver name (``ios``, ``eos``, ...).
        management_vlans: VLANs whose layer-3 interface carries the switch's management address (the inventory's
            ``host``; :func:`~harmless.switch_drivers.portmodel.management_vlans`).
    """

    where: str
    platform: str = ""
    session_port: str | None = None
    defined_vlans: frozenset[int] = field(default_factory=frozenset)
    driver: str = ""
    management_vlans: frozenset[int] = field(default_factory=frozenset)


def _describe(p: PortInfo) -> str:
    if p.mode == "trunk":
        allowed = p.allowed_vids if p.allowed_vids == "all" else ",".join(map(str, p.allowed_vids or ())) or "none"
        return f"a trunk (native VLAN {p.native_vid}, allowed VLANs {allowed})"
    if p.mode == "routed":
        return "a routed port (no switchport)"
    if p.mode == "unknown":
        return "a switch port of a mode HARMLESS does not handle (" + (
            next((u for u in p.unparsed if u.startswith("switchport mode ")), "see harmless ports") + ")")
    return f"a {p.mode} port in VLAN {p.access_vid}"


def _port_refusal(sw: Switch, s: Session, j: int, ap: AccessPort, p: PortInfo) -> InputError | None:
    where = f"{s.where}.access_ports[{j}]"
    name = f"{sw.name} {ap.interface}"
    if s.session_port and p.interface == s.session_port:
        return InputError(where, f"{name} is the port HARMLESS's own management session arrives on; migrating it "
                          "cuts HARMLESS off the switch halfway", "remove it from access_ports")
    if p.management:
        return InputError(where, f"{name} is the switch's management interface",
                          "remove it from access_ports (it is not an Ethernet access port)")
    if p.mode in ("access", "dynamic") and p.access_vid in s.management_vlans:
        return InputError(where, f"{name} is an access port of VLAN {p.access_vid}, the switch's management VLAN (its "
                          f"layer-3 interface carries {sw.host}, the address HARMLESS manages {sw.name} at): the "
                          "management session may arrive on it, and migrating it would cut it",
                          "remove it from access_ports, or move the switch's management address to a VLAN no "
                          "migrated port is in")
    if p.mlag_peer_link:
        return InputError(where, f"{name} is part of the MLAG peer link" + (f" ({p.lag})" if p.lag else ""),
                          "remove it from access_ports; never migrate a peer link")
    if p.is_lag:
        return InputError(where, f"{name} is a link aggregation group; migrating it as an access port breaks the "
                          "bundle", "remove it from access_ports (a LAG can only be a trunk to the server)")
    if p.lag:
        return InputError(where, f"{name} is a member of {p.lag}; reconfiguring one member breaks the bundle",
                          f"remove it from access_ports, or take it out of {p.lag} (no channel-group) first if "
                          "it really is a host port")
    if p.mode == "trunk":
        return InputError(where, f"{name} is {_describe(p)}; as an access port it would stop carrying them "
                          "(an uplink would be cut)",
                          "remove it from access_ports (list it under trunks if it is the cable to the server)")
    if p.mode == "routed":
        return InputError(where, f"{name} is {_describe(p)}", "remove it from access_ports, or make it a switch "
                          "port (switchport) in an access VLAN first")
    if p.mode == "unknown":
        return InputError(where, f"{name} is {_describe(p)}", "remove it from access_ports or make it a plain "
                          "access port first")
    if p.mode == "dot1q-tunnel" and not ap.qinq:
        return InputError(f"{where}.qinq", f"{name} is a dot1q-tunnel (802.1ad customer) port in VLAN "
                          f"{p.access_vid}; as a plain access port it would drop its customers' tagged frames",
                          "set qinq: true for this port")
    found = [("voice", p.voice_vid is not None, f"a voice VLAN ({p.voice_vid})"),
             ("dot1x", p.dot1x, "802.1X/MAB authentication"),
             ("port_security", p.port_security, "port security")]
    missing = [(k, what) for k, on, what in found if on and k not in ap.keep]
    if missing:
        k, what = missing[0]
        keys = ", ".join(k for k, _ in missing)
        return InputError(f"{where}.keep", f"{name} has {what}, which a migrated port does not carry through "
                          f"br-of ({KEEP_CONSEQUENCE[k]})",
                          f"if that is acceptable add keep: [{keys}] to this port, otherwise remove the feature "
                          "on the switch first")
    return None


def check_switch(sw: Switch, model: SwitchModel, s: Session) -> None:
    """Refuse a switch whose inventory would break something, from its port model (pure).

    Args:
        sw: the validated inventory entry.
        model: the switch's port model now.
        s: session information (error location, platform, session port).

    Raises:
        InputError: the first refusal (switch, port, what it is now, the fix).
    """
    if model.vtp_mode == "client":
        raise InputError(f"{s.where}.vtp", f"{sw.name} is a VTP client: it cannot create the VLANs HARMLESS needs "
                         "(they would have to come from the domain's VTP server, for the whole domain)",
                         "set 'vtp mode transparent' (or 'vtp mode off') on the switch first")
    if model.vtp_mode == "server" and sw.vtp != "allow":
        raise InputError(f"{s.where}.vtp", f"{sw.name} is a VTP server: every VLAN HARMLESS creates would be "
                         "advertised to every switch of its VTP domain (and raise the domain's revision number)",
                         "set 'vtp mode transparent' on the switch first, or add vtp: allow to this switch to "
                         "accept VLANs harmless-* appearing domain-wide (down deletes them again)")
    if model.unparsed:
        more = f" (and {len(model.unparsed) - 1} more)" if len(model.unparsed) > 1 else ""
        raise InputError(s.where, f"{sw.name}'s configuration has lines HARMLESS cannot read, so what its ports are "
                         f"is not certain: {model.unparsed[0]}{more}",
                         "correct those lines (a switch never prints them: the saved config was edited or cut; "
                         "harmless ports lists them all), then plan again")
    # inventory names match the device's canonically where the inventory knows how (Gi0/1 = GigabitEthernet0/1)
    canon = getattr(sw, "canonical", None) or (lambda name: name)
    by_name = {canon(p.interface): p for p in model.ports}
    for j, ap in enumerate(sw.access_ports):
        p = by_name.get(canon(ap.interface))
        if p is None:
            if model.ports:
                raise InputError(f"{s.where}.access_ports[{j}]", f"{sw.name} has no interface {ap.interface} in "
                                 "its running config", "use an interface name exactly as the device shows it")
            continue
        err = _port_refusal(sw, s, j, ap, p)
        if err:
            raise err
    for j, t in enumerate(sw.trunks):
        p = by_name.get(canon(t.switch_port))
        if p is None:
            continue
        where, name = f"{s.where}.trunks[{j}].switch_port", f"{sw.name} {t.switch_port}"
        if s.session_port and p.interface == s.session_port:
            raise InputError(where, f"{name} is the port HARMLESS's own management session arrives on; making it "
                             "the HARMLESS trunk cuts that session", "cable the server to another port")
        if p.management or p.mode == "routed":
            raise InputError(where, f"{name} is " + ("the management interface" if p.management else _describe(p)),
                             "use a switch port cabled to the HARMLESS server")
        if p.mlag_peer_link:
            raise InputError(where, f"{name} is part of the MLAG peer link", "cable the server to another port")
        if p.lag:
            raise InputError(where, f"{name} is a member of {p.lag}; HARMLESS would reconfigure one link of the "
                             "bundle", f"use {p.lag} itself as the trunk, or take {t.switch_port} out of the "
                             "channel-group first")


def stp_limit(sw: Switch, s: Session) -> int | None:
    """Most PVST+ instances the switch runs: ``sw.stp_instance_limit``, else :data:`STP_INSTANCE_LIMITS` by
    platform, else None (unknown: not checked)."""
    if sw.stp_instance_limit:
        return sw.stp_instance_limit
    return next((n for rx, n in STP_INSTANCE_LIMITS if re.match(rx, s.platform or "")), None)


def check_plan(sw: Switch, model: SwitchModel, vids: dict[str, int], s: Session,
               ours: frozenset[int] = frozenset()) -> None:
    """Refuse a switch plan (its chosen VIDs) that collides with the switch or exceeds its STP instances (pure).

    Args:
        vids: ``{access interface: VID}`` the plan gives the switch's access ports.
        ours: VIDs HARMLESS itself created before (previous plan, VLANs named ``harmless-*``): not collisions.

    Raises:
        InputError: a chosen VID the switch already defines or references; more per-VLAN spanning-tree instances
            than the platform has.
    """
    for iface, vid in vids.items():
        if vid in model.vlans and vid not in ours:
            j = next((i for i, ap in enumerate(sw.access_ports) if ap.interface == iface), 0)
            raise InputError(f"{s.where}.access_ports[{j}].vid", f"VID {vid} for {sw.name} {iface} is already "
                             "defined or referenced on the switch", "pick a VID the switch does not use (harmless "
                             "ports lists them) or drop vid to let the planner choose")
    if s.driver == "eos":
        _check_eos_internal_vlans(sw, model, vids, s)
    stp = model.stp_mode or ("pvst" if s.driver in ("ios", "netmiko_cli") else None)
    limit = stp_limit(sw, s)
    if limit and stp in PER_VLAN_STP:
        existing = set(s.defined_vlans or model.vlans) - _NO_STP
        total = existing | set(vids.values())
        if len(total) > limit:
            source = ("set by stp_instance_limit" if sw.stp_instance_limit
                      else f"its platform {s.platform} runs")
            raise InputError(f"{s.where}.stp_instance_limit",
                             f"{sw.name} runs {stp} (one spanning-tree instance per VLAN): {len(existing)} VLANs now "
                             f"+ {len(total - existing)} HARMLESS VLANs = {len(total)} instances, more than the "
                             f"{limit} {source}; VLANs beyond that run no spanning tree at all",
                             "migrate fewer ports, remove unused VLANs, or switch to 'spanning-tree mode mst'; set "
                             "stp_instance_limit only if the platform really runs more")


#: EOS allocates one internal VLAN per routed port, ascending from 1006 by default (EOS User Manual, "Internal VLAN
#: allocation": ``vlan internal order ascending range 1006 1199``); a config line moves the range.
EOS_INTERNAL_VLANS = (1006, 1199)


def _check_eos_internal_vlans(sw: Switch, model: SwitchModel, vids: dict[str, int], s: Session) -> None:
    """Refuse chosen VIDs that EOS has probably given to routed ports as internal VLANs."""
    routed = [p for p in model.ports if p.mode == "routed" and not p.management
              and re.match(r"^(Ethernet|Port-Channel)", p.interface)]
    lo, hi = EOS_INTERNAL_VLANS
    taken = range(lo, min(hi, lo + len(routed) - 1) + 1)
    for iface, vid in vids.items():
        if vid in taken:
            j = next((i for i, ap in enumerate(sw.access_ports) if ap.interface == iface), 0)
            raise InputError(f"{s.where}.access_ports[{j}].vid", f"VID {vid} for {sw.name} {iface} is likely an "
                             f"internal VLAN of one of its {len(routed)} routed ports (EOS allocates them from {lo} "
                             "up)", "use a vlan_range below 1006 (e.g. 100-999)")


# ----------------------------------------------------------------------------- the planner's entry points
def session_of(sw: Switch, facts: DeviceFacts, where: str) -> Session:
    """The :class:`Session` of a switch from its device facts (platform, session port, VLANs that exist)."""
    mgmt = management_vlans(facts.port_model, sw.host) if facts.port_model is not None else frozenset()
    return Session(where=where, platform=facts.model, session_port=facts.session_port,
                   defined_vlans=frozenset(facts.vlans), driver=sw.driver, management_vlans=mgmt)


def model_vlans(facts: DeviceFacts) -> set[int]:
    """Every VID the switch defines or references (the port model's ``vlans``; empty without a model)."""
    return set(facts.port_model.vlans) if facts.port_model is not None else set()


def check_facts(sw: Switch, facts: DeviceFacts, where: str) -> None:
    """:func:`check_switch` on the facts' port model (nothing to check without one). Raises InputError."""
    if facts.port_model is not None:
        check_switch(sw, facts.port_model, session_of(sw, facts, where))


def check_chosen(sw: Switch, facts: DeviceFacts, chosen: dict[str, int], ours: set[int], where: str) -> None:
    """:func:`check_plan` on the planner's chosen VIDs (nothing to check without a port model). Raises InputError."""
    if facts.port_model is not None:
        check_plan(sw, facts.port_model, chosen, session_of(sw, facts, where), frozenset(ours))
