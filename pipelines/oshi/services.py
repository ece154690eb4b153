"""Planning OSHI services and computing their flows (pure functions; no OVS, no controller).

Encapsulations (OSHI paper Fig. 5):
  * IP VLL: ingress PE ``push_mpls`` over the customer's Ethernet header (IP with 0x8847, ARP with 0x8848, same
    label), transit nodes swap the label (table 1), egress PE ``pop_mpls`` back to 0x0800 / 0x0806.
  * PW (and the VSS pseudowires): native Ethernet over MPLS (RFC 4448) with Open vSwitch's ``encap(mpls)``,
    ``encap(ethernet)`` and ``decap()`` actions: the whole customer frame travels behind a provider Ethernet header
    and one label; transit nodes swap like for a VLL; the egress PE removes both headers. (The paper had to use GRE
    and a per-customer OVS because OVS could not do this in 2015; OVS >= 2.17 userspace datapath can -- see the
    README's OSHI section for the evidence.)

Per segment (a bidirectional path A<->B over hops h1..hk with labels L1..Lk):
  * ingress at A, table 0, priority :data:`~harmless.pipelines.oshi.lme.SERVICE_PRIORITY`: classify ``in_port=A``
    (``+dl_vlan`` for a VLAN end point), encapsulate with L1, output to h1; a lower-priority drop keeps the rest
    of that port's traffic out of the IP stack.
  * transit node i, table 1: ``in_port, dl_type, mpls_label=Li -> set_field:L(i+1)->mpls_label, output``.
  * egress at B, table 1: ``in_port, dl_type, mpls_label=Lk -> decapsulate, output B``; and the same B->A.
Every flow carries the service's cookie, so a service is deleted with one cookie-masked delete per node.
"""
from __future__ import annotations

import random
import time

from harmless.errors import InputError
from harmless.openflow import (PT_ETH, Decap, Encap, Flow, match, output_port, pop_mpls, pop_vlan, push_mpls,
                               push_vlan_act, set_field, set_mpls_label, vid_present)
from harmless.ovs import transaction_args
from harmless.pipelines.oshi import paths
from harmless.pipelines.oshi.labels import LabelAllocator, LabelSpaceExhausted
from harmless.pipelines.oshi.lme import ETH_MPLS, ETH_MPLS_MC, SBP_TABLE, SERVICE_PRIORITY
from harmless.pipelines.oshi.model import (Attachment, Endpoint, Hop, Segment, ServiceRecord, ServiceRequest,
                                           Topology, Vbp, service_cookie)

#: provider MAC addresses of the EoMPLS outer Ethernet header (locally administered; "OSHI").
PW_ETH_SRC = "02:4f:53:48:49:01"
PW_ETH_DST = "02:4f:53:48:49:02"
#: OpenFlow port numbers for VBP patch ports on a node's bridge (above the physical/internal/HARMLESS ranges).
VBP_PORT_BASE = 4000
VBP_PORT_MAX = 4999


class ServiceError(InputError):
    """A service request that cannot be honoured; nothing was changed.

    ``status`` is the HTTP status the API answers with (400 bad request, 404 unknown, 409 conflict, 503 no
    resources/path).
    """

    def __init__(self, where: str, problem: str, fix: str = "", status: int = 400):
        super().__init__(where, problem, fix)
        self.status = status


# ----------------------------------------------------------------------------- validation
def resolve(ep: Endpoint, topo: Topology, where: str) -> Attachment:
    """End point -> attachment (OpenFlow port number). Raises ServiceError (unknown node/port, node offline)."""
    node = topo.nodes.get(ep.node)
    if node is None:
        raise ServiceError(f"{where}.node", f"unknown node {ep.node!r}",
                           f"use one of: {', '.join(sorted(topo.nodes)) or '(no node known)'}", 404)
    if isinstance(ep.port, str) and not ep.port.isdigit():
        if ep.port not in node.edge_ports:
            raise ServiceError(f"{where}.port", f"node {ep.node} has no edge port named {ep.port!r}",
                               f"use one of: {_ports(node.edge_ports)}", 404)
        port = node.edge_ports[ep.port]
    else:
        port = int(ep.port)
        if port not in node.edge_ports.values():
            raise ServiceError(f"{where}.port", f"node {ep.node} has no edge port {port}",
                               f"use one of: {_ports(node.edge_ports)}", 404)
    if not node.connected:
        raise ServiceError(f"{where}.node", f"node {ep.node} is not connected to the controller",
                           "wait for it to connect (harmless oshi status), then retry", 503)
    return Attachment(node=ep.node, port=port, vlan=ep.vlan)


def _ports(edge: dict[str, int]) -> str:
    return ", ".join(f"{n} ({p})" for n, p in sorted(edge.items(), key=lambda x: x[1])) or "(none)"


def overlaps(x: Attachment, y: Attachment) -> bool:
    """Two attachments collide: same node and port, and same VID or one of them takes the whole port."""
    return x.node == y.node and x.port == y.port and (x.vlan is None or y.vlan is None or x.vlan == y.vlan)


def check_request(req: ServiceRequest, topo: Topology, records: list[ServiceRecord]) -> list[Attachment]:
    """Validate a request against the topology and the existing services. Returns the attachments.

    Raises:
        ServiceError: duplicate name (409), wrong number of end points (400), unknown node/port (404), node offline
            (503), an end point used twice in the request or by another service (409).
    """
    if any(r.name == req.name for r in records):
        raise ServiceError("name", f"a service named {req.name!r} already exists", "pick another name or delete it",
                           409)
    need = "exactly 2" if req.kind in ("vll", "pw") else "at least 2"
    if (req.kind in ("vll", "pw") and len(req.endpoints) != 2) or len(req.endpoints) < 2:
        raise ServiceError("endpoints", f"a {req.kind} needs {need} end points, got {len(req.endpoints)}",
                           "give node:port[.vlan] end points")
    atts = [resolve(ep, topo, f"endpoints[{i}]") for i, ep in enumerate(req.endpoints)]
    for i, a in enumerate(atts):
        for j in range(i):
            if overlaps(a, atts[j]):
                raise ServiceError(f"endpoints[{i}]", f"end point {req.endpoints[i].label()} duplicates "
                                   f"endpoints[{j}] ({req.endpoints[j].label()})", "give distinct end points", 409)
        for r in records:
            for b in r.attachments:
                if overlaps(a, b):
                    raise ServiceError(f"endpoints[{i}]", f"end point {req.endpoints[i].label()} is already used by "
                                       f"service {r.name!r}", f"delete {r.name} first or use another port/VLAN", 409)
    return atts


# ----------------------------------------------------------------------------- planning
def labels_in_use(records: list[ServiceRecord], lo: int, hi: int) -> LabelAllocator:
    """The allocator state implied by the existing services (the only source of truth for used labels)."""
    alloc = LabelAllocator(lo, hi)
    for r in records:
        for link, labels in r.labels().items():
            for lab in labels:
                alloc.reserve(link, lab)
    return alloc


def make_segment(a: Attachment, b: Attachment, hops: list[tuple], alloc: LabelAllocator) -> Segment:
    """Allocate one label per hop. Raises ServiceError (503) when a link's label space is exhausted."""
    out: list[Hop] = []
    for u, up, v, vp, key in hops:
        try:
            lab = alloc.allocate(key, avoid=out[-1].label if out else None)
        except LabelSpaceExhausted as e:
            raise ServiceError("labels", str(e), "delete services using that link or widen label_range", 503) from None
        out.append(Hop(u=u, u_port=up, v=v, v_port=vp, label=lab, link=key))
    return Segment(a=a, b=b, hops=out)


def _path(g, a: str, b: str) -> list[tuple]:
    try:
        return paths.shortest_hops(g, a, b)
    except paths.NoPath as e:
        raise ServiceError("endpoints", f"no path between {e.a} and {e.b} on the live links",
                           "check the links (harmless oshi status)", 503) from None


def plan_service(req: ServiceRequest, topo: Topology, records: list[ServiceRecord], sid: int,
                 label_range: tuple[int, int], rng: random.Random | None = None) -> ServiceRecord:
    """Plan one service: validate, compute paths (and VBPs), allocate labels. Pure: nothing is installed.

    Args:
        req: the request.
        topo: current topology (nodes, live links).
        records: the existing services (their end points, labels and VBP ports are taken).
        sid: the new service's id (its cookie is :func:`~harmless.pipelines.oshi.model.service_cookie`).
        label_range: (lo, hi) MPLS label space.
        rng: random source for ``vss_mode=random``.

    Raises:
        ServiceError: see :func:`check_request`; no path (503); label space exhausted (503).
    """
    atts = check_request(req, topo, records)
    alloc = labels_in_use(records, *label_range)
    g = paths.graph(topo)
    vbps: list[Vbp] = []
    if req.kind in ("vll", "pw"):
        segs = [make_segment(atts[0], atts[1], _path(g, atts[0].node, atts[1].node), alloc)]
    else:
        segs, vbps = _plan_vss(req, atts, topo, records, sid, g, alloc, rng or random.Random())
    return ServiceRecord(id=sid, name=req.name, kind=req.kind, endpoints=req.endpoints, attachments=atts,
                         segments=segs, vbps=vbps, vss_mode=req.vss_mode if req.kind == "vss" else None,
                         created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def vbp_bridge(sid: int) -> str:
    return f"vbp{sid}"


def vbp_patch_names(sid: int, j: int) -> tuple[str, str]:
    """(name on the node's OpenFlow bridge, name on the VBP bridge) of the j-th patch pair of VSS ``sid``."""
    return f"v{sid}p{j}", f"v{sid}q{j}"


def _free_vbp_ports(node: str, records: list[ServiceRecord], topo: Topology):
    used = {p for r in records for v in r.vbps if v.node == node for p in v.ports}
    used |= set(topo.nodes[node].edge_ports.values())
    for p in range(VBP_PORT_BASE, VBP_PORT_MAX + 1):
        if p not in used:
            yield p


def _plan_vss(req, atts, topo, records, sid, g, alloc, rng):
    ep_nodes = [a.node for a in atts]
    if req.vss_mode == "random":
        vbp_nodes = [rng.choice(sorted(g.nodes))]
        ep_paths = [[n] for n in ep_nodes]        # marker; real paths below
        vbp_paths: list[list[str]] = []
    else:
        try:
            tree = paths.steiner_tree(g, ep_nodes)
        except paths.NoPath as e:
            raise ServiceError("endpoints", f"no path between {e.a} and {e.b} on the live links",
                               "check the links (harmless oshi status)", 503) from None
        local: dict[str, int] = {}
        for n in ep_nodes:
            local[n] = local.get(n, 0) + 1
        vbp_nodes = paths.branching_points(tree, local)
        ep_paths, vbp_paths = paths.tree_segments(tree, vbp_nodes, ep_nodes)
    port_iters = {n: _free_vbp_ports(n, records, topo) for n in vbp_nodes}
    vbp_ports: dict[str, list[int]] = {n: [] for n in vbp_nodes}

    def vbp_attachment(n: str) -> Attachment:
        try:
            p = next(port_iters[n])
        except StopIteration:
            raise ServiceError("vss", f"no free VBP port on {n} ({VBP_PORT_BASE}..{VBP_PORT_MAX})",
                               "delete unused VSS services", 503) from None
        vbp_ports[n].append(p)
        return Attachment(node=n, port=p)

    segs = []
    for a, p in zip(atts, ep_paths):
        target = vbp_nodes[0] if req.vss_mode == "random" else p[-1]
        hops = _path(g, a.node, target) if req.vss_mode == "random" else paths.oriented(p, g)
        segs.append(make_segment(a, vbp_attachment(target), hops, alloc))
    for p in vbp_paths:
        segs.append(make_segment(vbp_attachment(p[0]), vbp_attachment(p[-1]), paths.oriented(p, g), alloc))
    vbps = [Vbp(node=n, bridge=vbp_bridge(sid), ports=vbp_ports[n]) for n in vbp_nodes]
    return segs, vbps


def reroute(rec: ServiceRecord, topo: Topology, records: list[ServiceRecord], label_range: tuple[int, int]
            ) -> ServiceRecord | None:
    """Recompute the segments of ``rec`` that cross a link missing from ``topo`` (end points and VBPs kept).

    Returns:
        The new record (labels of unaffected segments kept, new labels for re-routed ones), or None when no
        segment is affected.

    Raises:
        ServiceError: no path (503) or no label (503); the caller keeps the old record.
    """
    live = {ln.key for ln in topo.links}
    broken = [i for i, s in enumerate(rec.segments) if any(h.link not in live for h in s.hops)]
    if not broken:
        return None
    others = [r for r in records if r.id != rec.id]
    keep = rec.model_copy(update={"segments": [s for i, s in enumerate(rec.segments) if i not in broken]})
    alloc = labels_in_use(others + [keep], *label_range)
    g = paths.graph(topo)
    segs = list(rec.segments)
    for i in broken:
        s = rec.segments[i]
        segs[i] = make_segment(s.a, s.b, _path(g, s.a.node, s.b.node), alloc)
    return rec.model_copy(update={"segments": segs})


# ----------------------------------------------------------------------------- flows
def _vlan_match(a: Attachment) -> dict:
    return {"vlan_vid": vid_present(a.vlan)} if a.vlan else {}


def _egress_vlan(a: Attachment) -> tuple:
    return push_vlan_act(a.vlan) if a.vlan else ()


def _ingress_vlan(a: Attachment) -> tuple:
    return (pop_vlan(),) if a.vlan else ()


def segment_flows(seg: Segment, pw: bool, cookie: int) -> list[tuple[str, Flow]]:
    """Flows of one segment in both directions, as ``(node, Flow)``.

    Args:
        seg: the segment.
        pw: True = Ethernet over MPLS (pseudowire); False = IP VLL (IP and ARP over MPLS, customer header kept).
        cookie: the service's cookie.
    """
    out: list[tuple[str, Flow]] = []
    p = SERVICE_PRIORITY
    if not seg.hops:       # both attachments on one node: a cross-connect
        for x, y in ((seg.a, seg.b), (seg.b, seg.a)):
            out.append((x.node, Flow(p, match(in_port=x.port, **_vlan_match(x)),
                                     _ingress_vlan(x) + _egress_vlan(y) + (output_port(y.port),), cookie)))
        return out
    directions = [(seg.a, seg.b, [(h.u, h.u_port, h.v, h.v_port, h.label) for h in seg.hops]),
                  (seg.b, seg.a, [(h.v, h.v_port, h.u, h.u_port, h.label) for h in reversed(seg.hops)])]
    types = [(ETH_MPLS, None)] if pw else [(ETH_MPLS, 0x0800), (ETH_MPLS_MC, 0x0806)]
    for src, dst, hops in directions:
        first = hops[0]
        m_in = {"in_port": src.port, **_vlan_match(src)}
        if pw:
            acts = _ingress_vlan(src) + (Encap("mpls"), set_mpls_label(first[4]), Encap("ethernet"),
                                         set_field(eth_src=PW_ETH_SRC), set_field(eth_dst=PW_ETH_DST),
                                         output_port(first[1]))
            out.append((src.node, Flow(p, match(**m_in), acts, cookie)))
        else:
            for mpls_type, eth in types:
                acts = _ingress_vlan(src) + (push_mpls(mpls_type), set_mpls_label(first[4]), output_port(first[1]))
                out.append((src.node, Flow(p, match(**m_in, eth_type=eth), acts, cookie)))
            out.append((src.node, Flow(p - 1, match(**m_in), (), cookie)))      # anything else from the CE: drop
        for (u, up, v, vp, lab), nxt in zip(hops, hops[1:] + [None]):
            for mpls_type, eth in types:
                m = match(in_port=vp, eth_type=mpls_type, mpls_label=lab)
                if nxt is not None:
                    acts = (set_mpls_label(nxt[4]), output_port(nxt[1]))
                elif pw:
                    acts = (Decap(), Decap(PT_ETH)) + _egress_vlan(dst) + (output_port(dst.port),)
                else:
                    acts = (pop_mpls(eth),) + _egress_vlan(dst) + (output_port(dst.port),)
                out.append((v, Flow(p, m, acts, cookie, table=SBP_TABLE)))
    return out


def service_flows(rec: ServiceRecord) -> dict[str, list[Flow]]:
    """All flows of a service, per node."""
    per: dict[str, list[Flow]] = {}
    for seg in rec.segments:
        for node, f in segment_flows(seg, rec.kind != "vll", rec.cookie):
            per.setdefault(node, []).append(f)
    return per


def vbp_vsctl(rec: ServiceRecord, vbp: Vbp, bridge: str) -> list[str]:
    """ovs-vsctl arguments (one transaction) creating VBP ``vbp`` of VSS ``rec`` on the node's bridge ``bridge``:
    a NORMAL (MAC learning) netdev bridge patched to ``bridge`` at the VBP's OpenFlow ports."""
    cmds = [["--may-exist", "add-br", vbp.bridge],
            ["set", "Bridge", vbp.bridge, "datapath_type=netdev", "fail_mode=standalone",
             f"external_ids:oshi-service={rec.name}"]]
    for port in vbp.ports:
        main, side = vbp_patch_names(rec.id, port - VBP_PORT_BASE)
        cmds += [["--may-exist", "add-port", bridge, main],
                 ["set", "Interface", main, "type=patch", f"options:peer={side}", f"ofport_request={port}"],
                 ["--may-exist", "add-port", vbp.bridge, side],
                 ["set", "Interface", side, "type=patch", f"options:peer={main}"]]
    return transaction_args(cmds)


def vbp_del_vsctl(rec: ServiceRecord, vbp: Vbp, bridge: str) -> list[str]:
    """ovs-vsctl arguments removing a VBP bridge and its patch ports on ``bridge`` (one transaction)."""
    return transaction_args([["--if-exists", "del-br", vbp.bridge],
                             *[["--if-exists", "del-port", bridge, vbp_patch_names(rec.id, port - VBP_PORT_BASE)[0]]
                               for port in vbp.ports]])


def new_id(records: list[ServiceRecord], next_id: int) -> int:
    """The next service id: never reuses one that a live record holds."""
    used = {r.id for r in records}
    sid = max(next_id, 1)
    while sid in used:
        sid += 1
    return sid


__all__ = ["ServiceError", "plan_service", "reroute", "service_flows", "segment_flows", "check_request",
           "labels_in_use", "service_cookie", "vbp_vsctl", "vbp_del_vsctl", "new_id"]
