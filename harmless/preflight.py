"""Preflight: refuse, before anything is touched, what would break the network (issues #12, #25; docs/preflight.md).

Pure functions of the inventory switch, its port model (:class:`~harmless.switch_drivers.portmodel.SwitchModel`,
what every port *is* now) and a little session information (:class:`Session`). Every rule returns
:class:`~harmless.errors.Finding` objects (a refusal, a warning or a note, naming the switch, the port, what it is
now, the fix and, where the fix is an inventory change, the exact inventory text); the planner collects them for
every port of every switch and raises them together (:class:`~harmless.errors.Refused`), so one ``plan`` shows
every problem. Nothing has been changed when they are raised (``plan`` and ``up`` run the rules before the first
change). The ``check_*`` functions raise the refusals of one rule group directly.

Rules (override in brackets, only where a user can have a good reason):

* access port is a trunk, a LAG member or a LAG, an MLAG peer link, a routed port, the management interface (also
  the SVI carrying the switch's management address), an access port of the management VLAN (the VLAN whose layer-3
  interface carries the inventory's ``host``), the port HARMLESS's own session arrives on, of an unknown mode
  (private VLAN, EOS ``trunk phone``, ...), or a dot1q-tunnel port without ``qinq: true`` → refused [none];
* access port with a voice VLAN, 802.1X/MAB or port security → refused [per port ``keep: [voice, dot1x,
  port_security]``: the switch keeps running the feature, see :data:`KEEP_CONSEQUENCE`];
* trunk is a member of a LAG it is not, an MLAG peer link, a routed or the management port → refused [none];
* trunk is a LAG or already carries VLANs other than HARMLESS's (an uplink) → refused [trunk ``shared: true``];
  a shut trunk is brought up by the plan (warning); the migrated ports' summed speed over the trunk's is reported,
  and warned above ``oversubscription_limit`` (default 12:1, :data:`OVERSUBSCRIPTION_LIMIT`);
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

import yaml

from harmless.errors import Finding, InputError, raise_refusals
from harmless.inventory import AccessPort, Switch, Trunk
from harmless.switch_drivers import speeds as speeds_mod
from harmless.switch_drivers.base import DeviceFacts
from harmless.switch_drivers.portmodel import PortInfo, SwitchModel, management_vlans

__all__ = ["KEEP_CONSEQUENCE", "OVERSUBSCRIPTION_LIMIT", "STP_INSTANCE_LIMITS", "Session", "carried_vlans",
           "check_chosen", "check_facts", "check_plan", "check_switch", "chosen_findings", "facts_findings",
           "load_findings", "model_vlans", "plan_findings", "port_form", "session_of", "stp_limit", "switch_findings",
           "trunk_findings", "trunk_form"]

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


def flow(d: dict) -> str:
    """A dict as one line of YAML flow style, the way an inventory writes it (``{interface: Gi1/0/5, keep:
    [voice]}``)."""
    return yaml.safe_dump(d, default_flow_style=True, sort_keys=False, width=10_000).strip()


def port_form(ap: AccessPort, **changes) -> str:
    """The inventory text of access port ``ap`` with ``changes`` (``{interface: Gi1/0/5, keep: [voice]}``)."""
    d = {k: v for k, v in ap.model_dump(mode="json", exclude_defaults=True).items() if k not in changes}
    return flow({**d, **changes})


def trunk_form(t: Trunk, **changes) -> str:
    """The inventory text of trunk ``t`` with ``changes`` (``{switch_port: Po1, server_interface: eth1, shared:
    true}``)."""
    d = {k: v for k, v in t.model_dump(mode="json", exclude_defaults=True).items() if k not in changes}
    return flow({"switch_port": t.switch_port, "server_interface": t.server_interface, **d, **changes})


def _refusal(kind: str, where: str, sw: Switch, port: str | None, problem: str, fix: str,
             inventory: str | None = None, explain: tuple[str, ...] = ()) -> Finding:
    return Finding(severity="refusal", kind=kind, where=where, problem=problem, fix=fix, inventory=inventory,
                   explain=explain, switch=sw.name, port=port)


def _structural(p: PortInfo, ap: AccessPort) -> tuple[str, str, str] | None:
    """``(kind, what the port is, fix)`` when port ``p`` can never be a migrated access port as it is."""
    if p.management:
        return "access-management", "is the switch's management interface", \
            "remove it from access_ports (it is not an Ethernet access port)"
    if p.mlag_peer_link:
        return "access-mlag-peer-link", "is part of the MLAG peer link" + (f" ({p.lag})" if p.lag else ""), \
            "remove it from access_ports; never migrate a peer link"
    if p.is_lag:
        return "access-lag", "is a link aggregation group; migrating it as an access port breaks the bundle", \
            "remove it from access_ports (a LAG can only be a trunk to the server)"
    if p.lag:
        return "access-lag-member", f"is a member of {p.lag}; reconfiguring one member breaks the bundle", \
            f"remove it from access_ports, or take it out of {p.lag} (no channel-group) first if it really is a " \
            "host port"
    if p.mode == "trunk":
        return "access-is-trunk", f"is {_describe(p)}; as an access port it would stop carrying them (an uplink " \
            "would be cut)", "remove it from access_ports (list it under trunks if it is the cable to the server)"
    if p.mode == "routed":
        return "access-routed", f"is {_describe(p)}", \
            "remove it from access_ports, or make it a switch port (switchport) in an access VLAN first"
    if p.mode == "unknown":
        return "access-unknown-mode", f"is {_describe(p)}", "remove it from access_ports or make it a plain " \
            "access port first"
    return None


def _port_finding(sw: Switch, s: Session, j: int, ap: AccessPort, p: PortInfo) -> Finding | None:
    """The refusal of one access port (None: it may be migrated). Every feature it lacks a ``keep`` for is named
    in one finding, with the inventory text that accepts them and what each means (``explain``)."""
    where, name = f"{s.where}.access_ports[{j}]", f"{sw.name} {ap.interface}"
    if s.session_port and p.interface == s.session_port:
        return _refusal("access-session-port", where, sw, ap.interface, f"{name} is the port HARMLESS's own "
                        "management session arrives on; migrating it cuts HARMLESS off the switch halfway",
                        "remove it from access_ports")
    if hit := _structural(p, ap):
        return _refusal(hit[0], where, sw, ap.interface, f"{name} {hit[1]}", hit[2])
    if p.mode in ("access", "dynamic") and p.access_vid in s.management_vlans:
        return _refusal("access-management-vlan", where, sw, ap.interface, f"{name} is an access port of VLAN "
                        f"{p.access_vid}, the switch's management VLAN (its layer-3 interface carries {sw.host}, the "
                        f"address HARMLESS manages {sw.name} at): the management session may arrive on it, and "
                        "migrating it would cut it", "remove it from access_ports, or move the switch's management "
                        "address to a VLAN no migrated port is in")
    if p.mode == "dot1q-tunnel" and not ap.qinq:
        form = port_form(ap, qinq=True)
        return _refusal("access-dot1q-tunnel", f"{where}.qinq", sw, ap.interface, f"{name} is a dot1q-tunnel "
                        f"(802.1ad customer) port in VLAN {p.access_vid}; as a plain access port it would drop its "
                        "customers' tagged frames", f"write the port as {form}", form)
    found = [("voice", p.voice_vid is not None, f"a voice VLAN ({p.voice_vid})"),
             ("dot1x", p.dot1x, "802.1X/MAB authentication"),
             ("port_security", p.port_security, "port security")]
    missing = [(k, what) for k, on, what in found if on and k not in ap.keep]
    if not missing:
        return None
    keys = [k for k, _ in missing]
    form = port_form(ap, keep=[*ap.keep, *keys])
    whats = " and ".join(what for _, what in missing)
    return _refusal("access-keep-feature", f"{where}.keep", sw, ap.interface,
                    f"{name} has {whats}, which a migrated port does not carry through br-of",
                    f"if that is acceptable add keep: [{', '.join(keys)}] to this port: {form}; otherwise remove the "
                    "feature on the switch first", form,
                    tuple(f"keep: [{k}]: {KEEP_CONSEQUENCE[k]}" for k in keys))


def _vtp_finding(sw: Switch, model: SwitchModel, s: Session) -> Finding | None:
    if model.vtp_mode == "client":
        return _refusal("vtp-client", f"{s.where}.vtp", sw, None, f"{sw.name} is a VTP client: it cannot create "
                        "the VLANs HARMLESS needs (they would have to come from the domain's VTP server, for the "
                        "whole domain)", "set 'vtp mode transparent' (or 'vtp mode off') on the switch first")
    if model.vtp_mode == "server" and sw.vtp != "allow":
        return _refusal("vtp-server", f"{s.where}.vtp", sw, None, f"{sw.name} is a VTP server: every VLAN HARMLESS "
                        "creates would be advertised to every switch of its VTP domain (and raise the domain's "
                        "revision number)", "set 'vtp mode transparent' on the switch first, or add vtp: allow to "
                        "this switch to accept VLANs harmless-* appearing domain-wide (down deletes them again)",
                        "vtp: allow")
    return None


def switch_findings(sw: Switch, model: SwitchModel, s: Session, ours: frozenset[int] = frozenset()
                    ) -> list[Finding]:
    """Every refusal and warning of a switch's inventory against its port model (pure): VTP, each access port,
    each trunk (:func:`trunk_findings`).

    Args:
        sw: the validated inventory entry.
        model: the switch's port model now.
        s: session information (error location, platform, session port).
        ours: VIDs HARMLESS owns on the switch (its previous plan, VLANs named ``harmless-*``).

    Returns:
        The findings in inventory order (empty: nothing to say).
    """
    out = [f for f in [_vtp_finding(sw, model, s)] if f]
    if model.unparsed:
        more = f" (and {len(model.unparsed) - 1} more)" if len(model.unparsed) > 1 else ""
        out.append(_refusal("config-unreadable", s.where, sw, None, f"{sw.name}'s configuration has lines HARMLESS "
                            f"cannot read, so what its ports are is not certain: {model.unparsed[0]}{more}",
                            "correct those lines (a switch never prints them: the saved config was edited or cut; "
                            "harmless ports lists them all), then plan again"))
    # inventory names match the device's canonically where the inventory knows how (Gi0/1 = GigabitEthernet0/1)
    canon = getattr(sw, "canonical", None) or (lambda name: name)
    by_name = {canon(p.interface): p for p in model.ports}
    for j, ap in enumerate(sw.access_ports):
        p = by_name.get(canon(ap.interface))
        if p is None:
            if model.ports:
                out.append(_refusal("unknown-interface", f"{s.where}.access_ports[{j}]", sw, ap.interface,
                                    f"{sw.name} has no interface {ap.interface} in its running config",
                                    "use an interface name exactly as the device shows it"))
            continue
        if f := _port_finding(sw, s, j, ap, p):
            out.append(f)
    for j, t in enumerate(sw.trunks):
        p = by_name.get(canon(t.switch_port))
        if p is not None:
            out += trunk_findings(sw, model, s, j, p, ours)
    return out


def check_switch(sw: Switch, model: SwitchModel, s: Session, ours: frozenset[int] = frozenset()) -> None:
    """Refuse a switch whose inventory would break something, from its port model (pure).

    Raises:
        Refused: every refusal of :func:`switch_findings` (an :class:`InputError`).
    """
    raise_refusals(switch_findings(sw, model, s, ours))


# ----------------------------------------------------------------------------- trunks
def _trunk_port_refusal(sw: Switch, s: Session, j: int, p: PortInfo) -> Finding | None:
    """A trunk port that can never be the HARMLESS trunk (session port, management, routed, peer link, member of
    a LAG it is not)."""
    t = sw.trunks[j]
    where, name = f"{s.where}.trunks[{j}].switch_port", f"{sw.name} {t.switch_port}"
    if s.session_port and p.interface == s.session_port:
        return _refusal("trunk-session-port", where, sw, t.switch_port, f"{name} is the port HARMLESS's own "
                        "management session arrives on; making it the HARMLESS trunk cuts that session",
                        "cable the server to another port")
    if p.management or p.mode == "routed":
        return _refusal("trunk-routed", where, sw, t.switch_port, f"{name} is " + (
            "the management interface" if p.management else _describe(p)),
            "use a switch port cabled to the HARMLESS server")
    if p.mlag_peer_link:
        return _refusal("trunk-mlag-peer-link", where, sw, t.switch_port, f"{name} is part of the MLAG peer link",
                        "cable the server to another port")
    if p.lag:
        return _refusal("trunk-lag-member", where, sw, t.switch_port, f"{name} is a member of {p.lag}; HARMLESS "
                        "would reconfigure one link of the bundle", f"use {p.lag} itself as the trunk, or take "
                        f"{t.switch_port} out of the channel-group first")
    return None


def carried_vlans(p: PortInfo, model: SwitchModel, defined: frozenset[int] = frozenset()) -> set[int]:
    """VLANs a port carries tagged now: the VLANs the switch has (the model's, and ``defined``: ``show vlan``) that
    its allowed list (``all``: every one) lets through, without its native VLAN and the reserved 1002-1005 (a VID
    the switch does not have is carried by nobody); nothing for a port that is not a trunk. Pure."""
    if p.mode != "trunk":
        return set()
    has = set(model.vlans) | set(defined)
    allowed = has if p.allowed_vids == "all" else has & set(p.allowed_vids or ())
    return allowed - {p.native_vid} - _NO_STP


def _members(model: SwitchModel, lag: str) -> list[PortInfo]:
    return [q for q in model.ports if q.lag == lag]


def trunk_findings(sw: Switch, model: SwitchModel, s: Session, j: int, p: PortInfo,
                   ours: frozenset[int] = frozenset()) -> list[Finding]:
    """Refusals and warnings of trunk ``j`` (its port ``p``) before any change (pure).

    The HARMLESS trunk must be a free port (HARMLESS paper, Sec. II: "free trunk ports to be used for an
    uplink"): one that already carries VLANs other than HARMLESS's (an uplink), or a LAG, is refused unless the
    inventory says ``shared: true`` (then its other VLANs are kept: :class:`~harmless.plan.TrunkPlan` ``shared``);
    a shut trunk is brought up (``no shutdown`` rendered) and said so.
    """
    t = sw.trunks[j]
    if hit := _trunk_port_refusal(sw, s, j, p):
        return [hit]
    where, name = f"{s.where}.trunks[{j}]", f"{sw.name} {t.switch_port}"
    other = sorted(carried_vlans(p, model, s.defined_vlans) - set(ours))
    what = []
    if p.is_lag:
        members = ", ".join(q.interface for q in _members(model, p.interface)) or "no member configured"
        what.append(f"a link aggregation group ({members})")
    if other:
        what.append(f"a trunk that carries VLANs {_vid_list(other)} now (an uplink)")
    out = []
    if what and not t.shared:
        form = trunk_form(t, shared=True)
        out.append(_refusal("trunk-in-use", f"{where}.shared", sw, t.switch_port, f"{name} is {' and '.join(what)}"
                            "; HARMLESS needs a free port cabled to its server (HARMLESS paper, Sec. II)",
                            f"cable the server to a free port and name it here, or, if this port is shared with "
                            f"the server on purpose, write the trunk as {form}", form))
    elif what:
        out.append(Finding(severity="warning", kind="trunk-shared", where=f"{where}.shared",
                           problem=f"{name} is {' and '.join(what)}; shared: true keeps " + (
                               f"VLANs {_vid_list(other)} on it and adds HARMLESS's" if other else "its bundle"),
                           switch=sw.name, port=t.switch_port))
    if p.shutdown:
        out.append(_shut_trunk(sw, t, where, name))
    return out


def is_procurve(sw: Switch) -> bool:
    """The switch speaks ProCurve's syntax (driver ``procurve``, or ``netmiko_cli`` with ``hp_procurve``)."""
    return sw.driver == "procurve" or (sw.driver == "netmiko_cli" and sw.optional_args.get("device_type") ==
                                       "hp_procurve")


def _shut_trunk(sw: Switch, t: Trunk, where: str, name: str) -> Finding:
    """A shut trunk: brought up by the plan (warning), or refused where the driver cannot render it and give it
    back (ProCurve's line-wise restore changes VLANs only)."""
    if is_procurve(sw):
        return _refusal("trunk-shutdown", f"{where}.switch_port", sw, t.switch_port, f"{name} is disabled "
                        "(administratively down); the ProCurve driver cannot enable it and disable it again on down",
                        f"enable it on the switch first (interface {t.switch_port} enable), or name another port")
    return Finding(severity="warning", kind="trunk-shutdown", where=f"{where}.switch_port", switch=sw.name,
                   port=t.switch_port, problem=f"{name} is shut down (administratively down): the plan brings it up "
                   "(no shutdown); down shuts it again", fix="if it is shut for a reason, name another port")


def _vid_list(vids) -> str:
    vids = sorted(vids)
    return ",".join(map(str, vids[:12])) + (f",... ({len(vids)} VLANs)" if len(vids) > 12 else "")


def stp_limit(sw: Switch, s: Session) -> int | None:
    """Most PVST+ instances the switch runs: ``sw.stp_instance_limit``, else :data:`STP_INSTANCE_LIMITS` by
    platform, else None (unknown: not checked)."""
    if sw.stp_instance_limit:
        return sw.stp_instance_limit
    return next((n for rx, n in STP_INSTANCE_LIMITS if re.match(rx, s.platform or "")), None)


def _vid_where(sw: Switch, s: Session, iface: str) -> str:
    j = next((i for i, ap in enumerate(sw.access_ports) if ap.interface == iface), 0)
    return f"{s.where}.access_ports[{j}].vid"


def plan_findings(sw: Switch, model: SwitchModel, vids: dict[str, int], s: Session,
                  ours: frozenset[int] = frozenset()) -> list[Finding]:
    """Refusals of a switch plan (its chosen VIDs) that collides with the switch or exceeds its STP instances
    (pure).

    Args:
        vids: ``{access interface: VID}`` the plan gives the switch's access ports.
        ours: VIDs HARMLESS itself created before (previous plan, VLANs named ``harmless-*``): not collisions.

    Returns:
        A refusal per chosen VID the switch already defines or references (or, EOS, probably gives a routed port
        as internal VLAN), and one when there would be more per-VLAN spanning-tree instances than the platform
        has.
    """
    out = [_refusal("vid-in-use", _vid_where(sw, s, iface), sw, iface, f"VID {vid} for {sw.name} {iface} is "
                    "already defined or referenced on the switch", "pick a VID the switch does not use (harmless "
                    "ports lists them) or drop vid to let the planner choose")
           for iface, vid in vids.items() if vid in model.vlans and vid not in ours]
    if s.driver == "eos":
        out += _eos_internal_vlans(sw, model, vids, s)
    stp = model.stp_mode or ("pvst" if s.driver in ("ios", "netmiko_cli") else None)
    limit = stp_limit(sw, s)
    if limit and stp in PER_VLAN_STP:
        existing = set(s.defined_vlans or model.vlans) - _NO_STP
        total = existing | set(vids.values())
        if len(total) > limit:
            source = ("set by stp_instance_limit" if sw.stp_instance_limit
                      else f"its platform {s.platform} runs")
            out.append(_refusal(
                "stp-instances", f"{s.where}.stp_instance_limit", sw, None,
                f"{sw.name} runs {stp} (one spanning-tree instance per VLAN): {len(existing)} VLANs now + "
                f"{len(total - existing)} HARMLESS VLANs = {len(total)} instances, more than the {limit} {source}; "
                "VLANs beyond that run no spanning tree at all",
                "migrate fewer ports, remove unused VLANs, or switch to 'spanning-tree mode mst'; set "
                "stp_instance_limit only if the platform really runs more"))
    return out


def check_plan(sw: Switch, model: SwitchModel, vids: dict[str, int], s: Session,
               ours: frozenset[int] = frozenset()) -> None:
    """Refuse a switch plan (:func:`plan_findings`). Raises Refused (an InputError) with every refusal."""
    raise_refusals(plan_findings(sw, model, vids, s, ours))


#: EOS allocates one internal VLAN per routed port, ascending from 1006 by default (EOS User Manual, "Internal VLAN
#: allocation": ``vlan internal order ascending range 1006 1199``); a config line moves the range.
EOS_INTERNAL_VLANS = (1006, 1199)


def _eos_internal_vlans(sw: Switch, model: SwitchModel, vids: dict[str, int], s: Session) -> list[Finding]:
    """Refusals of chosen VIDs that EOS has probably given to routed ports as internal VLANs."""
    routed = [p for p in model.ports if p.mode == "routed" and not p.management
              and re.match(r"^(Ethernet|Port-Channel)", p.interface)]
    lo, hi = EOS_INTERNAL_VLANS
    taken = range(lo, min(hi, lo + len(routed) - 1) + 1)
    return [_refusal("eos-internal-vlan", _vid_where(sw, s, iface), sw, iface, f"VID {vid} for {sw.name} {iface} "
                     f"is likely an internal VLAN of one of its {len(routed)} routed ports (EOS allocates them from "
                     f"{lo} up)", "use a vlan_range below 1006 (e.g. 100-999)")
            for iface, vid in vids.items() if vid in taken]


# ----------------------------------------------------------------------------- trunk load
#: default limit of the migrated ports' summed speed over their trunk's speed. The HARMLESS paper (Csikor et al.,
#: IFIP Networking 2018, Sec. III "Cost analysis") aggregates 12 access ports per trunk port, "over-committing the
#: uplink at a similar rate as plain Ethernet networks"; 12:1 is that ratio for ports of the trunk's own speed.
#: Every hairpinned frame crosses the trunk twice (in and back out), each direction of the full-duplex trunk
#: carrying what the migrated ports send.
OVERSUBSCRIPTION_LIMIT = 12.0


def load_findings(sw: Switch, model: SwitchModel, s: Session, ports_of: dict[str, list[str]]) -> list[Finding]:
    """The load of each trunk: the summed nominal speed of the access ports it carries against its own speed
    (:mod:`harmless.switch_drivers.speeds`), as a note, or a warning above ``sw.oversubscription_limit`` (default
    :data:`OVERSUBSCRIPTION_LIMIT`). Pure.

    Args:
        ports_of: ``{trunk switch_port (inventory spelling): [access interfaces as the device spells them]}``.
    """
    limit = sw.oversubscription_limit or OVERSUBSCRIPTION_LIMIT
    by_name = {p.interface: p for p in model.ports}
    canon = getattr(sw, "canonical", None) or (lambda name: name)
    by_canon = {canon(p.interface): p for p in model.ports}
    out = []
    for j, t in enumerate(sw.trunks):
        tp = by_canon.get(canon(t.switch_port))
        ports = ports_of.get(t.switch_port, [])
        if tp is None or not ports:
            continue
        speeds = [_speed(s.driver, by_name.get(i), i) for i in ports]
        trunk = (speeds_mod.lag_speed_mbps(_speed(s.driver, q, q.interface) for q in _members(model, tp.interface))
                 if tp.is_lag else _speed(s.driver, tp, tp.interface))
        where, name = f"{s.where}.trunks[{j}]", f"{sw.name} {t.switch_port}"
        if trunk is None or None in speeds:
            out.append(Finding(severity="note", kind="trunk-load-unknown", where=where, switch=sw.name,
                               port=t.switch_port, problem=f"{name} carries {len(ports)} migrated ports; their speed "
                               "or the trunk's is unknown (no speed in the interface name or config), so the load "
                               "is not compared"))
            continue
        total = sum(speeds)
        ratio = total / trunk
        line = (f"{name} carries {len(ports)} migrated ports, {speeds_mod.format_mbps(total)} over "
                f"{speeds_mod.format_mbps(trunk)}: {_ratio(ratio)}:1 (limit {limit:g}:1)")
        if ratio > limit:
            out.append(Finding(severity="warning", kind="trunk-oversubscribed", where=where, switch=sw.name,
                               port=t.switch_port, problem=line + "; hairpinned traffic will queue and drop on it",
                               fix="add a trunk (trunks, access_ports[].trunk), migrate fewer ports, or raise "
                               "oversubscription_limit if that load is expected"))
        else:
            out.append(Finding(severity="note", kind="trunk-load", where=where, switch=sw.name, port=t.switch_port,
                               problem=line))
    return out


def _ratio(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _speed(driver: str, p: PortInfo | None, name: str) -> int | None:
    return speeds_mod.port_speed_mbps(driver, name, p.unparsed if p else ())


# ----------------------------------------------------------------------------- the planner's entry points
def session_of(sw: Switch, facts: DeviceFacts, where: str) -> Session:
    """The :class:`Session` of a switch from its device facts (platform, session port, VLANs that exist)."""
    mgmt = management_vlans(facts.port_model, sw.host) if facts.port_model is not None else frozenset()
    return Session(where=where, platform=facts.model, session_port=facts.session_port,
                   defined_vlans=frozenset(facts.vlans), driver=sw.driver, management_vlans=mgmt)


def model_vlans(facts: DeviceFacts) -> set[int]:
    """Every VID the switch defines or references (the port model's ``vlans``; empty without a model)."""
    return set(facts.port_model.vlans) if facts.port_model is not None else set()


def facts_findings(sw: Switch, facts: DeviceFacts, where: str, ours: frozenset[int] = frozenset()) -> list[Finding]:
    """:func:`switch_findings` on the facts' port model (none without one)."""
    if facts.port_model is None:
        return []
    return switch_findings(sw, facts.port_model, session_of(sw, facts, where), ours)


def check_facts(sw: Switch, facts: DeviceFacts, where: str) -> None:
    """:func:`check_switch` on the facts' port model (nothing to check without one). Raises Refused."""
    raise_refusals(facts_findings(sw, facts, where))


def chosen_findings(sw: Switch, facts: DeviceFacts, chosen: dict[str, int], ours: set[int], where: str
                    ) -> list[Finding]:
    """:func:`plan_findings` on the planner's chosen VIDs (none without a port model)."""
    if facts.port_model is None:
        return []
    return plan_findings(sw, facts.port_model, chosen, session_of(sw, facts, where), frozenset(ours))


def check_chosen(sw: Switch, facts: DeviceFacts, chosen: dict[str, int], ours: set[int], where: str) -> None:
    """:func:`check_plan` on the planner's chosen VIDs (nothing to check without a port model). Raises Refused."""
    raise_refusals(chosen_findings(sw, facts, chosen, ours, where))
