"""Lab end-to-end on the emulated Arista EOS switch: inventory -> NAPALM eos (eAPI, config session) -> the
switch's OVS data plane -> hosts ping each other through br-of -> a pulled host link shows in the device's
link state -> down restores the exact original running config."""
import subprocess

import pytest

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from harmless.lab import topology as lab
from harmless.otc import bridges
from tests.lab.conftest import make_lab
from tests.lab.test_e2e import all_pairs_loss, wait

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def eos_lab(tmp_path_factory):
    """Three hosts on Ethernet7, 8, 10 of an emulated EOS switch, trunk Ethernet25, all migrated."""
    yield from make_lab(tmp_path_factory, vendor="eos")


def test_eos_lab_up_hairpins_traffic_mirrors_link_state_and_down_restores_exactly(eos_lab):
    info = eos_lab.info
    assert info["vendor"] == "eos" and info["trunk_port"] == "Ethernet25"
    original = eos_lab.running_config()
    assert original.startswith("! Command: show running-config") and "interface Ethernet10\n   switchport access vlan 100" in original
    assert lab.ping(info, 7, 10, count=2) == 0.0                   # one VLAN: the switch forwards directly

    res = orch.up(str(eos_lab.inventory))
    assert res.changed == {"sw1": True}
    assert "+   switchport trunk allowed vlan 107-108,110" in res.diffs["sw1"]
    drv = eos_lab.driver()
    try:
        facts = drv.facts()
        assert facts.ports["Ethernet10"].access_vid == 110 and facts.ports["Ethernet7"].mode == "access"
        assert facts.ports["Ethernet25"].allowed_vids == (107, 108, 110)
        lovs = eos_lab.lab_ovs()
        wait(lambda: lovs.vsctl("get", "Port", "et10", "tag").strip() == "110", what="lab data plane VID 110")
        wait(lambda: all(c["is_connected"] for c in orch.status(with_device=False).switches[0].controllers),
             what="controller connection")
        s = deployment.state_ovs(st.load())
        hair0 = bridges.otc_hairpinned_packets(s)
        loss = all_pairs_loss(info)
        assert all(v == 0.0 for v in loss.values()), loss
        assert bridges.otc_hairpinned_packets(s) - hair0 >= 36    # 6 pairs x 3 echo requests + replies went via br-of

        # pull host 10's cable: the emulated switch reports Ethernet10 down (from its OVS port's link state)
        h10 = info["hosts"]["10"]["netns"]
        assert drv.link_states()["Ethernet10"] == "up"
        subprocess.run(["ip", "-n", h10, "link", "set", "eth0", "down"], check=True)
        wait(lambda: drv.link_states()["Ethernet10"] == "down", what="Ethernet10 down on the device")
        subprocess.run(["ip", "-n", h10, "link", "set", "eth0", "up"], check=True)
        wait(lambda: drv.link_states()["Ethernet10"] == "up", what="Ethernet10 up again")
    finally:
        drv.close()

    r = orch.down()
    assert r.config_restored is True
    assert eos_lab.running_config() == original                   # byte for byte
    assert st.load() is None
    wait(lambda: lovs.vsctl("get", "Port", "et10", "tag").strip() == "100", what="lab back in VLAN 100")
    wait(lambda: lab.ping(info, 7, 10, count=1) == 0.0, what="direct forwarding again")
