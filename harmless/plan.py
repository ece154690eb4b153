"""The planner: inventory + device facts -> port map (pure; same input, same plan).

For every migrated access port the plan fixes:
  * its OpenFlow port number on br-of: the inventory's ``ofport`` or the number the name gives under the numbering
    scheme (``docs/ofport-numbering.md``: ``FastEthernet0/7`` -> 7, stack member 2's ``Gi2/0/7`` -> 2007), so that
    br-of port 7 *is* legacy port 7 (HARMLESS paper, Sec. II: data-plane transparency);
  * its interface name as the device spells it (inventory names are matched canonically, ``Gi0/7`` =
    ``GigabitEthernet0/7``);
  * its VID: the inventory's ``vid``, else (only without a previous plan: state lost but device configured) a VLAN on
    the device that already carries this port's HARMLESS name, else ``range_start + ofport`` when free (readable:
    port 7 -> VID 107 with range 100-199), else the lowest free VID. VIDs configured on the device for other
    purposes are never used. With a previous plan the choice depends on the inventory and the device's other VLANs
    only, never on the history of edits: after any sequence of inventory changes, ``up`` leaves the same VIDs as a
    fresh ``up`` of the final inventory would (issue #22); the previous plan's VIDs only stay free for HARMLESS.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from harmless import preflight
from harmless.errors import Finding, raise_refusals
from harmless.inventory import Inventory, Switch, Trunk, port_index
from harmless.qos.model import PortQos
from harmless.switch_drivers import devdiff
from harmless.switch_drivers.base import AccessPortChange, Capabilities, DeviceFacts, TrunkChange
from harmless.switch_drivers.eos.render import l2pt_profiles as eos_l2pt_profiles
from harmless.switch_drivers.l2pt import restore_groups


@dataclass(frozen=True)
class PortPlan:
    """One migrated access port.

    Attributes:
        interface: legacy interface name as the device spells it (``FastEthernet0/7``).
        ofport: OpenFlow port number on br-of (= legacy port index unless overridden).
        vid: the port's own VID on the legacy switch (1..4094).
        trunk: the switch port of the trunk that carries this VID.
        vlan_name: VLAN name written on the device.
        qinq: 802.1ad customer port: ``vid`` is the outer S-tag, customer C-tags pass to br-of untouched.
        keep: port features the legacy switch keeps running on the migrated port (inventory ``keep``: ``voice``,
            ``dot1x``, ``port_security``; what that means: :data:`harmless.preflight.KEEP_CONSEQUENCE`).
        qos: ingress policing / egress shaping of the port (inventory ``qos``, or a live ``harmless qos set``), or
            None (docs/qos.md).
        l2pt: the link-local protocols the legacy switch tunnels for this port (inventory ``l2pt`` that the
            device can tunnel; :mod:`harmless.switch_drivers.l2pt`); the translator restores their destination MAC.
    """

    interface: str
    ofport: int
    vid: int
    trunk: str
    vlan_name: str
    qinq: bool = False
    keep: tuple[str, ...] = ()
    qos: PortQos | None = None
    l2pt: tuple[str, ...] = ()


@dataclass(frozen=True)
class TrunkPlan:
    """One trunk: switch port, server interface and OVS interface type/options, and the VIDs it carries.

    ``shared``: the switch port keeps carrying the VLANs it had (inventory ``shared: true``); HARMLESS adds its
    VIDs instead of replacing the allowed list. ``bring_up``: the port is shut down now and the plan brings it up.
    """

    switch_port: str
    server_interface: str
    type: str
    options: tuple[tuple[str, str], ...]
    vids: tuple[int, ...]
    shared: bool = False
    bring_up: bool = False


@dataclass(frozen=True)
class SwitchPlan:
    """Everything HARMLESS will build for one legacy switch.

    ``stag_tpid`` is the TPID of the outer tag of its QinQ ports on the trunks (0x8100 or 0x88a8). ``index`` is the
    switch's 1-based position in the inventory: it numbers the switch's ports on br-otc (:mod:`harmless.otc.flows`),
    so a plan that leaves out a failed switch does not renumber the others (0 = its position in the plan).
    """

    name: str
    bridge: str
    datapath_id: str
    protocols: tuple[str, ...]
    controllers: tuple[str, ...]
    ports: tuple[PortPlan, ...]
    trunks: tuple[TrunkPlan, ...]
    stag_tpid: int = 0x8100
    index: int = 0
    #: Controller.max_backoff / inactivity_probe (ms) and the TLS files ``(private_key, certificate, ca_cert)`` of
    #: ``ssl:`` targets, from ``openflow`` (applied by :mod:`harmless.otc.controllers`)
    max_backoff_ms: int = 1000
    inactivity_probe_ms: int = 5000
    tls: tuple[str, str, str] | None = None
    #: the destination MAC the legacy switch gives tunnelled link-local PDUs on the trunk (Cisco/Junos
    #: 01:00:0c:cd:cd:d0, which br-otc rewrites back and forth), None where they keep their own (Arista)
    l2pt_mac: str | None = None
    #: active/standby servers (docs/high-availability.md), all unset without ``ha``: the heartbeat VLAN both servers'
    #: trunks carry, the BFD interval (ms) and detect multiplier on it, the server this plan is built on and the other
    #: one, the other server's trunk(s) (``trunks`` are this server's own), and whether this server is the switch's
    #: standby (its br-of has no controller; the device carries the VLANs on ``peer_trunks``)
    heartbeat_vid: int | None = None
    heartbeat_ms: int = 100
    heartbeat_mult: int = 3
    server: str | None = None
    peer: str | None = None
    peer_trunks: tuple[TrunkPlan, ...] = ()
    standby: bool = False
    #: what a controller's OFPPC_PORT_DOWN does beyond br-of (inventory ``openflow.port_down``): ``device`` shuts
    #: the legacy port too (the host loses its link), ``server`` blocks it on the server only (:mod:`harmless.portmod`)
    port_down: str = "device"
    #: MAC learning is turned off in the switch's HARMLESS VLANs (inventory ``mac_learning: off`` on a device that
    #: can), so frames a controller sends back out of their in-port reach the hosts behind it (docs/transparency.md)
    mac_learning_off: bool = False

    @property
    def has_qinq(self) -> bool:
        return any(p.qinq for p in self.ports)

    @property
    def live_controllers(self) -> tuple[str, ...]:
        """The controller targets br-of connects to now: none on a standby server (docs/high-availability.md)."""
        return () if self.standby else self.controllers

    def access_changes(self) -> list[AccessPortChange]:
        return [AccessPortChange(p.interface, p.vid, p.vlan_name, p.qinq, p.l2pt, no_learning=self.mac_learning_off)
                for p in self.ports]

    def trunk_changes(self) -> list[TrunkChange]:
        """The trunks' config on the device for this plan (MAC learning off on them with ``mac_learning_off``).

        Without ``ha`` each trunk carries its ``vids``. With ``ha`` the forwarding server's trunk (this server's, or
        the peer's when ``standby``) carries every port VID and the heartbeat VID (named
        :func:`heartbeat_vlan_name`, so it is HARMLESS's on the device), the other one only the heartbeat VID, and the
        trunk that carries no port VID comes first: a device that applies a candidate line by line
        (IOS) takes the VLANs off one trunk before it puts them on the other, so two trunks never carry them at once.
        """
        nl = self.mac_learning_off
        if self.heartbeat_vid is None:
            return [TrunkChange(t.switch_port, t.vids, self.stag_tpid, shared=t.shared, bring_up=t.bring_up,
                                no_learning=nl) for t in self.trunks]
        hb, names = self.heartbeat_vid, ((self.heartbeat_vid, heartbeat_vlan_name(self.name)),)
        idle, carrying = (self.trunks, self.peer_trunks) if self.standby else (self.peer_trunks, self.trunks)
        return [*[TrunkChange(t.switch_port, (hb,), self.stag_tpid, shared=t.shared, bring_up=t.bring_up,
                              names=names, no_learning=nl) for t in idle],
                *[TrunkChange(t.switch_port, tuple(sorted({*t.vids, hb})), self.stag_tpid, shared=t.shared,
                              bring_up=t.bring_up, names=names, no_learning=nl) for t in carrying]]


@dataclass(frozen=True)
class Plan:
    """The whole plan: one :class:`SwitchPlan` per inventory switch, in inventory order."""

    switches: tuple[SwitchPlan, ...]

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @staticmethod
    def from_dict(d: dict) -> "Plan":
        def trunks(rows: list[dict]) -> tuple[TrunkPlan, ...]:
            return tuple(TrunkPlan(t["switch_port"], t["server_interface"], t["type"],
                                   tuple(tuple(o) for o in t["options"]), tuple(t["vids"]),
                                   t.get("shared", False), t.get("bring_up", False)) for t in rows)

        sws = []
        for s in d["switches"]:
            sws.append(SwitchPlan(
                name=s["name"], bridge=s["bridge"], datapath_id=s["datapath_id"], protocols=tuple(s["protocols"]),
                controllers=tuple(s["controllers"]),
                ports=tuple(PortPlan(**{**p, "keep": tuple(p.get("keep", ())), "l2pt": tuple(p.get("l2pt", ())),
                                        "qos": PortQos.from_dict(p.get("qos"))}) for p in s["ports"]),
                trunks=trunks(s["trunks"]),
                stag_tpid=s.get("stag_tpid", 0x8100), index=s.get("index", 0),
                max_backoff_ms=s.get("max_backoff_ms", 1000), inactivity_probe_ms=s.get("inactivity_probe_ms", 5000),
                tls=tuple(s["tls"]) if s.get("tls") else None, l2pt_mac=s.get("l2pt_mac"),
                heartbeat_vid=s.get("heartbeat_vid"), heartbeat_ms=s.get("heartbeat_ms", 100),
                heartbeat_mult=s.get("heartbeat_mult", 3), server=s.get("server"), peer=s.get("peer"),
                peer_trunks=trunks(s.get("peer_trunks", [])), standby=s.get("standby", False),
                port_down=s.get("port_down", "device"), mac_learning_off=s.get("mac_learning_off", False)))
        return Plan(tuple(sws))

    def switch(self, name: str) -> SwitchPlan:
        return next(s for s in self.switches if s.name == name)

    def numbered(self) -> list[tuple[int, SwitchPlan]]:
        """``[(br-otc switch number, SwitchPlan)]``: ``index`` when set, else the 1-based position in the plan."""
        return [(sp.index or i, sp) for i, sp in enumerate(self.switches, start=1)]

    def only(self, names: set[str] | list[str]) -> "Plan":
        """The plan restricted to the named switches (order and br-otc numbering kept)."""
        return Plan(tuple(sp for sp in self.switches if sp.name in names))


def heartbeat_vlan_name(switch: str) -> str:
    """The name of the heartbeat VLAN of an active/standby pair on the device (HARMLESS's own, like the ports')."""
    return f"harmless-{switch}-hb"


def vlan_name(switch: str, ofport: int) -> str:
    """The VLAN name HARMLESS writes on the device for a port (also how it recognises its own VLANs)."""
    return f"harmless-{switch}-p{ofport}"


def _trunk_options(t: Trunk) -> tuple[tuple[str, str], ...]:
    if t.type == "afxdp":
        return (("xdp-mode", "generic"),)
    if t.type == "dpdk":
        return (("dpdk-devargs", t.devargs),)
    if t.type == "dpdkvhostuserclient":
        return (("vhost-server-path", t.vhost_server_path),)
    return ()


def capability_findings(sw: Switch, caps: Capabilities, where: str) -> tuple[int, list[Finding]]:
    """What the device/driver cannot do (refusals), and the S-tag TPID to use.

    Args:
        sw: the validated inventory entry.
        caps: what the driver declares for this device (:class:`Capabilities`).
        where: ``"<file>: switches[i]"`` for error messages.

    Returns:
        ``(tpid, findings)``: the TPID of QinQ ports' outer tag on the trunks (``sw.stag_tpid``, else the device's
        first supported one, else 0x8100 when there is no QinQ port), and a refusal for QinQ ports on a device
        without 802.1ad support or an S-tag TPID the device cannot emit.
    """
    qinq = [j for j, p in enumerate(sw.access_ports) if p.qinq]
    out = []
    if qinq and not caps.qinq:
        ap = sw.access_ports[qinq[0]]
        out.append(Finding(severity="refusal", kind="qinq-unsupported", where=f"{where}.access_ports[{qinq[0]}].qinq",
                           problem=f"driver {sw.driver} cannot make {ap.interface} a QinQ (802.1ad dot1q-tunnel) port "
                           f"on {sw.name}", fix="drop qinq for this port, or migrate it on a switch whose driver "
                           "supports QinQ; nothing was changed", switch=sw.name, port=ap.interface))
    if sw.stag_tpid is not None:
        if qinq and sw.stag_tpid not in caps.stag_tpids:
            ok = ", ".join(f"{t:#06x}" for t in caps.stag_tpids) or "none"
            out.append(Finding(severity="refusal", kind="stag-tpid", where=f"{where}.stag_tpid", switch=sw.name,
                               problem=f"{sw.name} ({sw.driver}) cannot put TPID {sw.stag_tpid:#06x} on the outer "
                               f"tag (it can: {ok})", fix="use a TPID the device supports or drop stag_tpid"))
        return sw.stag_tpid, out
    return (caps.stag_tpids[0] if qinq and caps.stag_tpids else 0x8100), out


def check_capabilities(sw: Switch, caps: Capabilities, where: str) -> int:
    """The S-tag TPID to use (:func:`capability_findings`). Raises Refused (an InputError) on its refusals."""
    tpid, findings = capability_findings(sw, caps, where)
    raise_refusals(findings)
    return tpid


def _refusal(kind: str, where: str, sw: Switch, port: str | None, problem: str, fix: str) -> Finding:
    return Finding(severity="refusal", kind=kind, where=where, problem=problem, fix=fix, switch=sw.name, port=port)


def _spellings(sw: Switch, facts: DeviceFacts, where: str) -> tuple[dict[str, str], list[Finding]]:
    """Every trunk and access port of ``sw`` -> its name as the device spells it (inventory names match the device's
    canonically, ``Gi0/1`` = ``GigabitEthernet0/1``; without an interface list, the inventory's spelling), and the
    refusals: a port the device does not have (left out of the mapping); an access port without an OpenFlow port
    number or sharing one."""
    dev: dict[str, str] = {}
    model = tuple(p.interface for p in facts.port_model.ports) if facts.port_model is not None else ()
    # the device's interfaces, and those its running config has (a Port-channel some getters leave out)
    for name in (*facts.interfaces, *(m for m in model if facts.interfaces)):
        # Junos lists ge-0/0/7 and its unit ge-0/0/7.0: the port's own name wins
        c = sw.canonical(name)
        if c not in dev or name == c:
            dev[c] = name
    spell, out = {}, []
    for j, t in enumerate(sw.trunks):
        if dev and sw.canonical(t.switch_port) not in dev:
            out.append(_refusal("unknown-interface", f"{where}.trunks[{j}].switch_port", sw, t.switch_port,
                                f"{sw.name} has no interface {t.switch_port}",
                                "use an interface name exactly as the device shows it"))
        spell[t.switch_port] = dev.get(sw.canonical(t.switch_port), t.switch_port)
    ofports: dict[int, str] = {}
    for j, p in enumerate(sw.access_ports):
        if dev and sw.canonical(p.interface) not in dev:
            out.append(_refusal("unknown-interface", f"{where}.access_ports[{j}]", sw, p.interface,
                                f"{sw.name} has no interface {p.interface}",
                                "use an interface name exactly as the device shows it"))
            continue
        n = port_index(p.interface, sw.driver) if p.ofport is None else p.ofport
        if n is None or n < 1:
            out.append(_refusal("ofport", f"{where}.access_ports[{j}].ofport", sw, p.interface,
                                f"cannot derive a port number from {p.interface}", "set ofport explicitly"))
            continue
        spell[p.interface] = dev.get(sw.canonical(p.interface), p.interface)
        if n in ofports:
            out.append(_refusal("ofport", f"{where}.access_ports[{j}].ofport", sw, p.interface,
                                f"{p.interface} and {ofports[n]} would both be OpenFlow port {n}",
                                "set ofport explicitly on one of them"))
        ofports[n] = p.interface
    return spell, out


def _explicit_vids(sw: Switch, facts: DeviceFacts, ports: list, foreign: set[int], where: str
                   ) -> tuple[dict[str, int], list[Finding]]:
    """Pass 1 of the VID choice: the inventory's own ``vid``s (interface -> VID), and a refusal for each the device
    uses for something else."""
    chosen: dict[str, int] = {}
    out = []
    for p in ports:
        if p.vid is not None:
            j = sw.access_ports.index(p)
            if p.vid in foreign:
                out.append(_refusal("vid-in-use", f"{where}.access_ports[{j}].vid", sw, p.interface,
                                    f"VID {p.vid} is already used on {sw.name} "
                                    f"(VLAN {facts.vlans.get(p.vid, 'referenced')!r})",
                                    "pick a free VID or drop vid to let the planner choose"))
            chosen[p.interface] = p.vid
    return chosen, out


def _allocate_vids(sw: Switch, facts: DeviceFacts, ports: list, stateless: bool, foreign: set[int],
                   chosen: dict[str, int], where: str) -> list[Finding]:
    """Pass 2 of the VID choice, for ports without one in ``chosen`` (updated): when ``stateless`` (no previous plan)
    the VLAN already named for the port, else ``range_start + ofport``, else the lowest free VID of the range.

    Returns:
        A refusal when no free VID is left in ``vlan_range`` (the ports left get none), else [].
    """
    lo, hi = sw.vid_range()
    by_name = {name: vid for vid, name in facts.vlans.items()}
    taken = set(chosen.values())
    for p in ports:
        if p.interface in chosen:
            continue
        n = sw.ofport_of(p)
        candidates = []
        if stateless and vlan_name(sw.name, n) in by_name:
            candidates.append(by_name[vlan_name(sw.name, n)])
        candidates.append(lo + n)
        vid = next((v for v in candidates if lo <= v <= hi and v not in foreign and v not in taken), None)
        if vid is None:
            vid = next((v for v in range(lo, hi + 1) if v not in foreign and v not in taken), None)
        if vid is None:
            return [_refusal("vid-range-exhausted", f"{where}.vlan_range", sw, None,
                             f"no free VID left in {sw.vlan_range} on {sw.name} for {len(ports) - len(chosen)} "
                             "more ports", "widen vlan_range")]
        chosen[p.interface] = vid
        taken.add(vid)
    return []


def _ours(facts: DeviceFacts, previous: SwitchPlan | None) -> tuple[set[int], set[int]]:
    """``(VIDs of the previous plan, VLANs on the device named harmless-*)``: VIDs HARMLESS owns on the switch."""
    return ({p.vid for p in previous.ports} if previous else set(),
            {v for v, n in facts.vlans.items() if str(n).startswith("harmless-")})


def _choose_vids(sw: Switch, facts: DeviceFacts, previous: SwitchPlan | None, ports: list,
                 where: str) -> tuple[dict[str, int], list[Finding]]:
    """Access port interface (inventory spelling) -> VID; never a VID the device uses for something else (VIDs of
    the previous plan or named ``harmless-...`` are ours); with the refusals of the choice (see
    :func:`plan_switch`)."""
    ours, named_ours = _ours(facts, previous)
    foreign = {v for v, name in facts.vlans.items() if v not in ours and not str(name).startswith("harmless-")}
    foreign |= preflight.model_vlans(facts) - ours - named_ours
    chosen, out = _explicit_vids(sw, facts, ports, foreign, where)
    out += _allocate_vids(sw, facts, ports, previous is None, foreign, chosen, where)
    out += preflight.chosen_findings(sw, facts, chosen, ours | named_ours, where)
    return chosen, out


#: what tunnelling a protocol costs on the legacy switch's port (plan's notes l2pt-stp, l2pt-lacp; docs/transparency.md)
L2PT_CONSEQUENCE = {
    "stp": "the legacy switch no longer receives BPDUs from the host on {ports}: a loop through that host is not "
           "blocked by the legacy switch's spanning tree (the controller's pipeline must handle it)",
    "lacp": "LACP/PAgP/UDLD are tunnelled point to point on {ports}: the host bundles with whatever the controller "
            "answers, and a tunnel that reaches more than one port can break the bundle (Cisco: \"only intended to "
            "emulate a point-to-point topology\")",
}


def _l2pt_where(sw: Switch, aps: list, where: str) -> str:
    """The inventory field that asks ``aps`` (access ports) to tunnel: one port's own ``l2pt``, else the switch's
    ``l2pt`` when none of them sets its own, else ``access_ports``."""
    if len(aps) == 1 and aps[0].l2pt is not None:
        return f"{where}.access_ports[{sw.access_ports.index(aps[0])}].l2pt"
    return f"{where}.l2pt" if all(p.l2pt is None for p in aps) else f"{where}.access_ports"


def _l2pt_findings(sw: Switch, wanted: dict, caps: Capabilities, model: str, where: str) -> list[Finding]:
    """``plan``'s findings on link-local protocols (``wanted``: access port as the device spells it -> ``(inventory
    AccessPort, protocols it asks for)``): the operator's caveat and an unknown platform (warnings), what the device
    cannot tunnel (one warning per set of protocols, naming all its ports), and what tunnelling costs (one note per
    cost, naming all its ports; :data:`L2PT_CONSEQUENCE`)."""
    def finding(severity: str, kind: str, aps: list, problem: str) -> Finding:
        return Finding(severity=severity, kind=kind, where=_l2pt_where(sw, aps, where), problem=problem,
                       switch=sw.name, port=aps[0].interface if len(aps) == 1 else None)
    asking = [ap for ap, w in wanted.values() if w]
    out, platform = [], model or sw.driver
    if caps.l2pt_caveat and any(x for _, w in wanted.values() for x in w if caps.l2pt is None or x in caps.l2pt):
        out.append(finding("warning", "l2pt-caveat", asking, f"{sw.name}: {caps.l2pt_caveat}"))
    if caps.l2pt is None and asking:
        out.append(finding("warning", "l2pt-capability-unknown", asking, f"{sw.name}: cannot tell which link-local "
                           f"protocols {platform} tunnels: the device rejects at commit any it cannot (up then "
                           "changes nothing)"))
    missing: dict[tuple[str, ...], list[str]] = {}          # protocols the device cannot tunnel -> ports
    for iface, (_, want) in wanted.items():
        lost = tuple(x for x in want if caps.l2pt is not None and x not in caps.l2pt)
        if lost:
            missing.setdefault(lost, []).append(iface)
    for lost, ifaces in missing.items():
        out.append(finding("warning", "l2pt-unsupported", [wanted[i][0] for i in ifaces],
                           f"{sw.name} {', '.join(ifaces)}: {', '.join(lost)} will not be transparent: {platform} "
                           f"cannot tunnel {'it' if len(lost) == 1 else 'them'}"
                           + (f" ({caps.l2pt_source})" if caps.l2pt_source else "")))
    for key, protos in (("stp", ("stp",)), ("lacp", ("lacp", "pagp", "udld"))):
        ifaces = [i for i, (_, w) in wanted.items() if set(w) & set(protos) and (caps.l2pt is None or
                                                                                 set(protos) & set(caps.l2pt))]
        if ifaces:
            out.append(finding("note", f"l2pt-{key}", [wanted[i][0] for i in ifaces],
                               f"{sw.name}: " + L2PT_CONSEQUENCE[key].format(ports=", ".join(ifaces))))
    return out


def _dropped_tunnels(sw: Switch, ports: list, spell: dict[str, str], out: dict[str, tuple[str, ...]],
                     facts: DeviceFacts, caps: Capabilities, where: str) -> list[Finding]:
    """A warning for each port that tunnels protocols now (port model ``l2pt``) that the migration does not keep,
    with the inventory text that keeps them (none when the translator could not tell them apart from what the port
    tunnels: :func:`~harmless.switch_drivers.l2pt.restore_groups`)."""
    if facts.port_model is None:
        return []
    found = []
    for p in ports:
        now = facts.port_model.port(spell[p.interface])
        lost = [x for x in (now.l2pt if now else ()) if x not in out[p.interface]]
        if not lost:
            continue
        keep = [*out[p.interface], *lost]
        form, fix = preflight.port_form(p, l2pt=keep), ""
        try:
            if caps.l2pt_mac is not None:
                restore_groups(tuple(keep))
            fix = f"to keep it, write the port as {form}"
        except ValueError as e:
            form, fix = None, f"it cannot keep both ({e}): leave it, or tunnel {', '.join(lost)} instead"
        found.append(Finding(severity="warning", kind="l2pt-dropped", where=_l2pt_where(sw, [p], where),
                             problem=f"{sw.name} {spell[p.interface]} tunnels {', '.join(lost)} now; migrated it will "
                             "not (HARMLESS sets exactly the port's l2pt)", fix=fix, inventory=form, switch=sw.name,
                             port=p.interface))
    return found


def _l2pt(sw: Switch, ports: list, spell: dict[str, str], caps: Capabilities, facts: DeviceFacts,
          where: str) -> tuple[dict[str, tuple[str, ...]], list[Finding]]:
    """Which link-local protocols the device tunnels per access port (inventory spelling -> names), with the
    findings: the inventory's ``l2pt`` that the device can tunnel is planned (all of it when the driver cannot
    tell); what it cannot, what tunnelling costs and tunnels the port has now that the migration drops are warnings
    and notes (:func:`_l2pt_findings`, :func:`_dropped_tunnels`); a port whose tunnelled PDUs the translator could
    not tell apart (``stp`` with a Cisco LLC protocol on a device that rewrites their destination,
    :func:`~harmless.switch_drivers.l2pt.restore_groups`) is a refusal (``l2pt-ambiguous``), one per port.
    """
    out, wanted, found = {}, {}, []
    for p in ports:
        want = sw.l2pt_of(p)
        wanted[spell[p.interface]] = (p, want)
        out[p.interface] = tuple(x for x in want if caps.l2pt is None or x in caps.l2pt)
        if caps.l2pt_mac is None:
            continue
        try:
            restore_groups(out[p.interface])
        except ValueError as e:
            found.append(_refusal("l2pt-ambiguous", _l2pt_where(sw, [p], where), sw, p.interface,
                                  f"{sw.name} {p.interface}: {e}",
                                  "tunnel either stp or the Cisco protocols (cdp, vtp, pagp, udld) on one port"))
    return out, found + _l2pt_findings(sw, wanted, caps, facts.model, where) + _dropped_tunnels(
        sw, ports, spell, out, facts, caps, where)


#: what an L2 protocol forwarding profile on a shared EOS trunk does to the operator's VLANs on it
EOS_TRUNK_PROFILE = ("EOS applies an interface's one L2 protocol forwarding profile to every VLAN it carries: the "
                     "tagged {protocols} PDUs of the operator's VLANs on {name} are then bridged in their VLAN "
                     "instead of trapped to the switch's CPU (EOS User Manual, \"Layer 2 Protocol Forwarding\": "
                     "LLDP, LACP and STP are trapped by default)")


def _eos_trunk_profiles(sw: Switch, facts: DeviceFacts, ports: list, spell: dict[str, str],
                        port_plans: tuple[PortPlan, ...], trunks: tuple[TrunkPlan, ...], where: str
                        ) -> list[Finding]:
    """EOS: a ``shared`` trunk (an uplink carrying the operator's VLANs) whose ports forward link-local protocols
    gets HARMLESS's tagged profile (``harmless-tagged-<protocols>``, the one the EOS render puts there): refused when
    the trunk has a profile of the operator's (it would be replaced: an interface has one), with the inventory text
    that tunnels nothing through it; a warning naming what changes for its other VLANs otherwise
    (:data:`EOS_TRUNK_PROFILE`). IOS and Junos never configure tunnelling on the trunk. Pure."""
    if sw.driver != "eos" or facts.port_model is None:
        return []
    _p, _a, profile_of = eos_l2pt_profiles(
        [AccessPortChange(pp.interface, pp.vid, pp.vlan_name, pp.qinq, pp.l2pt) for pp in port_plans],
        [TrunkChange(t.switch_port, t.vids) for t in trunks])
    inv = {spell[p.interface]: p for p in ports}
    out = []
    for t in trunks:
        profile = profile_of.get(t.switch_port)
        if not t.shared or profile is None:
            continue
        aps = [inv[pp.interface] for pp in port_plans if pp.trunk == t.switch_port and pp.l2pt]
        protocols = profile.removeprefix("harmless-tagged-").replace("-", ", ")
        name, now = f"{sw.name} {t.switch_port}", facts.port_model.port(t.switch_port)
        consequence = EOS_TRUNK_PROFILE.format(protocols=protocols, name=t.switch_port)
        theirs = now.l2pt_profile if now is not None else None
        if theirs and not theirs.startswith("harmless-"):
            forms = "; ".join(preflight.port_form(ap, l2pt=[]) for ap in aps)
            out.append(Finding(severity="refusal", kind="l2pt-trunk-profile", where=_l2pt_where(sw, aps, where),
                               problem=f"{name} is a shared trunk with the L2 protocol forwarding profile {theirs}; "
                               f"tunnelling {protocols} for its ports would replace it with {profile} (an interface "
                               f"has one profile), and {consequence}",
                               fix=f"tunnel nothing through {t.switch_port}: write its ports as {forms}; or cable "
                               "the server to a free port and name it as the trunk (not shared)", inventory=forms,
                               switch=sw.name, port=t.switch_port))
        else:
            out.append(Finding(severity="warning", kind="l2pt-shared-trunk", where=_l2pt_where(sw, aps, where),
                               problem=f"{name} is a shared trunk and gets the L2 protocol forwarding profile "
                               f"{profile} for its ports' tunnelled {protocols}: {consequence}; down removes it",
                               fix="to leave the uplink's other VLANs alone, cable the server to a free port and "
                               "name it as the trunk (not shared)", switch=sw.name, port=t.switch_port))
    return out


def _port_plans(sw: Switch, ports: list, spell: dict[str, str], chosen: dict[str, int],
                l2pt: dict[str, tuple[str, ...]] | None = None) -> tuple[PortPlan, ...]:
    """The plan of each access port (in ``ports`` order): device spelling, OpenFlow port, VID, trunk, VLAN name,
    tunnelled link-local protocols (``l2pt``: inventory spelling -> names)."""
    trunk_of = {sw.canonical(t.switch_port): spell[t.switch_port] for t in sw.trunks}
    default_trunk = spell[sw.trunks[0].switch_port]
    l2pt = l2pt or {}
    return tuple(
        PortPlan(spell[p.interface], n, chosen[p.interface],
                 trunk_of[sw.canonical(p.trunk)] if p.trunk else default_trunk, vlan_name(sw.name, n), p.qinq,
                 tuple(p.keep), PortQos.from_settings(p.qos), l2pt.get(p.interface, ()))
        for p in ports for n in [sw.ofport_of(p)])


def _trunk_plans(sw: Switch, facts: DeviceFacts, spell: dict[str, str], port_plans: tuple[PortPlan, ...]
                 ) -> tuple[TrunkPlan, ...]:
    """Each trunk's plan: its VIDs, ``shared`` from the inventory where the port is a trunk (:func:`preflight.shares`:
    a port that is not one has nothing to keep and carries exactly its VIDs), ``bring_up`` when the port is shut.
    ``facts`` has the ports HARMLESS owns as it found them (:func:`harmless.ownership.found_model`)."""
    model = facts.port_model
    ports = {p.interface: p for p in model.ports} if model is not None else {}
    shut = {p.interface for p in ports.values() if p.shutdown}
    if preflight.is_procurve(sw):
        shut = set()                    # refused by preflight: ProCurve cannot bring a trunk up and back down
    return tuple(
        TrunkPlan(spell[t.switch_port], t.server_interface, t.type, _trunk_options(t),
                  tuple(sorted(pp.vid for pp in port_plans if pp.trunk == spell[t.switch_port])),
                  shared=t.shared and (model is None or preflight.shares(ports.get(spell[t.switch_port]))),
                  bring_up=spell[t.switch_port] in shut)
        for t in sw.trunks)


def _dedup(findings: list[Finding]) -> list[Finding]:
    """Findings without repeats of one rule at one place (the planner and preflight both see an unknown port)."""
    seen, out = set(), []
    for f in findings:
        if (f.kind, f.where) not in seen:
            seen.add((f.kind, f.where))
            out.append(f)
    return out


def switch_plan_findings(sw: Switch, facts: DeviceFacts, previous: SwitchPlan | None, where: str,
                         caps: Capabilities | None = None, index: int = 0
                         ) -> tuple[SwitchPlan | None, list[Finding]]:
    """Plan one switch and collect every finding on the way (pure): capabilities, preflight of every port and
    trunk, spellings and OpenFlow port numbers, the link-local protocols each port tunnels (:func:`_l2pt`), the VID
    choice and its guards, the trunks' load.

    Returns:
        ``(plan, findings)``; the plan is None when any finding is a refusal. Ports that cannot be planned at all
        (unknown interface, no OpenFlow port number) are left out of the VID choice, so the others still get
        their VID checks.
    """
    caps = caps or Capabilities()
    tpid, findings = capability_findings(sw, caps, where)
    ours = frozenset(set().union(*_ours(facts, previous)))
    findings += preflight.facts_findings(sw, facts, where, ours)
    spell, more = _spellings(sw, facts, where)
    findings += more
    ports = sorted((p for p in sw.access_ports if p.interface in spell), key=sw.ofport_of)
    l2pt, more = _l2pt(sw, ports, spell, caps, facts, where)
    findings += more
    chosen, more = _choose_vids(sw, facts, previous, ports, where)
    findings += more
    findings = _dedup(findings)
    if any(f.severity == "refusal" for f in findings):
        return None, findings
    port_plans = _port_plans(sw, ports, spell, chosen, l2pt)
    trunks = _trunk_plans(sw, facts, spell, port_plans)
    findings += _eos_trunk_profiles(sw, facts, ports, spell, port_plans, trunks, where)
    if any(f.severity == "refusal" for f in findings):
        return None, findings
    if facts.port_model is not None:
        ports_of = {t.switch_port: [pp.interface for pp in port_plans if pp.trunk == spell[t.switch_port]]
                    for t in sw.trunks}
        findings += preflight.load_findings(sw, facts.port_model, preflight.session_of(sw, facts, where), ports_of)
    of = sw.openflow
    tls = (of.tls.private_key, of.tls.certificate, of.tls.ca_cert) if of.tls else None
    learning_off, more = mac_learning_plan(sw, caps or Capabilities(), facts.model, where)
    port_down, down = port_down_plan(sw, caps or Capabilities(), facts.model, where)
    return SwitchPlan(sw.name, sw.bridge, sw.dpid, tuple(of.versions), tuple(of.controllers),
                      port_plans, trunks, tpid, index, max_backoff_ms=of.max_backoff_ms,
                      inactivity_probe_ms=of.inactivity_probe_ms, tls=tls,
                      l2pt_mac=caps.l2pt_mac if any(pp.l2pt for pp in port_plans) else None, port_down=port_down,
                      mac_learning_off=learning_off), findings + more + down


def mac_learning_plan(sw: Switch, caps: Capabilities, model: str = "", where: str = "<inventory>"
                      ) -> tuple[bool, list[Finding]]:
    """Whether HARMLESS turns MAC learning off in ``sw``'s VLANs, and a warning when it cannot. Pure.

    A frame that a controller sends back out of its in-port returns on the trunk in the port's own VLAN; a legacy
    switch that learns MACs learns the sender on the trunk and from then on filters what it would have to send back
    out of the trunk ("If the destination address is on the port that sent the packet, the packet is filtered",
    Cisco Catalyst 2960 Software Configuration Guide, "Building the Address Table"). With learning off it floods
    within the VLAN, whose only other member is the access port (docs/transparency.md, "Hairpin").
    """
    if sw.mac_learning != "off":
        return False, []
    said = {"where": f"{where}.mac_learning", "switch": sw.name}
    if caps.mac_learning_off is None:           # not known offline: the online plan probes the device and tells
        return False, [Finding(
            severity="note", kind="mac-learning-unknown", **said,
            problem=f"whether {sw.name} can turn MAC learning off in HARMLESS's VLANs is not known from a saved "
                    "config; plan and up online probe the device and add the line where it can (so their diff may "
                    "have one line more than this one)",
            fix="plan online for the exact diff, or set mac_learning: on to leave learning as it is")]
    shared = [t.switch_port for t in sw.trunks if t.shared]
    if caps.mac_learning_off and not (caps.mac_learning_scope == "port" and shared):
        return True, []
    why = (f"{model or sw.driver} turns it off per port only and trunk {shared[0]} is shared (its other VLANs "
           "would stop learning too)" if caps.mac_learning_off else
           f"{model or sw.driver} cannot turn it off per VLAN or port"
           + (f" ({caps.mac_learning_source})" if caps.mac_learning_source else ""))
    return False, [Finding(
        severity="warning", kind="mac-learning-on", **said,
        problem=f"MAC learning stays on in {sw.name}'s HARMLESS VLANs: {why}, so a frame the controller sends back "
                "out of its in-port (hairpin) does not reach the other hosts behind that port once the switch has "
                "learned the sender on the trunk",
        fix="set mac_learning: on to acknowledge it, or use a platform that can (docs/transparency.md)")]


def port_down_plan(sw: Switch, caps: Capabilities, model: str = "", where: str = "<inventory>"
                   ) -> tuple[str, list[Finding]]:
    """What a controller's OFPPC_PORT_DOWN does on ``sw`` (``device`` or ``server``) and a note when the inventory
    asks for ``device`` but the driver cannot shut a port so that ``down`` restores it. Pure."""
    want = sw.openflow.port_down
    if want == "device" and not caps.port_admin:
        return "server", [Finding(
            severity="note", kind="port-down-server-only", where=f"{where}.openflow.port_down", switch=sw.name,
            problem=f"a controller's port-down (OFPPC_PORT_DOWN) blocks {sw.name}'s ports on the server only: the "
                    f"{model or sw.driver} driver cannot shut a legacy port and give it back exactly (the hosts keep "
                    "their link)")]
    return want, []


def plan_switch(sw: Switch, facts: DeviceFacts, previous: SwitchPlan | None, where: str,
                caps: Capabilities | None = None, index: int = 0) -> SwitchPlan:
    """Plan one switch. Pure.

    Args:
        sw: the validated inventory entry.
        facts: what the device reports now (interfaces and configured VLANs).
        previous: this switch's plan from the last ``up`` (its VIDs are HARMLESS's, not the operator's), or None.
        where: ``"<file>: switches[i]"`` for error messages.
        caps: the driver's capabilities for this device; QinQ ports are refused without them (see
            :func:`capability_findings`), and only the link-local protocols it can tunnel are planned (the rest
            is a warning, :func:`switch_plan_findings`).
        index: the switch's 1-based position in the inventory (br-otc numbering).

    Raises:
        Refused: (an InputError) every refusal of :func:`switch_plan_findings`: unknown interface, OpenFlow port
            collision, VID already in use, VID range exhausted, a feature the device cannot do, tunnelled
            protocols the translator could not tell apart, preflight.
    """
    sp, findings = switch_plan_findings(sw, facts, previous, where, caps, index)
    raise_refusals(findings)
    return sp


def plan_with_findings(inv: Inventory, facts: dict[str, DeviceFacts], previous: Plan | None = None,
                       src: str = "<inventory>", caps: dict[str, Capabilities] | None = None
                       ) -> tuple[Plan, list[Finding]]:
    """Plan every switch of the inventory that has facts and collect every finding of every switch (pure).

    ``facts`` maps switch name -> DeviceFacts (a switch without facts, e.g. unreachable, is left out of the plan;
    the others keep their br-otc numbers), ``caps`` switch name -> the driver's Capabilities.

    Returns:
        ``(plan, findings)``: the warnings and notes of every switch, in inventory order.

    Raises:
        Refused: (an InputError) with every finding of every switch when any is a refusal.
    """
    prev = {s.name: s for s in previous.switches} if previous else {}
    servers: dict[str, str] = {}
    findings: list[Finding] = []
    for i, sw in enumerate(inv.switches):
        for j, t in enumerate(sw.trunks):
            key = f"{t.server}/{t.server_interface}" if t.server else t.server_interface    # ha: per server
            if key in servers:
                findings.append(_refusal("server-interface-reused",
                                         f"{src}: switches[{i}].trunks[{j}].server_interface", sw, t.switch_port,
                                         f"{t.server_interface} is already the trunk of {servers[key]}",
                                         "give each trunk its own server interface"))
            servers[key] = f"{sw.name} {t.switch_port}"
    caps = caps or {}
    plans = []
    for i, sw in enumerate(inv.switches):
        if sw.name in facts:
            sp, more = switch_plan_findings(sw, facts[sw.name], prev.get(sw.name), f"{src}: switches[{i}]",
                                            caps.get(sw.name), index=i + 1)
            plans.append(sp)
            findings += more
    raise_refusals(findings)
    return Plan(tuple(plans)), findings


def make_plan(inv: Inventory, facts: dict[str, DeviceFacts], previous: Plan | None = None,
              src: str = "<inventory>", caps: dict[str, Capabilities] | None = None) -> Plan:
    """Plan every switch of the inventory that has facts (pure): :func:`plan_with_findings` without the warnings.

    Raises:
        Refused: (an InputError) every refusal of every switch.
    """
    return plan_with_findings(inv, facts, previous, src, caps)[0]


def device_change(sw: Switch, running: str, candidate: str, where: str) -> tuple[devdiff.DeviceDiff | None,
                                                                               list[Finding]]:
    """The full device diff of merging ``candidate`` into ``running`` on switch ``sw`` (pure; the same online and
    offline: :func:`harmless.switch_drivers.devdiff.merge_diff` in the switch's syntax).

    Returns:
        ``(diff, [])``, or ``(None, [warning])`` when the configuration cannot be read for a diff.
    """
    try:
        return devdiff.merge_diff(running, candidate, devdiff.syntax_of(sw.driver, sw.optional_args)), []
    except (KeyError, ValueError) as e:
        return None, [Finding(severity="warning", kind="diff-unavailable", where=where, switch=sw.name,
                              problem=f"no full diff for {sw.name}: {e}; the device's own diff is shown instead")]
