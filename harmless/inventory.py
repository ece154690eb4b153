"""The inventory: what HARMLESS manages (YAML, validated with pydantic).

Shape (see README "Inventory reference" and ``examples/lab.yaml``)::

    server:    {datapath: netdev|dpdk, ovs: auto|system|private, netns: NAME, dpdk: {hugepages: bool, ...}}
    switches:  # one or more legacy switches; each gets its own OpenFlow bridge (br-of-<name>)
      - name, driver (napalm name: ios, ...), host, port, username,
        password_env: VAR  |  password_file: /path (mode 0600)      # a *reference*, never the password
        optional_args: {...}                                        # NAPALM optional_args
        trunks: [{switch_port, server_interface, type: auto|system|afxdp|dpdk|dpdkvhostuserclient, ...}]
        access_ports: [FastEthernet0/7, {interface: FastEthernet0/10, ofport: 10, vid: 110, trunk: Gi0/2,
                       qinq: false}]
        stag_tpid: 0x88a8                                           # outer TPID of qinq ports (default: driver's)
        vlan_range: "100-199"
        datapath_id: "0x0000000000000001"
        openflow: {versions: [OpenFlow13], controllers: ["tcp:127.0.0.1:6653"]}

Every validation failure becomes one :class:`harmless.errors.InputError` line naming the file, the field path
(``switches[0].access_ports[1]``) and the fix. Loading changes nothing anywhere and contacts no device; it is bounded
(file size, YAML nesting, nodes after alias expansion) so that any file loads within 256 MiB and 5 s. The checks are
listed in ``docs/inventory-validation.md``; interface names are compared canonically per driver
(:mod:`harmless.switch_drivers.names`).
"""
from __future__ import annotations

import hashlib
import ipaddress
import logging
import os
import re
import stat
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harmless.errors import InputError
from harmless.qos.model import QosSettings, check_inventory as check_qos
from harmless.switch_drivers import DRIVERS
from harmless.switch_drivers import names

log = logging.getLogger(__name__)

OF_VERSIONS = ("OpenFlow10", "OpenFlow11", "OpenFlow12", "OpenFlow13", "OpenFlow14", "OpenFlow15")
NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,8}$")   # br-of-<name> must fit a 15-character interface name
#: OpenFlow's IANA port (RFC-less, IANA "openflow" 6653/tcp); OVS uses it when a tcp:/ssl: target gives none
OPENFLOW_PORT = 6653
#: bounds on reading an inventory, so that any file loads within 256 MiB and 5 s (issue #11): the file size, the
#: number of YAML nodes (after alias expansion) and the nesting depth. A 200-switch x 48-port inventory is about
#: 0.5 MiB and 65,000 nodes at depth 5; 150,000 nodes load in about 1.5 s on one busy 2 GHz core (YAML is most of it).
MAX_INVENTORY_BYTES = 4 * 1024 * 1024
MAX_YAML_NODES = 150_000
MAX_YAML_DEPTH = 32
_LABEL = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_IFNAME = re.compile(r"^[^/\s:]{1,15}$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _int_name(v):
    """Interface names may be plain numbers (ProCurve ``7``), which YAML reads as int: keep them as text."""
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else v


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

    ``type`` is the OVS interface type on the server: ``auto`` (default: AF_XDP when it attaches to the kernel
    interface, else AF_PACKET, with the reason; :mod:`harmless.otc.trunks`), ``system`` (kernel netdev, e.g. a veth
    or NIC, AF_PACKET), ``afxdp`` (AF_XDP, generic mode), ``dpdk`` (needs ``devargs``), ``dpdkvhostuserclient``
    (needs ``vhost_server_path``).
    """

    switch_port: str
    server_interface: str = Field(min_length=1, max_length=15)
    type: Literal["auto", "system", "afxdp", "dpdk", "dpdkvhostuserclient"] = "auto"
    devargs: str | None = None
    vhost_server_path: str | None = None

    _names = field_validator("switch_port", mode="before")(lambda v: _int_name(v))


class AccessPort(_Model):
    """A legacy access port to migrate. ``interface`` is kept as written and compared canonically (``Gi0/7`` =
    ``GigabitEthernet0/7``); ``ofport`` defaults to the number the name gives under the numbering scheme
    (``docs/ofport-numbering.md``: ``FastEthernet0/7`` -> 7, ``Gi2/0/7`` -> 2007, ``Port-channel1`` -> 60001);
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
    qos: QosSettings | None = Field(None, description="per-port ingress policing / egress shaping (docs/qos.md)")

    _names = field_validator("interface", "trunk", mode="before")(lambda v: _int_name(v))


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



class Switch(_Model):
    """One legacy 802.1Q switch and what to migrate on it."""

    name: str
    driver: str
    host: str = Field(min_length=1)
    port: int = Field(22, ge=1, le=65535)
    username: str = Field(min_length=1)
    password_env: str | None = None
    password_file: str | None = None
    optional_args: dict = Field(default_factory=dict)
    trunks: list[Trunk] = Field(min_length=1)
    access_ports: list[AccessPort | str] = Field(min_length=1)
    vlan_range: str = "100-999"
    datapath_id: str | None = None
    openflow: OpenFlowSettings = OpenFlowSettings()
    command_timeout_s: int = Field(120, ge=10, le=3600, description=(
        "longest wait (s) for one device command, e.g. `write memory` or `configure replace` on a busy switch "
        "(IOS commits take 30-90 s on large configs); also the SSH/API connect timeout"))
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

    @field_validator("access_ports", mode="before")
    @classmethod
    def _int_ports(cls, v):
        return [_int_name(p) for p in v] if isinstance(v, list) else v

    @field_validator("access_ports")
    @classmethod
    def _ports(cls, v):
        return [AccessPort(interface=p) if isinstance(p, str) else p for p in v]

    @field_validator("datapath_id", mode="before")
    @classmethod
    def _int_dpid(cls, v):
        # unquoted 0x0000000000000001 is an int to YAML: keep its value
        if isinstance(v, int) and not isinstance(v, bool):
            if not 0 < v < 2 ** 64:
                raise ValueError("datapath_id must be a non-zero 64-bit hex number, e.g. 0x0000000000000001")
            return f"{v:x}"
        return v

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
        """``vlan_range`` as ``(first VID, last VID)``."""
        lo, _, hi = self.vlan_range.partition("-")
        return int(lo), int(hi or lo)

    def canonical(self, interface: str) -> str:
        """``interface`` spelled as this switch's OS prints it (``Gi0/1`` -> ``GigabitEthernet0/1`` on IOS), for
        comparisons; see :func:`harmless.switch_drivers.names.canonical_interface`."""
        return names.canonical_interface(self.driver, interface)

    def ofport_of(self, port: "AccessPort") -> int:
        """OpenFlow port number of an access port: its ``ofport``, else the numbering scheme's
        (:func:`harmless.switch_drivers.names.default_ofport`, ``docs/ofport-numbering.md``).

        Raises:
            ValueError: no number can be derived from the name (validation refuses such inventories).
        """
        return port.ofport if port.ofport is not None else names.default_ofport(self.driver, port.interface)

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
    "string_type": "quote the value ('...') so that YAML reads it as text",
}


def host_problem(host: str) -> str | None:
    """Why ``host`` is neither an IP address nor a valid DNS name (RFC 1123 labels); None when it is one.

    Names whose labels are all digits must be IPv4 addresses (``999.1.1.1`` is refused, not looked up).
    """
    h = host.strip()
    if h != host or not h:
        return f"{host!r} has blanks around it" if h else "is empty"
    try:
        ipaddress.ip_address(h)
        return None
    except ValueError:
        pass
    if h.startswith("[") and h.endswith("]"):
        return f"{host!r} has brackets (write the IPv6 address without them)"
    if re.fullmatch(r"[^:\s]+:\d+", h):
        return f"{host!r} has a port in it"
    if "://" in h or "/" in h or "@" in h:
        return f"{host!r} is a URL, not a host"
    labels = h.removesuffix(".").split(".")
    if re.fullmatch(r"[\d.]+", h) or labels[-1].isdigit():
        return f"{host!r} is not a valid IPv4 address"
    if len(h) > 253 or not all(_LABEL.match(x) for x in labels):
        return f"{host!r} is not a valid IP address or DNS name"
    return None


def _host_key(host: str) -> str:
    """A host as compared for "the same device twice": IP addresses in one notation, names in lower case,
    ``localhost`` as ``127.0.0.1`` (RFC 6761 sec. 6.3: it always resolves to loopback; no DNS is asked)."""
    try:
        return ipaddress.ip_address(host).compressed
    except ValueError:
        name = host.lower().removesuffix(".")
        return "127.0.0.1" if name == "localhost" or name.endswith(".localhost") else name


def parse_controller(target: str) -> tuple[str, str, int]:
    """Split an OVS controller target ``tcp:HOST[:PORT]`` / ``ssl:HOST[:PORT]`` (IPv6 in brackets).

    Returns:
        ``(method, host, port)``; ``port`` defaults to 6653 (:data:`OPENFLOW_PORT`, as OVS does).

    Raises:
        ValueError: the message says what is wrong (unknown method, bad host, port 0 or above 65535).
    """
    method, sep, rest = str(target).partition(":")
    if not sep or method not in ("tcp", "ssl"):
        raise ValueError(f"controller target {target!r} is not tcp:IP:PORT or ssl:IP:PORT")
    if rest.startswith("["):
        m = re.fullmatch(r"\[([^\]]*)\](?::(\d+))?", rest)
        if not m:
            raise ValueError(f"controller target {target!r} is not tcp:[IPv6]:PORT")
        host, port = m.group(1), m.group(2)
        try:
            if ipaddress.ip_address(host).version != 6:
                raise ValueError
        except ValueError:
            raise ValueError(f"controller target {target!r}: {host!r} is not an IPv6 address") from None
    else:
        if rest.count(":") > 1:
            raise ValueError(f"controller target {target!r}: put an IPv6 address in brackets, "
                             f"e.g. {method}:[::1]:{OPENFLOW_PORT}")
        host, colon, port = rest.partition(":")
        if colon and not port:
            raise ValueError(f"controller target {target!r} has nothing after the last ':'")
        problem = host_problem(host)
        if problem:
            raise ValueError(f"controller target {target!r}: host {problem}")
    if port is None or port == "":
        return method, _host_key(host), OPENFLOW_PORT
    if not re.fullmatch(r"[0-9]{1,5}", port) or not 1 <= int(port) <= 65535:
        raise ValueError(f"controller target {target!r}: port {port} is not a TCP port (1-65535)")
    return method, _host_key(host), int(port)


def _mask_problem(mask: str) -> str | None:
    """Why a DPDK CPU mask is not a non-zero hex number; None when it is one."""
    m = re.fullmatch(r"(0[xX])?([0-9a-fA-F]{1,256})", mask.strip())
    if not m:
        return f"{mask!r} is not a hex CPU mask"
    if int(m.group(2), 16) == 0:
        return f"{mask!r} selects no CPU"
    return None


def _file_problem(path: str, secret: bool) -> str | None:
    """Why a TLS file cannot be used (missing, not a file, unreadable, a private key readable by others)."""
    p = Path(path).expanduser()
    try:
        st = p.stat()
    except OSError as e:
        return f"cannot read {p} ({e.strerror})"
    if not stat.S_ISREG(st.st_mode):
        return f"{p} is not a file"
    if not os.access(p, os.R_OK):
        return f"cannot read {p} (permission denied)"
    if secret and st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        return f"{p} is readable by others (mode {oct(st.st_mode & 0o777)})"
    return None


def _check_server(inv: Inventory, src: str) -> None:
    for field in ("lcore_mask", "pmd_cpu_mask"):
        mask = getattr(inv.server.dpdk, field)
        problem = _mask_problem(mask)
        if problem:
            raise InputError(f"{src}: server.dpdk.{field}", problem,
                             "write a non-zero hex mask of CPUs, e.g. 0x2 for CPU 1")
        bits = int(mask, 16).bit_length()
        cpus = os.cpu_count() or 1
        if bits > cpus:
            log.warning("%s: server.dpdk.%s: %s names CPU %d but this machine has %d CPUs", src, field, mask,
                        bits - 1, cpus)


def _check_openflow(sw: Switch, w: str) -> None:
    seen: dict[tuple, int] = {}
    for k, target in enumerate(sw.openflow.controllers):
        cw = f"{w}.openflow.controllers[{k}]"
        try:
            key = parse_controller(target)
        except ValueError as e:
            raise InputError(cw, str(e), f"write tcp:IP:PORT or ssl:IP:PORT, e.g. tcp:192.0.2.1:{OPENFLOW_PORT}") \
                from None
        if key in seen:
            raise InputError(cw, f"{target} is the same controller as controllers[{seen[key]}]",
                             "list each controller once")
        seen[key] = k
    ssl = [k for k, t in enumerate(sw.openflow.controllers) if t.startswith("ssl:")]
    tls = sw.openflow.tls
    if ssl and tls is None:
        raise InputError(f"{w}.openflow.tls", f"controllers[{ssl[0]}] is an ssl: target but no TLS material is set",
                         "add openflow.tls: {private_key, certificate, ca_cert} (see README, Inventory reference) "
                         "or use tcp:")
    if tls is not None:
        for field in ("private_key", "certificate", "ca_cert"):
            problem = _file_problem(getattr(tls, field), secret=field == "private_key")
            if problem:
                fix = (f"chmod 600 {Path(tls.private_key).expanduser()}" if "readable by others" in problem else
                       "point it at an existing PEM file")
                raise InputError(f"{w}.openflow.tls.{field}", problem, fix)


def _check_ports(sw: Switch, w: str) -> None:
    """Trunks and access ports of one switch, every name compared in its canonical spelling."""
    trunks: dict[str, int] = {}
    for j, t in enumerate(sw.trunks):
        tw = f"{w}.trunks[{j}]"
        problem = names.interface_problem(sw.driver, t.switch_port)
        if problem:
            raise InputError(f"{tw}.switch_port", problem, "use the port's name as the switch shows it")
        c = sw.canonical(t.switch_port)
        if c in trunks:
            raise InputError(f"{tw}.switch_port", f"{t.switch_port} is already trunks[{trunks[c]}]", "list it once")
        trunks[c] = j
        if not _IFNAME.match(t.server_interface) or t.server_interface in (".", ".."):
            raise InputError(f"{tw}.server_interface", f"{t.server_interface!r} is not a Linux interface name",
                             "use the server's interface name, at most 15 characters without '/', ':' or blanks")
    lo, hi = sw.vid_range()
    seen: dict[str, int] = {}
    vids: dict[int, int] = {}
    ofports: dict[int, int] = {}
    for j, p in enumerate(sw.access_ports):
        pw = f"{w}.access_ports[{j}]"
        problem = names.interface_problem(sw.driver, p.interface)
        if problem:
            raise InputError(f"{pw}.interface" if p.interface.strip() else pw, problem,
                             "use the port's name as the switch shows it")
        c = sw.canonical(p.interface)
        if c in seen:
            other = sw.access_ports[seen[c]].interface
            also = f" = {other}" if other != p.interface else ""
            raise InputError(pw, f"duplicate port {p.interface} (also access_ports[{seen[c]}]{also})",
                             "list each access port once")
        seen[c] = j
        if c in trunks:
            raise InputError(pw, f"{p.interface} is the trunk port (trunks[{trunks[c]}])",
                             "do not list the trunk as an access port")
        if p.vid is not None:
            if not 1 <= p.vid <= 4094:
                raise InputError(f"{pw}.vid", f"VID {p.vid} is outside 1-4094", "use a VID in vlan_range")
            if not lo <= p.vid <= hi:
                raise InputError(f"{pw}.vid", f"VID {p.vid} is outside vlan_range {sw.vlan_range}",
                                 "pick a VID inside vlan_range or widen it")
            if sw.driver in ("ios", "netmiko_cli") and 1002 <= p.vid <= 1005:
                raise InputError(f"{pw}.vid", f"VID {p.vid} is reserved on IOS (1002-1005, FDDI/Token Ring)",
                                 "pick another VID")
            if p.vid in vids:
                raise InputError(f"{pw}.vid", f"VID {p.vid} is already access_ports[{vids[p.vid]}]'s",
                                 "give each port its own VID")
            vids[p.vid] = j
        if p.trunk is not None and sw.canonical(p.trunk) not in trunks:
            raise InputError(f"{pw}.trunk", f"{p.trunk} is not one of this switch's trunks",
                             f"use one of: {', '.join(t.switch_port for t in sw.trunks)}")
        try:
            n = sw.ofport_of(p)
        except ValueError as e:
            raise InputError(f"{pw}.ofport", f"no OpenFlow port number for it: {e}",
                             f"set ofport: N on it, e.g. ofport: {_free_ofport(sw)} (see docs/ofport-numbering.md)") \
                from None
        if n in ofports:
            other = sw.access_ports[ofports[n]].interface
            raise InputError(f"{pw}.ofport", f"{p.interface} and {other} (access_ports[{ofports[n]}]) would both be "
                             f"OpenFlow port {n}",
                             f"set ofport: N on one of them, e.g. ofport: {_free_ofport(sw)} "
                             "(see docs/ofport-numbering.md)")
        ofports[n] = j
    if len(sw.access_ports) > hi - lo + 1:
        wider = f"{lo}-{min(4094, lo + 2 * len(sw.access_ports) - 1)}"
        raise InputError(f"{w}.vlan_range", f"{sw.vlan_range} holds {hi - lo + 1} VIDs for "
                         f"{len(sw.access_ports)} access ports", f"widen it, e.g. {wider}")


def _free_ofport(sw: Switch) -> int:
    """A port number no access port of ``sw`` has or derives (a suggestion for fix messages)."""
    used = set()
    for p in sw.access_ports:
        try:
            used.add(sw.ofport_of(p))
        except ValueError:
            pass
    return next(n for n in range(1, names.OFPORT_MAX + 1) if n not in used)


def _check(inv: Inventory, src: str) -> None:
    """Cross-field checks pydantic cannot express; raise the first problem as InputError.

    Per switch: name, driver, host, secret references, VID range, trunks and access ports (canonical names: duplicates,
    trunk as access port, ``trunk:`` references, VIDs, OpenFlow port numbers and their collisions, range large
    enough), controllers (targets, duplicates, TLS files). Across switches: names, devices (host + port), datapath
    ids (also the derived ones), server interfaces of trunks. Server: DPDK CPU masks. Touches no device.
    """
    _check_server(inv, src)
    seen_names: dict[str, int] = {}
    devices: dict[tuple[str, int], int] = {}
    dpids: dict[str, int] = {}
    server_ifaces: dict[str, str] = {}
    for i, sw in enumerate(inv.switches):
        w = f"{src}: switches[{i}]"
        if sw.name in seen_names:
            raise InputError(f"{w}.name", f"duplicate switch name {sw.name!r} (also switches[{seen_names[sw.name]}])",
                             "give each switch its own name")
        seen_names[sw.name] = i
        if sw.driver not in DRIVERS:
            raise InputError(f"{w}.driver", f"unknown driver {sw.driver!r}",
                             f"use one of: {', '.join(sorted(DRIVERS))}")
        problem = host_problem(sw.host)
        if problem:
            fix = ("put the port in port:" if "has a port" in problem else
                   "use the switch's management IP address or DNS name, e.g. 192.0.2.10")
            raise InputError(f"{w}.host", problem, fix)
        dev = (_host_key(sw.host), sw.port)
        if dev in devices:
            raise InputError(f"{w}.host", f"{sw.host} port {sw.port} is the same device as switches[{devices[dev]}]",
                             "list each switch once (one entry per device, all its ports in it)")
        devices[dev] = i
        if sw.dpid in dpids:
            raise InputError(f"{w}.datapath_id", f"datapath id {sw.dpid} is also switches[{dpids[sw.dpid]}]'s",
                             "give each switch its own datapath_id (or drop it to derive one from the name)")
        dpids[sw.dpid] = i
        if "password" in sw.optional_args or "secret" in sw.optional_args:
            raise InputError(f"{w}.optional_args", "holds a password inline",
                             "use password_env or password_file (the enable secret is the same password)")
        if bool(sw.password_env) == bool(sw.password_file):
            raise InputError(f"{w}.password_env", "set exactly one of password_env and password_file",
                             "reference the secret: password_env: VAR or password_file: /path (mode 0600)")
        if sw.password_env and not _ENV_NAME.match(sw.password_env):
            raise InputError(f"{w}.password_env", f"{sw.password_env!r} is not an environment variable name",
                             "name the variable that holds the password, e.g. password_env: SW1_PASSWORD")
        if not re.fullmatch(r"\d{1,4}(-\d{1,4})?", sw.vlan_range):
            raise InputError(f"{w}.vlan_range", f"{sw.vlan_range!r} is not a VID range", "write it as 100-199")
        lo, hi = sw.vid_range()
        if not (1 <= lo <= hi <= 4094):
            raise InputError(f"{w}.vlan_range", f"{sw.vlan_range} is outside 1-4094 or reversed",
                             "use a range inside 2-4094, e.g. 100-199")
        if lo == 1:
            raise InputError(f"{w}.vlan_range", "VID 1 is the default VLAN of every port",
                             f"start the range at 2 or above, e.g. {max(2, 100)}-{max(hi, 199)}")
        _check_ports(sw, w)
        for j, t in enumerate(sw.trunks):
            if t.type == "dpdk" and not t.devargs:
                raise InputError(f"{w}.trunks[{j}].devargs", "type dpdk needs devargs",
                                 "e.g. devargs: 0000:01:00.0 or net_af_packet0,iface=eth1")
            if t.type == "dpdkvhostuserclient" and not t.vhost_server_path:
                raise InputError(f"{w}.trunks[{j}].vhost_server_path", "type dpdkvhostuserclient needs a socket path",
                                 "e.g. vhost_server_path: /run/harmless/trunk.sock")
            if t.type in ("dpdk", "dpdkvhostuserclient") and inv.server.datapath != "dpdk":
                raise InputError(f"{w}.trunks[{j}].type", f"type {t.type} needs server.datapath: dpdk",
                                 "set server.datapath: dpdk or use type system/afxdp")
            if t.server_interface in server_ifaces:
                raise InputError(f"{w}.trunks[{j}].server_interface",
                                 f"{t.server_interface} is already the trunk of {server_ifaces[t.server_interface]}",
                                 "give each trunk its own server interface")
            server_ifaces[t.server_interface] = f"{sw.name} {t.switch_port}"
        _check_openflow(sw, w)
    check_qos(inv, src)     # per-port QoS the port's trunk type cannot enforce (docs/qos.md)


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """PyYAML's safe loader (libyaml when present) used for inventories; :func:`_load_yaml` adds the bounds, and
    implicit dates/integers that Python cannot build (``2024-13-45``, 5000 digits) become errors with their line."""


class _BadValue(yaml.constructor.ConstructorError):
    """A scalar YAML resolved to a type (date, integer) whose value Python refuses."""


def _guarded(construct):
    def build(loader, node):
        try:
            return construct(loader, node)
        except (ValueError, OverflowError) as e:
            what = {"int": "an integer", "float": "a number"}.get(node.tag.rsplit(":", 1)[-1], "a date")
            raise _BadValue(None, None, f"{node.value[:40]!r} cannot be read as {what} ({str(e)[:80]})",
                            node.start_mark) from None
    return build


for _tag in ("timestamp", "int", "float"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}",
                            _guarded(getattr(yaml.constructor.SafeConstructor, f"construct_yaml_{_tag}")))


def _yaml_error(e: Exception, src: str, text: str) -> InputError:
    """One line for a PyYAML error: file, line, what (PyYAML's own messages span lines)."""
    if isinstance(e, yaml.reader.ReaderError):
        line = text[:e.position].count("\n") + 1
        char = e.character if isinstance(e.character, int) else ord(e.character)
        return InputError(f"{src} line {line}", f"control character #x{char:04x} is not allowed in YAML",
                          "remove it (save the file as plain UTF-8 text)")
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    line = f" line {mark.line + 1}" if mark else ""
    problem = " ".join(str(getattr(e, "problem", None) or e).split())
    if isinstance(e, _BadValue):
        return InputError(f"{src}{line}", problem, "quote the value ('...') so that YAML reads it as text")
    return InputError(f"{src}{line}", f"not valid YAML ({problem})", "fix the YAML syntax")


def _path(parts: list) -> str:
    out = ""
    for x in parts:
        out += f"[{x}]" if isinstance(x, int) else (("." if out else "") + str(x))
    return out or "(top level)"


def _scan(text: str, src: str) -> None:
    """Walk the YAML event stream (no objects built) and refuse more than :data:`MAX_YAML_DEPTH` levels or
    :data:`MAX_YAML_NODES` nodes, before the recursive composer sees the document. Raises InputError.

    A fast pass counts; only when a limit is crossed does a second pass find the field path for the message."""
    starts = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    leaves = (yaml.ScalarEvent, yaml.AliasEvent)
    depth = nodes = 0
    for ev in yaml.parse(text, Loader=_Loader):
        t = type(ev)
        if t in leaves:
            nodes += 1
        elif t in starts:
            nodes += 1
            depth += 1
            if depth > MAX_YAML_DEPTH:
                break
        elif t in ends:
            depth -= 1
        if nodes > MAX_YAML_NODES:
            break
    else:
        return
    _locate(text, src)
    raise InputError(src, f"more than {MAX_YAML_DEPTH} levels or {MAX_YAML_NODES} YAML nodes",
                     "split the inventory into smaller files")


def _locate(text: str, src: str) -> None:
    """The slow twin of :func:`_scan`: the same limits, with the field path of the node that crosses one."""
    stack: list[list] = []      # per open collection: [is_mapping, current key or index, expecting a key, is a key]
    nodes = 0

    def where() -> str:
        return _path([f[1] for f in stack if f[1] is not None])

    def starting_node() -> bool:    # a node begins: label it in its parent; True if it is a mapping key
        if not stack or not stack[-1][0]:
            return False
        return stack[-1][2]

    def finished(is_key: bool, key=None) -> None:   # a node ended: advance its parent
        if not stack:
            return
        top = stack[-1]
        if top[0]:
            if is_key:
                top[1], top[2] = key if isinstance(key, str) else "?", False
            else:
                top[2] = True
        else:
            top[1] += 1

    for ev in yaml.parse(text, Loader=_Loader):
        if isinstance(ev, (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            nodes += 1
            if nodes > MAX_YAML_NODES:
                raise InputError(f"{src} line {ev.start_mark.line + 1}: {where()}",
                                 f"more than {MAX_YAML_NODES} YAML nodes", "split the inventory into smaller files")
        if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(stack) >= MAX_YAML_DEPTH:
                raise InputError(f"{src} line {ev.start_mark.line + 1}: {where()}",
                                 f"nested more than {MAX_YAML_DEPTH} levels deep", "flatten it (see examples/lab.yaml)")
            is_key = starting_node()
            if is_key:
                stack[-1][1] = "?"
            mapping = isinstance(ev, yaml.MappingStartEvent)
            stack.append([mapping, None if mapping else 0, True, is_key])
        elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            finished(stack.pop()[3], "?")
        elif isinstance(ev, (yaml.ScalarEvent, yaml.AliasEvent)):
            finished(starting_node(), getattr(ev, "value", None))


_MERGE = "tag:yaml.org,2002:merge"


def _check_nodes(root, src: str) -> None:
    """Refuse duplicate mapping keys (YAML would silently keep the last) and aliases expanding to more than
    :data:`MAX_YAML_NODES` nodes ("billion laughs"), naming the field path. Linear in the composed graph."""
    sizes: dict[int, int] = {}
    busy: set[int] = set()

    def size(node, path: list) -> int:
        k = id(node)
        if k in sizes:
            return sizes[k]
        if k in busy:
            raise InputError(f"{src} line {node.start_mark.line + 1}: {_path(path)}", "an alias refers to itself",
                             "remove the recursive alias")
        busy.add(k)
        n = 1
        if isinstance(node, yaml.SequenceNode):
            for j, child in enumerate(node.value):
                n += size(child, [*path, j])
        elif isinstance(node, yaml.MappingNode):
            keys: dict[tuple, int] = {}
            for kn, vn in node.value:
                label = kn.value if isinstance(kn, yaml.ScalarNode) else "?"
                if isinstance(kn, yaml.ScalarNode) and kn.tag != _MERGE:
                    key = (kn.tag, kn.value)
                    if key in keys:
                        raise InputError(f"{src}: {_path([*path, label])}",
                                         f"key {label!r} appears twice (lines {keys[key]} and "
                                         f"{kn.start_mark.line + 1}); YAML would silently keep the last",
                                         "keep one of them")
                    keys[key] = kn.start_mark.line + 1
                n += size(kn, path) + size(vn, [*path, label])
        busy.discard(k)
        sizes[k] = n
        if n > MAX_YAML_NODES:
            raise InputError(f"{src}: {_path(path)}", f"expands to more than {MAX_YAML_NODES} YAML nodes through "
                             "aliases", "write it out without nested aliases (&anchor/*alias)")
        return n

    size(root, [])


def _load_yaml(text: str, src: str):
    """YAML text -> Python data, within the bounds above: depth, nodes after alias expansion, no duplicate keys.
    Raises InputError (one line: file, line or field path, fix)."""
    if len(text) > MAX_INVENTORY_BYTES:
        raise InputError(src, f"the inventory is larger than {MAX_INVENTORY_BYTES // 2**20} MiB",
                         "split it into smaller files")
    try:
        _scan(text, src)
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
            if root is None:
                return None
            _check_nodes(root, src)
            return loader.construct_document(root)
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        raise _yaml_error(e, src, text) from None
    except (ValueError, TypeError, OverflowError) as e:       # e.g. a timestamp like 2024-13-45
        raise InputError(src, f"a value cannot be read ({e})", "quote it to make it a string") from None


def parse_inventory(text: str, src: str = "<inventory>") -> Inventory:
    """Parse and validate inventory YAML text. ``src`` names the file in errors.

    YAML is read within bounds (:data:`MAX_INVENTORY_BYTES`, :data:`MAX_YAML_NODES` after alias expansion,
    :data:`MAX_YAML_DEPTH`); duplicate keys are refused. Touches no device and writes nothing.

    Raises:
        InputError: one line naming ``src``, the field path (or YAML line) and the fix; exit code 2.
    """
    data = _load_yaml(text, src)
    if data is None:
        raise InputError(src, "the inventory is empty", "write server: and switches: (see examples/lab.yaml)")
    if not isinstance(data, dict):
        raise InputError(src, "the inventory must be a YAML mapping with server: and switches:",
                         "see examples/lab.yaml")
    if data.get("netbox") is not None:
        from harmless.netbox import fetch_switches
        data = {**data, "switches": [*(data.get("switches") or []), *fetch_switches(data["netbox"], src)]}
        if not data["switches"]:
            raise InputError(f"{src}: netbox", "NetBox returned no device with a 'harmless' config context",
                             "check netbox.filter and the devices' config contexts (see README, NetBox)")
    switches = data.get("switches")
    for i, sw in enumerate(switches if isinstance(switches, list) else []):
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
    """Read and validate an inventory file (UTF-8, at most :data:`MAX_INVENTORY_BYTES`).

    Raises:
        InputError: file unreadable, too large, not UTF-8, or invalid (see :func:`parse_inventory`).
    """
    p = Path(path)
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_INVENTORY_BYTES + 1)
    except OSError as e:
        raise InputError(str(p), f"cannot read the inventory ({e.strerror})", "pass an existing file with -i") from e
    if len(raw) > MAX_INVENTORY_BYTES:
        raise InputError(str(p), f"the inventory is larger than {MAX_INVENTORY_BYTES // 2**20} MiB",
                         "split it into smaller files")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(str(p), "the file is UTF-16, not UTF-8", "save it as UTF-8")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise InputError(f"{p} line {line}", f"not UTF-8 (byte {raw[e.start]:#04x} at offset {e.start})",
                         "save the file as UTF-8") from None
    return parse_inventory(text, str(p))


def port_index(interface: str, driver: str = "ios") -> int | None:
    """Default OpenFlow port number of a legacy port under the numbering scheme (``docs/ofport-numbering.md``):
    ``FastEthernet0/7`` -> 7, ``GigabitEthernet2/0/7`` -> 2007, ``Port-channel1`` -> 60001; None when the name
    gives none (see :func:`harmless.switch_drivers.names.default_ofport`)."""
    try:
        return names.default_ofport(driver, interface)
    except ValueError:
        return None
