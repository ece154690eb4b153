"""Workload flow builders (harmless.bench.workloads) and the benchmark's HARMLESS plan: pure, no OVS."""
import pytest

from harmless.bench import workloads as w
from harmless.bench.sut import Sockets, bench_plan, bootstrap_flows
from harmless.otc.flows import translator_flows


def test_l2_sizes_and_hot_path():
    for n in (1, 2, 100, 1000):
        wl = w.l2_workload(n)
        rules = [f for f in wl.flows if "dl_dst=" in f]
        assert len(rules) == max(n, 2)
        assert len({f.split("dl_dst=")[1].split(",")[0] for f in rules}) == len(rules)   # distinct MACs
    wl = w.l2_workload(2)
    assert f"dl_dst={w.MAC_B},actions=output:10" in wl.flows[0]
    assert f"dl_dst={w.MAC_A},actions=output:7" in wl.flows[1]
    assert wl.flows[-1].endswith("priority=0,actions=drop")
    with pytest.raises(ValueError):
        w.l2_workload(0)


def test_l2_100k():
    assert len(w.l2_workload(100_000).flows) == 100_001


def test_mac_n():
    assert w.mac_n(0) == "12:00:00:00:00:00" and w.mac_n(0x10203) == "12:00:00:01:02:03"
    with pytest.raises(ValueError):
        w.mac_n(2 ** 24)


def test_l3_routes_groups_and_lpm_priorities():
    wl = w.l3_workload(n_routes=50, n_nexthops=4)
    routes = [f for f in wl.flows if "nw_dst=" in f]
    assert len(routes) == 50 and len(set(routes)) == 50
    for f in routes:
        plen = int(f.split("nw_dst=")[1].split("/")[1].split(",")[0])
        assert f"priority={plen}," in f                          # LPM: priority = prefix length
    assert len(wl.groups) == 2 + 4 and all("type=indirect" in g for g in wl.groups)
    used = {int(f.split("group:")[1]) for f in routes}
    assert used <= {1, 2} | set(range(100, 104))


def test_lb_acl():
    for n in (1, 10, 100):
        wl = w.lb_acl_workload(n)
        assert wl.groups[0].count("bucket=") == n and "type=select" in wl.groups[0]
    wl = w.lb_acl_workload(10)
    assert any("tp_dst=80" in f and "goto_table:1" in f for f in wl.flows)
    assert any(f.startswith("table=0,priority=0") and f.endswith("drop") for f in wl.flows)
    assert wl.params["web_share"] == 0.7


def test_gateway_10x20():
    wl = w.gateway_workload(10, 20)
    assert wl.n_rules == 200
    up = [f for f in wl.flows if "nw_src=10." in f]
    down = [f for f in wl.flows if "nw_dst=203.0.113.1" in f]
    assert len(up) == len(down) == 200
    ports = {f.split("->udp_src")[0].rsplit(":", 1)[1] for f in up}
    assert len(ports) == 200                                       # one public port per user


def test_bench_plan_and_bootstrap():
    plan = bench_plan(Sockets(__import__("pathlib").Path("/tmp/x")))
    sp = plan.switches[0]
    assert [(p.ofport, p.vid) for p in sp.ports] == [(7, 107), (10, 110)]
    assert [t.type for t in sp.trunks] == ["dpdkvhostuserclient"] * 2
    lines = [f.to_ofctl() for f in translator_flows(plan)]
    assert any("in_port=1900,dl_vlan=107,actions=pop_vlan,output:1007" in ln for ln in lines)
    assert any("in_port=1010,actions=push_vlan:0x8100,set_field:4206->vlan_vid,output:1901" in ln for ln in lines)
    boot = bootstrap_flows()
    assert all("vlan_tci=0x0000/0x1fff" in b and "priority=50" in b and "cookie=0xb007" in b for b in boot)
