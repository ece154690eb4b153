"""Planner: VID allocation, OpenFlow port numbers, stability, conflicts (pure, no device)."""
import pytest
import yaml

from harmless.errors import InputError
from harmless.inventory import parse_inventory
from harmless.plan import Plan, make_plan, vlan_name
from harmless.switch_drivers.base import Capabilities, DeviceFacts

IFACES = tuple(f"FastEthernet0/{i}" for i in range(1, 25)) + ("GigabitEthernet0/1", "GigabitEthernet0/2")


def inv(ports=("FastEthernet0/7", "FastEthernet0/8", "FastEthernet0/10"), vlan_range="100-199", **extra):
    sw = {"name": "sw1", "driver": "ios", "host": "h", "username": "u", "password_env": "X",
          "trunks": [{"switch_port": "GigabitEthernet0/1", "server_interface": "eth1"}],
          "access_ports": list(ports), "vlan_range": vlan_range, **extra}
    return parse_inventory(yaml.safe_dump({"switches": [sw]}), "inv.yaml")


def facts(vlans=None):
    return {"sw1": DeviceFacts("sw1", "WS-C2960", "12.2", IFACES, vlans or {1: "default"})}


def test_ofport_is_legacy_index_and_vid_prefers_range_start_plus_port():
    p = make_plan(inv(), facts({1: "default", 100: "users", 101: "printers"}))
    sp = p.switches[0]
    assert [(x.interface, x.ofport, x.vid) for x in sp.ports] == [
        ("FastEthernet0/7", 7, 107), ("FastEthernet0/8", 8, 108), ("FastEthernet0/10", 10, 110)]
    assert sp.trunks[0].vids == (107, 108, 110)
    assert sp.ports[0].vlan_name == "harmless-sw1-p7"


def test_vids_in_use_on_the_device_are_avoided():
    p = make_plan(inv(), facts({1: "default", 107: "voice", 108: "cams"}))
    vids = {x.interface: x.vid for x in p.switches[0].ports}
    assert vids["FastEthernet0/10"] == 110
    assert 107 not in vids.values() and 108 not in vids.values()
    assert sorted(vids.values()) == [100, 101, 110]      # lowest free VIDs for the two blocked ports


def test_same_input_same_plan_and_stable_with_previous():
    f = facts({1: "default", 100: "users"})
    a, b = make_plan(inv(), f), make_plan(inv(), f)
    assert a == b
    # after up, the device carries our VLANs: the plan must not move away from them
    after = facts({1: "default", 100: "users", **{x.vid: x.vlan_name for x in a.switches[0].ports}})
    assert make_plan(inv(), after, previous=a) == a
    # state lost: our VLAN names on the device are recognised
    assert make_plan(inv(), after) == a
    # round trip through JSON (state file)
    assert Plan.from_dict(a.to_dict()) == a


def test_adding_a_port_keeps_existing_vids():
    a = make_plan(inv(), facts())
    b = make_plan(inv(ports=("FastEthernet0/7", "FastEthernet0/8", "FastEthernet0/10", "FastEthernet0/3")),
                  facts(), previous=a)
    old = {x.interface: x.vid for x in a.switches[0].ports}
    new = {x.interface: x.vid for x in b.switches[0].ports}
    assert all(new[k] == v for k, v in old.items()) and new["FastEthernet0/3"] == 103


def test_explicit_vid_in_use_is_refused():
    with pytest.raises(InputError, match=r"access_ports\[0\].vid: VID 120 is already used on sw1 \(VLAN 'voice'\)"):
        make_plan(inv(ports=({"interface": "FastEthernet0/7", "vid": 120},)), facts({120: "voice"}), src="inv.yaml")


def test_ofport_collision_and_unknown_interface():
    with pytest.raises(InputError, match="would both be OpenFlow port 1"):
        make_plan(inv(ports=("FastEthernet0/1", "GigabitEthernet0/2", {"interface": "FastEthernet0/2", "ofport": 1})),
                  facts())
    with pytest.raises(InputError, match=r"access_ports\[0\]: sw1 has no interface FastEthernet0/99"):
        make_plan(inv(ports=("FastEthernet0/99",)), facts())


def test_range_exhausted():
    # large enough for the ports (validation), but VID 100 is in use on the device
    with pytest.raises(InputError, match=r"vlan_range: no free VID left in 100-101"):
        make_plan(inv(ports=("FastEthernet0/7", "FastEthernet0/8"), vlan_range="100-101"), facts({100: "users"}))
    with pytest.raises(InputError, match=r"vlan_range: 100-101 holds 2 VIDs for 3 access ports"):
        inv(vlan_range="100-101")


def test_vlan_name():
    assert vlan_name("sw1", 7) == "harmless-sw1-p7"


QINQ_PORTS = ("FastEthernet0/7", {"interface": "FastEthernet0/8", "qinq": True})


def test_qinq_port_is_refused_when_the_driver_cannot_do_8021ad():
    with pytest.raises(InputError) as e:
        make_plan(inv(ports=QINQ_PORTS), facts(), caps={"sw1": Capabilities(qinq=False)})
    assert "switches[0].access_ports[1].qinq" in e.value.where and "nothing was changed" in e.value.fix
    with pytest.raises(InputError):      # no capabilities known = no QinQ
        make_plan(inv(ports=QINQ_PORTS), facts())


def test_qinq_port_gets_the_device_default_or_the_chosen_stag_tpid():
    caps = {"sw1": Capabilities(qinq=True, stag_tpids=(0x8100, 0x88A8))}
    sp = make_plan(inv(ports=QINQ_PORTS), facts(), caps=caps).switches[0]
    assert [p.qinq for p in sp.ports] == [False, True] and sp.stag_tpid == 0x8100
    assert sp.access_changes()[1].qinq and sp.trunk_changes()[0].stag_tpid == 0x8100
    sp = make_plan(inv(ports=QINQ_PORTS, stag_tpid=0x88A8), facts(), caps=caps).switches[0]
    assert sp.stag_tpid == 0x88A8
    assert Plan.from_dict(Plan((sp,)).to_dict()).switches[0] == sp        # survives the state file


def test_stag_tpid_the_device_cannot_emit_is_refused():
    caps = {"sw1": Capabilities(qinq=True, stag_tpids=(0x8100,))}
    with pytest.raises(InputError) as e:
        make_plan(inv(ports=QINQ_PORTS, stag_tpid=0x88A8), facts(), caps=caps)
    assert e.value.where.endswith("switches[0].stag_tpid") and "0x88a8" in e.value.problem


def test_stag_tpid_must_be_an_8021q_or_8021ad_tpid():
    with pytest.raises(InputError) as e:
        inv(stag_tpid=0x9100)
    assert "stag_tpid" in e.value.where and "0x9100" in e.value.problem


def test_inventory_names_match_the_device_canonically_and_the_plan_uses_the_device_spelling():
    a = make_plan(inv(ports=("Fa0/7", {"interface": "fastethernet0/8", "trunk": "gi0/1"})), facts())
    sp = a.switches[0]
    assert [(p.interface, p.ofport, p.trunk) for p in sp.ports] == [
        ("FastEthernet0/7", 7, "GigabitEthernet0/1"), ("FastEthernet0/8", 8, "GigabitEthernet0/1")]
    assert sp.trunks[0].switch_port == "GigabitEthernet0/1" and sp.trunks[0].vids == (107, 108)
    # a later run spelling the ports in full keeps the previous VIDs
    b = make_plan(inv(ports=("FastEthernet0/7", "FastEthernet0/8")), facts(), previous=a)
    assert [(p.interface, p.vid) for p in b.switches[0].ports] == [(p.interface, p.vid) for p in sp.ports]
    with pytest.raises(InputError, match=r"access_ports\[0\]: sw1 has no interface Gi0/9"):
        make_plan(inv(ports=("Gi0/9",)), facts())


def test_stack_members_and_lags_get_distinct_ofports():
    stack = tuple(f"GigabitEthernet{m}/0/{n}" for m in (1, 2) for n in range(1, 49)) + ("Port-channel1",)
    f = {"sw1": DeviceFacts("sw1", "C9300", "17", stack + ("TenGigabitEthernet1/1/1",), {1: "default"})}
    sp = make_plan(inv(ports=("Gi1/0/1", "Gi2/0/1", "Po1"), vlan_range="100-3999",
                       trunks=[{"switch_port": "Te1/1/1", "server_interface": "eth1"}]), f).switches[0]
    assert [(p.interface, p.ofport) for p in sp.ports] == [
        ("GigabitEthernet1/0/1", 1), ("GigabitEthernet2/0/1", 2001), ("Port-channel1", 60001)]


def test_junos_unit_0_in_the_inventory_plans_the_port_itself():
    sw = {"name": "ex1", "driver": "junos", "host": "h", "username": "u", "password_env": "X",
          "trunks": [{"switch_port": "ge-0/0/47", "server_interface": "eth1"}], "access_ports": ["ge-0/0/7.0"]}
    inv_ = parse_inventory(yaml.safe_dump({"switches": [sw]}), "inv.yaml")
    f = {"ex1": DeviceFacts("ex1", "EX2300", "21", ("ge-0/0/7", "ge-0/0/7.0", "ge-0/0/47.0", "ge-0/0/47"), {})}
    sp = make_plan(inv_, f).switches[0]
    assert [(p.interface, p.ofport) for p in sp.ports] == [("ge-0/0/7", 7)] and sp.trunks[0].switch_port == "ge-0/0/47"
