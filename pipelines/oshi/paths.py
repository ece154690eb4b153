"""Path computation on the discovered topology (networkx; pure).

* :func:`shortest_hops`: fewest-hop path between two nodes as oriented links.
* :func:`steiner_tree`: the Kou-Markowsky-Berman heuristic for the minimal Steiner tree (Acta Informatica 15, 1981;
  OSHI paper ref. [40]), networkx's ``approximation.steiner_tree(method="kou")``.
* :func:`branching_points`: where a VSS needs a Virtual Bridging Point (OSHI paper Sec. IV.C).
"""
from __future__ import annotations

import networkx as nx
from networkx.algorithms.approximation import steiner_tree as nx_steiner

from harmless.pipelines.oshi.model import Link, Topology


class NoPath(Exception):
    """No path between two nodes (``a``, ``b``) on the live links."""

    def __init__(self, a: str, b: str):
        self.a, self.b = a, b
        super().__init__(f"no path between {a} and {b}")


def graph(topo: Topology, exclude: set[str] = frozenset()) -> nx.Graph:
    """Undirected graph: nodes = connected OSHI nodes, edges = links (attribute ``link``, weight 1).

    Parallel links between the same two nodes: the one with the smallest key is used.
    """
    g = nx.Graph()
    g.add_nodes_from(n for n, v in topo.nodes.items() if v.connected)
    for ln in sorted(topo.links, key=lambda x: x.key):
        if ln.key in exclude or ln.a not in g or ln.b not in g or g.has_edge(ln.a, ln.b):
            continue
        g.add_edge(ln.a, ln.b, link=ln, weight=1)
    return g


def oriented(path: list[str], g: nx.Graph) -> list[tuple[str, int, str, int, str]]:
    """Node path -> ``[(u, u_port, v, v_port, link_key)]`` along the path."""
    out = []
    for u, v in zip(path, path[1:]):
        ln: Link = g.edges[u, v]["link"]
        out.append((u, ln.port_of(u), v, ln.port_of(v), ln.key))
    return out


def shortest_hops(g: nx.Graph, a: str, b: str) -> list[tuple[str, int, str, int, str]]:
    """Fewest-hop path from ``a`` to ``b`` (ties broken deterministically by node name). Raises NoPath."""
    if a == b:
        return []
    if a not in g or b not in g:
        raise NoPath(a, b)
    try:
        paths = sorted(nx.all_shortest_paths(g, a, b))
    except nx.NetworkXNoPath:
        raise NoPath(a, b) from None
    return oriented(paths[0], g)


def steiner_tree(g: nx.Graph, terminals: list[str]) -> nx.Graph:
    """Approximate minimal Steiner tree spanning ``terminals`` (Kou et al. heuristic; cost <= 2x optimum).

    Raises NoPath if the terminals are not in one connected component.
    """
    terms = sorted(set(terminals))
    for t in terms[1:]:
        if terms[0] not in g or t not in g or not nx.has_path(g, terms[0], t):
            raise NoPath(terms[0], t)
    if len(terms) == 1:
        t = nx.Graph()
        t.add_node(terms[0])
        return t
    return nx_steiner(g, terms, weight="weight", method="kou")


def branching_points(tree: nx.Graph, local_endpoints: dict[str, int]) -> list[str]:
    """Nodes of ``tree`` where >= 3 branches meet, counting each local end point as a branch.

    Args:
        tree: the VSS tree.
        local_endpoints: node -> number of VSS end points on that node.

    Returns:
        Sorted node names; when none qualifies (e.g. two end points), the first terminal (sorted), so that every
        VSS has at least one VBP.
    """
    vbps = sorted(n for n in tree.nodes if tree.degree(n) + local_endpoints.get(n, 0) >= 3)
    return vbps or [sorted(local_endpoints)[0]]


def tree_segments(tree: nx.Graph, vbps: list[str], endpoint_nodes: list[str]) -> tuple[list[list[str]], list[list[str]]]:
    """Node paths of the pseudowires of an optimised VSS.

    Returns:
        ``(endpoint_paths, vbp_paths)``: for each end point node (in order) the tree path to its nearest VBP (found
        without passing through another VBP; a single-node path when the node is a VBP), and the tree paths between
        VBPs that are adjacent in the tree (no VBP in between), each pair once.
    """
    vset = set(vbps)

    def walk(start: str) -> dict[str, list[str]]:
        found, seen, frontier = {}, {start}, [[start]]
        while frontier:
            nxt = []
            for p in frontier:
                for n in sorted(tree.neighbors(p[-1])):
                    if n in seen:
                        continue
                    seen.add(n)
                    if n in vset:
                        found[n] = p + [n]
                    else:
                        nxt.append(p + [n])
            frontier = nxt
        return found

    ep_paths = []
    for n in endpoint_nodes:
        if n in vset:
            ep_paths.append([n])
            continue
        reach = walk(n)
        if not reach:
            raise NoPath(n, ",".join(vbps))
        ep_paths.append(min(reach.values(), key=lambda p: (len(p), p[-1])))
    vbp_paths = []
    for v in vbps:
        for w, p in sorted(walk(v).items()):
            if v < w:
                vbp_paths.append(p)
    return ep_paths, vbp_paths
