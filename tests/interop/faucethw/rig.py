"""The two switches under test, cabled as Faucet's hardware-switch mode expects, and their test hosts.

::

    test host "mh" (netns hl-<lab>-mh)                          HARMLESS (the built-in lab)
      mininet + Faucet + Gauge (hw_switch: True)
      dp7..dp10 ───────── lab cables ─────────── legacy access ports FastEthernet0/7-10 ─ trunk ─ br-otc ─ br-of
      cpn 198.19.0.1/30 ────────────────────────────── cpn 198.19.0.2/30 (server netns hl-<lab>-srv, br-of dials)

    test host "mp" (netns hl-<lab>-mp)                          plain OVS (netns hl-<lab>-pl, its own OVS)
      dp7..dp10 ───────────────────────────────── br-plain ports 7-10 (pl7..pl10)
      cpn 198.19.0.5/30 ────────────────────────────── cpn 198.19.0.6/30 (br-plain dials)

Each test host has its own private OVS (``OVS_RUNDIR``) for mininet's patch-panel bridge, so the two runs are
independent (they can run at the same time) and nothing touches the system's OVS. The lab's host cables are
moved out of the lab's host namespaces into the test host ("the hosts' interfaces cabled as dp_ports"). br-of is
built by ``harmless up`` with the lab's inventory (datapath id 0x1, controllers Faucet's and Gauge's ports on the
test host's CPN address) after the cables are plugged in (links up), and ``harmless watch`` runs as in a real
deployment (its systemd unit); br-plain gets the same datapath id, ports 7-10, ``fail_mode=secure``, OpenFlow13, the
userspace datapath and the same Controller settings HARMLESS writes (``max_backoff`` 1000 ms, out-of-band).

Addresses: 198.19.0.0/30 and 198.19.0.4/30 (RFC 2544's benchmarking range), only inside these namespaces.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harmless.lab import netns, topology as lab
from harmless.ovs import Ovs
from harmless.procs import free_port, run, spawn, stop
from tests.interop.faucethw.install import SuiteError

PORTS = (7, 8, 9, 10)
DPID = 1
OF_PORT, GAUGE_PORT = 6653, 6654
CPN = {"harmless": ("198.19.0.1", "198.19.0.2"), "plain": ("198.19.0.5", "198.19.0.6")}
PLAIN_BRIDGE = "br-plain"
SIDES = ("plain", "harmless")


#: the lab's Catalyst by default: a 3750 Metro tunnels LLDP and CDP (docs/transparency.md, "What each platform can
#: tunnel"); with ``2960`` (no tunnelling) LLDP and CDP stop at the legacy switch
PLATFORM = "me3750"
L2PT = ("lldp", "cdp")


@dataclass
class Rig:
    """Both switches and both test hosts. ``name``: lab name (``fs`` + 4 hex digits); ``work``: run folder;
    ``platform``: the emulated Catalyst; ``l2pt``: the link-local protocols it tunnels for every migrated port."""

    work: Path
    platform: str = PLATFORM
    l2pt: tuple[str, ...] = L2PT
    name: str = field(default_factory=lambda: "fs" + uuid.uuid4().hex[:4])
    info: dict = field(default_factory=dict)
    ovs: dict[str, Ovs] = field(default_factory=dict)
    watch: subprocess.Popen | None = None

    def test_ns(self, side: str) -> str:
        """The test host's namespace of ``side`` (``plain`` or ``harmless``)."""
        return f"hl-{self.name}-m{side[0]}"

    @property
    def plain_ns(self) -> str:
        return f"hl-{self.name}-pl"

    def test_env(self, side: str) -> dict[str, str]:
        """Environment of the suite on ``side``: its private OVS (``OVS_RUNDIR``, ...)."""
        o = self.ovs[f"m{side[0]}"]
        return {k: v for k, v in o._env.items() if k.startswith("OVS_")}

    def hw_config(self, side: str) -> dict:
        """Faucet's ``hw_switch_config.yaml`` for ``side``."""
        return {"hw_switch": True, "hardware": "Open vSwitch", "dpid": DPID, "cpn_intf": "cpn",
                "of_port": OF_PORT, "gauge_of_port": GAUGE_PORT, "dp_ports": {n: f"dp{n}" for n in PORTS}}

    def controllers(self, side: str) -> list[str]:
        ip = CPN[side][0]
        return [f"tcp:{ip}:{OF_PORT}", f"tcp:{ip}:{GAUGE_PORT}"]


def _cpn(rig: Rig, side: str, peer_ns: str) -> None:
    """The control-plane cable between the test host and the switch's namespace."""
    ours, theirs = CPN[side]
    netns.veth("cpn", rig.test_ns(side), "cpn", peer_ns)
    netns.ip("addr", "add", f"{ours}/30", "dev", "cpn", netns=rig.test_ns(side))
    netns.ip("addr", "add", f"{theirs}/30", "dev", "cpn", netns=peer_ns)


def _private_ovs(rig: Rig, key: str, ns: str) -> Ovs:
    o = Ovs(rig.work / f"ovs-{key}", netns=ns)
    rig.ovs[key] = o
    o.start()
    return o


def build_lab_side(rig: Rig, progress=print) -> None:
    """The lab (hosts on 7-10, server netns), its host cables moved into the test host as dp7..dp10, the CPN."""
    progress(f"lab {rig.name}: emulated IOS switch ({rig.platform}), hosts on FastEthernet0/"
             f"{','.join(map(str, PORTS))}")
    rig.info = lab.lab_up(lab.LabSpec(name=rig.name, ssh_port=free_port(), hosts=PORTS, platform=rig.platform,
                                      server_netns=f"hl-{rig.name}-srv"))
    ns = rig.test_ns("harmless")
    netns.add_ns(ns, ipv6=True)         # Faucet's ofctl_rest listens on ::1
    for n in PORTS:       # plugged in like a test host's NIC: up, no address, IPv6 off (TX offload stays off)
        netns.move("eth0", rig.info["hosts"][str(n)]["netns"], ns, f"dp{n}")
        netns.sysctl(ns, f"net.ipv6.conf.dp{n}.disable_ipv6=1")
        netns.link_up(ns, f"dp{n}")
    _cpn(rig, "harmless", rig.info["server_netns"])
    _private_ovs(rig, "mh", ns)


def build_plain_side(rig: Rig, progress=print) -> None:
    """The plain OVS bridge in its own namespace and OVS, cabled to the test host ``mp``."""
    progress(f"plain OVS bridge {PLAIN_BRIDGE} (userspace datapath, ports {','.join(map(str, PORTS))})")
    ns, pl = rig.test_ns("plain"), rig.plain_ns
    netns.add_ns(ns, ipv6=True)         # Faucet's ofctl_rest listens on ::1
    netns.add_ns(pl)
    for n in PORTS:
        netns.veth(f"dp{n}", ns, f"pl{n}", pl, up=False)
        netns.link_up(pl, f"pl{n}")
        netns.no_tx_offload(pl, f"pl{n}")
        netns.no_tx_offload(ns, f"dp{n}")
    _cpn(rig, "plain", pl)
    _private_ovs(rig, "mp", ns)
    o = _private_ovs(rig, "pl", pl)
    cmds = [["add-br", PLAIN_BRIDGE],
            ["set", "Bridge", PLAIN_BRIDGE, "datapath_type=netdev", "fail_mode=secure", "protocols=OpenFlow13",
             f"other_config:datapath-id={DPID:016x}", "other_config:disable-in-band=true"]]
    for n in PORTS:
        cmds += [["add-port", PLAIN_BRIDGE, f"pl{n}"], ["set", "Interface", f"pl{n}", f"ofport_request={n}"]]
    ids = []
    for i, target in enumerate(rig.controllers("plain")):
        ids.append(f"@c{i}")
        cmds.append([f"--id=@c{i}", "create", "Controller", f'target="{target}"', "max_backoff=1000",
                     "connection_mode=out-of-band"])
    cmds.append(["set", "Bridge", PLAIN_BRIDGE, f"controller=[{','.join(ids)}]"])
    o.transact(cmds)


def _harmless_exe() -> Path:
    return Path(sys.executable).with_name("harmless")


def harmless_cli(rig: Rig, *args: str, timeout: float = 300) -> str:
    """``harmless ARGS`` as a user runs it (this interpreter's ``harmless``), state in the run folder."""
    env = {**os.environ, "HARMLESS_STATE_DIR": str(rig.work / "state")}
    return run([str(_harmless_exe()), *args], env=env, timeout=timeout, error=SuiteError,
               fix=f"see {rig.work / 'state'}").stdout


def harmless_up(rig: Rig, progress=print) -> None:
    """``harmless up`` with the lab's inventory, controllers at the test host's CPN address (no wait: Faucet
    starts with each test)."""
    inv = lab.inventory(rig.info, rig.controllers("harmless"))
    if rig.l2pt:
        inv["switches"][0]["l2pt"] = list(rig.l2pt)
    p = rig.work / "inventory.yaml"
    p.write_text(yaml.safe_dump(inv, sort_keys=False))
    progress(f"harmless up -i {p.name} (datapath id {DPID:#x}, controllers {', '.join(rig.controllers('harmless'))}, "
             f"l2pt {','.join(rig.l2pt) or 'none'})")
    harmless_cli(rig, "up", "-i", str(p), "--no-wait", "--json")
    progress("harmless watch (legacy link state -> br-of, as its systemd unit runs it)")
    rig.watch = spawn([str(_harmless_exe()), "watch", "--interval", "1"], rig.work / "watch.log",
                      env={"HARMLESS_STATE_DIR": str(rig.work / "state")})


def kill_netns_procs(ns: str) -> None:
    """SIGKILL every process left in namespace ``ns`` (mininet hosts, Faucet, tcpdump of a killed run)."""
    r = run(["ip", "netns", "pids", ns], check=False)
    for pid in r.stdout.split():
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def teardown(rig: Rig, progress=print) -> None:
    """Undo everything (idempotent, goes on after a failure): harmless down, the OVS instances, the processes in
    the test hosts, the lab and every ``hl-<lab>-*`` namespace and interface."""
    progress(f"cleaning up lab {rig.name}")
    stop(rig.watch, group=True)
    if (rig.work / "state" / "state.json").exists():
        with contextlib.suppress(SuiteError):
            harmless_cli(rig, "down")
    for side in SIDES:
        kill_netns_procs(rig.test_ns(side))
    for o in rig.ovs.values():
        netns.stop_ovs(o.base_dir, o.netns)
    lab.lab_down(rig.name)          # the lab's files are in HARMLESS_STATE_DIR = the run's state dir (rig_up)


@contextlib.contextmanager
def rig_up(work: Path, sides=SIDES, progress=print, platform: str = PLATFORM, l2pt: tuple[str, ...] = L2PT):
    """Build the switches of ``sides`` (yields the :class:`Rig`); torn down afterwards, also on failure, Ctrl-C or
    SIGTERM."""
    rig = Rig(work, platform=platform, l2pt=tuple(l2pt))
    old = signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    env_state = os.environ.get("HARMLESS_STATE_DIR")
    os.environ["HARMLESS_STATE_DIR"] = str(work / "state")      # the lab's files live in the run's state dir
    try:
        if "harmless" in sides:
            build_lab_side(rig, progress)
            harmless_up(rig, progress)
        if "plain" in sides:
            build_plain_side(rig, progress)
        yield rig
    finally:
        try:
            teardown(rig, progress)
        finally:
            signal.signal(signal.SIGTERM, old)
            if env_state is None:
                os.environ.pop("HARMLESS_STATE_DIR", None)
            else:
                os.environ["HARMLESS_STATE_DIR"] = env_state
