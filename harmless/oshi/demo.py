"""``harmless oshi demo``: the OSHI lab end to end, with real packets, then full cleanup.

up (namespaces, OVS + FRR per node, the HARMLESS node's legacy switch + ``harmless up``, controller) → OSPF
converged → best-effort ping between CEs → the topology file's services (an IP VLL, a pseudowire, a VSS) created
through the HTTP API → pings over each → transit evidence (table-1 counters of the VLL's transit node rise;
``ofproto/trace`` there shows the label swap) → optionally a link failure on the VLL's path (outage measured with a
50 ms ping) → down. Everything started is stopped, also on failure or Ctrl-C.
"""
from __future__ import annotations

import itertools
import re
import subprocess
import time
from pathlib import Path

from harmless.lab import netns
from harmless.ovs import Ovs
from harmless.oshi import lab
from harmless.oshi.topology import LabPlan, load_topology, make_plan
from harmless.procs import spawn

DEFAULT_TOPOLOGY = Path(__file__).resolve().parents[2] / "examples" / "oshi-demo.yaml"


def table1_packets(ovs: Ovs, bridge: str, cookie: int) -> int:
    """Sum of n_packets of table-1 flows carrying ``cookie``."""
    out = ovs.ofctl("-O", "OpenFlow13", "dump-flows", bridge, f"table=1,cookie={cookie:#x}/-1")
    return sum(int(m) for m in re.findall(r"n_packets=(\d+)", out))


def node_ovs(rec: dict, node: str) -> tuple[Ovs, str]:
    v = rec["nodes"][node]
    return Ovs(Path(v["ovs_dir"]), netns=v["netns"]), v["bridge"]


def _ip_of(plan: LabPlan, ref: str) -> tuple[str, str]:
    """``ce.port`` -> (CE namespace, address on that port)."""
    ce, port = ref.split(".", 1)
    return plan.ces[ce].netns, plan.ces[ce].service_ips[port].split("/")[0]


def outage_ping(ns: str, dst: str, count: int, log_file: Path, interval: float = 0.05) -> subprocess.Popen:
    """Start ``ping -D`` (timestamps) from ``ns`` to ``dst`` every ``interval`` s, its output in ``log_file``."""
    return spawn(["ping", "-D", "-n", "-c", str(count), "-i", str(interval), "-W", "1", dst], log_file, netns=ns)


def outage_seconds(ping_output: str) -> tuple[float, int, int]:
    """(longest time between two consecutive replies that have lost requests between them, in s; replies; requests
    lost in that gap) from ``ping -D`` output."""
    pts = [(float(m.group(1)), int(m.group(2))) for m in
           (re.match(r"^\[([\d.]+)\] \d+ bytes from .* icmp_seq=(\d+) ", ln) for ln in ping_output.splitlines()) if m]
    best, lost = 0.0, 0
    for (t0, s0), (t1, s1) in zip(pts, pts[1:]):
        if s1 - s0 > 1 and t1 - t0 > best:
            best, lost = t1 - t0, s1 - s0 - 1
    return best, len(pts), lost


def run(topology: str | None = None, progress=lambda m: None, pings: int = 5, failover: bool = True,
        keep: bool = False) -> dict:
    """Run the demo; return the summary (see module doc). ``keep`` leaves the lab up (for exploring).

    Raises:
        InputError: bad topology / lab already up. HarmlessError: a step failed (after cleaning up).
    """
    path = topology or str(DEFAULT_TOPOLOGY)
    t = load_topology(path)
    plan = make_plan(t)
    s: dict = {"lab": t.name, "nodes": len(plan.nodes), "ces": len(plan.ces), "links": len(plan.links),
               "harmless_nodes": [n.name for n in plan.nodes.values() if n.harmless]}
    t0 = time.monotonic()
    try:
        rec = lab.up(path, progress)
        s["ospf_converged"], s["ospf_seconds"] = rec["ospf_converged"], round(rec["ospf_seconds"], 1)
        s["controller_seconds"] = round(rec["controller_seconds"], 1)
        client = lab.api_client(t.name)
        st = client.status()
        s["links_discovered"] = len(st["links"])
        ces = list(plan.ces.values())
        progress(f"best-effort IP (OSPF-routed): {ces[0].name} -> {ces[-1].name}")
        s["ip_ping_loss_pct"] = lab.ping(ces[0].netns, ces[-1].ip.split("/")[0], count=pings)
        created = _create_services(t, plan, client, progress)
        s["services"] = {n: _service_summary(r) for n, r in created.items()}
        # the VLL's transit node: counters and trace
        vll = next((spec for spec in t.services if spec.kind == "vll"), None)
        transit = _transit(created[vll.name]) if vll else None
        if transit:
            ovs, br = node_ovs(rec, transit[0])
            before = table1_packets(ovs, br, int(created[vll.name]["cookie"], 16))
        s.update(_ping_services(t, plan, pings, progress))
        if transit:
            s.update(_transit_evidence(rec, transit, int(created[vll.name]["cookie"], 16), before))
        if failover and vll and transit:
            s["failover"] = _failover(t, plan, rec, client, vll, created[vll.name], progress)
        if keep:
            progress(f"--keep: the lab stays up (harmless oshi down --name {t.name})")
    finally:
        if not keep:
            progress("tearing the lab down")
            s["cleaned_up"] = True
            lab.down(t.name, progress)
    s["seconds"] = round(time.monotonic() - t0, 1)
    s["ok"] = bool(s.get("ospf_converged") and s.get("vll_ping_loss_pct") == 0 and s.get("pw_ping_loss_pct") == 0
                   and s.get("vss_ping_loss_pct") == 0 and s.get("ip_ping_loss_pct") == 0
                   and s.get("vll_transit_swap_seen", True) and s.get("failover", {}).get("restored", True))
    return s


def _create_services(t, plan: LabPlan, client, progress) -> dict:
    """The topology file's services, created through the controller's API; returns {name: service record}."""
    created = {}
    for spec in t.services:
        eps = [dict(zip(("node", "port"), plan.endpoint(e))) for e in spec.endpoints]
        progress(f"creating {spec.kind} {spec.name} between {', '.join(spec.endpoints)}")
        created[spec.name] = client.create({"name": spec.name, "kind": spec.kind, "endpoints": eps,
                                            "vss_mode": spec.vss_mode})
    return created


def _service_summary(r: dict) -> dict:
    """A service's kind, node paths, labels per hop, VBP nodes and cookie."""
    return {"kind": r["kind"],
            "paths": [[r["segments"][i]["a"]["node"]] + [h["v"] for h in seg["hops"]]
                      for i, seg in enumerate(r["segments"])],
            "labels": [[h["label"] for h in seg["hops"]] for seg in r["segments"]],
            "vbps": [v["node"] for v in r["vbps"]], "cookie": r["cookie"]}


def _transit(vrec: dict) -> tuple | None:
    """(node, in port, label in, label out, out port) of the VLL's first transit node, or None (no transit)."""
    seg = vrec["segments"][0]
    if len(seg["hops"]) < 2:
        return None
    h1, h2 = seg["hops"][0], seg["hops"][1]
    return h1["v"], h1["v_port"], h1["label"], h2["label"], h2["u_port"]


def _ping_services(t, plan: LabPlan, pings: int, progress) -> dict:
    """Ping between every pair of end points of every service; mean loss and pings sent per kind."""
    s: dict = {}
    for kind in ("vll", "pw", "vss"):
        losses = []
        for spec in [x for x in t.services if x.kind == kind]:
            for a, b in itertools.combinations(spec.endpoints, 2):
                ns, _ = _ip_of(plan, a)
                _, dst = _ip_of(plan, b)
                progress(f"{kind} {spec.name}: ping {a} -> {b} ({dst})")
                losses.append(lab.ping(ns, dst, count=pings))
        s[f"{kind}_ping_loss_pct"] = round(sum(losses) / len(losses), 1) if losses else None
        s[f"{kind}_pings"] = len(losses) * pings
    return s


def _transit_evidence(rec: dict, transit: tuple, cookie: int, before: int) -> dict:
    """The VLL transit node's table-1 packets since ``before`` and the label swap in ``ofproto/trace``."""
    node, in_port, lab_in, lab_out, out_port = transit
    ovs, br = node_ovs(rec, node)
    s: dict = {"vll_transit_node": node, "vll_transit_table1_packets": table1_packets(ovs, br, cookie) - before}
    tr = ovs.appctl("ofproto/trace", br, f"in_port={in_port},dl_type=0x8847,mpls_label={lab_in},"
                    "dl_src=02:00:00:00:00:01,dl_dst=02:00:00:00:00:02")
    s["vll_transit_trace"] = next((ln.split(":", 1)[1].strip() for ln in tr.splitlines()
                                   if ln.startswith("Datapath actions")), "")
    s["vll_transit_swap"] = f"{lab_in}->{lab_out}"
    s["vll_transit_swap_seen"] = (f"label={lab_out}" in s["vll_transit_trace"] and
                                  f"set_field:{lab_out}->mpls_label" in tr)
    return s


def _failover(t, plan, rec, client, vll, vrec, progress) -> dict:
    """Take down the first VLL link whose far end is a plain OVS port (so the port-down reaches the controller),
    measure the VLL outage with a 50 ms ping, and check the service was re-routed."""
    seg = vrec["segments"][0]
    hop = next((h for h in seg["hops"] if not plan.nodes[h["v"]].harmless), seg["hops"][-1])
    node, dev = hop["v"], hop["u"]          # the interface in v's namespace named after u
    src_ns, _ = _ip_of(plan, vll.endpoints[0])
    _, dst = _ip_of(plan, vll.endpoints[1])
    progress(f"link failure: {hop['u']}-{hop['v']} down while pinging over {vll.name} every 50 ms")
    log = lab.lab_dir(t.name) / "outage-ping.log"
    p = outage_ping(src_ns, dst, count=200, log_file=log)
    time.sleep(2)
    netns.ip("link", "set", dev, "down", netns=plan.nodes[node].netns)
    p.wait(timeout=60)
    gap, replies, lost = outage_seconds(log.read_text())
    new = client.service(vll.name)
    path = [new["segments"][0]["a"]["node"]] + [h["v"] for h in new["segments"][0]["hops"]]
    evs = [e for e in client.status()["events"] if e["service"] == vll.name]
    after = lab.ping(src_ns, dst, count=5)
    return {"link": f"{hop['u']}-{hop['v']}", "vll_outage_s": round(gap, 2), "vll_lost_pings": lost,
            "vll_path_before": [seg["a"]["node"]] + [h["v"] for h in seg["hops"]], "vll_path_after": path,
            "reroute_s": round(evs[-1]["at"] - evs[-1]["detected"], 2) if evs and evs[-1].get("detected") else None,
            "vll_ping_loss_after_pct": after, "restored": after == 0 and path != [seg["a"]["node"]] +
            [h["v"] for h in seg["hops"]]}
