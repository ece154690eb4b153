"""OSHI service planning, flows, labels and the service life cycle (pure logic; a recording installer)."""
from __future__ import annotations

import json

import pytest

from harmless.pipelines.oshi import paths
from harmless.pipelines.oshi.api import make_app
from harmless.pipelines.oshi.labels import LabelAllocator, LabelSpaceExhausted
from harmless import openflow as of
from harmless.pipelines.oshi.lme import LME_COOKIE, lme_flows, lme_ofctl
from harmless.pipelines.oshi.manager import ServiceManager, flow_key
from harmless.pipelines.oshi.model import Endpoint, Link, NodeView, ServiceRequest, Topology, service_cookie
from harmless.pipelines.oshi.services import ServiceError, plan_service, reroute, service_flows
from tests.lib.fakeoftable import FakeDatapath, FakeOFNetwork, FakeOFTable


def ring(connected=True) -> Topology:
    """pe1 - pe2 - pe3 - cr1 - pe1; port 1/2 core, CE ports 4.. on the PEs."""
    nodes = {
        "pe1": NodeView(dpid=1, edge_ports={"ce1-vll": 4, "ce1-vss": 5, "ce1-x": 6}, connected=connected),
        "pe2": NodeView(dpid=2, edge_ports={"ce2-pw": 4, "ce2-vss": 5}, connected=connected),
        "pe3": NodeView(dpid=3, edge_ports={"ce3-vll": 4, "ce3-pw": 5, "ce3-vss": 6, "ce3-x": 7}, connected=connected),
        "cr1": NodeView(dpid=4, edge_ports={}, connected=connected),
    }
    links = [Link(a="pe1", a_port=1, b="pe2", b_port=1), Link(a="pe2", a_port=2, b="pe3", b_port=1),
             Link(a="pe3", a_port=2, b="cr1", b_port=1), Link(a="cr1", a_port=2, b="pe1", b_port=2)]
    return Topology(nodes=nodes, links=links)


def req(name, kind, *eps, **kw) -> ServiceRequest:
    return ServiceRequest(name=name, kind=kind, endpoints=[Endpoint.parse(e) for e in eps], **kw)


def network(topo: Topology, *recs) -> FakeOFNetwork:
    """Every node a fake switch: the LME flows as ``harmless oshi up`` writes them (ovs-ofctl text), the services'
    flows as the controller sends them (FLOW_MODs); the links are patch ports."""
    nodes = {}
    for n in topo.nodes:
        t = FakeOFTable(name=n).add_ofctl(lme_ofctl({}))
        nodes[n] = t.apply_ofmsgs([f.to_flowmod(FakeDatapath()) for r in recs for f in service_flows(r).get(n, [])])
    return FakeOFNetwork(nodes, [((ln.a, ln.a_port), (ln.b, ln.b_port)) for ln in topo.links])


def headers(pkt: dict) -> dict:
    return {k: v for k, v in pkt.items() if k != "in_port"}


IP = dict(eth_src="02:00:00:00:00:0a", eth_dst="02:00:00:00:00:0b", eth_type=0x0800, ipv4_src="10.9.0.1")


def flows_by_node(rec):
    return {n: [f.to_ofctl() for f in fl] for n, fl in service_flows(rec).items()}


# ----------------------------------------------------------------------------- planning and flows
def test_vll_push_at_ingress_swap_in_transit_pop_at_egress_with_arp_on_0x8848():
    rec = plan_service(req("v", "vll", "pe1:ce1-vll", "pe3:ce3-vll"), ring(), [], 1, (16, 100))
    seg = rec.segments[0]
    assert seg.nodes == ["pe1", "cr1", "pe3"]                      # 2 hops; ties broken by name
    l1, l2 = (h.label for h in seg.hops)
    assert l1 != l2                                                   # transit visibly swaps
    f = flows_by_node(rec)
    c = f"cookie={service_cookie(1):#x}"
    assert f"{c},table=0,priority=250,in_port=4,dl_type=0x0800,actions=push_mpls:0x8847,set_field:{l1}->mpls_label,output:2" in f["pe1"]
    assert f"{c},table=0,priority=250,in_port=4,dl_type=0x0806,actions=push_mpls:0x8848,set_field:{l1}->mpls_label,output:2" in f["pe1"]
    assert f"{c},table=0,priority=249,in_port=4,actions=drop" in f["pe1"]
    assert f"{c},table=1,priority=250,in_port=2,dl_type=0x8847,mpls_label={l1},actions=set_field:{l2}->mpls_label,output:1" in f["cr1"]
    assert f"{c},table=1,priority=250,in_port=2,dl_type=0x8848,mpls_label={l2},actions=pop_mpls:0x0806,output:4" in f["pe3"]
    # reverse direction uses the same labels on the same links
    assert f"{c},table=1,priority=250,in_port=1,dl_type=0x8847,mpls_label={l2},actions=set_field:{l1}->mpls_label,output:2" in f["cr1"]
    assert f"{c},table=1,priority=250,in_port=2,dl_type=0x8847,mpls_label={l1},actions=pop_mpls:0x0800,output:4" in f["pe1"]
    # packet fate: IP and ARP cross pe1 -> cr1 -> pe3 with their Ethernet header, in both directions; the rest drops
    net = network(ring(), rec)
    for frame in (IP, {**IP, "eth_type": 0x0806}):
        there = net.fate("pe1", 4, **frame)
        assert there.ports == [("pe3", 4)] and headers(there.on("pe3", 4)) == frame
        assert [sw for sw, _, _ in there.hits] == ["pe1", "cr1", "cr1", "pe3", "pe3"]
        assert net.fate("pe3", 4, **frame).ports == [("pe1", 4)]
    assert net.fate("pe1", 4, **{**IP, "eth_type": 0x86DD}).dropped


def test_pw_is_eompls_with_encap_and_decap_and_vlan_end_points_pop_and_push_the_tag():
    rec = plan_service(req("p", "pw", "pe2:ce2-pw.100", "pe3:5"), ring(), [], 7, (16, 100))
    f = flows_by_node(rec)
    lab = rec.segments[0].hops[0].label
    ingress = next(x for x in f["pe2"] if "table=0" in x)
    assert "in_port=4,dl_vlan=100,actions=pop_vlan,encap(mpls)," in ingress
    assert f"set_field:{lab}->mpls_label,encap(ethernet)" in ingress and ingress.endswith("output:2")
    egress_pe2 = next(x for x in f["pe2"] if "table=1" in x)
    assert "decap(),decap(packet_type(ns=0,type=0)),push_vlan:0x8100,set_field:4196->vlan_vid,output:4" in egress_pe2
    assert not any("0x8848" in x for fl in f.values() for x in fl)    # no ARP trick needed: whole frames
    # packet fate: the customer's frame tagged 100 at pe2 leaves pe3 port 5 untagged and unchanged, and back
    net = network(ring(), rec)
    there = net.fate("pe2", 4, vlan_vid=of.vid_present(100), **IP)
    assert there.ports == [("pe3", 5)] and headers(there.on("pe3", 5)) == IP
    back = net.fate("pe3", 5, **{**IP, "eth_type": 0x86DD})                 # any ethertype: Ethernet over MPLS
    assert back.ports == [("pe2", 4)] and back.on("pe2", 4)["vlan_vid"] == of.vid_present(100)
    assert net.fate("pe2", 4, vlan_vid=of.vid_present(101), **IP).dropped  # another VLAN is not the service's


def test_vss_optimized_puts_a_vbp_at_the_steiner_branching_point():
    rec = plan_service(req("s", "vss", "pe1:ce1-vss", "pe2:ce2-vss", "pe3:ce3-vss"), ring(), [], 3, (16, 100))
    assert [v.node for v in rec.vbps] == ["pe2"] and rec.vbps[0].ports == [4000, 4001, 4002]
    assert sorted(s.nodes for s in rec.segments) == [["pe1", "pe2"], ["pe2"], ["pe3", "pe2"]]
    # every segment ends on a VBP patch port
    assert all(s.b.node == "pe2" and s.b.port >= 4000 for s in rec.segments)


def test_vss_random_uses_one_vbp_and_shortest_paths():
    import random
    rec = plan_service(req("s", "vss", "pe1:ce1-vss", "pe3:ce3-vss", vss_mode="random"), ring(), [], 3, (16, 100),
                       random.Random(4))
    assert len(rec.vbps) == 1
    vbp = rec.vbps[0].node
    assert all(s.nodes[-1] == vbp for s in rec.segments)


def test_steiner_branching_points_and_tree_segments():
    import networkx as nx
    g = nx.star_graph(["c", "a", "b", "d"])          # c in the middle
    assert paths.branching_points(g, {"a": 1, "b": 1, "d": 1}) == ["c"]
    ep, vv = paths.tree_segments(g, ["c"], ["a", "b", "d"])
    assert ep == [["a", "c"], ["b", "c"], ["d", "c"]] and vv == []
    assert paths.branching_points(nx.path_graph(["a", "b"]), {"a": 1, "b": 1}) == ["a"]   # fallback


# ----------------------------------------------------------------------------- bad requests
@pytest.mark.parametrize("eps,status,text", [
    (["nope:1", "pe3:ce3-vll"], 404, "unknown node 'nope'"),
    (["pe1:99", "pe3:ce3-vll"], 404, "no edge port 99"),
    (["pe1:bogus", "pe3:ce3-vll"], 404, "no edge port named 'bogus'"),
    (["pe1:1", "pe3:ce3-vll"], 404, "no edge port 1"),                 # a core port is no end point
    (["pe1:ce1-vll", "pe1:4"], 409, "duplicates endpoints[0]"),
    (["pe1:ce1-vll.5", "pe1:ce1-vll"], 409, "duplicates"),              # VLAN end point vs whole port
])
def test_bad_end_points_are_rejected(eps, status, text):
    with pytest.raises(ServiceError) as ei:
        plan_service(req("v", "vll", *eps), ring(), [], 1, (16, 100))
    assert ei.value.status == status and text in ei.value.problem
    assert ei.value.exit_code == 2


def test_end_point_of_another_service_and_offline_node_and_no_path():
    first = plan_service(req("a", "vll", "pe1:ce1-vll", "pe3:ce3-vll"), ring(), [], 1, (16, 100))
    with pytest.raises(ServiceError) as ei:
        plan_service(req("b", "pw", "pe1:ce1-vll.7", "pe3:ce3-pw"), ring(), [first], 2, (16, 100))
    assert ei.value.status == 409 and "already used by service 'a'" in ei.value.problem
    # different VLANs on one port are fine
    r1 = plan_service(req("c", "pw", "pe2:ce2-pw.7", "pe3:ce3-pw"), ring(), [first], 2, (16, 100))
    plan_service(req("d", "pw", "pe2:ce2-pw.8", "pe3:ce3-x"), ring(), [first, r1], 3, (16, 100))
    t = ring()
    t.nodes["pe3"].connected = False
    with pytest.raises(ServiceError) as ei:
        plan_service(req("e", "pw", "pe2:ce2-pw", "pe3:ce3-pw"), t, [], 1, (16, 100))
    assert ei.value.status == 503 and "not connected" in ei.value.problem
    t = ring()
    t.links = [ln for ln in t.links if "pe3" not in (ln.a, ln.b)]
    with pytest.raises(ServiceError) as ei:
        plan_service(req("e", "pw", "pe2:ce2-pw", "pe3:ce3-pw"), t, [], 1, (16, 100))
    assert ei.value.status == 503 and "no path" in ei.value.problem


def test_label_space_exhausted_is_a_clear_error_and_allocates_nothing():
    t = ring()
    a = plan_service(req("a", "pw", "pe2:ce2-pw", "pe3:ce3-pw"), t, [], 1, (16, 16))
    with pytest.raises(ServiceError) as ei:
        plan_service(req("b", "pw", "pe2:ce2-vss", "pe3:ce3-vss"), t, [a], 2, (16, 16))
    assert ei.value.status == 503 and "no free MPLS label in 16..16 on link pe2:2|pe3:1" in ei.value.problem
    alloc = LabelAllocator(16, 17)
    assert [alloc.allocate("l"), alloc.allocate("l")] == [16, 17]
    with pytest.raises(LabelSpaceExhausted):
        alloc.allocate("l")
    alloc.release("l", 16)
    assert alloc.allocate("l") == 16
    with pytest.raises(ValueError):
        LabelAllocator(0, 10)                        # 0-15 are reserved (RFC 3032)


def test_labels_are_unique_per_link_and_reused_across_links():
    t = ring()
    recs = []
    for i, (a, b) in enumerate([("pe1:ce1-vll", "pe3:ce3-vll"), ("pe1:ce1-vss", "pe3:ce3-vss"),
                                ("pe1:ce1-x", "pe3:ce3-x")], start=1):
        recs.append(plan_service(req(f"s{i}", "vll", a, b), t, recs, i, (16, 100)))
    per_link = {}
    for r in recs:
        for link, labels in r.labels().items():
            assert not labels & per_link.get(link, set())
            per_link.setdefault(link, set()).update(labels)


# ----------------------------------------------------------------------------- manager (life cycle)
class FakeInstaller:
    """Records flows per node like a switch table (keyed like OpenFlow: table, priority, cookie, match)."""

    def __init__(self, fail_on: str | None = None):
        self.tables: dict[str, dict[tuple, str]] = {}
        self.vsctl_calls: list[tuple[str, list[str]]] = []
        self.fail_on = fail_on
        self.installs = 0

    def install(self, node, flows):
        if node == self.fail_on:
            raise RuntimeError(f"datapath {node} rejected 1 flow(s)")
        self.installs += len(flows)
        for f in flows:
            self.tables.setdefault(node, {})[flow_key(f)] = f.to_ofctl()

    def delete_cookie(self, node, cookie):
        t = self.tables.get(node, {})
        for k in [k for k in t if k[2] == cookie]:
            del t[k]

    def vsctl(self, node, args):
        self.vsctl_calls.append((node, args))

    def existing(self, node):
        return set(self.tables.get(node, {}))

    def snapshot(self):
        return json.dumps({n: sorted(t.values()) for n, t in self.tables.items()}, sort_keys=True)


def body(name, kind, *eps, **kw):
    return {"name": name, "kind": kind, "endpoints": [Endpoint.parse(e).model_dump(exclude_none=True) for e in eps],
            **kw}


@pytest.fixture
def topo():
    t = ring()
    return lambda: t


def test_create_list_delete_by_cookie(tmp_path, topo):
    inst = FakeInstaller()
    m = ServiceManager(tmp_path / "s.json", topo, inst, (16, 100))
    r = m.create(body("v", "vll", "pe1:ce1-vll", "pe3:ce3-vll"))
    s = m.create(body("s", "vss", "pe1:ce1-vss", "pe2:ce2-vss", "pe3:ce3-vss"))
    assert [x.name for x in m.list()] == ["v", "s"] and r.id == 1 and s.id == 2
    assert set(inst.tables) == {"pe1", "cr1", "pe3", "pe2"}
    assert inst.vsctl_calls and "vbp2" in inst.vsctl_calls[0][1]
    m.delete("v")
    assert not any(k[2] == r.cookie for t in inst.tables.values() for k in t)
    assert any(k[2] == s.cookie for t in inst.tables.values() for k in t)
    with pytest.raises(ServiceError) as ei:
        m.delete("v")
    assert ei.value.status == 404


def test_rejected_and_failed_requests_change_nothing(tmp_path, topo):
    inst = FakeInstaller()
    m = ServiceManager(tmp_path / "s.json", topo, inst, (16, 16))
    m.create(body("a", "pw", "pe2:ce2-pw", "pe3:ce3-pw"))
    snap, state = inst.snapshot(), (tmp_path / "s.json").read_text()
    for b, status in [(body("b", "pw", "nope:1", "pe3:ce3-vss"), 404),
                      (body("b", "pw", "pe2:ce2-pw", "pe3:ce3-vss"), 409),
                      (body("a", "pw", "pe1:ce1-x", "pe3:ce3-x"), 409),
                      (body("b", "pw", "pe2:ce2-vss", "pe3:ce3-vss"), 503),          # label space 16..16 exhausted
                      ({"name": "b", "kind": "tunnel", "endpoints": []}, 400),
                      ({"name": "b", "kind": "pw", "endpoints": [{"node": "pe1"}]}, 400)]:
        with pytest.raises(ServiceError) as ei:
            m.create(b)
        assert ei.value.status == status, (b, ei.value)
    assert inst.snapshot() == snap and (tmp_path / "s.json").read_text() == state
    # an installation failure half-way is rolled back
    bad = FakeInstaller(fail_on="pe3")
    m2 = ServiceManager(tmp_path / "t.json", topo, bad, (16, 100))
    with pytest.raises(ServiceError) as ei:
        m2.create(body("v", "vll", "pe1:ce1-vll", "pe3:ce3-vll"))
    assert ei.value.status == 500 and "rejected" in ei.value.problem
    assert all(not t for t in bad.tables.values()) and m2.list() == [] and not (tmp_path / "t.json").exists()


def test_restart_reloads_state_reallocates_nothing_and_audits_flows(tmp_path, topo):
    inst = FakeInstaller()
    m = ServiceManager(tmp_path / "s.json", topo, inst, (16, 100))
    m.create(body("v", "vll", "pe1:ce1-vll", "pe3:ce3-vll"))
    m.create(body("p", "pw", "pe2:ce2-pw", "pe3:ce3-pw"))
    m.delete("v")
    before = [r.model_dump() for r in m.list()]
    snap = inst.snapshot()
    # a new controller process: same state file, the switches still hold their flows
    m2 = ServiceManager(tmp_path / "s.json", topo, inst, (16, 100))
    assert [r.model_dump() for r in m2.list()] == before
    n0 = inst.installs
    for node in ("pe1", "pe2", "pe3", "cr1"):
        m2.restore_node(node)
    assert inst.installs == n0 and inst.snapshot() == snap         # nothing re-added, nothing removed
    # a node that lost its flows gets them back; a stale service's flows go
    inst.tables["pe3"] = {}
    inst.tables["cr1"][(1, 250, service_cookie(99), frozenset())] = "stale"
    assert m2.restore_node("pe3")["added"] > 0
    assert m2.restore_node("cr1")["stale_cookies_deleted"] == 1
    assert inst.snapshot() == snap
    # ids and labels of live services are never handed out again
    new = m2.create(body("n", "pw", "pe2:ce2-vss", "pe3:ce3-vss"))
    assert new.id == 3                                              # 1 was deleted, but ids only grow
    p = m2.get("p")
    assert new.segments[0].hops[0].link == p.segments[0].hops[0].link
    assert new.segments[0].hops[0].label != p.segments[0].hops[0].label


def test_link_failure_reroutes_only_affected_services(tmp_path):
    t = ring()
    inst = FakeInstaller()
    m = ServiceManager(tmp_path / "s.json", lambda: t, inst, (16, 100))
    v = m.create(body("v", "vll", "pe1:ce1-vll", "pe3:ce3-vll"))          # pe1-cr1-pe3
    p = m.create(body("p", "pw", "pe2:ce2-pw", "pe3:ce3-pw"))             # pe2-pe3
    t.links = [ln for ln in t.links if {ln.a, ln.b} != {"cr1", "pe1"}]
    evs = m.topology_changed()
    assert [e["service"] for e in evs] == ["v"] and evs[0]["ok"]
    assert m.get("v").segments[0].nodes == ["pe1", "pe2", "pe3"]
    assert m.get("p").model_dump() == p.model_dump()
    assert not any(k[2] == v.cookie for k in inst.tables.get("cr1", {}))     # old transit flows removed
    assert reroute(m.get("v"), t, m.list(), (16, 100)) is None


# ----------------------------------------------------------------------------- API and LME
def test_http_api_status_codes_and_error_bodies(tmp_path, topo):
    m = ServiceManager(tmp_path / "s.json", topo, FakeInstaller(), (16, 100))
    h = make_app(m, lambda: {"nodes": {}}).handle
    code, obj = h("POST", "/v1/services", json.dumps(body("v", "vll", "pe1:ce1-vll", "pe3:ce3-vll")).encode())
    assert code == 201 and obj["cookie"] == "0x4f53480000000001" and "pe1" in obj["flows"]
    code, obj = h("POST", "/v1/services", json.dumps(body("w", "vll", "pe1:ce1-x", "pe3:ce3-x")).encode(),
                  "dry_run=1")
    assert code == 200 and [r.name for r in m.list()] == ["v"]
    assert h("POST", "/v1/services", b"{not json")[0] == 400
    code, obj = h("POST", "/v1/services", json.dumps(body("v", "vll", "pe1:ce1-x", "pe3:ce3-x")).encode())
    assert code == 409 and obj["error"]["where"] == "name" and obj["error"]["fix"]
    assert h("GET", "/v1/services", b"")[1][0]["name"] == "v"
    assert h("GET", "/v1/services/nope", b"")[0] == 404
    assert h("DELETE", "/v1/services/v", b"")[0] == 200 and m.list() == []
    assert h("GET", "/v1/other", b"")[0] == 404 and h("PUT", "/v1/services", b"")[0] == 405


def test_lme_flows_coexistence_by_ethertype():
    text = [f.to_ofctl() for f in lme_flows({1: 1001, 2: 1002})]
    c = f"cookie={LME_COOKIE:#x}"
    assert f"{c},table=0,priority=200,dl_type=0x8847,actions=goto_table:1" in text
    assert f"{c},table=0,priority=200,dl_type=0x8848,actions=goto_table:1" in text
    assert f"{c},table=0,priority=300,dl_type=0x8942,actions=CONTROLLER:65535" in text
    assert f"{c},table=0,priority=100,in_port=1002,actions=output:2" in text
    assert f"{c},table=1,priority=0,actions=drop" in text
