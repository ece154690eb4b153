"""Link-state mirroring decisions (pure): which br-of ports change when legacy links change, what OVS is told."""
import pytest

from harmless.linkwatch import changes, held_ports
from harmless.otc.bridges import (LINK_KEY, convergence_commands, parse_ports_desc, patch_commands,
                                  placeholder_commands)
from harmless.plan import Plan, PortPlan, SwitchPlan, TrunkPlan

DESC = """OFPST_PORT_DESC reply (OF1.3) (xid=0x2):
 7(sw1-p7): addr:6e:1c:0b:2a:6c:aa
     config:     0
     state:      LIVE
     speed: 0 Mbps now, 0 Mbps max
 10(sw1-p10): addr:9a:3e:4d:11:22:33
     config:     NO_RECV NO_FWD NO_PACKET_IN
     state:      LINK_DOWN
 LOCAL(br-of-sw1): addr:ae:13:00:10:63:42
     config:     PORT_DOWN
     state:      LINK_DOWN
"""

SP = SwitchPlan("sw1", "br-of-sw1", "1", ("OpenFlow13",), (),
                (PortPlan("Fa0/7", 7, 107, "Gi0/1", "h7"), PortPlan("Fa0/10", 10, 110, "Gi0/1", "h10"),
                 PortPlan("Fa0/12", 12, 112, "Gi0/1", "h12")),
                (TrunkPlan("Gi0/1", "eth1", "system", (), (107, 110, 112)),))


def test_parse_ports_desc_reads_names_config_and_state_and_skips_local():
    assert parse_ports_desc(DESC) == {
        7: {"name": "sw1-p7", "config": set(), "state": {"LIVE"}},
        10: {"name": "sw1-p10", "config": {"NO_RECV", "NO_FWD", "NO_PACKET_IN"}, "state": {"LINK_DOWN"}}}


def test_link_down_and_up_become_events_unknown_ports_are_left_alone():
    present = set(parse_ports_desc(DESC))
    held = held_ports(SP, {"sw1-p10", "other-p7"})
    assert held == {10}
    evs = changes(SP, {"Fa0/7": "down", "Fa0/10": "up", "Fa0/12": "down"}, held, present)
    assert [(e.ofport, e.link, e.device_state) for e in evs] == [(7, "down", "down"), (10, "up", "up")]
    assert changes(SP, {"Fa0/7": "up", "Fa0/10": "down"}, held, present) == []      # already mirrored
    assert changes(SP, {}, held, present) == []                                     # unknown device state: no change
    assert [(e.ofport, e.link) for e in changes(SP, {"Fa0/7": "admin-down"}, held, present)] == [(7, "down")]
    assert changes(SP, {"Fa0/10": "admin-down"}, held, present) == []               # admin-down is down


def test_the_controllers_config_bits_do_not_count_as_held_down():
    # port 10 carries NO_RECV NO_FWD NO_PACKET_IN (a controller's administrative down): watch does not own them
    assert [(e.ofport, e.link) for e in changes(SP, {"Fa0/10": "down"}, set(), set(parse_ports_desc(DESC)))] == \
        [(10, "down")]


def test_placeholder_and_patch_commands_keep_the_openflow_port_number_and_name():
    down = placeholder_commands("sw1-p7", 7)
    assert down[0][:3] == ["set", "Interface", "sw1-p7"]
    assert {"type=system", "ofport_request=7", f"external_ids:{LINK_KEY}=down"} <= set(down[0])
    assert ["clear", "Interface", "sw1-p7", "options"] in down
    up = patch_commands(SP, 7)
    assert up[0] == ["set", "Interface", "sw1-p7", "type=patch", "options:peer=otc-sw1-p7", "ofport_request=7"]
    assert up[1] == ["remove", "Interface", "sw1-p7", "external_ids", LINK_KEY]


def _iface_cmds(cmds, name):
    return [c for c in cmds if c[:3] == ["set", "Interface", name]]


@pytest.mark.parametrize("held", [frozenset(), frozenset({"sw1-p7"})])
def test_convergence_keeps_a_held_down_port_as_placeholder_and_builds_the_others_as_patches(held):
    plan = Plan((SP,))
    cmds = convergence_commands(plan, {}, {}, {}, held)
    p7 = _iface_cmds(cmds, "sw1-p7")
    assert ("type=system" in p7[0]) == ("sw1-p7" in held)
    assert ("type=patch" in p7[0]) == ("sw1-p7" not in held)
    assert "ofport_request=7" in p7[0]
    assert "type=patch" in _iface_cmds(cmds, "sw1-p10")[0]
    # the br-otc side and its number never change with the link
    assert _iface_cmds(cmds, "otc-sw1-p7")[0] == ["set", "Interface", "otc-sw1-p7", "type=patch",
                                                  "options:peer=sw1-p7", "ofport_request=1007"]


def test_watch_refuses_a_too_short_interval_and_an_empty_deployment(state_dir):
    from harmless.errors import InputError
    from harmless.linkwatch import watch
    with pytest.raises(InputError) as e:
        watch(0.1, once=True)
    assert e.value.where == "--interval" and "0.5" in e.value.fix
    with pytest.raises(InputError) as e:
        watch(2.0, once=True)
    assert "nothing is deployed" in e.value.problem
    assert not (state_dir / "state.json").exists()


def test_mirror_at_up_never_fails_up_for_a_driver_without_link_states():
    from harmless.errors import DeviceError
    from harmless.linkwatch import mirror_at_up

    class NoLinks:
        def link_states(self):
            raise NotImplementedError

    class Lost:
        def link_states(self):
            raise DeviceError("sw1", "session lost", "retry")

    said = []
    plan = Plan((SP,))
    assert mirror_at_up(None, plan, {"sw1": NoLinks()}, said.append) == []
    assert mirror_at_up(None, plan, {"sw1": Lost()}, said.append) == []
    assert mirror_at_up(None, plan, {}, said.append) == []
    assert "cannot read link states" in said[0] and "session lost" in said[1] and len(said) == 2


@pytest.mark.parametrize("msg", [
    "<187>42: *Mar  1 00:12:01.123: %LINK-3-UPDOWN: Interface FastEthernet0/7, changed state to down",
    "<189>43: *Mar  1 00:12:02.123: %LINEPROTO-5-UPDOWN: Line protocol on Interface FastEthernet0/7, changed state to up",
    "<187>Nov 24 07:00:00 sw1 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to down",
    "<28>Nov 24 07:00:00 ex1 mib2d[1234]: SNMP_TRAP_LINK_DOWN: ifIndex 526, ifAdminStatus up(1), ifOperStatus "
    "down(2), ifName ge-0/0/7",
    "<14>Nov 24 07:00:00 hp1 ports: port 7 is now off-line",
])
def test_a_link_change_message_from_a_switch_triggers_its_poll(msg):
    from harmless.linkwatch import syslog_trigger
    assert syslog_trigger(msg, "192.0.2.10", {"192.0.2.10": "sw1"}) == "sw1"
    assert syslog_trigger(msg, "192.0.2.99", {"192.0.2.10": "sw1"}) is None        # not from a deployed switch


def test_other_syslog_messages_trigger_nothing():
    from harmless.linkwatch import syslog_trigger
    for msg in ("<189>44: %SYS-5-CONFIG_I: Configured from console by admin on vty0",
                "<190>%SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: admin]", ""):
        assert syslog_trigger(msg, "192.0.2.10", {"192.0.2.10": "sw1"}) is None


def test_parse_listen_accepts_host_port_and_refuses_the_rest():
    from harmless.errors import InputError
    from harmless.linkwatch import parse_listen
    assert parse_listen("0.0.0.0:514") == ("0.0.0.0", 514)
    assert parse_listen("[::]:5514") == ("::", 5514)
    for bad in ("514", "0.0.0.0:", "host:port", ":514", "0.0.0.0:70000"):
        with pytest.raises(InputError) as e:
            parse_listen(bad)
        assert e.value.where == "--syslog" and "HOST:PORT" in e.value.fix
