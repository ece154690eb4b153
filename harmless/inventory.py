"""The inventory: what HARMLESS manages (YAML, validated with pydantic).

Shape (see README "Inventory reference" and ``examples/lab.yaml``)::

    server:    {datapath: netdev|dpdk, ovs: auto|system|private, netns: NAME, dpdk: {hugepages: bool, ...}}
    switches:  # one or more legacy switches; each gets its own OpenFlow bridge (br-of-<name>)
      - name, driver (napalm name: ios, ...), host, port, username,
        password_env: VAR  |  password_file: /path (mode 0600)      # a *reference*, never the password
        optional_args: {...}                                        # NAPALM optional_args
        trunks: [{switch_port, server_interface, type: system|afxdp|dpdk|dpdkvhostuserclient, ...}]
        access_ports: [FastEthernet0/7, {interface: FastEthernet0/10, ofport: 10, vid: 110, trunk: Gi0/2,
                       qinq: false}]
        stag_tpid: 0x88a8                                           # outer TPID of qinq ports (default: driver's)
        vlan_range: "100-199"
        datapath_id: "0x0000000000000001"
        openflow: {versions: [OpenFlow13], controllers: ["tcp:127.0.0.1:6653"]}

Every validation failure becomes one :class:`harmless.errors.InputError` line naming the file, the field path
(``switches[0].access_ports[1]``) and the fix. Loading changes nothing anywhere.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harmless.errors import InputError
from harmless.switch_drivers import DRIVERS

OF_VERSIONS = ("OpenFlow10", "OpenFlow11", "OpenFlow12", "OpenFlow13", "OpenFlow14", "OpenFlow15")
NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,8}$")   # br-of-<name> must fit a 15-character interface name
CONTROLLER_RE = re.compile(r"^(tcp|ssl):[^:\s]+(:\d{1,5})?$|^(tcp|ssl):\[[0-9a-fA-F:]+\](:\d{1,5})?$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DpdkSettings(_Model):
    """DPDK options of the server's ovs-vswitchd (used when ``server.datapath: dpdk``)."""

    hugepages: bool = Field(False, description="2 MiB hugepages; false = --no-huge (-m 2048 --legacy-mem)")
    socket_mem_mb: int = Field(1024, ge=256)
    lcore_mask: str = "0x1"
    pmd_cpu_mask: str = "0x2"


class Server(_Model):
    """The x86 server running the translator (OTC) and the OpenFlow bridges."""

    datapath: Literal["netdev", "dpdk"] = "netdev"
    ovs: Literal["auto", "system", "private"] = "auto"
    netns: str | None = Field(None, description="network namespace of the private OVS and the trunk interfaces "
                                                "(default: this one)", pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    dpdk: DpdkSettings = DpdkSettings()


class Trunk(_Model):
    """One trunk cable: a switch port carrying the HARMLESS VIDs, and the server interface it plugs into.

    ``type`` is the OVS interface type on the server: ``system`` (kernel netdev, e.g. a veth or NIC, AF_PACKET),
    ``afxdp`` (AF_XDP, generic mode), ``dpdk`` (needs ``devargs``), ``dpdkvhostuserclient`` (needs
    ``vhost_server_path``).
    """

    switch_port: str
    server_interface: str = Field(min_length=1, max_length=15)
    type: Literal["system", "afxdp", "dpdk", "dpdkvhostuserclient"] = "system"
    devargs: str | None = None
    vhost_server_path: str | None = None


class AccessPort(_Model):
    """A legacy access port to migrate. ``ofport`` defaults to the port's index (last number of its name);
    ``vid`` is chosen by the planner unless given; ``trunk`` defaults to the switch's first trunk.

    ``qinq: true`` makes the port an 802.1ad customer port (dot1q-tunnel): its own VID becomes the outer S-tag and
    the frames' customer C-tags reach br-of untouched (for ports that already carry VLANs).

    ``keep`` lists port features the switch keeps running on the migrated port (``voice``: the voice VLAN;
    ``dot1x``: 802.1X/MAB; ``port_security``); without it a port that has one is refused by preflight
    (see docs/preflight.md for what each means for a phone or a supplicant on a migrated port).
    """

    interface: str
    ofport: int | None = Field(None, ge=1, le=65279)
    vid: int | None = None
    trunk: str | None = None
    qinq: bool = False
    keep: list[Literal["voice", "dot1x", "port_security"]] = Field(default_factory=list)


class TlsSettings(_Model):
    """TLS material of the switch side of ``ssl:`` controller connections (``ovs-vsctl set-ssl``).

    Each is a file path; the private key must not be readable by group/others (like ``password_file``).
    """

    private_key: str = Field(description="the switch's private key (PEM), mode 0600")
    certificate: str = Field(description="the switch's certificate (PEM), signed by a CA the controller trusts")
    ca_cert: str = Field(description="the CA certificate (PEM) that signed the controller's certificate")


class OpenFlowSettings(_Model):
    """The OpenFlow side of one br-of: versions offered and controller targets (``tcp:IP:PORT``/``ssl:IP:PORT``).

    ``tls`` is required for ``ssl:`` targets. ``max_backoff_ms`` is OVS's reconnect backoff ceiling
    (Controller.max_backoff, ms, OVS minimum 1000) and ``inactivity_probe_ms`` its echo probe interval
    (Controller.inactivity_probe, ms; 0 disables).
    """

    versions: list[str] = ["OpenFlow13"]
    controllers: list[str] = Field(default_factory=list)
    tls: TlsSettings | None = None
    max_backoff_ms: int = Field(1000, ge=1000, le=3_600_000)
    inactivity_probe_ms: int = Field(5000, ge=0, le=3_600_000)

    @field_validator("versions")
    @classmethod
    def _versions(cls, v):
        if not v:
            raise ValueError("list at least one OpenFlow version, e.g. [OpenFlow13]")
        for x in v:
            if x not in OF_VERSIONS:
                raise ValueError(f"unknown OpenFlow version {x!r}; use one of {', '.join(OF_VERSIONS)}")
        return v

    @field_validator("controllers")
    @classmethod
    def _controllers(cls, v):
        for x in v:
            if not CONTROLLER_RE.match(x):
                raise ValueError(f"controller target {x!r} is not tcp:IP:PORT or ssl:IP:PORT")
        return v


class Switch(_Model):
    """One legacy 802.1Q switch and what to migrate on it."""

    name: str
    driver: str
    host: str
    port: int = Field(22, ge=1, le=65535)
    username: str
    password_env: str | None = None
    password_file: str | None = None
    optional_args: dict = Field(default_factory=dict)
    trunks: list[Trunk] = Field(min_length=1)
    access_ports: list[AccessPort | str] = Field(min_length=1)
    vlan_range: str = "100-999"
    datapath_id: str | None = None
    openflow: OpenFlowSettings = OpenFlowSettings()
    stag_tpid: int | None = Field(None, description="TPID of the outer tag of QinQ ports on the trunks: 0x88a8 "
                                                    "(802.1ad) or 0x8100; default: the driver's")
    vtp: Literal["allow"] | None = Field(None, description="allow: migrate a VTP server although every VLAN "
                                         "HARMLESS creates is propagated to the whole VTP domain (docs/preflight.md)")
    stp_instance_limit: int | None = Field(None, ge=1, le=4094, description="spanning-tree instances (PVST+) the "
                                           "switch runs at most; overrides preflight's platform table")

    @field_validator("stag_tpid")
    @classmethod
    def _tpid(cls, v):
        if v is not None and v not in (0x8100, 0x88A8):
            raise ValueError(f"S-tag TPID {v:#06x} is neither 0x88a8 (802.1ad) nor 0x8100")
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v):
        if not NAME_RE.match(v):
            raise ValueError("use 1-9 lowercase letters/digits starting with a letter (it names br-of-<name>)")
        return v

    @field_validator("access_ports")
    @classmethod
    def _ports(cls, v):
        return [AccessPort(interface=p) if isinstance(p, str) else p for p in v]

    @field_validator("datapath_id")
    @classmethod
    def _dpid(cls, v):
        if v is None:
            return v
        s = v[2:] if v.lower().startswith("0x") else v
        if not re.fullmatch(r"[0-9a-fA-F]{1,16}", s) or int(s, 16) == 0:
            raise ValueError("datapath_id must be a non-zero 64-bit hex number, e.g. 0x0000000000000001")
        return f"{int(s, 16):016x}"

    @property
    def dpid(self) -> str:
        """Datapath id as 16 hex digits: the inventory's, else stable from the switch name (sha1)."""
        if self.datapath_id:
            return self.datapath_id
        return "0000" + hashlib.sha1(f"harmless:{self.name}".encode()).hexdigest()[:12]

    @property
    def bridge(self) -> str:
        """Name of this switch's OpenFlow bridge."""
        return f"br-of-{self.name}"

    def vid_range(self) -> tuple[int, int]:
        lo, _, hi = self.vlan_range.partition("-")
        return int(lo), int(hi or lo)

    def password(self, where: str = "") -> str:
        """Resolve the secret reference. Raises InputError naming the field when unset/unreadable/too open."""
        if self.password_env:
            val = os.environ.get(self.password_env)
            if val is None:
                raise InputError(f"{where}.password_env", f"environment variable {self.password_env} is not set",
                                 f"export {self.password_env}=... before running harmless")
            return val
        p = Path(self.password_file).expanduser()
        try:
            mode = p.stat().st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise InputError(f"{where}.password_file", f"{p} is readable by others (mode {oct(mode & 0o777)})",
                                 f"chmod 600 {p}")
            return p.read_text().rstrip("\n")
        except OSError as e:
            raise InputError(f"{where}.password_file", f"cannot read {p} ({e.strerror})",
                             "point password_file at a readable file holding only the password (mode 0600)") from e


class Inventory(_Model):
    """The whole inventory file. ``netbox`` (optional) adds switches read from NetBox (:mod:`harmless.netbox`);
    they follow the file's own ``switches`` (so ``switches[i]`` in errors counts the file's switches first)."""

    server: Server = Server()
    netbox: dict | None = None
    switches: list[Switch] = Field(min_length=1)


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("str", "AccessPort") or "[" in str(part):   # union branch names from pydantic
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


_FIXES = {
    "missing": "add this field (see README, Inventory reference)",
    "extra_forbidden": "remove it or check its spelling (see README, Inventory reference)",
    "literal_error": "use one of the listed values",
}


def _check(inv: Inventory, src: str) -> None:
    """Cross-field checks pydantic cannot express; raise the first problem as InputError."""
    names = set()
    for i, sw in enumerate(inv.switches):
        w = f"{src}: switches[{i}]"
        if sw.name in names:
            raise InputError(f"{w}.name", f"duplicate switch name {sw.name!r}", "give each switch its own name")
        names.add(sw.name)
        if sw.driver not in DRIVERS:
            raise InputError(f"{w}.driver", f"unknown driver {sw.driver!r}",
                             f"use one of: {', '.join(sorted(DRIVERS))}")
        if "password" in sw.optional_args or "secret" in sw.optional_args:
            raise InputError(f"{w}.optional_args", "holds a password inline",
                             "use password_env or password_file (the enable secret is the same password)")
        if bool(sw.password_env) == bool(sw.password_file):
            raise InputError(f"{w}.password_env", "set exactly one of password_env and password_file",
                             "reference the secret: password_env: VAR or password_file: /path (mode 0600)")
        if not re.fullmatch(r"\d{1,4}(-\d{1,4})?", sw.vlan_range):
            raise InputError(f"{w}.vlan_range", f"{sw.vlan_range!r} is not a VID range", "write it as 100-199")
        lo, hi = sw.vid_range()
        if not (1 <= lo <= hi <= 4094):
            raise InputError(f"{w}.vlan_range", f"{sw.vlan_range} is outside 1-4094 or reversed",
                             "use a range inside 2-4094, e.g. 100-199")
        trunk_ports = set()
        for j, t in enumerate(sw.trunks):
            if t.switch_port in trunk_ports:
                raise InputError(f"{w}.trunks[{j}].switch_port", f"duplicate trunk {t.switch_port}", "list it once")
            trunk_ports.add(t.switch_port)
            if t.type == "dpdk" and not t.devargs:
                raise InputError(f"{w}.trunks[{j}].devargs", "type dpdk needs devargs",
                                 "e.g. devargs: 0000:01:00.0 or net_af_packet0,iface=eth1")
            if t.type == "dpdkvhostuserclient" and not t.vhost_server_path:
                raise InputError(f"{w}.trunks[{j}].vhost_server_path", "type dpdkvhostuserclient needs a socket path",
                                 "e.g. vhost_server_path: /run/harmless/trunk.sock")
            if t.type in ("dpdk", "dpdkvhostuserclient") and inv.server.datapath != "dpdk":
                raise InputError(f"{w}.trunks[{j}].type", f"type {t.type} needs server.datapath: dpdk",
                                 "set server.datapath: dpdk or use type system/afxdp")
        seen = {}
        for j, p in enumerate(sw.access_ports):
            pw = f"{w}.access_ports[{j}]"
            if p.interface in seen:
                raise InputError(pw, f"duplicate port {p.interface} (also access_ports[{seen[p.interface]}])",
                                 "list each access port once")
            seen[p.interface] = j
            if p.interface in trunk_ports:
                raise InputError(pw, f"{p.interface} is the trunk port", "do not list the trunk as an access port")
            if p.vid is not None:
                if not 1 <= p.vid <= 4094:
                    raise InputError(f"{pw}.vid", f"VID {p.vid} is outside 1-4094", "use a VID in vlan_range")
                if not lo <= p.vid <= hi:
                    raise InputError(f"{pw}.vid", f"VID {p.vid} is outside vlan_range {sw.vlan_range}",
                                     "pick a VID inside vlan_range or widen it")
            if p.trunk is not None and p.trunk not in trunk_ports:
                raise InputError(f"{pw}.trunk", f"{p.trunk} is not one of this switch's trunks",
                                 f"use one of: {', '.join(sorted(trunk_ports))}")
        vids = [p.vid for p in sw.access_ports if p.vid is not None]
        if len(vids) != len(set(vids)):
            raise InputError(f"{w}.access_ports", "two access ports ask for the same vid", "give each port its own VID")


def parse_inventory(text: str, src: str = "<inventory>") -> Inventory:
    """Parse and validate inventory YAML text. ``src`` names the file in errors. Raises InputError."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise InputError(f"{src}{line}", f"not valid YAML ({getattr(e, 'problem', e)})", "fix the YAML syntax") from e
    if not isinstance(data, dict):
        raise InputError(src, "the inventory must be a YAML mapping with server: and switches:",
                         "see examples/lab.yaml")
    if data.get("netbox") is not None:
        from harmless.netbox import fetch_switches
        data = {**data, "switches": [*(data.get("switches") or []), *fetch_switches(data["netbox"], src)]}
        if not data["switches"]:
            raise InputError(f"{src}: netbox", "NetBox returned no device with a 'harmless' config context",
                             "check netbox.filter and the devices' config contexts (see README, NetBox)")
    for i, sw in enumerate(data.get("switches") or []):
        if isinstance(sw, dict) and "password" in sw:
            raise InputError(f"{src}: switches[{i}].password", "passwords may not be written in the inventory",
                             "use password_env: VAR or password_file: /path (mode 0600)")
    try:
        inv = Inventory.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        fix = _FIXES.get(err["type"], "see README, Inventory reference")
        msg = err["msg"].removeprefix("Value error, ")
        raise InputError(f"{src}: {_loc(err['loc'])}", msg, fix) from None
    _check(inv, src)
    return inv


def load_inventory(path: str | Path) -> Inventory:
    """Read and validate an inventory file. Raises InputError (file unreadable, invalid)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise InputError(str(p), f"cannot read the inventory ({e.strerror})", "pass an existing file with -i") from e
    return parse_inventory(text, str(p))


def port_index(interface: str) -> int | None:
    """Legacy port index = the last number in the interface name (``FastEthernet0/7`` -> 7, ``Gi1/0/12`` -> 12)."""
    m = re.search(r"(\d+)$", interface)
    return int(m.group(1)) if m else None
