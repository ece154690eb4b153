"""OVS semantics of the translator and br-of: packet fate with ``ofproto/trace`` on a private OVS.

Each test module gets its own network namespace and OVS instance (unique names), torn down even on failure.
"""
import re
import subprocess
import uuid

import pytest

from harmless import openflow as of
from harmless.errors import OvsError
from harmless.otc import bridges, flows
from harmless.ovs import Ovs
from harmless.plan import Plan, PortPlan, SwitchPlan, TrunkPlan
from tests.conftest import require_root_ovs

TRUNK = "trk0"


def make_plan(ports=((7, 107), (10, 110)), controllers=()):
    return Plan((SwitchPlan("sw1", "br-of-sw1", "00000000000000aa", ("OpenFlow13",), tuple(controllers),
                            tuple(PortPlan(f"FastEthernet0/{n}", n, v, "GigabitEthernet0/1", f"harmless-sw1-p{n}")
                                  for n, v in ports),
                            (TrunkPlan("GigabitEthernet0/1", TRUNK, "system", (), tuple(v for _, v in ports)),)),))


@pytest.fixture(scope="module")
def ovs(tmp_path_factory):
    require_root_ovs()
    ns = f"hlt-{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    o = Ovs(tmp_path_factory.mktemp("ovs"), netns=ns)
    try:
        subprocess.run(["ip", "-n", ns, "link", "add", TRUNK, "type", "veth", "peer", "name", "trk0-peer"], check=True)
        for dev in (TRUNK, "trk0-peer"):
            subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
        o.start()
        yield o
    finally:
        try:
            o.stop()
        finally:
            subprocess.run(["ip", "netns", "del", ns])


def trace(ovs, bridge, flow):
    out = ovs.appctl("ofproto/trace", bridge, flow)
    return out, out.split("Datapath actions:")[1].strip().splitlines()[0]


def frame(vid=None, src=7, dst=10):
    f = f"in_port={flows.trunk_ofport(1, 0)},dl_src=02:00:00:00:00:{src:02x},dl_dst=02:00:00:00:00:{dst:02x}"
    return f + (f",dl_vlan={vid}" if vid is not None else "") + ",dl_type=0x0800,nw_src=198.18.0.7,nw_dst=198.18.0.10"


def trunk_dp_port(ovs):
    """Datapath port number of the trunk (what 'Datapath actions' prints)."""
    out = ovs.appctl("dpif/show")
    return re.search(rf"{TRUNK} \d+/(\d+)", out).group(1)


def test_hairpin_port7_to_port10(ovs):
    p = make_plan()
    bridges.apply(ovs, p)
    assert bridges.verify(ovs, p) == []
    # the controller's pipeline on br-of (here installed by hand): port 7 -> port 10
    ovs.ofctl("-O", "OpenFlow13", "add-flow", "br-of-sw1", "in_port=7,actions=output:10")
    out, actions = trace(ovs, "br-otc", frame(vid=107))
    # trunk (VID 107) -> pop -> br-of port 7 -> port 10 -> push VID 110 -> trunk
    assert 'bridge("br-of-sw1")' in out and "in_port=7" in out
    assert actions == f"pop_vlan,push_vlan(vid=110,pcp=0),{trunk_dp_port(ovs)}"


def test_brof_sees_untagged_frames_on_the_legacy_port_number(ovs):
    p = make_plan()
    bridges.apply(ovs, p)
    ofports = {r["name"]: r["ofport"] for r in ovs.vsctl_json("Interface", columns=["name", "ofport"])}
    assert ofports["sw1-p7"] == 7 and ofports["sw1-p10"] == 10
    ovs.ofctl("-O", "OpenFlow13", "replace-flows", "br-of-sw1", "-",
              stdin="priority=10,in_port=7,vlan_tci=0x0000/0x1fff,actions=output:10\n")
    _, actions = trace(ovs, "br-otc", frame(vid=107))
    assert actions.endswith(trunk_dp_port(ovs))    # matched the untagged-only rule


def test_unknown_vid_and_untagged_trunk_frames_are_dropped(ovs):
    bridges.apply(ovs, make_plan())
    assert trace(ovs, "br-otc", frame(vid=999))[1] == "drop"
    assert trace(ovs, "br-otc", frame(vid=None))[1] == "drop"


def test_fail_secure_without_controller_flows_nothing_is_forwarded(ovs):
    p = make_plan(controllers=("tcp:127.0.0.1:1",))     # nobody listens there
    bridges.apply(ovs, p)
    ovs.ofctl("-O", "OpenFlow13", "del-flows", "br-of-sw1")
    brs = {r["name"]: r["fail_mode"] for r in ovs.vsctl_json("Bridge", columns=["name", "fail_mode"])}
    assert brs["br-of-sw1"] == "secure" and brs["br-otc"] == "secure"
    out, actions = trace(ovs, "br-otc", frame(vid=107))
    assert actions == "drop"           # never NORMAL: the controller going away does not make a learning switch
    assert "NORMAL" not in out


def test_apply_is_idempotent_and_repairs_after_vswitchd_restart(ovs):
    p = make_plan()
    bridges.apply(ovs, p)
    before = ovs.ofctl("-O", "OpenFlow14", "--no-stats", "dump-flows", "br-otc")
    uuid_before = ovs.vsctl("get", "Bridge", "br-of-sw1", "_uuid").strip()
    bridges.apply(ovs, p)
    assert ovs.ofctl("-O", "OpenFlow14", "--no-stats", "dump-flows", "br-otc") == before
    assert ovs.vsctl("get", "Bridge", "br-of-sw1", "_uuid").strip() == uuid_before
    ovs.stop_vswitchd(cleanup=False)
    ovs.start()
    assert bridges.verify(ovs, p)          # flows are gone after a restart
    bridges.apply(ovs, p)
    assert bridges.verify(ovs, p) == []
    assert "pop_vlan" in ovs.ofctl("-O", "OpenFlow14", "dump-flows", "br-otc")


def test_plan_change_removes_stale_ports_and_updates_flows(ovs):
    bridges.apply(ovs, make_plan(ports=((7, 107), (10, 110), (12, 112))))
    assert "sw1-p12" in ovs.vsctl("list-ports", "br-of-sw1")
    p = make_plan(ports=((7, 107), (10, 110)))
    bridges.apply(ovs, p)
    assert "sw1-p12" not in ovs.vsctl("list-ports", "br-of-sw1")
    assert "otc-sw1-p12" not in ovs.vsctl("list-ports", "br-otc")
    assert bridges.verify(ovs, p) == []
    assert trace(ovs, "br-otc", frame(vid=112))[1] == "drop"


def test_flow_bundle_is_all_or_nothing(ovs, monkeypatch):
    p = make_plan()
    bridges.apply(ovs, p)
    before = ovs.ofctl("-O", "OpenFlow14", "--no-stats", "dump-flows", "br-otc")
    good = flows.translator_flows(p)
    bad = good[:2] + [of.Flow(100, of.match(in_port=1900), (of.Output("NO_SUCH_PORT_NAME"),))]
    monkeypatch.setattr(bridges, "translator_flows", lambda plan: bad)
    with pytest.raises(OvsError):
        bridges.install_flows(ovs, p)
    assert ovs.ofctl("-O", "OpenFlow14", "--no-stats", "dump-flows", "br-otc") == before


def test_remove_deletes_bridges_only(ovs):
    bridges.apply(ovs, make_plan())
    bridges.remove(ovs, ["br-of-sw1"])
    assert ovs.vsctl("list-br").split() == []
    assert subprocess.run(["ip", "-n", ovs.netns, "link", "show", TRUNK], capture_output=True).returncode == 0


def qinq_plan(tpid):
    sp = make_plan().switches[0]
    ports = tuple(PortPlan(p.interface, p.ofport, p.vid, p.trunk, p.vlan_name, qinq=True) for p in sp.ports)
    return Plan((SwitchPlan(sp.name, sp.bridge, sp.datapath_id, sp.protocols, sp.controllers, ports, sp.trunks,
                            stag_tpid=tpid),))


def qinq_packet(stag_tpid: int, svid: int, cvid: int) -> str:
    """Hex of an Ethernet frame with an S-tag (``stag_tpid``, ``svid``) outside a C-tag (0x8100, ``cvid``), IPv4."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Dot1Q, Ether
    outer = Dot1Q(vlan=svid)
    pkt = Ether(src="02:00:00:00:00:07", dst="02:00:00:00:00:0a", type=stag_tpid) / outer / \
        Dot1Q(vlan=cvid) / IP(src="198.18.0.7", dst="198.18.0.10") / UDP(sport=1, dport=2)
    return bytes(pkt).hex()


@pytest.mark.parametrize("tpid", [0x88A8, 0x8100])
def test_qinq_port_passes_the_customer_tag_to_brof_untouched(ovs, tpid):
    p = qinq_plan(tpid)
    bridges.apply(ovs, p)
    assert bridges.verify(ovs, p) == []
    assert ovs.vsctl("get", "Open_vSwitch", ".", "other_config:vlan-limit").strip('"\n') == "2"
    # br-of forwards port 7 -> 10 only for customer VLAN 55; anything else (no C-tag, other C-tag) is dropped
    ovs.ofctl("-O", "OpenFlow13", "replace-flows", "br-of-sw1", "-",
              stdin="priority=10,in_port=7,dl_vlan=55,actions=output:10\npriority=0,actions=drop\n")
    trunk = flows.trunk_ofport(1, 0)
    out = ovs.appctl("ofproto/trace", "br-otc", f"in_port={trunk}", qinq_packet(tpid, 107, 55))
    actions = out.split("Datapath actions:")[1].strip().splitlines()[0]
    # outer tag 107 popped, br-of matched C-tag 55, outer tag 110 pushed with the switch's TPID, C-tag kept
    tp = "" if tpid == 0x8100 else f"tpid=0x{tpid:04x},"
    assert actions == f"pop_vlan,push_vlan({tp}vid=110,pcp=0),{trunk_dp_port(ovs)}"
    assert "dl_vlan=55" in out.split('bridge("br-of-sw1")')[1]
    other = ovs.appctl("ofproto/trace", "br-otc", f"in_port={trunk}", qinq_packet(tpid, 107, 56))
    assert other.split("Datapath actions:")[1].strip().splitlines()[0] == "drop"


# ----------------------------------------------------------------------------- link-local protocols (issue #21)
TUNNEL = "01:00:0c:cd:cd:d0"


def l2pt_plan():
    """Port 7 tunnels LLDP and STP through the legacy switch (tunnel MAC on the trunk), port 10 CDP, port 11 none."""
    ports = ((7, 107, ("lldp", "stp")), (10, 110, ("cdp",)), (11, 111, ()))
    return Plan((SwitchPlan("sw1", "br-of-sw1", "00000000000000aa", ("OpenFlow13",), (),
                            tuple(PortPlan(f"FastEthernet0/{n}", n, v, "GigabitEthernet0/1", f"harmless-sw1-p{n}",
                                           l2pt=t) for n, v, t in ports),
                            (TrunkPlan("GigabitEthernet0/1", TRUNK, "system", (), (107, 110, 111)),),
                            l2pt_mac=TUNNEL),))


def tunnelled(vid: int, kind: str) -> str:
    """A real tunnelled PDU as the legacy switch puts it on the trunk (hex): destination rewritten, rest intact."""
    from scapy.all import LLC, SNAP, Dot1Q, Ether, Raw
    llc = {"stp": LLC(dsap=0x42, ssap=0x42, ctrl=3) / Raw(bytes(35)),              # 802.1D BPDU
           "cdp": LLC(dsap=0xAA, ssap=0xAA, ctrl=3) / SNAP(OUI=0x00000C, code=0x2000) / Raw(bytes(40))}
    if kind == "lldp":
        tag = Dot1Q(vlan=vid, type=0x88CC) / Raw(b"\x02\x07\x04" + bytes(40))
    else:                                   # 802.3: the tag is followed by a length, not an EtherType
        tag = Dot1Q(vlan=vid, type=len(llc[kind])) / llc[kind]
    return bytes(Ether(src="02:00:00:00:00:07", dst=TUNNEL) / tag).hex()


@pytest.mark.parametrize("vid, kind, real", [(107, "lldp", "01:80:c2:00:00:0e"), (107, "stp", "01:80:c2:00:00:00"),
                                             (110, "cdp", "01:00:0c:cc:cc:cc")])
def test_tunnelled_pdus_get_their_destination_back_on_the_way_in(ovs, vid, kind, real):
    """OVS classifies the real frames by EtherType (LLDP 0x88cc; an STP BPDU and a CDP SNAP frame both 0x05ff) and
    br-otc restores each port's destination before br-of, which forwards it to port 11 (no tunnelling there)."""
    p = l2pt_plan()
    bridges.apply(ovs, p)
    assert bridges.verify(ovs, p) == []
    port = {107: 7, 110: 10}[vid]
    ovs.ofctl("-O", "OpenFlow13", "replace-flows", "br-of-sw1", "-",
              stdin=f"priority=10,in_port={port},dl_dst={real},actions=output:11\npriority=0,actions=drop\n")
    out = ovs.appctl("ofproto/trace", "br-otc", f"in_port={flows.trunk_ofport(1, 0)}", tunnelled(vid, kind))
    actions = out.split("Datapath actions:")[1].strip().splitlines()[0]
    assert actions == f"set(eth(dst={real})),pop_vlan,push_vlan(vid=111,pcp=0),{trunk_dp_port(ovs)}", out


def test_pdus_of_brof_leave_with_the_tunnel_mac_only_on_tunnelling_ports(ovs):
    p = l2pt_plan()
    bridges.apply(ovs, p)
    ovs.ofctl("-O", "OpenFlow13", "replace-flows", "br-of-sw1", "-",
              stdin="priority=10,in_port=11,actions=output:7,output:10\npriority=0,actions=drop\n")
    lldp = "in_port=11,dl_src=02:00:00:00:01:99,dl_dst=01:80:c2:00:00:0e,dl_type=0x88cc"
    out = ovs.appctl("ofproto/trace", "br-of-sw1", lldp)
    actions = out.split("Datapath actions:")[1].strip().splitlines()[0]
    dp = trunk_dp_port(ovs)
    # to port 7 (tunnels lldp): tunnel MAC and VID 107; to port 10 (cdp only): the real destination and VID 110
    assert actions == (f"set(eth(dst={TUNNEL})),push_vlan(vid=107,pcp=0),{dp},"
                       f"set(eth(dst=01:80:c2:00:00:0e)),pop_vlan,push_vlan(vid=110,pcp=0),{dp}"), out
