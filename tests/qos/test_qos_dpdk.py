"""Egress QoS on a DPDK trunk (issue #15): the trtcm-policer QoS/Queue rows HARMLESS builds are accepted by Debian's
OVS-DPDK, and ``set_queue`` selects the port's queue, whose policer drops what exceeds its rate while the default
queue passes everything (packet fate from the queues' own counters, ``ovs-appctl qos/show``). The trunk is a DPDK
``net_null`` device (it accepts every frame), OVS-DPDK runs without hugepages in its own network namespace."""
from __future__ import annotations

import re
import subprocess
import uuid

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Dot1Q, Ether

from harmless.otc import qos as qos_side
from harmless.ovs import VSWITCHD_DPDK, DpdkOptions, Ovs
from harmless.plan import Plan, PortPlan, SwitchPlan, TrunkPlan
from harmless.qos.model import PortQos
from tests.conftest import require_root_ovs

pytestmark = [pytest.mark.root, pytest.mark.ovs, pytest.mark.dpdk]


@pytest.fixture(scope="module")
def dpdk_ovs(tmp_path_factory):
    require_root_ovs()
    if not VSWITCHD_DPDK.exists():
        pytest.skip("needs Debian's openvswitch-switch-dpdk (packaging/install.sh installs it)")
    ns = f"hl-q{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
    ovs = Ovs(tmp_path_factory.mktemp("dpdk-ovs"), netns=ns, dpdk=DpdkOptions(hugepages=False))
    try:
        ovs.start()
        ovs.vsctl("add-br", "br-otc", "--", "set", "Bridge", "br-otc", "datapath_type=netdev", "--",
                  "add-port", "br-otc", "dt0", "--", "set", "Interface", "dt0", "type=dpdk",
                  "options:dpdk-devargs=net_null0")
        yield ovs
    finally:
        ovs.stop()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _queues(text: str) -> dict[str, dict[str, int]]:
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^(Default|Queue \d+):", line.strip())
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        m = re.match(r"^\s+(tx_packets|tx_errors|cir): (\d+)", line)
        if m and cur is not None:
            cur[m.group(1)] = int(m.group(2))
    return out


def _txn(ovs, cmds: list[list[str]]) -> None:
    argv: list[str] = []
    for c in cmds:
        argv += (["--"] if argv else []) + c
    ovs.vsctl(*argv)


def test_trtcm_queue_selected_by_set_queue_polices(dpdk_ovs):
    ovs = dpdk_ovs
    ports = (PortPlan("FastEthernet0/10", 10, 110, "Gi0/1", "harmless-sw1-p10", qos=PortQos(egress_mbps=0.1)),)
    plan = Plan((SwitchPlan("sw1", "br-of-sw1", "0" * 15 + "1", ("OpenFlow13",), (), ports,
                            (TrunkPlan("Gi0/1", "dt0", "dpdk", (), (110,)),), index=1),))
    _txn(ovs, qos_side.ovsdb_commands(qos_side.wanted_trunks(plan), qos_side.read_rows(ovs)))
    shown = ovs.appctl("qos/show", "dt0")
    assert "trtcm-policer" in shown
    assert _queues(shown)["Queue 10"]["cir"] == 12500            # 0.1 Mbit/s = 12500 bytes/s
    frame = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / Dot1Q(vlan=110) /
                  IP(dst="10.0.0.10") / UDP() / (b"x" * 1000)).hex()
    for _ in range(30):      # 30 kB within a fraction of a second: far above 12.5 kB/s with a 2 kB bucket
        ovs.ofctl("packet-out", "br-otc", "LOCAL", "set_queue:10,output:dt0", frame)
    for _ in range(5):
        ovs.ofctl("packet-out", "br-otc", "LOCAL", "output:dt0", frame)
    q = _queues(ovs.appctl("qos/show", "dt0"))
    assert q["Queue 10"]["tx_errors"] >= 20 and q["Queue 10"]["tx_packets"] + q["Queue 10"]["tx_errors"] == 30
    assert q["Default"]["tx_packets"] == 5 and q["Default"]["tx_errors"] == 0
    # and HARMLESS's removal leaves nothing behind
    _txn(ovs, qos_side.remove_commands(ovs))
    rows = qos_side.read_rows(ovs)
    assert rows["qos"] == {} and rows["queue"] == {}
