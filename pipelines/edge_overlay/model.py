"""The edge overlay's tenant/VM registry: a small declarative YAML, validated with pydantic.

    name: demo                       # 1-4 lowercase letters/digits: namespaces are hv<name>-<server|vm|core|ctl>
    servers: [s1, s2, s3]            # physical servers, each with its own OpenFlow edge switch
    tenants:
      - name: red
        vms:
          - {name: r1, mac: "52:54:00:11:00:01", ip: 10.0.0.1/24, server: s1}        # port: auto (2, 3, ...)
          - {name: r2, mac: "52:54:00:11:00:02", ip: 10.0.0.2/24, server: s2, port: 5}
      - name: blue                   # the same IPs as red: address spaces are per tenant
        vms: ...

Rules (Kawashima & Matsuo, Sec. III): VM IPs are unique *within* a tenant (tenants may overlap); VM MACs are unique
in the whole registry (a MAC identifies the VM on the sender's edge switch); a VM sits on one server's edge switch port
(OpenFlow port 2..999; port 1 is the server's uplink into the legacy L2 core).
"""
from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harmless.errors import InputError

NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,5}$")
LAB_RE = re.compile(r"^[a-z][a-z0-9]{0,3}$")
MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
UPLINK_PORT = 1            #: OpenFlow port of every edge switch's uplink (paper Fig. 5/6: "p1: trunk")
FIRST_VM_PORT = 2
MAX_VM_PORT = 999
RESERVED = {"core", "ctl"}


def vm_iface(vm: str) -> str:
    """The edge switch's port (interface) name of a VM: ``v-<vm>``; the controller finds VMs by this name."""
    return f"v-{vm}"


def vm_of_iface(name: str) -> str | None:
    """Inverse of :func:`vm_iface` (None for other ports)."""
    return name[2:] if name.startswith("v-") else None


class Vm(BaseModel):
    """One VM: its name, MAC, IPv4 address/prefix, server and (optional) OpenFlow port."""

    model_config = ConfigDict(extra="forbid")
    name: str
    mac: str
    ip: str
    server: str
    port: int | None = Field(None, ge=1, le=MAX_VM_PORT)

    @field_validator("name")
    @classmethod
    def _n(cls, v):
        if not NAME_RE.match(v) or v in RESERVED:
            raise ValueError("VM names are 1-6 lowercase letters/digits, not core or ctl")
        return v

    @field_validator("mac")
    @classmethod
    def _m(cls, v):
        v = v.lower()
        if not MAC_RE.match(v) or int(v[:2], 16) & 1 or v == "00:00:00:00:00:00":
            raise ValueError("a unicast MAC like 52:54:00:11:00:01")
        return v

    @field_validator("ip")
    @classmethod
    def _ip(cls, v):
        try:
            i = ipaddress.IPv4Interface(v)
        except ValueError:
            raise ValueError("an IPv4 address with prefix, like 10.0.0.1/24") from None
        if "/" not in v:
            raise ValueError("give the prefix length too, like 10.0.0.1/24")
        return str(i)

    @property
    def address(self) -> str:
        """The IPv4 address without prefix."""
        return self.ip.split("/")[0]


class Tenant(BaseModel):
    """One tenant: its name and VMs (an address space of its own)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    vms: list[Vm] = []

    @field_validator("name")
    @classmethod
    def _n(cls, v):
        if not NAME_RE.match(v):
            raise ValueError("tenant names are 1-6 lowercase letters/digits")
        return v


class HarmlessEdge(BaseModel):
    """Optional: one server whose edge switch is a HARMLESS ``br-of`` on an emulated legacy switch (bare-metal hosts
    on legacy access ports are the overlay end points). Its VMs' ``port`` is their legacy port number
    (FastEthernet0/<port>, 1-23, required); ``uplink_port`` is the legacy port cabled to the L2 core (a dot1q-tunnel
    port, so the overlay's 802.1Q tags pass)."""

    model_config = ConfigDict(extra="forbid")
    server: str
    uplink_port: int = Field(24, ge=1, le=24)


class Registry(BaseModel):
    """The whole registry (the topology file). Validation errors name the field (see :func:`load_registry`)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    servers: list[str]
    tenants: list[Tenant]
    openflow_port: int = Field(6653, ge=1, le=65535)
    harmless: HarmlessEdge | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, v):
        if not LAB_RE.match(v):
            raise ValueError("1-4 lowercase letters/digits (namespaces are hv<name>-...)")
        return v

    @field_validator("servers")
    @classmethod
    def _servers(cls, v):
        if not 1 <= len(v) <= 250:
            raise ValueError("servers: 1-250 server names")
        for s in v:
            if not NAME_RE.match(s) or s in RESERVED:
                raise ValueError(f"server {s!r}: 1-6 lowercase letters/digits, not core or ctl")
        if len(set(v)) != len(v):
            raise ValueError("server names must be distinct")
        return v

    @model_validator(mode="after")
    def _refs(self):
        tn = [t.name for t in self.tenants]
        if len(set(tn)) != len(tn):
            raise ValueError("tenant names must be distinct")
        seen_name, seen_mac, seen_port = {}, {}, {}
        for t in self.tenants:
            ips = {}
            for v in t.vms:
                if v.name in seen_name or v.name in self.servers:
                    raise ValueError(f"VM {v.name!r}: names must be distinct (also from server names)")
                seen_name[v.name] = t.name
                if v.mac in seen_mac:
                    raise ValueError(f"VM {v.name}: mac {v.mac} is already VM {seen_mac[v.mac]}'s")
                seen_mac[v.mac] = v.name
                if v.address in ips:
                    raise ValueError(f"VM {v.name}: ip {v.address} is already VM {ips[v.address]}'s in tenant "
                                     f"{t.name} (IPs must be unique within a tenant)")
                ips[v.address] = v.name
                if v.server not in self.servers:
                    raise ValueError(f"VM {v.name}: server {v.server!r} is not in servers")
                if self.harmless and v.server == self.harmless.server and (
                        v.port is None or not 1 <= v.port <= 23 or v.port == self.harmless.uplink_port):
                    raise ValueError(f"VM {v.name}: on the HARMLESS server {v.server} a VM needs port: its legacy "
                                     f"access port 1-23 (not the uplink {self.harmless.uplink_port})")
                if v.port is not None:
                    if (v.server, v.port) in seen_port:
                        raise ValueError(f"VM {v.name}: port {v.port} on {v.server} is already "
                                         f"VM {seen_port[(v.server, v.port)]}'s")
                    seen_port[(v.server, v.port)] = v.name
        if self.harmless and self.harmless.server not in self.servers:
            raise ValueError(f"harmless.server {self.harmless.server!r} is not in servers")
        for _, v in self.vms():
            on_harmless = self.harmless and v.server == self.harmless.server
            if v.port is not None and v.port < FIRST_VM_PORT and not on_harmless:
                raise ValueError(f"VM {v.name}: port {v.port}: port 1 is the uplink; use 2-{MAX_VM_PORT}")
        return self

    # ---------------------------------------------------------------- lookups
    def vms(self) -> list[tuple[str, Vm]]:
        """All ``(tenant, vm)`` pairs, in file order."""
        return [(t.name, v) for t in self.tenants for v in t.vms]

    def vm(self, name: str) -> tuple[str, Vm] | None:
        """``(tenant, vm)`` of the VM called ``name``, or None."""
        return next(((t, v) for t, v in self.vms() if v.name == name), None)

    def ports(self) -> dict[str, int]:
        """OpenFlow port of every VM: the given one, else the lowest free one (>= 2) on its server."""
        used = {(v.server, v.port) for _, v in self.vms() if v.port is not None}
        out = {}
        for _, v in self.vms():
            p = v.port
            if p is None:
                p = FIRST_VM_PORT
                while (v.server, p) in used:
                    p += 1
                used.add((v.server, p))
            out[v.name] = p
        return out


def parse_registry(data, where: str) -> Registry:
    """Validate a registry dict. Raises :class:`InputError` naming ``where`` and the first bad field."""
    try:
        return Registry.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise InputError(f"{where}: {loc}", first["msg"].removeprefix("Value error, "),
                         "see examples/overlay.yaml") from None


def load_registry(path: str | Path) -> Registry:
    """Read and validate a topology/registry YAML file.

    Raises:
        InputError: missing file, bad YAML or a bad field (the message names the file and the field).
    """
    p = Path(path)
    if not p.exists():
        raise InputError(str(path), "file not found", "give an overlay topology file, e.g. examples/overlay.yaml")
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        raise InputError(str(path), f"not valid YAML ({str(e).splitlines()[0]})", "fix the syntax") from None
    return parse_registry(data, str(path))
