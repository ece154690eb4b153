"""The one device-diff format (harmless.switch_drivers.devdiff): removals and additions per block, for IOS, EOS,
Junos and ProCurve, from a merge candidate (plan) and between two whole configs (what down restores)."""
from __future__ import annotations

from pathlib import Path

import pytest

from harmless.switch_drivers import devdiff
from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.eos import render as eos_render
from harmless.switch_drivers.ios import render as ios_render
from harmless.switch_drivers.junos import render as junos_render
from harmless.switch_drivers.procurve import render as procurve_render

CORPUS = Path(__file__).parent / "ports_corpus"

IOS_RUNNING = """\
Building configuration...

Current configuration : 1200 bytes
!
! Last configuration change at 10:01:02 UTC Mon Mar 1 2021
version 15.0
hostname sw1
!
vlan 100
 name users
!
interface FastEthernet0/7
 switchport access vlan 100
 switchport mode access
 spanning-tree portfast
!
interface FastEthernet0/8
 switchport mode access
!
interface GigabitEthernet0/1
 switchport trunk allowed vlan 10,20
 switchport mode trunk
 shutdown
!
end
"""


def test_ios_merge_shows_what_each_line_replaces():
    cand = ios_render.render_config([AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p7"),
                                     AccessPortChange("FastEthernet0/8", 108, "harmless-sw1-p8")],
                                    [TrunkChange("GigabitEthernet0/1", (107, 108))], current=IOS_RUNNING)
    d = devdiff.merge_diff(IOS_RUNNING, cand, "ios")
    assert d.text() == """\
+vlan 107
+ name harmless-sw1-p7
+vlan 108
+ name harmless-sw1-p8
 interface FastEthernet0/7
- switchport access vlan 100
+ switchport access vlan 107
 interface FastEthernet0/8
+ switchport access vlan 108
 interface GigabitEthernet0/1
- switchport trunk allowed vlan 10,20
+ switchport trunk allowed vlan 107,108
"""
    assert (d.count("-"), d.count("+")) == (2, 7) and d.summary() == "2 lines removed, 7 added"


def test_ios_no_lines_allowed_add_and_no_shutdown():
    cand = ("interface GigabitEthernet0/1\n no shutdown\n switchport trunk allowed vlan add 107,108\n"
            "interface FastEthernet0/7\n no switchport access vlan\n!\nno vlan 100\nend\n")
    d = devdiff.merge_diff(IOS_RUNNING, cand, "ios")
    assert d.text() == """\
 interface FastEthernet0/7
- switchport access vlan 100
 interface GigabitEthernet0/1
- switchport trunk allowed vlan 10,20
- shutdown
+ switchport trunk allowed vlan 10,20,107,108
-vlan 100
- name users
"""
    # adding to a trunk that carries every VLAN (no allowed line) changes nothing
    assert devdiff.merge_diff("interface Gi0/2\n switchport mode trunk\n",
                              "interface Gi0/2\n switchport trunk allowed vlan add 107\n", "ios").empty


def test_merging_the_merged_config_again_is_empty_on_every_os():
    ios = ios_render.render_config([AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p7")],
                                   [TrunkChange("GigabitEthernet0/1", (107,))], current=IOS_RUNNING)
    after = devdiff.merged(IOS_RUNNING, ios, "ios")
    assert devdiff.merge_diff(after, ios, "ios").empty
    assert devdiff.config_diff(IOS_RUNNING, IOS_RUNNING, "ios").empty


def test_eos_merge_on_a_realistic_config():
    run = (CORPUS / "eos/access_720xp.cfg").read_text()
    cand = eos_render.render_config([AccessPortChange("Ethernet1", 101, "harmless-sw1-p1")],
                                    [TrunkChange("Ethernet4", (101,))])
    assert devdiff.merge_diff(run, cand, "eos").text() == """\
+vlan 101
+   name harmless-sw1-p1
 interface Ethernet1
-   switchport access vlan 10
+   switchport access vlan 101
+   switchport mode access
 interface Ethernet4
+   switchport mode trunk
+   switchport trunk allowed vlan 101
"""


def test_junos_merge_shows_the_replaced_members():
    run = """\
vlans { users { vlan-id 100; } }
interfaces {
    ge-0/0/7 { unit 0 { family ethernet-switching { interface-mode access; vlan { members users; } } } }
    ge-0/0/23 { disable; unit 0 { family ethernet-switching { interface-mode trunk; vlan { members all; } } } }
}
"""
    cand = junos_render.render_config([AccessPortChange("ge-0/0/7", 107, "harmless-sw1-p7")],
                                      [TrunkChange("ge-0/0/23", (107,))])
    d = devdiff.merge_diff(run, cand + "delete interfaces ge-0/0/23 disable\n", "junos")
    assert d.text() == """\
[edit vlans harmless-sw1-p7]
+    vlan-id 107;
[edit interfaces ge-0/0/7 unit 0 family ethernet-switching vlan]
-    members users;
+    members harmless-sw1-p7;
[edit interfaces ge-0/0/23 unit 0 family ethernet-switching vlan]
-    members all;
+    members harmless-sw1-p7;
[edit interfaces ge-0/0/23]
-    disable;
"""


def test_procurve_membership_moves_per_port():
    run = (CORPUS / "procurve/2530_48g_basic.cfg").read_text()
    cand = procurve_render.render_config([AccessPortChange("7", 107, "harmless-sw1-p7"),
                                          AccessPortChange("8", 108, "harmless-sw1-p8")],
                                         [TrunkChange("48", (107, 108))], current=run)
    d = devdiff.merge_diff(run, cand, "procurve")
    assert d.text() == """\
 vlan 10
-   untagged 7-8
+vlan 107
+   name "harmless-sw1-p7"
+   untagged 7
+   tagged 48
+vlan 108
+   name "harmless-sw1-p8"
+   untagged 8
+   tagged 48
"""


def test_config_diff_between_two_whole_configs_is_what_down_restores():
    """The drift/down direction: the running config (migrated) against the original."""
    cand = ios_render.render_config([AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p7")],
                                    [TrunkChange("GigabitEthernet0/1", (107,))], current=IOS_RUNNING)
    migrated = devdiff.merged(IOS_RUNNING, cand, "ios")
    back = devdiff.config_diff(migrated, IOS_RUNNING, "ios")
    assert back.text() == """\
 interface FastEthernet0/7
- switchport access vlan 107
+ switchport access vlan 100
 interface GigabitEthernet0/1
- switchport trunk allowed vlan 107
+ switchport trunk allowed vlan 10,20
-vlan 107
- name harmless-sw1-p7
"""
    assert back.model_dump()["blocks"][0] == {"context": "interface FastEthernet0/7", "change": "changed", "lines": [
        {"op": "-", "text": "switchport access vlan 107"}, {"op": "+", "text": "switchport access vlan 100"}]}


def test_syntax_of_drivers():
    assert devdiff.syntax_of("ios") == "ios" and devdiff.syntax_of("junos") == "junos"
    assert devdiff.syntax_of("netmiko_cli", {"device_type": "hp_procurve"}) == "procurve"
    assert devdiff.syntax_of("netmiko_cli") == "ios"
    with pytest.raises(KeyError):
        devdiff.syntax_of("nxos")
    with pytest.raises(ValueError, match="no diff for configuration syntax"):
        devdiff.config_diff("", "", "nxos")


def test_ios_mac_learning_lines_merge_into_the_one_line_the_device_keeps():
    """``no mac address-table learning vlan LIST`` is a config line IOS keeps (one line, every VLAN that does not
    learn): the merge adds the candidate's VLANs to it, ``mac address-table learning vlan`` takes them out, and the
    diff plan prints shows it (it was dropped as a negation: plan's diff missed a line up then made)."""
    running = "hostname sw1\nno mac address-table learning vlan 20\ninterface Fa0/7\n switchport access vlan 20\n"
    after = devdiff.merged(running, "no mac address-table learning vlan 107,108\n", "ios")
    assert "no mac address-table learning vlan 20,107,108\n" in after and after.count("learning vlan") == 1
    back = devdiff.merged(after, "mac address-table learning vlan 107,108\n", "ios")
    assert devdiff.config_diff(running, back, "ios").empty
    fresh = devdiff.merged("hostname sw1\n", "no mac address-table learning vlan 107-109\n", "ios")
    assert "no mac address-table learning vlan 107-109" in devdiff.config_diff("hostname sw1\n", fresh, "ios").text()
