"""IOS conversion hazards, QinQ and encapsulation rendering, golden files (pure; no device).

Golden files live in tests/golden/ios/; regenerate with ``HARMLESS_REGEN_GOLDEN=1 pytest tests/unit/test_ios_hazards.py``
after a deliberate template change (and review the diff). Every golden file is also validated with ciscoconfparse2.
"""
import os
from pathlib import Path

import pytest
from ciscoconfparse2 import CiscoConfParse

from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from harmless.switch_drivers.ios.driver import unapplied
from harmless.switch_drivers.ios.hazards import replace_bridge
from harmless.switch_drivers.ios.parse import (needs_trunk_encapsulation, parse_port_states,
                                               parse_switchport_operational)
from harmless.switch_drivers.ios.render import render_config

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "ios"
ACCESS = [AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p1"),
          AccessPortChange("FastEthernet0/10", 110, "harmless-sw1-p2")]
QINQ = [AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p1"),
        AccessPortChange("FastEthernet0/11", 111, "harmless-sw1-p3", qinq=True)]
TRUNKS = [TrunkChange("GigabitEthernet0/1", (107, 110, 111))]

CURRENT = """\
vlan 100
 name users
!
vlan 105
 name harmless-sw1-p9
!
vlan 106
 name harmless-sw1-p8
!
interface FastEthernet0/7
 switchport trunk native vlan 99
 switchport trunk allowed vlan 100,101
 switchport mode trunk
!
interface FastEthernet0/8
 switchport access vlan 106
 switchport mode access
!
interface FastEthernet0/10
 switchport access vlan 100
 switchport mode access
 switchport nonegotiate
!
interface GigabitEthernet0/1
 switchport access vlan 100
 switchport trunk native vlan 110
 switchport mode access
 switchport nonegotiate
!
end
"""

CASES = {
    "access_trunk.cfg": dict(access=ACCESS, trunks=TRUNKS),
    "qinq.cfg": dict(access=QINQ, trunks=TRUNKS),
    "encapsulation_3750.cfg": dict(access=ACCESS, trunks=TRUNKS, trunk_encapsulation=True),
    "cleanup.cfg": dict(access=ACCESS, trunks=TRUNKS, current=CURRENT),
}


def _validate(text: str) -> CiscoConfParse:
    """Structural checks of an IOS render with ciscoconfparse2 (what IOS needs, in order)."""
    parse = CiscoConfParse(text.splitlines(), syntax="ios")
    assert parse.find_objects(r"^end$"), "no end line"
    for intf in parse.find_objects(r"^interface\s+\S+"):
        kids = [c.text.strip() for c in intf.children]
        modes = [k for k in kids if k.startswith("switchport mode ")]
        assert len(modes) == 1, (intf.text, kids)
        m = kids.index(modes[0])
        assert all(k.startswith("no ") for k in kids[:m] if not k.startswith("switchport trunk encapsulation")), kids
        if "switchport trunk encapsulation dot1q" in kids:
            assert kids.index("switchport trunk encapsulation dot1q") < m   # IOS refuses trunk mode before it
        if modes[0] in ("switchport mode access", "switchport mode dot1q-tunnel"):
            assert sum(k.startswith("switchport access vlan ") for k in kids) == 1
        else:
            assert sum(k.startswith("switchport trunk allowed vlan ") for k in kids) == 1
    for vlan in parse.find_objects(r"^vlan\s+\d+$"):
        assert 1 <= int(vlan.text.split()[1]) <= 4094
    return parse


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    text = render_config(**CASES[name])
    path = GOLDEN / name
    if os.environ.get("HARMLESS_REGEN_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()
    _validate(text)


def test_golden_files_all_checked():
    assert sorted(p.name for p in GOLDEN.glob("*.cfg")) == sorted(CASES)


def test_qinq_port_is_dot1q_tunnel_and_parses_as_tunnel():
    text = render_config(QINQ, TRUNKS)
    assert "interface FastEthernet0/11\n switchport mode dot1q-tunnel\n switchport access vlan 111\n" in text
    assert parse_port_states(text)["FastEthernet0/11"] == PortVlanState("FastEthernet0/11", "tunnel", access_vid=111)


def test_qinq_trunk_refuses_88a8():
    with pytest.raises(ValueError, match="0x8100"):
        render_config(QINQ, [TrunkChange("GigabitEthernet0/1", (107, 111), stag_tpid=0x88A8)])


def test_cleanup_lines():
    text = render_config(ACCESS, TRUNKS, current=CURRENT)
    # former trunk turned access: its trunk lines go
    assert ("interface FastEthernet0/7\n no switchport trunk allowed vlan\n no switchport trunk native vlan\n"
            " switchport mode access\n") in text
    # access port turned trunk: stale access VLAN and a native VLAN that is one of the trunk's VIDs go
    assert ("interface GigabitEthernet0/1\n no switchport access vlan\n no switchport trunk native vlan\n"
            " switchport mode trunk\n") in text
    # stale HARMLESS VLAN 105 goes; 106 stays (Fa0/8 still uses it); user VLAN 100 never touched
    assert "no vlan 105\n" in text and "no vlan 106" not in text and "no vlan 100" not in text
    # nonegotiate access port: mode set directly (never through dynamic), nonegotiate kept
    assert "interface FastEthernet0/10\n switchport mode access\n switchport access vlan 110\n" in text


def test_render_against_its_own_result_has_no_cleanup():
    after = render_config(ACCESS, TRUNKS).replace("end\n", "")
    assert render_config(ACCESS, TRUNKS, current=after) == render_config(ACCESS, TRUNKS)


# ----------------------------------------------------------------------------- replace bridge
def test_replace_bridge_nonegotiate_trunk_back_to_access():
    running = "interface Gi0/1\n switchport mode trunk\n switchport nonegotiate\n!\ninterface Fa0/7\n switchport mode access\n!\nend\n"
    saved = "interface Gi0/1\n switchport mode access\n switchport nonegotiate\n!\ninterface Fa0/7\n switchport mode access\n!\nend\n"
    assert replace_bridge(running, saved) == "interface Gi0/1\n switchport mode access\n!\nend\n"


def test_replace_bridge_to_dynamic_and_to_encapsulated_trunk():
    running = ("interface Fa0/1\n switchport trunk encapsulation dot1q\n switchport mode trunk\n switchport nonegotiate\n!\n"
               "interface Fa0/2\n switchport mode access\n!\nend\n")
    saved = ("interface Fa0/1\n!\n"
             "interface Fa0/2\n switchport trunk encapsulation dot1q\n switchport mode trunk\n!\nend\n")
    assert replace_bridge(running, saved) == (
        "interface Fa0/1\n no switchport nonegotiate\n no switchport mode\n!\n"
        "interface Fa0/2\n switchport trunk encapsulation dot1q\n switchport mode trunk\n!\nend\n")


def test_replace_bridge_nothing_to_do():
    cfg = "interface Fa0/1\n switchport mode access\n switchport nonegotiate\n!\nend\n"
    assert replace_bridge(cfg, cfg.replace("access\n", "access\n description x\n")) == ""


# ----------------------------------------------------------------------------- encapsulation decision
@pytest.mark.parametrize("text, model, expected", [
    ("Name: Fa0/1\nAdministrative Trunking Encapsulation: negotiate\n", "WS-C2960-24TT-L", True),
    ("Name: Fa0/1\nAdministrative Trunking Encapsulation: dot1q\n", "WS-C3750G-24TS-1U", False),
    (None, "WS-C3750X-48P", True),
    (None, "WS-C2960X-48FPD-L", False),
    ("", "", False),
])
def test_needs_trunk_encapsulation(text, model, expected):
    assert needs_trunk_encapsulation(text, model) is expected


SWITCHPORT = """\
Name: Fa0/11
Switchport: Enabled
Administrative Mode: dot1q-tunnel
Operational Mode: tunnel
Administrative Trunking Encapsulation: dot1q
Negotiation of Trunking: Off
Access Mode VLAN: 111 (VLAN0111)
Trunking Native Mode VLAN: 1 (default)
Voice VLAN: none
Trunking VLANs Enabled: ALL

Name: Gi0/1
Switchport: Enabled
Administrative Mode: trunk
Operational Mode: trunk
Administrative Trunking Encapsulation: dot1q
Negotiation of Trunking: On
Access Mode VLAN: 1 (default)
Trunking Native Mode VLAN: 1 (default)
Voice VLAN: none
Trunking VLANs Enabled: 107,110,111
"""


def test_parse_switchport_operational_ntc_templates():
    ops = parse_switchport_operational(SWITCHPORT)
    assert ops["Fa0/11"]["oper_mode"] == "tunnel" and ops["Fa0/11"]["access_vlan"] == "111"
    assert ops["Gi0/1"]["oper_mode"] == "trunk" and ops["Gi0/1"]["trunking_vlans"] == ["107", "110", "111"]


# ----------------------------------------------------------------------------- post-merge check
def test_unapplied_reports_a_refused_mode_line():
    cand = "vlan 107\n!\ninterface Gi0/1\n switchport mode trunk\n switchport trunk allowed vlan 107\n!\nend\n"
    running = "vlan 107\n!\ninterface Gi0/1\n switchport mode access\n!\nend\n"
    assert unapplied(cand, running) == ["Gi0/1 mode trunk (device: access)"]
    ok = "vlan 107\n!\ninterface Gi0/1\n switchport trunk allowed vlan 107\n switchport mode trunk\n!\nend\n"
    assert unapplied(cand, ok) == []
    assert unapplied(cand, "interface Gi0/1\n switchport trunk allowed vlan 107\n switchport mode trunk\n") == ["vlan 107"]
