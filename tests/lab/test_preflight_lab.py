"""Preflight end to end on the emulated IOS switch (a Catalyst 3750 in its factory-default VTP server mode): every
refusal through `harmless plan` (online, and the same from the saved running config offline), then `vtp: allow`
and `up` (no false "Command rejected"), traffic through the hairpin, and `down` restoring the exact original running
config and VLAN database. Plus the EOS-only features (MLAG peer link, routed port) on the emulated EOS switch."""
from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from harmless import orchestrator as orch
from harmless import state as st
from harmless.cli import main
from harmless.errors import InputError
from harmless.lab import topology as lab
from tests.lab.conftest import make_lab

pytestmark = pytest.mark.lab

#: ports of the emulated switch that are *not* plain access ports (besides hosts on Fa0/7, 0/8, 0/10)
EXTRA = """\
interface FastEthernet0/2
 switchport trunk encapsulation dot1q
 switchport mode trunk
interface FastEthernet0/3
 switchport access vlan 100
 switchport mode access
 channel-group 1 mode on
interface FastEthernet0/4
 switchport access vlan 100
 switchport mode access
 channel-group 1 mode on
interface FastEthernet0/5
 switchport access vlan 100
 switchport mode access
 switchport voice vlan 101
interface FastEthernet0/6
 switchport access vlan 100
 switchport mode access
 authentication port-control auto
 mab
 dot1x pae authenticator
interface FastEthernet0/9
 switchport access vlan 100
 switchport mode access
 switchport port-security
 switchport port-security mac-address sticky
interface GigabitEthernet0/2
 no switchport
 ip address 10.255.0.1 255.255.255.252
"""
SESSION_PORT = "FastEthernet0/20"


@pytest.fixture(scope="module")
def vtp_lab(tmp_path_factory):
    """Catalyst 3750 emulation, VTP server (no vtp line), the ports above, the session arriving on Fa0/20."""
    yield from make_lab(tmp_path_factory, vtp_transparent=False, platform="3750", extra_config=EXTRA,
                        session_port=SESSION_PORT)


def write_inventory(lab_, name: str, access=None, trunk=None, **switch) -> str:
    inv = yaml.safe_load(lab_.inventory.read_text())
    sw = inv["switches"][0]
    if access is not None:
        sw["access_ports"] = access
    if trunk is not None:
        sw["trunks"][0]["switch_port"] = trunk
    sw.update(switch)
    p = lab_.state_dir / name
    p.write_text(yaml.safe_dump(inv, sort_keys=False))
    return str(p)


def plan(inv: str, *extra: str):
    r = CliRunner().invoke(main, ["plan", "-i", inv, *extra])
    return r.exit_code, (r.stderr or "") + r.stdout


def one_line(out: str) -> str:
    """The ``error:`` lines of the CLI output (progress, warning and note lines left out; online ``plan`` also
    warns about an unreachable controller), whitespace-normalised."""
    errors = [ln for ln in out.splitlines() if ln.startswith("error: ")]
    return " ".join(" ".join(errors).split()) if errors else " ".join(out.split())


@pytest.fixture(scope="module")
def saved(vtp_lab):
    """The switch's running config as `show running-config` prints it, saved like an operator would."""
    p = vtp_lab.state_dir / "sw1-running.cfg"
    p.write_text(vtp_lab.running_config())
    return p


def test_vtp_server_refused_with_the_fix_online_and_offline(vtp_lab, saved):
    inv = str(vtp_lab.inventory)
    code, out = plan(inv)
    assert code == 2, out
    msg = one_line(out)
    assert "switches[0].vtp" in msg and "sw1 is a VTP server" in msg and "every switch of its VTP domain" in msg
    assert "vtp mode transparent" in msg and "vtp: allow" in msg
    code_off, out_off = plan(inv, "--config", f"sw1={saved}")
    assert code_off == 2 and one_line(out_off) == msg
    # up in the default VTP server mode: refused with the same fix, nothing changed, no state written
    with pytest.raises(InputError, match="sw1 is a VTP server"):
        orch.up(inv)
    assert vtp_lab.running_config() == saved.read_text() and st.load() is None


@pytest.mark.parametrize("case, access, trunk, words", [
    ("trunk", ["FastEthernet0/2"], None, ["sw1 FastEthernet0/2 is a trunk (native VLAN 1, allowed VLANs all)"]),
    ("lag-member", ["FastEthernet0/3"], None, ["sw1 FastEthernet0/3 is a member of Port-channel1"]),
    ("routed", ["GigabitEthernet0/2"], None, ["sw1 GigabitEthernet0/2 is a routed port"]),
    ("voice", ["FastEthernet0/5"], None, ["has a voice VLAN (101)", "keep: [voice]"]),
    ("dot1x", ["FastEthernet0/6"], None, ["has 802.1X/MAB authentication", "keep: [dot1x]"]),
    ("port-security", ["FastEthernet0/9"], None, ["has port security", "keep: [port_security]"]),
    ("lag-member-trunk", None, "FastEthernet0/4", ["trunks[0].switch_port", "member of Port-channel1",
                                                   "use Port-channel1 itself"]),
])
def test_refusals_online_and_the_same_offline(vtp_lab, saved, case, access, trunk, words):
    inv = write_inventory(vtp_lab, f"{case}.yaml", access=access, trunk=trunk, vtp="allow")
    before = vtp_lab.running_config()
    code, out = plan(inv)
    assert code == 2, out
    msg = one_line(out)
    for w in words:
        assert w in msg
    assert vtp_lab.running_config() == before                     # nothing changed
    code_off, out_off = plan(inv, "--config", f"sw1={saved}")
    assert code_off == 2 and one_line(out_off) == msg


def test_spanning_tree_instance_limit_online_and_offline(vtp_lab, saved):
    """VLANs 1, 100, 101 run PVST+ now; 3 more would exceed a limit of 5 (the override; the 3750's table value
    is 128)."""
    inv = write_inventory(vtp_lab, "stp.yaml", vtp="allow", stp_instance_limit=5)
    code, out = plan(inv)
    assert code == 2, out
    msg = one_line(out)
    assert "sw1 runs pvst (one spanning-tree instance per VLAN): 3 VLANs now + 3 HARMLESS VLANs = 6 instances, " \
           "more than the 5 set by stp_instance_limit" in msg
    code_off, out_off = plan(inv, "--config", f"sw1={saved}")
    assert code_off == 2 and one_line(out_off) == msg
    inv = write_inventory(vtp_lab, "stp-ok.yaml", vtp="allow", stp_instance_limit=6)
    assert plan(inv)[0] == 0


def test_the_port_of_harmless_own_session_is_refused_online(vtp_lab, saved):
    inv = write_inventory(vtp_lab, "uplink.yaml", access=[SESSION_PORT], vtp="allow")
    code, out = plan(inv)
    assert code == 2 and "sw1 FastEthernet0/20 is the port HARMLESS's own management session arrives on" \
        in one_line(out)
    # offline there is no session: the same inventory plans (documented limit of offline planning)
    code_off, out_off = plan(inv, "--config", f"sw1={saved}")
    assert code_off == 0, out_off


def test_keep_lets_a_voice_port_through(vtp_lab):
    inv = write_inventory(vtp_lab, "keep.yaml", access=[{"interface": "FastEthernet0/5", "keep": ["voice"]}],
                          vtp="allow")
    code, out = plan(inv, "--json")
    assert code == 0, out
    assert json.loads(out.strip().splitlines()[-1])["plan"]["switches"][0]["ports"][0]["vid"] == 105


def test_vtp_allow_up_works_and_down_restores_config_and_vlan_database(vtp_lab, saved):
    inv = write_inventory(vtp_lab, "allow.yaml", vtp="allow", mac_learning="on")   # offline: learning unknown
    drv = vtp_lab.driver()
    try:
        original, vlans_before = drv.running_config(), set(drv.device_vlans(""))
    finally:
        drv.close()
    # online and offline plans agree
    code, out = plan(inv, "--json")
    code_off, out_off = plan(inv, "--json", "--config", f"sw1={saved}")
    assert code == 0 and code_off == 0, out + out_off
    online, offline = (json.loads(o.strip().splitlines()[-1])["plan"] for o in (out, out_off))
    assert online == offline
    assert [p["vid"] for p in online["switches"][0]["ports"]] == [107, 108, 110]

    res = orch.up(inv)                                  # no false "Command rejected" on a VTP server
    assert res.changed == {"sw1": True} and res.failed == []
    drv = vtp_lab.driver()
    try:
        running, vlans = drv.running_config(), drv.device_vlans("")
        facts = drv.facts()
    finally:
        drv.close()
    assert {107, 108, 110} <= set(vlans) and vlans[107] == "harmless-sw1-p7"
    assert "\nvlan 107\n" not in running             # VTP server: in vlan.dat, not in the running config
    assert facts.ports["FastEthernet0/7"].access_vid == 107 and facts.port_model.vtp_mode == "server"
    assert lab.ping(vtp_lab.info, 7, 8, count=3) == 0.0       # the data plane followed: hairpin works

    out = orch.down()
    assert out.config_restored is True
    drv = vtp_lab.driver()
    try:
        assert drv.running_config() == original
        assert set(drv.device_vlans("")) == vlans_before   # the HARMLESS VLANs left vlan.dat too
    finally:
        drv.close()


# ----------------------------------------------------------------------------- EOS-only features
EOS_EXTRA = """\
interface Ethernet20
   channel-group 10 mode active
interface Ethernet21
   channel-group 10 mode active
interface Port-Channel10
   switchport mode trunk
mlag configuration
   domain-id pair1
   local-interface Vlan4094
   peer-address 10.255.255.1
   peer-link Port-Channel10
interface Ethernet5
   no switchport
   ip address 10.0.0.1/30
"""


@pytest.fixture(scope="module")
def eos_lab(tmp_path_factory):
    yield from make_lab(tmp_path_factory, vendor="eos", extra_config=EOS_EXTRA)


@pytest.mark.parametrize("case, access, trunk, words", [
    ("mlag-member", ["Ethernet20"], None, ["sw1 Ethernet20 is part of the MLAG peer link (Port-Channel10)"]),
    ("mlag-lag", ["Port-Channel10"], None, ["sw1 Port-Channel10 is part of the MLAG peer link"]),
    ("mlag-trunk", None, "Port-Channel10", ["trunks[0].switch_port", "MLAG peer link"]),
    ("routed", ["Ethernet5"], None, ["sw1 Ethernet5 is a routed port"]),
])
def test_eos_refusals_online_and_offline(eos_lab, case, access, trunk, words):
    saved = eos_lab.state_dir / "eos-running.cfg"
    saved.write_text(eos_lab.running_config())
    inv = write_inventory(eos_lab, f"eos-{case}.yaml", access=access, trunk=trunk)
    code, out = plan(inv)
    assert code == 2, out
    msg = one_line(out)
    for w in words:
        assert w in msg
    code_off, out_off = plan(inv, "--config", f"sw1={saved}")
    assert code_off == 2 and one_line(out_off) == msg
