"""Cross-field checks of a parsed inventory (what pydantic cannot express): hosts, controller targets, secret
references, VID ranges, trunks and access ports compared canonically per driver, across switches.

:func:`check_inventory` raises the first problem as one :class:`harmless.errors.InputError` line; the checks are
listed in ``docs/inventory-validation.md``. Touches no device.
"""
from __future__ import annotations

import ipaddress
import logging
import os
import re
import stat
from pathlib import Path

from harmless.errors import InputError
from harmless.inventory.model import OPENFLOW_PORT, Inventory, Switch
from harmless.qos.model import check_inventory as check_qos
from harmless.switch_drivers import DRIVERS
from harmless.switch_drivers import names

log = logging.getLogger("harmless.inventory")

_LABEL = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_IFNAME = re.compile(r"^[^/\s:]{1,15}$")


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


def _check_trunks(sw: Switch, w: str) -> dict[str, int]:
    """The trunks of one switch: port names, duplicates, server interface names. Returns ``{canonical port: index}``."""
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
        if problem := _server_interface_problem(t.server_interface):
            raise InputError(f"{tw}.server_interface", problem,
                             "name the server's interface the trunk cable from the switch plugs into")
    return trunks


#: server interfaces that can never be a trunk cable: the loopback, and the bridges/ports Open vSwitch and HARMLESS
#: create themselves (``ovs-system``/``ovs-netdev``: the datapath's own; ``br-otc``, ``br-of-*``: the translator and
#: OpenFlow bridges)
_NOT_A_CABLE = re.compile(r"^(lo|ovs-system|ovs-netdev|br-otc|br-of-.*)$")


def _server_interface_problem(name: str) -> str | None:
    """Why ``name`` cannot be the server end of a trunk cable, None when it can be."""
    if not _NOT_A_CABLE.match(name):
        return None
    if name == "lo":
        return "lo is the loopback interface: no switch can be cabled to it, frames sent there come straight back"
    return f"{name} is an interface Open vSwitch or HARMLESS creates itself, not a cable to the switch"


def _check_port_name(sw: Switch, pw: str, j: int, seen: dict[str, int], trunks: dict[str, int]) -> None:
    """Access port ``j``: a valid name, listed once (canonically), not a trunk, its ``trunk:`` one of the trunks."""
    p = sw.access_ports[j]
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


def _check_port_vid(sw: Switch, pw: str, j: int, vids: dict[int, int]) -> None:
    """Access port ``j``'s own ``vid`` (if set): inside 1-4094 and ``vlan_range``, not IOS-reserved, not shared."""
    p = sw.access_ports[j]
    if p.vid is None:
        return
    lo, hi = sw.vid_range()
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


def _check_port_ofport(sw: Switch, pw: str, j: int, ofports: dict[int, int]) -> None:
    """Access port ``j``: an OpenFlow port number (given or derived from the name) no other port has."""
    p = sw.access_ports[j]
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


def _check_ports(sw: Switch, w: str) -> None:
    """Trunks and access ports of one switch, every name compared in its canonical spelling; per access port in
    order: name, VID, ``trunk:`` reference, OpenFlow port; then the VID range must hold every port."""
    trunks = _check_trunks(sw, w)
    seen: dict[str, int] = {}
    vids: dict[int, int] = {}
    ofports: dict[int, int] = {}
    for j, p in enumerate(sw.access_ports):
        pw = f"{w}.access_ports[{j}]"
        _check_port_name(sw, pw, j, seen, trunks)
        _check_port_vid(sw, pw, j, vids)
        if p.trunk is not None and sw.canonical(p.trunk) not in trunks:
            raise InputError(f"{pw}.trunk", f"{p.trunk} is not one of this switch's trunks",
                             f"use one of: {', '.join(t.switch_port for t in sw.trunks)}")
        _check_port_ofport(sw, pw, j, ofports)
    lo, hi = sw.vid_range()
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


def _check_identity(sw: Switch, w: str, i: int, seen: dict[str, dict]) -> None:
    """Switch ``i``: its name, driver, host; name, device (host + port) and datapath id unique across switches.
    ``seen`` holds the names/devices/dpids of the switches before it (updated)."""
    names_, devices, dpids = seen["names"], seen["devices"], seen["dpids"]
    if sw.name in names_:
        raise InputError(f"{w}.name", f"duplicate switch name {sw.name!r} (also switches[{names_[sw.name]}])",
                         "give each switch its own name")
    names_[sw.name] = i
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


def _check_secret_refs(sw: Switch, w: str) -> None:
    """The login: a user name on one line; no password inline; exactly one of ``password_env`` (a variable name)
    and ``password_file``."""
    if re.search(r"[\x00-\x1f\x7f]", sw.username) or sw.username != sw.username.strip():
        raise InputError(f"{w}.username", f"{sw.username!r} holds a line break, a control character or blanks "
                         "around it (the switch's login prompt would get them as typed keys)",
                         "write the user name on one line, e.g. username: admin")
    if "password" in sw.optional_args or "secret" in sw.optional_args:
        raise InputError(f"{w}.optional_args", "holds a password inline",
                         "use password_env or password_file (the enable secret is the same password)")
    if bool(sw.password_env) == bool(sw.password_file):
        raise InputError(f"{w}.password_env", "set exactly one of password_env and password_file",
                         "reference the secret: password_env: VAR or password_file: /path (mode 0600)")
    if sw.password_env and not _ENV_NAME.match(sw.password_env):
        raise InputError(f"{w}.password_env", f"{sw.password_env!r} is not an environment variable name",
                         "name the variable that holds the password, e.g. password_env: SW1_PASSWORD")


def _check_vlan_range(sw: Switch, w: str) -> None:
    """``vlan_range``: ``LO-HI`` inside 2-4094, not reversed."""
    if not re.fullmatch(r"\d{1,4}(-\d{1,4})?", sw.vlan_range):
        raise InputError(f"{w}.vlan_range", f"{sw.vlan_range!r} is not a VID range", "write it as 100-199")
    lo, hi = sw.vid_range()
    if not (1 <= lo <= hi <= 4094):
        raise InputError(f"{w}.vlan_range", f"{sw.vlan_range} is outside 1-4094 or reversed",
                         "use a range inside 2-4094, e.g. 100-199")
    if lo == 1:
        raise InputError(f"{w}.vlan_range", "VID 1 is the default VLAN of every port",
                         f"start the range at 2 or above, e.g. {max(2, 100)}-{max(hi, 199)}")


def _check_trunk_types(inv: Inventory, sw: Switch, w: str, server_ifaces: dict[str, str]) -> None:
    """Each trunk's OVS type has what it needs (devargs, socket, DPDK datapath); server interfaces unique across
    switches (``server_ifaces``: interface -> ``"switch port"``, updated)."""
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


def check_inventory(inv: Inventory, src: str) -> None:
    """Cross-field checks pydantic cannot express; raise the first problem as InputError.

    Per switch: name, driver, host, secret references, VID range, trunks and access ports (canonical names: duplicates,
    trunk as access port, ``trunk:`` references, VIDs, OpenFlow port numbers and their collisions, range large
    enough), controllers (targets, duplicates, TLS files). Across switches: names, devices (host + port), datapath
    ids (also the derived ones), server interfaces of trunks. Server: DPDK CPU masks. Per-port QoS the trunk type
    cannot enforce (:func:`harmless.qos.model.check_inventory`). Touches no device.

    Raises:
        InputError: the first problem, naming ``src`` and the field path (``switches[0].access_ports[1].vid``).
    """
    _check_server(inv, src)
    seen: dict[str, dict] = {"names": {}, "devices": {}, "dpids": {}}
    server_ifaces: dict[str, str] = {}
    for i, sw in enumerate(inv.switches):
        w = f"{src}: switches[{i}]"
        _check_identity(sw, w, i, seen)
        _check_secret_refs(sw, w)
        _check_vlan_range(sw, w)
        _check_ports(sw, w)
        _check_trunk_types(inv, sw, w, server_ifaces)
        _check_openflow(sw, w)
    check_qos(inv, src)     # per-port QoS the port's trunk type cannot enforce (docs/qos.md)
