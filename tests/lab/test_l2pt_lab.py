"""Link-local protocols through the legacy switch (issue #21, docs/transparency.md): LLDP crosses HARMLESS only where
the legacy switch tunnels it.

The lab's switch is an emulated Catalyst 3750 Metro (``me3750``: ``l2protocol-tunnel lldp``). Host 7 sends real LLDP
frames (01:80:c2:00:00:0e, EtherType 0x88cc) and a broadcast fence; br-of's own flows (this test is the controller)
count what arrives on OpenFlow port 7 by exact destination. Then an LLDP frame is sent out of br-of port 7 as a
controller's packet-out, followed by a broadcast fence, and host 7 captures what it gets. Without ``l2pt`` the legacy
switch consumes LLDP both ways, as an 802.1D bridge does; after an incremental ``up`` with ``l2pt: [lldp]`` both cross
with the real destination (the switch carries them with 01:00:0c:cd:cd:d0 on the trunk, br-otc rewrites it back and
forth); after one with ``l2pt: []`` the tunnelling line and br-otc's rewrite flows are gone. ``down`` gives the switch
its original running config back byte for byte.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from tests.conftest import wait_for
from tests.lab.conftest import make_lab

FRAMES = str(Path(__file__).parents[1] / "interop" / "frames.py")
LLDP_DST, TUNNEL = "01:80:c2:00:00:0e", "01:00:0c:cd:cd:d0"
N = 4
#: the source MAC of what the test sends out of br-of (a controller's beacon)
BEACON_SRC = "02:00:00:00:01:99"
#: br-of-sw1's flows: count LLDP from port 7 by its real destination, anything with the tunnel MAC, and the fence
COUNTERS = (f"priority=300,in_port=7,dl_dst={LLDP_DST},dl_type=0x88cc,actions=drop\n"
            f"priority=300,in_port=7,dl_dst={TUNNEL},actions=drop\n"
            "priority=200,in_port=7,dl_dst=ff:ff:ff:ff:ff:ff,actions=drop\n")


@pytest.fixture(scope="module")
def lab_me(tmp_path_factory):
    gen = make_lab(tmp_path_factory, hosts=(7, 8), platform="me3750", controller=None)
    L = next(gen)
    inv = yaml.safe_load(L.inventory.read_text())
    inv["switches"][0]["openflow"]["controllers"] = []      # the test writes br-of's flows itself
    L.inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
    try:
        yield L
    finally:
        next(gen, None)


def _inventory(L, l2pt: list[str] | None) -> str:
    inv = yaml.safe_load(L.inventory.read_text())
    inv["switches"][0].pop("l2pt", None)
    if l2pt is not None:
        inv["switches"][0]["l2pt"] = l2pt
    p = L.state_dir / "inventory-l2pt.yaml"            # one file: a later up is an incremental up of the same one
    p.write_text(yaml.safe_dump(inv, sort_keys=False))
    return str(p)


def _counts(ovs) -> dict[str, int]:
    out = {}
    for line in ovs.ofctl("-O", "OpenFlow13", "dump-flows", "br-of-sw1").splitlines():
        for key, what in ((f"dl_dst={LLDP_DST}", "lldp"), (f"dl_dst={TUNNEL}", "tunnel"),
                          ("dl_dst=ff:ff:ff:ff:ff:ff", "fence")):
            if key in line:
                out[what] = int(line.split("n_packets=")[1].split(",")[0])
    return out


def _from_host(L, ovs, tag: str) -> dict[str, int]:
    """Host 7 sends N LLDP frames and a broadcast fence; br-of's counters once the fence got there."""
    h7 = L.info["hosts"]["7"]
    items = ",".join([f"lldp:{tag}{i}" for i in range(N)] + [f"broadcast:{tag}end"])
    subprocess.run(["ip", "netns", "exec", h7["netns"], sys.executable, FRAMES, "send", "eth0", h7["mac"],
                    "ff:ff:ff:ff:ff:ff", items], check=True, timeout=60, capture_output=True)
    wait_for(lambda: _counts(ovs).get("fence", 0) >= 1, 15, "the fence frame on br-of port 7", 0.3)
    return _counts(ovs)


def _to_host(L, ovs, tag: str) -> list[dict]:
    """An LLDP frame out of br-of port 7 (packet-out), then a broadcast fence; what host 7 captured from the beacon."""
    from scapy.all import Ether, Raw
    h7 = L.info["hosts"]["7"]
    sniff = subprocess.Popen(["ip", "netns", "exec", h7["netns"], sys.executable, FRAMES, "sniff", "eth0", "20", tag,
                              BEACON_SRC, f"{tag}end"], stdout=subprocess.PIPE, text=True)
    try:
        assert sniff.stdout.readline().strip() == "ready"
        beacon = Ether(src=BEACON_SRC, dst=LLDP_DST, type=0x88CC) / Raw(f"{tag}lldp".encode().ljust(46, b"."))
        fence = Ether(src=BEACON_SRC, dst="ff:ff:ff:ff:ff:ff", type=0x0800) / Raw(f"{tag}end".encode().ljust(46, b"."))
        for frame in (beacon, fence):
            ovs.ofctl("-O", "OpenFlow13", "packet-out", "br-of-sw1",
                      f"in_port=controller packet={bytes(frame).hex()} actions=output:7")
        out, _ = sniff.communicate(timeout=30)
    finally:
        if sniff.poll() is None:
            sniff.kill()
    return json.loads(out.strip().splitlines()[-1])


def _phase(L, l2pt: list[str] | None, tag: str) -> tuple[dict[str, int], list[dict], str]:
    """``up`` with ``l2pt`` (incremental on a deployment), LLDP both ways: (br-of counters, host 7's capture, the
    device's running config)."""
    orch.up(_inventory(L, l2pt))
    ovs = deployment.state_ovs(st.load())
    ovs.ofctl("-O", "OpenFlow13", "del-flows", "br-of-sw1")      # counters from zero (replace-flows keeps them)
    ovs.ofctl("-O", "OpenFlow13", "add-flows", "br-of-sw1", "-", stdin=COUNTERS)
    running = L.running_config()
    return _from_host(L, ovs, tag), _to_host(L, ovs, tag), running


def test_lldp_crosses_the_legacy_switch_only_where_it_is_tunnelled(lab_me):
    L = lab_me
    original = L.running_config()
    try:
        # without l2pt: the legacy switch consumes LLDP both ways (an 802.1D bridge)
        counts, got, running = _phase(L, None, "l2ptoff")
        assert "l2protocol-tunnel" not in running
        assert counts == {"lldp": 0, "tunnel": 0, "fence": 1}
        assert [f["marker"] for f in got] == ["l2ptoffend"]                # the fence came, the beacon did not
        # l2pt: [lldp] on the running deployment: both ways, with the real destination at br-of and at the host
        counts, got, running = _phase(L, ["lldp"], "l2pton")
        fa7 = running[running.index("interface FastEthernet0/7"):].split("!")[0]
        assert " l2protocol-tunnel lldp" in fa7
        assert "l2protocol-tunnel" not in running.split("interface Gigabit")[1]    # never on the trunk
        assert counts == {"lldp": N, "tunnel": 0, "fence": 1}            # real destination at br-of, never the tunnel
        assert [(f["marker"], f["dst"], f["tags"]) for f in got] == [("l2ptonlldp", LLDP_DST, []),
                                                                    ("l2ptonend", "ff:ff:ff:ff:ff:ff", [])]
        # l2pt dropped again: the tunnelling line goes from the switch, the rewrite flows from br-otc
        orch.up(_inventory(L, []))
        assert "l2protocol-tunnel" not in L.running_config()
        otc = deployment.state_ovs(st.load()).ofctl("-O", "OpenFlow14", "dump-flows", "br-otc")
        assert TUNNEL not in otc and "priority=100" in otc
    finally:
        res = orch.down()
    assert res.config_restored and L.running_config() == original        # byte for byte
