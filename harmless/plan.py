"""The planner: inventory + device facts -> port map (pure; same input, same plan).

For every migrated access port the plan fixes:
  * its OpenFlow port number on br-of: the inventory's ``ofport`` or the number the name gives under the numbering
    scheme (``docs/ofport-numbering.md``: ``FastEthernet0/7`` -> 7, stack member 2's ``Gi2/0/7`` -> 2007), so that
    br-of port 7 *is* legacy port 7 (HARMLESS paper, Sec. II: data-plane transparency);
  * its interface name as the device spells it (inventory names are matched canonically, ``Gi0/7`` =
    ``GigabitEthernet0/7``);
  * its VID: the inventory's ``vid``, else the VID it had in the previous plan (stable across runs), else a VLAN on
    the device that already carries this port's HARMLESS name (state lost but device configured), else
    ``range_start + ofport`` when free (readable: port 7 -> VID 107 with range 100-199), else the lowest free VID.
    VIDs configured on the device for other purposes are never used.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from harmless import preflight
from harmless.errors import InputError
from harmless.inventory import Inventory, Switch, Trunk, port_index
from harmless.qos.model import PortQos
from harmless.switch_drivers.base import AccessPortChange, Capabilities, DeviceFacts, TrunkChange


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
    """

    interface: str
    ofport: int
    vid: int
    trunk: str
    vlan_name: str
    qinq: bool = False
    keep: tuple[str, ...] = ()
    qos: PortQos | None = None


@dataclass(frozen=True)
class TrunkPlan:
    """One trunk: switch port, server interface and OVS interface type/options, and the VIDs it carries."""

    switch_port: str
    server_interface: str
    type: str
    options: tuple[tuple[str, str], ...]
    vids: tuple[int, ...]


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
    #: what a controller's OFPPC_PORT_DOWN does beyond br-of (inventory ``openflow.port_down``): ``device`` shuts
    #: the legacy port too (the host loses its link), ``server`` blocks it on the server only (:mod:`harmless.portmod`)
    port_down: str = "device"
    #: MAC learning is turned off in the switch's HARMLESS VLANs (inventory ``mac_learning: off`` on a device that
    #: can), so frames a controller sends back out of their in-port reach the hosts behind it (docs/transparency.md)
    mac_learning_off: bool = False
    #: what ``plan`` has to say about this switch that is not an error (e.g. a transparency it cannot give)
    notes: tuple[str, ...] = ()

    @property
    def has_qinq(self) -> bool:
        return any(p.qinq for p in self.ports)

    def access_changes(self) -> list[AccessPortChange]:
        return [AccessPortChange(p.interface, p.vid, p.vlan_name, p.qinq, no_learning=self.mac_learning_off)
                for p in self.ports]

    def trunk_changes(self) -> list[TrunkChange]:
        return [TrunkChange(t.switch_port, t.vids, self.stag_tpid, no_learning=self.mac_learning_off)
                for t in self.trunks]


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
        sws = []
        for s in d["switches"]:
            sws.append(SwitchPlan(
                name=s["name"], bridge=s["bridge"], datapath_id=s["datapath_id"], protocols=tuple(s["protocols"]),
                controllers=tuple(s["controllers"]),
                ports=tuple(PortPlan(**{**p, "keep": tuple(p.get("keep", ())), "qos": PortQos.from_dict(p.get("qos"))})
                            for p in s["ports"]),
                trunks=tuple(TrunkPlan(t["switch_port"], t["server_interface"], t["type"],
                                       tuple(tuple(o) for o in t["options"]), tuple(t["vids"])) for t in s["trunks"]),
                stag_tpid=s.get("stag_tpid", 0x8100), index=s.get("index", 0),
                max_backoff_ms=s.get("max_backoff_ms", 1000), inactivity_probe_ms=s.get("inactivity_probe_ms", 5000),
                tls=tuple(s["tls"]) if s.get("tls") else None, port_down=s.get("port_down", "device"),
                mac_learning_off=s.get("mac_learning_off", False), notes=tuple(s.get("notes", ()))))
        return Plan(tuple(sws))

    def switch(self, name: str) -> SwitchPlan:
        return next(s for s in self.switches if s.name == name)

    def numbered(self) -> list[tuple[int, SwitchPlan]]:
        """``[(br-otc switch number, SwitchPlan)]``: ``index`` when set, else the 1-based position in the plan."""
        return [(sp.index or i, sp) for i, sp in enumerate(self.switches, start=1)]

    def only(self, names: set[str] | list[str]) -> "Plan":
        """The plan restricted to the named switches (order and br-otc numbering kept)."""
        return Plan(tuple(sp for sp in self.switches if sp.name in names))


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


def check_capabilities(sw: Switch, caps: Capabilities, where: str) -> int:
    """Refuse, before any device is touched, what the device/driver cannot do; return the S-tag TPID to use.

    Args:
        sw: the validated inventory entry.
        caps: what the driver declares for this device (:class:`Capabilities`).
        where: ``"<file>: switches[i]"`` for error messages.

    Returns:
        The TPID of QinQ ports' outer tag on the trunks: ``sw.stag_tpid``, else the device's first supported one,
        else 0x8100 (no QinQ port).

    Raises:
        InputError: a QinQ port on a device without 802.1ad support, or an S-tag TPID the device cannot emit.
    """
    qinq = [j for j, p in enumerate(sw.access_ports) if p.qinq]
    if qinq and not caps.qinq:
        raise InputError(f"{where}.access_ports[{qinq[0]}].qinq",
                         f"driver {sw.driver} cannot make {sw.access_ports[qinq[0]].interface} a QinQ (802.1ad "
                         f"dot1q-tunnel) port on {sw.name}",
                         "drop qinq for this port, or migrate it on a switch whose driver supports QinQ; "
                         "nothing was changed")
    if sw.stag_tpid is not None:
        if qinq and sw.stag_tpid not in caps.stag_tpids:
            ok = ", ".join(f"{t:#06x}" for t in caps.stag_tpids) or "none"
            raise InputError(f"{where}.stag_tpid", f"{sw.name} ({sw.driver}) cannot put TPID {sw.stag_tpid:#06x} "
                             f"on the outer tag (it can: {ok})", "use a TPID the device supports or drop stag_tpid")
        return sw.stag_tpid
    return caps.stag_tpids[0] if qinq and caps.stag_tpids else 0x8100


def _spellings(sw: Switch, facts: DeviceFacts, where: str) -> dict[str, str]:
    """Every trunk and access port of ``sw`` -> its name as the device spells it (inventory names match the device's
    canonically, ``Gi0/1`` = ``GigabitEthernet0/1``; without an interface list, the inventory's spelling).

    Raises:
        InputError: a port the device does not have; an access port without an OpenFlow port number or sharing one.
    """
    dev: dict[str, str] = {}
    for name in facts.interfaces:           # Junos lists ge-0/0/7 and its unit ge-0/0/7.0: the port's own name wins
        c = sw.canonical(name)
        if c not in dev or name == c:
            dev[c] = name
    spell = {}
    for j, t in enumerate(sw.trunks):
        if dev and sw.canonical(t.switch_port) not in dev:
            raise InputError(f"{where}.trunks[{j}].switch_port", f"{sw.name} has no interface {t.switch_port}",
                             "use an interface name exactly as the device shows it")
        spell[t.switch_port] = dev.get(sw.canonical(t.switch_port), t.switch_port)
    ofports: dict[int, str] = {}
    for j, p in enumerate(sw.access_ports):
        if dev and sw.canonical(p.interface) not in dev:
            raise InputError(f"{where}.access_ports[{j}]", f"{sw.name} has no interface {p.interface}",
                             "use an interface name exactly as the device shows it")
        spell[p.interface] = dev.get(sw.canonical(p.interface), p.interface)
        n = port_index(p.interface, sw.driver) if p.ofport is None else p.ofport
        if n is None or n < 1:
            raise InputError(f"{where}.access_ports[{j}].ofport", f"cannot derive a port number from {p.interface}",
                             "set ofport explicitly")
        if n in ofports:
            raise InputError(f"{where}.access_ports[{j}].ofport",
                             f"{p.interface} and {ofports[n]} would both be OpenFlow port {n}",
                             "set ofport explicitly on one of them")
        ofports[n] = p.interface
    return spell


def _explicit_vids(sw: Switch, facts: DeviceFacts, ports: list, foreign: set[int], where: str) -> dict[str, int]:
    """Pass 1 of the VID choice: the inventory's own ``vid``s (interface -> VID), refused when the device uses them
    for something else."""
    chosen: dict[str, int] = {}
    for p in ports:
        if p.vid is not None:
            j = sw.access_ports.index(p)
            if p.vid in foreign:
                raise InputError(f"{where}.access_ports[{j}].vid",
                                 f"VID {p.vid} is already used on {sw.name} "
                                 f"(VLAN {facts.vlans.get(p.vid, 'referenced')!r})",
                                 "pick a free VID or drop vid to let the planner choose")
            chosen[p.interface] = p.vid
    return chosen


def _allocate_vids(sw: Switch, facts: DeviceFacts, ports: list, prev: dict, foreign: set[int],
                   chosen: dict[str, int], where: str) -> None:
    """Pass 2 of the VID choice, for ports without one in ``chosen`` (updated): the previous plan's VID, else the VLAN
    already named for the port, else ``range_start + ofport``, else the lowest free VID of the range.

    Raises:
        InputError: no free VID left in ``vlan_range``.
    """
    lo, hi = sw.vid_range()
    by_name = {name: vid for vid, name in facts.vlans.items()}
    taken = set(chosen.values())
    for p in ports:
        if p.interface in chosen:
            continue
        n = sw.ofport_of(p)
        candidates = []
        if sw.canonical(p.interface) in prev:
            candidates.append(prev[sw.canonical(p.interface)].vid)
        if vlan_name(sw.name, n) in by_name:
            candidates.append(by_name[vlan_name(sw.name, n)])
        candidates.append(lo + n)
        vid = next((v for v in candidates if lo <= v <= hi and v not in foreign and v not in taken), None)
        if vid is None:
            vid = next((v for v in range(lo, hi + 1) if v not in foreign and v not in taken), None)
        if vid is None:
            raise InputError(f"{where}.vlan_range", f"no free VID left in {sw.vlan_range} on {sw.name}",
                             "widen vlan_range")
        chosen[p.interface] = vid
        taken.add(vid)


def _choose_vids(sw: Switch, facts: DeviceFacts, previous: SwitchPlan | None, ports: list,
                 where: str) -> dict[str, int]:
    """Access port interface (inventory spelling) -> VID; never a VID the device uses for something else (VIDs of
    the previous plan or named ``harmless-...`` are ours). Raises InputError (see :func:`plan_switch`)."""
    prev = {sw.canonical(p.interface): p for p in previous.ports} if previous else {}
    ours = {p.vid for p in prev.values()}
    named_ours = {v for v, n in facts.vlans.items() if str(n).startswith("harmless-")}
    foreign = {v for v, name in facts.vlans.items() if v not in ours and not str(name).startswith("harmless-")}
    foreign |= preflight.model_vlans(facts) - ours - {v for v, n in facts.vlans.items() if n.startswith("harmless-")}
    chosen = _explicit_vids(sw, facts, ports, foreign, where)
    _allocate_vids(sw, facts, ports, prev, foreign, chosen, where)
    preflight.check_chosen(sw, facts, chosen, ours | named_ours, where)
    return chosen


def _port_plans(sw: Switch, ports: list, spell: dict[str, str], chosen: dict[str, int]) -> tuple[PortPlan, ...]:
    """The plan of each access port (in ``ports`` order): device spelling, OpenFlow port, VID, trunk, VLAN name."""
    trunk_of = {sw.canonical(t.switch_port): spell[t.switch_port] for t in sw.trunks}
    default_trunk = spell[sw.trunks[0].switch_port]
    return tuple(
        PortPlan(spell[p.interface], n, chosen[p.interface],
                 trunk_of[sw.canonical(p.trunk)] if p.trunk else default_trunk, vlan_name(sw.name, n), p.qinq,
                 tuple(p.keep), PortQos.from_settings(p.qos))
        for p in ports for n in [sw.ofport_of(p)])


def plan_switch(sw: Switch, facts: DeviceFacts, previous: SwitchPlan | None, where: str,
                caps: Capabilities | None = None, index: int = 0) -> SwitchPlan:
    """Plan one switch. Pure.

    Args:
        sw: the validated inventory entry.
        facts: what the device reports now (interfaces and configured VLANs).
        previous: this switch's plan from the last ``up`` (for stable VIDs), or None.
        where: ``"<file>: switches[i]"`` for error messages.
        caps: the driver's capabilities for this device; QinQ ports are refused without them (see
            :func:`check_capabilities`).
        index: the switch's 1-based position in the inventory (br-otc numbering).

    Raises:
        InputError: unknown interface, OpenFlow port collision, VID already in use, VID range exhausted, a feature
            the device cannot do.
    """
    tpid = check_capabilities(sw, caps or Capabilities(), where)
    preflight.check_facts(sw, facts, where)
    spell = _spellings(sw, facts, where)
    ports = sorted(sw.access_ports, key=sw.ofport_of)
    chosen = _choose_vids(sw, facts, previous, ports, where)
    port_plans = _port_plans(sw, ports, spell, chosen)
    trunks = tuple(
        TrunkPlan(spell[t.switch_port], t.server_interface, t.type, _trunk_options(t),
                  tuple(sorted(pp.vid for pp in port_plans if pp.trunk == spell[t.switch_port])))
        for t in sw.trunks)
    of = sw.openflow
    tls = (of.tls.private_key, of.tls.certificate, of.tls.ca_cert) if of.tls else None
    learning_off, notes = mac_learning_plan(sw, caps or Capabilities(), facts.model)
    port_down, down_notes = port_down_plan(sw, caps or Capabilities(), facts.model)
    return SwitchPlan(sw.name, sw.bridge, sw.dpid, tuple(of.versions), tuple(of.controllers),
                      port_plans, trunks, tpid, index, max_backoff_ms=of.max_backoff_ms,
                      inactivity_probe_ms=of.inactivity_probe_ms, tls=tls, port_down=port_down,
                      mac_learning_off=learning_off, notes=(*notes, *down_notes))


def mac_learning_plan(sw: Switch, caps: Capabilities, model: str = "") -> tuple[bool, tuple[str, ...]]:
    """Whether HARMLESS turns MAC learning off in ``sw``'s VLANs, and ``plan``'s note when it cannot. Pure.

    A frame that a controller sends back out of its in-port returns on the trunk in the port's own VLAN; a legacy
    switch that learns MACs learns the sender on the trunk and from then on filters what it would have to send back
    out of the trunk ("If the destination address is on the port that sent the packet, the packet is filtered",
    Cisco Catalyst 2960 Software Configuration Guide, "Building the Address Table"). With learning off it floods
    within the VLAN, whose only other member is the access port (docs/transparency.md, "Hairpin").
    """
    if sw.mac_learning != "off":
        return False, ()
    if caps.mac_learning_off:
        return True, ()
    return False, (f"MAC learning stays on in {sw.name}'s HARMLESS VLANs: {model or sw.driver} cannot turn it "
                   "off per VLAN or port" + (f" ({caps.mac_learning_source})" if caps.mac_learning_source else "")
                   + ", so a frame the controller sends back out of its in-port (hairpin) does not reach the "
                   "other hosts behind that port once the switch has learned the sender on the trunk",)


def port_down_plan(sw: Switch, caps: Capabilities, model: str = "") -> tuple[str, tuple[str, ...]]:
    """What a controller's OFPPC_PORT_DOWN does on ``sw`` (``device`` or ``server``) and ``plan``'s note when the
    inventory asks for ``device`` but the driver cannot shut a port so that ``down`` restores it. Pure."""
    want = sw.openflow.port_down
    if want == "device" and not caps.port_admin:
        return "server", (f"a controller's port-down (OFPPC_PORT_DOWN) blocks {sw.name}'s ports on the server only: "
                          f"the {model or sw.driver} driver cannot shut a legacy port and give it back exactly "
                          "(the hosts keep their link)",)
    return want, ()


def make_plan(inv: Inventory, facts: dict[str, DeviceFacts], previous: Plan | None = None,
              src: str = "<inventory>", caps: dict[str, Capabilities] | None = None) -> Plan:
    """Plan every switch of the inventory that has facts (pure).

    ``facts`` maps switch name -> DeviceFacts (a switch without facts, e.g. unreachable, is left out of the plan;
    the others keep their br-otc numbers), ``caps`` switch name -> the driver's Capabilities. Raises InputError.
    """
    prev = {s.name: s for s in previous.switches} if previous else {}
    servers = {}
    for i, sw in enumerate(inv.switches):
        for j, t in enumerate(sw.trunks):
            if t.server_interface in servers:
                raise InputError(f"{src}: switches[{i}].trunks[{j}].server_interface",
                                 f"{t.server_interface} is already the trunk of {servers[t.server_interface]}",
                                 "give each trunk its own server interface")
            servers[t.server_interface] = f"{sw.name} {t.switch_port}"
    caps = caps or {}
    return Plan(tuple(plan_switch(sw, facts[sw.name], prev.get(sw.name), f"{src}: switches[{i}]", caps.get(sw.name),
                                  index=i + 1)
                      for i, sw in enumerate(inv.switches) if sw.name in facts))
