"""The edge switches' flow entries as pure data (Kawashima & Matsuo, Sec. III-C, Fig. 5 and 6).

Every flow is a :class:`harmless.openflow.Flow` (priority, typed match and actions); :func:`desired_flows`
computes the whole table 0 of one server's edge switch from the registry, where each VM is now, the per-server VIDs
and the servers' MACs. The os-ken app sends them as FLOW_MODs (:meth:`~harmless.openflow.Flow.to_flowmod`); the
VXLAN comparison lab writes :func:`vxlan_flows` as ``ovs-ofctl`` text (:meth:`~harmless.openflow.Flow.to_ofctl`).
Each flow's cookie is ``COOKIE_BASE | 48-bit digest of (priority, match, actions)``
(:meth:`~harmless.openflow.Flow.digest`): the audit after a controller restart compares cookies
(present left alone, missing added, stale removed by exact cookie), and a rewritten flow gets a new cookie.

Table 0 of server S (uplink = OpenFlow port 1, ``S_MAC`` = the MAC of S's uplink NIC):

=========  ==========================================================  =============================================
priority   match                                                       actions
=========  ==========================================================  =============================================
300        in_port=<VM port>, arp                                      CONTROLLER (proxy-ARP, restricted to tenant)
200        in_port=A, eth_src=A, eth_dst=B (B on S, same tenant)       output:B (local delivery)
200        in_port=A, eth_src=A, eth_dst=B (B on T, same tenant)       push_vlan, vlan_vid=VID_T(B), eth_src=S_MAC,
                                                                       eth_dst=T_MAC, output:1            (Fig. 6)
200        in_port=1, eth_dst=S_MAC, vlan_vid=VID_S(B), eth_src=T_MAC,  eth_dst=B, eth_src=A, pop_vlan, output:B
           ip, ipv4_src=A (A on T, same tenant as B)                                                       (Fig. 5 +
                                                                       source MAC restore)
0          (any)                                                       drop
=========  ==========================================================  =============================================

The paper restores only the destination MAC (Fig. 3: the receiver sees the sender server's MAC until ARP replies
teach it the VM's). Here the source VM MAC is restored too: the receiving switch knows the tenant from the VID
(the VID names one local VM), and within a tenant the sender's IPv4 address names the sender VM, so
``(VID, sender server MAC, ipv4_src)`` -> sender VM MAC. Consequence: only IPv4 (and ARP, answered by the
controller) crosses servers; other ethertypes are dropped (documented in docs/edge-overlay.md).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from harmless.openflow import (ETH_TYPE_ARP, ETH_TYPE_IPV4, OFPVID_PRESENT, Flow, match, output_controller, output_port,
                               pop_vlan, push_vlan_act, set_field)
from harmless.pipelines.edge_overlay.model import UPLINK_PORT, Registry

COOKIE_BASE = 0x4F56 << 48              #: "OV" in the cookie's upper 16 bits marks this app's flows
COOKIE_MASK = 0xFFFF << 48              #: matches every flow of this app
ETH_ARP, ETH_IPV4 = ETH_TYPE_ARP, ETH_TYPE_IPV4
P_ARP, P_FWD, P_DROP = 300, 200, 0

__all__ = ["COOKIE_BASE", "COOKIE_MASK", "OFPVID_PRESENT", "ETH_ARP", "ETH_IPV4", "View",
           "desired_flows", "vxlan_flows"]


def _flow(priority: int, what: str, actions: tuple, **oxm) -> Flow:
    """A table-0 flow whose cookie is ``COOKIE_BASE`` | the 48-bit digest of its priority, match and actions."""
    f = Flow(priority, match(**oxm), actions, note=what)
    return replace(f, cookie=COOKIE_BASE | f.digest(48))


@dataclass(frozen=True)
class View:
    """What the controller knows: registry, VM locations, per-server VIDs, server MACs.

    Attributes:
        registry: the tenant/VM registry.
        where: ``{vm: (server, OpenFlow port)}`` -- learnt from the edge switches' ports (port-status/port-desc).
        vids: ``{server: {vm: VID}}`` -- host-based VIDs (1-4094, unique per server only; paper Sec. III-B).
        server_macs: ``{server: MAC of its uplink NIC}``.
        uplinks: ``{server: uplink OpenFlow port}`` for servers whose uplink is not port 1.
    """

    registry: Registry
    where: dict
    vids: dict
    server_macs: dict
    uplinks: dict = None        #: ``{server: OpenFlow port of its uplink}``; missing = 1 (a HARMLESS br-of: its legacy port)

    def uplink(self, server: str) -> int:
        return (self.uplinks or {}).get(server, UPLINK_PORT)


def desired_flows(view: View, server: str) -> list[Flow]:
    """Table 0 of ``server``'s edge switch (see the module doc). VMs without a location or VID get no flows."""
    reg = view.registry
    smac = view.server_macs[server]
    flows = [_flow(P_DROP, "default drop", ())]
    located = [(t, v) for t, v in reg.vms() if v.name in view.where]
    for ta, a in located:
        sa, pa = view.where[a.name]
        if sa != server:
            continue
        flows.append(_flow(P_ARP, f"arp {a.name} -> controller", (output_controller(),), in_port=pa,
                           eth_type=ETH_ARP))
        for tb, b in located:
            if tb != ta or b.name == a.name:
                continue
            sb, pb = view.where[b.name]
            if sb == server:
                flows.append(_flow(P_FWD, f"{a.name} -> {b.name} local", (output_port(pb),),
                                   in_port=pa, eth_src=a.mac, eth_dst=b.mac))
                continue
            vid = view.vids.get(sb, {}).get(b.name)
            if vid is None or sb not in view.server_macs:
                continue
            flows.append(_flow(P_FWD, f"{a.name} -> {b.name} via {sb} vid {vid}",
                               (*push_vlan_act(vid), set_field(eth_src=smac),
                                set_field(eth_dst=view.server_macs[sb]), output_port(view.uplink(server))),
                               in_port=pa, eth_src=a.mac, eth_dst=b.mac))
    # incoming (Fig. 5): one per (local VM B, remote same-tenant VM A)
    for tb, b in located:
        sb, pb = view.where[b.name]
        vid = view.vids.get(server, {}).get(b.name)
        if sb != server or vid is None:
            continue
        for ta, a in located:
            sa, _ = view.where[a.name]
            if ta != tb or sa == server or sa not in view.server_macs:
                continue
            flows.append(_flow(P_FWD, f"{a.name}@{sa} -> {b.name} vid {vid}",
                               (set_field(eth_dst=b.mac), set_field(eth_src=a.mac), pop_vlan(), output_port(pb)),
                               in_port=view.uplink(server), eth_dst=smac, vlan_vid=OFPVID_PRESENT | vid,
                               eth_src=view.server_macs[sa], eth_type=ETH_IPV4, ipv4_src=a.address))
    return flows


def vxlan_flows(reg: Registry, where: dict, server: str, vx_port: dict, vni: dict) -> list[Flow]:
    """Table 0 of ``server`` in the VXLAN comparison lab (OVS userspace tunnels, one VNI per tenant).

    Args:
        where: ``{vm: (server, port)}``; vx_port: ``{other server: OpenFlow port of the VXLAN port to it}``;
        vni: ``{tenant: VNI}`` (24 bit, RFC 7348).

    Returns: per same-tenant pair: local output, or ``set_field tun_id=VNI, output:<vxlan port>``; from each tunnel
    port ``tun_id=VNI, eth_dst=<local VM>`` -> the VM; ARP is flooded to the tenant's VMs by the same rules
    (broadcast entries per tenant); everything else dropped.
    """
    flows = [_flow(P_DROP, "default drop", ())]
    vms = [(t, v) for t, v in reg.vms() if v.name in where]
    for ta, a in vms:
        sa, pa = where[a.name]
        if sa != server:
            continue
        bcast = []
        for tb, b in vms:
            if tb != ta or b.name == a.name:
                continue
            sb, pb = where[b.name]
            if sb == server:
                flows.append(_flow(P_FWD, f"{a.name} -> {b.name} local", (output_port(pb),),
                                   in_port=pa, eth_dst=b.mac))
                bcast.append(output_port(pb))
            else:
                flows.append(_flow(P_FWD, f"{a.name} -> {b.name} vxlan", (set_field(tunnel_id=vni[ta]),
                                                                          output_port(vx_port[sb])),
                                   in_port=pa, eth_dst=b.mac))
        remote = sorted({where[b.name][0] for tb, b in vms if tb == ta and where[b.name][0] != server})
        acts = tuple(bcast) + ((set_field(tunnel_id=vni[ta]),) + tuple(output_port(vx_port[s]) for s in remote)
                               if remote else ())
        flows.append(_flow(P_ARP, f"{a.name} broadcast -> tenant {ta}", acts, in_port=pa, eth_dst="ff:ff:ff:ff:ff:ff"))
        for s, p in vx_port.items():
            flows.append(_flow(P_FWD, f"vxlan {s} -> {a.name}", (output_port(pa),), in_port=p, tunnel_id=vni[ta],
                               eth_dst=a.mac))
    # broadcast from a tunnel: to all local VMs of that VNI
    for s, p in vx_port.items():
        for t in reg.tenants:
            local = [where[v.name][1] for v in t.vms if v.name in where and where[v.name][0] == server]
            if local:
                flows.append(_flow(P_ARP, f"vxlan {s} bcast -> tenant {t.name}",
                                   tuple(output_port(q) for q in local), in_port=p, tunnel_id=vni[t.name],
                                   eth_dst="ff:ff:ff:ff:ff:ff"))
    return _dedup(flows)


def _dedup(flows: list[Flow]) -> list[Flow]:
    """Drop entries whose (priority, match) repeats an earlier one."""
    seen, out = set(), []
    for f in flows:
        k = (f.priority, f.match)
        if k in seen:
            continue
        seen.add(k)
        out.append(f)
    return out
