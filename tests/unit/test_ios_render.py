"""IOS driver pure parts: VID range syntax, the harmless.j2 template, running-config parsing,
error-message extraction and the lab's OVS mapping. No network, no device."""
from types import SimpleNamespace

import pytest

from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from harmless.switch_drivers.ios.driver import IosDriver, device_message
from harmless.switch_drivers.ios.parse import parse_port_states, parse_vlans
from harmless.switch_drivers.ios.render import render_config
from harmless.switch_drivers.ios.vids import format_vid_ranges, parse_vid_ranges


# ----------------------------------------------------------------------------- VID ranges
@pytest.mark.parametrize("vids, text", [
    ([107], "107"),
    ([112, 107, 110, 111], "107,110-112"),
    ([10, 11], "10,11"),                      # IOS prints runs shorter than 3 one by one
    ([1, 2, 3, 5, 7, 8, 9, 10], "1-3,5,7-10"),
    ([4094, 4093, 4092, 4092], "4092-4094"),
    ([], "none"),
])
def test_format_vid_ranges(vids, text):
    assert format_vid_ranges(vids) == text


@pytest.mark.parametrize("bad", [[0], [4095], [-1], ["7"], [True]])
def test_format_vid_ranges_rejects_bad_vids(bad):
    with pytest.raises(ValueError):
        format_vid_ranges(bad)


@pytest.mark.parametrize("text, vids", [
    ("107,110-112", (107, 110, 111, 112)),
    (" 5 , 1-3 ,2", (1, 2, 3, 5)),
    ("ALL", None),
    ("all", None),
    ("none", ()),
    ("", ()),
])
def test_parse_vid_ranges(text, vids):
    assert parse_vid_ranges(text) == vids


@pytest.mark.parametrize("bad", ["12-10", "0", "4095", "1-4095", "a", "1,,2", "1-"])
def test_parse_vid_ranges_rejects(bad):
    with pytest.raises(ValueError):
        parse_vid_ranges(bad)


def test_vid_ranges_round_trip():
    vids = (1, 2, 3, 7, 100, 101, 200, 202, 203, 204, 4094)
    assert parse_vid_ranges(format_vid_ranges(vids)) == vids


# ----------------------------------------------------------------------------- template
ACCESS = [AccessPortChange("FastEthernet0/10", 110, "hl110"), AccessPortChange("FastEthernet0/7", 107, "hl107")]
TRUNKS = [TrunkChange("GigabitEthernet0/1", (110, 107, 111, 112))]


def test_render_golden():
    assert render_config(ACCESS, TRUNKS) == (
        "vlan 107\n name hl107\n!\n"
        "vlan 110\n name hl110\n!\n"
        "vlan 111\n!\n"
        "vlan 112\n!\n"
        "interface FastEthernet0/10\n switchport mode access\n switchport access vlan 110\n!\n"
        "interface FastEthernet0/7\n switchport mode access\n switchport access vlan 107\n!\n"
        "interface GigabitEthernet0/1\n switchport mode trunk\n switchport trunk allowed vlan 107,110-112\n!\n"
        "end\n")


def test_render_is_pure_and_driver_uses_template():
    drv = IosDriver("192.0.2.1", 22, "admin", "pw")
    assert drv.render(ACCESS, TRUNKS) == render_config(ACCESS, TRUNKS) == render_config(list(ACCESS), list(TRUNKS))


def test_render_empty():
    assert render_config([], []) == "end\n"


def test_rendered_config_parses_back():
    states = parse_port_states(render_config(ACCESS, TRUNKS))
    assert states["FastEthernet0/7"] == PortVlanState("FastEthernet0/7", "access", access_vid=107)
    assert states["GigabitEthernet0/1"] == PortVlanState("GigabitEthernet0/1", "trunk", native_vid=1,
                                                         allowed_vids=(107, 110, 111, 112))
    assert parse_vlans(render_config(ACCESS, TRUNKS)) == {107: "hl107", 110: "hl110", 111: "", 112: ""}


@pytest.mark.parametrize("access, trunks, match", [
    ([AccessPortChange("Fa0/7", 0, "x")], [], "outside"),
    ([AccessPortChange("Fa0/7", 107, "has space")], [], "VLAN name"),
    ([AccessPortChange("Fa0/7", 107, "x" * 33)], [], "VLAN name"),
    ([AccessPortChange("Fa0/7", 107, "a"), AccessPortChange("Fa0/8", 107, "b")], [], "two names"),
    ([AccessPortChange("Fa0/7", 107, "a"), AccessPortChange("Fa0/7", 108, "b")], [], "twice"),
    ([AccessPortChange("Fa0/7", 107, "a")], [TrunkChange("Fa0/7", (107,))], "twice"),
    ([AccessPortChange("Fa0/7\n shutdown", 107, "a")], [], "interface name"),
    ([], [TrunkChange("Gi0/1", (4095,))], "outside"),
])
def test_render_rejects_bad_input(access, trunks, match):
    with pytest.raises(ValueError, match=match):
        render_config(access, trunks)


# ----------------------------------------------------------------------------- parse_port_states
RUNNING = """\
Building configuration...
version 12.1
!
hostname sw1
!
vlan 1
!
vlan 100
 name users
!
vlan 200
!
interface FastEthernet0/1
!
interface FastEthernet0/7
 switchport access vlan 100
 switchport mode access
!
interface FastEthernet0/8
 description uplink to the HARMLESS server
 switchport trunk native vlan 99
 switchport trunk allowed vlan 100-105,110
 switchport mode trunk
!
interface FastEthernet0/9
 switchport mode trunk
 shutdown
!
interface FastEthernet0/10
 switchport access vlan 200
 switchport mode dynamic desirable
!
interface FastEthernet0/11
 switchport access vlan 300
 switchport mode dot1q-tunnel
!
interface FastEthernet0/12
 switchport trunk allowed vlan 1-10
 switchport trunk allowed vlan add 20,21
 switchport trunk allowed vlan remove 2-4
 switchport mode trunk
!
interface GigabitEthernet0/1
 no switchport
 ip address 192.0.2.1 255.255.255.0
!
interface GigabitEthernet0/2
 switchport trunk allowed vlan none
 switchport mode trunk
!
interface Vlan1
 no ip address
!
end
"""


def test_parse_port_states():
    st = parse_port_states(RUNNING)
    assert set(st) == {"FastEthernet0/1", "FastEthernet0/7", "FastEthernet0/8", "FastEthernet0/9",
                       "FastEthernet0/10", "FastEthernet0/11", "FastEthernet0/12", "GigabitEthernet0/2"}
    assert st["FastEthernet0/1"] == PortVlanState("FastEthernet0/1", "dynamic", access_vid=1)
    assert st["FastEthernet0/7"] == PortVlanState("FastEthernet0/7", "access", access_vid=100)
    assert st["FastEthernet0/8"] == PortVlanState("FastEthernet0/8", "trunk", native_vid=99,
                                                  allowed_vids=(100, 101, 102, 103, 104, 105, 110))
    assert st["FastEthernet0/9"] == PortVlanState("FastEthernet0/9", "trunk", native_vid=1, allowed_vids=None,
                                                  shutdown=True)
    assert st["FastEthernet0/10"] == PortVlanState("FastEthernet0/10", "dynamic", access_vid=200)
    assert st["FastEthernet0/11"] == PortVlanState("FastEthernet0/11", "tunnel", access_vid=300)
    assert st["FastEthernet0/12"].allowed_vids == (1, 5, 6, 7, 8, 9, 10, 20, 21)
    assert st["GigabitEthernet0/2"].allowed_vids == ()


def test_parse_vlans():
    assert parse_vlans(RUNNING) == {1: "", 100: "users", 200: ""}


def test_parse_empty_config():
    assert parse_port_states("") == {}


# ----------------------------------------------------------------------------- error text, secrets
def test_device_message_keeps_rejected_line():
    text = ("Configuration merge failed; automatic rollback attempted:\n"
            "spanning-tree bogus\n   ^\n% Invalid input detected at '^' marker.\n\n1203 bytes copied in 0.100 secs")
    assert device_message(text) == "spanning-tree bogus: % Invalid input detected at '^' marker."
    assert device_message("Candidate config could not be applied\nfoo") == "Candidate config could not be applied"
    assert device_message("") == ""


def test_repr_and_redaction_hide_password():
    drv = IosDriver("192.0.2.1", 22, "admin", "Sup3r-S3cret", optional_args={"secret": "En4ble-S3cret"})
    assert "S3cret" not in repr(drv)
    assert drv._redact("auth Sup3r-S3cret failed, enable En4ble-S3cret") == "auth *** failed, enable ***"
    assert drv._napalm_optional_args()["secret"] == "En4ble-S3cret"
    assert IosDriver("h", 22, "u", "pw")._napalm_optional_args() == {"port": 22, "secret": "pw", "read_timeout_override": 60}


# ----------------------------------------------------------------------------- lab: switch config -> OVS
def _port(mode=None, access=None, trunk=None, native=None):
    return SimpleNamespace(mode=mode, access_vlan=access, trunk_vlans=trunk, trunk_native_vlan=native)


@pytest.mark.parametrize("port, state", [
    (_port(), {"vlan_mode": "access", "tag": 1, "trunks": []}),
    (_port(access=107), {"vlan_mode": "access", "tag": 107, "trunks": []}),
    (_port("access", 110), {"vlan_mode": "access", "tag": 110, "trunks": []}),
    (_port("dot1q-tunnel", 300), {"vlan_mode": "dot1q-tunnel", "tag": 300, "trunks": [], "qinq_ethtype": "802.1q"}),
    (_port("trunk"), {"vlan_mode": "native-untagged", "tag": 1, "trunks": []}),
    (_port("trunk", trunk=[110, 107], native=99), {"vlan_mode": "native-untagged", "tag": 99, "trunks": [107, 110]}),
    (_port("trunk", trunk=list(range(1, 4097))), {"vlan_mode": "native-untagged", "tag": 1, "trunks": []}),
    (_port("trunk", trunk=[]), {"vlan_mode": "native-untagged", "tag": 1, "trunks": [1]}),
])
def test_port_ovs_state(port, state):
    from harmless.emulators.dataplane import port_ovs_state
    assert port_ovs_state(port) == state


def test_desired_ovs_ports_and_vsctl_argv():
    from harmless.emulators.dataplane import desired_ovs_ports, vsctl_argv
    ports = {"FastEthernet0/7": _port("access", 107), "GigabitEthernet0/1": _port("trunk", trunk=[107, 110])}
    sc = SimpleNamespace(get_port=ports.get)
    desired = desired_ovs_ports(sc, {"FastEthernet0/7": "fa0-7", "GigabitEthernet0/1": "gi0-1"})
    assert desired == {"fa0-7": {"vlan_mode": "access", "tag": 107, "trunks": []},
                       "gi0-1": {"vlan_mode": "native-untagged", "tag": 1, "trunks": [107, 110]}}
    assert vsctl_argv("unix:/x.sock", desired) == [
        "ovs-vsctl", "--db=unix:/x.sock", "--no-wait", "--timeout=5",
        "--", "set", "Port", "fa0-7", "vlan_mode=access", "tag=107", "trunks=[]",
        "--", "set", "Port", "gi0-1", "vlan_mode=native-untagged", "tag=1", "trunks=107,110"]
    with pytest.raises(KeyError):
        desired_ovs_ports(sc, {"FastEthernet0/99": "x"})


def test_ovs_sync_applies_only_changes_in_one_transaction():
    from harmless.emulators.dataplane import OvsSync
    p7 = _port("access", 107)
    sc = SimpleNamespace(get_port={"FastEthernet0/7": p7, "FastEthernet0/8": _port()}.get)
    calls = []
    sync = OvsSync(sc, {"FastEthernet0/7": "fa0-7", "FastEthernet0/8": "fa0-8"}, "unix:/x",
                   run=lambda argv: (calls.append(argv), (0, ""))[1])
    # 2 ports + vlan-limit + the stamp that makes ovs-vswitchd apply a --no-wait change of Port:trunks
    assert sync.apply(sync.pending()) and len(calls) == 1 and calls[0].count("set") == 4
    assert calls[0][-6:] == ["other_config:vlan-limit=1", "--", "set", "Open_vSwitch", ".",
                             "other_config:harmless-sync=1"]   # no dot1q-tunnel port: one tag, like an access port
    assert sync.pending() == {}
    p7.access_vlan = 120
    assert list(sync.pending()) == ["fa0-7"]
    assert sync.apply(sync.pending()) and "other_config:vlan-limit=1" not in calls[-1]   # unchanged: not rewritten
    assert calls[-1][-1] == "other_config:harmless-sync=2"    # a new stamp every transaction
    p7.mode = "dot1q-tunnel"                                  # a QinQ port appears: the C-tag must be parsed too
    assert sync.apply(sync.pending()) and "other_config:vlan-limit=2" in calls[-1]
    p7.mode = "access"
    assert sync.apply(sync.pending()) and "other_config:vlan-limit=1" in calls[-1]
    p7.access_vlan = 130
    sync.run = lambda argv: (1, "ovs-vsctl: no row \"fa0-7\" in table Port\n")
    assert not sync.apply(sync.pending()) and "no row" in sync.error and list(sync.pending()) == ["fa0-7"]
