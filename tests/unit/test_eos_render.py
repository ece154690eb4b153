"""EOS driver pure parts: VID list syntax, the harmless.j2 template (golden files, validated by parsing them
back with ciscoconfparse2 and by the lab's EOS config grammar), running-config parsing, error messages."""
import re

import pytest
from ciscoconfparse2 import CiscoConfParse

from harmless.emulators import eos as eos_emu
from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from harmless.switch_drivers.eos.driver import EosDriver, device_message
from harmless.switch_drivers.eos.parse import parse_port_states, parse_vlans, tpid_of
from harmless.switch_drivers.eos.render import render_config
from harmless.switch_drivers.eos.vids import format_vid_ranges, parse_vid_ranges
from tests.unit.golden_files import check_golden


@pytest.mark.parametrize("vids, text", [
    ([107], "107"), ([110, 107, 108], "107-108,110"), ([10, 11], "10-11"), ([1, 2, 3, 5, 9], "1-3,5,9"), ([], "none"),
])
def test_format_vid_ranges(vids, text):
    assert format_vid_ranges(vids) == text
    assert parse_vid_ranges(text) == (tuple(sorted(vids)) if vids else ())


@pytest.mark.parametrize("bad", [[0], [4095], ["7"], [True]])
def test_format_vid_ranges_rejects(bad):
    with pytest.raises(ValueError):
        format_vid_ranges(bad)


ACCESS = [AccessPortChange("Ethernet10", 110, "hl110"), AccessPortChange("Ethernet7", 107, "hl107")]
TRUNKS = [TrunkChange("Ethernet25", (110, 107, 108))]
QINQ_ACCESS = ACCESS + [AccessPortChange("Ethernet8", 108, "hl108", qinq=True)]
QINQ_TRUNKS = [TrunkChange("Ethernet25", (107, 110)), TrunkChange("Port-Channel1", (108,), stag_tpid=0x88A8)]

CASES = {
    "eos_access_trunk.cfg": (ACCESS, TRUNKS, {
        "Ethernet7": PortVlanState("Ethernet7", "access", access_vid=107),
        "Ethernet10": PortVlanState("Ethernet10", "access", access_vid=110),
        "Ethernet25": PortVlanState("Ethernet25", "trunk", native_vid=1, allowed_vids=(107, 108, 110))}),
    "eos_qinq_two_trunks.cfg": (QINQ_ACCESS, QINQ_TRUNKS, {
        "Ethernet7": PortVlanState("Ethernet7", "access", access_vid=107),
        "Ethernet8": PortVlanState("Ethernet8", "tunnel", access_vid=108),
        "Ethernet10": PortVlanState("Ethernet10", "access", access_vid=110),
        "Ethernet25": PortVlanState("Ethernet25", "trunk", native_vid=1, allowed_vids=(107, 110)),
        "Port-Channel1": PortVlanState("Port-Channel1", "trunk", native_vid=1, allowed_vids=(108,))}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_configs_parse_back_to_the_intended_port_states(name):
    access, trunks, expected = CASES[name]
    golden = check_golden(name, render_config(access, trunks))
    # syntax: EOS hierarchy (3-space indented children under vlan/interface blocks, '!' separators, 'end')
    parsed = CiscoConfParse(golden.splitlines(), syntax="ios")
    tops = [o.text for o in parsed.find_objects(r"^\S")]
    assert tops[-1] == "end" and all(re.match(r"^(vlan \d+|interface \S+|!|end)$", t) for t in tops), tops
    for obj in parsed.find_objects(r"^interface "):
        assert obj.children
    for obj in parsed.find_objects(r"^(vlan|interface) "):
        assert all(c.text.startswith("   ") and c.text[3] != " " for c in obj.children)
    # semantics: the text says what we asked for
    assert parse_port_states(golden) == expected
    assert {a.vid: a.vlan_name for a in access}.items() <= parse_vlans(golden).items()
    # the lab EOS grammar accepts every line, and the switch ends in the same per-port state
    sw = eos_emu.EosSwitch(eos_emu.new_configuration("sw"), schedule=None)
    sw.sc.add_port(eos_emu.Port("Port-Channel1"))
    assert eos_emu.apply_startup(sw, golden) == []
    states = parse_port_states(eos_emu.running_config_text(sw.sc))
    assert {n: states[n] for n in expected} == expected


def test_tpid_only_rendered_with_qinq_and_when_not_default():
    assert "ethertype" not in render_config(ACCESS, [TrunkChange("Ethernet25", (107, 110), stag_tpid=0x88A8)])
    text = render_config(QINQ_ACCESS, QINQ_TRUNKS)
    assert tpid_of(text, "Port-Channel1") == 0x88A8 and tpid_of(text, "Ethernet25") == 0x8100


@pytest.mark.parametrize("access, trunks, msg", [
    ([AccessPortChange("Ethernet7", 0, "x")], [], "outside 1..4094"),
    ([AccessPortChange("Ethernet7", 107, "bad name")], [], "VLAN name"),
    ([AccessPortChange("ge-0/0/7", 107, "x")], [], "not an EOS switch port"),
    ([AccessPortChange("Ethernet7", 107, "a"), AccessPortChange("Ethernet8", 107, "b")], [], "two names"),
    ([AccessPortChange("Ethernet7", 107, "a")], [TrunkChange("Ethernet7", (107,))], "changed twice"),
    ([], [TrunkChange("Ethernet25", (107,), stag_tpid=0x9100)], "TPID 0x9100"),
    ([], [TrunkChange("Ethernet25", (4095,))], "outside 1..4094"),
])
def test_render_rejects_bad_input(access, trunks, msg):
    with pytest.raises(ValueError, match=msg):
        render_config(access, trunks)


RUNNING = """\
! Command: show running-config
! device: sw2 (vEOS-lab, EOS-4.30.1F)
!
hostname sw2
!
vlan 100
   name users
!
vlan 200-201
!
interface Ethernet1
   description uplink
   switchport trunk native vlan 99
   switchport trunk allowed vlan 100,200-201
   switchport trunk allowed vlan remove 201
   switchport mode trunk
!
interface Ethernet2
   shutdown
   switchport access vlan 100
!
interface Ethernet3
   switchport access vlan 200
   switchport mode dot1q-tunnel
!
interface Ethernet4
   no switchport
!
interface Ethernet5
   switchport mode trunk
!
interface Ethernet6
!
interface Management1
   ip address 10.0.0.2/24
!
interface Vlan100
   ip address 10.1.0.1/24
!
end
"""


def test_parse_running_config():
    ports = parse_port_states(RUNNING)
    assert ports == {
        "Ethernet1": PortVlanState("Ethernet1", "trunk", native_vid=99, allowed_vids=(100, 200)),
        "Ethernet2": PortVlanState("Ethernet2", "access", access_vid=100, shutdown=True),
        "Ethernet3": PortVlanState("Ethernet3", "tunnel", access_vid=200),
        "Ethernet5": PortVlanState("Ethernet5", "trunk", native_vid=1, allowed_vids=None),
        "Ethernet6": PortVlanState("Ethernet6", "access", access_vid=1),
    }
    assert parse_vlans(RUNNING) == {1: "default", 100: "users", 200: "", 201: ""}


def test_device_message_and_redaction():
    err = ("Error [1002]: CLI command 7 of 12 'switchport access vlan 110' failed: invalid command "
           "[errors: ['% Invalid input']]")
    assert device_message(err) == "switchport access vlan 110: invalid command"
    assert device_message("\n  boom \n") == "boom" and device_message("") == ""
    d = EosDriver("h", 443, "admin", "S3cret!", optional_args={"enable_password": "En4ble"})
    assert d._redact("pw S3cret! en En4ble") == "pw *** en ***" and "S3cret" not in repr(d)


def test_lab_eos_data_plane_mirrors_dot1q_tunnel_and_trunk_tpid():
    sw = eos_emu.EosSwitch(eos_emu.new_configuration("sw"), schedule=None)
    assert eos_emu.apply_startup(sw, render_config(QINQ_ACCESS, [TrunkChange("Ethernet25", (107, 108, 110))])) == []
    pm = {"Ethernet7": "et7", "Ethernet8": "et8", "Ethernet25": "et25"}
    want = eos_emu.desired_ovs_ports(sw.sc, pm)
    assert want["et7"] == {"vlan_mode": "access", "tag": 107, "trunks": []}
    assert want["et8"] == {"vlan_mode": "dot1q-tunnel", "tag": 108, "trunks": [], "qinq_ethtype": "802.1q"}
    assert want["et25"] == {"vlan_mode": "native-untagged", "tag": 1, "trunks": [107, 108, 110]}
    assert eos_emu.apply_startup(sw, "interface Ethernet25\n   switchport dot1q ethertype 0x88a8\n") == []
    assert eos_emu.desired_ovs_ports(sw.sc, pm)["et8"]["qinq_ethtype"] == "802.1ad"
    from harmless.emulators.dataplane import vsctl_argv
    argv = vsctl_argv("unix:/x", {"et8": eos_emu.desired_ovs_ports(sw.sc, pm)["et8"]})
    assert argv[-5:] == ["et8", "vlan_mode=dot1q-tunnel", "tag=108", "trunks=[]", "other_config:qinq-ethtype=802.1ad"]
