"""Junos port model edge cases (switch-drivers/junos/model.py) and the conf.py fixes of issue #12: SECRET-DATA
comments, deactivate lines, glued interface wildcards, vlan-id-list VIDs, interface-range expansion, and the
driver's port states derived from the model."""
import pytest

from harmless.switch_drivers.base import PortVlanState
from harmless.switch_drivers.junos.conf import parse_config, parse_curly
from harmless.switch_drivers.junos.model import parse_model
from harmless.switch_drivers.junos.parse import parse_port_states, parse_vlans


def _ports(text):
    return {p.interface: p for p in parse_model(text).ports}


def test_secret_data_comment_after_a_statement_is_a_comment():
    text = ('system { root-authentication { encrypted-password "$6$x"; ## SECRET-DATA\n } }\n'
            'interfaces { ge-0/0/1 { unit 0 { family ethernet-switching; } } }\n')
    assert ("system", "root-authentication", "encrypted-password", "$6$x") in parse_curly(text)
    assert _ports(text)["ge-0/0/1"].access_vid == 1


def test_deactivate_and_protect_lines_in_set_syntax():
    text = ("set interfaces ge-0/0/1 unit 0 family ethernet-switching vlan members 10\n"
            "set interfaces ge-0/0/2 unit 0 family ethernet-switching vlan members 20\n"
            "set vlans v10 vlan-id 10\nset vlans v20 vlan-id 20\n"
            "deactivate interfaces ge-0/0/2\nprotect interfaces ge-0/0/1\n")
    active, inactive = parse_config(text)
    assert all(p[1] != "ge-0/0/2" for p in active if p[0] == "interfaces")
    ports = _ports(text)
    assert ports["ge-0/0/1"].access_vid == 10
    assert ports["ge-0/0/2"].mode == "unknown"
    assert ports["ge-0/0/2"].unparsed == (
        "inactive: set interfaces ge-0/0/2 unit 0 family ethernet-switching vlan members 20",)
    assert "ge-0/0/2" not in parse_port_states(text)


def test_activate_undoes_deactivate_and_delete_removes():
    text = ("set interfaces ge-0/0/1 unit 0 family ethernet-switching vlan members 10\n"
            "deactivate interfaces ge-0/0/1\nactivate interfaces ge-0/0/1\n"
            "set interfaces ge-0/0/3 disable\ndelete interfaces ge-0/0/3\n"
            "set vlans v vlan-id 10\n")
    ports = _ports(text)
    assert ports["ge-0/0/1"].access_vid == 10 and not ports["ge-0/0/1"].unparsed
    assert "ge-0/0/3" not in ports


def test_vlan_id_list_vids_are_all_in_vlans_and_members_by_name():
    text = ("set vlans CAM vlan-id-list 2100-2103\nset vlans CAM vlan-id-list 2200\n"
            "set interfaces ge-0/0/1 unit 0 family ethernet-switching interface-mode trunk\n"
            "set interfaces ge-0/0/1 unit 0 family ethernet-switching vlan members CAM\n")
    m = parse_model(text)
    assert m.vlans == (2100, 2101, 2102, 2103, 2200)
    assert m.port("ge-0/0/1").allowed_vids == (2100, 2101, 2102, 2103, 2200)
    assert {2100: "CAM", 2200: "CAM"}.items() <= parse_vlans(text).items()     # the driver avoids them too


@pytest.mark.parametrize("member, expected", [
    ("member ge-0/0/[1-3]", ["ge-0/0/1", "ge-0/0/2", "ge-0/0/3"]),
    ("member ge-1/0/[0-1,5]", ["ge-1/0/0", "ge-1/0/1", "ge-1/0/5"]),
    ("member-range xe-0/0/10 to xe-0/0/12", ["xe-0/0/10", "xe-0/0/11", "xe-0/0/12"]),
])
def test_interface_range_members_are_expanded(member, expected):
    text = (f"set interfaces interface-range R {member}\n"
            "set interfaces interface-range R unit 0 family ethernet-switching vlan members 30\n")
    ports = _ports(text)
    assert list(ports) == expected
    assert {p.access_vid for p in ports.values()} == {30}


def test_storm_control_is_kept_in_unparsed_never_dropped():
    els = ("set interfaces ge-0/0/1 unit 0 family ethernet-switching storm-control default\n"
           "set interfaces ge-0/0/2 unit 0 family ethernet-switching\n")
    assert _ports(els)["ge-0/0/1"].unparsed == (
        "set interfaces ge-0/0/1 unit 0 family ethernet-switching storm-control default",)
    legacy = els.replace("storm-control default", "port-mode access") + \
        "set ethernet-switching-options storm-control interface ge-0/0/2.0 bandwidth 5000\n"
    assert _ports(legacy)["ge-0/0/2"].unparsed == (
        "set ethernet-switching-options storm-control interface ge-0/0/2.0 bandwidth 5000",)


def test_routed_units_lag_members_and_management():
    text = ("set interfaces ge-0/0/0 unit 0 family inet address 192.0.2.1/30\n"
            "set interfaces ge-0/0/1 ether-options 802.3ad ae0\n"
            "set interfaces xe-0/1/0 gigether-options 802.3ad ae0\n"
            "set interfaces ae0 unit 0 family ethernet-switching interface-mode trunk\n"
            "set interfaces ae0 unit 0 family ethernet-switching vlan members all\n"
            "set interfaces fxp0 unit 0 family inet address 198.51.100.1/24\n"
            "set interfaces irb unit 5 family inet address 10.0.5.1/24\n"
            "set interfaces lo0 unit 0 family inet address 10.255.0.1/32\n")
    ports = _ports(text)
    assert ports["ge-0/0/0"].mode == "routed" and not ports["ge-0/0/0"].unparsed
    assert ports["ge-0/0/1"].lag == ports["xe-0/1/0"].lag == "ae0" and ports["ge-0/0/1"].mode == "unknown"
    assert ports["ae0"].is_lag and ports["ae0"].allowed_vids == "all" and ports["ae0"].native_vid is None
    assert ports["fxp0"].management and ports["fxp0"].mode == "routed"
    assert "irb" not in ports and "lo0" not in ports


def test_native_vlan_by_name_voip_dot1x_and_mac_limit():
    text = ("set vlans data vlan-id 10\nset vlans voice vlan-id 20\nset vlans mgmt vlan-id 99\n"
            "set interfaces ge-0/0/1 unit 0 family ethernet-switching port-mode access\n"
            "set interfaces ge-0/0/1 unit 0 family ethernet-switching vlan members data\n"
            "set interfaces ge-0/0/9 unit 0 family ethernet-switching port-mode trunk\n"
            "set interfaces ge-0/0/9 unit 0 family ethernet-switching vlan members [ data voice ]\n"
            "set interfaces ge-0/0/9 unit 0 family ethernet-switching native-vlan-id mgmt\n"
            "set ethernet-switching-options voip interface ge-0/0/1.0 vlan voice\n"
            "set ethernet-switching-options secure-access-port interface ge-0/0/1.0 mac-limit 2\n"
            "set protocols dot1x authenticator interface all supplicant multiple\n")
    ports = _ports(text)
    p1, p9 = ports["ge-0/0/1"], ports["ge-0/0/9"]
    assert (p1.access_vid, p1.voice_vid, p1.port_security, p1.dot1x) == (10, 20, True, True)
    assert (p9.native_vid, p9.allowed_vids, p9.dot1x) == (99, (10, 20), False)    # 802.1X: access ports only
    assert parse_port_states(text)["ge-0/0/9"] == PortVlanState("ge-0/0/9", "trunk", native_vid=99,
                                                                allowed_vids=(10, 20))


def test_mclag_peer_link_marks_the_ae_and_its_members():
    text = ("set interfaces et-0/0/48 ether-options 802.3ad ae0\n"
            "set interfaces ae0 unit 0 family ethernet-switching interface-mode trunk\n"
            "set multi-chassis multi-chassis-protection 10.0.0.2 interface ae0\n")
    ports = _ports(text)
    assert ports["ae0"].mlag_peer_link and ports["et-0/0/48"].mlag_peer_link


@pytest.mark.parametrize("text", ["", "hostname sw1\ninterface Gi0/1\n switchport\n",
                                  "## only a comment\n", "foo { bar; }\n"])
def test_not_a_junos_configuration(text):
    with pytest.raises(ValueError):
        parse_model(text)


def test_apply_groups_wildcards_own_values_win_and_except():
    text = ("set groups ACC interfaces <ge-*> unit 0 family ethernet-switching vlan members 10\n"
            "set groups ACC interfaces <ge-*> description \"from group\"\n"
            "set groups UP interfaces <*> unit 0 family ethernet-switching interface-mode trunk\n"
            "set apply-groups ACC\n"
            "set interfaces ge-0/0/1 disable\n"
            "set interfaces ge-0/0/2 unit 0 family ethernet-switching vlan members 20\n"
            "set interfaces ge-0/0/2 description own\n"
            "set interfaces ge-0/0/3 apply-groups-except ACC\n"
            "set interfaces ge-0/0/3 unit 0 family inet address 192.0.2.1/30\n"
            "set interfaces xe-0/1/0 apply-groups UP\n"
            "set interfaces xe-0/1/0 unit 0 family ethernet-switching vlan members 10\n")
    ports = _ports(text)
    assert list(ports) == ["ge-0/0/1", "ge-0/0/2", "ge-0/0/3", "xe-0/1/0"]
    assert (ports["ge-0/0/1"].access_vid, ports["ge-0/0/1"].description, ports["ge-0/0/1"].shutdown) == \
        (10, "from group", True)
    assert (ports["ge-0/0/2"].access_vid, ports["ge-0/0/2"].description) == (20, "own")
    assert ports["ge-0/0/3"].mode == "routed" and not ports["ge-0/0/3"].unparsed
    assert (ports["xe-0/1/0"].mode, ports["xe-0/1/0"].allowed_vids) == ("trunk", (10,))
