"""Issue #17 pure logic: trunk type ``auto`` settings, XDP parsing, bench parsing/repeats, sizing, measured CAPEX."""
import json

import pytest
from click.testing import CliRunner

from harmless.bench import sizing as sz
from harmless.bench.quick import frame_gbps, parse_ovs_version
from harmless.bench.sut import Sockets, bench_plan, bootstrap_flows
from harmless.bench.testpmd import IMIX_MEAN_FRAME, IMIX_SEGMENTS, TestpmdOptions, VirtioPort, build_argv
from harmless.bench.trunkbench import combine_repeats, median_spread
from harmless.cli import main
from harmless.cost import models as m
from harmless.cost.capacity import measured_harmless
from harmless.cost.catalog import load_catalog
from harmless.errors import InputError
from harmless.otc import trunks
from harmless.plan import TrunkPlan


# ------------------------------------------------------------------ trunk type auto
def test_auto_trunk_tries_afxdp_best_effort_unless_resolved_to_system():
    t = TrunkPlan("Gi0/1", "eth1", "auto", (), (107,))
    assert trunks.interface_settings(t, {}) == ("afxdp", (("xdp-mode", "best-effort"),))
    assert trunks.interface_settings(t, {"eth1": "system"}) == ('""', ())
    # explicit types are left as the plan says
    assert trunks.interface_settings(TrunkPlan("Gi0/1", "eth1", "system", (), (107,)), {"eth1": "x"}) == ('""', ())
    assert trunks.interface_settings(TrunkPlan("Gi0/1", "eth1", "afxdp", (("xdp-mode", "generic"),), (107,)),
                                     {}) == ("afxdp", (("xdp-mode", "generic"),))


def test_parse_xdp_reads_program_and_mode_from_ip_json():
    native = {"ifname": "v", "xdp": {"mode": 1, "prog": {"id": 110, "name": "xsk_def_prog"}}}
    generic = {"ifname": "v", "xdp": {"mode": 2, "attached": [{"mode": 2, "prog": {"id": 5, "name": "xdpfilt_alw_all"}}]}}
    assert trunks.parse_xdp(native) == {"name": "xsk_def_prog", "id": 110, "mode": "native"}
    assert trunks.parse_xdp(generic) == {"name": "xdpfilt_alw_all", "id": 5, "mode": "generic"}
    assert trunks.parse_xdp({"ifname": "v"}) is None


def test_trunk_choice_lines_say_which_and_why():
    assert "AF_XDP (native XDP mode)" in trunks.TrunkChoice("eth1", "afxdp", "", "native").line()
    line = trunks.TrunkChoice("eth1", "system", "AF_XDP did not attach (x)").line()
    assert line == "trunk eth1: AF_PACKET (type system) because AF_XDP did not attach (x)"


# ------------------------------------------------------------------ bench parsing and set-up
def test_parse_ovs_version():
    assert parse_ovs_version("ovs-vswitchd (Open vSwitch) 3.1.0\nDPDK 22.11.11\n") == "3.1.0"
    assert parse_ovs_version("") == "" and parse_ovs_version("bash: not found") == ""


def test_imix_segments_give_the_simple_imix():
    sizes = [sum(IMIX_SEGMENTS[:n]) + 4 for n in range(1, len(IMIX_SEGMENTS) + 1)]
    assert sum(60 <= x <= 70 for x in sizes) == 7 and sum(570 <= x <= 573 for x in sizes) == 4
    assert sizes[-1] == 1518 and 350 < IMIX_MEAN_FRAME < 360


def test_frame_gbps_counts_fcs():
    assert frame_gbps(1_000_000, 60_000_000, 1.0) == pytest.approx(0.512)   # 1 Mpps of 64-byte frames
    assert frame_gbps(5, 300, 0) == 0.0


def test_af_packet_generator_runs_in_its_namespace():
    argv = build_argv("p", [VirtioPort("hb1ga", "02:00:00:00:00:07", "02:00:00:00:00:0a")],
                      TestpmdOptions(vdev_kind="af_packet", netns="hlb1g"))
    assert argv[:4] == ["ip", "netns", "exec", "hlb1g"]
    assert "--vdev=net_af_packet0,iface=hb1ga,qpairs=1,framecnt=2048" in argv
    assert "--eth-peer=0,02:00:00:00:00:0a" in argv


def test_bench_plan_per_trunk_type_and_one_way_bootstrap():
    veth = bench_plan(Sockets(__import__("pathlib").Path("/x")), "afxdp", ("ta", "tb")).switches[0].trunks
    assert [(t.server_interface, t.type, t.options) for t in veth] == [
        ("ta", "afxdp", (("xdp-mode", "best-effort"),)), ("tb", "afxdp", (("xdp-mode", "best-effort"),))]
    assert bench_plan(Sockets(__import__("pathlib").Path("/x"))).switches[0].trunks[0].type == "dpdkvhostuserclient"
    assert len(bootstrap_flows()) == 2
    extra = bootstrap_flows(True)[-1]
    assert "dl_vlan=110" in extra and "actions=pop_vlan,output:" in extra


def test_repeats_give_median_and_spread():
    runs = [{"ratio": r, "cycles_ratio": c, "harmless_mpps": 1.0, "plain_mpps": 1.2, "trunk": "system",
             "samples": {}} for r, c in ((0.8, 0.9), (0.9, 0.85), (0.6, 0.95))]
    out = combine_repeats(runs)
    assert out["ratio"] == 0.8 and out["cycles_ratio"] == 0.9 and out["repeat"] == 3
    assert out["spread"]["ratio"] == {"median": 0.8, "min": 0.6, "max": 0.9, "spread_pct": 37.5, "n": 3}
    assert "samples" not in out and len(out["runs"]) == 3
    assert median_spread([])["n"] == 0


# ------------------------------------------------------------------ sizing and CAPEX
def test_sizing_from_cycles_per_core():
    res = {"afxdp": {"harmless_cycles_per_packet": 2600.0, "harmless_mpps": 0.3, "mean_frame_bytes": 357.4},
           "system": {"harmless_cycles_per_packet": 10400.0, "harmless_mpps": 0.1, "mean_frame_bytes": 357.4}}
    out = sz.sizing(res, 2.6e9, cores=2)
    a = out["trunks"]["afxdp"]
    assert a["mpps_per_core"] == 1.0 and a["gbps_per_core"] == pytest.approx(2.859, abs=1e-3)
    assert a["server_gbps"] == pytest.approx(5.718, abs=1e-3)
    assert a["access_ports"]["1G"]["100%"] == 5 and a["access_ports"]["1G"]["10%"] == 57
    assert a["access_ports"]["10G"]["100%"] == 0
    assert out["best"] == "afxdp" and out["trunks"]["system"]["mpps_per_core"] == 0.25
    assert sz.access_ports(1.0, 1.0, 0) == 0


def test_server_gbps_from_sizing_or_trunk_result():
    doc = {"sizing": {"cores": 1, "best": "afxdp", "trunks": {"afxdp": {"server_gbps": 2.5},
                                                              "system": {"server_gbps": 0.6}}}}
    assert sz.server_gbps_from(doc)[0] == 2.5 and sz.server_gbps_from(doc, "system")[0] == 0.6
    one = {"trunk": "dpdk", "frames": "imix", "harmless_cycles_per_packet": 1000, "mean_frame_bytes": 64,
           "machine": {"mhz": 2000}}
    assert sz.server_gbps_from(one)[0] == pytest.approx(1.024)
    with pytest.raises(ValueError):
        sz.server_gbps_from({"trunk": "dpdk", "frames": 64})


def test_measured_capex_sizes_servers_by_capacity():
    cat = load_catalog(None)
    r = measured_harmless(48, "1G", cat, server_gbps=2.5, load=0.25)
    assert (r["ports_per_server"], r["servers"], r["limited_by"]) == (10, 5, "measured capacity")
    assert r["capex"] == 5 * cat.prices.server_usd + 5 * cat.prices.nic_4x10g_usd
    big = measured_harmless(48, "1G", cat, server_gbps=1000)
    assert big["ports_per_server"] == 12 * cat.harmless.access_ports_per_trunk and big["servers"] == 1
    # above the NIC slots the measured figure is the paper's C_HL: second CPUs, NICs per server, legacy switches
    for x, speed in ((144, "1G"), (300, "1G"), (72, "10G"), (200, "10G")):
        for owned in (m.PAPER_OWNED, m.Owned(spare_servers=1, legacy_switches=0)):
            paper = sum(i.qty * i.unit for i in m.harmless_items(x, speed, cat, owned))
            assert measured_harmless(x, speed, cat, server_gbps=1e6, owned=owned)["capex"] == paper, (x, speed)
    two = measured_harmless(120, "1G", cat, server_gbps=60)          # 60 ports a server: 2 X710 each
    assert (two["servers"], two["nics"]) == (2, 4)
    for bad in (0.5, float("inf"), float("nan"), -1.0):
        with pytest.raises(InputError):
            measured_harmless(48, "1G", cat, server_gbps=bad, load=1.0)


def test_capex_cli_bench_result(tmp_path):
    f = tmp_path / "sizing.json"
    f.write_text(json.dumps({"sizing": {"cores": 1, "best": "afxdp", "trunks": {"afxdp": {"server_gbps": 3.0}}}}))
    r = CliRunner().invoke(main, ["capex", "--ports", "48", "--bench-result", str(f), "--load", "50", "--json"])
    assert r.exit_code == 0, r.output
    hm = json.loads(r.stdout)["harmless_measured"]
    assert hm["server_gbps"] == 3.0 and hm["ports_per_server"] == 6 and hm["servers"] == 8
    bad = CliRunner().invoke(main, ["capex", "--ports", "48", "--bench-result", str(tmp_path / "none.json")])
    assert bad.exit_code == 2 and "--bench-result" in bad.output
