"""server.datapath: dpdk — the same hairpin with HARMLESS's OVS running the DPDK build (no hugepages needed)."""
from pathlib import Path

import pytest
import yaml

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from harmless.lab import topology as lab
from harmless.ovs import VSWITCHD_DPDK
from tests.lab.conftest import make_lab

pytestmark = [pytest.mark.lab, pytest.mark.dpdk]


@pytest.fixture(scope="module")
def lab2(tmp_path_factory):
    if not VSWITCHD_DPDK.exists():
        pytest.skip("needs Debian's openvswitch-switch-dpdk (packaging/install.sh installs it)")
    yield from make_lab(tmp_path_factory, hosts=(7, 10))


def test_dpdk_datapath_hairpin_and_cleanup(lab2):
    inv = yaml.safe_load(lab2.inventory.read_text())
    inv["server"]["datapath"] = "dpdk"
    inv["server"]["dpdk"] = {"hugepages": False}
    p = lab2.inventory.with_name("inv-dpdk.yaml")
    p.write_text(yaml.safe_dump(inv))
    original = lab2.running_config()
    orch.up(str(p))
    s = deployment.state_ovs(st.load())
    assert s.vsctl("get", "Open_vSwitch", ".", "dpdk_initialized").strip() == "true"
    prefix = s.vsctl("get", "Open_vSwitch", ".", "other_config:dpdk-extra").split("--file-prefix=")[1].split()[0]
    losses = []
    for _ in range(10):                       # the controller may still be connecting
        losses = [lab.ping(lab2.info, 7, 10, count=3), lab.ping(lab2.info, 10, 7, count=3)]
        if losses == [0.0, 0.0]:
            break
    assert losses == [0.0, 0.0]
    assert orch.down().config_restored is True
    assert lab2.running_config() == original
    assert not (Path("/var/run/dpdk") / prefix.strip('"')).exists()
