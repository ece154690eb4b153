"""Trunk type ``auto`` on the lab (issue #17): AF_XDP when it attaches, AF_PACKET with the reason when it cannot.

One lab (two hosts); the server end of the trunk is a veth in the server namespace. First ``up`` with ``type: auto``
attaches AF_XDP (native XDP on veth) and pings hairpin through it; then the trunk leaves OVS, another XDP program
(xdp-filter's ``xdpfilt_alw_all`` from Debian's libxdp1) is attached to it, and the next ``up`` falls back to
AF_PACKET, says why, leaves that program in place, and traffic still hairpins; ``down`` leaves the program too.
"""
import subprocess
from pathlib import Path

import pytest
import yaml

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from harmless.lab import topology as lab
from harmless.otc import bridges, trunks
from tests.conftest import wait_for
from tests.lab.conftest import make_lab

pytestmark = pytest.mark.lab

#: an XDP program another tool would attach (xdp-filter "allow all"), shipped by Debian's libxdp1 (multiarch folder)
FOREIGN_XDP = next(iter(sorted(Path("/usr/lib").glob("*/bpf/xdpfilt_alw_all.o"))), Path("xdpfilt_alw_all.o"))


@pytest.fixture(scope="module")
def lab_auto(tmp_path_factory):
    for lab_ in make_lab(tmp_path_factory, hosts=(7, 10)):
        inv = yaml.safe_load(lab_.inventory.read_text())
        inv["switches"][0]["trunks"][0]["type"] = "auto"
        lab_.inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
        try:
            yield lab_
        finally:
            _ip(lab_.info, "link", "set", "dev", lab_.info["trunk_interface"], "xdpgeneric", "off")
            _ip(lab_.info, "link", "set", "dev", lab_.info["trunk_interface"], "xdp", "off")


def _ip(info, *args):
    return subprocess.run(["ip", "-n", info["server_netns"], *args], capture_output=True, text=True, timeout=30)


def _trunk_status(info):
    return orch.status(with_device=False).switches[0].trunks[info["trunk_interface"]]


def _ping_through_server(info):
    s = deployment.state_ovs(st.load())
    wait_for(lambda: orch.status(with_device=False).switches[0].controllers[0]["is_connected"], 20,
             "the controller connected", 0.3)
    before = bridges.otc_hairpinned_packets(s)
    loss = lab.ping(info, 7, 10, count=3)
    # flow counters of the userspace datapath reach OpenFlow with the revalidator
    wait_for(lambda: bridges.otc_hairpinned_packets(s) - before >= 6, 5, "6 hairpinned packets counted")
    return loss, bridges.otc_hairpinned_packets(s) - before


def test_auto_trunk_is_afxdp_and_hairpins(lab_auto):
    info = lab_auto.info
    lines = []
    orch.up(str(lab_auto.inventory), progress=lines.append)
    assert any(f"trunk {info['trunk_interface']}: AF_XDP" in x for x in lines), lines
    tr = _trunk_status(info)
    assert (tr["type"], tr["auto"], tr["why"]) == ("afxdp", True, "") and tr["xdp_mode"] in ("native", "generic")
    prog = trunks.xdp_program(deployment.state_ovs(st.load()), info["trunk_interface"])
    assert prog and prog["name"] == trunks.OVS_XDP_PROG
    loss, hairpinned = _ping_through_server(info)
    assert loss == 0.0 and hairpinned >= 6          # 3 requests + 3 replies popped off the AF_XDP trunk
    assert _trunk_status(info)["rx_packets"] >= 6


class _NsOvs:
    """Just enough of :class:`harmless.ovs.Ovs` for :func:`trunks.xdp_program` (the namespace)."""

    def __init__(self, info):
        self.netns = info["server_netns"]


def test_auto_trunk_falls_back_to_af_packet_when_xdp_cannot_attach(lab_auto):
    if not FOREIGN_XDP.exists():
        pytest.skip(f"{FOREIGN_XDP.name} (Debian libxdp1) is not installed: no XDP program to occupy the trunk")
    info = lab_auto.info
    # the trunk leaves OVS (OVS detaches its XDP program), another tool attaches its own, and up repairs the server
    deployment.state_ovs(st.load()).vsctl("del-port", "br-otc", info["trunk_interface"])
    assert trunks.xdp_program(_NsOvs(info), info["trunk_interface"]) is None
    r = _ip(info, "link", "set", "dev", info["trunk_interface"], "xdpgeneric", "obj", str(FOREIGN_XDP), "sec", "xdp")
    assert r.returncode == 0, r.stderr
    lines = []
    orch.up(str(lab_auto.inventory), progress=lines.append)
    line = next(x for x in lines if x.startswith(f"trunk {info['trunk_interface']}:"))
    assert "AF_PACKET" in line and "xdpfilt_alw_all" in line, line
    tr = _trunk_status(info)
    assert tr["type"] == "system" and tr["auto"] and "another XDP program" in tr["why"]
    assert tr["error"] is None
    # the other program stays attached, and traffic hairpins through the AF_PACKET trunk
    assert trunks.xdp_program(_NsOvs(info), info["trunk_interface"])["name"] == "xdpfilt_alw_all"
    loss, hairpinned = _ping_through_server(info)
    assert loss == 0.0 and hairpinned >= 6
    orch.down()
    assert trunks.xdp_program(_NsOvs(info), info["trunk_interface"])["name"] == "xdpfilt_alw_all"
