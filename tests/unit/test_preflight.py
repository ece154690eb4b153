"""Preflight rules (harmless.preflight), each on a hand-built port model; the planner's use of them; offline plans;
the VTP-safe post-merge check and the session-port lookup of the IOS driver (pure)."""
from __future__ import annotations

from pathlib import Path

import pytest

from harmless import offline, preflight
from harmless.errors import InputError, Refused
from harmless.inventory import parse_inventory
from harmless.plan import plan_switch
from harmless.switch_drivers.base import DeviceFacts
from harmless.switch_drivers.ios.driver import session_port_of, unapplied
from harmless.switch_drivers.portmodel import PortInfo, SwitchModel

CORPUS = Path(__file__).parent / "ports_corpus"


def inv(access, trunk="Gi0/24", **switch):
    """A one-switch inventory; ``access`` items are interface names or AccessPort dicts."""
    sw = {"name": "sw1", "driver": "ios", "host": "192.0.2.1", "username": "u", "password_env": "X",
          "trunks": [{"switch_port": trunk, "server_interface": "eth1"}], "access_ports": access, **switch}
    import yaml
    return parse_inventory(yaml.safe_dump({"switches": [sw]}), "inv.yaml")


def model(*ports, vtp="transparent", vlans=(1, 10), stp=None):
    return SwitchModel(vtp_mode=vtp, vlans=tuple(vlans), ports=tuple(ports), stp_mode=stp)


ACCESS = PortInfo("Gi0/7", "access", access_vid=10)
TRUNK_PORT = PortInfo("Gi0/24", "dynamic", access_vid=1)
S = preflight.Session(where="inv.yaml: switches[0]", driver="ios")


def refusal(inventory, m, s=S) -> str:
    """The refusals' lines and their shared explanations (what keep: [voice] means, ...)."""
    with pytest.raises(Refused) as e:
        preflight.check_switch(inventory.switches[0], m, s)
    return " ".join([str(e.value), *(x for f in e.value.findings for x in f.explain)])


# ----------------------------------------------------------------------------- access ports
@pytest.mark.parametrize("port, words", [
    (PortInfo("Gi0/7", "trunk", native_vid=1, allowed_vids=(10, 20)), ["is a trunk", "allowed VLANs 10,20",
                                                                       "remove it from access_ports"]),
    (PortInfo("Gi0/7", "access", access_vid=10, lag="Port-channel1"), ["member of Port-channel1", "channel-group"]),
    (PortInfo("Gi0/7", "trunk", native_vid=1, allowed_vids="all", is_lag=True), ["is a link aggregation group"]),
    (PortInfo("Gi0/7", "trunk", native_vid=1, allowed_vids="all", lag="Port-Channel10", mlag_peer_link=True),
     ["MLAG peer link", "Port-Channel10"]),
    (PortInfo("Gi0/7", "routed"), ["routed port", "switchport"]),
    (PortInfo("Gi0/7", "routed", management=True), ["management interface"]),
    (PortInfo("Gi0/7", "unknown", unparsed=("switchport mode private-vlan host",)),
     ["switchport mode private-vlan host"]),
    (PortInfo("Gi0/7", "dot1q-tunnel", access_vid=2100), ["dot1q-tunnel", "qinq: true"]),
    (PortInfo("Gi0/7", "access", access_vid=10, voice_vid=11), ["voice VLAN (11)", "keep: [voice]", "phone"]),
    (PortInfo("Gi0/7", "access", access_vid=10, dot1x=True), ["802.1X/MAB", "keep: [dot1x]", "RADIUS"]),
    (PortInfo("Gi0/7", "access", access_vid=10, port_security=True), ["port security", "keep: [port_security]"]),
])
def test_access_port_that_is_not_a_plain_access_port_is_refused(port, words):
    msg = refusal(inv(["Gi0/7"]), model(port, TRUNK_PORT))
    assert msg.startswith("inv.yaml: switches[0].access_ports[0]")
    assert "sw1 Gi0/7" in msg
    for w in words:
        assert w in msg


def test_plain_access_and_dynamic_ports_pass():
    m = model(ACCESS, PortInfo("Gi0/8", "dynamic", access_vid=1), TRUNK_PORT)
    preflight.check_switch(inv(["Gi0/7", "Gi0/8"]).switches[0], m, S)


def test_keep_accepts_the_named_features_only():
    port = PortInfo("Gi0/7", "access", access_vid=10, voice_vid=11, dot1x=True, port_security=True)
    m = model(port, TRUNK_PORT)
    preflight.check_switch(inv([{"interface": "Gi0/7", "keep": ["voice", "dot1x", "port_security"]}]).switches[0],
                           m, S)
    msg = refusal(inv([{"interface": "Gi0/7", "keep": ["voice"]}]), m)
    assert "802.1X/MAB" in msg and "keep: [dot1x, port_security]" in msg


def test_qinq_port_may_be_a_dot1q_tunnel_port():
    m = model(PortInfo("Gi0/7", "dot1q-tunnel", access_vid=2100), TRUNK_PORT)
    preflight.check_switch(inv([{"interface": "Gi0/7", "qinq": True}]).switches[0], m, S)


def test_session_port_is_refused_as_access_port_and_as_trunk():
    s = preflight.Session(where="inv.yaml: switches[0]", session_port="Gi0/7")
    assert "own management session" in refusal(inv(["Gi0/7"]), model(ACCESS, TRUNK_PORT), s)
    s = preflight.Session(where="inv.yaml: switches[0]", session_port="Gi0/24")
    msg = refusal(inv(["Gi0/7"]), model(ACCESS, TRUNK_PORT), s)
    assert "trunks[0].switch_port" in msg and "cuts that session" in msg


def test_unknown_interface_is_refused_when_the_model_has_ports():
    assert "has no interface Gi0/9" in refusal(inv(["Gi0/9"]), model(ACCESS, TRUNK_PORT))


# ----------------------------------------------------------------------------- trunks
@pytest.mark.parametrize("trunk, words", [
    (PortInfo("Gi0/24", "trunk", native_vid=1, allowed_vids="all", lag="Port-channel1"),
     ["member of Port-channel1", "use Port-channel1 itself as the trunk"]),
    (PortInfo("Gi0/24", "trunk", native_vid=1, allowed_vids="all", is_lag=True, mlag_peer_link=True),
     ["MLAG peer link"]),
    (PortInfo("Gi0/24", "routed"), ["routed port"]),
    (PortInfo("Gi0/24", "routed", management=True), ["management interface"]),
])
def test_bad_trunk_is_refused(trunk, words):
    msg = refusal(inv(["Gi0/7"]), model(ACCESS, trunk))
    assert msg.startswith("inv.yaml: switches[0].trunks[0].switch_port")
    for w in words:
        assert w in msg


def test_a_lag_may_be_the_trunk_when_shared_on_purpose():
    lag = PortInfo("Port-channel1", "trunk", native_vid=1, allowed_vids="all", is_lag=True)
    members = [PortInfo(f"Gi0/{n}", "trunk", native_vid=1, allowed_vids="all", lag="Port-channel1") for n in (1, 2)]
    m = model(ACCESS, lag, *members)
    msg = refusal(inv(["Gi0/7"], trunk="Port-channel1"), m)
    assert msg.startswith("inv.yaml: switches[0].trunks[0].shared: sw1 Port-channel1 is a link aggregation group "
                          "(Gi0/1, Gi0/2) and a trunk that carries VLANs 10 now (an uplink)")
    assert "write the trunk as {switch_port: Port-channel1, server_interface: eth1, shared: true}" in msg
    sw = parse_shared(inv(["Gi0/7"], trunk="Port-channel1"))
    found = preflight.switch_findings(sw, m, S)
    assert [(f.severity, f.kind) for f in found] == [("warning", "trunk-shared")]
    assert "shared: true keeps VLANs 10 on it and adds HARMLESS's" in found[0].problem


def parse_shared(i):
    """The inventory's first switch with ``shared: true`` on its first trunk."""
    import yaml
    d = i.model_dump(mode="json", exclude_none=True)
    d["switches"][0]["trunks"][0]["shared"] = True
    return parse_inventory(yaml.safe_dump(d), "inv.yaml").switches[0]


# ----------------------------------------------------------------------------- VTP
def test_vtp_server_is_refused_with_both_fixes_and_allowed_by_vtp_allow():
    m = model(ACCESS, TRUNK_PORT, vtp="server")
    msg = refusal(inv(["Gi0/7"]), m)
    assert "switches[0].vtp" in msg and "VTP server" in msg and "every switch of its VTP domain" in msg
    assert "vtp mode transparent" in msg and "vtp: allow" in msg
    preflight.check_switch(inv(["Gi0/7"], vtp="allow").switches[0], m, S)


def test_vtp_client_is_refused_even_with_vtp_allow():
    msg = refusal(inv(["Gi0/7"], vtp="allow"), model(ACCESS, TRUNK_PORT, vtp="client"))
    assert "VTP client" in msg and "cannot create" in msg


@pytest.mark.parametrize("mode", ["transparent", "off", None])
def test_vtp_transparent_off_and_none_pass(mode):
    preflight.check_switch(inv(["Gi0/7"]).switches[0], model(ACCESS, TRUNK_PORT, vtp=mode), S)


# ----------------------------------------------------------------------------- plan-level rules
def test_stp_instance_limit_from_the_platform_table():
    sw = inv(["Gi0/7", "Gi0/8"]).switches[0]
    m = model(ACCESS, TRUNK_PORT, vlans=range(1, 127), stp="pvst")       # 126 VLANs, 2 more = 128: fits
    s = preflight.Session(where="w", platform="WS-C2960-24TT-L", driver="ios")
    preflight.check_plan(sw, m, {"Gi0/7": 500, "Gi0/8": 501}, s)
    m = model(ACCESS, TRUNK_PORT, vlans=range(1, 128), stp="rapid-pvst")   # 127 + 2 = 129 > 128
    with pytest.raises(InputError) as e:
        preflight.check_plan(sw, m, {"Gi0/7": 500, "Gi0/8": 501}, s)
    assert "129 instances" in str(e.value) and "128" in str(e.value) and "spanning-tree mode mst" in str(e.value)
    lite = preflight.Session(where="w", platform="WS-C2960-24-S", driver="ios")
    with pytest.raises(InputError):
        preflight.check_plan(sw, model(ACCESS, vlans=range(1, 64)), {"Gi0/7": 500, "Gi0/8": 501}, lite)


def test_stp_limit_override_and_mst_and_unknown_platform():
    sw = inv(["Gi0/7"], stp_instance_limit=300).switches[0]
    s = preflight.Session(where="w", platform="WS-C2960-24TT-L", driver="ios")
    preflight.check_plan(sw, model(ACCESS, vlans=range(1, 200), stp="pvst"), {"Gi0/7": 500}, s)
    sw = inv(["Gi0/7"]).switches[0]
    preflight.check_plan(sw, model(ACCESS, vlans=range(1, 200), stp="mst"), {"Gi0/7": 500}, s)
    preflight.check_plan(sw, model(ACCESS, vlans=range(1, 200), stp="pvst"), {"Gi0/7": 500},
                         preflight.Session(where="w", platform="", driver="ios"))


def test_chosen_vid_in_the_models_vlans_is_refused_unless_ours():
    sw = inv(["Gi0/7"]).switches[0]
    with pytest.raises(InputError) as e:
        preflight.check_plan(sw, model(ACCESS, vlans=(1, 10, 500)), {"Gi0/7": 500}, S)
    assert "VID 500" in str(e.value) and "access_ports[0].vid" in str(e.value)
    preflight.check_plan(sw, model(ACCESS, vlans=(1, 10, 500)), {"Gi0/7": 500}, S, ours=frozenset({500}))


def test_planner_avoids_vlans_that_are_only_referenced():
    """VLAN 107 exists nowhere but a trunk carries it: the planner must not pick 107 for port 7."""
    uplink = PortInfo("Gi0/23", "trunk", native_vid=1, allowed_vids=(107,))
    m = model(PortInfo("Gi0/7", "dynamic", access_vid=1), uplink, TRUNK_PORT, vlans=(1, 107))
    facts = DeviceFacts("sw1", "", "", ("Gi0/7", "Gi0/23", "Gi0/24"), {1: "default"}, port_model=m)
    i = inv(["Gi0/7"], vlan_range="100-199")
    sp = plan_switch(i.switches[0], facts, None, "inv.yaml: switches[0]")
    assert sp.ports[0].vid not in (1, 107)
    assert sp.ports[0].vid == 100


def test_planner_runs_preflight():
    m = model(PortInfo("Gi0/7", "trunk", native_vid=1, allowed_vids="all"), TRUNK_PORT)
    facts = DeviceFacts("sw1", "", "", ("Gi0/7", "Gi0/24"), {1: "default"}, port_model=m)
    with pytest.raises(InputError, match="is a trunk"):
        plan_switch(inv(["Gi0/7"]).switches[0], facts, None, "inv.yaml: switches[0]")


# ----------------------------------------------------------------------------- offline plan (corpus configs)
def offline_inv(tmp_path, cfg: str, access, trunk, **extra) -> tuple:
    i = inv(access, trunk=trunk, **extra)
    return i, {"sw1": CORPUS / cfg}


def test_offline_plan_of_a_transparent_access_switch(tmp_path, monkeypatch):
    monkeypatch.setenv("HARMLESS_STATE_DIR", str(tmp_path))
    i, cfgs = offline_inv(tmp_path, "ios/c2960_access_transparent.cfg", ["FastEthernet0/7", "FastEthernet0/8"],
                          "GigabitEthernet0/2")
    res = offline.plan_offline(i, "inv.yaml", cfgs)
    vids = {p.interface: p.vid for p in res.plan.switches[0].ports}
    assert vids == {"FastEthernet0/7": 107, "FastEthernet0/8": 108}
    assert "+vlan 107" in res.diffs["sw1"] and " +switchport access vlan 107" in res.diffs["sw1"]
    assert "interface GigabitEthernet0/2\n +switchport mode trunk" in res.diffs["sw1"]


@pytest.mark.parametrize("cfg, access, trunk, words", [
    ("ios/c2960_vtp_server_default.cfg", ["FastEthernet0/4"], "FastEthernet0/5", ["VTP server"]),
    ("ios/c2960_access_transparent.cfg", ["GigabitEthernet0/1"], "GigabitEthernet0/2", ["is a trunk"]),
    ("ios/c3850_lacp_pagp_on.cfg", ["GigabitEthernet1/0/3"], "GigabitEthernet1/0/8", ["member of Port-channel2"]),
    ("ios/c3850_lacp_pagp_on.cfg", ["GigabitEthernet1/0/7"], "GigabitEthernet1/0/1",
     ["trunks[0]", "use Port-channel1 itself"]),
    ("ios/c3560_l3_routed.cfg", ["GigabitEthernet0/1"], "GigabitEthernet0/7", ["routed port"]),
    ("ios/c9300_ibns2_stack.cfg", ["GigabitEthernet1/0/1"], "GigabitEthernet1/0/5", ["keep: [voice, dot1x]"]),
    ("ios/c9300_ibns2_stack.cfg", [{"interface": "GigabitEthernet0/0", "ofport": 100}], "GigabitEthernet1/0/5",
     ["management interface"]),
    ("ios/c2960_voice_dot1x_portsec.cfg", ["FastEthernet0/3"], "GigabitEthernet0/2", ["port security"]),
    ("ios/c2960_voice_dot1x_portsec.cfg", ["FastEthernet0/1"], "GigabitEthernet0/2", ["voice VLAN (11)"]),
    ("eos/mlag_leaf1.cfg", ["Ethernet47"], "Ethernet2", ["MLAG peer link"]),
    ("eos/routed_default_mode.cfg", ["Ethernet5"], "Ethernet6", ["routed port"]),
])
def test_offline_plan_refuses(tmp_path, monkeypatch, cfg, access, trunk, words):
    monkeypatch.setenv("HARMLESS_STATE_DIR", str(tmp_path))
    driver = cfg.split("/")[0]
    i, cfgs = offline_inv(tmp_path, cfg, access, trunk, driver=driver)
    with pytest.raises(InputError) as e:
        offline.plan_offline(i, "inv.yaml", cfgs)
    for w in words:
        assert w in str(e.value)


def test_offline_plan_bad_arguments(tmp_path):
    with pytest.raises(InputError, match="SWITCH=FILE"):
        offline.parse_config_args(["sw1"])
    i = inv(["Gi0/7"])
    with pytest.raises(InputError, match="has no switch sw9"):
        offline.plan_offline(i, "inv.yaml", {"sw9": tmp_path / "x.cfg"})
    with pytest.raises(InputError, match="cannot read the saved config"):
        offline.plan_offline(i, "inv.yaml", {"sw1": tmp_path / "missing.cfg"})


def test_local_diff_lists_only_new_lines():
    running = "vlan 10\n name a\n!\ninterface Gi0/1\n switchport mode access\n"
    cand = "vlan 10\n name a\nvlan 11\n name b\ninterface Gi0/1\n switchport mode access\n switchport access vlan 11\n"
    assert offline.local_diff(running, cand) == "+vlan 11\n +name b\ninterface Gi0/1\n +switchport access vlan 11\n"
    assert offline.local_diff(running, running) == ""


# ----------------------------------------------------------------------------- IOS driver helpers (pure)
CANDIDATE = "vlan 107\n name harmless-sw1-p7\n!\ninterface FastEthernet0/7\n switchport mode access\n" \
            " switchport access vlan 107\n!\nend\n"
RUNNING_SERVER = ("hostname sw1\n!\nspanning-tree mode pvst\n!\ninterface FastEthernet0/7\n"
                  " switchport access vlan 107\n switchport mode access\n!\nend\n")


def test_unapplied_is_vtp_safe_with_device_vlans():
    # VTP server: the VLAN is in the VLAN database (show vlan), not in the running config
    assert unapplied(CANDIDATE, RUNNING_SERVER) == ["vlan 107"]          # text-only check: false alarm
    assert unapplied(CANDIDATE, RUNNING_SERVER, [1, 107, 1002]) == []       # model + show vlan: applied
    assert unapplied(CANDIDATE, RUNNING_SERVER, [1, 1002]) == ["vlan 107"]  # really missing


SHOW_USERS = """    Line       User       Host(s)              Idle       Location
   1 vty 0     netops     idle                 00:01:10 10.1.1.50
*  2 vty 1     harmless   idle                 00:00:00 10.9.0.5

  Interface    User               Mode         Idle     Peer Address
"""
SHOW_ARP = """Protocol  Address          Age (min)  Hardware Addr   Type   Interface
Internet  10.9.0.5                3   0050.56aa.0001  ARPA   Vlan99
"""
SHOW_MAC = """          Mac Address Table
-------------------------------------------

Vlan    Mac Address       Type        Ports
----    -----------       --------    -----
  99    0050.56aa.0001    DYNAMIC     Gi0/2
Total Mac Addresses for this criterion: 1
"""


def test_session_port_from_show_users_arp_and_mac_table():
    names = ["FastEthernet0/1", "GigabitEthernet0/1", "GigabitEthernet0/2"]
    asked = []
    got = session_port_of(SHOW_USERS, lambda ip: asked.append(ip) or SHOW_ARP,
                          lambda mac: asked.append(mac) or SHOW_MAC, names)
    assert got == "GigabitEthernet0/2"
    assert asked == ["10.9.0.5", "0050.56aa.0001"]
    assert session_port_of(SHOW_USERS, lambda ip: "", lambda mac: SHOW_MAC, names) is None
    # off-subnet source: no ARP entry for it, so the session arrives through the default gateway
    gw_arp = SHOW_ARP.replace("10.9.0.5        ", "10.99.2.1       ")
    assert session_port_of(SHOW_USERS, lambda ip: gw_arp if ip == "10.99.2.1" else "", lambda mac: SHOW_MAC, names,
                           gateway="10.99.2.1") == "GigabitEthernet0/2"
    assert session_port_of("", lambda ip: SHOW_ARP, lambda mac: SHOW_MAC, names) is None


def test_render_removes_stale_harmless_vlans_that_only_the_vlan_database_holds():
    """VTP server: an earlier plan's VLAN 110 is in vlan.dat only; a re-plan without port 10 deletes it."""
    from harmless.switch_drivers.base import AccessPortChange, TrunkChange
    from harmless.switch_drivers.ios.render import render_config

    args = ([AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p7")], [TrunkChange("GigabitEthernet0/1", (107,))])
    db = {1: "default", 100: "users", 107: "harmless-sw1-p7", 110: "harmless-sw1-p10"}
    assert "no vlan 110" in render_config(*args, current=RUNNING_SERVER, database=db)
    assert "no vlan" not in render_config(*args, current=RUNNING_SERVER)


def test_kept_features_are_in_the_plan_the_state_and_the_plan_output(tmp_path, monkeypatch):
    """keep: [voice] is recorded per port (plan JSON, so state.json) and `plan` prints what it means."""
    from click.testing import CliRunner

    from harmless.cli import main
    from harmless.plan import Plan

    monkeypatch.setenv("HARMLESS_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("X", "unused")
    cfg = CORPUS / "ios/c2960_voice_dot1x_portsec.cfg"
    i = inv([{"interface": "FastEthernet0/1", "keep": ["voice"]}], trunk="GigabitEthernet0/2")
    res = offline.plan_offline(i, "inv.yaml", {"sw1": cfg})
    assert res.plan.switches[0].ports[0].keep == ("voice",)
    assert Plan.from_dict(res.plan.to_dict()) == res.plan                # state round trip
    p = tmp_path / "inv.yaml"
    import yaml
    p.write_text(yaml.safe_dump({"switches": [i.switches[0].model_dump(mode="json", exclude_none=True)]}))
    r = CliRunner().invoke(main, ["plan", "-i", str(p), "--config", f"sw1={cfg}"])
    assert r.exit_code == 0, r.output
    assert "note: FastEthernet0/1 keeps voice on the switch: the voice VLAN stays on the legacy switch" in \
        " ".join(r.output.split())


def test_eos_internal_vlans_of_routed_ports_are_not_chosen():
    sw = inv(["Ethernet7"], trunk="Ethernet25", driver="eos", vlan_range="1000-1099").switches[0]
    routed = [PortInfo(f"Ethernet{n}", "routed") for n in (1, 2)]
    m = model(PortInfo("Ethernet7", "access", access_vid=1), *routed, vtp=None)
    s = preflight.Session(where="w", driver="eos")
    with pytest.raises(InputError, match="internal VLAN of one of its 2 routed ports"):
        preflight.check_plan(sw, m, {"Ethernet7": 1007}, s)
    preflight.check_plan(sw, m, {"Ethernet7": 1008}, s)                 # 1006, 1007 are taken, 1008 is not
    preflight.check_plan(sw, model(PortInfo("Ethernet7", "access", access_vid=1), vtp=None), {"Ethernet7": 1006}, s)
