"""OSHI topology files (YAML, validated with pydantic) and the pure address/port plan derived from them.

    name: demo                 # 1-4 lowercase letters/digits: namespaces are hl-o<name>-<node>
    controller: {node: cr1}    # the controller's namespace is cabled to this node (reached in-band, OSPF-routed)
    label_range: [16, 1048575]
    nodes:                     # OSHI nodes: role pe (provider edge) or cr (core router)
      - {name: pe1, role: pe, harmless: true}   # ports are legacy access ports behind the HARMLESS translator
      - {name: pe2, role: pe}
    links:                     # node-node cables (one OpenFlow port on each side)
      - [pe1, pe2]
    ces:                       # customer edges; each has an "ip" port (best-effort IP) + one port per service name
      - {name: ce1, node: pe1, ports: [vll, vss]}
    services:                  # created by the demo; end points are <ce>.<port>
      - {name: vll1, kind: vll, endpoints: [ce1.vll, ce3.vll]}

Addressing (all private, inside the lab's namespaces): node loopback 10.255.0.<i>/32, link k 10.0.<k>.0/24
(.1 on the first node), CE c best-effort 192.168.<c>.0/24 (.1 on the PE), controller 10.254.0.0/24 (.2 = controller),
service s 10.200.<s>.<c>/24 on the CE ports.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harmless.errors import InputError

NODE_RE = re.compile(r"^[a-z][a-z0-9]{0,5}$")
RESERVED = re.compile(r"^(sw|ctl|h\d+)$")          # names the lab itself uses for namespaces
INTERNAL_BASE = 1000                                 # internal port = INTERNAL_BASE + physical port
DPID_BASE = 0x4F534800                               # "OSH" + node index


class Node(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    role: Literal["pe", "cr"] = "pe"
    harmless: bool = False

    @field_validator("name")
    @classmethod
    def _n(cls, v):
        if not NODE_RE.match(v) or RESERVED.match(v):
            raise ValueError("node names are 1-6 lowercase letters/digits, not sw, ctl or h<N>")
        return v


class Ce(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    node: str
    ports: list[str] = []

    @field_validator("name")
    @classmethod
    def _n(cls, v):
        if not NODE_RE.match(v) or RESERVED.match(v):
            raise ValueError("CE names are 1-6 lowercase letters/digits, not sw, ctl or h<N>")
        return v

    @field_validator("ports")
    @classmethod
    def _p(cls, v):
        for p in v:
            if not re.match(r"^[a-z][a-z0-9]{0,7}$", p) or p == "ip":
                raise ValueError(f"CE port {p!r}: 1-8 lowercase letters/digits, not 'ip' (that one is implicit)")
        if len(set(v)) != len(v):
            raise ValueError("CE port names must be distinct")
        return v


class ServiceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["vll", "pw", "vss"]
    endpoints: list[str]
    vss_mode: Literal["optimized", "random"] = "optimized"


class Controller(BaseModel):
    model_config = ConfigDict(extra="forbid")
    node: str
    openflow_port: int = Field(6653, ge=1, le=65535)


class TopologyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    controller: Controller
    label_range: tuple[int, int] = (16, 1048575)
    nodes: list[Node]
    links: list[tuple[str, str]]
    ces: list[Ce] = []
    services: list[ServiceSpec] = []

    @field_validator("name")
    @classmethod
    def _name(cls, v):
        if not re.match(r"^[a-z][a-z0-9]{0,3}$", v):
            raise ValueError("lab name: 1-4 lowercase letters/digits (namespaces are hl-o<name>-<node>)")
        return v

    @model_validator(mode="after")
    def _refs(self):
        names = [n.name for n in self.nodes]
        if len(set(names)) != len(names):
            raise ValueError("node names must be distinct")
        ce_names = [c.name for c in self.ces]
        if len(set(ce_names)) != len(ce_names) or set(ce_names) & set(names):
            raise ValueError("CE names must be distinct and differ from node names")
        if self.controller.node not in names:
            raise ValueError(f"controller.node {self.controller.node!r} is not a node")
        seen = set()
        for a, b in self.links:
            if a not in names or b not in names or a == b:
                raise ValueError(f"link [{a}, {b}] must join two different nodes")
            if frozenset((a, b)) in seen:
                raise ValueError(f"link [{a}, {b}] appears twice")
            seen.add(frozenset((a, b)))
        for c in self.ces:
            if c.node not in names:
                raise ValueError(f"CE {c.name}: node {c.node!r} is not a node")
        if sum(n.harmless for n in self.nodes) > 1:
            raise ValueError("at most one node can be a HARMLESS node (one legacy lab switch)")
        ports = {(c.name, p) for c in self.ces for p in c.ports}
        for s in self.services:
            for e in s.endpoints:
                if tuple(e.split(".", 1)) not in ports:
                    raise ValueError(f"service {s.name}: end point {e!r} is not <ce>.<port> of a CE port")
        lo, hi = self.label_range
        if not 16 <= lo <= hi <= 1048575:
            raise ValueError("label_range must lie within 16..1048575")
        return self


def load_topology(path: str) -> TopologyFile:
    """Read and validate a topology file. Raises InputError naming the file and field."""
    p = Path(path)
    if not p.exists():
        raise InputError(path, "file not found", "give an OSHI topology file, e.g. examples/oshi-demo.yaml")
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        raise InputError(path, f"not valid YAML ({e})", "fix the syntax") from None
    try:
        return TopologyFile.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise InputError(f"{path}: {loc}", first["msg"].removeprefix("Value error, "),
                         "see examples/oshi-demo.yaml") from None


# ----------------------------------------------------------------------------- the pure plan
@dataclass
class Port:
    """One physical port of a node: OpenFlow port, interface name in the node's namespace, what is at the other
    end (``peer`` node, CE port ``ce``/``ce_port``, or the controller), the internal port (IP stack) if any."""

    ofport: int
    name: str
    peer: str | None = None
    ce: str | None = None
    ce_port: str | None = None
    controller: bool = False
    ip: str | None = None           # address/prefix on the internal port
    internal: str | None = None

    @property
    def internal_ofport(self) -> int | None:
        return INTERNAL_BASE + self.ofport if self.internal else None


@dataclass
class NodePlan:
    name: str
    index: int
    harmless: bool
    netns: str
    dpid: int
    loopback: str
    ports: list[Port] = field(default_factory=list)

    def edge_ports(self) -> dict[str, int]:
        """Ports that may carry service end points (towards CE service ports)."""
        return {p.name: p.ofport for p in self.ports if p.ce and p.ce_port != "ip"}

    def port_pairs(self) -> dict[int, int]:
        return {p.ofport: p.internal_ofport for p in self.ports if p.internal}


@dataclass
class CePlan:
    name: str
    index: int
    node: str
    netns: str
    ip: str                          # best-effort address/prefix
    gateway: str
    service_ips: dict[str, str] = field(default_factory=dict)   # CE port -> address/prefix


@dataclass
class LabPlan:
    name: str
    nodes: dict[str, NodePlan]
    ces: dict[str, CePlan]
    links: list[tuple[str, str]]
    controller_node: str
    controller_ns: str
    controller_ip: str
    openflow_port: int

    def endpoint(self, ref: str) -> tuple[str, str]:
        """``<ce>.<port>`` -> (node, edge port name)."""
        ce, port = ref.split(".", 1)
        return self.ces[ce].node, f"{ce}-{port}"


def ns_name(lab: str, who: str) -> str:
    return f"hl-o{lab}-{who}"


def make_plan(t: TopologyFile) -> LabPlan:
    """Ports, OpenFlow numbers, names and addresses of every node and CE. Pure.

    Port numbering per node: its links in file order, then the controller cable, then its CEs' ports (``ip`` first);
    OpenFlow port = position (1-based; on a HARMLESS node that is also the legacy access port FastEthernet0/<n>).
    """
    nodes = {n.name: NodePlan(n.name, i, n.harmless, ns_name(t.name, n.name), DPID_BASE + i, f"10.255.0.{i}/32")
             for i, n in enumerate(t.nodes, start=1)}

    def add(node: str, **kw) -> Port:
        np_ = nodes[node]
        p = Port(ofport=len(np_.ports) + 1, **kw)
        np_.ports.append(p)
        return p

    for k, (a, b) in enumerate(t.links, start=1):
        add(a, name=b, peer=b, internal=f"i-{b}", ip=f"10.0.{k}.1/24")
        add(b, name=a, peer=a, internal=f"i-{a}", ip=f"10.0.{k}.2/24")
    add(t.controller.node, name="ctl", controller=True, internal="i-ctl", ip="10.254.0.1/24")
    ces = {}
    for c_i, c in enumerate(t.ces, start=1):
        add(c.node, name=f"{c.name}-ip", ce=c.name, ce_port="ip", internal=f"i-{c.name}", ip=f"192.168.{c_i}.1/24")
        for p in c.ports:
            add(c.node, name=f"{c.name}-{p}", ce=c.name, ce_port=p)
        ces[c.name] = CePlan(c.name, c_i, c.node, ns_name(t.name, c.name), f"192.168.{c_i}.2/24", f"192.168.{c_i}.1")
    for s_i, s in enumerate(t.services, start=1):
        for e in s.endpoints:
            ce, port = e.split(".", 1)
            ces[ce].service_ips[port] = f"10.200.{s_i}.{ces[ce].index}/24"
    return LabPlan(t.name, nodes, ces, list(t.links), t.controller.node, ns_name(t.name, "ctl"), "10.254.0.2",
                   t.controller.openflow_port)
