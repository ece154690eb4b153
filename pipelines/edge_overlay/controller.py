"""The edge overlay controller: an os-ken app (OpenFlow 1.3) for Kawashima & Matsuo's non-tunnelling edge overlay.

Run: ``OVERLAY_CONTROLLER_CONF=<conf.json> osken-manager --ofp-tcp-listen-port 6653
harmless.pipelines.edge_overlay.controller`` (``harmless overlay up`` does this). ``conf.json``::

    {"registry": "<registry.json: the validated topology file>", "state_dir": "<folder for vids.json, status.json>",
     "servers": {"s1": {"dpid": 1, "mac": "02:5e:00:00:00:01"}, ...,
                 "hl": {"dpid": 4, "mac": "...", "uplink_port": 24, "by_port": true}}}   # a HARMLESS br-of

What it does (paper Sec. III and V):
  * **Where VMs are** comes from the edge switches themselves: a port named ``v-<vm>`` on server S's switch (port
    description at connect, then OFPT_PORT_STATUS add/delete) puts the VM on S. Migration is therefore exactly the
    paper's: the old server's port-status DELETE removes the VM's flows everywhere, the new server's ADD allocates a
    VID there and installs the new flows on every server (Sec. V, "VM Migration").
  * **VIDs** are host-based (:mod:`~harmless.pipelines.edge_overlay.vids`), persisted, stable across restarts.
  * **Flows**: :func:`~harmless.pipelines.edge_overlay.flows.desired_flows` (Fig. 5/6 + source-MAC restore), each
    with its own cookie. After every change the controller diffs desired vs installed cookies per switch.
  * **Audit at (re)connect**: the switch's flows with this app's cookie prefix are dumped; flows whose cookie is
    desired are left alone, missing ones added, stale ones deleted (by exact cookie). Counts in ``status.json``.
  * **ARP: proxy-ARP from the registry**, restricted to the tenant: an ARP request from VM A for IP X is answered
    by the controller with the MAC of the VM of A's tenant that has X (and is running), else dropped. Chosen over
    unicast replication because the controller already knows every (tenant, IP, MAC) (the paper's premise, Sec.
    III-B), so one reply frame replaces N-1 copies, no ARP frame ever crosses the core or reaches another tenant, and
    the requester learns the real VM MAC (migration transparency, Fig. 3). Spoofed requests (sender MAC/IP not
    the VM's) are refused.
  * **Core FDB priming**: legacy switches learn MACs per VLAN; a server's MAC is only learnt in VID v if that server
    sends with VID v, which in this model never happens by itself (the VID names the *receiving* VM). So each
    server's edge switch sends one small broadcast frame (ethertype 0x88b5, IEEE 802 local experimental) per VID it
    owns, from its own MAC, at every change and every 60 s (below the 300 s default FDB ageing time): the core then
    unicasts instead of flooding. Other servers drop these frames (no flow matches them).
  * Every VID allocation/release and every batch of flow adds/deletes is first appended (fsynced) to
    ``controller-journal.jsonl``.
  * Locations are saved too (``where.json``): after a restart, the VMs of servers that have not reconnected yet keep
    their last known place, so the first audits do not remove flows towards them.
  * ``status.json`` (atomic, 0600) is rewritten after every change: connected servers, flows, audits, VIDs, where,
    ARP counters, migrations.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import eventlet.semaphore
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, DEAD_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib import hub
from os_ken.lib.packet import arp, ethernet, packet
from os_ken.ofproto import ofproto_v1_3

from harmless import openflow as of
from harmless import state as st
from harmless.journal import Journal
from harmless.pipelines.edge_overlay import flows as fl
from harmless.pipelines.edge_overlay.model import UPLINK_PORT, Registry, vm_of_iface
from harmless.pipelines.edge_overlay.vids import VidAllocator

PRIME_ETHERTYPE = 0x88B5      #: IEEE Std 802 "local experimental ethertype 1"
PRIME_INTERVAL_S = 60


def arp_reply(requester_mac: str, requester_ip: str, target_mac: str, target_ip: str) -> bytes:
    """The ARP reply (RFC 826, opcode 2) the controller sends to a VM on behalf of ``target``."""
    p = packet.Packet()
    p.add_protocol(ethernet.ethernet(dst=requester_mac, src=target_mac, ethertype=fl.ETH_ARP))
    p.add_protocol(arp.arp(opcode=arp.ARP_REPLY, src_mac=target_mac, src_ip=target_ip, dst_mac=requester_mac,
                           dst_ip=requester_ip))
    p.serialize()
    return bytes(p.data)


def answer_arp(reg: Registry, where: dict, server: str, in_port: int, data: bytes) -> tuple[bytes | None, str]:
    """Decide the proxy-ARP answer to a frame that came in on ``server``/``in_port``.

    Returns:
        ``(reply frame, reason)``; the frame is None when nothing is answered (reason says why: not a request,
        unknown port, spoofed sender, target not in the tenant / not running).
    """
    vm = next((n for n, loc in where.items() if tuple(loc) == (server, in_port)), None)
    if vm is None:
        return None, "unknown port"
    tenant, a = reg.vm(vm)
    pkt = packet.Packet(data)
    eth, req = pkt.get_protocol(ethernet.ethernet), pkt.get_protocol(arp.arp)
    if req is None or req.opcode != arp.ARP_REQUEST:
        return None, "not an ARP request"
    if eth.src != a.mac or req.src_mac != a.mac or req.src_ip != a.address:
        return None, "spoofed sender"
    if req.dst_ip == a.address:
        return None, "gratuitous"
    t = next((v for tn, v in reg.vms() if tn == tenant and v.address == req.dst_ip and v.name in where), None)
    if t is None:
        return None, "target not in tenant"
    return arp_reply(a.mac, a.address, t.mac, t.address), f"{a.name} asks {t.name}"


def prime_frame(server_mac: str) -> bytes:
    """The FDB-priming frame (broadcast, ethertype 0x88b5, from the server's MAC), sent tagged per VID."""
    p = packet.Packet()
    p.add_protocol(ethernet.ethernet(dst="ff:ff:ff:ff:ff:ff", src=server_mac, ethertype=PRIME_ETHERTYPE))
    p.serialize()
    return bytes(p.data) + b"\0" * 46


class EdgeOverlay(app_manager.OSKenApp):
    """The app (see the module doc)."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        conf_path = os.environ.get("OVERLAY_CONTROLLER_CONF")
        if not conf_path:
            raise RuntimeError("OVERLAY_CONTROLLER_CONF is not set (path of the controller's conf.json)")
        self.conf = json.loads(Path(conf_path).read_text())
        self.state_dir = Path(self.conf["state_dir"])
        self.servers = self.conf["servers"]
        self.by_dpid = {int(v["dpid"]): k for k, v in self.servers.items()}
        self.server_macs = {k: v["mac"].lower() for k, v in self.servers.items()}
        self.uplinks = {k: int(v.get("uplink_port", UPLINK_PORT)) for k, v in self.servers.items()}
        self.reg_path = Path(self.conf["registry"])
        self.reg, self.reg_mtime = None, 0.0
        self._load_registry()
        self.vids = VidAllocator(self.state_dir / "vids.json")
        self.dps: dict[str, object] = {}
        self.ports: dict[str, dict[int, str]] = {}     # server -> {port_no: name}
        self.where: dict[str, tuple[str, int]] = {}
        wp = self.state_dir / "where.json"
        self.saved_where = {k: tuple(v) for k, v in json.loads(wp.read_text()).items()} if wp.exists() else {}
        self.installed: dict[str, set[int]] = {}
        self._dump: dict[str, set[int]] = {}
        self._ready: dict[str, set[str]] = {}
        self.audits: dict[str, dict] = {}
        self.arp = {"answered": 0, "refused": 0, "reasons": {}}
        self.migrations: list[dict] = []
        self._last_seen: dict[str, tuple[str, int]] = {}     # vm -> last location (survives the delete/add gap)
        self.started = time.time()
        self.lock = eventlet.semaphore.Semaphore()
        self.threads.append(hub.spawn(self._loop))

    # ------------------------------------------------------------------ registry, view
    def _load_registry(self) -> bool:
        try:
            mt = self.reg_path.stat().st_mtime
        except OSError:
            return False
        if mt == self.reg_mtime:
            return False
        self.reg = Registry.model_validate(json.loads(self.reg_path.read_text()))
        self.reg_mtime = mt
        self.logger.info("registry loaded: %d tenants, %d VMs", len(self.reg.tenants), len(self.reg.vms()))
        return True

    def _relocate(self) -> None:
        """Recompute ``where`` from the known ports and the registry; allocate/release VIDs; log migrations."""
        names = {v.name for _, v in self.reg.vms()}
        new = {}
        for server, ports in self.ports.items():
            if self.servers[server].get("by_port"):
                # a HARMLESS br-of: ports are legacy ports (named by the translator), VMs are found by number
                for _, v in self.reg.vms():
                    if v.server == server and v.port in ports:
                        new[v.name] = (server, v.port)
                continue
            for no, name in ports.items():
                vm = vm_of_iface(name)
                if vm in names:
                    new[vm] = (server, no)
        # servers not heard from since this controller started: their VMs stay where they were last seen (where.json),
        # so an audit right after a restart does not remove the flows towards them
        for vm, (server, no) in self.saved_where.items():
            if server not in self.ports and vm in names and vm not in new:
                new[vm] = (server, no)
        for vm, loc in new.items():
            old = self._last_seen.get(vm)
            if old and old[0] != loc[0]:
                self.migrations.append({"vm": vm, "from": old[0], "to": loc[0], "t": time.time()})
                self.logger.info("migration: %s %s -> %s", vm, old[0], loc[0])
        self._last_seen.update(new)
        self.where = new
        if new != self.saved_where:
            self.saved_where = dict(new)
            st.write_private(self.state_dir / "where.json", json.dumps(new, indent=1, sort_keys=True))
        for vm, (server, _) in new.items():
            if self.vids.get(server, vm) is None:
                self._journal("vid.allocate", server=server, vm=vm)
                self.vids.allocate(server, vm)
        for server in list(self.vids.vids):
            if server not in self.ports:
                continue                    # not connected: its port list (and so its VMs) is unknown
            for vm in list(self.vids.vids[server]):
                if self.where.get(vm, (None,))[0] != server:
                    self._journal("vid.release", server=server, vm=vm, vid=self.vids.get(server, vm))
                    self.vids.release(server, vm)

    def _journal(self, step: str, **data) -> None:
        """Append one record to ``<state_dir>/controller-journal.jsonl`` (a :class:`harmless.journal.Journal`
        continued across restarts, fsynced) before the change it names (VID allocation/release, flow adds/deletes
        per switch)."""
        if not hasattr(self, "_jrnl"):
            self._jrnl = Journal("overlay-controller", path=self.state_dir / "controller-journal.jsonl", append=True)
        self._jrnl.record(step, **data)

    def view(self) -> fl.View:
        """What the flows are computed from (a snapshot)."""
        return fl.View(self.reg, dict(self.where), {s: dict(m) for s, m in self.vids.vids.items()}, self.server_macs,
                       self.uplinks)

    # ------------------------------------------------------------------ reconcile
    def _reconcile_all(self, cause: str) -> None:
        with self.lock:
            self._relocate()
            for server in list(self.dps):
                if server in self.installed:
                    self._reconcile(server)
            self._write_status()
        self.logger.info("reconciled (%s)", cause)

    def _reconcile(self, server: str) -> tuple[int, int, int]:
        """Make ``server``'s flows the desired ones: add missing, then delete stale. Returns (kept, added, removed)."""
        dp = self.dps[server]
        desired = {f.cookie: f for f in fl.desired_flows(self.view(), server)}
        have = self.installed.get(server, set())
        add = [f for c, f in desired.items() if c not in have]
        stale = [c for c in have if c not in desired]
        if add or stale:
            self._journal("flows.apply", server=server, add=[f"{f.cookie:#x}" for f in add],
                          delete=[f"{c:#x}" for c in stale])
        for f in add:
            dp.send_msg(f.to_flowmod(dp))
        for c in stale:
            dp.send_msg(of.delete_cookie(dp, c))
        dp.send_msg(of.barrier(dp))
        self.installed[server] = set(desired)
        if add or stale:
            self._prime(server)
        return len(have) - len(stale), len(add), len(stale)

    def _prime(self, server: str) -> None:
        dp = self.dps.get(server)
        if dp is None:
            return
        data = prime_frame(self.server_macs[server])
        for vid in sorted(self.vids.vids.get(server, {}).values()):
            dp.send_msg(of.packet_out(dp, [*of.push_vlan_act(vid), of.output_port(self.uplinks[server])], data))

    def _loop(self):
        n = 0
        while True:
            hub.sleep(1)
            n += 1
            try:
                if self._load_registry():
                    self._reconcile_all("registry changed")
                if n % PRIME_INTERVAL_S == 0:
                    for s in list(self.dps):
                        self._prime(s)
            except Exception:  # noqa: BLE001 -- keep the loop alive, log it
                self.logger.exception("overlay loop")

    def _write_status(self) -> None:
        status = {
            "pid": os.getpid(), "started": self.started, "t": time.time(),
            "servers": {s: {"connected": s in self.dps, "dpid": self.servers[s]["dpid"],
                            "mac": self.server_macs[s], "flows": len(self.installed.get(s, ())),
                            "audit": self.audits.get(s)} for s in self.servers},
            "where": {vm: list(loc) for vm, loc in sorted(self.where.items())},
            "vids": self.vids.vids, "arp": self.arp, "migrations": self.migrations[-50:],
        }
        st.write_private(self.state_dir / "status.json", json.dumps(status, indent=1, sort_keys=True))

    # ------------------------------------------------------------------ OpenFlow events
    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def _features(self, ev):
        dp = ev.msg.datapath
        server = self.by_dpid.get(dp.id)
        if server is None:
            self.logger.warning("unknown datapath %016x: ignored", dp.id)
            return
        self.dps[server] = dp
        self.installed.pop(server, None)
        self._dump[server] = set()
        self._ready[server] = set()
        dp.send_msg(of.port_desc_request(dp))
        dp.send_msg(of.flow_stats_request(dp, fl.COOKIE_BASE, fl.COOKIE_MASK))

    @set_ev_cls(ofp_event.EventOFPStateChange, DEAD_DISPATCHER)
    def _dead(self, ev):
        server = self.by_dpid.get(ev.datapath.id)
        if server and self.dps.get(server) is ev.datapath:
            del self.dps[server]
            self.installed.pop(server, None)
            with self.lock:
                self._write_status()

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply, MAIN_DISPATCHER)
    def _port_desc(self, ev):
        server = self.by_dpid.get(ev.msg.datapath.id)
        if server is None:
            return
        ports = self.ports.setdefault(server, {}) if "ports" in self._ready.get(server, ()) else {}
        for p in ev.msg.body:
            ports[p.port_no] = p.name.decode() if isinstance(p.name, bytes) else p.name
        self.ports[server] = ports
        if not ev.msg.flags & ev.msg.datapath.ofproto.OFPMPF_REPLY_MORE:
            self._ready[server].add("ports")
            self._maybe_audit(server)

    @set_ev_cls(ofp_event.EventOFPFlowStatsReply, MAIN_DISPATCHER)
    def _flow_stats(self, ev):
        server = self.by_dpid.get(ev.msg.datapath.id)
        if server is None or server not in self._dump:
            return
        self._dump[server].update(s.cookie for s in ev.msg.body)
        if not ev.msg.flags & ev.msg.datapath.ofproto.OFPMPF_REPLY_MORE:
            self._ready[server].add("flows")
            self._maybe_audit(server)

    def _maybe_audit(self, server: str) -> None:
        if self._ready.get(server) != {"ports", "flows"} or server in self.installed:
            return
        with self.lock:
            self._load_registry()
            self._relocate()
            self.installed[server] = set(self._dump.pop(server, set()))
            kept, added, removed = self._reconcile(server)
            self.audits[server] = {"t": time.time(), "kept": kept, "added": added, "removed": removed}
            self.logger.info("audit %s: %d kept, %d added, %d removed", server, kept, added, removed)
            self._prime(server)
            # the other servers' flows towards this server's VMs may have changed (VIDs allocated, VMs found)
            for s in list(self.dps):
                if s != server and s in self.installed:
                    self._reconcile(s)
            self._write_status()

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def _port_status(self, ev):
        msg = ev.msg
        server = self.by_dpid.get(msg.datapath.id)
        if server is None or server not in self.ports:
            return
        p, ofp = msg.desc, msg.datapath.ofproto
        name = p.name.decode() if isinstance(p.name, bytes) else p.name
        if msg.reason == ofp.OFPPR_DELETE:
            self.ports[server].pop(p.port_no, None)
        else:
            self.ports[server][p.port_no] = name
        reason = {ofp.OFPPR_ADD: "add", ofp.OFPPR_DELETE: "delete"}.get(msg.reason, "modify")
        if (vm_of_iface(name) or self.servers[server].get("by_port")) and reason != "modify":
            self._reconcile_all(f"port-status {reason} {server} {name}")

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def _packet_in(self, ev):
        msg = ev.msg
        dp = msg.datapath
        server = self.by_dpid.get(dp.id)
        if server is None or self.reg is None:
            return
        in_port = msg.match["in_port"]
        reply, reason = answer_arp(self.reg, self.where, server, in_port, msg.data)
        key = "answered" if reply else "refused"
        self.arp[key] += 1
        if not reply:
            self.arp["reasons"][reason] = self.arp["reasons"].get(reason, 0) + 1
        else:
            dp.send_msg(of.packet_out(dp, [of.output_port(in_port)], reply))
        with self.lock:
            self._write_status()
