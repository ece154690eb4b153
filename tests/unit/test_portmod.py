"""Port-mod and hairpin decisions (pure): what the watcher reads, which ports change, what the device is told, what
the drivers render, what the plan says, and how the emulated data plane floods a VLAN without MAC learning."""
import pytest

from harmless import portmod
from harmless.inventory import Switch
from harmless.otc.bridges import ADMIN_KEY, LINK_KEY, patch_commands, placeholder_commands, port_desc_one
from harmless.plan import PortPlan, SwitchPlan, TrunkPlan, mac_learning_plan, port_down_plan
from harmless.switch_drivers.base import AccessPortChange, Capabilities, TrunkChange

SP = SwitchPlan("sw1", "br-of-sw1", "1", ("OpenFlow13",), (),
                (PortPlan("Fa0/7", 7, 107, "Gi0/1", "h7"), PortPlan("Fa0/10", 10, 110, "Gi0/1", "h10")),
                (TrunkPlan("Gi0/1", "eth1", "system", (), (107, 110)),))

LOG = """2026-11-27T09:57:16.884Z|00050|bridge|INFO|bridge br-of-sw1: added interface sw1-p7 on port 7
2026-11-27T09:57:17.906Z|00052|netdev|WARN|failed to set flags for network device sw1-p7: Operation not supported
2026-11-27T09:57:17.915Z|00053|netdev_linux|WARN|error receiving Ethernet packet on va: Network is down
2026-11-27T09:57:18.000Z|00054|netdev|WARN|failed to get flags for network device sw1-p10: No such device
"""


def test_the_refused_port_mod_is_read_from_ovs_vswitchds_log_line():
    assert portmod.asked_down(LOG.splitlines()) == {"sw1-p7"}
    assert portmod.asked_down([]) == set()


def test_a_port_mod_down_on_a_patch_port_holds_it_and_the_tap_flag_decides_on_a_placeholder():
    evs = portmod.admin_changes(SP, {}, {}, {"sw1-p7"}, seen_at=5.0)
    assert [(e.ofport, e.admin, e.where, e.seen, e.detected_at) for e in evs] == [(7, "down", "br-of", "log", 5.0)]
    # already held: the same request changes nothing
    assert portmod.admin_changes(SP, {"sw1-p7": {ADMIN_KEY}}, {"sw1-p7": False}, {"sw1-p7"}) == []
    # watch holds port 10 link-down and a controller took its tap down (OVS did it): hold it
    evs = portmod.admin_changes(SP, {"sw1-p10": {LINK_KEY}}, {"sw1-p10": False}, set())
    assert [(e.ofport, e.admin, e.seen) for e in evs] == [(10, "down", "tap")]
    # the controller cleared the bit on a held port (its tap is up again): release it
    evs = portmod.admin_changes(SP, {"sw1-p7": {ADMIN_KEY, LINK_KEY}}, {"sw1-p7": True}, set())
    assert [(e.ofport, e.admin) for e in evs] == [(7, "up")]
    # a link-down placeholder whose tap is up and not held: nothing to do; a placeholder without its tap: unknown
    assert portmod.admin_changes(SP, {"sw1-p7": {LINK_KEY}}, {"sw1-p7": True}, set()) == []
    assert portmod.admin_changes(SP, {"sw1-p7": {ADMIN_KEY}}, {}, set()) == []
    # an interface of another switch is not ours
    assert portmod.admin_changes(SP, {}, {}, {"sw2-p7"}) == []


@pytest.mark.parametrize("shut, recorded, link, step", [
    (True, False, "up", "shut"), (True, False, "down", "shut"), (True, False, None, "shut"),
    (True, False, "admin-down", None),          # the operator had shut it: not ours, left as it is
    (True, True, "admin-down", None),           # shut by HARMLESS already
    (False, True, "admin-down", "no-shut"), (False, False, "admin-down", None), (False, False, "up", None),
])
def test_the_device_is_changed_only_for_what_harmless_did(shut, recorded, link, step):
    assert portmod.device_step(shut, recorded, link) == step


def test_the_device_worker_shuts_only_a_port_still_held_after_the_hold(monkeypatch):
    """A flap shorter than the hold never reaches the device (Faucet's flap_all_switch_ports: down, 1 s, up); a port
    held longer is shut once, and its release follows at once. device_change is the journaled device step (a lab
    test and the fault matrix run the real one); here it records what the worker asked for."""
    import threading
    import time
    calls, done = [], threading.Event()

    def change(switch, interface, ofport, shut, sessions):
        calls.append((interface, shut, time.monotonic()))
        done.set()

    monkeypatch.setattr(portmod, "device_change", change)
    w = portmod.DeviceWorker(lambda ev: None, lambda m: None, hold_s=0.6)
    w.start()
    try:
        t0 = time.monotonic()
        w.ask("sw1", "Fa0/7", 7, True)
        time.sleep(0.2)
        w.ask("sw1", "Fa0/7", 7, False)              # released within the hold: only the (no-op) release is asked
        assert done.wait(2) and [c[:2] for c in calls] == [("Fa0/7", False)]
        assert calls[0][2] - t0 < 0.6
        calls.clear(), done.clear()
        t0 = time.monotonic()
        w.ask("sw1", "Fa0/8", 8, True)              # held: shut after the hold, not before
        assert done.wait(3) and [c[:2] for c in calls] == [("Fa0/8", True)] and calls[0][2] - t0 >= 0.6
        done.clear()
        w.ask("sw1", "Fa0/8", 8, False)             # a release is not held back
        assert done.wait(2) and calls[-1][:2] == ("Fa0/8", False) and calls[-1][2] - calls[0][2] < 0.5
    finally:
        w.stop()
        w.join(5)


def test_the_admin_event_dumps_as_watch_json_prints_it():
    e = portmod.AdminEvent(switch="sw1", interface="Fa0/7", ofport=7, admin="down", where="br-of", seen="log",
                           detected_at=1.23456, applied_at=1.3)
    assert e.model_dump(mode="json") == {"switch": "sw1", "interface": "Fa0/7", "ofport": 7, "admin": "down",
                                         "where": "br-of", "seen": "log", "detail": "", "detected_at": 1.235,
                                         "applied_at": 1.3}


def test_vlog_list_file_level():
    text = """                 console    syslog    file
                 -------    ------    ------
backtrace          OFF       INFO       INFO
netdev             OFF        ERR        ERR
netdev_linux       OFF       INFO       INFO
"""
    assert portmod.parse_file_level(text) == "ERR"
    assert portmod.parse_file_level(text, "netdev_linux") == "INFO"
    assert portmod.parse_file_level("", "netdev") is None


def test_placeholder_marks_and_the_way_back_remove_both():
    assert placeholder_commands("sw1-p7", 7, (ADMIN_KEY,))[0] == [
        "set", "Interface", "sw1-p7", "type=system", "ofport_request=7", f"external_ids:{ADMIN_KEY}=down"]
    assert placeholder_commands("sw1-p7", 7, (LINK_KEY, ADMIN_KEY))[0][-2:] == [
        f"external_ids:{LINK_KEY}=down", f"external_ids:{ADMIN_KEY}=down"]
    back = patch_commands(SP, 7)
    assert ["remove", "Interface", "sw1-p7", "external_ids", ADMIN_KEY] in back


def test_the_port_description_of_one_port_gives_its_address_and_the_controllers_bits():
    text = """OFPST_PORT_DESC reply (OF1.3) (xid=0x2):
 7(sw1-p7): addr:6e:1c:0b:2a:6c:aa
     config:     NO_FWD
     state:      LIVE
 10(sw1-p10): addr:9a:3e:4d:11:22:33
     config:     PORT_DOWN NO_RECV
     state:      LINK_DOWN
"""
    assert port_desc_one(text, 7) == ("6e:1c:0b:2a:6c:aa", {"NO_FWD"})
    assert port_desc_one(text, 10) == ("9a:3e:4d:11:22:33", {"NO_RECV"})     # PORT_DOWN is not a kept bit
    assert port_desc_one(text, 12) == ("", set())


# ----------------------------------------------------------------------------- drivers
def test_ios_eos_junos_render_a_port_shutdown_and_refuse_bad_names():
    from harmless.switch_drivers.eos.render import render_port_admin as eos
    from harmless.switch_drivers.ios.render import render_port_admin as ios
    from harmless.switch_drivers.junos.render import render_port_admin as junos
    assert ios("FastEthernet0/7", False) == "interface FastEthernet0/7\n shutdown\n!\nend\n"
    assert ios("FastEthernet0/7", True) == "interface FastEthernet0/7\n no shutdown\n!\nend\n"
    assert eos("Ethernet7", False) == "interface Ethernet7\n   shutdown\n!\nend\n"
    assert junos("ge-0/0/7", False) == "set interfaces ge-0/0/7 disable\n"
    assert junos("ge-0/0/7", True) == "delete interfaces ge-0/0/7 disable\n"
    for f, bad in ((ios, "Fa 0/7; reload"), (eos, "Ethernet7\nreload"), (junos, "ge-0/0/7 disable\nset x")):
        with pytest.raises(ValueError):
            f(bad, False)


ACCESS = [AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p7", no_learning=True),
          AccessPortChange("FastEthernet0/10", 110, "harmless-sw1-p10", no_learning=True)]
TRUNK = [TrunkChange("GigabitEthernet0/1", (107, 110), no_learning=True)]


def test_ios_turns_learning_off_for_harmless_vlans_once_and_back_on_when_no_longer_wanted():
    from harmless.switch_drivers.ios.render import no_learning_vids, render_config
    out = render_config(ACCESS, TRUNK)
    assert "no mac address-table learning vlan 107,110\n" in out
    current = "hostname sw1\n!\nno mac address-table learning vlan 5,107,110\n!\nvlan 107\n name harmless-sw1-p7\n"
    assert no_learning_vids(current) == {5, 107, 110}
    assert "mac address-table learning" not in render_config(ACCESS, TRUNK, current=current)   # already off: no diff
    plain = [AccessPortChange(a.interface, a.vid, a.vlan_name) for a in ACCESS]
    back = render_config(plain, [TrunkChange("GigabitEthernet0/1", (107, 110))], current=current)
    assert "\nmac address-table learning vlan 107,110\n" in back     # VLAN 5 is the operator's: left alone
    assert "no mac address-table" not in back


def test_eos_turns_learning_off_per_interface_and_junos_per_vlan():
    from harmless.switch_drivers.eos.render import render_config as eos
    from harmless.switch_drivers.junos.render import render_config as junos
    out = eos([AccessPortChange("Ethernet7", 107, "harmless-sw1-p7", no_learning=True)],
              [TrunkChange("Ethernet25", (107,), no_learning=True)])
    assert out.count("   no switchport mac address learning\n") == 2
    assert "mac address learning" not in eos([AccessPortChange("Ethernet7", 107, "harmless-sw1-p7")],
                                             [TrunkChange("Ethernet25", (107,))])
    j = [AccessPortChange("ge-0/0/7", 107, "harmless-sw1-p7", no_learning=True)]
    assert "set vlans harmless-sw1-p7 switch-options no-mac-learning\n" in junos(j, [TrunkChange("ge-0/0/1", (107,))])
    assert "set vlans harmless-sw1-p7 no-mac-learning\n" in junos(j, [TrunkChange("ge-0/0/1", (107,))],
                                                                   syntax="legacy")


def _switch(**kw) -> Switch:
    return Switch.model_validate({"name": "sw1", "driver": "ios", "host": "h", "username": "u", "password_env": "P",
                                  "trunks": [{"switch_port": "Gi0/1", "server_interface": "eth1"}],
                                  "access_ports": ["Fa0/7"], **kw})


def test_plan_turns_learning_off_where_the_platform_can_and_warns_where_it_cannot():
    assert mac_learning_plan(_switch(), Capabilities(mac_learning_off=True)) == (True, [])
    off, found = mac_learning_plan(_switch(), Capabilities(mac_learning_source="no such command"), "WS-C2960-24TT-L",
                                   "inv.yaml: switches[0]")
    assert not off and (found[0].severity, found[0].kind, found[0].switch) == ("warning", "mac-learning-on", "sw1")
    assert "WS-C2960-24TT-L cannot turn it off" in found[0].problem and "(no such command)" in found[0].problem
    assert "hairpin" in found[0].problem and found[0].where == "inv.yaml: switches[0].mac_learning"
    assert mac_learning_plan(_switch(mac_learning="on"), Capabilities()) == (False, [])
    # per-port learning control (EOS) on a shared trunk would stop learning in the operator's VLANs too
    shared = _switch(trunks=[{"switch_port": "Gi0/1", "server_interface": "eth1", "shared": True}])
    off, found = mac_learning_plan(shared, Capabilities(mac_learning_off=True, mac_learning_scope="port"))
    assert not off and "shared" in found[0].problem
    assert mac_learning_plan(shared, Capabilities(mac_learning_off=True))[0] is True    # per VLAN (IOS): fine
    # offline (a saved config, no probe): not turned off in the plan, and a note says the online diff may differ
    off, found = mac_learning_plan(_switch(), Capabilities(mac_learning_off=None))
    assert not off and [(f.severity, f.kind) for f in found] == [("note", "mac-learning-unknown")]


def test_plan_keeps_port_down_on_the_server_for_a_driver_that_cannot_shut_a_port():
    assert port_down_plan(_switch(), Capabilities(port_admin=True)) == ("device", [])
    mode, found = port_down_plan(_switch(), Capabilities(), "procurve")
    assert mode == "server" and found[0].severity == "note" and "on the server only" in found[0].problem
    assert port_down_plan(_switch(openflow={"port_down": "server"}), Capabilities()) == ("server", [])
    from pydantic import ValidationError
    with pytest.raises(ValidationError):
        _switch(openflow={"port_down": "both"})


def test_the_plan_round_trips_the_new_fields():
    from harmless.plan import Plan
    sp = SwitchPlan(SP.name, SP.bridge, SP.datapath_id, SP.protocols, SP.controllers, SP.ports, SP.trunks,
                    port_down="server", mac_learning_off=True)
    back = Plan.from_dict(Plan((sp,)).to_dict()).switches[0]
    assert (back.port_down, back.mac_learning_off) == ("server", True)
    assert all(a.no_learning for a in back.access_changes()) and back.trunk_changes()[0].no_learning


# ----------------------------------------------------------------------------- the emulated data plane
PORTS = {"fa0-7": {"vlan_mode": "access", "tag": 107, "trunks": []},
         "fa0-8": {"vlan_mode": "access", "tag": 108, "trunks": []},
         "gi0-1": {"vlan_mode": "native-untagged", "tag": 1, "trunks": [107, 108]}}


def test_a_vlan_without_learning_floods_between_its_two_members_with_the_right_tagging():
    from harmless.emulators.dataplane import LEARNING_COOKIE, learning_flows
    flows = learning_flows(PORTS, {107})
    c = f"cookie={LEARNING_COOKIE:#x}"
    assert f"{c},priority=100,in_port=fa0-7,vlan_tci=0x0000/0x1fff,actions=mod_vlan_vid:107,output:gi0-1" in flows
    assert f"{c},priority=100,in_port=gi0-1,dl_vlan=107,actions=strip_vlan,output:fa0-7" in flows
    assert not [f for f in flows if "108" in f]                      # VLAN 108 still learns (NORMAL)
    assert [f for f in flows if "priority=110" in f and "01:80:c2:00:00:00" in f]     # BPDUs/LLDP stay with NORMAL
    assert learning_flows(PORTS, set()) == []
    shut = {**PORTS, "fa0-7": {**PORTS["fa0-7"], "shutdown": True}}
    assert not [f for f in learning_flows(shut, {107}) if "fa0-7" in f]


def test_eos_per_interface_learning_off_counts_for_a_vlan_when_all_its_ports_have_it():
    from harmless.emulators.dataplane import learning_vids
    both = {**PORTS, "fa0-7": {**PORTS["fa0-7"], "no_learning": True},
            "gi0-1": {**PORTS["gi0-1"], "no_learning": True}}
    assert learning_vids(both, set()) == {107}                      # VLAN 108: fa0-8 still learns
    assert learning_vids({**PORTS, "fa0-7": {**PORTS["fa0-7"], "no_learning": True}}, set()) == set()
    assert learning_vids(PORTS, {108}) == {108}


def test_a_shut_down_port_takes_its_link_down_once(monkeypatch):
    from types import SimpleNamespace

    from harmless.emulators import dataplane
    p7 = SimpleNamespace(mode="access", access_vlan=107, trunk_vlans=None, trunk_native_vlan=None, shutdown=None,
                         vendor_specific={})
    sc = SimpleNamespace(get_port={"FastEthernet0/7": p7}.get)
    ran = []
    monkeypatch.setattr(dataplane, "run_quiet", lambda argv, timeout, stdin=None: (ran.append(argv), (0, "", ""))[1])
    sync = dataplane.OvsSync(sc, {"FastEthernet0/7": "fa0-7"}, "unix:/run/x/db.sock", run=lambda argv: (0, ""),
                             bridge="br-legacy")
    assert sync.apply(sync.pending()) and ran == []               # up from the start: the cable is left alone
    p7.shutdown = True
    assert sync.apply(sync.pending())
    assert ran == [["ovs-ofctl", "mod-port", "unix:/run/x/br-legacy.mgmt", "fa0-7", "down"]]
    assert sync.pending() == {}
    p7.shutdown = None
    assert sync.apply(sync.pending()) and ran[-1][-1] == "up"
