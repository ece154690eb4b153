"""QinQ (802.1ad) on the lab: two migrated access ports that already carry customer VLANs.

The legacy switch makes Fa0/7 and Fa0/8 dot1q-tunnel ports of their own S-VIDs; host 7 sends frames tagged with
customer VLANs 10 and 20 (scapy, real frames). br-of must see the C-tags intact (its flows match ``dl_vlan=10`` /
``dl_vlan=20`` and count), and host 8 must receive the frames with the same C-tags.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from tests.conftest import tcpdump, wait_for
from tests.lab.conftest import make_lab

N = 6
SEND = """
import sys
from scapy.all import Ether, Dot1Q, IP, UDP, Raw, sendp
for vid in (10, 20):
    sendp(Ether(src=sys.argv[1], dst=sys.argv[2]) / Dot1Q(vlan=vid) / IP(src="198.18.0.7", dst="198.18.0.8")
          / UDP(sport=4000 + vid, dport=5000) / Raw(b"harmless-qinq-%d" % vid), iface="eth0", count=int(sys.argv[3]),
          inter=0.05, verbose=False)
"""


@pytest.fixture(scope="module")
def lab_qinq(tmp_path_factory):
    gen = make_lab(tmp_path_factory, hosts=(7, 8))
    L = next(gen)
    inv = yaml.safe_load(L.inventory.read_text())
    sw = inv["switches"][0]
    sw["access_ports"] = [{"interface": "FastEthernet0/7", "qinq": True},
                          {"interface": "FastEthernet0/8", "qinq": True}]
    sw["openflow"]["controllers"] = []           # this test is the controller: it writes br-of's flows itself
    L.inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
    try:
        yield L
    finally:
        next(gen, None)


def test_customer_vlans_cross_the_hairpin_intact(lab_qinq):
    L = lab_qinq
    r = orch.up(str(L.inventory))
    assert all(p["qinq"] for p in r.plan["switches"][0]["ports"])
    ovs = deployment.state_ovs(st.load())
    ovs.ofctl("-O", "OpenFlow13", "add-flows", "br-of-sw1", "-", stdin=(
        "priority=100,in_port=7,dl_vlan=10,actions=output:8\n"
        "priority=100,in_port=7,dl_vlan=20,actions=output:8\n"))
    h7, h8 = L.info["hosts"]["7"], L.info["hosts"]["8"]
    cap = tcpdump(h8["netns"], "-i", "eth0", "-e", "-nn", "-l", "-c", str(2 * N), "vlan")
    try:
        subprocess.run(["ip", "netns", "exec", h7["netns"], sys.executable, "-c", SEND,
                        h7["mac"], h8["mac"], str(N)], check=True, timeout=60)
        out, _ = cap.communicate(timeout=20)
    finally:
        if cap.poll() is None:
            cap.kill()
    # host 8 got the frames with their customer tags, one S-tag removed (no 802.1ad / S-VID left on them)
    assert out.count("vlan 10,") == N and out.count("vlan 20,") == N, out
    assert "0x88a8" not in out and "vlan 107" not in out and "vlan 108" not in out
    # br-of saw the C-tags: its dl_vlan=10 / dl_vlan=20 flows counted every frame (flow statistics reach OpenFlow
    # from the datapath within about a second: poll)
    def counts():
        c = {}
        for line in ovs.ofctl("-O", "OpenFlow13", "dump-flows", "br-of-sw1").splitlines():
            for vid in (10, 20):
                if f"dl_vlan={vid}" in line:
                    c[vid] = int(line.split("n_packets=")[1].split(",")[0])
        return c
    wait_for(lambda: counts() == {10: N, 20: N}, 10, f"flow counters of {N} frames per C-VID", 0.5)
    assert counts() == {10: N, 20: N}
    assert orch.down().config_restored
