"""Traffic matching each workload (pure): frame templates for the paced generator (:mod:`harmless.bench.hlbgen`).

Direction: the generator sends on port A (legacy port 7) and receives on port B (legacy port 10); every
template says whether the pipeline should forward it (``expect``), so intended drops (the load balancer's ACL)
are not counted as loss.

Frame sizes follow RFC 2544 §9 (64..1518 B including the 4-byte FCS, which the generator does not send). On the
HARMLESS trunk a frame carries the 802.1Q tag the legacy switch adds (VID 107 in, 110 out), i.e. it is 4 bytes
longer on the trunk than the same frame on the plain bridge's port: br-of sees exactly the frame plain sees.

Flows: ``n_flows`` distinct 5-tuples per workload, cycled in order (each template is one flow). Source and
destination IPs vary with the flow so that OVS's packet hash (vhost ports have no NIC RSS hash; OVS hashes the
5-tuple) differs per flow, as it does for real traffic (see FINDINGS §2 on EMC thrashing when it does not).

Template file format (read by ``bench/gen/hlbgen.c``): one line per frame, ``<expect 0|1> <frame_len> <hex>``,
where hex is the header (Ethernet [+ 802.1Q] + IPv4 + UDP/TCP) and the rest of the frame is zero. The IPv4
identification is 0 (the generator writes a sequence number there and patches the checksum).
"""
from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass
from pathlib import Path

from harmless.bench.workloads import MAC_A, MAC_B, Workload, _prefixes, mac_n

ETH_IPV4, ETH_VLAN = 0x0800, 0x8100
PROTO_TCP, PROTO_UDP = 6, 17
FCS = 4


@dataclass(frozen=True)
class Template:
    """One frame: ``header`` bytes (up to the end of the L4 header), ``frame_len`` without FCS."""

    header: bytes
    frame_len: int
    expect: bool = True

    def line(self) -> str:
        return f"{int(self.expect)} {self.frame_len} {self.header.hex()}"


def _mac(m: str) -> bytes:
    return bytes(int(x, 16) for x in m.split(":"))


def checksum(data: bytes) -> int:
    """Internet checksum (RFC 1071) of ``data``."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(dst: str, src: str, ip_src: str, ip_dst: str, proto: int, sport: int, dport: int, frame_size: int,
          vid: int | None = None, ttl: int = 64) -> Template:
    """An Ethernet/IPv4/UDP-or-TCP frame of ``frame_size`` bytes (with FCS; +4 when tagged with ``vid``).

    Raises:
        ValueError: frame_size below 64 or too small for the headers.
    """
    if frame_size < 64:
        raise ValueError("frame_size must be >= 64 (RFC 2544 §9)")
    flen = frame_size - FCS + (4 if vid is not None else 0)
    eth = _mac(dst) + _mac(src)
    eth += struct.pack("!HH", ETH_VLAN, vid & 0xFFF) if vid is not None else b""
    eth += struct.pack("!H", ETH_IPV4)
    l4len = 20 if proto == PROTO_TCP else 8
    ip_len = flen - len(eth)
    if ip_len < 20 + l4len:
        raise ValueError(f"{frame_size} B is too small for these headers")
    src_b, dst_b = ipaddress.IPv4Address(ip_src).packed, ipaddress.IPv4Address(ip_dst).packed
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0, ttl, proto, 0, src_b, dst_b)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    seg_len = ip_len - 20
    pseudo = src_b + dst_b + struct.pack("!BBH", 0, proto, seg_len)
    if proto == PROTO_TCP:
        tcp = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 5 << 4, 0x02, 65535, 0, 0)
        l4 = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]   # payload is zeros: no effect
    else:
        l4 = struct.pack("!HHHH", sport, dport, seg_len, 0)                      # UDP checksum 0 = none (IPv4)
    return Template(eth + ip + l4, flen)


def _ip(base: str, k: int) -> str:
    return str(ipaddress.IPv4Address(base) + k)


def l2_traffic(wl: Workload, n_flows: int, frame_size: int, vid: int | None = None) -> list[Template]:
    """One flow per destination MAC behind port B (``MAC_B`` and the workload's extra MACs), up to ``n_flows``."""
    n_macs = wl.n_rules
    dsts = [MAC_B] + [mac_n(i) for i in range(max(n_macs - 2, 0))]
    out = []
    for k in range(n_flows):
        out.append(frame(dsts[k % len(dsts)], MAC_A, _ip("198.18.0.1", k % 65000), _ip("198.19.0.1", k % 65000),
                         PROTO_UDP, 1024 + k % 60000, 1024, frame_size, vid))
    return out


def l3_traffic(wl: Workload, n_flows: int, frame_size: int, vid: int | None = None) -> list[Template]:
    """Flows to hosts whose longest-prefix match is a route with its next hop on port B (round-robin over those
    routes; a host inside a more specific route towards port A is skipped)."""
    nh = wl.params.get("n_nexthops", 4)
    host_b = ipaddress.ip_network(wl.params.get("ip_b", "198.19.0.1") + "/24", strict=False)
    routes = {host_b: True}
    for i, p in enumerate(_prefixes(max(wl.n_rules - 2, 0))):
        routes[p] = (i % nh) % 2 == 0
    lens = sorted({p.prefixlen for p in routes}, reverse=True)

    def to_b(addr: ipaddress.IPv4Address) -> bool:
        for plen in lens:                                        # longest prefix first
            hit = routes.get(ipaddress.ip_network(f"{addr}/{plen}", strict=False))
            if hit is not None:
                return hit
        return False

    dests = [p for p, b in routes.items() if b]
    out: list[Template] = []
    k = 0
    while len(out) < n_flows and k < 20 * n_flows:
        net = dests[k % len(dests)]
        host = net.network_address + 1 + (k // len(dests)) % max(net.num_addresses - 2, 1)
        k += 1
        if not to_b(host):
            continue
        j = len(out)
        out.append(frame(MAC_B, MAC_A, _ip("198.18.0.2", j % 250), str(host), PROTO_UDP, 1024 + j % 60000, 53,
                         frame_size, vid))
    return out


def lb_acl_traffic(wl: Workload, n_flows: int, frame_size: int, vid: int | None = None) -> list[Template]:
    """``web_share`` (70 %) TCP/80 to the VIP (balanced over the backends by the select group), the rest
    TCP/22 and UDP/53 to the VIP, which the ACL drops (``expect=False``). Interleaved in blocks of 10."""
    vip = wl.params.get("vip", "198.19.0.100")
    web = round(10 * wl.params.get("web_share", 0.7))
    out = []
    for k in range(n_flows):
        src, sport = _ip("198.18.0.1", k % 4000), 1024 + (k * 7) % 60000
        if k % 10 < web:
            out.append(frame(MAC_B, MAC_A, src, vip, PROTO_TCP, sport, 80, frame_size, vid))
        else:
            t = frame(MAC_B, MAC_A, src, vip, PROTO_TCP if k % 2 else PROTO_UDP, sport, 22 if k % 2 else 53,
                      frame_size, vid)
            out.append(Template(t.header, t.frame_len, expect=False))
    return out


def gateway_traffic(wl: Workload, n_flows: int, frame_size: int, vid: int | None = None) -> list[Template]:
    """Upstream UDP from every user (10.<ce>.0.<10+u>) to the Internet, several source ports per user."""
    users = [f"10.{ce + 1}.0.{u + 10}" for ce in range(wl.params.get("n_ces", 10))
             for u in range(wl.params.get("users_per_ce", 20))]
    return [frame(MAC_B, MAC_A, users[k % len(users)], _ip("198.51.100.1", k % 200), PROTO_UDP,
                  5000 + k // len(users), 443, frame_size, vid) for k in range(n_flows)]


def port_traffic(wl: Workload, n_flows: int, frame_size: int, vid: int | None = None) -> list[Template]:
    return l2_traffic(wl, n_flows, frame_size, vid)


TRAFFIC = {"l2": l2_traffic, "l3": l3_traffic, "lb-acl": lb_acl_traffic, "gateway": gateway_traffic,
           "port": port_traffic}


def traffic_for(wl: Workload, n_flows: int, frame_size: int, vid: int | None = None) -> list[Template]:
    """Templates for ``wl`` (dispatch on ``wl.name``).

    Raises:
        ValueError: unknown workload or ``n_flows < 1``.
    """
    if n_flows < 1:
        raise ValueError("n_flows must be >= 1")
    try:
        return TRAFFIC[wl.name](wl, n_flows, frame_size, vid)
    except KeyError:
        raise ValueError(f"no traffic model for workload {wl.name!r}") from None


def write_templates(path: Path, templates: list[Template]) -> Path:
    """Write the generator's template file; returns ``path``."""
    path = Path(path)
    path.write_text("# expect frame_len header-hex (hlbgen templates v1)\n" +
                    "\n".join(t.line() for t in templates) + "\n")
    return path
