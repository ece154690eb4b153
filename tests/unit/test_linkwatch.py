"""Link-state mirroring decisions (pure): which br-of ports change when legacy links change."""
from harmless.linkwatch import changes, parse_port_config
from harmless.plan import PortPlan, SwitchPlan, TrunkPlan

DESC = """OFPST_PORT_DESC reply (OF1.3) (xid=0x2):
 7(sw1-p7): addr:6e:1c:0b:2a:6c:aa
     config:     0
     state:      LIVE
     speed: 0 Mbps now, 0 Mbps max
 10(sw1-p10): addr:9a:3e:4d:11:22:33
     config:     NO_RECV NO_FWD NO_PACKET_IN
     state:      LIVE
 LOCAL(br-of-sw1): addr:ae:13:00:10:63:42
     config:     PORT_DOWN
     state:      LINK_DOWN
"""

SP = SwitchPlan("sw1", "br-of-sw1", "1", ("OpenFlow13",), (),
                (PortPlan("Fa0/7", 7, 107, "Gi0/1", "h7"), PortPlan("Fa0/10", 10, 110, "Gi0/1", "h10"),
                 PortPlan("Fa0/12", 12, 112, "Gi0/1", "h12")),
                (TrunkPlan("Gi0/1", "eth1", "system", (), (107, 110, 112)),))


def test_parse_port_config_reads_flags_and_skips_local():
    assert parse_port_config(DESC) == {7: set(), 10: {"NO_RECV", "NO_FWD", "NO_PACKET_IN"}}


def test_link_down_and_up_become_events_unknown_ports_are_left_alone():
    cur = parse_port_config(DESC)
    evs = changes(SP, {"Fa0/7": "down", "Fa0/10": "up", "Fa0/12": "down"}, cur)
    assert [(e.ofport, e.link) for e in evs] == [(7, "down"), (10, "up")]      # port 12 is not on br-of (yet)
    assert changes(SP, {"Fa0/7": "up", "Fa0/10": "admin-down"}, cur) == []     # already mirrored
    assert changes(SP, {}, cur) == []                                          # unknown device state: no change
    assert [(e.ofport, e.link) for e in changes(SP, {"Fa0/7": "admin-down"}, cur)] == [(7, "down")]


def test_watch_refuses_a_too_short_interval_and_an_empty_deployment(state_dir):
    import pytest

    from harmless.errors import InputError
    from harmless.linkwatch import watch
    with pytest.raises(InputError) as e:
        watch(0.1, once=True)
    assert e.value.where == "--interval" and "0.5" in e.value.fix
    with pytest.raises(InputError) as e:
        watch(2.0, once=True)
    assert "nothing is deployed" in e.value.problem
    assert not (state_dir / "state.json").exists()
