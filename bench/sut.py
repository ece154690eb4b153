"""The systems under test, built in ONE private OVS-DPDK instance so their ratio holds on a noisy machine.

(a) ``harmless``: the HARMLESS server path, built by the product's own code (:func:`harmless.otc.bridges.apply`):
    trunk -> br-otc (pop VID) -> patch -> br-of pipeline -> patch -> br-otc (push VID) -> trunk.
    Two trunks (``dpdkvhostuserclient``), one per generator port, carry VID 107 (legacy port 7) and VID 110
    (legacy port 10), so the generator drives exactly as many vhost-user ports as in (b).
(b) ``plain``: the same pipeline on a plain OVS-DPDK bridge, the generator's two ports attached directly as
    OpenFlow ports 7 and 10.
(c) ``baseline``: no OVS at all; a second testpmd (``net_vhost`` clients, io forwarding, on the PMD's CPU) forwards
    port to port: the machine's limit for a vhost-user forwarding element on one core (:func:`baseline_forwarder`).

The br-of pipeline is installed directly with ``ovs-ofctl`` (in a product run a controller installs it).

Bootstrap: testpmd cannot VLAN-tag on virtio_user (notes §5), so the first burst enters the trunks untagged;
a low-priority bootstrap flow (cookie :data:`BOOTSTRAP_COOKIE`, not a translator flow) hands untagged frames of
trunk A/B to patch 7/10 once. After one pass every frame carries the VID the translator pushed, and from then on
only the translator's own flows match (checked: the bootstrap flows' counters stay at the injected burst).
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harmless import openflow as of
from harmless.bench.testpmd import TestpmdOptions, VirtioPort
from harmless.bench.workloads import Workload
from harmless.otc import bridges
from harmless.otc.flows import OTC_BRIDGE, patch_ofport, trunk_ofport
from harmless.ovs import DpdkOptions, Ovs
from harmless.plan import Plan, PortPlan, SwitchPlan, TrunkPlan

#: one-line progress callback of the benchmark commands
Progress = Callable[[str], None]


def _noop(_: str) -> None:
    pass


BOOTSTRAP_COOKIE = 0xB007
SWITCH = "bench"
OF_BRIDGE = "br-of-bench"
PLAIN_BRIDGE = "br-plain"
PORT_A, PORT_B = 7, 10
VID_A, VID_B = 107, 110


@dataclass
class Sockets:
    """vhost-user socket paths (testpmd is the server, OVS connects)."""

    root: Path

    def path(self, name: str) -> str:
        return str(self.root / f"{name}.sock")


def bench_plan(sock: Sockets, trunk: str = "dpdk", ifaces: tuple[str, str] = ("", "")) -> Plan:
    """The HARMLESS plan of the benchmark: one switch, ports 7 and 10 (VIDs 107/110), one trunk each.

    Args:
        trunk: ``dpdk`` (vhost-user client ports on ``sock``), ``system`` (AF_PACKET) or ``afxdp`` (AF_XDP,
            ``xdp-mode=best-effort``: native XDP where the interface allows it, as ``type: auto`` does).
        ifaces: the two kernel interfaces of the trunks (system/afxdp).
    """
    ports = (PortPlan("Gi0/7", PORT_A, VID_A, "Gi0/47", "harmless-bench-p7"),
             PortPlan("Gi0/10", PORT_B, VID_B, "Gi0/48", "harmless-bench-p10"))
    if trunk == "dpdk":
        trunks = (TrunkPlan("Gi0/47", "hl-trunk-a", "dpdkvhostuserclient",
                            (("vhost-server-path", sock.path("trunk-a")),), (VID_A,)),
                  TrunkPlan("Gi0/48", "hl-trunk-b", "dpdkvhostuserclient",
                            (("vhost-server-path", sock.path("trunk-b")),), (VID_B,)))
    else:
        opts = (("xdp-mode", "best-effort"),) if trunk == "afxdp" else ()
        trunks = (TrunkPlan("Gi0/47", ifaces[0], trunk, opts, (VID_A,)),
                  TrunkPlan("Gi0/48", ifaces[1], trunk, opts, (VID_B,)))
    return Plan((SwitchPlan(SWITCH, OF_BRIDGE, "0000000000bec400", ("OpenFlow13",), (), ports, trunks),))


def bootstrap_flows(unidirectional: bool = False) -> list[str]:
    """Untagged frames on trunk A/B -> patch 7/10 (one-time injection only; see module doc).

    ``unidirectional``: also VID 110 frames on trunk A -> pop -> patch 7. In the one-way loop the generator sends
    what trunk B delivered (tagged 110) back out of trunk A unchanged (io forwarding); this flow does for them
    exactly what the translator's own flow does for VID 107 (match in_port + VID, pop_vlan, output patch).
    """
    out = [of.Flow(50, of.match(in_port=trunk_ofport(1, k), vlan_vid=of.OFPVID_NONE),
                   (of.output_port(patch_ofport(1, p)),), BOOTSTRAP_COOKIE) for k, p in ((0, PORT_A), (1, PORT_B))]
    if unidirectional:
        out.append(of.Flow(50, of.match(in_port=trunk_ofport(1, 0), vlan_vid=of.vid_present(VID_B)),
                           (of.pop_vlan(), of.output_port(patch_ofport(1, PORT_A))), BOOTSTRAP_COOKIE))
    return [f.to_ofctl() for f in out]


def generator_ports(sock: Sockets, workload: Workload) -> list[VirtioPort]:
    """Generator ports 0,1 -> HARMLESS trunks A,B; ports 2,3 -> plain bridge ports 7,10."""
    return [VirtioPort(sock.path("trunk-a"), workload.mac_a, workload.mac_b),
            VirtioPort(sock.path("trunk-b"), workload.mac_b, workload.mac_a),
            VirtioPort(sock.path("plain-a"), workload.mac_a, workload.mac_b),
            VirtioPort(sock.path("plain-b"), workload.mac_b, workload.mac_a)]


#: generator port pairs of each system under test
PAIRS = {"harmless": (0, 1), "plain": (2, 3)}


@dataclass
class Systems:
    """Build (a) and (b) in one private OVS-DPDK; tear everything down in :meth:`stop`.

    Args:
        workdir: private folder (OVS base dir, sockets, logs).
        dpdk: OVS-DPDK options.
        other_config: extra ``Open_vSwitch other_config`` keys (e.g. ``pmd-perf-metrics``) set before start.
    """

    workdir: Path
    dpdk: DpdkOptions = field(default_factory=lambda: DpdkOptions(hugepages=False))
    other_config: dict[str, str] = field(default_factory=dict)
    ovs: Ovs | None = None

    def __post_init__(self):
        self.workdir = Path(self.workdir)
        self.sock = Sockets(self.workdir / "sock")

    def start(self) -> Ovs:
        self.sock.root.mkdir(parents=True, exist_ok=True)
        self.ovs = Ovs(self.workdir / "ovs", dpdk=self.dpdk)
        self.ovs.start()
        if self.other_config:
            self.ovs.vsctl("set", "Open_vSwitch", ".", *[f"other_config:{k}={v}"
                                                          for k, v in self.other_config.items()])
        return self.ovs

    def build(self, workload: Workload) -> None:
        """Create both systems and install ``workload`` on br-of-bench and br-plain."""
        o = self.ovs
        bridges.apply(o, bench_plan(self.sock))
        o.ofctl("-O", "OpenFlow13", "add-flows", OTC_BRIDGE, "-", stdin="\n".join(bootstrap_flows()) + "\n")
        o.transact([["--may-exist", "add-br", PLAIN_BRIDGE],
                    ["set", "Bridge", PLAIN_BRIDGE, "datapath_type=netdev", "fail_mode=secure", "protocols=OpenFlow13",
                     "other_config:disable-in-band=true"],
                    *[c for name, ofport in (("plain-a", PORT_A), ("plain-b", PORT_B))
                      for c in (["--may-exist", "add-port", PLAIN_BRIDGE, name],
                                ["set", "Interface", name, "type=dpdkvhostuserclient",
                                 f"options:vhost-server-path={self.sock.path(name)}", f"ofport_request={ofport}"])]],
                   timeout=30)
        self.install_pipeline(workload)

    def install_pipeline(self, workload: Workload) -> None:
        """(Re)install the same pipeline on br-of-bench and br-plain (groups first)."""
        for br in (OF_BRIDGE, PLAIN_BRIDGE):
            self.ovs.ofctl("-O", "OpenFlow13", "del-flows", br)
            self.ovs.ofctl("-O", "OpenFlow13", "del-groups", br)
            if workload.groups:
                self.ovs.ofctl("-O", "OpenFlow13", "add-groups", br, "-", stdin="\n".join(workload.groups) + "\n")
            self.ovs.ofctl("-O", "OpenFlow13", "--bundle", "add-flows", br, "-",
                           stdin="\n".join(workload.flows) + "\n", timeout=300)

    def set_translator_flows(self, lines: list[str]) -> None:
        """Replace the translator's flows (experiments with other encodings), keeping the bootstrap flows."""
        self.ovs.ofctl("-O", "OpenFlow13", "replace-flows", OTC_BRIDGE, "-",
                       stdin="\n".join(lines + bootstrap_flows()) + "\n")

    def restore_translator(self) -> None:
        bridges.install_flows(self.ovs, bench_plan(self.sock))
        self.ovs.ofctl("-O", "OpenFlow13", "add-flows", OTC_BRIDGE, "-", stdin="\n".join(bootstrap_flows()) + "\n")

    def verify(self) -> list[str]:
        return bridges.verify(self.ovs, bench_plan(self.sock))

    def stop(self) -> None:
        """Stop OVS (bridges deleted first), remove its DPDK run folder and the sockets. Idempotent."""
        if self.ovs is not None:
            try:
                self.ovs.stop()
            finally:
                shutil.rmtree(Path("/var/run/dpdk") / f"hl{os.getpid()}", ignore_errors=True)
                self.ovs = None
        shutil.rmtree(self.sock.root, ignore_errors=True)


def baseline_forwarder_options() -> TestpmdOptions:
    """testpmd (c): two ``net_vhost`` clients, io forwarding port 0 <-> port 1, forwarding lcore on CPU1."""
    return TestpmdOptions(lcores="0@0,1@1", forward_mode="io", topology="paired", vdev_kind="vhost",
                          mbufs=32768)


@dataclass
class SessionBase:
    """What every benchmark session holds: one OVS-DPDK with the systems under test (:class:`Systems`) and one
    traffic generator (anything with ``stop()``); :meth:`close` stops the generator, then OVS (idempotent)."""

    workdir: Path
    hugepages: bool = False
    progress: Progress = _noop
    systems: Systems | None = None
    gen: Any = None
    other_config: dict = field(default_factory=dict)

    def appctl(self, *args: str) -> str:
        return self.systems.ovs.appctl(*args)

    def close(self) -> None:
        try:
            if self.gen is not None:
                self.gen.stop()
        finally:
            self.gen = None
            if self.systems is not None:
                self.systems.stop()
                self.systems = None
