"""Traffic templates of the paced generator (harmless.bench.traffic): frames parse, sizes/checksums are right,
and each workload's frames hit the rules the pipeline forwards to port B (or the ACL drop, when expected)."""
import ipaddress
import re

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Dot1Q, Ether

from harmless.bench import traffic as t
from harmless.bench import workloads as w


def _pkt(tpl):
    raw = tpl.header + bytes(tpl.frame_len - len(tpl.header))
    return Ether(raw)


@pytest.mark.parametrize("size", [64, 128, 256, 512, 1024, 1280, 1518])
@pytest.mark.parametrize("vid", [None, 107])
def test_frame_sizes_and_checksums(size, vid):
    tpl = t.frame(w.MAC_B, w.MAC_A, "198.18.0.1", "198.19.0.1", t.PROTO_TCP, 1234, 80, size, vid)
    assert tpl.frame_len == size - 4 + (4 if vid else 0)      # FCS not sent; the trunk adds the 802.1Q tag
    p = _pkt(tpl)
    assert (Dot1Q in p) == (vid is not None)
    if vid:
        assert p[Dot1Q].vlan == vid
    ip = p[IP]
    assert ip.len == size - 4 - 14 and ip.id == 0
    recomputed = IP(bytes(ip)[:20])
    del recomputed.chksum
    assert IP(bytes(recomputed))[IP].chksum == ip.chksum                 # scapy computes the same checksum
    assert t.checksum(bytes(ip)[:20]) == 0                               # a valid header sums to 0


def test_tcp_checksum_is_valid():
    tpl = t.frame(w.MAC_B, w.MAC_A, "198.18.0.1", "198.19.0.1", t.PROTO_TCP, 1234, 80, 128)
    ip = _pkt(tpl)[IP]
    seg = bytes(ip[TCP])
    pseudo = ipaddress.IPv4Address(ip.src).packed + ipaddress.IPv4Address(ip.dst).packed + bytes([0, 6]) + \
        len(seg).to_bytes(2, "big")
    assert t.checksum(pseudo + seg) == 0


def test_too_small_frames_rejected():
    with pytest.raises(ValueError):
        t.frame(w.MAC_B, w.MAC_A, "1.1.1.1", "2.2.2.2", t.PROTO_UDP, 1, 2, 60)


def _rules(wl, port):
    return [f for f in wl.flows if f"output:{port}" in f]


def test_l2_traffic_uses_n_destinations_behind_port_b():
    wl = w.l2_workload(1000)
    tpls = t.traffic_for(wl, 1000, 64)
    dsts = {_pkt(x).dst for x in tpls}
    assert len(dsts) == 999                                  # 1000 MAC rules: 999 hosts behind B, MAC_A behind A
    to_b = {re.search(r"dl_dst=([0-9a-f:]+)", f).group(1) for f in _rules(wl, 10)}
    assert dsts <= to_b
    assert len({(_pkt(x)[IP].src, _pkt(x)[IP].dst) for x in tpls}) == 1000   # distinct hashes per flow


@pytest.mark.parametrize("n_routes", [10, 100, 3000])
def test_l3_traffic_hits_routes_to_port_b(n_routes):
    wl = w.l3_workload(n_routes)
    groups_b = {int(re.search(r"group_id=(\d+)", g).group(1)) for g in wl.groups if "output:10" in g}
    routes = []
    for f in wl.flows:
        m = re.search(r"priority=(\d+),ip,nw_dst=([0-9./]+),actions=group:(\d+)", f)
        if m:
            routes.append((int(m.group(1)), ipaddress.ip_network(m.group(2)), int(m.group(3))))
    tpls = t.traffic_for(wl, 300, 64)
    assert len(tpls) == 300
    for x in tpls:
        dst = ipaddress.ip_address(_pkt(x)[IP].dst)
        best = max((r for r in routes if dst in r[1]), key=lambda r: r[0])     # longest prefix
        assert best[2] in groups_b


def test_lb_traffic_70_percent_web_rest_filtered():
    wl = w.lb_acl_workload(10)
    tpls = t.traffic_for(wl, 1000, 64)
    web = [x for x in tpls if x.expect]
    assert len(web) == 700
    for x in tpls:
        p = _pkt(x)
        is_web = TCP in p and p[TCP].dport == 80 and p[IP].dst == wl.params["vip"]
        assert is_web == x.expect
    assert len({_pkt(x)[IP].src for x in web}) > 100                         # spread over the backends' hash


def test_gateway_traffic_from_every_user():
    wl = w.gateway_workload(10, 20)
    tpls = t.traffic_for(wl, 400, 64)
    srcs = {_pkt(x)[IP].src for x in tpls}
    users = {re.search(r"nw_src=([0-9.]+)", f).group(1) for f in wl.flows if "nw_src=" in f}
    assert srcs == users and len(users) == 200
    assert all(UDP in _pkt(x) for x in tpls)


def test_template_file(tmp_path):
    tpls = t.traffic_for(w.lb_acl_workload(1), 10, 64, vid=107)
    lines = t.write_templates(tmp_path / "x.txt", tpls).read_text().splitlines()
    assert lines[0].startswith("#") and len(lines) == 11
    exp, flen, hx = lines[1].split()
    assert exp == "1" and int(flen) == 64 and bytes.fromhex(hx) == tpls[0].header
    with pytest.raises(ValueError):
        t.traffic_for(w.port_workload(), 0, 64)
