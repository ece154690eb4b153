"""harmless.conformance.check: a switch's port model against its deployed plan (pure), on the config syntax of all four
drivers. What status, watch and the exporter report (issue #22): nothing on a migrated switch, a migrated port moved
back to VLAN 1, a trunk without a HARMLESS VLAN, a reload without the migration, a stale watch hold."""
from __future__ import annotations

import pytest

from harmless.conformance import check
from harmless.plan import PortPlan, SwitchPlan, TrunkPlan
from harmless.switch_drivers.models import parse_model

INV = "/etc/harmless/inventory.yaml"

IOS = """version 15.2
hostname sw1
vtp mode transparent
vlan 100
 name users
vlan 107
 name harmless-sw1-p7
vlan 108
 name harmless-sw1-p8
interface FastEthernet0/7
 switchport access vlan 107
 switchport mode access
 spanning-tree portfast
interface FastEthernet0/8
 description printer room 2.14
 switchport access vlan 108
 switchport mode access
interface FastEthernet0/9
 switchport access vlan 100
 switchport mode access
interface GigabitEthernet0/1
 description uplink to the HARMLESS server
 switchport trunk allowed vlan 107,108
 switchport mode trunk
end
"""
IOS_ORIGINAL = """version 15.2
hostname sw1
vtp mode transparent
vlan 100
 name users
interface FastEthernet0/7
 switchport access vlan 100
 switchport mode access
 spanning-tree portfast
interface FastEthernet0/8
 description printer room 2.14
 switchport access vlan 100
 switchport mode access
interface FastEthernet0/9
 switchport access vlan 100
 switchport mode access
interface GigabitEthernet0/1
 description uplink to the HARMLESS server
end
"""
EOS = """hostname sw1
vlan 100
   name users
vlan 107
   name harmless-sw1-p7
vlan 108
   name harmless-sw1-p8
interface Ethernet7
   switchport access vlan 107
interface Ethernet8
   description printer room 2.14
   switchport access vlan 108
interface Ethernet25
   description uplink to the HARMLESS server
   switchport mode trunk
   switchport trunk allowed vlan 107-108
"""
EOS_ORIGINAL = """hostname sw1
vlan 100
   name users
interface Ethernet7
   switchport access vlan 100
interface Ethernet8
   description printer room 2.14
   switchport access vlan 100
interface Ethernet25
   description uplink to the HARMLESS server
"""
JUNOS = """set system host-name ex1
set vlans users vlan-id 100
set vlans harmless-sw1-p7 vlan-id 107
set vlans harmless-sw1-p8 vlan-id 108
set interfaces ge-0/0/7 unit 0 family ethernet-switching interface-mode access
set interfaces ge-0/0/7 unit 0 family ethernet-switching vlan members harmless-sw1-p7
set interfaces ge-0/0/8 description "printer room 2.14"
set interfaces ge-0/0/8 unit 0 family ethernet-switching interface-mode access
set interfaces ge-0/0/8 unit 0 family ethernet-switching vlan members harmless-sw1-p8
set interfaces ge-0/0/47 description "uplink to the HARMLESS server"
set interfaces ge-0/0/47 unit 0 family ethernet-switching interface-mode trunk
set interfaces ge-0/0/47 unit 0 family ethernet-switching vlan members harmless-sw1-p7
set interfaces ge-0/0/47 unit 0 family ethernet-switching vlan members harmless-sw1-p8
set protocols rstp interface ge-0/0/7 edge
"""
JUNOS_ORIGINAL = """set system host-name ex1
set vlans users vlan-id 100
set interfaces ge-0/0/7 unit 0 family ethernet-switching interface-mode access
set interfaces ge-0/0/7 unit 0 family ethernet-switching vlan members users
set interfaces ge-0/0/8 description "printer room 2.14"
set interfaces ge-0/0/8 unit 0 family ethernet-switching interface-mode access
set interfaces ge-0/0/8 unit 0 family ethernet-switching vlan members users
set interfaces ge-0/0/47 description "uplink to the HARMLESS server"
set protocols rstp interface ge-0/0/7 edge
"""
PROCURVE = """hostname "sw1"
vlan 1
   name "DEFAULT_VLAN"
   untagged 1-6,9-24,26
   no untagged 7-8,25
   exit
vlan 100
   name "users"
   no ip address
   exit
vlan 107
   name "harmless-sw1-p7"
   untagged 7
   tagged 25
   exit
vlan 108
   name "harmless-sw1-p8"
   untagged 8
   tagged 25
   exit
"""
PROCURVE_ORIGINAL = """hostname "sw1"
vlan 1
   name "DEFAULT_VLAN"
   untagged 1-6,9-26
   no untagged 7-8
   exit
vlan 100
   name "users"
   untagged 7-8
   no ip address
   exit
"""

#: driver: (migrated config, original config, port 7, port 8, trunk, port 7 back to VLAN 1 by hand, VLAN 108 taken
#: off the trunk by hand)
CASES = {
    "ios": (IOS, IOS_ORIGINAL, "FastEthernet0/7", "FastEthernet0/8", "GigabitEthernet0/1",
            lambda t: t.replace(" switchport access vlan 107\n", " switchport access vlan 1\n"),
            lambda t: t.replace("allowed vlan 107,108", "allowed vlan 107")),
    "eos": (EOS, EOS_ORIGINAL, "Ethernet7", "Ethernet8", "Ethernet25",
            lambda t: t.replace("   switchport access vlan 107\n", "   switchport access vlan 1\n"),
            lambda t: t.replace("allowed vlan 107-108", "allowed vlan 107")),
    "junos": (JUNOS, JUNOS_ORIGINAL, "ge-0/0/7", "ge-0/0/8", "ge-0/0/47",
              lambda t: t.replace("set interfaces ge-0/0/7 unit 0 family ethernet-switching vlan members "
                                  "harmless-sw1-p7\n", ""),   # `delete ... vlan members`: the default VLAN (1)
              lambda t: t.replace("set interfaces ge-0/0/47 unit 0 family ethernet-switching vlan members "
                                  "harmless-sw1-p8\n", "")),
    "procurve": (PROCURVE, PROCURVE_ORIGINAL, "7", "8", "25",
                 lambda t: t.replace("   untagged 7\n", "").replace("no untagged 7-8,25", "untagged 7\n   no "
                                                                                         "untagged 8,25"),
                 lambda t: t.replace("   untagged 8\n   tagged 25\n", "   untagged 8\n")),
}


def plan(p7: str, p8: str, trunk: str, qinq: bool = False) -> SwitchPlan:
    return SwitchPlan(name="sw1", bridge="br-of-sw1", datapath_id="0000000000000001", protocols=("OpenFlow13",),
                      controllers=("tcp:127.0.0.1:6653",),
                      ports=(PortPlan(p7, 7, 107, trunk, "harmless-sw1-p7", qinq=qinq),
                             PortPlan(p8, 8, 108, trunk, "harmless-sw1-p8")),
                      trunks=(TrunkPlan(trunk, "eth1", "system", (), (107, 108)),))


@pytest.mark.parametrize("driver", CASES)
def test_a_migrated_switch_is_as_deployed(driver):
    migrated, _orig, p7, p8, trunk, *_ = CASES[driver]
    assert check(plan(p7, p8, trunk), parse_model(driver, migrated), INV) == []


@pytest.mark.parametrize("driver", CASES)
def test_a_migrated_port_moved_back_to_vlan_1_by_hand(driver):
    migrated, _orig, p7, p8, trunk, port_edit, _ = CASES[driver]
    found = check(plan(p7, p8, trunk), parse_model(driver, port_edit(migrated)), INV)
    assert [(f.kind, f.interface) for f in found] == [("port", p7)], found
    f = found[0]
    assert f.found == "an access port of VLAN 1" and f.expected == "access port of VLAN 107"
    assert "br-of port 7" in f.problem and f"harmless up -i {INV}" in f.fix and "harmless down" in f.fix
    assert f"remove {p7} from the inventory" in f.fix
    assert f.line().startswith("sw1: ") and "(fix: harmless up" in f.line()


@pytest.mark.parametrize("driver", CASES)
def test_a_harmless_vlan_taken_off_the_trunk_by_hand(driver):
    migrated, _orig, p7, p8, trunk, _port_edit, trunk_edit = CASES[driver]
    found = check(plan(p7, p8, trunk), parse_model(driver, trunk_edit(migrated)), INV)
    assert [(f.kind, f.interface) for f in found] == [("trunk", trunk)], found
    assert "no longer carries VLAN(s) 108" in found[0].problem


@pytest.mark.parametrize("driver", CASES)
def test_a_reload_without_the_migration_is_one_finding(driver):
    migrated, original, p7, p8, trunk, *_ = CASES[driver]
    found = check(plan(p7, p8, trunk), parse_model(driver, original), INV)
    assert [(f.kind, f.interface) for f in found] == [("not-migrated", None)], found
    assert "runs without HARMLESS's configuration" in found[0].problem


def test_one_port_left_migrated_is_no_reload():
    """Both ports off their VLANs but HARMLESS's VLANs still defined: per-port differences, not `not-migrated`."""
    t = IOS.replace(" switchport access vlan 107\n", " switchport access vlan 1\n").replace(
        " switchport access vlan 108\n", " switchport access vlan 100\n")
    found = check(plan("FastEthernet0/7", "FastEthernet0/8", "GigabitEthernet0/1"), parse_model("ios", t), INV)
    assert [(f.kind, f.interface) for f in found] == [("port", "FastEthernet0/7"), ("port", "FastEthernet0/8")]


@pytest.mark.parametrize("edit,expect", [
    (lambda t: t.replace(" switchport trunk allowed vlan 107,108\n switchport mode trunk\n",
                         " switchport access vlan 1\n switchport mode access\n"),
     "is no longer a trunk (an access port"),
    (lambda t: t.replace(" switchport mode trunk\n", " switchport trunk native vlan 107\n switchport mode trunk\n"),
     "has HARMLESS VLAN 107 as its native VLAN"),
    (lambda t: t.replace(" switchport mode trunk\n", " switchport mode trunk\n shutdown\n"), "is shut down"),
])
def test_a_trunk_changed_by_hand(edit, expect):
    found = check(plan("FastEthernet0/7", "FastEthernet0/8", "GigabitEthernet0/1"), parse_model("ios", edit(IOS)), INV)
    assert [f.kind for f in found] == ["trunk"] and expect in found[0].problem, found


def test_a_trunk_that_carries_all_vlans_or_more_is_fine():
    t = IOS.replace(" switchport trunk allowed vlan 107,108\n", "")
    assert check(plan("FastEthernet0/7", "FastEthernet0/8", "GigabitEthernet0/1"), parse_model("ios", t), INV) == []
    t = IOS.replace("allowed vlan 107,108", "allowed vlan 100,107,108")
    assert check(plan("FastEthernet0/7", "FastEthernet0/8", "GigabitEthernet0/1"), parse_model("ios", t), INV) == []


def test_a_qinq_port_must_stay_dot1q_tunnel():
    sp = plan("FastEthernet0/7", "FastEthernet0/8", "GigabitEthernet0/1", qinq=True)
    tunnel = IOS.replace(" switchport access vlan 107\n switchport mode access\n",
                         " switchport access vlan 107\n switchport mode dot1q-tunnel\n")
    assert check(sp, parse_model("ios", tunnel), INV) == []
    found = check(sp, parse_model("ios", IOS), INV)
    assert [(f.kind, f.expected) for f in found] == [("port", "dot1q-tunnel port of VLAN 107")]


def test_a_stale_watch_hold_is_reported_only_when_the_link_is_up():
    sp, model = plan("FastEthernet0/7", "FastEthernet0/8", "GigabitEthernet0/1"), parse_model("ios", IOS)
    found = check(sp, model, INV, links={"FastEthernet0/7": "up", "FastEthernet0/8": "up"}, held={8})
    assert [(f.kind, f.interface) for f in found] == [("held", "FastEthernet0/8")]
    assert "harmless watch --once" in found[0].fix
    assert check(sp, model, INV, links={"FastEthernet0/8": "down"}, held={8}) == []
    assert check(sp, model, INV) == []                      # links not read: not checked


def test_an_active_standby_pair_is_judged_on_the_trunk_the_device_forwards_on():
    """Issue #23: with two servers the device carries the port VIDs (and the heartbeat VID) on the active server's
    trunk and only the heartbeat VID on the standby's. Each server's status judges the device against that, whatever
    its own role: no difference on a pair as deployed, a difference when the forwarding trunk lost a VID."""
    from dataclasses import replace
    pair = IOS.replace("vlan 108\n name harmless-sw1-p8\n",
                       "vlan 108\n name harmless-sw1-p8\nvlan 4000\n name harmless-sw1-hb\n").replace(
        " switchport trunk allowed vlan 107,108\n switchport mode trunk\nend\n",
        " switchport trunk allowed vlan 107,108,4000\n switchport mode trunk\n"
        "interface GigabitEthernet0/2\n switchport trunk allowed vlan 4000\n switchport mode trunk\nend\n")
    base = plan("FastEthernet0/7", "FastEthernet0/8", "GigabitEthernet0/1")
    b_trunk = TrunkPlan("GigabitEthernet0/2", "eth1", "system", (), (107, 108))
    active = replace(base, heartbeat_vid=4000, server="a", peer="b", peer_trunks=(b_trunk,))
    standby = replace(base, trunks=(b_trunk,), heartbeat_vid=4000, server="b", peer="a",
                      peer_trunks=base.trunks, standby=True)
    model = parse_model("ios", pair)
    assert check(active, model, INV) == [] and check(standby, model, INV) == []
    cut = parse_model("ios", pair.replace("allowed vlan 107,108,4000", "allowed vlan 107,4000"))
    for sp in (active, standby):
        found = check(sp, cut, INV)
        assert [(f.kind, f.interface) for f in found] == [("trunk", "GigabitEthernet0/1")], found
        assert "no longer carries VLAN(s) 108" in found[0].problem
