"""harmless.openflow: the one OpenFlow builder -- ovs-ofctl text, os-ken FLOW_MODs and the messages built from it."""
from __future__ import annotations

import pytest

from harmless import openflow as of
from tests.lib.fakeoftable import FakeDatapath, flow_of_flowmod, parse_ofctl

pytest.importorskip("os_ken")

EVERY_ACTION = (of.meter_act(3), of.set_queue(2), of.pop_vlan(), *of.push_vlan_act(7, of.TPID_8021AD),
                of.set_field(eth_src="02:00:00:00:00:01"), of.push_mpls(), of.set_mpls_label(17),
                of.pop_mpls(0x0800), of.Encap("mpls"), of.Encap("ethernet"), of.Decap(), of.Decap(of.PT_ETH),
                of.set_field(tunnel_id=100), of.output_controller(), of.output_port(4), of.goto_table(2))


def test_ofctl_text_of_every_match_field_and_action():
    f = of.Flow(100, of.match(in_port=1, vlan_vid=of.vid_present(5), eth_type=0x0800, eth_src="02:00:00:00:00:0a",
                              ipv4_src="10.0.0.1", tunnel_id=0x64), EVERY_ACTION, 9, 1, 30)
    assert f.to_ofctl() == (
        "cookie=0x9,table=1,priority=100,idle_timeout=30,in_port=1,dl_vlan=5,dl_type=0x0800,"
        "dl_src=02:00:00:00:00:0a,nw_src=10.0.0.1,tun_id=0x64,actions=meter:3,set_queue:2,pop_vlan,"
        "push_vlan:0x88a8,set_field:4103->vlan_vid,set_field:02:00:00:00:00:01->eth_src,push_mpls:0x8847,"
        "set_field:17->mpls_label,pop_mpls:0x0800,encap(mpls),encap(ethernet),decap(),"
        "decap(packet_type(ns=0,type=0)),set_field:0x64->tun_id,CONTROLLER:65535,output:4,goto_table:2")
    assert of.Flow(0).to_ofctl() == "cookie=0x0,table=0,priority=0,actions=drop"
    assert of.match(vlan_vid=of.OFPVID_NONE).to_ofctl() == "vlan_tci=0x0000/0x1fff"
    assert of.flows_ofctl([of.Flow(0), of.Flow(1)]).count("\n") == 2


def test_text_and_flowmod_render_the_same_flow():
    dp = FakeDatapath()
    f = of.Flow(100, of.match(in_port=1, vlan_vid=of.vid_present(5), mpls_label=3, eth_type=0x8847), EVERY_ACTION,
                9, 1, 30)
    assert parse_ofctl(f.to_ofctl()) == f
    fm = f.to_flowmod(dp)
    assert flow_of_flowmod(fm) == f
    assert [type(i).__name__ for i in fm.instructions] == ["OFPInstructionMeter", "OFPInstructionActions",
                                                           "OFPInstructionGotoTable"]
    assert fm.match["vlan_vid"] == 0x1005 and fm.idle_timeout == 30 and fm.cookie == 9 and fm.table_id == 1
    assert of.Flow(0).to_flowmod(dp).instructions == []                 # drop: no instruction
    fm.serialize()                                                      # a valid wire message (Nicira actions too)
    assert len(fm.buf) == fm.msg_len > 100


def test_vid_present_and_builders_refuse_bad_input():
    assert of.vid_present(107) == 0x1000 | 107
    for bad in (0, 4095):
        with pytest.raises(ValueError):
            of.vid_present(bad)
    with pytest.raises(ValueError):
        of.set_field(eth_src="a", eth_dst="b")
    with pytest.raises(TypeError):
        of.match(vlan_pcp=3)
    with pytest.raises(ValueError):
        of.Flow(1, actions=("output:1",)).to_flowmod(FakeDatapath())


def test_delete_cookie_and_other_messages():
    dp = FakeDatapath()
    d = of.delete_cookie(dp, 0x42)
    ofp = dp.ofproto
    assert (d.command, d.cookie, d.cookie_mask, d.table_id, d.out_port, d.out_group) == \
        (ofp.OFPFC_DELETE, 0x42, 0xFFFFFFFFFFFFFFFF, ofp.OFPTT_ALL, ofp.OFPP_ANY, ofp.OFPG_ANY)
    assert of.delete_cookie(dp, 0x4F56 << 48, 0xFFFF << 48).cookie_mask == 0xFFFF << 48
    assert of.delete_all(dp).cookie_mask == 0
    po = of.packet_out(dp, [*of.push_vlan_act(5), of.output_port(1)], b"x")
    assert po.in_port == ofp.OFPP_CONTROLLER and po.buffer_id == ofp.OFP_NO_BUFFER
    assert [type(a).__name__ for a in po.actions] == ["OFPActionPushVlan", "OFPActionSetField", "OFPActionOutput"]
    req = of.flow_stats_request(dp, 0x4F56 << 48, 0xFFFF << 48)
    assert (req.table_id, req.cookie, req.cookie_mask) == (ofp.OFPTT_ALL, 0x4F56 << 48, 0xFFFF << 48)
    assert of.role_request(dp, "slave", 3).role == ofp.OFPCR_ROLE_SLAVE
    assert type(of.barrier(dp)).__name__ == "OFPBarrierRequest"


def test_digest_and_key_follow_what_the_flow_does():
    a = of.Flow(5, of.match(in_port=1), (of.output_port(2),), 7, note="x")
    b = of.Flow(5, of.match(in_port=1), (of.output_port(3),), 7)
    assert a.digest() != b.digest() and a.digest() == of.Flow(5, of.match(in_port=1), (of.output_port(2),)).digest()
    assert a.digest() < 1 << 48 and a == of.Flow(5, of.match(in_port=1), (of.output_port(2),), 7)   # note: no part
    assert a.key() == (0, 5, 7, frozenset({("in_port", 1)}))
    fm = a.to_flowmod(FakeDatapath())

    class Stat:                                          # an OFPFlowStats entry as the switch returns it
        table_id, priority, cookie, match = fm.table_id, fm.priority, fm.cookie, fm.match
    assert of.stats_key(Stat) == a.key()


def test_meter_text():
    assert of.meter_ofctl(1007, 20000, 6000) == \
        "meter=1007,kbps,burst,stats,bands=type=drop,rate=20000,burst_size=6000"


def test_openflow_messages_are_built_only_in_harmless_openflow():
    """One mechanism: no product module but harmless/openflow.py constructs os-ken OpenFlow messages, actions or
    instructions (``parser.OFP...(``, ``NXAction...``), defines a ``Flow`` class, a ``to_ofctl`` or a module-level
    ``delete_cookie``; harmless/openflow.py itself imports nothing from HARMLESS (the bottom of every layer)."""
    import ast
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    bad = []
    for folder in ("harmless", "otc", "pipelines", "bench", "switch-drivers", "emulators"):
        for f in sorted((root / folder).rglob("*.py")):
            if f == root / "harmless" / "openflow.py":
                continue
            src = f.read_text()
            tree = ast.parse(src)
            rel = f.relative_to(root)
            bad += [f"{rel}: {m}" for m in re.findall(r"\.OFP[A-Z]\w*\(|\bNXAction\w*\(", src)]
            bad += [f"{rel}: class {n.name}" for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "Flow"]
            bad += [f"{rel}: def {n.name}" for n in tree.body if isinstance(n, ast.FunctionDef)
                    and n.name in ("to_ofctl", "delete_cookie", "to_ofp", "flow_mod")]
    assert bad == []
    me = ast.parse((root / "harmless" / "openflow.py").read_text())
    assert not [n for n in ast.walk(me) if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("harmless")]
