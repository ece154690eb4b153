"""``shared: true`` on the HARMLESS trunk, on realistic configs of the four OSes: only a trunk has other VLANs to keep
(a port that is not one is refused, a LAG that is not one carries exactly HARMLESS's VLANs), and an incremental
``plan``/``up`` judges the ports HARMLESS owns as HARMLESS found them, not as it left them."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harmless import offline, ownership
from harmless import state as st
from harmless.errors import Refused
from harmless.inventory import parse_inventory
from harmless.plan import Plan
from harmless.switch_drivers import devdiff
from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from harmless.switch_drivers.junos.render import render_config as junos_render

HERE = Path(__file__).parent
CORPUS = HERE / "ports_corpus"
EOS_720XP = CORPUS / "eos" / "access_720xp.cfg"
C3850 = HERE / "preview_configs" / "c3850_48p_uplink_po_voice_dot1x.cfg"


def inventory(access, trunk: dict, driver: str):
    sw = {"name": "accb2", "driver": driver, "host": "192.0.2.48", "username": "harmless", "password_env": "HL_X",
          "trunks": [{"server_interface": "eth1", **trunk}], "access_ports": access,
          "openflow": {"controllers": ["tcp:192.0.2.9:6653"]}}
    if driver == "netmiko_cli":
        sw["optional_args"] = {"device_type": "hp_procurve"}
    return parse_inventory(yaml.safe_dump({"switches": [sw]}, sort_keys=False), "inv.yaml")


def plan(cfg: Path, access, trunk: dict, driver: str):
    """The offline plan result, or the Refused error."""
    try:
        return offline.plan_offline(inventory(access, trunk, driver), "inv.yaml", {"accb2": cfg})
    except Refused as e:
        return e


@pytest.mark.parametrize("cfg, driver, access, trunk, what", [
    (EOS_720XP, "eos", "Ethernet1", "Ethernet4", "an access port in VLAN 1"),
    (C3850, "ios", "Gi1/0/37", "TenGigabitEthernet1/1/3", "a dynamic port in VLAN 1"),
    (CORPUS / "junos" / "ex2300_els_access.cfg", "junos", "ge-0/0/20", "ge-0/0/12", "an access port in VLAN 30"),
    (CORPUS / "procurve" / "2530_trunk_uplinks.cfg", "procurve", "3", "12", "an access port in VLAN 1"),
])
def test_shared_on_a_port_that_is_not_a_trunk_is_refused_with_the_inventory_fix(monkeypatch, state_dir, cfg, driver,
                                                                               access, trunk, what):
    """Rendered as shared, such a port would carry every VLAN (EOS ``allowed vlan add`` to the implicit "all", IOS no
    allowed list) or keep its access VLAN as a tagged member (Junos): refused, with the inventory text without it."""
    monkeypatch.setenv("HL_X", "x")
    res = plan(cfg, [access], {"switch_port": trunk, "shared": True}, driver)
    assert isinstance(res, Refused)
    bad = [f for f in res.findings if f.kind == "trunk-shared-not-trunk"]
    assert len(bad) == 1 and bad[0].where == "inv.yaml: switches[0].trunks[0].shared", res.findings
    assert f"accb2 {trunk} is {what}, not a trunk: it carries no other VLANs for shared: true to keep" in bad[0].problem
    assert bad[0].inventory == f"{{switch_port: '{trunk}', server_interface: eth1}}" if trunk == "12" else \
        bad[0].inventory == f"{{switch_port: {trunk}, server_interface: eth1}}"
    ok = plan(cfg, [access], {"switch_port": trunk}, driver)          # the fix plans
    assert not isinstance(ok, Refused), ok.findings


@pytest.mark.parametrize("cfg, driver, access, trunk, rendered", [
    (CORPUS / "ios" / "c3850_lacp_pagp_on.cfg", "ios", "GigabitEthernet1/0/8", "Port-channel2",
     "interface Port-channel2\n no switchport access vlan\n switchport mode trunk\n switchport trunk allowed vlan 108\n"),
    (CORPUS / "eos" / "mlag_leaf1.cfg", "eos", "Ethernet2", "Port-Channel5",
     "interface Port-Channel5\n   switchport mode trunk\n   switchport trunk allowed vlan 102\n"),
])
def test_a_lag_that_is_not_a_trunk_keeps_its_bundle_and_carries_exactly_harmless_vlans(monkeypatch, state_dir, cfg,
                                                                                      driver, access, trunk,
                                                                                      rendered):
    monkeypatch.setenv("HL_X", "x")
    res = plan(cfg, [access], {"switch_port": trunk, "shared": True}, driver)
    assert not isinstance(res, Refused), res.findings
    warn = [f for f in res.findings if f.kind == "trunk-shared"]
    assert len(warn) == 1 and "not a trunk: shared: true keeps its bundle; it becomes a trunk carrying exactly " \
        "HARMLESS's VLANs, no longer VLAN" in warn[0].problem
    assert res.plan.switches[0].trunks[0].shared is False
    assert rendered in res.configs["accb2"] and " add " not in res.configs["accb2"]


def test_junos_non_els_shared_trunk_keeps_its_vlan_side_members():
    """Non-ELS EX: a trunk's VLANs may be written on the VLAN side (``vlans users interface ge-0/0/22.0``); a shared
    trunk keeps them (they are the operator's VLANs on the uplink), a trunk that is not shared loses them."""
    access = [AccessPortChange("ge-0/0/2", 102, "harmless-accb2-p2")]
    side = {"ge-0/0/22": ["printers", "users"], "ge-0/0/2": ["printers"]}
    shared = junos_render(access, [TrunkChange("ge-0/0/22", (102,), shared=True)], "legacy", vlan_side=side)
    assert "delete vlans printers interface ge-0/0/2.0\n" in shared
    assert "interface ge-0/0/22.0" not in shared and "delete interfaces ge-0/0/22" not in shared
    own = junos_render(access, [TrunkChange("ge-0/0/22", (102,))], "legacy", vlan_side=side)
    assert "delete vlans printers interface ge-0/0/22.0\ndelete vlans users interface ge-0/0/22.0\n" in own


# ----------------------------------------------------------------------------- judged as found
def deployed(name: str, original: str, candidate: str, syntax: str, driver: str, access: list[str], trunk: str,
             vids: dict[str, int], shared: bool = False) -> str:
    """A deployment on the state as ``up`` leaves it (original backup, plan, ownership record); returns the device's
    config after the commit (:func:`devdiff.merged`)."""
    after = devdiff.merged(original, candidate, syntax)
    entry = st.save_backup(name, original, record={"name": name})
    sp = {"name": name, "bridge": "br-of-accb2", "datapath_id": "0000000000000001", "protocols": ["OpenFlow13"],
          "controllers": [], "trunks": [{"switch_port": trunk, "server_interface": "eth1", "type": "system",
                                         "options": [], "vids": sorted(vids.values()), "shared": shared}],
          "ports": [{"interface": a, "ofport": vids[a] - 100, "vid": vids[a], "trunk": trunk,
                     "vlan_name": f"harmless-{name}-p{vids[a] - 100}"} for a in access]}
    st.save(st.DeploymentState(inventory="inv.yaml", plan=Plan.from_dict({"switches": [sp]}).to_dict(),
                               backups={name: entry}, switches={name: {"name": name}},
                               owned={name: ownership.record(driver, candidate, original, after, None)}))
    return after


EOS_SHARED_ALL = """vlan 101
   name harmless-accb2-p1
!
interface Ethernet1
   switchport mode access
   switchport access vlan 101
!
interface Ethernet4
   switchport mode trunk
   switchport trunk allowed vlan add 101
!
end
"""


def test_turning_shared_off_is_judged_on_the_port_as_harmless_found_it(monkeypatch, state_dir, tmp_path):
    """A deployment made before shared was refused on a free port: EOS Ethernet4 (bare, access VLAN 1) got ``allowed
    vlan add 101``, so it carries every VLAN now. Dropping shared is judged on the free port HARMLESS found (not the
    all-VLAN trunk it left): no refusal, and the trunk is rendered with exactly its VID."""
    monkeypatch.setenv("HL_X", "x")
    now = tmp_path / "now.cfg"
    now.write_text(deployed("accb2", EOS_720XP.read_text(), EOS_SHARED_ALL, "eos", "eos", ["Ethernet1"], "Ethernet4",
                            {"Ethernet1": 101}, shared=True))
    res = plan(now, ["Ethernet1"], {"switch_port": "Ethernet4"}, "eos")
    assert not isinstance(res, Refused), res.findings
    assert "interface Ethernet4\n   switchport mode trunk\n   switchport trunk allowed vlan 101\n" in res.configs["accb2"]
    assert " interface Ethernet4\n+   switchport trunk allowed vlan 101\n" in res.changes["accb2"].text()
    st.clear()                                              # judged as the device is now, it would be refused
    res = plan(now, ["Ethernet1"], {"switch_port": "Ethernet4"}, "eos")
    assert isinstance(res, Refused) and [f.kind for f in res.findings] == ["trunk-in-use"]


EOS_OWN_TRUNK = """vlan 101
   name harmless-accb2-p1
!
interface Ethernet1
   switchport mode access
   switchport access vlan 101
!
interface Ethernet4
   switchport mode trunk
   switchport trunk allowed vlan 101
!
end
"""


def test_turning_shared_on_is_judged_on_the_port_as_harmless_found_it(monkeypatch, state_dir, tmp_path):
    """HARMLESS made its trunk of the free port Ethernet4 (access VLAN 1). Now a trunk carrying VLAN 101 only, it
    would pass as a trunk to share; judged as HARMLESS found it (the original config, not the current one), shared is
    refused as on the first up: the port has no VLANs of its own to keep."""
    monkeypatch.setenv("HL_X", "x")
    now = tmp_path / "now.cfg"
    now.write_text(deployed("accb2", EOS_720XP.read_text(), EOS_OWN_TRUNK, "eos", "eos", ["Ethernet1"], "Ethernet4",
                            {"Ethernet1": 101}))
    res = plan(now, ["Ethernet1"], {"switch_port": "Ethernet4", "shared": True}, "eos")
    assert isinstance(res, Refused), res
    bad = [f for f in res.findings if f.kind == "trunk-shared-not-trunk"]
    assert len(bad) == 1 and "accb2 Ethernet4 is an access port in VLAN 1, not a trunk" in bad[0].problem
    st.clear()                                              # judged as the device is now, it would pass
    res = plan(now, ["Ethernet1"], {"switch_port": "Ethernet4", "shared": True}, "eos")
    assert not isinstance(res, Refused), res.findings


IOS_CANDIDATE = """vlan 137
 name harmless-accb2-p37
!
vlan 138
 name harmless-accb2-p38
!
interface GigabitEthernet1/0/37
 switchport mode access
 switchport access vlan 137
!
interface GigabitEthernet1/0/38
 switchport mode access
 switchport access vlan 138
!
interface TenGigabitEthernet1/1/3
 switchport mode trunk
 switchport trunk allowed vlan 137-138
!
end
"""


def test_a_moved_trunk_may_become_an_access_port_it_was_before(monkeypatch, state_dir, tmp_path):
    """The Catalyst's free 10G port was HARMLESS's trunk; the inventory moves the trunk to Gi1/0/48 and migrates the
    old trunk port as an access port: judged as HARMLESS found it (a free port), not refused as "a trunk"."""
    monkeypatch.setenv("HL_X", "x")
    now = tmp_path / "now.cfg"
    now.write_text(deployed("accb2", C3850.read_text(), IOS_CANDIDATE, "ios", "ios",
                            ["GigabitEthernet1/0/37", "GigabitEthernet1/0/38"], "TenGigabitEthernet1/1/3",
                            {"GigabitEthernet1/0/37": 137, "GigabitEthernet1/0/38": 138}))
    res = plan(now, ["Gi1/0/37", "Te1/1/3"], {"switch_port": "Gi1/0/48"}, "ios")
    assert not isinstance(res, Refused), res.findings
    assert "interface TenGigabitEthernet1/1/3\n no switchport trunk allowed vlan\n switchport mode access\n" in \
        res.configs["accb2"]
    st.clear()
    res = plan(now, ["Gi1/0/37", "Te1/1/3"], {"switch_port": "Gi1/0/48"}, "ios")
    assert isinstance(res, Refused) and [f.kind for f in res.findings if f.severity == "refusal"] == \
        ["access-is-trunk"]


# ----------------------------------------------------------------------------- EOS: tunnelling through a shared trunk
def eos_uplink_plan(monkeypatch, tmp_path, config: str):
    monkeypatch.setenv("HL_X", "x")
    cfg = tmp_path / "leaf.cfg"
    cfg.write_text(config)
    return plan(cfg, [{"interface": "Ethernet1", "l2pt": ["lldp"]}, "Ethernet2"],
                {"switch_port": "Port-Channel100", "shared": True}, "eos")


def test_eos_tunnelling_through_a_shared_uplink_says_what_its_profile_does(monkeypatch, state_dir, tmp_path):
    """The campus leaf's uplink LAG is HARMLESS's trunk too (shared); desk 3-01 forwards LLDP: the uplink gets
    harmless-tagged-lldp, which applies to its VLANs 10, 20, 30, 4000 as well: a warning says so."""
    res = eos_uplink_plan(monkeypatch, tmp_path, EOS_720XP.read_text())
    assert not isinstance(res, Refused), res.findings
    warn = [f for f in res.findings if f.kind == "l2pt-shared-trunk"]
    assert len(warn) == 1 and warn[0].where == "inv.yaml: switches[0].access_ports[0].l2pt"
    assert warn[0].problem.startswith("accb2 Port-Channel100 is a shared trunk and gets the L2 protocol forwarding "
                                      "profile harmless-tagged-lldp for its ports' tunnelled lldp: EOS applies")
    assert "the tagged lldp PDUs of the operator's VLANs on Port-Channel100 are then bridged in their VLAN instead " \
           "of trapped to the switch's CPU (EOS User Manual, \"Layer 2 Protocol Forwarding\"" in warn[0].problem
    assert "interface Port-Channel100\n   switchport mode trunk\n   switchport trunk allowed vlan add 101-102\n" \
           "   l2-protocol forwarding profile harmless-tagged-lldp\n" in res.configs["accb2"]
    # a trunk that is not shared (a free port) gets the profile without a word: it carries only HARMLESS's VLANs
    res = plan(tmp_path / "leaf.cfg", [{"interface": "Ethernet1", "l2pt": ["lldp"]}], {"switch_port": "Ethernet4"},
               "eos")
    assert "l2-protocol forwarding profile harmless-tagged-lldp" in res.configs["accb2"]
    assert not [f for f in res.findings if f.kind.startswith("l2pt-shared") or f.kind == "l2pt-trunk-profile"]


def test_eos_an_operator_profile_on_the_shared_uplink_is_refused_not_replaced(monkeypatch, state_dir, tmp_path):
    operator = EOS_720XP.read_text().replace(
        "vrf instance MGMT\n", "vrf instance MGMT\n!\nl2-protocol\n   forwarding profile UPLINK-LACP\n"
        "      lacp untagged forward\n      lldp tagged forward\n").replace(
        "   switchport mode trunk\n!\ninterface Ethernet1\n",
        "   switchport mode trunk\n   l2-protocol forwarding profile UPLINK-LACP\n!\ninterface Ethernet1\n")
    res = eos_uplink_plan(monkeypatch, tmp_path, operator)
    assert isinstance(res, Refused)
    bad = [f for f in res.findings if f.severity == "refusal"]
    assert [f.kind for f in bad] == ["l2pt-trunk-profile"]
    assert bad[0].problem.startswith("accb2 Port-Channel100 is a shared trunk with the L2 protocol forwarding "
                                     "profile UPLINK-LACP; tunnelling lldp for its ports would replace it with "
                                     "harmless-tagged-lldp (an interface has one profile)")
    assert bad[0].inventory == "{interface: Ethernet1, l2pt: []}"
    assert bad[0].fix.startswith("tunnel nothing through Port-Channel100: write its ports as "
                                 "{interface: Ethernet1, l2pt: []}")
    # the fix plans, and leaves the operator's profile alone
    res = plan(tmp_path / "leaf.cfg", [{"interface": "Ethernet1", "l2pt": []}, "Ethernet2"],
               {"switch_port": "Port-Channel100", "shared": True}, "eos")
    assert not isinstance(res, Refused), res.findings
    assert "l2-protocol" not in res.configs["accb2"]
