"""The edge-overlay lab: servers with OVS edge switches, VMs, a legacy L2 core, the controller -- in namespaces.

    VM netns hv<lab>-<vm> (eth0: MAC/IP from the registry, MTU 1500)
        │ veth (v-<vm> = OpenFlow port 2.. of the edge switch)
    server netns hv<lab>-<server>: its OWN ovsdb-server + ovs-vswitchd (userspace netdev datapath),
        br-edge (fail_mode=secure, OpenFlow 1.3, datapath id 0x4f56<i>) ── port 1 "uplink" (MAC 02:5e:00:00:00:<i>)
        mgmt (10.254.<i>.2/24) ── veth ── netns hv<lab>-ctl (m-<server> 10.254.<i>.1/24): osken-manager + the app
                                         │ uplink: veth, MTU 1500
    core netns hv<lab>-core: its own OVS, br-core = the legacy L2 switch (NORMAL: per-VLAN MAC learning, flooding,
        every port carries every VLAN), port <server> per server. No OpenFlow rules of ours: a plain L2 core.

Each server has its own ovs-vswitchd in its own namespace (two userspace datapaths cannot share a namespace, and a
shared vswitchd would also share one tunnel routing table, which the VXLAN comparison cannot have), so servers are
isolated exactly like separate machines. Modes (:func:`set_mode`): ``overlay`` (the controller's flows),
``vxlan`` (uplink moved to br-phy with IP 10.99.0.<i>/24, VXLAN ports between the edge switches -- OVS userspace
tunnelling --, one VNI per tenant, static flows from the same registry), ``optimal`` (no overlay: br-edge does
NORMAL bridging straight onto the core; the paper's upper bound, no tenant isolation).

Lab files live in ``<state dir>/overlay/<lab>/`` (``lab.json``, ``registry.json``, the controller's ``conf.json``,
``vids.json``, ``status.json``, logs, one OVS folder per server and the core, the journal of lab changes).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import shutil
import time
from pathlib import Path

import yaml

from harmless import orchestrator as orch
from harmless import state as st
from harmless.errors import HarmlessError, InputError
from harmless.journal import Journal
from harmless.lab import netns
from harmless.lab import topology as T
from harmless.lab.controller import start_controller as launch_controller
from harmless.lab.controller import stop_controller as stop_pid_controller
from harmless.ovs import Ovs
from harmless.pipelines.edge_overlay import flows as fl
from harmless.pipelines.edge_overlay.model import (FIRST_VM_PORT, MAX_VM_PORT, UPLINK_PORT, Registry, Vm, load_registry,
                                                  parse_registry, vm_iface)
from harmless.procs import free_port

BRIDGE, CORE_BRIDGE, PHY_BRIDGE = "br-edge", "br-core", "br-phy"
UPLINK = "uplink"        #: the server's NIC into the legacy core (OpenFlow port 1 of br-edge)
CONTROLLER_APP = "harmless.pipelines.edge_overlay.controller"
DPID_BASE = 0x4F56 << 48
VX_BASE = MAX_VM_PORT + 1   #: OpenFlow port of the VXLAN port to server j = VX_BASE + j (above every VM port)
VNI_BASE = 5000          #: tenant k's VNI in the VXLAN lab


def lab_dir(name: str) -> Path:
    """The lab's folder, ``<state dir>/overlay/<name>``."""
    return st.state_dir() / "overlay" / name


def info(name: str) -> dict | None:
    """The lab description (``lab.json``) or None."""
    p = lab_dir(name) / "lab.json"
    return json.loads(p.read_text()) if p.exists() else None


def running_labs() -> list[str]:
    """Names of the overlay labs that are up (have a ``lab.json``)."""
    d = st.state_dir() / "overlay"
    return sorted(p.parent.name for p in d.glob("*/lab.json")) if d.exists() else []


def ns(lab: str, what: str) -> str:
    """Namespace of a server, VM, ``core`` or ``ctl``."""
    return f"hv{lab}-{what}"


def vm_netns(lab: str, vm: str) -> str:
    """Namespace of a VM (a lab host's namespace for VMs on a HARMLESS server)."""
    i = info(lab) or {}
    return i.get("vms", {}).get(vm, {}).get("netns") or ns(lab, vm)


def server_mac(i: int) -> str:
    """Uplink MAC of server number ``i`` (1-based): locally administered 02:5e:00:00:<i>."""
    return f"02:5e:00:00:{i >> 8:02x}:{i & 0xff:02x}"


def server_ovs(lab: str, server: str) -> Ovs:
    """The private OVS instance (ovsdb-server + ovs-vswitchd) of one server, in its namespace."""
    return Ovs(lab_dir(lab) / f"ovs-{server}", netns=ns(lab, server))


def core_ovs(lab: str) -> Ovs:
    """The legacy core's OVS instance (bridge ``br-core``, NORMAL)."""
    return Ovs(lab_dir(lab) / "ovs-core", netns=ns(lab, "core"))


def registry(lab: str) -> Registry:
    """The lab's current registry (``registry.json``: the topology file plus ports, updated by ``vm`` commands)."""
    return parse_registry(json.loads((lab_dir(lab) / "registry.json").read_text()), "registry.json")


def status(lab: str) -> dict:
    """The controller's ``status.json`` ({} before the controller wrote it)."""
    p = lab_dir(lab) / "status.json"
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return {}


# ----------------------------------------------------------------------------- helpers
def _server_index(reg: Registry, server: str) -> int:
    return reg.servers.index(server) + 1


# ----------------------------------------------------------------------------- up
def up(topology: str, progress=lambda m: None, wait_s: float = 60) -> dict:
    """Build the lab in overlay mode and wait until the controller has audited every edge switch.

    Returns the lab description (``lab.json``).

    Raises:
        InputError: bad topology (nothing changed), not root, lab already up.
        HarmlessError: a step failed (everything built so far is removed).
    """
    reg = load_registry(topology)
    if os.geteuid() != 0:
        raise InputError("harmless overlay up", "needs root (network namespaces, OVS)", "run it with sudo")
    if info(reg.name) or Path(f"/run/netns/{ns(reg.name, 'core')}").exists():
        raise InputError(topology, f"overlay lab {reg.name!r} is already up", f"harmless overlay down --name {reg.name}")
    d = lab_dir(reg.name)
    if d.exists():
        shutil.rmtree(d)
    d.parent.mkdir(exist_ok=True, mode=0o700)
    d.mkdir(mode=0o700)
    ports = reg.ports()
    for t in reg.tenants:                           # the registry the controller reads names every VM's port
        for v in t.vms:
            v.port = ports[v.name]
    st.write_private(d / "registry.json", reg.model_dump_json(indent=1))
    j = _journal(reg.name, "overlay-up")
    try:
        out = _build(reg, d, j, progress, wait_s)
        j.record("up.end")
        return out
    except BaseException:
        progress("failed: tearing down what was built")
        j.record("rollback.begin")
        j.close()
        down(reg.name)
        raise
    finally:
        j.close()


def _journal(lab: str, op: str) -> Journal:
    """The journal of a lab change, kept in the lab's folder (``journal.jsonl``; not the HARMLESS deployment's):
    every lab change is recorded (fsynced) before it happens; closing archives it under the lab's ``journal/``."""
    return Journal(op, path=lab_dir(lab) / "journal.jsonl")


def _build(reg: Registry, d: Path, j: Journal, progress, wait_s: float) -> dict:
    lab = reg.name
    lab_info = {"name": lab, "servers": {}, "vms": {}, "mode": "overlay", "openflow_port": reg.openflow_port,
                "created": time.time()}
    j.record("namespaces.create", servers=reg.servers)
    for n in ("core", "ctl", *reg.servers):
        netns.add_ns(ns(lab, n))
    _save_info(lab, lab_info)
    progress("legacy L2 core (OVS NORMAL bridge, per-VLAN MAC learning)")
    core = core_ovs(lab)
    core.start()
    core.vsctl("add-br", CORE_BRIDGE, "--", "set", "bridge", CORE_BRIDGE, "datapath_type=netdev",
               "fail_mode=standalone", "other_config:mac-aging-time=300")
    netns.ip("link", "set", CORE_BRIDGE, "up", netns=ns(lab, "core"), check=False)
    hl = reg.harmless.server if reg.harmless else None
    progress(f"{len(reg.servers)} servers, each with its own OVS edge switch" + (f" ({hl}: HARMLESS)" if hl else ""))
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        for s, sinfo in ex.map(lambda i_s: _build_server(reg, core, *i_s),
                               [(i, s) for i, s in enumerate(reg.servers, 1) if s != hl]):
            lab_info["servers"][s] = sinfo
    _save_info(lab, lab_info)
    progress(f"{len(reg.vms())} VMs")
    for tenant, v in reg.vms():
        if v.server == hl:
            continue
        j.record("vm.create", vm=v.name, server=v.server)
        _make_vm(lab, v, tenant)
        lab_info["vms"][v.name] = {"tenant": tenant, "netns": ns(lab, v.name)}
    _save_info(lab, lab_info)
    if hl:
        i = reg.servers.index(hl) + 1
        lab_info["servers"][hl] = {"index": i, "dpid": DPID_BASE | i, "mac": server_mac(i), "netns": ns(lab, hl),
                                   "uplink_port": reg.harmless.uplink_port, "by_port": True, "harmless": True}
    progress("controller (os-ken, harmless.pipelines.edge_overlay.controller)")
    conf = {"registry": str(d / "registry.json"), "state_dir": str(d),
            "servers": {s: {k: x[k] for k in ("dpid", "mac", "uplink_port", "by_port") if k in x}
                        for s, x in lab_info["servers"].items()}}
    st.write_private(d / "conf.json", json.dumps(conf, indent=1))
    j.record("controller.start")
    start_controller(lab)
    if hl:
        j.record("harmless.up", server=hl)
        _build_harmless(reg, lab_info, d, progress)
        _save_info(lab, lab_info)
    wait_audited(lab, wait_s)
    return lab_info


def _save_info(lab: str, lab_info: dict) -> None:
    st.write_private(lab_dir(lab) / "lab.json", json.dumps(lab_info, indent=1))


def _mgmt_cable(lab: str, s: str, i: int) -> None:
    """Server ``s`` (number ``i``) cabled to the controller's namespace: 10.254.<i>.2 -- 10.254.<i>.1."""
    sn = ns(lab, s)
    netns.veth("mgmt", sn, f"m-{s}", ns(lab, "ctl"), mtu=1500)
    netns.ip("addr", "add", f"10.254.{i}.2/24", "dev", "mgmt", netns=sn)
    netns.ip("addr", "add", f"10.254.{i}.1/24", "dev", f"m-{s}", netns=ns(lab, "ctl"))


def _build_server(reg: Registry, core: Ovs, i: int, s: str) -> tuple[str, dict]:
    """Server ``s`` (number ``i``): its uplink into the core, its management cable, its OVS with ``br-edge``."""
    lab = reg.name
    sn = ns(lab, s)
    netns.veth(UPLINK, sn, s, ns(lab, "core"), mtu=1500)
    netns.ip("link", "set", "dev", UPLINK, "address", server_mac(i), netns=sn)
    _mgmt_cable(lab, s, i)
    core.vsctl("add-port", CORE_BRIDGE, s)
    o = server_ovs(lab, s)
    o.start()
    o.vsctl("add-br", BRIDGE, "--", "set", "bridge", BRIDGE, "datapath_type=netdev", "fail_mode=secure",
            "protocols=OpenFlow13", f"other_config:datapath-id={DPID_BASE | i:016x}",
            "--", "add-port", BRIDGE, UPLINK, "--", "set", "interface", UPLINK, f"ofport_request={UPLINK_PORT}",
            "--", "set-controller", BRIDGE, f"tcp:10.254.{i}.1:{reg.openflow_port}",
            "--", "set", "controller", BRIDGE, "connection_mode=out-of-band")
    return s, {"index": i, "dpid": DPID_BASE | i, "mac": server_mac(i), "netns": sn}


def _build_harmless(reg: Registry, lab_info: dict, d: Path, progress) -> None:
    """The HARMLESS server: an emulated legacy switch (fake-switches IOS over SSH + its OVS data plane) whose host
    ports are the VMs (bare-metal hosts) and whose port ``uplink_port`` is cabled to the core; ``harmless up`` (the
    real orchestrator, NAPALM) migrates them, and the resulting ``br-of-sw1`` is this server's edge switch."""
    lab, hs = reg.name, reg.harmless
    s, x = hs.server, lab_info["servers"][hs.server]
    sn, i = ns(lab, s), x["index"]
    _mgmt_cable(lab, s, i)
    vms = [(t, v) for t, v in reg.vms() if v.server == s]
    lname = "v" + lab
    progress(f"{s}: emulated legacy switch (lab {lname}) with {len(vms)} bare-metal hosts")
    x["lab"] = lname
    hinfo = T.lab_up(T.LabSpec(name=lname, ssh_port=free_port(), hosts=tuple(v.port for _, v in vms),
                               server_netns=sn, uplinks=((hs.uplink_port, ""),)))
    netns.move(T.uplink_iface(lname, hs.uplink_port), None, ns(lab, "core"), s)
    netns.link_up(ns(lab, "core"), s)
    core_ovs(lab).vsctl("add-port", CORE_BRIDGE, s)
    for t, v in vms:
        hn = hinfo["hosts"][str(v.port)]["netns"]
        netns.sysctl(hn, *netns.NO_IPV6)
        netns.ip("addr", "flush", "dev", "eth0", netns=hn)
        netns.iface_up(hn, "eth0", v.ip, mac=v.mac)
        lab_info["vms"][v.name] = {"tenant": t, "netns": hn}
    inv = T.inventory(hinfo, [f"tcp:10.254.{i}.1:{reg.openflow_port}"])
    sw = inv["switches"][0]
    sw["access_ports"] = [T.access_iface("ios", v.port) for _, v in vms] + [
        {"interface": T.access_iface("ios", hs.uplink_port), "qinq": True}]
    sw["datapath_id"] = f"0x{x['dpid']:016x}"
    p = d / "harmless-inventory.yaml"
    st.write_private(p, yaml.safe_dump(inv, sort_keys=False))
    progress(f"{s}: harmless up (NAPALM against the emulated switch, br-otc + br-of-sw1)")
    with st.using(d / "harmless"):
        orch.up(str(p), wait_controller=30)


def _make_vm(lab: str, v: Vm, tenant: str) -> None:
    """The VM's namespace, its eth0 (MAC, IP, MTU 1500, no TX checksum offload: the userspace datapath forwards
    frames as they are, so partial checksums would arrive unfinished) and its port on its server's edge switch."""
    vn = ns(lab, v.name)
    if not netns.exists(vn):
        netns.add_ns(vn)
    netns.veth("eth0", vn, vm_iface(v.name), ns(lab, v.server), mtu=1500)
    netns.iface_up(vn, "eth0", v.ip, mac=v.mac)
    server_ovs(lab, v.server).vsctl("add-port", BRIDGE, vm_iface(v.name), "--", "set", "interface",
                                    vm_iface(v.name), f"ofport_request={v.port or FIRST_VM_PORT}")


def start_controller(lab: str) -> int:
    """Start osken-manager with the overlay app in the lab's ``ctl`` namespace (every address, the lab's OpenFlow
    port; log appended to ``controller.log``); returns its pid."""
    d = lab_dir(lab)
    p = launch_controller(info(lab)["openflow_port"], d / "controller.log", app=CONTROLLER_APP, netns=ns(lab, "ctl"),
                          env={"OVERLAY_CONTROLLER_CONF": str(d / "conf.json")}, host=None,
                          pid_file=d / "controller.pid", append_log=True)
    return p.pid


def stop_controller(lab: str) -> None:
    """Stop the lab's controller (process group; idempotent)."""
    stop_pid_controller(lab_dir(lab) / "controller.pid")


def wait_audited(lab: str, wait_s: float = 60, since: float = 0.0) -> dict:
    """Wait until every server's edge switch is connected and audited after ``since`` (epoch s); return status.

    Raises:
        HarmlessError: not within ``wait_s`` (the controller log is named).
    """
    servers = list(info(lab)["servers"])
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        s = status(lab)
        srv = s.get("servers", {})
        if s and all(srv.get(x, {}).get("connected") and (srv[x].get("audit") or {}).get("t", 0) > since
                     for x in servers):
            return s
        time.sleep(0.2)
    raise HarmlessError("overlay controller", f"not every edge switch connected and audited within {wait_s:.0f} s",
                        f"see {lab_dir(lab) / 'controller.log'}")


# ----------------------------------------------------------------------------- VMs
def vm_add(lab: str, vm: Vm, tenant: str) -> None:
    """Add a VM: registry first (journaled, atomic), then its namespace and edge switch port (port-status ADD)."""
    reg = registry(lab)
    if reg.harmless and vm.server == reg.harmless.server:
        raise InputError("--server", f"{vm.server} is a HARMLESS server: its VMs are hosts on legacy access ports "
                         "(in the topology file)", "add the VM to one of the other servers")
    t = next((x for x in reg.tenants if x.name == tenant), None)
    data = json.loads(reg.model_dump_json())
    if t is None:
        data["tenants"].append({"name": tenant, "vms": []})
    used = {v.port for _, v in reg.vms() if v.server == vm.server}
    if vm.port is None:
        vm.port = next(p for p in range(FIRST_VM_PORT, MAX_VM_PORT + 1) if p not in used)
    next(x for x in data["tenants"] if x["name"] == tenant)["vms"].append(json.loads(vm.model_dump_json()))
    new = parse_registry(data, f"vm {vm.name}")
    j = _journal(lab, "overlay-vm-add")
    try:
        j.record("registry.save", vm=vm.name)
        st.write_private(lab_dir(lab) / "registry.json", new.model_dump_json(indent=1))
        j.record("vm.create", vm=vm.name, server=vm.server)
        _make_vm(lab, vm, tenant)
        i = info(lab)
        i["vms"][vm.name] = {"tenant": tenant, "netns": ns(lab, vm.name)}
        st.write_private(lab_dir(lab) / "lab.json", json.dumps(i, indent=1))
        j.record("up.end")
    finally:
        j.close()


def vm_move(lab: str, name: str, to: str) -> dict:
    """Migrate VM ``name`` to server ``to``: delete its port on the old edge switch (OFPT_PORT_STATUS DELETE), move
    the cable end to the new server, add it there (ADD). The VM keeps MAC, IP and its ARP cache. Returns
    ``{"from", "to", "port"}``.

    Raises:
        InputError: unknown VM or server, or the VM already there (nothing changed).
    """
    reg = registry(lab)
    found = reg.vm(name)
    if found is None:
        raise InputError("vm move", f"no VM {name!r} in lab {lab}", "harmless overlay status lists them")
    if to not in reg.servers:
        raise InputError("--to", f"no server {to!r} in lab {lab}", f"one of {', '.join(reg.servers)}")
    _, v = found
    if v.server == to:
        raise InputError("--to", f"VM {name} is already on {to}", "pick another server")
    if reg.harmless and reg.harmless.server in (v.server, to):
        raise InputError("vm move", f"{reg.harmless.server} is a HARMLESS server: its VMs are hosts on legacy ports",
                         "move VMs between the other servers")
    old = v.server
    used = {x.port for _, x in reg.vms() if x.server == to}
    port = next(p for p in range(FIRST_VM_PORT, MAX_VM_PORT + 1) if p not in used)
    data = json.loads(reg.model_dump_json())
    for t in data["tenants"]:
        for x in t["vms"]:
            if x["name"] == name:
                x["server"], x["port"] = to, port
    new = parse_registry(data, f"vm move {name}")
    j = _journal(lab, "overlay-vm-move")
    try:
        j.record("vm.port.delete", vm=name, server=old)
        server_ovs(lab, old).vsctl("del-port", BRIDGE, vm_iface(name))
        netns.move(vm_iface(name), ns(lab, old), ns(lab, to))
        netns.link_up(ns(lab, to), vm_iface(name))
        j.record("registry.save", vm=name, server=to, port=port)
        st.write_private(lab_dir(lab) / "registry.json", new.model_dump_json(indent=1))
        j.record("vm.port.add", vm=name, server=to, port=port)
        server_ovs(lab, to).vsctl("add-port", BRIDGE, vm_iface(name), "--", "set", "interface", vm_iface(name),
                                  f"ofport_request={port}")
        j.record("up.end")
    finally:
        j.close()
    return {"from": old, "to": to, "port": port}


def vm_remove(lab: str, name: str) -> None:
    """Remove a VM: its port (port-status DELETE), namespace, and registry entry (journaled)."""
    reg = registry(lab)
    found = reg.vm(name)
    if found is None:
        raise InputError("vm remove", f"no VM {name!r} in lab {lab}", "harmless overlay status lists them")
    _, v = found
    data = json.loads(reg.model_dump_json())
    for t in data["tenants"]:
        t["vms"] = [x for x in t["vms"] if x["name"] != name]
    j = _journal(lab, "overlay-vm-remove")
    try:
        j.record("vm.port.delete", vm=name, server=v.server)
        with contextlib.suppress(HarmlessError):
            server_ovs(lab, v.server).vsctl("--if-exists", "del-port", BRIDGE, vm_iface(name))
        netns.ip("netns", "del", ns(lab, name), check=False)
        j.record("registry.save", vm=name)
        st.write_private(lab_dir(lab) / "registry.json", parse_registry(data, "registry").model_dump_json(indent=1))
        i = info(lab)
        i["vms"].pop(name, None)
        st.write_private(lab_dir(lab) / "lab.json", json.dumps(i, indent=1))
        j.record("up.end")
    finally:
        j.close()


# ----------------------------------------------------------------------------- modes (paper Table II)
def set_mode(lab: str, mode: str, progress=lambda m: None, wait_s: float = 60) -> None:
    """Switch the lab between ``overlay``, ``vxlan`` and ``optimal`` (see the module doc).

    Raises:
        InputError: unknown mode.
    """
    if mode not in ("overlay", "vxlan", "optimal"):
        raise InputError("--mode", f"unknown mode {mode!r}", "overlay, vxlan or optimal")
    i = info(lab)
    reg = registry(lab)
    if reg.harmless:
        raise InputError("--mode", "the VXLAN/optimal comparison is not built for a lab with a HARMLESS server",
                         "use a topology without harmless:")
    j = _journal(lab, f"overlay-mode-{mode}")
    try:
        j.record("mode.set", mode=mode, was=i["mode"])
        for s, x in i["servers"].items():
            o = server_ovs(lab, s)
            o.vsctl("del-controller", BRIDGE)
            o.vsctl("--if-exists", "del-br", PHY_BRIDGE)
            for p in o.vsctl("list-ports", BRIDGE).split():
                if p.startswith("vx-"):
                    o.vsctl("del-port", BRIDGE, p)
            o.vsctl("--may-exist", "add-port", BRIDGE, UPLINK, "--", "set", "interface", UPLINK,
                    f"ofport_request={UPLINK_PORT}")
            o.ofctl("-O", "OpenFlow13", "del-flows", BRIDGE)
        if mode == "overlay":
            t0 = time.time()
            for s, x in i["servers"].items():
                server_ovs(lab, s).vsctl("set-controller", BRIDGE, f"tcp:10.254.{x['index']}.1:{i['openflow_port']}",
                                         "--", "set", "controller", BRIDGE, "connection_mode=out-of-band")
            wait_audited(lab, wait_s, since=t0)
        elif mode == "optimal":
            for s in i["servers"]:
                server_ovs(lab, s).ofctl("-O", "OpenFlow13", "add-flow", BRIDGE, "priority=0,actions=NORMAL")
        else:
            _vxlan(lab, i, reg)
        i["mode"] = mode
        st.write_private(lab_dir(lab) / "lab.json", json.dumps(i, indent=1))
        j.record("up.end")
    finally:
        j.close()


def _vxlan(lab: str, i: dict, reg: Registry) -> None:
    where = {v.name: (v.server, v.port) for _, v in reg.vms()}
    vni = {t.name: VNI_BASE + k for k, t in enumerate(reg.tenants, 1)}
    for s, x in i["servers"].items():
        o, sn, k = server_ovs(lab, s), ns(lab, s), x["index"]
        o.vsctl("del-port", BRIDGE, UPLINK, "--", "add-br", PHY_BRIDGE, "--", "set", "bridge", PHY_BRIDGE,
                "datapath_type=netdev", "fail_mode=standalone", f"other_config:hwaddr={x['mac']}",
                "--", "add-port", PHY_BRIDGE, UPLINK)
        netns.ip("addr", "add", f"10.99.0.{k}/24", "dev", PHY_BRIDGE, netns=sn)
        netns.link_up(sn, PHY_BRIDGE)
        vx = {}
        args = []
        for t, y in i["servers"].items():
            if t == s:
                continue
            port = VX_BASE + y["index"]
            vx[t] = port
            args += ["--", "add-port", BRIDGE, f"vx-{t}", "--", "set", "interface", f"vx-{t}", "type=vxlan",
                     f"options:remote_ip=10.99.0.{y['index']}", "options:key=flow", f"ofport_request={port}"]
        o.vsctl(*args)
        text = "\n".join(f.to_ofctl() for f in fl.vxlan_flows(reg, where, s, vx, vni)) + "\n"
        o.ofctl("-O", "OpenFlow13", "add-flows", BRIDGE, "-", stdin=text)


# ----------------------------------------------------------------------------- down
def down(lab: str) -> bool:
    """Remove the lab (idempotent, also after a failed/killed up): controller, every OVS, namespaces, files.

    Returns True when anything was found.
    """
    d = lab_dir(lab)
    found = d.exists()
    stop_controller(lab)
    hl = next((k for k, x in (info(lab) or {}).get("servers", {}).items() if x.get("harmless")), None)
    jobs = [lambda o=o: netns.stop_ovs(o, ns(lab, o.name[4:])) for o in (sorted(d.glob("ovs-*")) if d.exists() else [])]
    # a HARMLESS server: its emulated legacy switch is destroyed, so its config is not restored (no
    # ``harmless down``): HARMLESS's private OVS (br-otc, br-of-sw1) is stopped and the switch's lab removed
    if hl and (d / "harmless" / "ovs").exists():
        jobs.append(lambda: netns.stop_ovs(d / "harmless" / "ovs", ns(lab, hl)))
    if T.lab_info("v" + lab) or netns.exists(f"hl-v{lab}-sw"):
        jobs.append(lambda: T.lab_down("v" + lab))
    with concurrent.futures.ThreadPoolExecutor(6) as ex:         # independent OVS instances and the switch lab
        list(ex.map(lambda f: f(), jobs))
    found = netns.remove_prefixed(f"hv{lab}-") or found
    if d.exists():
        shutil.rmtree(d, ignore_errors=True)
    return found
