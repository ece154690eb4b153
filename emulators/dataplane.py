"""The lab switch's data plane: an emulated switch's VLAN config mirrored onto OVS ports (802.1Q behaviour).

Shared by every emulated vendor (:mod:`harmless.emulators.ios`, :mod:`harmless.emulators.eos`): the pure mapping
from a fake-switches ``Port`` to OVS ``Port`` columns (:func:`port_ovs_state`, :func:`desired_ovs_ports`,
:func:`vlan_limit`, :func:`vsctl_argv`), :class:`OvsSync` that applies the changes in one ``ovs-vsctl`` transaction
(argument list, no shell; run off the Twisted reactor thread so the management plane never stalls), and the
link-state reads that let "pulling a cable" reach the emulated device (:meth:`OvsSync.poll_links`,
:func:`ovs_link_states`), and the OpenFlow flows that give the NORMAL bridge a Catalyst's Layer 2 protocol
tunnelling (:func:`l2pt_flows`, written by :meth:`OvsSync.apply` in one bundle).

Link-local frames: OVS's NORMAL action drops frames to the IEEE 802.1 reserved addresses 01:80:c2:00:00:00-0f and
to Cisco's 01:00:0c:cc:cc:cc/cd (``other_config:forward-bpdu`` false, the default: ovs-vswitchd.conf.db(5); OVS
``eth_addr_is_reserved``), as an 802.1D bridge and a Catalyst consume them; the tunnel address 01:00:0c:cd:cd:d0 is
not reserved and is flooded like any multicast. Commands run through :func:`harmless.procs.run`, transactions are joined by
:func:`harmless.ovs.transaction_args`. Imports nothing of the emulators themselves (no cycle).
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

from harmless import procs
from harmless.errors import HarmlessError
from harmless.ovs import transaction_args
from harmless.switch_drivers.l2pt import PROTOCOLS, TUNNEL_MAC

log = logging.getLogger("harmless.emulators.dataplane")


def port_ovs_state(port) -> dict:
    """:func:`vlan_state` of the port, plus ``"shutdown": True`` for a port shut down on the device (the data plane
    takes its link down, so the host behind it loses carrier as on a real switch) and ``"no_learning": True`` for a
    port whose MAC learning is off (``vendor_specific["no_learning"]``, EOS ``no switchport mac address learning``)."""
    out = vlan_state(port)
    if getattr(port, "shutdown", None):
        out["shutdown"] = True
    if (getattr(port, "vendor_specific", None) or {}).get("no_learning"):
        out["no_learning"] = True
    return out


def vlan_state(port) -> dict:
    """The OVS ``Port`` columns that reproduce one IOS switchport's 802.1Q behaviour.

    Args:
        port: a fake_switches ``Port`` (attributes ``mode``, ``access_vlan``, ``trunk_vlans``,
            ``trunk_native_vlan``).

    Returns:
        ``{"vlan_mode": str, "tag": int, "trunks": list[int]}``:
        access or no mode (IOS dynamic, which with a non-negotiating peer is access) → ``access``,
        tag = access VLAN (default 1); ``dot1q-tunnel`` → OVS ``dot1q-tunnel`` with ``qinq_ethtype`` ``802.1q``
        (Cisco's S-tag TPID is 0x8100); trunk →
        ``native-untagged`` with tag = native VLAN (default 1, untagged as on IOS) and
        trunks = allowed VLANs (``[]`` = all). An IOS ``allowed vlan none`` trunk becomes
        ``trunks=[native]`` (OVS cannot express "nothing"). An access or dot1q-tunnel port with
        ``l2protocol-tunnel`` lines (``vendor_specific["l2pt"]``) also gets ``"l2pt": [protocols]``
        (:func:`l2pt_flows`).
    """
    if port.mode == "trunk":
        native = port.trunk_native_vlan or 1
        if port.trunk_vlans is None:
            trunks: list[int] = []
        else:
            trunks = sorted({v for v in port.trunk_vlans if 1 <= v <= 4094})
            if len(trunks) == 4094:
                trunks = []
            elif not trunks:
                trunks = [native]
        return {"vlan_mode": "native-untagged", "tag": native, "trunks": trunks}
    tunnelled = getattr(port, "vendor_specific", {}).get("l2pt")
    l2pt = {"l2pt": sorted(tunnelled)} if tunnelled else {}
    if port.mode == "dot1q-tunnel":    # Cisco dot1q-tunnel: the outer (S-)tag is 0x8100, not OVS's 802.1ad default
        return {"vlan_mode": "dot1q-tunnel", "tag": port.access_vlan or 1, "trunks": [], "qinq_ethtype": "802.1q",
                **l2pt}
    if port.mode == "access":
        return {"vlan_mode": "access", "tag": port.access_vlan or 1, "trunks": [], **l2pt}
    return {"vlan_mode": "access", "tag": port.access_vlan or 1, "trunks": []}


def desired_ovs_ports(switch_configuration, port_map: dict[str, str]) -> dict[str, dict]:
    """Desired 802.1Q state of every mapped OVS port.

    Args:
        switch_configuration: fake_switches SwitchConfiguration of the emulated switch.
        port_map: ``{switch interface: OVS port}``, e.g. ``{"FastEthernet0/7": "fa0-7"}``.

    Returns:
        ``{ovs port: {"vlan_mode", "tag", "trunks"}}`` (see :func:`port_ovs_state`).

    Raises:
        KeyError: an interface of ``port_map`` does not exist on the switch.
    """
    out = {}
    for iface, ovs_port in port_map.items():
        port = switch_configuration.get_port(iface)
        if port is None:
            raise KeyError(f"switch has no interface {iface!r}")
        out[ovs_port] = port_ovs_state(port)
    return out


def vlan_limit(ports: dict[str, dict]) -> int:
    """``Open_vSwitch other_config:vlan-limit`` for the lab switch's OVS: 2 when a port is a QinQ customer port
    (``dot1q-tunnel``: OVS must parse the C-tag under the S-tag), else 1 — as on a real switch's access port, where
    only the outermost tag counts (OVS's default is 1 as well). Pure.

    Args:
        ports: ``{ovs port: state}`` as from :func:`desired_ovs_ports` (every port, not only changed ones).
    """
    return 2 if any(st.get("vlan_mode") == "dot1q-tunnel" for st in ports.values()) else 1


def vsctl_argv(db: str, changes: dict[str, dict], vsctl: str = "ovs-vsctl", limit: int | None = None,
               stamp: int | None = None) -> list[str]:
    """One ``ovs-vsctl`` transaction setting ``changes`` (``{ovs port: state}``) and, when ``limit`` is given,
    ``Open_vSwitch other_config:vlan-limit`` (see :func:`vlan_limit`); pure.

    ``stamp`` also writes ``Open_vSwitch other_config:harmless-sync=<stamp>``: Open vSwitch 3.1's ovs-vswitchd did
    not apply a ``--no-wait`` transaction that changed only ``Port:trunks`` (a trunk losing or gaining VLANs, as in
    an active/standby take-over) until a column it reads in the ``Open_vSwitch`` row changed too (seen in the
    two-trunk lab: the data plane kept flooding to the old trunk for minutes); a changing stamp there makes it
    reconfigure at once.

    Returns:
        e.g. ``["ovs-vsctl", "--db=unix:/x.sock", "--no-wait", "--timeout=5",
        "--", "set", "Port", "fa0-7", "vlan_mode=access", "tag=107", "trunks=[]"]``.
    """
    cmds = []
    for name in sorted(changes):
        st = changes[name]
        trunks = ",".join(str(v) for v in st["trunks"]) if st["trunks"] else "[]"
        cmds.append(["set", "Port", name, f"vlan_mode={st['vlan_mode']}", f"tag={st['tag']}", f"trunks={trunks}"])
        if "qinq_ethtype" in st:                          # dot1q-tunnel outer TPID (802.1q or 802.1ad)
            cmds[-1].append(f"other_config:qinq-ethtype={st['qinq_ethtype']}")
    if limit is not None:
        cmds.append(["set", "Open_vSwitch", ".", f"other_config:vlan-limit={limit}"])
    if stamp is not None:
        cmds.append(["set", "Open_vSwitch", ".", f"other_config:harmless-sync={stamp}"])
    return [vsctl, f"--db={db}", "--no-wait", "--timeout=5", *(["--"] if cmds else []), *transaction_args(cmds)]


#: cookie of the lab switch's L2PT flows ("L2PT"): replaced as a whole, the bridge's NORMAL flow is left alone
L2PT_COOKIE = 0x4C325054


def _carries_tagged(st: dict, vid: int) -> bool:
    """A trunk state that carries ``vid`` tagged (allowed, and not its untagged native VLAN)."""
    return st["vlan_mode"] == "native-untagged" and st["tag"] != vid and (not st["trunks"] or vid in st["trunks"])


def _restore_order(protocols) -> list[tuple[int, str, list[str]]]:
    """``[(eth_type, destination restored, protocols)]``: a real switch reads the LLC/SNAP header to tell CDP from
    STP; OVS matches EtherTypes only, so among LLC protocols the first one's destination is given back."""
    out: dict[int, tuple[str, list[str]]] = {}
    for name, p in PROTOCOLS.items():
        if name in protocols:
            out.setdefault(p.eth_type, (p.dst, []))[1].append(name)
    return [(et, dst, names) for et, (dst, names) in out.items()]


def _tunnel_in(port: str, protocols) -> list[str]:
    """A tunnel port's ingress: its PDUs get the tunnel MAC and go to NORMAL (flooded in its VLAN); a frame that
    already carries the tunnel MAC is dropped (a Catalyst err-disables the port: "If an encapsulated PDU (with the
    proprietary destination MAC address) is received from a tunnel port or an access port with Layer 2 tunneling
    enabled, the tunnel port is shut down to prevent loops")."""
    c = f"cookie={L2PT_COOKIE:#x}"
    out = [f"{c},priority=300,in_port={port},dl_dst={TUNNEL_MAC},actions=drop"]
    for name, p in PROTOCOLS.items():
        if name in protocols:
            out += [f"{c},priority=200,in_port={port},dl_dst={d},dl_type={p.eth_type:#06x},"
                    f"actions=mod_dl_dst:{TUNNEL_MAC},NORMAL" for d in p.dsts]
    return list(dict.fromkeys(out))


def _tunnel_out(trunk: str, vid: int, members: dict[str, dict], ports: dict[str, dict]) -> list[str]:
    """Tunnelled PDUs arriving tagged ``vid`` on ``trunk``: flooded in the VLAN as the switch does, with the real
    destination restored towards the tunnel ports of that protocol (``members``: the VLAN's other ports)."""
    c = f"cookie={L2PT_COOKIE:#x}"
    tagged = [n for n in members if ports[n]["vlan_mode"] == "native-untagged"]
    plain = [n for n in members if n not in tagged]
    out = []
    for et, dst, names in _restore_order({x for n in plain for x in ports[n].get("l2pt", ())}):
        tunnel = [n for n in plain if set(ports[n].get("l2pt", ())) & set(names)]
        acts = [f"output:{n}" for n in tagged] + ["strip_vlan"] + [f"output:{n}" for n in plain if n not in tunnel]
        acts += [f"mod_dl_dst:{dst}"] + [f"output:{n}" for n in tunnel]
        out.append(f"{c},priority=200,in_port={trunk},dl_vlan={vid},dl_dst={TUNNEL_MAC},dl_type={et:#06x},"
                   f"actions={','.join(acts)}")
    return out


def l2pt_flows(ports: dict[str, dict]) -> list[str]:
    """``ovs-ofctl`` flow lines (cookie :data:`L2PT_COOKIE`) that make the NORMAL lab bridge tunnel link-local
    protocols as a Catalyst does on ports whose state has ``"l2pt"`` (pure).

    Catalyst configuration guides, "Configuring Layer 2 Protocol Tunneling": a PDU received on a tunnel port gets
    the destination 01:00:0c:cd:cd:d0 and crosses the VLAN as data (``_tunnel_in``); "the edge switches on the
    outbound side ... restore the proper Layer 2 protocol and MAC address information and forward the packets to
    all tunnel and access ports in the same metro VLAN" (``_tunnel_out``, for tunnelled PDUs arriving tagged on a
    trunk). Approximations of OVS: the protocol is known from destination and EtherType only (CDP, VTP, PAgP and
    UDLD share 01:00:0c:cc:cc:cc and the 802.3 LLC class: tunnelling one of them tunnels all four here), two
    tunnel ports of one VLAN on the same switch exchange tunnelled PDUs through NORMAL unrestored, and a trunk whose
    native VLAN is the tunnel VLAN gets no copy of a tunnelled PDU from another trunk.

    Args:
        ports: ``{ovs port: state}`` of every mapped port (:func:`desired_ovs_ports`).

    Returns:
        Flow lines in a stable order ([] when no port tunnels anything).
    """
    out = []
    for name in sorted(ports):
        if ports[name].get("l2pt"):
            out += _tunnel_in(name, ports[name]["l2pt"])
    vids = sorted({st["tag"] for st in ports.values() if st.get("l2pt")})
    for vid in vids:
        access = {n: st for n, st in ports.items() if st["vlan_mode"] != "native-untagged" and st["tag"] == vid}
        for trunk in sorted(n for n, st in ports.items() if _carries_tagged(st, vid)):
            others = {n: ports[n] for n in sorted(ports) if n != trunk and (n in access or
                                                                           _carries_tagged(ports[n], vid))}
            out += _tunnel_out(trunk, vid, others, ports)
    return out


def l2pt_bundle(flows: list[str]) -> str:
    """``ovs-ofctl --bundle add-flows`` input replacing every :data:`L2PT_COOKIE` flow with ``flows`` (one atomic
    OpenFlow 1.4 bundle: ``delete`` then ``add`` lines, ovs-ofctl(8) "add-flows")."""
    return "".join([f"delete cookie={L2PT_COOKIE:#x}/-1\n"] + [f"add {f}\n" for f in flows])


#: cookie of the lab switch's no-MAC-learning flows ("NOLR"): replaced as a whole, the NORMAL flow is left alone
LEARNING_COOKIE = 0x4E4F4C52
#: destinations a bridge consumes rather than floods (IEEE 802.1 reserved 01:80:c2:00:00:0x, Cisco 01:00:0c:cc:cc:cc/cd):
#: left to NORMAL, which drops them as a Catalyst consumes them, also in a VLAN without learning
RESERVED = ("01:80:c2:00:00:00/ff:ff:ff:ff:ff:f0", "01:00:0c:cc:cc:cc/ff:ff:ff:ff:ff:fe")


def _members(ports: dict[str, dict], vid: int) -> tuple[list[str], list[str], list[str]]:
    """``(access ports, dot1q-tunnel ports, trunks carrying vid tagged)`` of VLAN ``vid`` (sorted names)."""
    acc = sorted(n for n, st in ports.items() if st["vlan_mode"] == "access" and st["tag"] == vid)
    tun = sorted(n for n, st in ports.items() if st["vlan_mode"] == "dot1q-tunnel" and st["tag"] == vid)
    trk = sorted(n for n, st in ports.items() if st["vlan_mode"] == "native-untagged" and st["tag"] != vid
                 and (not st["trunks"] or vid in st["trunks"]))
    return acc, tun, trk


def learning_vids(ports: dict[str, dict], vlans: set[int]) -> set[int]:
    """VLANs the switch floods without learning: ``vlans`` (IOS ``no mac address-table learning vlan``) and those
    whose every member port has learning off (EOS, per interface). Pure."""
    out = set(vlans)
    for vid in {st["tag"] for st in ports.values() if st["vlan_mode"] != "native-untagged"}:
        acc, tun, trk = _members(ports, vid)
        members = acc + tun + trk
        if members and all(ports[n].get("no_learning") for n in members):
            out.add(vid)
    return out


def learning_flows(ports: dict[str, dict], vids: set[int]) -> list[str]:
    """``ovs-ofctl`` flow lines (cookie :data:`LEARNING_COOKIE`) that make the NORMAL lab bridge forward VLANs
    ``vids`` without MAC learning: every frame is flooded to the VLAN's other ports with the right tagging (Cisco:
    "Disabling MAC address learning on a VLAN ... every packet entering the switch is flooded in that VLAN domain",
    Catalyst 3750-X/3560-X configuration guide 15.0(2)SE). Reserved link-local destinations stay with NORMAL
    (:data:`RESERVED`). Shut-down ports are left out. Pure; [] when ``vids`` is empty.
    """
    c = f"cookie={LEARNING_COOKIE:#x}"
    out = [f"{c},priority=110,dl_dst={d},actions=NORMAL" for d in RESERVED] if vids else []
    for vid in sorted(vids):
        acc, tun, trk = (sorted(n for n in group if not ports[n].get("shutdown")) for group in _members(ports, vid))
        for src in acc + tun + trk:
            tagged = [f"output:{t}" for t in trk if t != src]
            plain = [f"output:{p}" for p in acc + tun if p != src]
            if src in trk:
                acts = tagged + (["strip_vlan"] + plain if plain else [])
                match = f"in_port={src},dl_vlan={vid}"
            else:
                push = "mod_vlan_vid:%d" % vid if src in acc else f"push_vlan:0x8100,set_field:{4096 + vid}->vlan_vid"
                acts = plain + ([push] + tagged if tagged else [])
                match = f"in_port={src}" + (",vlan_tci=0x0000/0x1fff" if src in acc else "")
            out.append(f"{c},priority=100,{match},actions={','.join(acts) or 'drop'}")
    return out


def mgmt_target(db: str, bridge: str) -> str:
    """``unix:<run dir of db>/<bridge>.mgmt``: the bridge's OpenFlow management socket beside the OVSDB socket."""
    return f"unix:{Path(db.removeprefix('unix:')).parent / f'{bridge}.mgmt'}"


class OvsSync:
    """Keeps the mapped OVS ports in line with the switch config (call :meth:`tick` periodically).

    Args:
        switch_configuration: the emulated switch's configuration.
        port_map: ``{switch interface: OVS port}``.
        db: OVSDB remote (``unix:/path/db.sock``).
        run: runs an argv and returns ``(returncode, stderr text)``; blocking (called off-reactor).
        on_change: called with the state dict after every successful apply or new error.
        bridge: the OVS bridge of the mapped ports: with it the Layer 2 protocol tunnelling flows
            (:func:`l2pt_flows`) and the flows of VLANs without MAC learning (:func:`learning_flows`) are kept in
            line, and a shut-down port's link is taken down (``ovs-ofctl mod-port ... down``: the host loses
            carrier), all through ``<rundir of db>/<bridge>.mgmt``.
    """

    def __init__(self, switch_configuration, port_map: dict[str, str], db: str,
                 run: Callable[[list[str]], tuple[int, str]] | None = None,
                 on_change: Callable[[dict], None] | None = None, bridge: str | None = None):
        self.sc, self.port_map, self.db = switch_configuration, dict(port_map), db
        self.run = run or _run
        self.on_change = on_change or (lambda state: None)
        self.bridge = bridge
        self.flows: list[str] = []              # L2PT flows last written (l2pt_flows)
        self.learning: list[str] = []           # no-learning flows last written (learning_flows)
        self.applied: dict[str, dict] = {}
        self.vlan_limit: int | None = None       # last vlan-limit written (None: not yet)
        self.error: str | None = None
        self.busy = False
        self.applies = 0

    def pending(self) -> dict[str, dict]:
        """Ports whose desired state differs from the last applied one."""
        desired = desired_ovs_ports(self.sc, self.port_map)
        return {p: s for p, s in desired.items() if self.applied.get(p) != s}

    def apply(self, changes: dict[str, dict]) -> bool:
        """Write ``changes`` in one transaction (blocking), with the vlan-limit the ports then need when it
        changes (:func:`vlan_limit`: 2 only while a dot1q-tunnel port exists). Returns True on success."""
        limit = vlan_limit({**self.applied, **changes})
        rc, err = self.run(vsctl_argv(self.db, changes, limit=None if limit == self.vlan_limit else limit,
                                      stamp=self.applies + 1))
        if rc == 0:
            self.vlan_limit = limit
            self._port_links(changes)
            self.applied.update(changes)
            self.applies += 1
            self.error = None
            log.info("ovs: applied %s", json.dumps(changes, sort_keys=True))
            self.on_change(self.state())
            return self.sync_flows() and self.sync_learning()
        msg = (err.strip().splitlines() or [f"exit status {rc}"])[-1]
        if msg != self.error:
            log.error("ovs: ovs-vsctl failed (will retry): %s", msg)
            self.error = msg
            self.on_change(self.state())
        return False

    def _port_links(self, changes: dict[str, dict]) -> None:
        """Take the link of a port that was shut down (and bring it back when it is no longer): only on a change
        of ``shutdown``, so a lab cable pulled by hand is left alone (needs ``bridge``)."""
        if self.bridge is None:
            return
        for name, st in sorted(changes.items()):
            was = self.applied.get(name, {}).get("shutdown", False)
            if st.get("shutdown", False) != was:
                rc, _, err = run_quiet(["ovs-ofctl", "mod-port", mgmt_target(self.db, self.bridge), name,
                                        "down" if st.get("shutdown") else "up"], timeout=15)
                if rc != 0:
                    log.error("ovs: mod-port %s failed: %s", name, err.strip())

    def learning_pending(self) -> bool:
        """The no-learning flows the applied ports need differ from those last written (only with ``bridge``)."""
        return self.bridge is not None and learning_flows(self.applied, self._learning_vids()) != self.learning

    def _learning_vids(self) -> set[int]:
        return learning_vids(self.applied, set(getattr(self.sc, "_no_learning_vlans", set())))

    def sync_learning(self) -> bool:
        """Write the no-learning flows in one OpenFlow bundle when they changed (blocking). True on success."""
        if not self.learning_pending():
            return True
        flows = learning_flows(self.applied, self._learning_vids())
        text = "".join([f"delete cookie={LEARNING_COOKIE:#x}/-1\n"] + [f"add {f}\n" for f in flows])
        rc, _, err = run_quiet(["ovs-ofctl", "-O", "OpenFlow14", "--bundle", "add-flows",
                                mgmt_target(self.db, self.bridge), "-"], timeout=15, stdin=text)
        if rc == 0:
            self.learning = flows
            log.info("ovs: %d no-learning flows on %s", len(flows), self.bridge)
            return True
        log.error("ovs: ovs-ofctl add-flows failed (will retry): %s", err.strip())
        return False

    def flows_pending(self) -> bool:
        """The L2PT flows the applied port states need differ from those last written (only with ``bridge``)."""
        return self.bridge is not None and l2pt_flows(self.applied) != self.flows

    def sync_flows(self) -> bool:
        """Write the L2PT flows of the applied port states in one OpenFlow bundle when they changed (blocking;
        ``ovs-ofctl --bundle add-flows``: delete this cookie's flows, add the new ones). Returns True on success."""
        if not self.flows_pending():
            return True
        flows = l2pt_flows(self.applied)
        target = f"unix:{Path(self.db.removeprefix('unix:')).parent / f'{self.bridge}.mgmt'}"
        rc, _, err = run_quiet(["ovs-ofctl", "-O", "OpenFlow14", "--bundle", "add-flows", target, "-"], timeout=15,
                               stdin=l2pt_bundle(flows))
        if rc == 0:
            self.flows = flows
            log.info("ovs: %d L2PT flows on %s", len(flows), self.bridge)
            return True
        msg = (err.strip().splitlines() or [f"exit status {rc}"])[-1]
        if msg != self.error:
            log.error("ovs: ovs-ofctl failed (will retry): %s", msg)
            self.error = msg
            self.on_change(self.state())
        return False

    def tick(self):
        """Reactor callback: compute pending changes, apply them in a thread. Returns a Deferred or None."""
        if self.busy:
            return None
        changes = self.pending()
        if not changes and (self.flows_pending() or self.learning_pending()):
            from twisted.internet import threads
            self.busy = True
            d = threads.deferToThread(lambda: self.sync_flows() and self.sync_learning())
            d.addBoth(lambda r: (setattr(self, "busy", False), r)[1])
            return d
        if not changes:
            return None
        from twisted.internet import threads

        self.busy = True
        d = threads.deferToThread(self.apply, changes) if changes else threads.deferToThread(self.sync_flows)

        def done(result):
            self.busy = False
            return result

        d.addBoth(done)
        d.addErrback(lambda f: log.error("ovs: sync failed: %s", f.getErrorMessage()))
        return d

    def poll_links(self) -> set[str]:
        """Read the mapped OVS interfaces' ``link_state`` (blocking); return the switch interfaces whose link is down.

        This is how "pulling a cable" in the lab (``ip link set <veth> down`` in the switch's namespace) reaches the
        emulated device's ``show interfaces`` (line protocol down), hence NAPALM ``get_interfaces``.
        """
        rc, out = self.run_out(["ovs-vsctl", f"--db={self.db}", "--timeout=5", "--format=json", "--columns=name,"
                                "link_state", "list", "Interface"])
        if rc != 0:
            return set()
        by_ovs = {v: k for k, v in self.port_map.items()}
        down = set()
        for name, link in json.loads(out)["data"]:
            if name in by_ovs and link != "up":
                down.add(by_ovs[name])
        return down

    def run_out(self, argv: list[str]) -> tuple[int, str]:
        """``(returncode, stdout)`` of ``argv`` (10 s); never raises."""
        rc, out, _ = run_quiet(argv, timeout=10)
        return rc, out

    def state(self) -> dict:
        """JSON-able summary: applied port states, last error, number of transactions, L2PT flows written."""
        return {"applied": self.applied, "error": self.error, "applies": self.applies, "l2pt_flows": len(self.flows)}


def run_quiet(argv: list[str], timeout: float, stdin: str | None = None) -> tuple[int, str, str]:
    """``(returncode, stdout, stderr)`` of ``argv`` through :func:`harmless.procs.run`; never raises: a program
    that is not installed or times out gives ``(1, text, text)`` with the error's text."""
    try:
        res = procs.run(argv, timeout=timeout, check=False, stdin=stdin)
    except HarmlessError as exc:
        return 1, str(exc), str(exc)
    return res.returncode, res.stdout, res.stderr


def _run(argv: list[str]) -> tuple[int, str]:
    """:class:`OvsSync`'s default runner: ``(returncode, stderr text)`` (15 s)."""
    rc, _, err = run_quiet(argv, timeout=15)
    return rc, err


def list_ports(db: str, bridge: str) -> tuple[int, str]:
    """``ovs-vsctl list-ports BRIDGE`` on ``db``: ``(returncode, stdout or stderr text)``; never raises."""
    rc, out, err = run_quiet(["ovs-vsctl", f"--db={db}", "--timeout=5", "list-ports", bridge], timeout=10)
    return rc, out if rc == 0 else err


def ovs_link_states(db: str, names: list[str]) -> dict[str, bool] | None:
    """``{OVS interface: link up}`` for ``names`` (one ``ovs-vsctl`` call; None when it failed)."""
    rc, out, _ = run_quiet(["ovs-vsctl", f"--db={db}", "--timeout=5", "--format=json", "--columns=name,link_state",
                            "list", "Interface", *names], timeout=10)
    if rc != 0:
        return None
    rows = json.loads(out)["data"]
    return {name: state == "up" for name, state in rows}
