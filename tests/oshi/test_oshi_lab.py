"""OSHI lab end to end: 4 OSHI nodes in a ring (one of them a HARMLESS node behind the lab legacy switch), 3 CEs,
FRR/OSPF, the os-ken OSHI controller; IP VLL, Ethernet-over-MPLS PW and VSS with real packets; transit label
swap; controller restart; bad requests; link failure; full cleanup. One lab for the whole module (about 2 min)."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from harmless.errors import HarmlessError
from harmless.oshi import demo, lab
from harmless.oshi.frr import frr_installed
from harmless.oshi.topology import load_topology, make_plan
from harmless.otc import bridges
from harmless.ovs import Ovs
from harmless.pipelines.oshi.services import ServiceError
from tests.conftest import require_root_ovs, tcpdump, wait_for

pytestmark = [pytest.mark.root, pytest.mark.ovs, pytest.mark.lab]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "oshi-demo.yaml"


class OshiLab:
    def __init__(self, name, path, rec, state):
        self.name, self.path, self.rec, self.state = name, path, rec, state
        self.plan = make_plan(load_topology(str(path)))
        self.api = lab.api_client(name)

    def ovs(self, node) -> tuple[Ovs, str]:
        return demo.node_ovs(self.rec, node)

    def ce_ip(self, ref) -> tuple[str, str]:
        ce, port = ref.split(".")
        return self.plan.ces[ce].netns, self.plan.ces[ce].service_ips[port].split("/")[0]

    def ping(self, a, b, count=3) -> float:
        ns, _ = self.ce_ip(a)
        return lab.ping(ns, self.ce_ip(b)[1], count=count)

    def endpoint(self, ref) -> dict:
        node, port = self.plan.endpoint(ref)
        return {"node": node, "port": port}

    def service_flows(self, stats: bool = False) -> dict[str, list[str]]:
        """Per node: the service flows (cookie prefix "OSH") as ovs-ofctl prints them (with counters if ``stats``)."""
        out = {}
        for n in self.plan.nodes:
            ovs, br = self.ovs(n)
            text = ovs.ofctl("-O", "OpenFlow13", "dump-flows", *([] if stats else ["--no-stats"]), br,
                             "cookie=0x4f5348" + "0" * 10 + "/0xffffff" + "0" * 10)
            out[n] = [ln.strip() for ln in text.splitlines() if "actions=" in ln]
        return out


@pytest.fixture(scope="module")
def olab(tmp_path_factory):
    require_root_ovs()
    if not frr_installed():
        pytest.skip("needs FRR (apt-get install frr; packaging/install.sh does)")
    if importlib.util.find_spec("fake_switches") is None:
        pytest.skip("fake-switches is not installed (packaging/install.sh installs it)")
    state = tmp_path_factory.mktemp("state")
    old = os.environ.get("HARMLESS_STATE_DIR")
    os.environ["HARMLESS_STATE_DIR"] = str(state)
    name = "t" + uuid.uuid4().hex[:3]
    topo = yaml.safe_load(EXAMPLE.read_text())
    topo["name"] = name
    for ce in topo["ces"]:          # spare ports for a service created after the controller restart
        if ce["name"] in ("ce1", "ce3"):
            ce["ports"].append("spare")
    topo["services"].append({"name": "pw2", "kind": "pw", "endpoints": ["ce1.spare", "ce3.spare"]})   # addresses
    path = state / "topology.yaml"
    path.write_text(yaml.safe_dump(topo, sort_keys=False))
    try:
        rec = lab.up(str(path))
        yield OshiLab(name, path, rec, state)
    finally:
        lab.down(name)
        if old is None:
            os.environ.pop("HARMLESS_STATE_DIR", None)
        else:
            os.environ["HARMLESS_STATE_DIR"] = old


def test_ospf_converges_and_controller_sees_the_ring(olab):
    assert olab.rec["ospf_converged"] is True
    st = olab.api.status()
    assert all(v["connected"] for v in st["nodes"].values()) and len(st["nodes"]) == 4
    assert {tuple(sorted((ln["a"], ln["b"]))) for ln in st["links"]} == \
        {("pe1", "pe2"), ("pe2", "pe3"), ("cr1", "pe3"), ("cr1", "pe1")}
    # best-effort IP between CEs, routed by OSPF, and pe1's traffic really hairpins through HARMLESS's translator
    hovs = Ovs(Path(olab.rec["harmless"]["ovs_dir"]), netns=olab.plan.nodes["pe1"].netns)
    before = bridges.otc_hairpinned_packets(hovs)
    assert lab.ping(olab.plan.ces["ce1"].netns, "192.168.3.2", count=3) == 0.0
    assert wait_for(lambda: bridges.otc_hairpinned_packets(hovs) >= before + 3, 5, "3 packets hairpinned")
    # the LME flows are the node's (cookie OSHLME), in pe1's br-of too
    ovs, br = olab.ovs("pe1")
    assert br.startswith("br-of-")
    lme = ovs.ofctl("-O", "OpenFlow13", "dump-flows", br, "cookie=0x4f53484c4d45/-1")
    assert "mpls actions=goto_table:1" in lme and "mplsm actions=goto_table:1" in lme
    assert "dl_type=0x8942 actions=CONTROLLER" in lme


def test_vll_pw_vss_carry_traffic_and_pw_is_native_eompls(olab):
    c = olab.api
    vll = c.create({"name": "vll1", "kind": "vll", "endpoints": [olab.endpoint("ce1.vll"), olab.endpoint("ce3.vll")]})
    pw = c.create({"name": "pw1", "kind": "pw", "endpoints": [olab.endpoint("ce2.pw"), olab.endpoint("ce3.pw")]})
    vss = c.create({"name": "vss1", "kind": "vss",
                    "endpoints": [olab.endpoint(f"{ce}.vss") for ce in ("ce1", "ce2", "ce3")]})
    assert len(vll["segments"][0]["hops"]) == 2            # pe1 - (transit) - pe3
    assert vss["vbps"] and len(vss["segments"]) >= 3
    assert olab.ping("ce1.vll", "ce3.vll") == 0.0
    assert olab.ping("ce2.pw", "ce3.pw") == 0.0
    for a, b in (("ce1.vss", "ce2.vss"), ("ce1.vss", "ce3.vss"), ("ce2.vss", "ce3.vss")):
        assert olab.ping(a, b) == 0.0, (a, b)
    # on the wire of the PW's link: a provider Ethernet header, ethertype 0x8847, one label (bottom of stack),
    # then the customer's whole Ethernet frame (RFC 4448), i.e. the CE's MAC addresses inside
    hop = pw["segments"][0]["hops"][0]
    v_ns = olab.plan.nodes[hop["v"]].netns
    ce2_mac = subprocess.run(["ip", "-n", olab.plan.ces["ce2"].netns, "-j", "link", "show", "pw"],
                             capture_output=True, text=True).stdout
    ce2_mac = json.loads(ce2_mac)[0]["address"].replace(":", "")
    cap = tcpdump(v_ns, "-c", "1", "-xx", "-nei", hop["u"], "ether proto 0x8847")
    olab.ping("ce2.pw", "ce3.pw", count=2)
    text, _ = cap.communicate(timeout=10)
    raw = "".join(re.sub(r"\s", "", ln.split(":", 1)[1]) for ln in text.splitlines()
                  if re.match(r"\s+0x[0-9a-f]{4}:", ln))
    assert raw[24:28] == "8847", text
    label_word = int(raw[28:36], 16)
    assert label_word >> 12 == hop["label"] and (label_word >> 8) & 1 == 1      # label, bottom of stack
    assert ce2_mac in raw[36:36 + 24], "the customer frame's MAC addresses follow the label"


def test_transit_node_swaps_labels(olab):
    vll = olab.api.service("vll1")
    h1, h2 = vll["segments"][0]["hops"]
    transit = h1["v"]
    ovs, br = olab.ovs(transit)
    cookie = int(vll["cookie"], 16)
    before = demo.table1_packets(ovs, br, cookie)
    assert olab.ping("ce1.vll", "ce3.vll", count=5) == 0.0
    # 5 requests + 5 replies swapped here (datapath flow stats reach the OpenFlow table within about a second)
    assert wait_for(lambda: demo.table1_packets(ovs, br, cookie) >= before + 10, 5, "10 packets swapped"), \
        (before, demo.table1_packets(ovs, br, cookie))
    assert h1["label"] != h2["label"]
    tr = ovs.appctl("ofproto/trace", br, f"in_port={h1['v_port']},dl_type=0x8847,mpls_label={h1['label']},"
                    "dl_src=02:00:00:00:00:01,dl_dst=02:00:00:00:00:02")
    assert f"set_field:{h2['label']}->mpls_label" in tr and f"output:{h2['u_port']}" in tr
    assert f"label={h2['label']}" in tr.split("Datapath actions:")[1]


def test_bad_requests_get_clear_errors_and_change_nothing(olab):
    c = olab.api
    flows_before = olab.service_flows()
    state_before = (olab.state / "oshi" / olab.name / "services.json").read_text()
    bad = [
        ({"name": "x1", "kind": "vll", "endpoints": [{"node": "nope", "port": 1}, olab.endpoint("ce3.spare")]},
         404, "unknown node"),
        ({"name": "x2", "kind": "vll", "endpoints": [{"node": "pe1", "port": 77}, olab.endpoint("ce3.spare")]},
         404, "no edge port 77"),
        ({"name": "x3", "kind": "pw", "endpoints": [olab.endpoint("ce1.vll"), olab.endpoint("ce3.spare")]},
         409, "already used by service 'vll1'"),
        ({"name": "x4", "kind": "pw", "endpoints": [olab.endpoint("ce1.spare"), olab.endpoint("ce1.spare")]},
         409, "duplicates"),
        ({"name": "vll1", "kind": "pw", "endpoints": [olab.endpoint("ce1.spare"), olab.endpoint("ce3.spare")]},
         409, "already exists"),
        ({"name": "x5", "kind": "vss", "endpoints": [olab.endpoint("ce1.spare")]}, 400, "at least 2"),
    ]
    for body, status, text in bad:
        with pytest.raises(ServiceError) as ei:
            c.create(body)
        assert ei.value.status == status and text in ei.value.problem, (body, ei.value)
    assert olab.service_flows() == flows_before
    assert (olab.state / "oshi" / olab.name / "services.json").read_text() == state_before
    # the CLI turns them into one line and exit code 2
    from click.testing import CliRunner
    from harmless.cli import main
    r = CliRunner().invoke(main, ["oshi", "service", "create", "x6", "--kind", "vll", "-e", "nope:1",
                                  "-e", "pe3:ce3-spare", "--name", olab.name])
    assert r.exit_code == 2 and "unknown node 'nope'" in r.output


def test_controller_restart_keeps_services_flows_and_labels(olab):
    before = olab.api.services()
    flows = olab.service_flows(stats=True)
    dur = {n: [float(re.search(r"duration=([\d.]+)s", ln).group(1)) for ln in fl] for n, fl in flows.items()}
    strip = lambda fl: sorted(re.sub(r"duration=[\d.]+s, |n_packets=\d+, |n_bytes=\d+, ", "", ln) for ln in fl)  # noqa: E731
    log = lab.lab_dir(olab.name) / "controller.log"
    mark = log.stat().st_size
    secs = lab.restart_controller(olab.name)
    olab.api = lab.api_client(olab.name)
    assert olab.api.services() == before                    # same ids, paths, labels, VBP ports
    # the audit runs right after the reconnect: every node's "audited" (or "restoring ... failed") line
    wait_for(lambda: len(re.findall(r"node \S+ audited|node \S+: restoring service flows failed",
                                    log.read_bytes()[mark:].decode(errors="replace"))) >= len(olab.plan.nodes),
             30, "every node audited after the restart", detail=lambda: log.read_text()[-1500:])
    after = olab.service_flows(stats=True)
    assert {n: strip(fl) for n, fl in after.items()} == {n: strip(fl) for n, fl in flows.items()}
    for n, fl in after.items():                              # not re-added: durations kept running
        if dur[n]:
            got = [float(re.search(r"duration=([\d.]+)s", ln).group(1)) for ln in fl]
            assert max(got) >= max(dur[n]) + secs * 0.5, n
    assert olab.ping("ce1.vll", "ce3.vll") == 0.0
    # a new service gets labels that no existing service holds on the same links
    new = olab.api.create({"name": "pw2", "kind": "pw",
                           "endpoints": [olab.endpoint("ce1.spare"), olab.endpoint("ce3.spare")]})
    held = {}
    for r in before:
        for s in r["segments"]:
            for h in s["hops"]:
                held.setdefault(h["link"], set()).add(h["label"])
    for h in new["segments"][0]["hops"]:
        assert h["label"] not in held.get(h["link"], set())
    assert olab.ping("ce1.spare", "ce3.spare") == 0.0
    r = olab.api.delete("pw2")
    assert r["name"] == "pw2"
    assert all("0x4f53480000000004" not in ln for fl in olab.service_flows().values() for ln in fl)


def test_link_failure_reroutes_the_vll(olab):
    t = load_topology(str(olab.path))
    vll_spec = next(s for s in t.services if s.kind == "vll")
    f = demo._failover(t, olab.plan, olab.rec, olab.api, vll_spec, olab.api.service("vll1"), lambda m: None)
    print(f"link failure {f['link']}: VLL outage {f['vll_outage_s']} s ({f['vll_lost_pings']} pings lost), "
          f"re-routed {f['vll_path_before']} -> {f['vll_path_after']}")
    assert f["restored"] and f["vll_path_after"] != f["vll_path_before"]
    assert f["vll_ping_loss_after_pct"] == 0.0
    assert f["vll_outage_s"] < 15


def test_down_removes_everything(olab):
    lab.down(olab.name)
    left = [p.name for p in Path("/run/netns").glob(f"hl-o{olab.name}-*")]
    assert left == []
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(olab.state) not in ps and f"/run/hl-oshi/{olab.name}/" not in ps
    assert not (olab.state / "oshi" / olab.name).exists()
    with pytest.raises(HarmlessError):
        lab.api_client(olab.name)
