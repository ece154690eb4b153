"""The OSHI controller: an os-ken app for the SDN Based Paths of OSHI nodes (OSHI paper Sec. IV).

Run: ``OSHI_CONTROLLER_CONF=<conf.json> osken-manager --ofp-tcp-listen-port 6653 harmless.pipelines.oshi.controller``
(``harmless oshi up`` does this). The configuration file (JSON) holds:
    state_file: where the services are persisted; api_socket: unix socket of the HTTP API; api_tcp: optional
    "host:port"; label_range: [lo, hi]; discovery_interval_s: LLDP/BDDP period (default 1 s); link_timeout_s
    (default 5 s); nodes: {name: {dpid, bridge, ovsdb, edge_ports: {name: ofport}}}.

What it does:
  * never touches the LME's flows (cookie :data:`~harmless.pipelines.oshi.lme.LME_COOKIE`): no flush on connect;
  * topology: LLDP and BDDP probes out of every port < 1000 (physical ports; internal ports are 1000+, VBP
    patches 4000+), links learnt from the probes the LME sends back; a link is gone after a port-down status, or
    after ``link_timeout_s`` without probes while both its nodes still report probes on other links (in-band
    control: a stalled control channel is not a link failure); the services crossing it are then re-routed
    (:meth:`ServiceManager.topology_changed`);
  * services through :class:`~harmless.pipelines.oshi.manager.ServiceManager`; every FLOW_MOD batch ends with a
    barrier and OpenFlow errors fail the request (rolled back);
  * on (re)connect a node gets its services' flows again (restored from the state file, nothing reallocated).
"""
from __future__ import annotations

import json
import os
import socket
import struct
import time
from pathlib import Path

import eventlet
import eventlet.semaphore
import eventlet.wsgi
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, DEAD_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib import hub
from os_ken.lib.packet import ethernet, lldp, packet
from os_ken.ofproto import ofproto_v1_3

from harmless import procs
from harmless import openflow as of
from harmless.pipelines.oshi.api import make_app
from harmless.pipelines.oshi.lme import ETH_BDDP, ETH_LLDP
from harmless.pipelines.oshi.manager import ServiceManager
from harmless.pipelines.oshi.model import COOKIE_BASE, Link, NodeView, Topology

LLDP_MAC = "01:80:c2:00:00:0e"
PROBE_SRC = "02:4f:53:48:49:ff"
MAX_PHYS_PORT = 999


def probe(dpid: int, port: int, ethertype: int) -> bytes:
    """An LLDP (0x88cc, to 01:80:c2:00:00:0e) or BDDP (0x8942, broadcast) probe naming ``dpid``/``port``."""
    pkt = packet.Packet()
    pkt.add_protocol(ethernet.ethernet(dst=LLDP_MAC if ethertype == ETH_LLDP else "ff:ff:ff:ff:ff:ff",
                                       src=PROBE_SRC, ethertype=ethertype))
    pkt.add_protocol(lldp.lldp([
        lldp.ChassisID(subtype=lldp.ChassisID.SUB_LOCALLY_ASSIGNED, chassis_id=f"dpid:{dpid:016x}".encode()),
        lldp.PortID(subtype=lldp.PortID.SUB_PORT_COMPONENT, port_id=struct.pack("!I", port)),
        lldp.TTL(ttl=120), lldp.End()]))
    pkt.serialize()
    return bytes(pkt.data)


def parse_probe(data: bytes) -> tuple[int, int] | None:
    """(dpid, port) from an LLDP/BDDP probe made by :func:`probe`, else None."""
    if len(data) < 14 or struct.unpack("!H", data[12:14])[0] not in (ETH_LLDP, ETH_BDDP):
        return None
    try:
        ll, _, _ = lldp.lldp.parser(data[14:])
        chassis = ll.tlvs[0].chassis_id.decode()
        if not chassis.startswith("dpid:"):
            return None
        return int(chassis[5:], 16), struct.unpack("!I", ll.tlvs[1].port_id)[0]
    except Exception:  # noqa: BLE001 -- foreign LLDP
        return None


class OshiController(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        conf_path = os.environ.get("OSHI_CONTROLLER_CONF")
        if not conf_path:
            raise SystemExit("OSHI_CONTROLLER_CONF is not set (path of the controller's JSON configuration)")
        self.conf = json.loads(Path(conf_path).read_text())
        self.node_cfg: dict[str, dict] = self.conf["nodes"]
        self.by_dpid = {int(v["dpid"]): n for n, v in self.node_cfg.items()}
        self.dps: dict[str, object] = {}
        self.ports: dict[str, dict[int, dict]] = {}
        self.links: dict[str, tuple[Link, float]] = {}
        self.interval = float(self.conf.get("discovery_interval_s", 1.0))
        self.timeout = float(self.conf.get("link_timeout_s", 5.0))
        self._waiting: dict[int, hub.Event] = {}
        self._stats: dict[int, tuple[list, hub.Event]] = {}
        self.last_rx: dict[str, float] = {}
        self.lock = eventlet.semaphore.Semaphore(1)     # one service change at a time (API, re-route, audit)
        self._errors: dict[int, str] = {}
        self.manager = ServiceManager(Path(self.conf["state_file"]), self.topology, self,
                                      tuple(self.conf.get("label_range", (16, 1048575))), self.conf.get("seed"))
        self.logger.info("OSHI controller: %d services loaded from %s", len(self.manager.records),
                         self.conf["state_file"])
        self.manager.run_parallel = self._run_parallel
        self.threads.append(hub.spawn(self._discovery_loop))
        self._start_api()

    @staticmethod
    def _run_parallel(thunks):
        pool = eventlet.GreenPool(max(1, len(thunks)))
        for t in thunks:
            pool.spawn(t)
        pool.waitall()

    # ------------------------------------------------------------------ API
    def _start_api(self):
        app = make_app(self.manager, self.status, self.lock)
        path = self.conf.get("api_socket")
        if path:
            if os.path.exists(path):
                os.unlink(path)
            sock = eventlet.listen(path, family=socket.AF_UNIX)
            os.chmod(path, 0o600)
            self.threads.append(hub.spawn(eventlet.wsgi.server, sock, app, log_output=False))
        if self.conf.get("api_tcp"):
            host, port = self.conf["api_tcp"].rsplit(":", 1)
            self.threads.append(hub.spawn(eventlet.wsgi.server, eventlet.listen((host, int(port))), app,
                                          log_output=False))

    def status(self) -> dict:
        topo = self.topology()
        return {"nodes": {n: {"dpid": f"{v.dpid:#018x}", "connected": v.connected,
                              "ports": {str(p): d["name"] for p, d in sorted(self.ports.get(n, {}).items())}}
                          for n, v in topo.nodes.items()},
                "links": [ln.model_dump() for ln in topo.links], "events": self.manager.events,
                "services": len(self.manager.records)}

    # ------------------------------------------------------------------ topology
    def topology(self) -> Topology:
        nodes = {n: NodeView(dpid=int(c["dpid"]), edge_ports=c.get("edge_ports", {}), connected=n in self.dps,
                             ovsdb=c.get("ovsdb"), bridge=c.get("bridge", "br-oshi"))
                 for n, c in self.node_cfg.items()}
        links = [ln for ln, _ in self.links.values() if ln.a in self.dps and ln.b in self.dps]
        return Topology(nodes=nodes, links=links)

    def _discovery_loop(self):
        while True:
            now = time.monotonic()
            for name, dp in list(self.dps.items()):
                for port in sorted(self.ports.get(name, {})):
                    if port > MAX_PHYS_PORT or not self.ports[name][port]["up"]:
                        continue
                    for et in (ETH_LLDP, ETH_BDDP):
                        self._packet_out(dp, port, probe(dp.id, port, et))
            # a link expires only when both its nodes still report probes on other ports: with in-band control,
            # a node whose control channel stalls (e.g. while OSPF re-converges) reports nothing at all, and that
            # is no evidence that its links failed
            alive = {n for n, t in self.last_rx.items() if now - t < 2.5 * self.interval}
            expired = [k for k, (ln, seen) in self.links.items()
                       if now - seen > self.timeout and ln.a in alive and ln.b in alive]
            if expired:
                for k in expired:
                    self.logger.info("%.3f link %s timed out", time.time(), k)
                    del self.links[k]
                hub.spawn(self._topology_changed, time.time(), "link timeout: " + ", ".join(expired))
            hub.sleep(self.interval)

    def _packet_out(self, dp, port, data):
        dp.send_msg(of.packet_out(dp, [of.output_port(port)], data))

    def _topology_changed(self, detected: float | None = None, cause: str = ""):
        """Re-route affected services. Runs in its own green thread: waiting for barrier replies inside an event
        handler would block the very event loop that delivers them."""
        with self.lock:
            evs = self.manager.topology_changed()
        for ev in evs:
            ev.update(detected=detected, cause=cause)
        for ev in evs:
            self.logger.info("re-route %s", ev)

    def _drop_links_on(self, node: str, port: int | None = None):
        gone = [k for k, (ln, _) in self.links.items()
                if (ln.a == node and port in (None, ln.a_port)) or (ln.b == node and port in (None, ln.b_port))]
        for k in gone:
            del self.links[k]
        return gone

    # ------------------------------------------------------------------ OpenFlow events
    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def _features(self, ev):
        dp = ev.msg.datapath
        name = self.by_dpid.get(dp.id)
        if name is None:
            self.logger.warning("unknown datapath %016x connected; ignoring it", dp.id)
            return
        self.dps[name] = dp
        self.logger.info("node %s (datapath %016x) connected", name, dp.id)
        dp.send_msg(of.port_desc_request(dp))

    @set_ev_cls(ofp_event.EventOFPStateChange, DEAD_DISPATCHER)
    def _dead(self, ev):
        name = self.by_dpid.get(ev.datapath.id) if ev.datapath.id else None
        if name and self.dps.get(name) is ev.datapath:
            del self.dps[name]
            self._drop_links_on(name)
            self.logger.info("node %s disconnected (its flows stay: fail_mode=secure)", name)

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply, MAIN_DISPATCHER)
    def _port_desc(self, ev):
        dp = ev.msg.datapath
        name = self.by_dpid.get(dp.id)
        if name is None:
            return
        ofp = dp.ofproto
        self.ports[name] = {p.port_no: {"name": p.name.decode() if isinstance(p.name, bytes) else p.name,
                                        "up": not (p.state & ofp.OFPPS_LINK_DOWN)}
                            for p in ev.msg.body if p.port_no < ofp.OFPP_MAX}
        hub.spawn(self._restore, name)

    def _restore(self, name: str):
        try:
            with self.lock:
                r = self.manager.restore_node(name)
            self.logger.info("node %s audited: %s", name, r)
        except Exception as e:  # noqa: BLE001
            self.logger.error("node %s: restoring service flows failed: %s", name, e)

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def _port_status(self, ev):
        msg = ev.msg
        dp = msg.datapath
        name = self.by_dpid.get(dp.id)
        if name is None:
            return
        ofp = dp.ofproto
        p = msg.desc
        down = msg.reason == ofp.OFPPR_DELETE or bool(p.state & ofp.OFPPS_LINK_DOWN)
        self.ports.setdefault(name, {})[p.port_no] = {
            "name": p.name.decode() if isinstance(p.name, bytes) else p.name, "up": not down}
        if down and self._drop_links_on(name, p.port_no):
            self.logger.info("%.3f node %s port %d down", time.time(), name, p.port_no)
            hub.spawn(self._topology_changed, time.time(), f"port down: {name} port {p.port_no}")

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def _packet_in(self, ev):
        msg = ev.msg
        dp = msg.datapath
        here = self.by_dpid.get(dp.id)
        src = parse_probe(bytes(msg.data))
        if here is None or src is None:
            return
        self.last_rx[here] = time.monotonic()
        there = self.by_dpid.get(src[0])
        if there is None or there == here:
            return
        ln = Link(a=there, a_port=src[1], b=here, b_port=msg.match["in_port"])
        if ln.key not in self.links:
            self.logger.info("link %s discovered", ln.key)
        self.links[ln.key] = (ln, time.monotonic())

    @set_ev_cls(ofp_event.EventOFPBarrierReply, MAIN_DISPATCHER)
    def _barrier(self, ev):
        e = self._waiting.pop(ev.msg.xid, None)
        if e is not None:
            e.set()

    @set_ev_cls(ofp_event.EventOFPFlowStatsReply, MAIN_DISPATCHER)
    def _flow_stats(self, ev):
        entry = self._stats.get(ev.msg.xid)
        if entry is None:
            return
        entry[0].extend(ev.msg.body)
        if not ev.msg.flags & ev.msg.datapath.ofproto.OFPMPF_REPLY_MORE:
            entry[1].set()

    @set_ev_cls(ofp_event.EventOFPErrorMsg, [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def _error(self, ev):
        m = ev.msg
        self._errors[m.xid] = f"OpenFlow error type={m.type} code={m.code}"
        self.logger.error("datapath %016x: OpenFlow error type=%s code=%s xid=%s", m.datapath.id, m.type, m.code,
                          m.xid)

    # ------------------------------------------------------------------ Installer (for ServiceManager)
    def _dp(self, node: str):
        dp = self.dps.get(node)
        if dp is None:
            raise RuntimeError(f"node {node} is not connected")
        return dp

    def _send_and_sync(self, dp, msgs) -> None:
        xids = []
        for m in msgs:
            dp.set_xid(m)
            xids.append(m.xid)
            dp.send_msg(m)
        barrier = of.barrier(dp)
        dp.set_xid(barrier)
        done = hub.Event()
        self._waiting[barrier.xid] = done
        dp.send_msg(barrier)
        if not done.wait(timeout=10):
            self._waiting.pop(barrier.xid, None)
            raise RuntimeError(f"datapath {dp.id:016x} did not answer the barrier within 10 s")
        errs = [self._errors.pop(x) for x in xids if x in self._errors]
        if errs:
            raise RuntimeError(f"datapath {dp.id:016x} rejected {len(errs)} flow(s): {errs[0]}")

    def install(self, node, flows):
        dp = self._dp(node)
        self._send_and_sync(dp, [f.to_flowmod(dp) for f in flows])

    def delete_cookie(self, node, cookie):
        dp = self._dp(node)
        self._send_and_sync(dp, [of.delete_cookie(dp, cookie)])

    def existing(self, node):
        dp = self._dp(node)
        req = of.flow_stats_request(dp, COOKIE_BASE, 0xFFFFFF << 40)
        dp.set_xid(req)
        got, done = [], hub.Event()
        self._stats[req.xid] = (got, done)
        dp.send_msg(req)
        ok = done.wait(timeout=10)
        self._stats.pop(req.xid, None)
        if not ok:
            raise RuntimeError(f"node {node} did not answer the flow statistics request within 10 s")
        return {of.stats_key(s) for s in got}

    def vsctl(self, node, args):
        db = self.node_cfg[node].get("ovsdb")
        if not db:
            raise RuntimeError(f"node {node} has no OVSDB remote configured (needed for VBP bridges)")
        p = procs.run(["ovs-vsctl", f"--db={db}", "--timeout=20", *args], timeout=30, check=False)
        if p.returncode != 0:
            raise RuntimeError(f"ovs-vsctl on {node}: {p.stderr.strip()}")
