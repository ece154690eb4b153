"""Deploy an OSHI topology into network namespaces: one OVS + one FRR per node, CEs, the controller.

    CE namespaces ── veth ──┐                         ┌── veth ── controller namespace (osken-manager + HTTP API)
                            │   node namespace hl-o<lab>-<node>   │
                            │   OVS br-oshi (netdev, fail_mode=secure, LME flows in table 0)
                            │     port N  <->  internal port 1000+N (tap: the Linux IP stack, FRR zebra+ospfd)
                            └── veth ── other nodes (links)

A node with ``harmless: true`` is a HARMLESS node: the built-in lab legacy switch (``harmless.lab.topology``,
emulated Cisco IOS over SSH + its own OVS as data plane) gets one access port per node port, ``harmless up`` (the
real orchestrator, NAPALM against the emulated switch) migrates them, and the node's OpenFlow bridge *is* the
resulting ``br-of-sw1``: br-of port N is legacy port FastEthernet0/N, hairpinned through the trunk and br-otc.
The node's namespace is HARMLESS's server namespace (HARMLESS's private OVS runs there, so the node needs no OVS
of its own: two netdev OVS cannot share a namespace). The lab's host cables are re-used as the cables from the
legacy access ports to the neighbours/CEs (each host's eth0 is moved into the neighbour's namespace).
HARMLESS's state for this node lives in ``<lab dir>/harmless`` (``HARMLESS_STATE_DIR``), separate from any other
deployment.

The controller is reached in-band: every node's ovs-vswitchd connects to 10.254.0.2 through its own IP stack,
i.e. over the OSPF-routed network that the LME flows bridge onto the physical ports (OVS's own "in-band" mode is
off -- ``connection_mode=out-of-band`` -- because the route does not go through the bridge's LOCAL port).
Everything is recorded in ``<state dir>/oshi/<lab>/lab.json``; :func:`down` removes all of it, also after a
failed :func:`up`.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import yaml

from harmless import orchestrator as orch
from harmless import state as st
from harmless.errors import HarmlessError, InputError
from harmless.lab import netns
from harmless.lab import topology as legacy
from harmless.lab.controller import start_controller
from harmless.lab.controller import stop_controller as stop_pid_controller
from harmless.ovs import Ovs
from harmless.oshi import frr as frrmod
from harmless.oshi.topology import LabPlan, NodePlan, TopologyFile, load_topology, make_plan
from harmless.pipelines.oshi.api import ApiClient
from harmless.pipelines.oshi.lme import lme_ofctl
from harmless.procs import free_port

BRIDGE = "br-oshi"
CONTROLLER_APP = "harmless.pipelines.oshi.controller"


def lab_dir(name: str) -> Path:
    return st.state_dir() / "oshi" / name


def frr_dir(name: str, node: str) -> Path:
    return frrmod.RUN_BASE / name / node


def info(name: str) -> dict | None:
    p = lab_dir(name) / "lab.json"
    return json.loads(p.read_text()) if p.exists() else None


def running_labs() -> list[str]:
    d = st.state_dir() / "oshi"
    return sorted(p.parent.name for p in d.glob("*/lab.json")) if d.exists() else []


def api_client(name: str) -> ApiClient:
    i = info(name)
    if i is None:
        raise InputError("--name", f"no OSHI lab named {name!r} is up", "harmless oshi up -t <topology.yaml>")
    return ApiClient(f"unix:{i['api_socket']}")


def _start_controller(plan: LabPlan, d: Path, conf: Path) -> None:
    start_controller(plan.openflow_port, d / "controller.log", app=CONTROLLER_APP, netns=plan.controller_ns,
                     env={"OSHI_CONTROLLER_CONF": str(conf)}, host=plan.controller_ip, pid_file=d / "controller.pid",
                     append_log=True)


def stop_controller(name: str) -> None:
    """Stop the lab's controller process group (idempotent)."""
    stop_pid_controller(lab_dir(name) / "controller.pid")


def restart_controller(name: str, wait_s: float = 60) -> float:
    """Stop and start the lab's controller; return seconds until every node is connected again."""
    i = info(name)
    if i is None:
        raise InputError("--name", f"no OSHI lab named {name!r} is up", "")
    stop_controller(name)
    t0 = time.monotonic()
    plan = make_plan(TopologyFile.model_validate(i["topology"]))
    _start_controller(plan, lab_dir(name), Path(i["controller_conf"]))
    wait_controller(name, len(plan.nodes), len(plan.links), wait_s)
    return time.monotonic() - t0


# ----------------------------------------------------------------------------- up
def up(topology_path: str, progress=lambda m: None, wait_s: float = 90) -> dict:
    """Deploy the topology; wait for OSPF and for the controller to see every node and link.

    Returns the lab description (also ``lab.json``).

    Raises:
        InputError: bad topology file, lab already up, FRR/OVS missing (nothing changed).
        HarmlessError: a step failed (everything built so far is removed).
    """
    t = load_topology(topology_path)
    if os.geteuid() != 0:
        raise InputError("harmless oshi up", "needs root (network namespaces, OVS, FRR)", "run it with sudo")
    if not frrmod.frr_installed():
        raise InputError("frr", "FRR (zebra, ospfd, vtysh) is not installed", "apt-get install frr "
                         "(packaging/install.sh does)")
    if info(t.name) or netns.exists(f"hl-o{t.name}-ctl"):
        raise InputError(topology_path, f"OSHI lab {t.name!r} is already up", f"harmless oshi down --name {t.name}")
    plan = make_plan(t)
    d = lab_dir(t.name)
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True, mode=0o700)
    (d / "topology.yaml").write_text(Path(topology_path).read_text())
    try:
        return _build(t, plan, d, progress, wait_s)
    except BaseException:
        if os.environ.get("HARMLESS_OSHI_KEEP_FAILED"):      # debugging aid: leave the broken lab for inspection
            raise
        progress("failed: tearing down what was built")
        down(t.name)
        raise


def _far_end(plan: LabPlan, node: NodePlan, port) -> tuple[str, str]:
    """(namespace, interface name) at the other end of a node's port."""
    if port.peer:
        return plan.nodes[port.peer].netns, node.name
    if port.controller:
        return plan.controller_ns, "ctl0"
    return plan.ces[port.ce].netns, port.ce_port


def _build(t: TopologyFile, plan: LabPlan, d: Path, progress, wait_s: float) -> dict:
    rec = {"name": t.name, "topology": t.model_dump(mode="json"), "namespaces": [], "nodes": {}, "harmless": None,
           "api_socket": str(d / "api.sock"), "controller_conf": str(d / "controller.json")}
    _save(d, rec)      # so that down() finds a half-built lab
    progress(f"creating namespaces: {len(plan.nodes)} OSHI nodes, {len(plan.ces)} CEs, the controller")
    for n in plan.nodes.values():
        netns.add_ns(n.netns, router=True)
        netns.ip("addr", "add", n.loopback, "dev", "lo", netns=n.netns)
    for c in plan.ces.values():
        netns.add_ns(c.netns)
    netns.add_ns(plan.controller_ns)
    _cable_plain_nodes(plan)
    harmless_node = next((n for n in plan.nodes.values() if n.harmless), None)
    if harmless_node:
        rec["harmless"] = _harmless_node(plan, harmless_node, d, progress)
        _save(d, rec)
    progress("starting one Open vSwitch per OSHI node (userspace datapath) with the LME flows")
    for n in plan.nodes.values():
        rec["nodes"][n.name] = _node_switch(plan, n, d, rec["harmless"], t.name)
        _save(d, rec)
    progress("configuring the CEs and the controller's namespace")
    _address_ces(plan)
    progress("starting FRR (zebra + ospfd) in every node")
    for n in plan.nodes.values():
        base = frr_dir(t.name, n.name)
        frrmod.Frr(base, n.netns).start(
            frrmod.zebra_conf(n.name, base / "zebra.log", n.loopback.split("/")[0]),
            frrmod.ospfd_conf(n.name, n.loopback.split("/")[0], [p.internal for p in n.ports if p.peer],
                              base / "ospfd.log"))
    progress("starting the OSHI controller (os-ken) in its namespace")
    _write_controller_conf(t, d, rec)
    _start_controller(plan, d, Path(rec["controller_conf"]))
    progress("waiting for OSPF to converge")
    t0 = time.monotonic()
    rec["ospf_converged"], rec["ospf_seconds"] = wait_ospf(plan, t.name, wait_s)
    progress(f"OSPF {'converged' if rec['ospf_converged'] else 'NOT converged'} after {rec['ospf_seconds']:.1f} s; "
             "waiting for the controller to see every node and link")
    rec["controller_seconds"] = wait_controller(t.name, len(plan.nodes), len(plan.links),
                                                max(10.0, wait_s - (time.monotonic() - t0)), rec["api_socket"])
    (d / "lab.json").write_text(json.dumps(rec, indent=1))
    return rec


def _save(d: Path, rec: dict) -> None:
    (d / "lab.json").write_text(json.dumps(rec))


def _cable_plain_nodes(plan: LabPlan) -> None:
    """Cables between plain OVS ports and their far ends (a HARMLESS node's cables come from its lab switch)."""
    done = set()
    for n in plan.nodes.values():
        if n.harmless:
            continue
        for p in n.ports:
            far_ns, far_name = _far_end(plan, n, p)
            if p.peer and plan.nodes[p.peer].harmless:
                continue
            key = frozenset((n.name, p.peer)) if p.peer else (n.name, p.name)
            if key in done:
                continue
            done.add(key)
            netns.veth(p.name, n.netns, far_name, far_ns, up=False)
            netns.iface_up(n.netns, p.name)
            netns.iface_up(far_ns, far_name)


def _node_switch(plan: LabPlan, n: NodePlan, d: Path, hrec: dict | None, name: str) -> dict:
    """A node's OpenFlow bridge (its own OVS; a HARMLESS node's is HARMLESS's br-of) with the internal ports to the
    IP stack, the controller (out-of-band) and the LME flows; returns the node's ``lab.json`` record."""
    if n.harmless:
        ovs, bridge = Ovs(Path(hrec["ovs_dir"]), netns=n.netns), hrec["bridge"]
    else:
        ovs, bridge = Ovs(d / "nodes" / n.name / "ovs", netns=n.netns), BRIDGE
        ovs.start()
        args = ["add-br", bridge, "--", "set", "Bridge", bridge, "datapath_type=netdev", "fail_mode=secure",
                "protocols=OpenFlow13", f"other_config:datapath-id={n.dpid:016x}", "other_config:disable-in-band=true"]
        for p in n.ports:
            args += ["--", "add-port", bridge, p.name, "--", "set", "Interface", p.name, f"ofport_request={p.ofport}"]
        ovs.vsctl(*args)
    args = []
    for p in n.ports:
        if p.internal:
            args += (["--"] if args else []) + ["--may-exist", "add-port", bridge, p.internal, "--", "set",
                                                "Interface", p.internal, "type=internal",
                                                f"ofport_request={p.internal_ofport}"]
    ovs.vsctl(*args)
    # controller first: OVS flushes the flow tables when a bridge's controller set changes
    if not n.harmless:
        ovs.vsctl("set-controller", bridge, f"tcp:{plan.controller_ip}:{plan.openflow_port}")
    uuid = ovs.vsctl("get", "Bridge", bridge, "controller").strip().strip("[]").split(",")[0].strip()
    ovs.vsctl("set", "Controller", uuid, "connection_mode=out-of-band", "max_backoff=1000")
    ovs.ofctl("-O", "OpenFlow13", "add-flows", bridge, "-", stdin=lme_ofctl(n.port_pairs()))
    for p in n.ports:
        if p.internal:
            netns.iface_up(n.netns, p.internal, p.ip)
    return {"netns": n.netns, "ovs_dir": str(ovs.base_dir), "bridge": bridge, "dpid": n.dpid,
            "frr_dir": str(frr_dir(name, n.name)), "ports": {p.name: p.ofport for p in n.ports},
            "edge_ports": n.edge_ports(), "harmless": n.harmless}


def _address_ces(plan: LabPlan) -> None:
    """CE addresses and default routes; the controller's address and its route into the OSHI network."""
    for c in plan.ces.values():
        netns.ip("addr", "add", c.ip, "dev", "ip", netns=c.netns)
        netns.ip("route", "add", "default", "via", c.gateway, netns=c.netns)
        for port, addr in c.service_ips.items():
            netns.ip("addr", "add", addr, "dev", port, netns=c.netns)
    netns.ip("addr", "add", f"{plan.controller_ip}/24", "dev", "ctl0", netns=plan.controller_ns)
    netns.ip("route", "add", "default", "via", "10.254.0.1", netns=plan.controller_ns)


def _write_controller_conf(t: TopologyFile, d: Path, rec: dict) -> None:
    conf = {"state_file": str(d / "services.json"), "api_socket": rec["api_socket"],
            "label_range": list(t.label_range), "discovery_interval_s": 1.0, "link_timeout_s": 5.0,
            "nodes": {n: {"dpid": v["dpid"], "bridge": v["bridge"],
                          "ovsdb": f"unix:{Path(v['ovs_dir']) / 'run' / 'db.sock'}", "edge_ports": v["edge_ports"]}
                      for n, v in rec["nodes"].items()}}
    Path(rec["controller_conf"]).write_text(json.dumps(conf, indent=1))


def _harmless_node(plan: LabPlan, node: NodePlan, d: Path, progress) -> dict:
    """Build the HARMLESS node: lab legacy switch + harmless up; cable its access ports to the far ends."""
    hd = d / "harmless"
    lab_name = f"o{plan.name}"
    ofports = tuple(p.ofport for p in node.ports)
    with st.using(hd):
        progress(f"{node.name} is a HARMLESS node: starting the lab legacy switch with access ports {list(ofports)}")
        linfo = legacy.lab_up(legacy.LabSpec(name=lab_name, ssh_port=free_port(2399), hosts=ofports,
                                             server_netns=node.netns), progress)
        # the lab's host cables become the cables from the legacy access ports to the neighbours / CEs
        for p in node.ports:
            far_ns, far_name = _far_end(plan, node, p)
            h_ns = linfo["hosts"][str(p.ofport)]["netns"]
            netns.ip("link", "set", "eth0", "down", netns=h_ns)
            netns.move("eth0", h_ns, far_ns, far_name)
            netns.ip("addr", "flush", "dev", far_name, netns=far_ns)
            netns.iface_up(far_ns, far_name)
            netns.ip("netns", "del", h_ns)
        inv = legacy.inventory(linfo, [f"tcp:{plan.controller_ip}:{plan.openflow_port}"])
        inv["switches"][0]["datapath_id"] = f"{node.dpid:#018x}"
        inv_path = d / "inventory.yaml"
        inv_path.write_text(yaml.safe_dump(inv, sort_keys=False))
        progress("harmless up: migrating the legacy access ports (tagging on the switch, br-otc + br-of on the node)")
        # the controller is reached in-band over OSPF, which converges only after the nodes are up: do not wait for it
        res = orch.up(str(inv_path), progress, wait_controller=0)
        sp = res.plan["switches"][0]
        got = {p["ofport"] for p in sp["ports"]}
        if got != set(ofports):
            raise HarmlessError("oshi lab", f"HARMLESS gave OpenFlow ports {sorted(got)}, expected {list(ofports)}", "")
        return {"lab": lab_name, "state_dir": str(hd), "ovs_dir": str(hd / "ovs"), "bridge": sp["bridge"],
                "plan": sp["ports"], "switch_netns": linfo["switch_netns"]}


# ----------------------------------------------------------------------------- waiting
def wait_ospf(plan: LabPlan, name: str, wait_s: float) -> tuple[bool, float]:
    """Wait until every node has one Full OSPF adjacency per link. Returns (converged, seconds)."""
    t0 = time.monotonic()
    want = {n.name: sum(1 for p in n.ports if p.peer) for n in plan.nodes.values()}
    while True:
        ok = all(frrmod.Frr(frr_dir(name, n), plan.nodes[n].netns).ospf_neighbors_full() >= k
                 for n, k in want.items())
        if ok or time.monotonic() - t0 > wait_s:
            return ok, time.monotonic() - t0
        time.sleep(0.5)


def wait_controller(name: str, n_nodes: int, n_links: int, wait_s: float, sock: str | None = None) -> float:
    """Wait until the controller reports every node connected and every link discovered. Returns seconds.

    Raises:
        HarmlessError: not within ``wait_s`` (the controller log is named).
    """
    t0 = time.monotonic()
    client = ApiClient(f"unix:{sock or info(name)['api_socket']}", timeout=5)
    last = {}
    while time.monotonic() - t0 < wait_s:
        try:
            last = client.status()
            if sum(v["connected"] for v in last["nodes"].values()) == n_nodes and len(last["links"]) >= n_links:
                return time.monotonic() - t0
        except HarmlessError:
            pass
        time.sleep(0.5)
    conn = [n for n, v in last.get("nodes", {}).items() if v["connected"]]
    raise HarmlessError("oshi controller", f"after {wait_s:.0f} s: {len(conn)}/{n_nodes} nodes connected "
                        f"({', '.join(conn) or 'none'}), {len(last.get('links', []))}/{n_links} links discovered",
                        f"see {lab_dir(name) / 'controller.log'}")


# ----------------------------------------------------------------------------- down
def down(name: str, progress=lambda m: None) -> bool:
    """Remove the lab (idempotent, also after a failed up): controller, FRR, OVS, HARMLESS deployment + lab switch,
    namespaces, files. Returns True if anything was there."""
    d = lab_dir(name)
    rec = info(name) or {}
    found = d.exists()
    stop_controller(name)
    base = frrmod.RUN_BASE / name
    frrmod.stop_all([frrmod.Frr(sub, f"hl-o{name}-{sub.name}") for sub in base.glob("*")] if base.exists() else [])
    nodes_dir = d / "nodes"
    # each stop waits seconds for vswitchd to exit
    netns.stop_ovs_all([(nd / "ovs", f"hl-o{name}-{nd.name}") for nd in nodes_dir.glob("*") if (nd / "ovs").exists()]
                       if nodes_dir.exists() else [])
    hd = d / "harmless"
    if hd.exists():
        with st.using(hd):
            if st.load():
                progress("harmless down (restoring the legacy switch's config)")
                try:
                    orch.down(progress)
                except HarmlessError as e:
                    progress(f"harmless down failed: {e}")
                    netns.stop_ovs(hd / "ovs", f"hl-o{name}-{_harmless_name(rec)}")
            legacy.lab_down(f"o{name}")
    found = netns.remove_prefixed(f"hl-o{name}-") or found
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(d, ignore_errors=True)
    return found


def _harmless_name(rec: dict) -> str:
    for n, v in rec.get("nodes", {}).items():
        if v.get("harmless"):
            return n
    for n in (rec.get("topology") or {}).get("nodes", []):
        if n.get("harmless"):
            return n["name"]
    return "x"


def ping(ns: str, dst: str, count: int = 3, interval: float = 0.2, src: str | None = None) -> float:
    """Ping ``dst`` from namespace ``ns``; return the loss in percent."""
    return netns.ping(ns, dst, count, interval, src)
