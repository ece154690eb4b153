"""The learning switch and the benchmark's reactive app (which reuses its PACKET_IN plumbing) driven through their
os-ken handlers against a fake datapath; where packets go is asked of the fake OpenFlow table they programmed."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("os_ken")

from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import ARP, Ether  # noqa: E402

from harmless import openflow as of  # noqa: E402
from harmless.bench import reactive_app as ra  # noqa: E402
from harmless.pipelines import learning_switch as ls  # noqa: E402
from tests.lib.fakeoftable import FakeDatapath, FakeOFTable  # noqa: E402

A, B = "02:00:00:00:00:0a", "02:00:00:00:00:0b"


def connect(app):
    dp = FakeDatapath(0x42)
    app.switch_features_handler(SimpleNamespace(msg=SimpleNamespace(datapath=dp)))
    return dp, FakeOFTable(name="br-of").apply_ofmsgs(dp.sent)


def packet_in(app, dp, in_port: int, frame) -> list:
    """Deliver one PACKET_IN; returns the messages the app sent for it."""
    n = len(dp.sent)
    msg = SimpleNamespace(datapath=dp, match={"in_port": in_port}, data=bytes(frame),
                          buffer_id=dp.ofproto.OFP_NO_BUFFER)
    app.packet_in_handler(SimpleNamespace(msg=msg))
    return dp.sent[n:]


def kinds(msgs) -> list[str]:
    return [type(m).__name__ for m in msgs]


def test_learning_switch_floods_unknown_learns_and_installs_flows():
    app = ls.LearningSwitch13()
    dp, table = connect(app)
    assert kinds(dp.sent) == ["OFPFlowMod", "OFPFlowMod"] and dp.sent[0].command == dp.ofproto.OFPFC_DELETE
    assert table.fate(1, eth_dst=B).to_controller                            # table-miss: everything to us
    sent = packet_in(app, dp, 1, Ether(src=A, dst=B) / IP())
    assert kinds(sent) == ["OFPPacketOut"] and sent[0].actions[0].port == dp.ofproto.OFPP_FLOOD
    sent = packet_in(app, dp, 2, Ether(src=B, dst=A) / IP())                # A was learnt on port 1
    assert kinds(sent) == ["OFPFlowMod", "OFPPacketOut"] and sent[1].actions[0].port == 1
    table.apply_ofmsgs(sent)
    f = table.fate(2, eth_src=B, eth_dst=A)
    assert f.ports == [1] and f.hits[0][1] == ls.learned_flow(2, A, 1)
    assert f.hits[0][1].idle_timeout == ls.IDLE_TIMEOUT_S and f.hits[0][1].cookie == ls.COOKIE
    assert table.fate(1, eth_dst=B).to_controller                            # the other direction: not yet
    assert packet_in(app, dp, 1, Ether(src=A, dst="01:80:c2:00:00:0e", type=0x88CC) / (b"x" * 46)) == []   # LLDP


def test_reactive_app_installs_one_flow_per_5_tuple_between_7_and_10():
    app = ra.ReactiveForwarder()
    dp, table = connect(app)
    assert kinds(dp.sent) == ["OFPFlowMod"] and dp.sent[0].cookie == ra.COOKIE      # no delete-all
    frame = Ether(src=A, dst=B) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1000, dport=2000)
    sent = packet_in(app, dp, 7, frame)
    assert kinds(sent) == ["OFPFlowMod", "OFPPacketOut"] and app.packet_ins == 1
    table.apply_ofmsgs(sent)
    five = dict(eth_type=0x0800, ipv4_src="10.0.0.1", ipv4_dst="10.0.0.2", ip_proto=17, udp_src=1000, udp_dst=2000)
    assert table.fate(7, **five).ports == [10]
    assert table.fate(7, **{**five, "udp_src": 1001}).to_controller          # another 5-tuple: first packet to us
    assert table.fate(10, **five).to_controller
    sent = packet_in(app, dp, 10, Ether(src=B, dst=A) / ARP())               # not IPv4: forwarded, no flow
    assert kinds(sent) == ["OFPPacketOut"] and sent[0].actions[0].port == 7 and app.packet_ins == 2
    assert packet_in(app, dp, 3, frame) == [] and app.packet_ins == 2        # not a benchmark port


def test_pure_parts():
    t = {}
    assert ls.learn(t, 1, A, B) is None and ls.learn(t, 2, B, A) == 1
    assert ls.table_miss(5) == of.Flow(0, of.Match(), (of.output_controller(),), 5)
    assert ra.five_tuple_flow(7, bytes(Ether() / ARP()), 10) is None
