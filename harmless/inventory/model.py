"""The inventory's pydantic model: server, switches, trunks, access ports, OpenFlow settings.

Field-level validation lives here (types, ranges, names, datapath ids); what pydantic cannot express across fields
is in :mod:`harmless.inventory.checks`, reading the YAML in :mod:`harmless.inventory.loader`.
"""
from __future__ import annotations

import hashlib
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harmless.inventory.secrets import resolve_password
from harmless.qos.model import QosSettings
from harmless.switch_drivers import names

OF_VERSIONS = ("OpenFlow10", "OpenFlow11", "OpenFlow12", "OpenFlow13", "OpenFlow14", "OpenFlow15")
NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,8}$")   # br-of-<name> must fit a 15-character interface name
#: OpenFlow's IANA port (RFC-less, IANA "openflow" 6653/tcp); OVS uses it when a tcp:/ssl: target gives none
OPENFLOW_PORT = 6653
#: link-local protocols an access port may have tunnelled by the legacy switch (``l2pt``; their addresses and how the
#: translator restores them: :mod:`harmless.switch_drivers.l2pt`, docs/transparency.md)
L2ptProtocol = Literal["lldp", "stp", "cdp", "vtp", "lacp", "pagp", "udld"]
L2PT_HELP = ("link-local protocols the legacy switch tunnels through the port's VLAN (Layer 2 protocol tunnelling) so "
             "that their frames reach br-of, and the controller's reach the host, with their real destination MAC; "
             "the legacy switch then no longer runs them on the port (no LLDP/CDP neighbour there, no BPDU from the "
             "host); see docs/transparency.md")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _unique(v: list | None, field: str) -> list | None:
    """A list field without repeats (``l2pt: [lldp, lldp]`` is a typo worth naming)."""
    if v is not None and len(set(v)) != len(v):
        twice = next(x for x in v if v.count(x) > 1)
        raise ValueError(f"{twice} is listed twice in {field}; list each protocol once")
    return v


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
    (needs ``vhost_server_path``). ``shared: true`` accepts a switch port that is a LAG or already carries other VLANs
    (preflight refuses it otherwise): HARMLESS then adds its VIDs to the trunk instead of replacing what it carries.
    """

    switch_port: str
    server_interface: str = Field(min_length=1, max_length=15)
    type: Literal["auto", "system", "afxdp", "dpdk", "dpdkvhostuserclient"] = "auto"
    devargs: str | None = None
    vhost_server_path: str | None = None
    shared: bool = Field(False, description=(
        "the switch port is shared with the server on purpose: it is a LAG and/or already carries other VLANs "
        "(an uplink); HARMLESS adds its VIDs and keeps the others (without it such a trunk is refused, "
        "docs/preflight.md)"))
    server: str | None = Field(None, description="with an ha: section, the server (ha.servers[].name) this trunk's "
                                                 "cable plugs into; each server has exactly one trunk per switch")

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

    ``l2pt`` lists the link-local protocols the legacy switch tunnels for this port (``[lldp]``, ``[lldp, stp]``,
    ...; ``[]`` none); unset, the switch's ``l2pt`` applies (docs/transparency.md).
    """

    interface: str
    ofport: int | None = Field(None, ge=1, le=65279)
    vid: int | None = None
    trunk: str | None = None
    qinq: bool = False
    keep: list[Literal["voice", "dot1x", "port_security"]] = Field(default_factory=list)
    qos: QosSettings | None = Field(None, description="per-port ingress policing / egress shaping (docs/qos.md)")
    l2pt: list[L2ptProtocol] | None = Field(None, description=L2PT_HELP + "; unset: the switch's l2pt")

    _names = field_validator("interface", "trunk", mode="before")(lambda v: _int_name(v))
    _l2pt = field_validator("l2pt")(lambda v: _unique(v, "l2pt"))


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
    port_down: Literal["device", "server"] = Field("device", description=(
        "what a controller's port-mod with OFPPC_PORT_DOWN does beyond br-of: device = also shut the legacy port, "
        "so the host loses its link as on a hardware switch (harmless watch carries it out, down undoes it); "
        "server = block the port on the server only (docs/link-state.md)"))

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
    oversubscription_limit: float | None = Field(None, ge=1, le=1000, description=(
        "most summed speed of a trunk's migrated ports per unit of the trunk's speed before plan warns; default 12 "
        "(the HARMLESS paper's 12 access ports per trunk, Sec. III)"))
    heartbeat_vid: int | None = Field(None, ge=2, le=4094, description=(
        "with an ha: section, the VLAN both servers' trunks carry for their BFD heartbeat (no access port has it); "
        "default: the highest VID of vlan_range no port and no device VLAN uses"))
    l2pt: list[L2ptProtocol] = Field(default_factory=list, description=L2PT_HELP + "; for every access port that "
                                     "sets no l2pt of its own")

    _l2pt = field_validator("l2pt")(lambda v: _unique(v, "l2pt"))
    mac_learning: Literal["off", "on"] = Field("off", description=(
        "MAC learning in HARMLESS's VLANs: off (default, where the platform can: a frame the controller sends back "
        "out of its in-port reaches the other hosts behind that port; plan notes a switch that cannot) or on (left "
        "as the device has it). docs/transparency.md, Hairpin"))

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

    def l2pt_of(self, port: "AccessPort") -> tuple[str, ...]:
        """The link-local protocols tunnelled for ``port``: its own ``l2pt``, else the switch's."""
        return tuple(self.l2pt if port.l2pt is None else port.l2pt)

    def password(self, where: str = "") -> str:
        """Resolve the secret reference (:func:`harmless.inventory.secrets.resolve_password`). Raises InputError
        naming the field when unset/unreadable/too open."""
        return resolve_password(self.password_env, self.password_file, where)


class HaServer(_Model):
    """One of the two servers of an active/standby pair (docs/high-availability.md).

    Attributes:
        name: 1-9 lowercase letters/digits; trunks name it in ``server:``, ``HARMLESS_HA_SERVER`` on the server says
            which one it is.
        agent: ``HOST:PORT`` (IPv6 in brackets) where its ``harmless ha agent`` listens on the management network
            (TCP for requests and state replication, UDP for heartbeats, both on PORT).
        netns: network namespace of this server's OVS and trunk interfaces (overrides ``server.netns`` on it).
    """

    name: str
    agent: str = Field(min_length=1)
    netns: str | None = Field(None, pattern=r"^[A-Za-z0-9_.-]{1,64}$")

    @field_validator("name")
    @classmethod
    def _name(cls, v):
        if not NAME_RE.match(v):
            raise ValueError("use 1-9 lowercase letters/digits starting with a letter")
        return v


class HaSettings(_Model):
    """Active/standby servers (issue #23, docs/high-availability.md): two servers, each with its own trunk to every
    switch; the switch's config decides which trunk carries HARMLESS's VLANs.

    Attributes:
        servers: exactly two.
        secret_env / secret_file: the shared secret of the two agents (exactly one; a file must be mode 0600):
            every heartbeat and request is authenticated with HMAC-SHA256 over it (RFC 2104).
        interval_ms: BFD transmit/receive interval on the heartbeat VLAN (OVS ``bfd:min_tx``/``min_rx``, RFC 5880
            sec. 6.8.2) and the agents' heartbeat period on the management network.
        multiplier: missed intervals that declare the peer gone on either path (BFD ``bfd:mult``, RFC 5880
            sec. 6.8.4 Detect Mult); detection time = ``interval_ms * multiplier``.
        hold_s: how long an active server whose own Open vSwitch died waits for the standby to take over before it
            rebuilds its bridges itself (s); longer than a fencing commit takes (IOS: 10-15 s in the lab, up to a
            few minutes on a large config), and while the standby says it is taking over it waits anyway.
    """

    servers: list[HaServer] = Field(min_length=2, max_length=2)
    secret_env: str | None = None
    secret_file: str | None = None
    interval_ms: int = Field(100, ge=10, le=10_000)
    multiplier: int = Field(3, ge=2, le=50)
    hold_s: float = Field(30.0, ge=0.5, le=600)

    @property
    def detect_ms(self) -> int:
        """Detection time (ms): ``interval_ms * multiplier`` (RFC 5880 sec. 6.8.4)."""
        return self.interval_ms * self.multiplier

    def server(self, name: str) -> HaServer:
        """The server named ``name``. Raises KeyError."""
        for s in self.servers:
            if s.name == name:
                return s
        raise KeyError(name)

    def peer(self, name: str) -> HaServer:
        """The other server of the pair than ``name``. Raises KeyError when ``name`` is not one of them."""
        self.server(name)
        return next(s for s in self.servers if s.name != name)

    def secret(self, where: str = "ha") -> str:
        """The shared secret (:func:`harmless.inventory.secrets.resolve_password`). Raises InputError naming the
        field when unset, unreadable or readable by others."""
        return resolve_password(self.secret_env, self.secret_file, where)


class OriginalsSettings(_Model):
    """Where each switch's original config is kept besides the server's state directory, so that a machine that
    never saw the deployment can give it back (``harmless down -i``; docs/high-availability.md).

    Attributes:
        on_switch: also keep it on the switch's own file system where the platform has one (IOS/EOS ``flash:``,
            Junos ``/var/tmp``); ProCurve has none HARMLESS can use.
        directory: an off-box directory (a mounted share, a git work tree) that gets ``<switch>/harmless-original.cfg``
            and its ``.sha256``; an absolute path, checked to be a writable directory before ``up`` changes anything.
    """

    on_switch: bool = True
    directory: str | None = Field(None, min_length=1)

    @field_validator("directory")
    @classmethod
    def _absolute(cls, v):
        if v is not None and not (v.startswith("/") or v.startswith("~")):
            raise ValueError(f"{v!r} is not an absolute path (the directory must not depend on where harmless runs)")
        return v


class Inventory(_Model):
    """The whole inventory file. ``netbox`` (optional) adds switches read from NetBox (:mod:`harmless.netbox`);
    they follow the file's own ``switches`` (so ``switches[i]`` in errors counts the file's switches first).
    ``originals`` (optional) says where the switches' originals are kept besides the server; ``ha`` (optional)
    makes two servers an active/standby pair (:class:`HaSettings`)."""

    server: Server = Server()
    netbox: dict | None = None
    originals: OriginalsSettings = OriginalsSettings()
    ha: HaSettings | None = None
    switches: list[Switch] = Field(min_length=1)

    def for_server(self, name: str, own_trunks_only: bool = False) -> "Inventory":
        """The inventory as server ``name`` of the ``ha`` pair plans and builds it: its own ``netns`` (when it names
        one) and, per switch, every access port on its own trunk (the trunks keep their order, so field paths in
        messages stay the file's); with ``own_trunks_only`` the other server's trunks are left out (what its br-otc
        attaches). Pure.

        Raises:
            KeyError: no ``ha`` section, or ``name`` is not one of its servers.
        """
        if self.ha is None:
            raise KeyError(name)
        me = self.ha.server(name)
        server = self.server.model_copy(update={"netns": me.netns}) if me.netns else self.server

        def local(sw: Switch) -> Switch:
            own = [t for t in sw.trunks if t.server == name]
            ports = [p.model_copy(update={"trunk": own[0].switch_port}) for p in sw.access_ports] if own else \
                sw.access_ports
            return sw.model_copy(update={"trunks": own if own_trunks_only else sw.trunks, "access_ports": ports})

        return self.model_copy(update={"server": server, "switches": [local(sw) for sw in self.switches]})


def port_index(interface: str, driver: str = "ios") -> int | None:
    """Default OpenFlow port number of a legacy port under the numbering scheme (``docs/ofport-numbering.md``):
    ``FastEthernet0/7`` -> 7, ``GigabitEthernet2/0/7`` -> 2007, ``Port-channel1`` -> 60001; None when the name
    gives none (see :func:`harmless.switch_drivers.names.default_ofport`)."""
    try:
        return names.default_ofport(driver, interface)
    except ValueError:
        return None
