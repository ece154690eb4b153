"""The paper's use cases as OpenFlow pipelines for br-of, plus the MACs the generator must use (pure).

Each builder returns a :class:`Workload`: ``ovs-ofctl`` flow lines (OpenFlow 1.3) for the pipeline bridge whose
two traffic ports are ``port_a`` and ``port_b`` (legacy ports 7 and 10 by default), and the two hosts' MACs.

Traffic model of the benchmark: the generator loops every frame back with ``5tswap`` (source and destination
MACs, IPs and L4 ports exchanged), so a frame crosses the pipeline A->B, then B->A, and so on. Every pipeline therefore forwards
``dl_dst=mac_b`` to ``port_b`` and ``dl_dst=mac_a`` to ``port_a`` on its hot path; the other ``n`` rules are
there to make the tables as large as the use case says (lookups in OVS's classifier/megaflow cache get more
expensive with more subtables, not with more rules in one subtable — which is why the builders vary masks too).
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

MAC_A = "02:00:00:00:00:07"
MAC_B = "02:00:00:00:00:0a"


@dataclass(frozen=True)
class Workload:
    """One pipeline.

    Attributes:
        name: ``l2``, ``l3``, ``lb-acl``, ``gateway`` or ``port``.
        flows: ovs-ofctl lines for ``replace-flows`` (OpenFlow 1.3).
        groups: ovs-ofctl group lines (``add-groups``), may be empty.
        n_rules: the size parameter it was built with.
        mac_a, mac_b: MACs of the two generator ports.
        note: one line on what the hot path does.
    """

    name: str
    flows: tuple[str, ...]
    groups: tuple[str, ...] = ()
    n_rules: int = 1
    mac_a: str = MAC_A
    mac_b: str = MAC_B
    note: str = ""
    params: dict = field(default_factory=dict)


def mac_n(i: int, prefix: int = 0x12) -> str:
    """A locally administered unicast MAC numbered ``i`` (``12:00:00:xx:xx:xx``)."""
    if not 0 <= i < 2 ** 24:
        raise ValueError("MAC index out of range")
    return f"{prefix:02x}:00:00:{(i >> 16) & 0xff:02x}:{(i >> 8) & 0xff:02x}:{i & 0xff:02x}"


def port_workload(port_a: int = 7, port_b: int = 10) -> Workload:
    """Port-to-port cross-connect (``in_port=a -> b`` and back): the cheapest possible pipeline."""
    return Workload("port", (f"table=0,priority=100,in_port={port_a},actions=output:{port_b}",
                             f"table=0,priority=100,in_port={port_b},actions=output:{port_a}"),
                    n_rules=2, note="in_port cross-connect")


def l2_workload(n_macs: int = 2, port_a: int = 7, port_b: int = 10) -> Workload:
    """L2 switching: one ``dl_dst`` rule per destination MAC (1 to 100k), unknown destinations dropped.

    The two generator MACs are always present; ``n_macs - 2`` further MACs are hosts behind port_b (the paced
    generator sends A -> B to all of them, :func:`harmless.bench.traffic.l2_traffic`).
    """
    if n_macs < 1:
        raise ValueError("n_macs must be >= 1")
    flows = [f"table=0,priority=100,dl_dst={MAC_B},actions=output:{port_b}",
             f"table=0,priority=100,dl_dst={MAC_A},actions=output:{port_a}"]
    for i in range(max(n_macs - 2, 0)):
        flows.append(f"table=0,priority=100,dl_dst={mac_n(i)},actions=output:{port_b}")
    flows.append("table=0,priority=0,actions=drop")
    return Workload("l2", tuple(flows), n_rules=max(n_macs, 2), note="exact dl_dst match, output")


def _prefixes(n: int, base: str = "10.128.0.0/9") -> list[ipaddress.IPv4Network]:
    """``n`` distinct prefixes of mixed lengths (/16 .. /28) inside ``base``: varied masks like a real FIB."""
    net = ipaddress.ip_network(base)
    lens = (16, 20, 24, 28)
    out, seen = [], set()
    i = 0
    while len(out) < n:
        plen = lens[i % len(lens)]
        step = 2 ** (32 - plen)
        addr = int(net.network_address) + (i * 7919 * step) % (net.num_addresses - step)
        addr -= addr % step
        p = ipaddress.ip_network(f"{ipaddress.ip_address(addr)}/{plen}")
        if p not in seen:
            seen.add(p)
            out.append(p)
        i += 1
    return out


def l3_workload(n_routes: int = 10, n_nexthops: int = 4, port_a: int = 7, port_b: int = 10,
                ip_a: str = "198.18.0.1", ip_b: str = "198.19.0.1") -> Workload:
    """L3 routing: LPM routes (priority = prefix length) to next-hop groups (select groups rewriting MACs).

    The generator's hosts sit in 198.18.0.0/24 (port_a) and 198.19.0.0/24 (port_b) (RFC 2544 test range).
    Hot path: ``ip,nw_dst=<host>/24`` -> group (set src/dst MAC, dec_ttl, output). The frames keep their macswapped
    MACs' meaning because the next hop rewrites dl_dst to the host behind the port.
    """
    if n_routes < 1 or n_nexthops < 1:
        raise ValueError("n_routes and n_nexthops must be >= 1")
    groups = [f"group_id=1,type=indirect,bucket=set_field:{MAC_A}->eth_src,set_field:{MAC_B}->eth_dst,"
              f"dec_ttl,output:{port_b}",
              f"group_id=2,type=indirect,bucket=set_field:{MAC_B}->eth_src,set_field:{MAC_A}->eth_dst,"
              f"dec_ttl,output:{port_a}"]
    for g in range(n_nexthops):
        nh = mac_n(0xf000 + g, 0x16)
        groups.append(f"group_id={100 + g},type=indirect,bucket=set_field:{nh}->eth_dst,dec_ttl,"
                      f"output:{port_a if g % 2 else port_b}")
    net_b = ipaddress.ip_network(f"{ip_b}/24", strict=False)
    net_a = ipaddress.ip_network(f"{ip_a}/24", strict=False)
    flows = [f"table=0,priority=24,ip,nw_dst={net_b},actions=group:1",
             f"table=0,priority=24,ip,nw_dst={net_a},actions=group:2"]
    for i, p in enumerate(_prefixes(max(n_routes - 2, 0))):
        flows.append(f"table=0,priority={p.prefixlen},ip,nw_dst={p},actions=group:{100 + i % n_nexthops}")
    flows.append("table=0,priority=0,actions=drop")
    return Workload("l3", tuple(flows), tuple(groups), n_rules=max(n_routes, 2),
                    note="LPM on nw_dst -> indirect group (MAC rewrite, dec_ttl)",
                    params={"ip_a": ip_a, "ip_b": ip_b, "n_nexthops": n_nexthops})


def lb_acl_workload(n_backends: int = 10, web_share: float = 0.7, port_a: int = 7, port_b: int = 10,
                    vip: str = "198.19.0.100") -> Workload:
    """Load balancer with ACL: table 0 = ACL (web service TCP/80 to the VIP allowed, the rest dropped),
    table 1 = a select group over ``n_backends`` backends (rewrite dst MAC/IP, output).

    ``web_share`` is the fraction of generated traffic that is web traffic (the paper's 70 %); the traffic
    generator must send the other 30 % as non-web frames that the ACL filters (counted as intended drops).
    Return traffic (from a backend, src port 80) is allowed back to port_a.
    """
    if n_backends < 1:
        raise ValueError("n_backends must be >= 1")
    buckets = []
    for b in range(n_backends):
        ip = ipaddress.ip_address("198.19.1.0") + 1 + b
        buckets.append(f"bucket=weight:1,set_field:{MAC_B}->eth_dst,set_field:{ip}->ip_dst,output:{port_b}")
    groups = ["group_id=1,type=select,selection_method=hash,fields(ip_src,tcp_src)," + ",".join(buckets)]
    flows = [f"table=0,priority=200,tcp,in_port={port_a},nw_dst={vip},tp_dst=80,actions=goto_table:1",
             f"table=0,priority=200,tcp,in_port={port_b},tp_src=80,actions=set_field:{MAC_A}->eth_dst,"
             f"output:{port_a}",
             "table=0,priority=0,actions=drop",
             "table=1,priority=0,actions=group:1"]
    return Workload("lb-acl", tuple(flows), tuple(groups), n_rules=n_backends,
                    note="ACL (tcp/80 to VIP) -> select group over backends",
                    params={"vip": vip, "web_share": web_share})


def gateway_workload(n_ces: int = 10, users_per_ce: int = 20, port_a: int = 7, port_b: int = 10,
                     public_ip: str = "203.0.113.1") -> Workload:
    """Access gateway: ``n_ces`` customer edges (one VLAN-less user subnet each, 10.<ce>.0.0/24) with
    ``users_per_ce`` users; upstream: per-user source NAT to ``public_ip`` with a per-user L4 port, routed to
    port_b; downstream: reverse NAT by public port, routed to the user's CE on port_a.
    """
    if n_ces < 1 or users_per_ce < 1:
        raise ValueError("n_ces and users_per_ce must be >= 1")
    flows = []
    for ce in range(n_ces):
        for u in range(users_per_ce):
            ip = f"10.{ce + 1}.0.{u + 10}"
            nport = 10000 + ce * users_per_ce + u
            flows.append(f"table=0,priority=100,udp,in_port={port_a},nw_src={ip},actions="
                         f"set_field:{public_ip}->ip_src,set_field:{nport}->udp_src,goto_table:1")
            flows.append(f"table=0,priority=100,udp,in_port={port_b},nw_dst={public_ip},tp_dst={nport},actions="
                         f"set_field:{ip}->ip_dst,set_field:5000->udp_dst,goto_table:2")
    flows += [f"table=1,priority=10,ip,actions=set_field:{MAC_B}->eth_dst,output:{port_b}",
              f"table=2,priority=10,ip,actions=set_field:{MAC_A}->eth_dst,output:{port_a}",
              "table=0,priority=0,actions=drop"]
    return Workload("gateway", tuple(flows), n_rules=n_ces * users_per_ce,
                    note="per-user SNAT (ip+udp port) and routes",
                    params={"public_ip": public_ip, "n_ces": n_ces, "users_per_ce": users_per_ce})


BUILDERS = {"port": port_workload, "l2": l2_workload, "l3": l3_workload, "lb-acl": lb_acl_workload,
            "gateway": gateway_workload}
