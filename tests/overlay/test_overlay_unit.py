"""Edge overlay without root: registry validation, host-based VID allocation, the flow table (packet fate through a
small fake table 0), proxy-ARP decisions, cookies."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from os_ken.lib.packet import arp, ethernet, packet

from harmless.errors import InputError
from harmless.openflow import OFPP_CONTROLLER, output_port
from harmless.pipelines.edge_overlay import flows as fl
from harmless.pipelines.edge_overlay.controller import answer_arp
from harmless.pipelines.edge_overlay.model import load_registry, parse_registry
from harmless.pipelines.edge_overlay.vids import VID_FIRST, VidAllocator, VidExhausted
from tests.lib.fakeoftable import FakeDatapath, FakeOFTable

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "overlay.yaml"
SMAC = {"s1": "02:5e:00:00:00:01", "s2": "02:5e:00:00:00:02", "s3": "02:5e:00:00:00:03"}


@pytest.fixture
def reg():
    return load_registry(EXAMPLE)


def view(reg, vids=None):
    ports = reg.ports()
    where = {v.name: (v.server, ports[v.name]) for _, v in reg.vms()}
    if vids is None:
        a = {}
        for _, v in reg.vms():
            m = a.setdefault(v.server, {})
            m[v.name] = VID_FIRST + len(m)
        vids = a
    return fl.View(reg, where, vids, SMAC)


def fate(flows, pkt: dict) -> tuple[dict | None, list]:
    """Run ``pkt`` (OXM field -> value; ``vlan_vid`` absent = untagged) through table 0 of a fake switch
    (:class:`tests.lib.fakeoftable.FakeOFTable`) programmed with the FLOW_MODs the controller sends for ``flows``:
    (packet as it left, [output ports / "controller"]); (None, []) when dropped."""
    dp = FakeDatapath()
    f = FakeOFTable().apply_ofmsgs([fl_.to_flowmod(dp) for fl_ in flows]).fate(**pkt)
    assert f.miss is None, "no flow matched (no table-miss entry?)"
    out = ["controller" if p == OFPP_CONTROLLER else p for p in f.ports]
    return (f.outputs[-1][1] if out else None), out


# ----------------------------------------------------------------------------- registry
def test_example_registry_has_overlapping_tenants(reg):
    assert len(reg.servers) >= 3 and len(reg.tenants) >= 2 and len(reg.vms()) >= 6
    red = {v.address for v in reg.tenants[0].vms}
    blue = {v.address for v in reg.tenants[1].vms}
    assert red & blue, "the example must have overlapping IPs across tenants"


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["tenants"][0]["vms"][1].update(ip="10.0.0.1/24"), "unique within a tenant"),
    (lambda d: d["tenants"][1]["vms"][0].update(mac="52:54:00:11:00:01"), "already VM r1's"),
    (lambda d: d["tenants"][0]["vms"][0].update(server="s9"), "not in servers"),
    (lambda d: d["tenants"][0]["vms"][0].update(mac="01:00:5e:00:00:01"), "unicast MAC"),
    (lambda d: d["tenants"][0]["vms"][0].update(ip="10.0.0.1"), "prefix"),
    (lambda d: d["tenants"][0]["vms"][0].update(port=1), "port 1 is the uplink"),
    (lambda d: d.update(harmless={"server": "s1"}), "needs port"),
    (lambda d: d.update(name="toolong"), "1-4 lowercase"),
])
def test_bad_registry_names_the_field(mutate, field):
    d = yaml.safe_load(EXAMPLE.read_text())
    mutate(d)
    with pytest.raises(InputError) as e:
        parse_registry(d, "t.yaml")
    assert e.value.exit_code == 2 and field in str(e.value) and str(e.value).startswith("t.yaml")


def test_ports_auto_assigned_lowest_free(reg):
    ports = reg.ports()
    per = {}
    for _, v in reg.vms():
        per.setdefault(v.server, []).append(ports[v.name])
    for s, ps in per.items():
        assert sorted(ps) == list(range(2, 2 + len(ps))), s


# ----------------------------------------------------------------------------- VIDs
def test_vids_per_server_persisted_and_stable(tmp_path):
    a = VidAllocator(tmp_path / "vids.json")
    assert a.allocate("s1", "r1") == VID_FIRST and a.allocate("s1", "b1") == VID_FIRST + 1
    assert a.allocate("s2", "r2") == VID_FIRST          # host-based: the same VID on another server
    assert a.allocate("s1", "r1") == VID_FIRST          # idempotent
    b = VidAllocator(tmp_path / "vids.json")            # a restarted controller
    assert b.vids == {"s1": {"r1": 2, "b1": 3}, "s2": {"r2": 2}}
    assert b.release("s1", "r1") == 2 and b.allocate("s1", "x") == 2
    assert oct((tmp_path / "vids.json").stat().st_mode & 0o777) == "0o600"
    assert json.loads((tmp_path / "vids.json").read_text())["s1"] == {"b1": 3, "x": 2}


def test_vids_exhausted(tmp_path):
    a = VidAllocator(tmp_path / "v.json")
    a.vids = {"s1": {f"v{i}": i for i in range(2, 4095)}}
    with pytest.raises(VidExhausted):
        a.allocate("s1", "one-more")


# ----------------------------------------------------------------------------- flows: packet fate
def test_remote_unicast_fig6_then_fig5_restores_both_macs(reg):
    vw = view(reg)
    r1, r2 = reg.vm("r1")[1], reg.vm("r2")[1]
    ports = reg.ports()
    pkt = {"in_port": ports["r1"], "eth_src": r1.mac, "eth_dst": r2.mac, "eth_type": fl.ETH_IPV4,
           "ipv4_src": r1.address}
    wire, out = fate(fl.desired_flows(vw, "s1"), pkt)
    assert out == [1]
    assert wire["eth_src"] == SMAC["s1"] and wire["eth_dst"] == SMAC["s2"]
    assert wire["vlan_vid"] == fl.OFPVID_PRESENT | vw.vids["s2"]["r2"]     # the VID the DESTINATION server gave r2
    wire["in_port"] = 1
    got, out = fate(fl.desired_flows(vw, "s2"), wire)
    assert out == [ports["r2"]]
    assert got["eth_src"] == r1.mac and got["eth_dst"] == r2.mac and "vlan_vid" not in got


def test_isolation_no_flow_across_tenants(reg):
    vw = view(reg)
    r1, b2 = reg.vm("r1")[1], reg.vm("b2")[1]
    pkt = {"in_port": reg.ports()["r1"], "eth_src": r1.mac, "eth_dst": b2.mac, "eth_type": fl.ETH_IPV4}
    assert fate(fl.desired_flows(vw, "s1"), pkt) == (None, [])
    # on the wire, (VID, sender server MAC, sender IP) must name a same-tenant VM: red's r2 VID from s1 with
    # 10.0.0.4 (only blue's b4 has it, and b4 is not on s1) is dropped at s2
    wire = {"in_port": 1, "eth_src": SMAC["s1"], "eth_dst": SMAC["s2"], "eth_type": fl.ETH_IPV4,
            "ipv4_src": "10.0.0.4", "vlan_vid": fl.OFPVID_PRESENT | vw.vids["s2"]["r2"]}
    assert fate(fl.desired_flows(vw, "s2"), wire) == (None, [])


def test_flooded_frame_for_another_server_dropped(reg):
    vw = view(reg)
    r1, r2 = reg.vm("r1")[1], reg.vm("r2")[1]
    wire = {"in_port": 1, "eth_src": SMAC["s1"], "eth_dst": SMAC["s2"], "eth_type": fl.ETH_IPV4,
            "ipv4_src": r1.address, "vlan_vid": fl.OFPVID_PRESENT | vw.vids["s2"]["r2"]}
    assert fate(fl.desired_flows(vw, "s3"), wire) == (None, [])     # s3 may own the same VID: dst MAC differs
    assert r2.server == "s2"


def test_arp_goes_to_controller_and_local_delivery(reg):
    vw = view(reg)
    ports = reg.ports()
    b2, b4 = reg.vm("b2")[1], reg.vm("b4")[1]
    assert fate(fl.desired_flows(vw, "s2"), {"in_port": ports["b2"], "eth_type": fl.ETH_ARP,
                                            "eth_src": b2.mac, "eth_dst": "ff:ff:ff:ff:ff:ff"})[1] == ["controller"]
    got, out = fate(fl.desired_flows(vw, "s2"), {"in_port": ports["b2"], "eth_src": b2.mac, "eth_dst": b4.mac,
                                                "eth_type": fl.ETH_IPV4})
    assert out == [ports["b4"]] and got["eth_dst"] == b4.mac and "vlan_vid" not in got


def test_cookies_unique_and_prefixed(reg):
    for s in reg.servers:
        fs = fl.desired_flows(view(reg), s)
        cookies = [f.cookie for f in fs]
        assert len(set(cookies)) == len(cookies)
        assert all(c & fl.COOKIE_MASK == fl.COOKIE_BASE for c in cookies)


def test_moved_vm_changes_remote_flows(reg):
    vw = view(reg)
    before = {f.cookie for f in fl.desired_flows(vw, "s1")}
    where = dict(vw.where)
    where["r2"] = ("s3", 9)
    vids = {k: dict(v) for k, v in vw.vids.items()}
    vids["s2"].pop("r2")
    vids["s3"]["r2"] = 4
    after = fl.desired_flows(fl.View(reg, where, vids, SMAC), "s1")
    r1, r2 = reg.vm("r1")[1], reg.vm("r2")[1]
    wire, out = fate(after, {"in_port": reg.ports()["r1"], "eth_src": r1.mac, "eth_dst": r2.mac,
                             "eth_type": fl.ETH_IPV4})
    assert out == [1] and wire["eth_dst"] == SMAC["s3"] and wire["vlan_vid"] == fl.OFPVID_PRESENT | 4
    assert {f.cookie for f in after} != before


def test_to_ofctl_text(reg):
    f = next(f for f in fl.desired_flows(view(reg), "s1") if output_port(1) in f.actions)
    t = f.to_ofctl()
    # the one ovs-ofctl rendering (harmless.openflow) writes cookie before table: the same three leading fields
    assert sorted(t.split(",")[:3]) == sorted(["table=0", f"cookie=0x{f.cookie:016x}", "priority=200"])
    assert "push_vlan:0x8100" in t and "->vlan_vid" in t and t.endswith("output:1")


def test_vxlan_comparison_flows_from_their_ofctl_text(reg):
    """The VXLAN lab's table (written as ovs-ofctl text): a remote same-tenant VM is reached through the tunnel port
    with the tenant's VNI, a frame from the tunnel with that VNI reaches the VM, ARP broadcasts stay in the tenant."""
    ports = reg.ports()
    where = {v.name: (v.server, ports[v.name]) for _, v in reg.vms()}
    vx = {"s2": 101, "s3": 102}
    vni = {t.name: 1000 + i for i, t in enumerate(reg.tenants)}
    t = FakeOFTable().add_ofctl("\n".join(f.to_ofctl() for f in fl.vxlan_flows(reg, where, "s1", vx, vni)))
    (tr, r1), (_, r2) = reg.vm("r1"), reg.vm("r2")
    f = t.fate(ports["r1"], eth_src=r1.mac, eth_dst=r2.mac)
    assert f.ports == [101] and f.on(101)["tunnel_id"] == vni[tr]
    assert t.fate(101, tunnel_id=vni[tr], eth_dst=r1.mac).ports == [ports["r1"]]
    assert t.fate(101, tunnel_id=vni[tr] + 1, eth_dst=r1.mac).dropped         # another tenant's VNI
    b = t.fate(ports["r1"], eth_src=r1.mac, eth_dst="ff:ff:ff:ff:ff:ff")
    assert b.ports and set(b.ports) <= {101, 102} | {p for _, (s, p) in where.items() if s == "s1"}
    assert all(out.get("tunnel_id") == vni[tr] for p, out in b.outputs if p in (101, 102))


# ----------------------------------------------------------------------------- proxy-ARP
def _arp_req(src_mac, src_ip, dst_ip):
    p = packet.Packet()
    p.add_protocol(ethernet.ethernet(dst="ff:ff:ff:ff:ff:ff", src=src_mac, ethertype=0x0806))
    p.add_protocol(arp.arp(opcode=arp.ARP_REQUEST, src_mac=src_mac, src_ip=src_ip, dst_mac="00:00:00:00:00:00",
                           dst_ip=dst_ip))
    p.serialize()
    return bytes(p.data)


def test_proxy_arp_answers_within_tenant_only(reg):
    vw = view(reg)
    r1 = reg.vm("r1")[1]
    port = vw.where["r1"][1]
    reply, why = answer_arp(reg, vw.where, "s1", port, _arp_req(r1.mac, r1.address, "10.0.0.2"))
    a = packet.Packet(reply).get_protocol(arp.arp)
    assert a.opcode == arp.ARP_REPLY and a.src_mac == reg.vm("r2")[1].mac and a.dst_mac == r1.mac
    # 10.0.0.4 exists only in blue: no answer for red
    assert answer_arp(reg, vw.where, "s1", port, _arp_req(r1.mac, r1.address, "10.0.0.4")) == \
        (None, "target not in tenant")
    # spoofed sender (blue's MAC on red's port)
    assert answer_arp(reg, vw.where, "s1", port, _arp_req(reg.vm("b1")[1].mac, r1.address, "10.0.0.2"))[1] == \
        "spoofed sender"
    # a target that is not running (no location) gets no answer
    where = {k: v for k, v in vw.where.items() if k != "r2"}
    assert answer_arp(reg, where, "s1", port, _arp_req(r1.mac, r1.address, "10.0.0.2"))[0] is None


# ----------------------------------------------------------------------------- CLI (no root needed)
def test_cli_dry_run_and_bad_input(tmp_path):
    from click.testing import CliRunner

    from harmless.cli import main
    r = CliRunner().invoke(main, ["overlay", "up", "-t", str(EXAMPLE), "--dry-run", "--json"])
    assert r.exit_code == 0, r.output
    plan = json.loads(r.output.strip().splitlines()[-1])
    assert plan["dry_run"] and len(plan["vms"]) == 7 and {v["port"] for v in plan["vms"]} == {2, 3, 4}
    bad = tmp_path / "bad.yaml"
    d = yaml.safe_load(EXAMPLE.read_text())
    d["tenants"][0]["vms"][0]["mac"] = "zz"
    bad.write_text(yaml.safe_dump(d))
    r = CliRunner().invoke(main, ["overlay", "up", "-t", str(bad), "--dry-run"])
    assert r.exit_code == 2
    assert f"{bad}: tenants.0.vms.0.mac" in r.output and "unicast MAC" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = CliRunner().invoke(main, ["overlay", "up", "-t", str(tmp_path / "missing.yaml"), "--dry-run"])
    assert r.exit_code == 2 and "file not found" in r.output
