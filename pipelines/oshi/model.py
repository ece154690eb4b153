"""Data model of OSHI services: requests, end points, the topology the controller sees, and service records.

Service kinds (OSHI paper Sec. III.B and IV):
  * ``vll``: IP Virtual Leased Line -- IP over MPLS between two end points, the customer's Ethernet header kept,
    ARP carried with the multicast MPLS ethertype 0x8848.
  * ``pw``: layer-2 pseudowire -- Ethernet over MPLS (RFC 4448 encapsulation: a new provider Ethernet header + one
    MPLS label + the whole customer frame).
  * ``vss``: Virtual Switch Service -- several end points joined by pseudowires to Virtual Bridging Points (VBPs).
"""
from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Kind = Literal["vll", "pw", "vss"]
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
#: cookie of a service's flows: "OSH" in the top bytes, the service id in the low 32 bits.
COOKIE_BASE = 0x4F5348 << 40


def service_cookie(sid: int) -> int:
    """The OpenFlow cookie of service ``sid`` (1..2**32-1)."""
    return COOKIE_BASE | sid


class Endpoint(BaseModel):
    """A service end point: an OpenFlow port of an OSHI node, optionally one VLAN (VID) on it.

    ``port`` is the OpenFlow port number or the port's name (resolved against the node's edge ports).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    node: str
    port: int | str
    vlan: int | None = Field(default=None, ge=1, le=4094)

    def label(self) -> str:
        return f"{self.node}:{self.port}" + (f".{self.vlan}" if self.vlan else "")

    @classmethod
    def parse(cls, text: str) -> "Endpoint":
        """``node:port[.vlan]`` -> Endpoint (port as int when numeric). Raises ValueError."""
        m = re.match(r"^([A-Za-z][\w-]*):([\w-]+?)(?:\.(\d+))?$", text.strip())
        if not m:
            raise ValueError(f"end point {text!r} is not node:port[.vlan]")
        port = int(m.group(2)) if m.group(2).isdigit() else m.group(2)
        return cls(node=m.group(1), port=port, vlan=int(m.group(3)) if m.group(3) else None)


class ServiceRequest(BaseModel):
    """What a user asks for (CLI / HTTP API body).

    Attributes:
        name: unique service name.
        kind: vll | pw | vss.
        endpoints: 2 end points for vll/pw, >= 2 for vss.
        vss_mode: ``optimized`` (VBPs at the branching points of a Steiner tree, Kou-Markowsky-Berman heuristic,
            OSHI paper Sec. IV.C ref. [40]) or ``random`` (one VBP at a random node, "un-optimized").
    """

    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Kind
    endpoints: list[Endpoint]
    vss_mode: Literal["optimized", "random"] = "optimized"

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError("name must be 1-32 letters, digits, '-' or '_', starting with a letter")
        return v


class NodeView(BaseModel):
    """One OSHI node as the controller sees it.

    Attributes:
        dpid: datapath id.
        edge_ports: port name -> OpenFlow port number of the ports that may be service end points (towards CEs).
        connected: the datapath is connected to the controller now.
        ovsdb: OVSDB remote of the node's OVS (for VBP bridges), e.g. ``unix:/path/db.sock``.
        bridge: name of the node's OpenFlow bridge.
    """

    dpid: int
    edge_ports: dict[str, int] = {}
    connected: bool = False
    ovsdb: str | None = None
    bridge: str = "br-oshi"


class Link(BaseModel):
    """A discovered link between two nodes (undirected): ``a``/``a_port`` -- ``b``/``b_port``."""

    model_config = ConfigDict(frozen=True)
    a: str
    a_port: int
    b: str
    b_port: int

    @property
    def key(self) -> str:
        """Stable id of the link, independent of the direction it was discovered in."""
        ends = sorted([f"{self.a}:{self.a_port}", f"{self.b}:{self.b_port}"])
        return "|".join(ends)

    def port_of(self, node: str) -> int:
        return self.a_port if node == self.a else self.b_port


class Topology(BaseModel):
    """Nodes and links (from LLDP/BDDP), the input of path computation."""

    nodes: dict[str, NodeView] = {}
    links: list[Link] = []


class Hop(BaseModel):
    """One link crossed by a segment, in the segment's A->B direction: leave ``u`` by ``u_port``, enter ``v`` by
    ``v_port``, with MPLS ``label`` (used in both directions on this link)."""

    u: str
    u_port: int
    v: str
    v_port: int
    label: int
    link: str


class Attachment(BaseModel):
    """Where a segment starts or ends: node, OpenFlow port, optional VID."""

    model_config = ConfigDict(frozen=True)
    node: str
    port: int
    vlan: int | None = None


class Segment(BaseModel):
    """A bidirectional label-switched path between two attachments (one VLL, one pseudowire)."""

    a: Attachment
    b: Attachment
    hops: list[Hop] = []

    @property
    def nodes(self) -> list[str]:
        return [self.a.node] + [h.v for h in self.hops]


class Vbp(BaseModel):
    """A Virtual Bridging Point: a MAC-learning bridge ``bridge`` on ``node``, patched to the node's OpenFlow bridge
    at OpenFlow ports ``ports`` (one per pseudowire that ends there)."""

    node: str
    bridge: str
    ports: list[int]


class ServiceRecord(BaseModel):
    """A created service: what was asked, and everything allocated for it (persisted)."""

    id: int
    name: str
    kind: Kind
    endpoints: list[Endpoint]
    attachments: list[Attachment]
    segments: list[Segment]
    vbps: list[Vbp] = []
    vss_mode: str | None = None
    created: str = ""

    @property
    def cookie(self) -> int:
        return service_cookie(self.id)

    def nodes(self) -> set[str]:
        out = {n for s in self.segments for n in s.nodes}
        return out | {v.node for v in self.vbps}

    def labels(self) -> dict[str, set[int]]:
        """Labels this service holds, per link key."""
        out: dict[str, set[int]] = {}
        for s in self.segments:
            for h in s.hops:
                out.setdefault(h.link, set()).add(h.label)
        return out
