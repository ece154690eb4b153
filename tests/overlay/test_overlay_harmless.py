"""The edge overlay with one HARMLESS server (one lab per module): server ``hl`` is the emulated legacy switch whose
access ports 7/8 carry bare-metal hosts (VMs r7, b8) and whose port 24 (dot1q-tunnel) is cabled to the L2 core;
``harmless up`` migrates them and br-of-sw1 is hl's edge switch. Packet fate by ``ofproto/trace`` on br-of-sw1,
tenant traffic between the HARMLESS hosts and VMs on plain servers, isolation by capture, a clean core MAC table."""
from __future__ import annotations

import re

import pytest

from harmless.overlay import lab as L
from harmless.overlay import measure as M
from harmless.ovs import Ovs
from tests.conftest import require_root_ovs
from tests.overlay.conftest import overlay_lab

pytestmark = [pytest.mark.root, pytest.mark.ovs]


@pytest.fixture(scope="module")
def ovh(tmp_path_factory):
    require_root_ovs()
    import importlib.util
    if importlib.util.find_spec("fake_switches") is None:
        pytest.skip("fake-switches is not installed (packaging/install.sh installs it)")
    yield from overlay_lab(tmp_path_factory, "overlay-harmless.yaml", "h")


def test_br_of_is_the_edge_switch(ovh):
    st = L.status(ovh)
    assert st["servers"]["hl"]["connected"] and st["where"]["r7"] == ["hl", 7] and st["where"]["b8"] == ["hl", 8]
    reg = L.registry(ovh)
    r7, r2 = reg.vm("r7")[1], reg.vm("r2")[1]
    o = Ovs(L.lab_dir(ovh) / "harmless" / "ovs", netns=L.ns(ovh, "hl"))
    out = o.appctl("ofproto/trace", "br-of-sw1", f"in_port=7,dl_src={r7.mac},dl_dst={r2.mac},dl_type=0x0800,"
                                                 f"nw_src={r7.address},nw_dst={r2.address}")
    vid = st["vids"]["s2"]["r2"]
    # br-of: Fig. 6 out of legacy port 24 (the uplink), patched into br-otc, which adds the port's own outer tag
    assert re.search(r"^\s+output:24$", out, re.M)
    final = next(ln for ln in out.splitlines() if ln.startswith("Final flow:"))
    assert f"dl_src={st['servers']['hl']['mac']}" in final and f"dl_dst={st['servers']['s2']['mac']}" in final
    assert "push_vlan" in out and f"set_field:{4096 + vid}->vlan_vid" in out


def test_tenants_across_harmless_and_plain_servers(ovh):
    reg = L.registry(ovh)
    vms = [v.name for _, v in reg.vms()]
    with M.Capture(ovh, vms) as cap:
        loss, per = M.all_pairs_loss(ovh, count=2)
        att = M.cross_tenant_attempts(ovh)
    assert loss == 0.0, per
    assert att["replies"] == 0
    cross, foreign, ex = M.leaks(reg, cap.frames())
    assert cross == 0 and foreign == 0, ex
    assert len(cap.frames()["r7"]) > 0 and len(cap.frames()["b8"]) > 0
    macs = {m for _, _, m in M.legacy_fdb(ovh)}
    assert macs and not macs & {v.mac for _, v in reg.vms()}
