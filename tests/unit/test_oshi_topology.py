"""OSHI topology files, the lab's port/address plan, OpenFlow encoding of encap/decap, LLDP probes."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest
import yaml

from harmless.errors import InputError
from harmless.oshi.topology import load_topology, make_plan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "oshi-demo.yaml"


def test_example_topology_plan():
    t = load_topology(str(EXAMPLE))
    p = make_plan(t)
    assert len(p.nodes) >= 4 and len(p.ces) >= 3 and [n.name for n in p.nodes.values() if n.harmless] == ["pe1"]
    pe1 = p.nodes["pe1"]
    assert [(x.ofport, x.name) for x in pe1.ports] == [(1, "pe2"), (2, "cr1"), (3, "ce1-ip"), (4, "ce1-vll"),
                                                     (5, "ce1-vss")]
    assert pe1.port_pairs() == {1: 1001, 2: 1002, 3: 1003} and pe1.edge_ports() == {"ce1-vll": 4, "ce1-vss": 5}
    assert p.endpoint("ce3.pw") == ("pe3", "ce3-pw")
    assert p.ces["ce3"].service_ips == {"vll": "10.200.1.3/24", "pw": "10.200.2.3/24", "vss": "10.200.3.3/24"}
    assert p.nodes["cr1"].ports[-1].controller and p.controller_ip == "10.254.0.2"


@pytest.mark.parametrize("change,where,text", [
    (lambda d: d.update(name="toolong"), "name", "1-4 lowercase"),
    (lambda d: d["links"].append(["pe1", "nowhere"]), "(top level)", "must join two different nodes"),
    (lambda d: d["links"].append(["pe2", "pe1"]), "(top level)", "appears twice"),
    (lambda d: d["nodes"].append({"name": "sw"}), "nodes.4.name", "not sw"),
    (lambda d: d["services"].append({"name": "x", "kind": "pw", "endpoints": ["ce1.nope", "ce2.pw"]}),
     "(top level)", "not <ce>.<port>"),
    (lambda d: d.update(label_range=[0, 10]), "(top level)", "16..1048575"),
    (lambda d: d["nodes"][1].update(harmless=True), "(top level)", "at most one node"),
])
def test_bad_topology_files_name_the_field(tmp_path, change, where, text):
    d = yaml.safe_load(EXAMPLE.read_text())
    change(d)
    f = tmp_path / "t.yaml"
    f.write_text(yaml.safe_dump(d))
    with pytest.raises(InputError) as ei:
        load_topology(str(f))
    assert ei.value.where == f"{f}: {where}" and text in ei.value.problem and ei.value.exit_code == 2


def test_encap_decap_wire_format_matches_open_vswitch():
    """struct nx_action_encap / nx_action_decap (OVS lib/ofp-actions.c): 16 bytes each."""
    pytest.importorskip("os_ken")
    from harmless import openflow as of
    enc, dec = of.nx_encap_classes()
    for act, subtype, tail in [(enc(of.PT_MPLS), 46, struct.pack("!HI", 0, 0x18847)),
                               (enc(of.PT_ETH), 46, struct.pack("!HI", 0, 0)),
                               (dec(), 47, struct.pack("!2xI", 0x1FFFE)),
                               (dec(of.PT_ETH), 47, struct.pack("!2xI", 0))]:
        buf = bytearray()
        act.serialize(buf, 0)
        assert len(buf) == 16
        assert struct.unpack("!HHIH", bytes(buf[:10])) == (0xFFFF, 16, 0x00002320, subtype)
        assert bytes(buf[10:]) == tail


class _Datapath:
    """What :meth:`Flow.to_flowmod` reads of an os-ken datapath."""

    def __init__(self):
        from os_ken.ofproto import ofproto_v1_3, ofproto_v1_3_parser
        self.ofproto, self.ofproto_parser = ofproto_v1_3, ofproto_v1_3_parser


def test_flow_to_openflow_and_probe_round_trip():
    pytest.importorskip("os_ken")
    from harmless.openflow import Encap, Flow, match, output_port, pop_vlan, set_mpls_label, vid_present
    from harmless.pipelines.oshi.controller import parse_probe, probe
    f = Flow(250, match(in_port=4, vlan_vid=vid_present(100)), (pop_vlan(), Encap("mpls"), set_mpls_label(17),
                                                                Encap("ethernet"), output_port(2)), 5)
    fm = f.to_flowmod(_Datapath())
    m = fm.match
    assert m["in_port"] == 4 and m["vlan_vid"] == 0x1000 | 100
    acts = fm.instructions[0].actions
    assert [type(a).__name__ for a in acts] == ["OFPActionPopVlan", "NXActionEncap", "OFPActionSetField",
                                                "NXActionEncap", "OFPActionOutput"]
    with pytest.raises(ValueError):
        Flow(1, actions=("learn(x)",)).to_flowmod(_Datapath())
    assert parse_probe(probe(0x4F534801, 7, 0x8942)) == (0x4F534801, 7)
    assert parse_probe(probe(0x4F534801, 7, 0x88CC)) == (0x4F534801, 7)
    assert parse_probe(b"\x00" * 60) is None
