"""HARMLESS owns only what it wrote (issue #22): config objects per syntax and the three-way merge of ``down``, on
realistic IOS, EOS, Junos (ELS and non-ELS, the recorded configs of tests/drivers/mocked_data/junos) and ProCurve
(the recorded E2910al config) texts. Pure: no device.

Each merge case builds three configs: the original (O), what HARMLESS left (H: O + its tagging config) and the
device now (D: H + the operator's edits); ``down`` must give back O + the same edits (E), object for object, and stop
on an edit to what HARMLESS owns.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from harmless import ownership as ow
from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.blocksyntax import segments
from harmless.switch_drivers.junos import ownership as jo
from harmless.switch_drivers.junos import parse as junos_parse
from harmless.switch_drivers.junos.render import render_config as junos_render
from harmless.switch_drivers.ownership import Owned, syntax_for, three_way
from harmless.switch_drivers.procurve.dialect import strip_running
from harmless.switch_drivers.procurve.render import render_config as procurve_render

ROOT = Path(__file__).resolve().parents[2]
JUNOS = ROOT / "tests/drivers/mocked_data/junos"


def edit(text: str, *pairs: tuple[str, str]) -> str:
    """``text`` with each ``(old, new)`` replaced; every ``old`` must occur exactly once."""
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def down_of(syntax: str, candidate: str, original: str, migrated: str, now: str, discard: bool = False):
    own = ow.record(syntax, candidate, original, migrated, None)
    return own, ow.plan_down("sw1", own, syntax_for(syntax), original, now, "orig.cfg", discard)


# ----------------------------------------------------------------------------- IOS
IOS_O = """version 15.0
no service pad
service timestamps debug datetime msec
!
hostname access-sw3
!
boot-start-marker
boot-end-marker
!
enable secret 5 $1$abcd$0123456789abcdefghij.
!
username netops privilege 15 secret 5 $1$wxyz$0123456789abcdefghij.
aaa new-model
!
vtp mode transparent
!
spanning-tree mode rapid-pvst
spanning-tree extend system-id
!
vlan 100
 name users
!
vlan 101
 name printers
!
vlan 105
 name harmless-access-sw3-p9
!
interface FastEthernet0/7
 description desk 2.07
 switchport access vlan 100
 switchport mode access
 spanning-tree portfast
!
interface FastEthernet0/8
 switchport access vlan 100
 switchport mode access
!
interface FastEthernet0/9
!
interface FastEthernet0/12
 switchport access vlan 101
 switchport mode access
!
interface GigabitEthernet0/1
 description uplink to the HARMLESS server
 switchport trunk allowed vlan 1,100,101
 switchport mode trunk
!
interface Vlan1
 ip address 10.0.0.3 255.255.255.0
!
ip default-gateway 10.0.0.1
ip http server
!
ip access-list standard MGMT
 permit 10.0.0.0 0.0.0.255
!
banner motd ^C
Authorized access only.
Disconnect now if you are not.
^C
!
line con 0
line vty 0 4
 access-class MGMT in
 transport input ssh
!
end"""

IOS_CANDIDATE = """vlan 107
 name harmless-access-sw3-p7
!
vlan 108
 name harmless-access-sw3-p8
!
interface FastEthernet0/7
 switchport mode access
 switchport access vlan 107
!
interface FastEthernet0/8
 switchport mode access
 switchport access vlan 108
!
interface GigabitEthernet0/1
 switchport mode trunk
 switchport trunk allowed vlan 107,108
!
no vlan 105
end
"""

IOS_H = edit(IOS_O,
             ("vlan 105\n name harmless-access-sw3-p9\n!\n",
              "vlan 107\n name harmless-access-sw3-p7\n!\nvlan 108\n name harmless-access-sw3-p8\n!\n"),
             (" description desk 2.07\n switchport access vlan 100",
              " description desk 2.07\n switchport access vlan 107"),
             ("interface FastEthernet0/8\n switchport access vlan 100", "interface FastEthernet0/8\n switchport access "
              "vlan 108"),
             (" switchport trunk allowed vlan 1,100,101", " switchport trunk allowed vlan 107,108"))

IOS_EDITS = (("vlan 101\n name printers\n!\n", "vlan 101\n name printers\n!\nvlan 555\n name ops\n!\n"),
             ("interface FastEthernet0/12\n", "interface FastEthernet0/12\n description printer room 2.14\n"),
             ("interface FastEthernet0/9\n!", "interface FastEthernet0/9\n switchport mode trunk\n!"),
             ("ip access-list standard MGMT\n permit 10.0.0.0 0.0.0.255\n!\n",
              "ip access-list standard MGMT\n permit 10.0.0.0 0.0.0.255\n!\nip access-list extended BLOCK-TELNET\n"
              " deny   tcp any any eq telnet\n permit ip any any\n!\n"),
             ("Authorized access only.", "Authorised access only."))


def test_ios_objects_banner_and_candidate_keys():
    u = syntax_for("ios").units(IOS_O)
    assert u["banner motd ^c"] == ("banner motd ^C", "Authorized access only.", "Disconnect now if you are not.", "^C")
    assert u["interface fastethernet0/7"][0] == "interface FastEthernet0/7" and len(u["interface fastethernet0/7"]) == 5
    assert u["ip access-list standard mgmt"] == ("ip access-list standard MGMT", " permit 10.0.0.0 0.0.0.255")
    assert "!" not in u and "end" not in u
    assert syntax_for("ios").touched(IOS_CANDIDATE) == [
        "vlan 107", "vlan 108", "interface fastethernet0/7", "interface fastethernet0/8",
        "interface gigabitethernet0/1", "vlan 105"]
    # a one-line banner closes itself; an EOS banner ends with EOF
    assert [k for k, _ in segments("banner exec ^C hi ^C\nhostname x\n")] == ["banner exec ^c hi ^c", "hostname x"]
    eos = "banner login\nWelcome\n!\nEOF\n!\nhostname x\n"
    assert syntax_for("eos").units(eos)["banner login"] == ("banner login", "Welcome", "!", "EOF")


def test_ios_down_keeps_the_operators_edits_and_gives_back_a_removed_vlan_in_place():
    own, r = down_of("ios", IOS_CANDIDATE, IOS_O, IOS_H, edit(IOS_H, *IOS_EDITS))
    assert {o.key for o in own.objects} == {"vlan 107", "vlan 108", "vlan 105", "interface fastethernet0/7",
                                           "interface fastethernet0/8", "interface gigabitethernet0/1"}
    assert r.mode == "merge" and not r.conflicts and not r.equals_original
    expected = edit(IOS_O, *IOS_EDITS)
    ios = syntax_for("ios")
    assert ios.units(r.target) == ios.units(expected)
    assert {c.label for c in r.kept} == {"vlan 555", "interface FastEthernet0/9", "interface FastEthernet0/12",
                                         "ip access-list extended BLOCK-TELNET", "banner motd ^C"}
    assert {c.label for c in r.reverted} == {"vlan 107", "vlan 108", "vlan 105", "interface FastEthernet0/7",
                                             "interface FastEthernet0/8", "interface GigabitEthernet0/1"}
    # the stale VLAN HARMLESS removed comes back where the original had it (after vlan 101, before the new 555)
    lines = r.target.splitlines()
    assert lines.index("vlan 101") < lines.index("vlan 105") < lines.index("interface FastEthernet0/7")
    assert "~ interface FastEthernet0/7\n-  switchport access vlan 107\n+  switchport access vlan 100" in r.diff
    # with the switch's device-diff syntax: the diff every command prints (docs/cli.md, NAPALM compare_config style)
    own = ow.record("ios", IOS_CANDIDATE, IOS_O, IOS_H, None)
    r2 = ow.plan_down("sw1", own, syntax_for("ios"), IOS_O, edit(IOS_H, *IOS_EDITS), "o", diff_syntax="ios")
    assert " interface FastEthernet0/7\n- switchport access vlan 107\n+ switchport access vlan 100" in r2.diff
    assert "vlan 555" not in r2.diff and r2.target == r.target
    # no edits: the original itself, byte for byte
    _own, r = down_of("ios", IOS_CANDIDATE, IOS_O, IOS_H, IOS_H)
    assert r.equals_original and r.target == IOS_O and not r.kept


def test_ios_an_edit_to_what_harmless_owns_is_a_conflict_and_discard_gives_the_original():
    for owned_edit, label in (
            ((" description desk 2.07\n switchport access vlan 107", " description desk 2.07\n switchport access "
              "vlan 555"), "interface FastEthernet0/7"),
            ((" switchport trunk allowed vlan 107,108", " switchport trunk allowed vlan 107,108,555"),
             "interface GigabitEthernet0/1"),
            (("vlan 108\n name harmless-access-sw3-p8", "vlan 108\n name cameras"), "vlan 108")):
        now = edit(IOS_H, *IOS_EDITS, owned_edit)
        _own, r = down_of("ios", IOS_CANDIDATE, IOS_O, IOS_H, now)
        assert [c.label for c in r.conflicts] == [label]
        assert label not in {c.label for c in r.kept}
        _own, r = down_of("ios", IOS_CANDIDATE, IOS_O, IOS_H, now, discard=True)
        assert r.mode == "discard" and r.target == IOS_O and r.equals_original
        assert {c.label for c in r.discarded} >= {"vlan 555", "ip access-list extended BLOCK-TELNET"}


def test_ios_mac_learning_line_is_one_object_whatever_its_vlans_and_down_gives_back_its_base():
    """``no mac address-table learning vlan LIST`` (hairpin, issue 21): the running config prints one line with every
    VLAN that does not learn, in ranges; the candidate names HARMLESS's VIDs. One object, keyed by the command: down
    removes the line HARMLESS added, or gives back the operator's own list where the line existed before."""
    cand = edit(IOS_CANDIDATE, ("!\ninterface FastEthernet0/7", "!\nno mac address-table learning vlan 107,108\n"
                                                                  "interface FastEthernet0/7"))
    ios = syntax_for("ios")
    assert "mac address-table learning vlan" in ios.touched(cand)
    at = "spanning-tree extend system-id\n!\n"
    mig = edit(IOS_H, (at, at + "no mac address-table learning vlan 107-108\n!\n"))
    _own, r = down_of("ios", cand, IOS_O, mig, edit(mig, *IOS_EDITS))
    assert "mac address-table learning vlan" not in r.target
    assert ios.units(r.target) == ios.units(edit(IOS_O, *IOS_EDITS))
    # the operator had turned learning off in VLAN 300 before: the shared line goes back to that
    orig = edit(IOS_O, (at, at + "no mac address-table learning vlan 300\n!\n"))
    mig = edit(IOS_H, (at, at + "no mac address-table learning vlan 107-108,300\n!\n"))
    _own, r = down_of("ios", cand, orig, mig, mig)
    assert r.equals_original and r.target == orig


def test_three_way_cases():
    owned = [Owned("a", ("a", " 1"), ("a", " 2")), Owned("b", None, ("b",)), Owned("c", ("c",), None),
             Owned("d", ("d", " 1"), ("d", " 2"))]
    now = {"a": ("a", " 2"), "b": ("b",), "d": ("d", " 1"), "x": ("x",)}
    m = three_way(owned, now)
    assert m.reverted == ["a", "b", "c"] and m.already == ["d"] and not m.conflicts
    assert m.target == {"a": ("a", " 1"), "d": ("d", " 1"), "x": ("x",), "c": ("c",)}
    m = three_way(owned, {**now, "a": ("a", " 3")})
    assert [c.key for c in m.conflicts] == ["a"] and m.target["a"] == ("a", " 3") and "a" not in m.replace
    m = three_way(owned, {**now, "a": ("a", " 3")}, discard=True)
    assert m.target["a"] == ("a", " 1") and "a" in m.reverted


def test_an_incremental_up_gives_back_only_the_dropped_objects():
    own = ow.record("ios", IOS_CANDIDATE, IOS_O, IOS_H, None)
    smaller = IOS_CANDIDATE.replace("vlan 108\n name harmless-access-sw3-p8\n!\n", "").replace(
        "interface FastEthernet0/8\n switchport mode access\n switchport access vlan 108\n!\n", "")
    keys = ow.dropped(own, smaller)
    assert keys == ["vlan 108", "interface fastethernet0/8"]
    text, m = ow.plan_revert(own, edit(IOS_H, *IOS_EDITS), keys)
    u = syntax_for("ios").units(text)
    assert u["interface fastethernet0/8"] == syntax_for("ios").units(IOS_O)["interface fastethernet0/8"]
    assert "vlan 108" not in u and u["vlan 107"] and "vlan 555" in u and not m.conflicts
    # the next record keeps the bases of what stays owned and drops what was given back
    again = ow.record("ios", smaller, text, text, own)
    assert [o.key for o in again.objects] == ["vlan 107", "interface fastethernet0/7", "interface gigabitethernet0/1",
                                              "vlan 105"]
    assert again.objects[1].base == own.objects[2].base
    voice = (" switchport access vlan 108\n switchport mode access\n",
             " switchport access vlan 108\n switchport mode access\n switchport voice vlan 20\n")
    c = ow.revert_conflicts("sw1", own, edit(IOS_H, voice), keys)
    assert [x.label for x in c.conflicts] == ["interface FastEthernet0/8"]


# ----------------------------------------------------------------------------- EOS
EOS_O = """! Command: show running-config
! device: leaf1 (DCS-7050SX-64, EOS-4.30.1F)
!
transceiver qsfp default-mode 4x10G
!
hostname leaf1
!
spanning-tree mode mstp
!
vlan 100
   name users
!
interface Ethernet7
   switchport access vlan 100
!
interface Ethernet12
!
interface Ethernet25
   description to harmless server
!
interface Management1
   ip address 10.0.0.3/24
!
ip routing
!
router bgp 65001
   router-id 10.0.0.3
   neighbor 10.0.0.1 remote-as 65000
   address-family ipv4
      neighbor 10.0.0.1 activate
!
banner login
Authorized access only
EOF
!
end
"""


def test_eos_nested_blocks_are_one_object_and_the_merge_keeps_edits():
    cand = ("vlan 107\n   name harmless-leaf1-p7\n!\ninterface Ethernet7\n   switchport mode access\n"
            "   switchport access vlan 107\n!\ninterface Ethernet25\n   switchport mode trunk\n"
            "   switchport trunk allowed vlan 107\n!\nend\n")
    h = edit(EOS_O, ("vlan 100\n   name users\n!\n",
                     "vlan 100\n   name users\n!\nvlan 107\n   name harmless-leaf1-p7\n!\n"),
             ("   switchport access vlan 100", "   switchport access vlan 107"),
             ("   description to harmless server\n", "   description to harmless server\n   switchport trunk allowed "
              "vlan 107\n   switchport mode trunk\n"))
    edits = (("      neighbor 10.0.0.1 activate\n", "      neighbor 10.0.0.1 activate\n      network 10.9.0.0/16\n"),
             ("interface Ethernet12\n", "interface Ethernet12\n   switchport mode trunk\n"),
             ("ip routing\n", "ip routing\n!\nip access-list BLOCK-TELNET\n   10 deny tcp any any eq telnet\n"))
    eos = syntax_for("eos")
    assert len(eos.units(EOS_O)["router bgp 65001"]) == 5
    _own, r = down_of("eos", cand, EOS_O, h, edit(h, *edits))
    assert not r.conflicts and eos.units(r.target) == eos.units(edit(EOS_O, *edits))
    assert {c.label for c in r.kept} == {"router bgp 65001", "interface Ethernet12", "ip access-list BLOCK-TELNET"}


# ----------------------------------------------------------------------------- Junos (ELS and non-ELS)
def junos_candidate(syntax: str, ports: dict[str, int], trunk: str, config: str) -> str:
    access = [AccessPortChange(p, vid, f"hl{vid}") for p, vid in ports.items()]
    return junos_render(access, [TrunkChange(trunk, tuple(sorted(ports.values())))], syntax=syntax,
                        vlan_side=junos_parse.vlan_side_members(config))


JUNOS_EDITS = (
    ("    printers {\n", "    ops {\n        vlan-id 555;\n    }\n    printers {\n"),                  # a new VLAN
    ("    xe-0/2/0 {\n", "    xe-0/2/0 {\n        description \"uplink to core\";\n"),           # a description
    ("    ge-0/0/12 {\n        disable;\n        unit 0 {\n            family ethernet-switching;",      # a port's mode
     "    ge-0/0/12 {\n        disable;\n        unit 0 {\n            family ethernet-switching {\n"
     "                interface-mode trunk;\n                vlan {\n                    members users;\n"
     "                }\n            }"),
    ("vlans {\n", "firewall {\n    family ethernet-switching {\n        filter BLOCK-TELNET {\n            term t1 {\n"
     "                from {\n                    destination-port 23;\n                }\n"
     "                then discard;\n            }\n        }\n    }\n}\nvlans {\n"))                  # an ACL


def test_junos_els_down_keeps_edits_on_the_recorded_configs():
    o, h = (JUNOS / "els_original.conf").read_text(), (JUNOS / "els_migrated.conf").read_text()
    cand = junos_candidate("els", {"ge-0/0/7": 107, "ge-0/0/8": 108, "ge-0/0/10": 110}, "ge-0/0/25", o)
    js = syntax_for("junos")
    own, r = down_of("junos", cand, o, h, edit(h, *JUNOS_EDITS))
    assert {x.key for x in own.objects} == {"vlans hl107", "vlans hl108", "vlans hl110", "interfaces ge-0/0/7",
                                           "interfaces ge-0/0/8", "interfaces ge-0/0/10", "interfaces ge-0/0/25"}
    assert not r.conflicts and r.mode == "merge"
    expected = edit(o, *JUNOS_EDITS)
    assert js.units(r.target) == js.units(expected)
    assert {c.label for c in r.kept} == {"vlans ops", "interfaces xe-0/2/0", "interfaces ge-0/0/12",
                                         "firewall family"}
    # the target is curly text Junos loads with `load override`, and reads back as the same statements
    assert jo.leaves(r.target) and js.units(jo.render(jo.leaves(r.target))) == js.units(r.target)
    assert "set vlans ops vlan-id 555" in "\n".join(c for k in r.kept for c in k.after or [])
    # a migrated port moved to printers by hand: conflict; moved back to users exactly as before: nothing to do
    now = edit(h, *JUNOS_EDITS, ("members hl107;", "members printers;"))
    _own, r = down_of("junos", cand, o, h, now)
    assert [c.label for c in r.conflicts] == ["interfaces ge-0/0/7"]
    assert "set interfaces ge-0/0/7 unit 0 family ethernet-switching vlan members printers" in r.conflicts[0].now
    _own, r = down_of("junos", cand, o, h, edit(h, ("members hl107;", "members users;")))
    assert not r.conflicts and "interfaces ge-0/0/7" not in {c.label for c in r.reverted}


JUNOS_LEGACY_H = """version 12.3R12.4;
system {
    host-name sw4;
}
interfaces {
    ge-0/0/7 {
        unit 0 {
            family ethernet-switching {
                port-mode access;
                vlan {
                    members hl107;
                }
            }
        }
    }
    ge-0/0/8 {
        unit 0 {
            family ethernet-switching {
                port-mode access;
                vlan {
                    members hl108;
                }
            }
        }
    }
    ge-0/0/23 {
        unit 0 {
            family ethernet-switching {
                port-mode trunk;
                vlan {
                    members [ hl107 hl108 ];
                }
            }
        }
    }
}
ethernet-switching-options {
    storm-control {
        interface all;
    }
}
vlans {
    hl107 {
        vlan-id 107;
    }
    hl108 {
        vlan-id 108;
    }
    printers {
        vlan-id 101;
    }
    users {
        vlan-id 100;
    }
}
"""


def test_junos_non_els_a_vlan_side_member_belongs_to_its_port():
    o = (JUNOS / "legacy_original.conf").read_text()
    cand = junos_candidate("legacy", {"ge-0/0/7": 107, "ge-0/0/8": 108}, "ge-0/0/23", o)
    assert "delete vlans users interface ge-0/0/8.0" in cand
    js = syntax_for("junos")
    assert js.units(o)["interfaces ge-0/0/8"][1] == "vlans { users { interface { ge-0/0/8.0; } } }"
    # the operator adds an unmigrated port to users on the VLAN side: the port's change, not the VLAN's
    add9 = ("    users {\n        vlan-id 100;\n", "    users {\n        vlan-id 100;\n        interface {\n"
            "            ge-0/0/9.0;\n        }\n")
    _own, r = down_of("junos", cand, o, JUNOS_LEGACY_H, edit(JUNOS_LEGACY_H, add9))
    assert not r.conflicts and [c.label for c in r.kept] == ["interfaces ge-0/0/9"]
    expected = edit(o, ("            ge-0/0/8.0;\n", "            ge-0/0/8.0;\n            ge-0/0/9.0;\n"))
    assert js.units(r.target) == js.units(expected)
    assert js.units(r.target)["vlans users"] == js.units(o)["vlans users"]


def test_junos_leaves_keep_inactive_marks_and_quoting():
    text = ('interfaces {\n    inactive: ge-0/0/9 {\n        description "spare port";\n        unit 0;\n    }\n}\n'
            'system {\n    login {\n        message "hello; world";\n    }\n}\n')
    js = syntax_for("junos")
    u = js.units(text)
    assert u["interfaces ge-0/0/9"][0] == 'interfaces { inactive: ge-0/0/9 { description "spare port"; } }'
    assert js.units(jo.render(jo.leaves(text))) == u
    assert js.show(u["interfaces ge-0/0/9"])[:2] == ['set interfaces ge-0/0/9 description "spare port"',
                                                     "deactivate interfaces ge-0/0/9"]


# ----------------------------------------------------------------------------- ProCurve
def test_procurve_objects_are_port_memberships_and_the_text_round_trips():
    text = strip_running((ROOT / "tests/drivers/recorded/procurve/show_running-config/"
                          "napalm-procurve_e2910al-48g-poe.txt").read_text())
    pc = syntax_for("procurve")
    u = pc.units(text)
    assert u["vlan 1"] == ("vlan 1", 'name "DEFAULT_VLAN"', "ip address 192.168.1.248 255.255.255.0")
    assert u["port 35"] == ("vlan 1 no untagged", "vlan 4 untagged")
    assert u["port 2"] == ("vlan 1 untagged", "vlan 2 tagged", "vlan 3 tagged")
    assert u["interface 6"] == ("interface 6", "flow-control", "lacp passive", 'name "rtr IPMI"',
                                "poe-lldp-detect enabled")
    assert pc.assemble(text, {}) == text


PC_O = """; J9727A Configuration Editor; Created on release #WB.16.10.0009

hostname "sw2"
vlan 1
   name "DEFAULT_VLAN"
   no untagged 7-8,12
   untagged 1-6,9-11,13-28
   exit
vlan 100
   name "users"
   untagged 7-8,12
   ip address 10.1.0.1 255.255.255.0
   exit
"""


def test_procurve_down_keeps_the_operators_vlan_edits():
    access = [AccessPortChange("7", 107, "harmless-sw2-p7"), AccessPortChange("8", 108, "harmless-sw2-p8")]
    cand = procurve_render(access, [TrunkChange("25", (107, 108))], PC_O)
    pc = syntax_for("procurve")
    assert pc.touched(cand) == ["vlan 107", "port 7", "port 25", "vlan 108", "port 8"]
    h = edit(PC_O, ("   untagged 7-8,12\n   ip", "   untagged 12\n   ip"),
             ("   ip address 10.1.0.1 255.255.255.0\n   exit\n",
              '   ip address 10.1.0.1 255.255.255.0\n   exit\nvlan 107\n   name "harmless-sw2-p7"\n   untagged 7\n'
              '   tagged 25\n   exit\nvlan 108\n   name "harmless-sw2-p8"\n   untagged 8\n   tagged 25\n   exit\n'))
    # the operator: port 12 moved to a new VLAN 555 (untagged), port 20 tagged in users
    now = edit(h, ('   name "users"\n   untagged 12\n', '   name "users"\n   tagged 20\n'),
               ("   untagged 8\n   tagged 25\n   exit\n",
                '   untagged 8\n   tagged 25\n   exit\nvlan 555\n   name "ops"\n   untagged 12\n   exit\n'))
    own, r = down_of("procurve", cand, PC_O, h, now)
    assert not r.conflicts, r.conflicts
    assert {c.label for c in r.kept} == {"vlan 555", "port 12", "port 20"}
    expected = edit(PC_O, ('   name "users"\n   untagged 7-8,12\n', '   name "users"\n   untagged 7-8\n   tagged 20\n'),
                    ("   ip address 10.1.0.1 255.255.255.0\n   exit\n",
                     '   ip address 10.1.0.1 255.255.255.0\n   exit\nvlan 555\n   name "ops"\n   untagged 12\n'
                     '   exit\n'))
    assert pc.units(r.target) == pc.units(expected)
    assert r.target == expected             # written as the switch prints it (the line-wise restore compares text)
    # the trunk port tagged in one more VLAN by hand: conflict
    _own, r = down_of("procurve", cand, PC_O, h, edit(now, ('   name "ops"\n', '   name "ops"\n   tagged 25\n')))
    assert [c.label for c in r.conflicts] == ["port 25"]


def test_a_conflict_has_its_own_exit_code():
    from harmless import clikit
    assert ow.DriftConflict([]).exit_code == ow.EXIT_CONFLICT == clikit.EXIT_CONFLICT == 5


def test_no_record_means_the_original_exactly():
    r = ow.plan_down("sw1", None, syntax_for("ios"), IOS_O, edit(IOS_H, *IOS_EDITS), "orig.cfg")
    assert r.mode == "exact" and r.target == IOS_O and r.equals_original and not r.kept
    assert "vlan 555" in {c.label for c in r.reverted}


def test_a_config_that_does_not_parse_is_an_error_not_a_guess():
    own = ow.record("junos", "set vlans hl107 vlan-id 107\n", "system { host-name a; }\n",
                    "system { host-name a; }\nvlans { hl107 { vlan-id 107; } }\n", None)
    with pytest.raises(ValueError, match="line"):
        ow.plan_down("sw1", own, syntax_for("junos"), "system { host-name a; }\n", "system { host-name a;\n", "o")


def test_down_dry_run_with_nothing_deployed_exits_0(monkeypatch, tmp_path):
    import json

    from click.testing import CliRunner

    from harmless import cli
    monkeypatch.setattr(cli, "_need_root", lambda: None)
    env = {"HARMLESS_STATE_DIR": str(tmp_path)}
    r = CliRunner().invoke(cli.main, ["down", "--dry-run"], env=env)
    assert r.exit_code == 0 and "nothing is deployed" in r.stderr and r.stdout == ""
    r = CliRunner().invoke(cli.main, ["down", "--dry-run", "--json"], env=env)
    assert r.exit_code == 0 and json.loads(r.stdout) == {"switches": {}, "unreachable": {}, "bridges": [],
                                                         "stop_ovs": [], "unfinished_journal": None, "blocked": False}
    assert not (tmp_path / "journal.jsonl").exists() and not (tmp_path / "lock").exists()


def test_a_switch_removed_from_the_inventory_is_warned_and_a_hand_change_there_names_the_choices(state_dir):
    """plan's ``switch-removed`` warning names only a deployed switch the inventory lost (none with ``--switch``);
    up's conflict on it says to put the switch back, edit the objects back or discard (not "put the port back")."""
    import yaml

    from harmless import state as st
    from harmless.inventory import parse_inventory
    from harmless.steps import removed_findings

    def sw(name):
        return {"name": name, "driver": "ios", "host": "192.0.2.7", "username": "u", "password_env": "X",
                "trunks": [{"switch_port": "Gi0/1", "server_interface": "eth1"}], "access_ports": ["Fa0/7"]}
    inv = parse_inventory(yaml.safe_dump({"switches": [sw("acc1")]}), "inv.yaml")
    s = st.DeploymentState(inventory="inv.yaml", plan={"switches": []}, switches={n: sw(n) for n in ("acc1", "acc2")},
                           backups={n: st.save_backup(n, IOS_O, record={"name": n}) for n in ("acc1", "acc2")})
    found = removed_findings(inv, s, "inv.yaml", None)
    assert [(f.switch, f.kind, f.severity, f.where) for f in found] == [("acc2", "switch-removed", "warning",
                                                                         "inv.yaml: switches")]
    assert "put it back into the inventory" in found[0].fix
    assert removed_findings(inv, s, "inv.yaml", {"acc1"}) == [] and removed_findings(inv, None, "inv.yaml", None) == []
    conflict = ow.SwitchRevert(switch="acc2", mode="merge", original="o.cfg", conflicts=[
        ow.ObjectConflict(key="interface fastethernet0/7", label="interface FastEthernet0/7")])
    e = ow.DriftConflict([conflict], command="harmless up", removed=["acc2"])
    assert e.exit_code == 5 and "acc2: interface FastEthernet0/7" in e.problem
    assert "acc2 left the inventory" in e.fix and "put the switch back into the inventory" in e.fix
    assert "put the port back" in ow.DriftConflict([conflict], command="harmless up").fix
