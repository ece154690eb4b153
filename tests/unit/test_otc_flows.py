"""Translator flow builders and OVS output parsers (pure)."""
import pytest

from harmless.otc.bridges import convergence_commands, parse_dump_ports
from harmless import openflow as of
from harmless.openflow import Flow, push_vlan_act
from harmless.otc.flows import OTC_COOKIE, patch_ofport, translator_flows, trunk_ofport
from harmless.plan import Plan, PortPlan, SwitchPlan, TrunkPlan
from tests.lib.fakeoftable import FakeOFNetwork, FakeOFTable


def plan(n_switches=1):
    sws = []
    for s in range(1, n_switches + 1):
        sws.append(SwitchPlan(f"sw{s}", f"br-of-sw{s}", f"{s:016x}", ("OpenFlow13",), ("tcp:127.0.0.1:6653",),
                              (PortPlan("Fa0/7", 7, 107, "Gi0/1", "harmless-sw1-p7"),
                               PortPlan("Fa0/10", 10, 110, "Gi0/1", "harmless-sw1-p10")),
                              (TrunkPlan("Gi0/1", f"eth{s}", "system", (), (107, 110)),)))
    return Plan(tuple(sws))


def hairpin(p: Plan) -> FakeOFNetwork:
    """br-otc loaded from the exact ovs-ofctl text ``bridges.install_flows`` writes, patched to each switch's br-of;
    every br-of cross-connects its ports 7 and 10 for frames that arrive untagged or with C-tag 7 (a stand-in for the
    user's controller: it sees legacy port N as OpenFlow port N)."""
    switches = {"br-otc": FakeOFTable(name="br-otc").add_ofctl("\n".join(f.to_ofctl() for f in translator_flows(p)))}
    patches = []
    for i, sp in p.numbered():
        brof = [Flow(1, of.match(in_port=a, vlan_vid=v), (of.output_port(b),))
                for a, b in ((7, 10), (10, 7)) for v in (of.OFPVID_NONE, of.vid_present(7))]
        switches[sp.bridge] = FakeOFTable(brof, sp.bridge)
        patches += [(("br-otc", patch_ofport(i, pp.ofport)), (sp.bridge, pp.ofport)) for pp in sp.ports]
    return FakeOFNetwork(switches, patches)


def test_translator_flows_pop_on_ingress_push_on_egress():
    lines = [f.to_ofctl() for f in translator_flows(plan())]
    c = f"cookie={OTC_COOKIE:#x},table=0"
    assert lines == [
        f"{c},priority=100,in_port=1900,dl_vlan=107,actions=pop_vlan,output:1007",
        f"{c},priority=100,in_port=1007,actions=push_vlan:0x8100,set_field:4203->vlan_vid,output:1900",
        f"{c},priority=100,in_port=1900,dl_vlan=110,actions=pop_vlan,output:1010",
        f"{c},priority=100,in_port=1010,actions=push_vlan:0x8100,set_field:4206->vlan_vid,output:1900",
        f"{c},priority=0,actions=drop",
    ]
    # packet fate: legacy port 7 (VID 107 on the trunk) -> br-of port 7 untagged -> port 10 -> VID 110 on the trunk
    net = hairpin(plan())
    f = net.fate("br-otc", 1900, vlan_vid=of.vid_present(107), eth_src="02:00:00:00:00:07")
    assert f.ports == [("br-otc", 1900)] and f.meters == []
    assert f.on("br-otc", 1900)["vlans"] == ((0x8100, 110),) and f.on("br-otc", 1900)["eth_src"] == "02:00:00:00:00:07"
    assert [(sw, fl.match.in_port) for sw, _, fl in f.hits] == [("br-otc", 1900), ("br-of-sw1", 7), ("br-otc", 1010)]
    assert net.fate("br-otc", 1900, vlan_vid=of.vid_present(999)).dropped     # a VID nobody owns: the drop entry
    assert net.fate("br-otc", 1900).dropped                                   # untagged on the trunk: dropped


def test_numbering_separates_switches():
    flows = translator_flows(plan(2))
    assert patch_ofport(2, 7) == 2007 and trunk_ofport(2, 0) == 2900
    assert any("in_port=2900,dl_vlan=107" in f.to_ofctl() for f in flows)
    assert len(flows) == 9 and all(f.cookie == OTC_COOKIE for f in flows)
    with pytest.raises(ValueError):
        patch_ofport(1, 900)
    # the second switch's trunk reaches only the second switch's br-of
    f = hairpin(plan(2)).fate("br-otc", 2900, vlan_vid=of.vid_present(107))
    assert f.ports == [("br-otc", 2900)] and {sw for sw, _, _ in f.hits} == {"br-otc", "br-of-sw2"}


def push_vlan_acts(vid, tpid=0x8100):
    return tuple(a.to_ofctl() for a in push_vlan_act(vid, tpid))


def test_push_vlan_sets_ofpvid_present():
    assert push_vlan_acts(107) == ("push_vlan:0x8100", "set_field:4203->vlan_vid")
    assert push_vlan_acts(5, tpid=0x88A8)[0] == "push_vlan:0x88a8"
    with pytest.raises(ValueError):
        push_vlan_acts(4095)
    assert Flow(0).to_ofctl().endswith("actions=drop")


def test_convergence_sets_secure_ofport_request_and_removes_stale():
    cmds = convergence_commands(plan(), bridges={"br-of-old": {"external_ids": {"harmless": "of"}}},
                                owned_ports={"sw1-p3": {"external_ids": {"harmless": "sw1"}}}, controllers={})
    flat = [" ".join(c) for c in cmds]
    assert "--if-exists del-br br-of-old" in flat
    assert "--if-exists del-port sw1-p3" in flat
    assert any(c.startswith("set Bridge br-otc") and "fail_mode=secure" in c and "OpenFlow14" in c for c in flat)
    assert any(c.startswith("set Bridge br-of-sw1") and "fail_mode=secure" in c
               and "other_config:datapath-id=0000000000000001" in c for c in flat)
    assert "set Interface sw1-p7 type=patch options:peer=otc-sw1-p7 ofport_request=7" in flat
    assert "set-controller br-of-sw1 tcp:127.0.0.1:6653" in flat
    # nothing to change for controllers already set
    cmds = convergence_commands(plan(), {}, {}, {"br-of-sw1": ["tcp:127.0.0.1:6653"]})
    assert not any(c[0] == "set-controller" for c in cmds)


def test_parse_dump_ports():
    text = """OFPST_PORT reply (OF1.3) (xid=0x2): 3 ports
  port  7: rx pkts=12, bytes=1120, drop=0, errs=0, frame=0, over=0, crc=0
           tx pkts=11, bytes=1078, drop=0, errs=0, coll=0
           duration=16.069s
  port LOCAL: rx pkts=0, bytes=0, drop=0, errs=0, frame=0, over=0, crc=0
           tx pkts=0, bytes=0, drop=5, errs=0, coll=0
  port  10: rx pkts=3, bytes=294, drop=?, errs=?, frame=?, over=?, crc=?
           tx pkts=?, bytes=?, drop=?, errs=?, coll=?
"""
    assert parse_dump_ports(text) == {
        7: {"rx_packets": 12, "rx_bytes": 1120, "tx_packets": 11, "tx_bytes": 1078},
        10: {"rx_packets": 3, "rx_bytes": 294, "tx_packets": 0, "tx_bytes": 0}}


def test_qinq_port_pushes_the_stag_with_the_switch_tpid_and_needs_vlan_limit_2():
    sp = plan().switches[0]
    q = SwitchPlan(sp.name, sp.bridge, sp.datapath_id, sp.protocols, sp.controllers,
                   (sp.ports[0], PortPlan("Fa0/10", 10, 110, "Gi0/1", "harmless-sw1-p10", qinq=True)), sp.trunks,
                   stag_tpid=0x88A8)
    lines = [f.to_ofctl() for f in translator_flows(Plan((q,)))]
    assert "in_port=1900,dl_vlan=110,actions=pop_vlan,output:1010" in lines[2]
    assert lines[3].endswith("in_port=1010,actions=push_vlan:0x88a8,set_field:4206->vlan_vid,output:1900")
    assert lines[1].endswith("actions=push_vlan:0x8100,set_field:4203->vlan_vid,output:1900")   # plain port
    # packet fate: the S-tag (VID 110) comes off, the customer's C-tag 7 reaches br-of and comes back under a new
    # S-tag with the switch's TPID
    f = hairpin(Plan((q,))).fate("br-otc", 1900, vlans=((0x88A8, 110), (0x8100, 7)))
    assert f.on("br-otc", 1900)["vlans"] == ((0x8100, 107), (0x8100, 7))      # port 7 is a plain (802.1Q) port
    f = hairpin(Plan((q,))).fate("br-otc", 1900, vlans=((0x8100, 107), (0x8100, 7)))
    assert f.on("br-otc", 1900)["vlans"] == ((0x88A8, 110), (0x8100, 7))
    cmds = convergence_commands(Plan((q,)), {}, {}, {})
    assert ["set", "Open_vSwitch", ".", "other_config:vlan-limit=2"] in cmds
    assert ["set", "Open_vSwitch", ".", "other_config:vlan-limit=2"] not in convergence_commands(plan(), {}, {}, {})


# ----------------------------------------------------------------------------- link-local protocols (issue #21)
TUNNEL = "01:00:0c:cd:cd:d0"


def l2pt_plan(l2pt=("lldp",), mac=TUNNEL, qinq=False, qos=None):
    return Plan((SwitchPlan("sw1", "br-of-sw1", f"{1:016x}", ("OpenFlow13",), (), (
        PortPlan("Fa0/7", 7, 107, "Gi0/1", "harmless-sw1-p7", qinq=qinq, l2pt=tuple(l2pt), qos=qos),
        PortPlan("Fa0/10", 10, 110, "Gi0/1", "harmless-sw1-p10")),
        (TrunkPlan("Gi0/1", "eth1", "system", (), (107, 110)),), l2pt_mac=mac),))


def brof_echo(p: Plan) -> FakeOFNetwork:
    """br-otc from the exact text HARMLESS writes; br-of sends what port 7 receives back out of port 7 (OFPP_IN_PORT,
    as a controller's packet-out would) and nothing else: the test sees the frame br-of got and what the trunk gets."""
    switches = {"br-otc": FakeOFTable(name="br-otc").add_ofctl("\n".join(f.to_ofctl() for f in translator_flows(p))),
                "br-of-sw1": FakeOFTable([Flow(1, of.match(in_port=7), (of.Output(0xFFFFFFF8),))], "br-of-sw1")}
    return FakeOFNetwork(switches, [(("br-otc", 1007), ("br-of-sw1", 7)), (("br-otc", 1010), ("br-of-sw1", 10))])


@pytest.mark.parametrize("protos, eth_type, real", [
    (("lldp",), 0x88CC, "01:80:c2:00:00:0e"),
    (("lldp", "lacp"), 0x8809, "01:80:c2:00:00:02"),
    (("stp", "lldp"), 0x05FF, "01:80:c2:00:00:00"),
    (("cdp", "vtp"), 0x05FF, "01:00:0c:cc:cc:cc"),
])
def test_tunnelled_pdus_reach_br_of_with_their_real_destination_and_leave_tunnelled(protos, eth_type, real):
    net = brof_echo(l2pt_plan(protos))
    f = net.fate("br-otc", 1900, vlan_vid=of.vid_present(107), eth_dst=TUNNEL, eth_type=eth_type,
                 eth_src="02:00:00:00:00:07")
    hits = [(sw, fl.priority) for sw, _, fl in f.hits]
    assert hits == [("br-otc", 110), ("br-of-sw1", 1), ("br-otc", 110)]       # in and back out by the rewrite flows
    out = f.on("br-otc", 1900)
    assert out["eth_dst"] == TUNNEL and out["vlans"] == ((0x8100, 107),) and out["eth_src"] == "02:00:00:00:00:07"
    # what br-of itself was given: the real destination, untagged
    g = FakeOFNetwork({"br-otc": net.switches["br-otc"], "br-of-sw1": FakeOFTable(
        [Flow(1, of.match(in_port=7), (of.output_controller(),))], "br-of-sw1")},
        [(("br-otc", 1007), ("br-of-sw1", 7))]).fate("br-otc", 1900, vlan_vid=of.vid_present(107), eth_dst=TUNNEL,
                                                      eth_type=eth_type)
    seen = g.on("br-of-sw1", of.OFPP_CONTROLLER)
    assert seen["eth_dst"] == real and "vlans" not in seen


def test_only_tunnelled_ports_and_protocols_are_rewritten():
    net = brof_echo(l2pt_plan(("lldp",)))
    # port 10 tunnels nothing: a tunnel-MAC frame in its VLAN reaches br-of as it came (priority 100 flow)
    g = net.fate("br-otc", 1900, vlan_vid=of.vid_present(110), eth_dst=TUNNEL, eth_type=0x88CC)
    assert [fl.priority for sw, _, fl in g.hits if sw == "br-otc"][0] == 100
    # port 7 tunnels lldp only: an LLC frame with the tunnel MAC is not given a destination it cannot know
    h = net.fate("br-otc", 1900, vlan_vid=of.vid_present(107), eth_dst=TUNNEL, eth_type=0x05FF)
    assert [fl.priority for sw, _, fl in h.hits] == [100, 1, 100] and h.on("br-otc", 1900)["eth_dst"] == TUNNEL
    # ordinary traffic of port 7 is untouched both ways
    u = net.fate("br-otc", 1900, vlan_vid=of.vid_present(107), eth_dst="02:00:00:00:00:0a", eth_type=0x0800)
    assert u.on("br-otc", 1900)["eth_dst"] == "02:00:00:00:00:0a"
    assert [fl.priority for sw, _, fl in u.hits] == [100, 1, 100]


def test_a_switch_that_keeps_the_destination_needs_no_rewrite():
    """Arista's L2 protocol forwarding bridges the PDU with its own destination: no flow beyond the port's two."""
    assert translator_flows(l2pt_plan(("lldp",), mac=None)) == translator_flows(l2pt_plan(()))


def test_qinq_and_qos_ports_keep_their_stag_meter_and_queue_on_the_rewrite_flows():
    from harmless.qos.model import PortQos
    p = l2pt_plan(("lldp",), qinq=True, qos=PortQos(ingress_mbps=10, egress_mbps=20))
    p = Plan((SwitchPlan(**{**p.switches[0].__dict__, "stag_tpid": 0x88A8}),))
    lines = [f.to_ofctl() for f in translator_flows(p) if "priority=110" in f.to_ofctl()]
    assert lines == [
        f"cookie={OTC_COOKIE:#x},table=0,priority=110,in_port=1900,dl_vlan=107,dl_type=0x88cc,dl_dst={TUNNEL},"
        "actions=meter:1007,pop_vlan,set_field:01:80:c2:00:00:0e->eth_dst,output:1007",
        f"cookie={OTC_COOKIE:#x},table=0,priority=110,in_port=1007,dl_type=0x88cc,dl_dst=01:80:c2:00:00:0e,"
        f"actions=set_field:{TUNNEL}->eth_dst,set_queue:7,push_vlan:0x88a8,set_field:4203->vlan_vid,output:1900",
    ]
    # a customer-tagged LLDP frame (C-tag 5 under S-tag 107) keeps its C-tag through br-otc
    net = brof_echo(p)
    f = net.fate("br-otc", 1900, vlans=((0x88A8, 107), (0x8100, 5)), eth_dst=TUNNEL, eth_type=0x88CC)
    assert f.on("br-otc", 1900)["vlans"] == ((0x88A8, 107), (0x8100, 5)) and f.meters == [("br-otc", 1007)]


def test_l2pt_flows_refuse_protocols_the_ethertype_cannot_tell_apart():
    with pytest.raises(ValueError, match="stp and cdp"):
        translator_flows(l2pt_plan(("stp", "cdp")))
