"""The two-server lab: one emulated legacy switch with two trunks to two HARMLESS servers, a management network, a
controller, and the faults of issue #23 (docs/high-availability.md).

    hosts hl-<n>-h7, -h8 ── access ports ─┐
                                          │ legacy switch (emulated IOS/EOS + its OVS data plane, hl-<n>-sw)
             server a (netns hl-<n>-sa) ══╡ GigabitEthernet0/1 (Ethernet25): trunk hl-<n>-trunk
             server b (netns hl-<n>-sb) ══╛ GigabitEthernet0/2 (Ethernet26): trunk hl-<n>-trk2
    management network 198.19.K.0/24 (a Linux bridge in netns hl-<n>-mg): this machine .1 (where the emulated
    switch's SSH/eAPI listens), server a .2 and b .3 (``mgmt0``, their agents on port 7450), the os-ken
    controller .254 (in hl-<n>-mg).

Each server has its own private OVS (in its namespace) and its own state directory (``<lab dir>/a``, ``/b``); its
agent (``harmless ha agent``) runs in its namespace with ``HARMLESS_STATE_DIR`` and ``HARMLESS_HA_SERVER`` set.
K is derived from the lab name (100-249), so two labs do not share a subnet. Nothing leaves the lab's namespaces but
the .1 address and the bridge's end in this namespace (``hl-<n>-m``), both removed with the lab.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from harmless import procs
from harmless import state as st
from harmless.errors import InputError
from harmless.lab import netns, topology
from harmless.lab.controller import start_controller, stop_controller
from harmless.lab.netns import LabError

SERVERS = ("a", "b")
AGENT_PORT = 7450
#: the second trunk port of each lab vendor (the first is topology.VENDORS[...]["trunk"])
SECOND_TRUNK = {"ios": "GigabitEthernet0/2", "eos": "Ethernet26"}


@dataclass(frozen=True)
class HaLabSpec:
    """What two-server lab to build.

    Attributes:
        name: lab name (1-6 lowercase letters/digits); ssh_port: the emulated switch's SSH/eAPI port.
        hosts: access ports that get a host (all migrated); vendor: ``ios`` or ``eos``.
        interval_ms / multiplier: the pair's heartbeat (``ha.interval_ms``, ``ha.multiplier``).
        sync_interval: the emulated switch's config-to-data-plane mirror period (s).
    """

    name: str = "ha"
    ssh_port: int = 2680
    hosts: tuple[int, ...] = (7, 8)
    vendor: str = "ios"
    interval_ms: int = 100
    multiplier: int = 3
    sync_interval: float = 0.05


def subnet(name: str) -> str:
    """``198.19.K`` (RFC 2544's benchmarking range) for lab ``name``, K in 100-249."""
    return f"198.19.{100 + int(hashlib.sha1(name.encode()).hexdigest(), 16) % 150}"


def ns_server(name: str, server: str) -> str:
    return f"hl-{name}-s{server}"


def ns_mgmt(name: str) -> str:
    return f"hl-{name}-mg"


def _mgmt_network(name: str) -> dict:
    """The management bridge, this machine's end (.1) and each server's ``mgmt0`` (.2, .3)."""
    net, mg = subnet(name), ns_mgmt(name)
    netns.add_ns(mg)
    netns.ip("link", "add", "mgbr", "type", "bridge", netns=mg)
    netns.ip("addr", "add", f"{net}.254/24", "dev", "mgbr", netns=mg)
    netns.link_up(mg, "mgbr")
    netns.veth(f"hl-{name}-m", None, "to-this", mg, up=False)
    ends = {"to-this": (None, f"hl-{name}-m", f"{net}.1")}
    for k, srv in enumerate(SERVERS):
        ns = ns_server(name, srv)
        netns.add_ns(ns, ipv6=True)
        netns.veth("mgmt0", ns, f"to-{srv}", mg, up=False)
        ends[f"to-{srv}"] = (ns, "mgmt0", f"{net}.{k + 2}")
    for port, (ns, dev, addr) in ends.items():
        netns.ip("link", "set", "dev", port, "master", "mgbr", netns=mg)
        netns.link_up(mg, port)
        netns.ip("addr", "add", f"{addr}/24", "dev", dev, netns=ns)
        netns.link_up(ns, dev)
    return {"subnet": net, "this": f"{net}.1", "controller": f"{net}.254",
            "servers": {s: f"{net}.{k + 2}" for k, s in enumerate(SERVERS)}}


def _secret(d: Path) -> Path:
    p = d / "ha.key"
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32) + "\n")
    return p


def inventory(info: dict, spec: HaLabSpec) -> dict:
    """The pair's inventory for the lab (as a dict, ready for YAML)."""
    inv = topology.inventory(info, [f"tcp:{info['mgmt']['controller']}:6653"], vlan_range="100-199",
                             ovs="private")
    sw = inv["switches"][0]
    sw["trunks"] = [{"switch_port": t["switch_port"], "server_interface": t["interface"], "type": "system",
                     "server": srv} for t, srv in zip(info["trunks"], SERVERS)]
    inv["server"] = {"datapath": "netdev", "ovs": "private"}
    inv["ha"] = {"servers": [{"name": s, "agent": f"{info['mgmt']['servers'][s]}:{AGENT_PORT}",
                              "netns": ns_server(info["name"], s)} for s in SERVERS],
                 "secret_file": info["secret_file"], "interval_ms": spec.interval_ms,
                 "multiplier": spec.multiplier}
    return inv


def ha_lab_up(spec: HaLabSpec, d: Path, progress=lambda m: None) -> dict:
    """Build the lab under the directory ``d`` (the servers' state directories, the inventory, logs); start the
    controller but not the agents (:func:`start_agent`). Returns the lab's description (also ``d/halab.json``).

    Raises:
        InputError: bad name or vendor; LabError / HarmlessError: a step failed (everything is torn down).
    """
    if spec.vendor not in SECOND_TRUNK:
        raise InputError("--vendor", f"no two-trunk lab for {spec.vendor!r}", "use ios or eos")
    d.mkdir(parents=True, exist_ok=True)
    try:
        progress("building the management network and the two server namespaces")
        mgmt = _mgmt_network(spec.name)
        with st.using(d):                     # the switch lab's files under d/labs/<name>
            info = topology.lab_up(topology.LabSpec(
                name=spec.name, ssh_port=spec.ssh_port, hosts=spec.hosts, vendor=spec.vendor,
                more_trunks=(SECOND_TRUNK[spec.vendor],), server_netns=ns_server(spec.name, "a"),
                trunk_netns=tuple(ns_server(spec.name, s) for s in SERVERS), listen_host=mgmt["this"],
                sync_interval=spec.sync_interval), progress)
        info.update(mgmt=mgmt, secret_file=str(_secret(d)), dir=str(d),
                    servers={s: {"netns": ns_server(spec.name, s), "state_dir": str(d / s)} for s in SERVERS})
        for s in SERVERS:
            (d / s).mkdir(mode=0o700, exist_ok=True)
        progress(f"starting the os-ken learning switch on {mgmt['controller']}:6653")
        start_controller(6653, d / "controller.log", netns=ns_mgmt(spec.name), host=mgmt["controller"],
                         pid_file=d / "controller.pid", wait_s=30)
        inv = d / "inventory.yaml"
        inv.write_text(yaml.safe_dump(inventory(info, spec), sort_keys=False))
        info["inventory"] = str(inv)
        (d / "halab.json").write_text(json.dumps(info, indent=2))
        return info
    except BaseException:
        ha_lab_down(spec.name, d)
        raise


def server_env(info: dict, server: str) -> dict[str, str]:
    """The environment of a command run as ``server`` (its state directory and name)."""
    return {"HARMLESS_STATE_DIR": info["servers"][server]["state_dir"], "HARMLESS_HA_SERVER": server}


def start_agent(info: dict, server: str) -> int:
    """Start ``server``'s ``harmless ha agent`` in its namespace (log ``<lab dir>/agent-<server>.log``, appended);
    returns its pid (also in ``agent-<server>.pid``)."""
    d = Path(info["dir"])
    argv = [sys.executable, "-c", "from harmless.cli import main; main()", "ha", "agent", "-i", info["inventory"]]
    p = procs.spawn(argv, d / f"agent-{server}.log", netns=info["servers"][server]["netns"],
                    env=server_env(info, server), append=True)
    (d / f"agent-{server}.pid").write_text(str(p.pid))
    return p.pid


def stop_agent(info: dict, server: str) -> None:
    """Stop ``server``'s agent (idempotent; a frozen one is thawed first so it can end)."""
    pidf = Path(info["dir"]) / f"agent-{server}.pid"
    try:
        os.kill(int(pidf.read_text()), signal.SIGCONT)
    except (OSError, ValueError):
        pass
    netns.stop_pid_file(pidf)


def ha_lab_down(name: str, d: Path) -> None:
    """Tear everything down (idempotent): agents, both servers' OVS, controller, the switch lab, namespaces."""
    info_file = d / "halab.json"
    info = json.loads(info_file.read_text()) if info_file.exists() else None
    for s in SERVERS:
        if info:
            stop_agent(info, s)
        netns.stop_ovs(d / s / "ovs", ns_server(name, s))
    stop_controller(d / "controller.pid")
    with st.using(d):
        topology.lab_down(name)
    netns.remove_prefixed(f"hl-{name}-")
    info_file.unlink(missing_ok=True)


# ----------------------------------------------------------------------------- faults
def server_pids(info: dict, server: str) -> list[int]:
    """Every process in ``server``'s namespace (its agent, ovsdb-server, ovs-vswitchd)."""
    out = netns.run_in(None, "ip", "netns", "pids", info["servers"][server]["netns"]).stdout
    return [int(x) for x in out.split()]


def vswitchd_pid(info: dict, server: str) -> int | None:
    try:
        return int((Path(info["servers"][server]["state_dir"]) / "ovs" / "run" / "ovs-vswitchd.pid").read_text())
    except (OSError, ValueError):
        return None


def signal_server(info: dict, server: str, sig: int) -> list[int]:
    """Send ``sig`` to every process of ``server`` (SIGSTOP: frozen, links stay up; SIGCONT: thawed)."""
    pids = server_pids(info, server)
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    return pids


def trunk_link(info: dict, server: str, up: bool) -> None:
    """Take ``server``'s trunk link down (or up) at its end of the cable."""
    k = SERVERS.index(server)
    t = info["trunks"][k]
    netns.ip("link", "set", "dev", t["interface"], "up" if up else "down", netns=t["netns"])


def mgmt_link(info: dict, server: str, up: bool) -> None:
    """Cut (or restore) ``server``'s management cable at the management bridge."""
    netns.ip("link", "set", "dev", f"to-{server}", "up" if up else "down", netns=ns_mgmt(info["name"]))


def kill_vswitchd(info: dict, server: str) -> int:
    """SIGKILL ``server``'s ovs-vswitchd; returns its pid. Raises LabError when it does not run."""
    pid = vswitchd_pid(info, server)
    if pid is None or not procs.alive(pid):
        raise LabError(server, "its ovs-vswitchd does not run", "start the pair first")
    os.kill(pid, signal.SIGKILL)
    return pid


# ----------------------------------------------------------------------------- observations
def _switch_appctl(info: dict, *args: str) -> str:
    """``ovs-appctl`` of the emulated switch's own OVS (its data plane)."""
    ovs = topology.lab_ovs(info)
    return ovs.appctl(*args, timeout=10)


def datapath_ports(info: dict) -> dict[int, str]:
    """The emulated switch's datapath port numbers -> its OVS port names (``dpctl/show``)."""
    out = _switch_appctl(info, "dpctl/show")
    return {int(n): name for n, name in re.findall(r"port (\d+): (\S+)", out)}


def flood_trunks(info: dict, dp_ports: dict[int, str]) -> list[str]:
    """The trunk ports a broadcast from the first host's access port leaves the emulated switch on now
    (``ofproto/trace``: the switch's forwarding decision itself, not its configuration)."""
    host = next(iter(info["hosts"].values()))
    port = topology.ovs_port(host["interface"])
    out = _switch_appctl(info, "ofproto/trace", topology.BRIDGE,
                         f"in_port={port},dl_src={host['mac']},dl_dst=ff:ff:ff:ff:ff:ff")
    acts = next((ln for ln in out.splitlines() if ln.startswith("Datapath actions:")), "")
    trunk_ports = {topology.ovs_port(t["switch_port"]) for t in info["trunks"]}
    outs = [dp_ports.get(int(n), n) for n in re.findall(r"(?<![\w=])(\d+)(?![\w.])", acts.split(":", 1)[-1])]
    return sorted({p for p in outs if p in trunk_ports})
