"""The planner's OSHI flows on a real Open vSwitch, without a controller: two PE bridges joined by a patch "link",
hosts in namespaces. Evidence that OVS 3.1's encap()/decap() do native Ethernet over MPLS (ofproto/trace and real
pings), and that the IP VLL (IP over 0x8847, ARP over 0x8848) carries traffic."""
from __future__ import annotations

import subprocess
import uuid

import pytest

from harmless.ovs import Ovs
from harmless.pipelines.oshi.lme import lme_ofctl
from harmless.pipelines.oshi.model import Endpoint, Link, NodeView, ServiceRequest, Topology
from harmless.pipelines.oshi.services import plan_service, service_flows
from tests.conftest import require_root_ovs
from tests.lib.fakeoftable import FakeOFNetwork, FakeOFTable

pytestmark = [pytest.mark.root, pytest.mark.ovs]


def ip(*a):
    subprocess.run(["ip", *a], check=True, capture_output=True)


@pytest.fixture
def two_pes(tmp_path):
    """br-pe2 and br-pe3 in one private OVS, core link = patch ports 1<->1; hosts: a2 (pe2 port 4) <-> a3 (pe3 port
    4) for the PW, b2 (pe2 port 5) <-> b3 (pe3 port 5) for the VLL."""
    require_root_ovs()
    tag = uuid.uuid4().hex[:4]
    ns = f"hl-oe{tag}"
    hosts = {h: f"hl-oe{tag}-{h}" for h in ("a2", "a3", "b2", "b3")}
    ovs = Ovs(tmp_path / "ovs", netns=ns)
    try:
        ip("netns", "add", ns)
        for i, (h, hns) in enumerate(hosts.items()):
            ip("netns", "add", hns)
            ip("link", "add", h, "netns", ns, "type", "veth", "peer", "name", "eth0", "netns", hns)
            ip("-n", hns, "addr", "add", f"10.9.{0 if h[0] == 'a' else 1}.{i + 1}/24", "dev", "eth0")
            for n, d in ((hns, "eth0"), (ns, h), (hns, "lo")):
                ip("-n", n, "link", "set", d, "up")
            subprocess.run(["ip", "netns", "exec", hns, "ethtool", "-K", "eth0", "tx", "off"], capture_output=True)
        ovs.start()
        args = []
        for br, peer, a, b in (("br-pe2", "br-pe3", "a2", "b2"), ("br-pe3", "br-pe2", "a3", "b3")):
            args += ["--", "add-br", br, "--", "set", "Bridge", br, "datapath_type=netdev", "fail_mode=secure",
                     "protocols=OpenFlow13",
                     "--", "add-port", br, f"{br}-l", "--", "set", "Interface", f"{br}-l", "type=patch",
                     f"options:peer={peer}-l", "ofport_request=1",
                     "--", "add-port", br, a, "--", "set", "Interface", a, "ofport_request=4",
                     "--", "add-port", br, b, "--", "set", "Interface", b, "ofport_request=5"]
        ovs.vsctl(*args[1:])
        topo = Topology(nodes={"pe2": NodeView(dpid=2, edge_ports={"a": 4, "b": 5}, connected=True),
                               "pe3": NodeView(dpid=3, edge_ports={"a": 4, "b": 5}, connected=True)},
                        links=[Link(a="pe2", a_port=1, b="pe3", b_port=1)])
        pw = plan_service(ServiceRequest(name="pw", kind="pw", endpoints=[Endpoint(node="pe2", port=4),
                                                                         Endpoint(node="pe3", port=4)]),
                          topo, [], 1, (16, 100))
        vll = plan_service(ServiceRequest(name="vll", kind="vll", endpoints=[Endpoint(node="pe2", port=5),
                                                                            Endpoint(node="pe3", port=5)]),
                           topo, [pw], 2, (16, 100))
        texts = {}
        for node in ("pe2", "pe3"):
            text = lme_ofctl({}) + "".join(f.to_ofctl() + "\n" for r in (pw, vll) for f in service_flows(r)[node])
            ovs.ofctl("-O", "OpenFlow13", "add-flows", f"br-{node}", "-", stdin=text)
            texts[node] = text
        yield ovs, hosts, pw, vll, texts
    finally:
        ovs.stop()
        for n in [ns, *hosts.values()]:
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


def ping_loss(ns, dst):
    p = subprocess.run(["ip", "netns", "exec", ns, "ping", "-c", "3", "-i", "0.2", "-W", "2", dst],
                       capture_output=True, text=True)
    return "0% packet loss" in p.stdout and " 0 received" not in p.stdout


def test_pw_is_native_eompls_and_vll_carries_ip_and_arp(two_pes):
    ovs, hosts, pw, vll, texts = two_pes
    label = pw.segments[0].hops[0].label
    tr = ovs.appctl("ofproto/trace", "br-pe2", "in_port=4,dl_src=02:00:00:00:00:0a,dl_dst=02:00:00:00:00:0b,"
                    "dl_type=0x0800,nw_src=10.9.0.1,nw_dst=10.9.0.2,nw_proto=1")
    dp = tr.split("Datapath actions:")[1]
    # ingress PE: MPLS label pushed over the whole frame, then a new (provider) Ethernet header
    assert f"add_mpls(label={label}" in dp and "eth_type=0x8847" in dp and "push_eth(" in dp
    # egress PE: the provider Ethernet header and the label come off; the inner packet is Ethernet (0x6558)
    assert "pop_eth,pop_mpls(eth_type=0x6558)" in dp
    assert ping_loss(hosts["a2"], "10.9.0.2")                 # real frames (ARP + ICMP) through the PW
    vl = vll.segments[0].hops[0].label
    tr = ovs.appctl("ofproto/trace", "br-pe2", "in_port=5,dl_src=02:00:00:00:00:0a,dl_dst=ff:ff:ff:ff:ff:ff,"
                    "dl_type=0x0806,arp_op=1")
    # ARP rides the multicast MPLS ethertype with the VLL's label; the egress PE restores 0x0806 (push and pop cancel
    # out in the datapath actions, because both PEs share this one datapath, so the OpenFlow steps are checked)
    pe2, pe3 = tr.split('bridge("br-pe3")')
    assert "push_mpls:0x8848" in pe2 and f"set_field:{vl}->mpls_label" in pe2
    assert f"mplsm,in_port=1,mpls_label={vl}" in pe3 and "pop_mpls:0x0806" in pe3 and "output:5" in pe3
    assert ping_loss(hosts["b2"], "10.9.1.4")                 # IP VLL: ARP over 0x8848, IP over 0x8847
    counts = ovs.ofctl("-O", "OpenFlow13", "dump-flows", "br-pe3", "table=1")
    assert "mplsm" in counts and "n_packets=0," not in [ln for ln in counts.splitlines() if "mplsm" in ln][0]
    # the fake table of tests/lib, loaded with the same text, sends the traced frames where OVS sent them
    net = FakeOFNetwork({n: FakeOFTable(name=n).add_ofctl(t) for n, t in texts.items()}, [(("pe2", 1), ("pe3", 1))])
    ip_frame = dict(eth_src="02:00:00:00:00:0a", eth_dst="02:00:00:00:00:0b", eth_type=0x0800, ipv4_src="10.9.0.1")
    f = net.fate("pe2", 4, **ip_frame)
    assert f.ports == [("pe3", 4)] and {k: f.on("pe3", 4)[k] for k in ip_frame} == ip_frame
    assert any(sw == "pe3" and t == 1 and fl.match.mpls_label == label for sw, t, fl in f.hits)
    f = net.fate("pe2", 5, eth_src="02:00:00:00:00:0a", eth_dst="ff:ff:ff:ff:ff:ff", eth_type=0x0806)
    assert f.ports == [("pe3", 5)] and f.on("pe3", 5)["eth_type"] == 0x0806
    assert any(sw == "pe3" and fl.match.eth_type == 0x8848 and fl.match.mpls_label == vl for sw, _, fl in f.hits)
