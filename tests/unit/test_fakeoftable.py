"""The fake OpenFlow switch of the test library (tests/lib/fakeoftable.py) against the OpenFlow 1.3.5 semantics it
claims: priorities, table miss, goto, VLAN push/pop (802.1Q and QinQ), set_field, MPLS, encap/decap, meters,
queues, patch ports, FLOW_MODs from a controller."""
from __future__ import annotations

import pytest

from harmless import openflow as of
from harmless.openflow import Flow, match
from tests.lib.fakeoftable import FakeDatapath, FakeOFNetwork, FakeOFTable, FakeOFTableError, parse_ofctl

A, B = "02:00:00:00:00:0a", "02:00:00:00:00:0b"


def test_highest_priority_wins_and_a_miss_drops():
    t = FakeOFTable([Flow(10, match(in_port=1), (of.output_port(2),)),
                     Flow(20, match(in_port=1, eth_dst=B), (of.output_port(3),)),
                     Flow(0, match(), ())])
    assert t.fate(1, eth_dst=B).ports == [3]
    assert t.fate(1, eth_dst=A).ports == [2]
    f = t.fate(5)
    assert f.dropped and f.miss is None and f.hits[0][1].priority == 0       # the explicit drop entry
    assert FakeOFTable([Flow(10, match(in_port=1), (of.output_port(2),))]).fate(5).miss == 0   # table miss


def test_same_priority_overlap_is_refused_and_add_replaces():
    t = FakeOFTable([Flow(10, match(in_port=1), (of.output_port(2),)), Flow(10, match(eth_dst=B), ())])
    with pytest.raises(FakeOFTableError, match="2 entries of priority 10"):
        t.fate(1, eth_dst=B)
    t.add([Flow(10, match(in_port=1), (of.output_port(7),))])              # same match and priority: replaced
    assert len(t.flows()) == 2 and t.fate(1).ports == [7]


def test_vlan_push_pop_set_and_qinq():
    t = FakeOFTable([Flow(5, match(in_port=1, vlan_vid=of.vid_present(107)), (of.pop_vlan(), of.output_port(2))),
                     Flow(5, match(in_port=2), (*of.push_vlan_act(110, of.TPID_8021AD), of.output_port(1))),
                     Flow(5, match(in_port=3, vlan_vid=of.OFPVID_NONE), (of.output_port(4),))])
    out = t.fate(1, vlan_vid=of.vid_present(107)).on(2)
    assert "vlan_vid" not in out and "vlans" not in out                     # untagged after the pop
    qinq = t.fate(1, vlans=((of.TPID_8021Q, 107), (of.TPID_8021Q, 7))).on(2)
    assert qinq["vlans"] == ((of.TPID_8021Q, 7),) and qinq["vlan_vid"] == of.vid_present(7)   # C-tag stays
    back = t.fate(2, vlans=((of.TPID_8021Q, 7),)).on(1)
    assert back["vlans"] == ((of.TPID_8021AD, 110), (of.TPID_8021Q, 7))   # S-tag pushed outside the C-tag
    assert t.fate(1, vlan_vid=of.vid_present(108)).miss == 0                # another VID: no entry
    assert t.fate(3).ports == [4] and t.fate(3, vlan_vid=of.vid_present(5)).miss == 0   # OFPVID_NONE: untagged only


def test_set_field_meter_queue_goto_and_in_port():
    t = FakeOFTable([Flow(5, match(in_port=1), (of.meter_act(9), of.set_field(eth_dst=B), of.goto_table(1))),
                     Flow(5, match(eth_dst=B), (of.set_queue(3), of.output_port(2), of.output_port(1)), table=1),
                     Flow(5, match(in_port=4), (of.Output(0xFFFFFFF8),)),
                     Flow(5, match(in_port=6), (of.goto_table(0),), table=0)])
    f = t.fate(1, eth_dst=A)
    assert f.meters == [9] and f.ports == [2] and [tb for tb, _ in f.hits] == [0, 1]   # output to in_port: dropped
    assert f.on(2)["eth_dst"] == B and f.on(2)["queue_id"] == 3
    assert t.fate(4).ports == [4]                                           # OFPP_IN_PORT sends it back
    with pytest.raises(FakeOFTableError, match="not forward"):
        t.fate(6)


def test_controller_output():
    f = FakeOFTable([Flow(0, match(), (of.output_controller(),))]).fate(3, eth_type=0x0806)
    assert f.to_controller and f.on(of.OFPP_CONTROLLER)["eth_type"] == 0x0806


def test_mpls_push_swap_pop_and_ethernet_over_mpls():
    t = FakeOFTable([Flow(5, match(in_port=1, eth_type=0x0800), (of.push_mpls(), of.set_mpls_label(17),
                                                                  of.output_port(2))),
                     Flow(5, match(in_port=2, eth_type=0x8847, mpls_label=17), (of.set_mpls_label(18),
                                                                                 of.output_port(3))),
                     Flow(5, match(in_port=3, eth_type=0x8847, mpls_label=18), (of.pop_mpls(0x0800),
                                                                                 of.output_port(4)))])
    hop1 = t.fate(1, eth_type=0x0800, ipv4_src="10.0.0.1").on(2)
    assert hop1["eth_type"] == 0x8847 and hop1["mpls"] == (17,)
    hop2 = t.fate(**{**hop1, "in_port": 2}).on(3)
    assert hop2["mpls"] == (18,)
    end = t.fate(**{**hop2, "in_port": 3}).on(4)
    assert end["eth_type"] == 0x0800 and "mpls" not in end and end["ipv4_src"] == "10.0.0.1"
    pw = FakeOFTable([Flow(5, match(in_port=1), (of.Encap("mpls"), of.set_mpls_label(20), of.Encap("ethernet"),
                                                 of.set_field(eth_src=A), of.output_port(2))),
                      Flow(5, match(in_port=2, eth_type=0x8847, mpls_label=20), (of.Decap(), of.Decap(of.PT_ETH),
                                                                                  of.output_port(3)))])
    frame = dict(eth_src=B, eth_dst=A, eth_type=0x0800, vlans=((of.TPID_8021Q, 5),))
    wire = pw.fate(1, **frame).on(2)
    assert wire["eth_src"] == A and wire["eth_type"] == 0x8847 and wire["mpls"] == (20,) and "vlans" not in wire
    assert wire["inner"]["eth_src"] == B and wire["inner"]["vlans"] == ((of.TPID_8021Q, 5),)   # whole frame inside
    out = pw.fate(**{**wire, "in_port": 2}).on(3)
    assert {k: out[k] for k in ("eth_src", "eth_dst", "eth_type", "vlans")} == frame


def test_network_follows_patch_ports_and_stops_loops():
    otc = FakeOFTable([Flow(1, match(in_port=900, vlan_vid=of.vid_present(7)), (of.pop_vlan(), of.output_port(7))),
                       Flow(1, match(in_port=7), (*of.push_vlan_act(7), of.output_port(900)))], "br-otc")
    brof = FakeOFTable([Flow(1, match(in_port=1), (of.output_port(1), of.Output(0xFFFFFFF8)))], "br-of")
    net = FakeOFNetwork({"br-otc": otc, "br-of": brof}, [(("br-otc", 7), ("br-of", 1))])
    f = net.fate("br-otc", 900, vlan_vid=of.vid_present(7), eth_dst=B)       # hairpinned back by br-of
    assert f.ports == [("br-otc", 900)] and f.on("br-otc", 900)["vlan_vid"] == of.vid_present(7)
    loop = FakeOFNetwork({"a": FakeOFTable([Flow(1, match(), (of.output_port(2),))]),
                          "b": FakeOFTable([Flow(1, match(), (of.output_port(1),))])},
                         [(("a", 2), ("b", 2)), (("b", 1), ("a", 1))])
    with pytest.raises(FakeOFTableError, match="looping"):
        loop.fate("a", 1)


def test_ofctl_text_and_controller_flowmods_load():
    t = FakeOFTable().add_ofctl("cookie=0x5,table=0,priority=100,in_port=1900,dl_vlan=107,"
                                "actions=meter:1007,pop_vlan,output:1007\n\n"
                                "cookie=0x5,table=0,priority=0,actions=drop\n")
    f = t.fate(1900, vlan_vid=of.vid_present(107))
    assert f.ports == [1007] and f.meters == [1007]
    with pytest.raises(FakeOFTableError):
        parse_ofctl("priority=1,actions=learn(x)")
    dp = FakeDatapath()
    t = FakeOFTable().apply_ofmsgs([of.delete_all(dp), Flow(0, actions=(of.output_controller(),), cookie=1)
                                    .to_flowmod(dp), Flow(9, match(in_port=1), (of.output_port(2),), 2)
                                    .to_flowmod(dp), of.barrier(dp)])
    assert t.fate(1).ports == [2] and t.fate(3).to_controller
    t.apply_ofmsgs([of.delete_cookie(dp, 2)])
    assert t.fate(1).to_controller and len(t.flows()) == 1
