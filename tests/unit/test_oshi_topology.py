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
    from harmless.pipelines.oshi import ofmsg
    for act, subtype, tail in [(ofmsg.NXActionEncap(ofmsg.PT_MPLS), 46, struct.pack("!HI", 0, 0x18847)),
                               (ofmsg.NXActionEncap(ofmsg.PT_ETH), 46, struct.pack("!HI", 0, 0)),
                               (ofmsg.NXActionDecap(), 47, struct.pack("!2xI", 0x1FFFE)),
                               (ofmsg.NXActionDecap(ofmsg.PT_ETH), 47, struct.pack("!2xI", 0))]:
        buf = bytearray()
        act.serialize(buf, 0)
        assert len(buf) == 16
        assert struct.unpack("!HHIH", bytes(buf[:10])) == (0xFFFF, 16, 0x00002320, subtype)
        assert bytes(buf[10:]) == tail


def test_flow_to_openflow_and_probe_round_trip():
    pytest.importorskip("os_ken")
    from harmless.otc.flows import Flow
    from harmless.pipelines.oshi import ofmsg
    from harmless.pipelines.oshi.controller import parse_probe, probe
    f = Flow(250, (("in_port", "4"), ("dl_vlan", "100")), ("pop_vlan", "encap(mpls)", "set_field:17->mpls_label",
                                                         "encap(ethernet)", "output:2"), 5)
    m = ofmsg.match_of(f)
    assert m["in_port"] == 4 and m["vlan_vid"] == 0x1000 | 100
    acts = ofmsg.actions_of(f)[0].actions
    assert [type(a).__name__ for a in acts] == ["OFPActionPopVlan", "NXActionEncap", "OFPActionSetField",
                                                "NXActionEncap", "OFPActionOutput"]
    with pytest.raises(ValueError):
        ofmsg.actions_of(Flow(1, (), ("learn(x)",)))
    assert parse_probe(probe(0x4F534801, 7, 0x8942)) == (0x4F534801, 7)
    assert parse_probe(probe(0x4F534801, 7, 0x88CC)) == (0x4F534801, 7)
    assert parse_probe(b"\x00" * 60) is None
