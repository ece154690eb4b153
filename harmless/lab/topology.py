"""The built-in lab: a legacy 802.1Q switch with hosts, on this machine (DESIGN.md §4).

    hosts (netns hl-<lab>-h<N>, eth0 198.18.0.N/24)            HARMLESS server (this namespace)
        │ veth                                                  │
    ┌───┴──── netns hl-<lab>-sw ─────────────────┐              │
    │ OVS (own ovsdb/vswitchd, netdev datapath)  │  veth        │
    │ br-legacy: NORMAL, ports fa0-N (access),   ├──────────── hl-<lab>-trunk  (the trunk cable)
    │            gi0-1 (the trunk port)          │
    └────────────────────────────────────────────┘
    management plane: emulated Cisco IOS (fake-switches + harmless.emulators.ios) over SSH on 127.0.0.1:<port>,
    whose VLAN/port config is mirrored onto br-legacy as it changes (harmless.emulators.fakeswitch --ovs-db ...).

Hosts use 198.18.0.0/24 (RFC 2544's benchmarking range) inside their own namespaces; no traffic leaves the lab.
Initially every host port is an access port of VLAN 100 ("users"), and VLAN 101 exists too, so hosts talk directly
and the planner must avoid VIDs 100 and 101. Lab state lives in ``<state dir>/labs/<name>/``.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harmless import state as st
from harmless.errors import InputError
from harmless.lab import netns
from harmless.lab.netns import LabError, stop_pid_file
from harmless.ovs import Ovs
from harmless.procs import spawn

LAB_NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,5}$")      # hl-<name>-trunk must fit 15 characters
SUBNET = "198.18.0"
BRIDGE = "br-legacy"
MODEL = "cisco_2960_24TT_L"                             # FastEthernet0/1-24, GigabitEthernet0/1-2
#: per lab vendor: NAPALM driver, host port name pattern, default trunk port, NAPALM optional_args, model
VENDORS = {
    "ios": {"driver": "ios", "access": "FastEthernet0/{n}", "trunk": "GigabitEthernet0/1",
            "optional_args": {"inline_transfer": True, "dest_file_system": "flash:"},
            "model": "Cisco IOS (fake-switches cisco_2960_24TT_L) over SSH"},
    "eos": {"driver": "eos", "access": "Ethernet{n}", "trunk": "Ethernet25", "optional_args": {"transport": "http"},
            "model": "Arista EOS (harmless.emulators.eos) over eAPI/HTTP"},
}


def access_iface(vendor: str, n: int) -> str:
    """Name of host port ``n`` on a lab switch of ``vendor`` (``FastEthernet0/7``, ``Ethernet7``)."""
    return VENDORS[vendor]["access"].format(n=n)


@dataclass(frozen=True)
class LabSpec:
    """What lab to build.

    Attributes:
        name: lab name (1-6 lowercase letters/digits), used in namespace and interface names.
        ssh_port: loopback TCP port of the emulated switch's SSH server.
        hosts: legacy port indexes (FastEthernet0/N) that get a host.
        trunk_port: the switch port cabled to the HARMLESS server.
        reject: regexes of config lines the emulated device rejects (test-only fault injection).
        server_netns: put the server end of the trunk into this network namespace (created if missing; the
            inventory then runs HARMLESS's private OVS there); None = this namespace, like a real server.
        more_trunks: further switch ports cabled to the server (server interfaces ``hl-<name>-trk2``, ...).
        host_base: host on port N gets 198.18.0.(host_base+N) and MAC 02:00:00:00:00:(host_base+N), so hosts of
            several labs can share one subnet (e.g. 0 and 100).
        uplinks: ``(port, peer)`` pairs: FastEthernet0/<port> gets a cable without a host. ``peer`` empty: the far
            end is left in this namespace as ``hl-<name>-u<port>`` (for another lab to take); ``peer`` = such an
            interface of another lab: that cable end becomes this port (the two legacy switches are cabled).
        vendor: emulated switch OS, a key of :data:`VENDORS` (``ios``: SSH on ``ssh_port``; ``eos``: eAPI over
            HTTP on ``ssh_port``). ``trunk_port`` None = the vendor's default.
        extra_config: more startup config in the vendor's syntax, appended (e.g. other trunks with allowed-VLAN
            lists, native VLANs, descriptions: what real configs have).
        vtp_transparent: IOS: start with ``vtp mode transparent`` (False: the IOS default, VTP server).
        platform: IOS: the emulated Catalyst (``2960`` dot1q-only, ``3750`` ISL-capable with routed ports and Layer 2
            protocol tunnelling, ``me3750`` a 3750 Metro that tunnels LLDP too).
        session_port: IOS: the interface the management session appears to arrive on (``show users`` etc.).
        trunk_netns: per trunk (``trunk_ports`` order) the network namespace of its server end (created if missing);
            missing entries or None: ``server_netns``. Two server namespaces make the two servers of an
            active/standby pair (:mod:`harmless.ha.lab`).
        listen_host: the address the emulated device's management plane listens on (a lab address on a
            management network instead of loopback, for servers in other namespaces).
        sync_interval: seconds between the emulated device's mirrors of its VLAN config onto its data plane (a
            committed change reaches the ports within this time).
    """

    name: str = "lab"
    ssh_port: int = 2201
    hosts: tuple[int, ...] = (7, 8, 10)
    trunk_port: str | None = None
    reject: tuple[str, ...] = ()
    server_netns: str | None = None
    more_trunks: tuple[str, ...] = ()
    host_base: int = 0
    uplinks: tuple[tuple[int, str], ...] = ()
    vendor: str = "ios"
    extra_config: str = ""
    vtp_transparent: bool = True
    platform: str = "2960"
    session_port: str | None = None
    trunk_netns: tuple[str | None, ...] = ()
    listen_host: str = "127.0.0.1"
    sync_interval: float = 0.3

    @property
    def trunk(self) -> str:
        """The (first) trunk port (``trunk_port`` or the vendor's default)."""
        return self.trunk_port or VENDORS[self.vendor]["trunk"]

    @property
    def trunk_ports(self) -> tuple[str, ...]:
        return (self.trunk, *self.more_trunks)

    def trunk_ns(self, k: int) -> str | None:
        """The namespace of trunk ``k``'s server end (0-based)."""
        got = self.trunk_netns[k] if k < len(self.trunk_netns) else None
        return got or self.server_netns


def lab_dir(name: str) -> Path:
    return st.state_dir() / "labs" / name


def ns_switch(name: str) -> str:
    return f"hl-{name}-sw"


def ns_host(name: str, port: int) -> str:
    return f"hl-{name}-h{port}"


def trunk_iface(name: str, k: int = 0) -> str:
    """Server-side interface of the lab's ``k``-th trunk (0-based)."""
    return f"hl-{name}-trunk" if k == 0 else f"hl-{name}-trk{k + 1}"


def uplink_iface(name: str, port: int) -> str:
    """The far end of a lab's uplink cable on FastEthernet0/<port>, until another lab takes it."""
    return f"hl-{name}-u{port}"


def ovs_port(interface: str) -> str:
    """Lab OVS port name of a switch interface: ``FastEthernet0/7`` -> ``fa0-7``."""
    m = re.match(r"([A-Za-z]{2})[A-Za-z]*([\d/]+)$", interface)
    return (m.group(1).lower() + m.group(2).replace("/", "-")) if m else interface


def host_ip(port: int, base: int = 0) -> str:
    return f"{SUBNET}.{base + port}"


def host_mac(port: int, base: int = 0) -> str:
    return f"02:00:00:00:00:{base + port:02x}"


def startup_config(spec: LabSpec) -> str:
    """The emulated device's config at lab start (IOS or EOS syntax): VLANs 100/101, host ports access 100."""
    ind = "   " if spec.vendor == "eos" else " "
    # IOS: a switch prepared for HARMLESS is VTP transparent (the emulator, like IOS, defaults to VTP server)
    lines = ["vtp mode transparent"] if spec.vendor == "ios" and spec.vtp_transparent else []
    lines += ["vlan 100", f"{ind}name users", "vlan 101", f"{ind}name printers"]
    for n in spec.hosts:
        lines += [f"interface {access_iface(spec.vendor, n)}", f"{ind}switchport mode access",
                  f"{ind}switchport access vlan 100"]
    return "\n".join(lines) + "\n" + spec.extra_config


def lab_info(name: str) -> dict | None:
    """The running lab's description (``lab.json``), or None."""
    p = lab_dir(name) / "lab.json"
    return json.loads(p.read_text()) if p.exists() else None


def lab_up(spec: LabSpec = LabSpec(), progress=lambda m: None) -> dict:
    """Build the lab. Returns its description (also saved as ``lab.json``).

    Raises:
        InputError: bad name/ports, lab already up, SSH port in use.
        HarmlessError: a step failed (everything built so far is torn down).
    """
    if spec.vendor not in VENDORS:
        raise InputError("--vendor", f"lab vendor {spec.vendor!r} is not one of {', '.join(VENDORS)}", "e.g. ios")
    if not LAB_NAME_RE.match(spec.name):
        raise InputError("--name", f"lab name {spec.name!r} is not 1-6 lowercase letters/digits", "e.g. --name lab")
    if not spec.hosts or any(not 1 <= h <= 24 for h in spec.hosts) or len(set(spec.hosts)) != len(spec.hosts):
        raise InputError("--hosts", "host ports must be distinct numbers 1-24 (FastEthernet0/N)", "e.g. --hosts 7,8,10")
    if lab_info(spec.name) or netns.exists(ns_switch(spec.name)):
        raise InputError("harmless lab up", f"lab {spec.name!r} is already up", f"run harmless lab down --name {spec.name}")
    if netns.wait_tcp(spec.ssh_port, 0.2, spec.listen_host):
        raise InputError("--ssh-port", f"TCP port {spec.ssh_port} on 127.0.0.1 is already in use", "pick another port")
    d = lab_dir(spec.name)
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True, mode=0o700)
    try:
        return _build(spec, d, progress)
    except BaseException:
        lab_down(spec.name)
        raise


def _build(spec: LabSpec, d: Path, progress) -> dict:
    sw_ns = ns_switch(spec.name)
    progress(f"creating namespaces for the switch and {len(spec.hosts)} hosts")
    netns.add_ns(sw_ns)
    port_map = _cable_hosts(spec, sw_ns)
    port_map.update(_cable_uplinks(spec, sw_ns))
    trunks = _cable_trunks(spec, sw_ns, port_map)
    progress("starting the legacy switch's data plane (OVS in its namespace)")
    ovs = _start_dataplane(d, sw_ns, port_map)
    progress(f"starting the emulated switch ({VENDORS[spec.vendor]['model']}) on {spec.listen_host}:{spec.ssh_port}")
    pw = _start_device(spec, d, ovs, port_map)
    info = {
        "name": spec.name, "vendor": spec.vendor, "host": spec.listen_host, "ssh_port": spec.ssh_port,
        "username": "admin",
        "password_file": str(pw), "switch_netns": sw_ns, "ovs_dir": str(d / "ovs"), "bridge": BRIDGE,
        "trunk_port": spec.trunk, "trunk_interface": trunks[0]["interface"], "trunks": trunks,
        "server_netns": spec.server_netns, "port_map": port_map, "fault_file": str(d / "faults.json"),
        "uplinks": {str(p): (peer or uplink_iface(spec.name, p)) for p, peer in spec.uplinks},
        "hosts": {str(n): {"interface": access_iface(spec.vendor, n), "netns": ns_host(spec.name, n),
                           "ip": host_ip(n, spec.host_base), "mac": host_mac(n, spec.host_base)} for n in spec.hosts},
    }
    (d / "lab.json").write_text(json.dumps(info, indent=2))
    return info


def _cable_hosts(spec: LabSpec, sw_ns: str) -> dict[str, str]:
    """One namespace per host, cabled (its eth0) to the switch's access port; returns {interface: OVS port}."""
    port_map = {}
    for n in spec.hosts:
        h_ns, iface = ns_host(spec.name, n), access_iface(spec.vendor, n)
        port_map[iface] = ovs_port(iface)
        netns.add_ns(h_ns)
        netns.veth(port_map[iface], sw_ns, "eth0", h_ns, b_mac=host_mac(n, spec.host_base), up=False)
        netns.iface_up(h_ns, "eth0", f"{host_ip(n, spec.host_base)}/24")   # TX offload off (userspace datapath)
        netns.link_up(sw_ns, port_map[iface])
    return port_map


def _cable_uplinks(spec: LabSpec, sw_ns: str) -> dict[str, str]:
    """Uplink cables: a far end left in this namespace, or another lab's cable end taken."""
    port_map = {}
    for port, peer in spec.uplinks:
        iface = access_iface(spec.vendor, port)
        port_map[iface] = ovs_port(iface)
        if peer:      # take the other lab's cable end
            netns.move(peer, None, sw_ns, port_map[iface])
        else:
            netns.veth(port_map[iface], sw_ns, uplink_iface(spec.name, port), None, up=False)
            netns.link_up(None, uplink_iface(spec.name, port))
        netns.link_up(sw_ns, port_map[iface])
    return port_map


def _cable_trunks(spec: LabSpec, sw_ns: str, port_map: dict[str, str]) -> list[dict]:
    """The trunk cables to the server(s) (namespaces created if missing); adds the trunk ports to ``port_map``."""
    trunks = []
    for k, trunk_port in enumerate(spec.trunk_ports):
        srv = spec.trunk_ns(k)
        if srv and not netns.exists(srv):
            if srv == spec.server_netns:     # marked before it exists, so a build that fails half-way removes it too
                (lab_dir(spec.name) / SERVER_NETNS_MARK).write_text(srv)        # (lab_down)
            netns.add_ns(srv, ipv6=True)
        tr = trunk_iface(spec.name, k)
        port_map[trunk_port] = ovs_port(trunk_port)
        if netns.ip("link", "show", "dev", tr, netns=srv, check=False).returncode == 0:
            netns.ip("link", "del", tr, netns=srv)
        netns.veth(port_map[trunk_port], sw_ns, tr, srv, up=False)
        netns.sysctl(srv, f"net.ipv6.conf.{tr}.disable_ipv6=1")
        netns.link_up(srv, tr)
        netns.link_up(sw_ns, port_map[trunk_port])
        trunks.append({"switch_port": trunk_port, "interface": tr, "netns": srv})
    return trunks


def _start_dataplane(d: Path, sw_ns: str, port_map: dict[str, str]) -> Ovs:
    """The legacy switch's data plane: its own OVS, ``br-legacy`` (NORMAL) with every port an access port."""
    ovs = Ovs(d / "ovs", netns=sw_ns)
    ovs.start()
    # like a real access port only the outer tag counts; the emulated device's sync raises it to 2 while a QinQ
    # (dot1q-tunnel) port exists (harmless.emulators.dataplane.vlan_limit)
    ovs.vsctl("set", "Open_vSwitch", ".", "other_config:vlan-limit=1")
    args = ["--may-exist", "add-br", BRIDGE, "--", "set", "Bridge", BRIDGE, "datapath_type=netdev",
            "fail_mode=standalone", "--", "set", "Port", BRIDGE, "tag=4094"]   # keep LOCAL out of VLAN floods
    for p in port_map.values():
        args += ["--", "--may-exist", "add-port", BRIDGE, p, "--", "set", "Port", p, "tag=1", "vlan_mode=access"]
    ovs.vsctl(*args)
    return ovs


def _start_device(spec: LabSpec, d: Path, ovs: Ovs, port_map: dict[str, str]) -> Path:
    """Start the emulated switch (its config mirrored onto ``br-legacy``); wait until it listens and its startup
    VLANs reached the data plane. Returns the password file."""
    pw = d / "password"
    fd = os.open(pw, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_urlsafe(12))
    (d / "startup.cfg").write_text(startup_config(spec))
    argv = [sys.executable, "-m", "harmless.emulators.fakeswitch", "--vendor", spec.vendor, "--hostname", "sw1",
            "--listen-host", spec.listen_host, "--listen-port", str(spec.ssh_port), "--username", "admin",
            "--password-file", str(pw),
            "--startup-config", str(d / "startup.cfg"), "--ovs-db", ovs.db, "--bridge", BRIDGE,
            "--port-map", json.dumps(port_map), "--sync-interval", str(spec.sync_interval),
            "--log-file", str(d / "fakeswitch.log"), "--pid-file", str(d / "fakeswitch.pid")]
    for r in spec.reject:
        argv += ["--reject", r]
    if spec.vendor == "ios":
        argv += ["--fault-file", str(d / "faults.json")]   # test-only runtime faults (absent: none)
        argv += ["--platform", spec.platform] + (["--session-port", spec.session_port] if spec.session_port else [])
    proc = spawn(argv, d / "fakeswitch.out")
    (d / "fakeswitch.pid").write_text(str(proc.pid))
    if not netns.wait_tcp(spec.ssh_port, 30, spec.listen_host):
        raise LabError("lab", "the emulated switch did not start", f"see {d / 'fakeswitch.out'}")
    # the data plane follows the device: wait until the startup VLANs are mirrored
    first = port_map[access_iface(spec.vendor, spec.hosts[0])]
    end = time.monotonic() + 20
    while ovs.vsctl("get", "Port", first, "tag").strip() != "100":
        if time.monotonic() > end:
            raise LabError("lab", "the switch's VLAN config did not reach its data plane",
                           f"see {d / 'fakeswitch.log'}")
        time.sleep(0.2)
    return pw


def lab_down(name: str, progress=lambda m: None) -> bool:
    """Tear the lab down (idempotent): emulated switch, its OVS, namespaces, the trunk cable, the server namespace
    when this lab created it (:func:`_server_netns_down`), lab files.

    Returns True if anything was there.
    """
    d = lab_dir(name)
    found = d.exists()
    trunks = (lab_info(name) or {}).get("trunks") or []
    stop_pid_file(d / "fakeswitch.pid")
    if (d / "ovs").exists():
        netns.stop_ovs(d / "ovs", ns_switch(name))
    # the trunk cables' server ends: the kernel destroys a namespace (and the veth ends in it) asynchronously, so a
    # kept server namespace would still show them for a moment after the switch's namespace is deleted
    for t in trunks:
        netns.ip("link", "del", t["interface"], netns=t.get("netns"), check=False)
    # namespaces, and the trunks and uplink cable ends in this namespace
    found = netns.remove_prefixed(f"hl-{name}-") or found
    found = _server_netns_down(name, progress) or found
    if d.exists():
        shutil.rmtree(d, ignore_errors=True)
    return found


#: the file in a lab's folder naming the ``server_netns`` that ``lab up`` created (absent: it existed before)
SERVER_NETNS_MARK = "server-netns.created"


def _server_netns_down(name: str, progress) -> bool:
    """Remove the server namespace lab ``name`` created (``--server-netns``, marked by :data:`SERVER_NETNS_MARK`);
    one that existed before the lab is never touched. When another lab that is up still has its trunk there, that
    lab inherits the mark (it removes the namespace when it goes down); when processes still run in it (HARMLESS's
    Open vSwitch or a controller of a deployment not taken down), it is left, and said so: deleting its name would
    leave them running where no ``ip netns exec`` reaches them. Returns True when it was removed or handed over."""
    mark = lab_dir(name) / SERVER_NETNS_MARK
    srv = mark.read_text().strip() if mark.exists() else ""
    if not srv or not netns.exists(srv):
        return False
    for other in sorted(lab_dir(name).parent.iterdir()):
        info = lab_info(other.name) if other.name != name else None
        if info and info.get("server_netns") == srv:
            (other / SERVER_NETNS_MARK).write_text(srv)
            return True
    pids = netns.ip("netns", "pids", srv, check=False).stdout.split()
    if pids:
        progress(f"left namespace {srv}: processes still run in it ({', '.join(pids[:5])}); run harmless down "
                 f"first, then ip netns del {srv}")
        return False
    netns.ip("netns", "del", srv, check=False)
    return True


#: file names ``harmless lab up --tls-dir`` expects (``openflow.tls`` private_key, certificate, ca_cert)
TLS_FILES = {"private_key": "switch-privkey.pem", "certificate": "switch-cert.pem", "ca_cert": "ca-cert.pem"}


def lab_tls(controllers: list[str] | tuple[str, ...], tls_dir: str | None) -> dict | None:
    """``openflow.tls`` for the lab inventory from ``--tls-dir`` (:data:`TLS_FILES`), or None.

    Raises:
        InputError: an ``ssl:`` controller without ``--tls-dir``, or a file missing there.
    """
    ssl = [c for c in controllers if c.startswith("ssl:")]
    if tls_dir is None:
        if ssl:
            raise InputError("--controller", f"{ssl[0]} is a TLS target but no switch key/certificate was given",
                             "add --tls-dir DIR with " + ", ".join(TLS_FILES.values())
                             + " (see docs/controllers.md, ovs-pki), or use a tcp: target")
        return None
    d = Path(tls_dir).resolve()
    tls = {k: str(d / f) for k, f in TLS_FILES.items()}
    for path in tls.values():
        if not Path(path).is_file():
            raise InputError("--tls-dir", f"{path} is missing",
                             "create it with ovs-pki (see docs/controllers.md)")
    return tls


def inventory(info: dict, controllers: list[str], vlan_range: str = "100-199", ovs: str = "auto",
              tls: dict | None = None) -> dict:
    """An inventory (as a dict, ready for YAML) that migrates every lab host port (``tls``: ``openflow.tls``)."""
    server = {"datapath": "netdev", "ovs": ovs}
    if info.get("server_netns"):
        server.update(ovs="private", netns=info["server_netns"])
    return {
        "server": server,
        "switches": [{
            "name": "sw1", "driver": VENDORS[info.get("vendor", "ios")]["driver"], "host": info.get("host", "127.0.0.1"),
            "port": info["ssh_port"], "username": info["username"], "password_file": info["password_file"],
            "optional_args": dict(VENDORS[info.get("vendor", "ios")]["optional_args"]),
            "trunks": [{"switch_port": t["switch_port"], "server_interface": t["interface"], "type": "system"}
                       for t in info.get("trunks") or [{"switch_port": info["trunk_port"],
                                                        "interface": info["trunk_interface"]}]],
            "access_ports": [h["interface"] for h in info["hosts"].values()],
            "vlan_range": vlan_range, "datapath_id": "0x0000000000000001",
            "openflow": {"versions": ["OpenFlow13"], "controllers": controllers, **({"tls": tls} if tls else {})},
        }],
    }


def ping(info: dict, src: int, dst: int, count: int = 3, interval: float = 0.2) -> float:
    """Ping host ``dst`` from host ``src`` (lab port numbers); return the loss in percent."""
    return netns.ping(info["hosts"][str(src)]["netns"], info["hosts"][str(dst)]["ip"], count, interval)


def lab_ovs(info: dict) -> Ovs:
    """The lab switch's own OVS instance (data plane of the legacy switch)."""
    return Ovs(Path(info["ovs_dir"]), netns=info["switch_netns"])
