"""``harmless bench --trunk system|afxdp|dpdk|all``: what each trunk type carries through HARMLESS (issue #17).

Per trunk type, one OVS instance holds (a) the HARMLESS path built by the product's code (trunk -> br-otc pop ->
patch -> br-of pipeline -> patch -> br-otc push -> trunk) and (b) the same pipeline on a plain bridge, and the two
are measured alternately in one run (:func:`harmless.bench.quick.compare`), so their ratio holds on a shared machine.

* ``dpdk``: OVS-DPDK (Debian's ``ovs-vswitchd-dpdk``), ``dpdkvhostuserclient`` ports, testpmd ``net_virtio_user``
  (the ``--quick`` set-up of :mod:`harmless.bench.quick`); 1 PMD on CPU1.
* ``system`` (AF_PACKET) and ``afxdp`` (AF_XDP, ``xdp-mode=best-effort``: native XDP on veth): the plain
  ``ovs-vswitchd`` (userspace ``netdev`` datapath, what ``datapath: netdev`` deployments run) in a namespace of its
  own; every OVS port is one end of a veth pair whose other end is in the generator's namespace, where testpmd
  drives it through ``net_af_packet``. AF_XDP ports are polled by a PMD thread (CPU1); AF_PACKET ports by
  ovs-vswitchd's main thread, pinned to CPU1 too. The generator runs on CPU0.

Method: the closed loop of :mod:`harmless.bench.quick` (RFC 2889 maximum forwarding rate, not RFC 2544):
``--bidirectional``: testpmd ``5tswap`` on each port (A->B and B->A); default (one way): testpmd ``io`` forwarding
with paired ports, i.e. what arrives on B is sent again on A, so OVS forwards A->B only (B's own first burst is
addressed to B and dies in the pipeline). Frames: 64 B, or the simple IMIX 7:4:1 (64/570/1518 B,
:data:`harmless.bench.testpmd.IMIX_SEGMENTS`). Figures per system: Mpps and Gbit/s (Ethernet frames with FCS,
no preamble/IFG) forwarded, and OVS cycles per packet: ``pmd-stats-show`` processing cycles of the thread that
polls the ports (the PMD for dpdk/afxdp; TSC cycles including the system calls of receive and send) per packet;
for system, whose ports the main thread serves without cycle counters, ovs-vswitchd's CPU time (user + system) x
clock / packets. Not in any figure: the kernel work the generator's send does on CPU0 (veth transmit, and for
AF_XDP the XDP program's redirect into the socket, which runs where the frame was sent).
"""
from __future__ import annotations

import os
import shutil
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from harmless import procs
from harmless.bench.quick import (METHOD_LOOP, LoopSample, Session, clean_stop, compare, machine_info,
                                  make_workdir, measure_loop)
from harmless.bench.sut import (PAIRS, PLAIN_BRIDGE, PORT_A, PORT_B, Progress, Systems,
                                _noop, bench_plan, bootstrap_flows, generator_ports)
from harmless.bench.testpmd import IMIX_MEAN_FRAME, IMIX_SEGMENTS, Testpmd, TestpmdOptions, VirtioPort
from harmless.bench.workloads import Workload, l2_workload
from harmless.errors import HarmlessError
from harmless.otc import bridges
from harmless.otc.flows import OTC_BRIDGE
from harmless.otc.trunks import xdp_program
from harmless.ovs import DpdkOptions, Ovs

TRUNK_TYPES = ("system", "afxdp", "dpdk")
METHOD_ONEWAY = ("RFC 2889 maximum forwarding rate, closed one-way loop (testpmd tx_first 64x32 on port A, io "
                 "forwarding B->A with paired ports; OVS forwards A->B only), not RFC 2544")


class BenchSetupError(HarmlessError):
    """The trunk benchmark could not build its systems (veth pairs, namespaces, OVS ports)."""

    def __init__(self, what: str, hint: str = "see the logs in the benchmark's work folder"):
        super().__init__("harmless bench --trunk", what, hint)


def pin_threads(pid: int, cpus: set[int]) -> int:
    """Pin every thread of process ``pid`` to ``cpus`` (threads created later inherit it); returns threads pinned."""
    n = 0
    for t in Path(f"/proc/{pid}/task").iterdir():
        try:
            os.sched_setaffinity(int(t.name), cpus)
            n += 1
        except OSError:
            pass
    return n


@dataclass
class VethSystems(Systems):
    """(a) HARMLESS and (b) plain on the plain ``ovs-vswitchd`` (netdev datapath) with veth ports of ``trunk`` type.

    Namespaces ``hlb<pid>s`` (OVS) and ``hlb<pid>g`` (generator); veth pairs ``hb<n>ta/ga``, ``tb/gb`` (HARMLESS
    trunks A/B) and ``pa/qa``, ``pb/qb`` (plain ports 7/10). :meth:`stop` removes all of it.
    """

    trunk: str = "system"
    unidirectional: bool = True
    macs: tuple[str, str] = ("02:00:00:00:00:07", "02:00:00:00:00:0a")

    def __post_init__(self):
        super().__post_init__()
        tag = f"{os.getpid() % 100000}"
        self.ns_ovs, self.ns_gen = f"hlb{tag}s", f"hlb{tag}g"
        # OVS-side name -> generator-side name (15 characters at most)
        self.pairs = {f"hb{tag}ta": f"hb{tag}ga", f"hb{tag}tb": f"hb{tag}gb",
                      f"hb{tag}pa": f"hb{tag}qa", f"hb{tag}pb": f"hb{tag}qb"}

    @property
    def ovs_ifaces(self) -> list[str]:
        return list(self.pairs)

    @property
    def gen_ifaces(self) -> list[str]:
        return list(self.pairs.values())

    def setup_commands(self) -> list[list[str]]:
        """The ``ip`` commands that make the two namespaces and the four veth pairs, in order. Pure."""
        cmds = []
        for ns in (self.ns_ovs, self.ns_gen):
            cmds += [["ip", "netns", "add", ns], ["ip", "-n", ns, "link", "set", "lo", "up"]]
            cmds += [["ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{k}.disable_ipv6=1"]
                     for k in ("all", "default")]
        macs = [self.macs[0], self.macs[1], self.macs[0], self.macs[1]]
        for (o, g), mac in zip(self.pairs.items(), macs):
            cmds.append(["ip", "link", "add", o, "netns", self.ns_ovs, "type", "veth", "peer", "name", g, "netns",
                         self.ns_gen])
            cmds.append(["ip", "-n", self.ns_gen, "link", "set", g, "address", mac])
            cmds += [["ip", "-n", ns, "link", "set", dev, "up"] for ns, dev in ((self.ns_ovs, o), (self.ns_gen, g))]
        return cmds

    def start(self) -> Ovs:
        """Namespaces, veth pairs and a private ovs-vswitchd (PMD on CPU1) in the OVS namespace.

        Raises:
            BenchSetupError: an ``ip`` command failed (the command and its message are named).
        """
        self.sock.root.mkdir(parents=True, exist_ok=True)
        for argv in self.setup_commands():
            p = procs.run(argv, check=False)
            if p.returncode != 0:
                raise BenchSetupError(f"{' '.join(argv[:6])}: {(p.stderr or p.stdout).strip()}")
        self.ovs = Ovs(self.workdir / "ovs", netns=self.ns_ovs)
        self.ovs.start()
        self.ovs.vsctl("set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x2",
                       *[f"other_config:{k}={v}" for k, v in self.other_config.items()])
        pid = self.ovs._pid("ovs-vswitchd")
        if pid:
            pin_threads(pid, {1})
        return self.ovs

    def plan(self):
        return bench_plan(self.sock, self.trunk, (self.ovs_ifaces[0], self.ovs_ifaces[1]))

    def build(self, workload: Workload) -> None:
        o = self.ovs
        bridges.apply(o, self.plan())
        o.ofctl("-O", "OpenFlow13", "add-flows", OTC_BRIDGE, "-",
                stdin="\n".join(bootstrap_flows(self.unidirectional)) + "\n")
        typ = '""' if self.trunk == "system" else "afxdp"
        opts = ["options:xdp-mode=best-effort"] if self.trunk == "afxdp" else []
        pa, pb = self.ovs_ifaces[2], self.ovs_ifaces[3]
        o.transact([["--may-exist", "add-br", PLAIN_BRIDGE],
                    ["set", "Bridge", PLAIN_BRIDGE, "datapath_type=netdev", "fail_mode=secure", "protocols=OpenFlow13",
                     "other_config:disable-in-band=true"],
                    ["--may-exist", "add-port", PLAIN_BRIDGE, pa], ["set", "Interface", pa, f"type={typ}", *opts,
                                                                     f"ofport_request={PORT_A}"],
                    ["--may-exist", "add-port", PLAIN_BRIDGE, pb], ["set", "Interface", pb, f"type={typ}", *opts,
                                                                     f"ofport_request={PORT_B}"]], timeout=30)
        self.install_pipeline(workload)
        errs = [r for r in o.vsctl_json("Interface", columns=["name", "error"]) if r["error"]]
        if errs:
            raise BenchSetupError(f"OVS could not attach {errs[0]['name']}: {errs[0]['error']}",
                                  "see ovs-vswitchd.log in the work folder")

    def verify(self) -> list[str]:
        return bridges.verify(self.ovs, self.plan())

    def xdp_modes(self) -> dict[str, str]:
        """XDP mode per OVS-side interface (afxdp): ``native`` / ``generic``."""
        return {i: (xdp_program(self.ovs, i) or {}).get("mode", "") for i in self.ovs_ifaces}

    def stop(self) -> None:
        try:
            if self.ovs is not None:
                try:
                    self.ovs.stop()
                finally:
                    self.ovs = None
        finally:
            for ns in (self.ns_ovs, self.ns_gen):
                procs.run(["ip", "netns", "del", ns], check=False)
            shutil.rmtree(self.sock.root, ignore_errors=True)


def veth_generator_ports(systems: VethSystems, workload: Workload, unidirectional: bool) -> list[VirtioPort]:
    """Generator ports 0,1 -> HARMLESS trunks A,B; 2,3 -> plain 7,10 (``path`` = generator-side veth).

    One way: port B's peer is B itself, so B's first burst dies in the pipeline (output to in_port is dropped).
    """
    g = systems.gen_ifaces
    mb_peer = workload.mac_b if unidirectional else workload.mac_a
    return [VirtioPort(g[0], workload.mac_a, workload.mac_b), VirtioPort(g[1], workload.mac_b, mb_peer),
            VirtioPort(g[2], workload.mac_a, workload.mac_b), VirtioPort(g[3], workload.mac_b, mb_peer)]


@dataclass
class TrunkSession(Session):
    """One trunk type's OVS with (a) and (b), and one testpmd generator (see module doc)."""

    trunk: str = "dpdk"
    bidirectional: bool = False
    imix: bool = False

    def _gen_options(self, **kw) -> TestpmdOptions:
        one_way = not self.bidirectional
        return TestpmdOptions(hugepages=self.hugepages, frame_size=64,
                              forward_mode="io" if one_way else "5tswap",
                              topology="paired" if one_way else "loop",
                              txsplit_rand=self.imix, txpkts_segments=IMIX_SEGMENTS if self.imix else (), **kw)

    def open(self, workload: Workload) -> None:
        one_way = not self.bidirectional
        if self.trunk == "dpdk":
            self.progress("starting OVS-DPDK (1 PMD on CPU1), HARMLESS + plain bridges, vhost-user trunks")
            self.systems = Systems(self.workdir, DpdkOptions(hugepages=self.hugepages), dict(self.other_config))
            self.systems.start()
            self.systems.build(workload)
            if one_way:
                self.systems.ovs.ofctl("-O", "OpenFlow13", "add-flows", OTC_BRIDGE, "-",
                                       stdin=bootstrap_flows(True)[-1] + "\n")
            ports = generator_ports(self.systems.sock, workload)
            if one_way:
                ports[1].peer = ports[3].peer = workload.mac_b
            self.gen = Testpmd(self.workdir, "gen", ports, self._gen_options())
        else:
            self.progress(f"starting ovs-vswitchd (netdev datapath, {self.trunk} ports on veth pairs, CPU1)")
            self.systems = VethSystems(self.workdir, other_config=dict(self.other_config), trunk=self.trunk,
                                       unidirectional=one_way, macs=(workload.mac_a, workload.mac_b))
            self.systems.start()
            self.systems.build(workload)
            self.gen = Testpmd(self.workdir, "gen", veth_generator_ports(self.systems, workload, one_way),
                               self._gen_options(vdev_kind="af_packet", netns=self.systems.ns_gen))
        self.progress("starting testpmd generator (4 ports, CPU0)")
        self.gen.start()
        self.gen.wait_links()

    def measure(self, system: str, duration: float, warmup: float = 1.0) -> LoopSample:
        cpu = None
        if self.trunk == "system":
            pid = self.systems.ovs._pid("ovs-vswitchd")
            cpu = (lambda: procs.cpu_seconds(pid)) if pid else None
        return measure_loop(self.gen, PAIRS[system], duration, warmup, system, self.appctl, cpu_seconds=cpu)


def frame_bits(imix: bool) -> float:
    """Mean bits per frame (with FCS) of the traffic: 64 B or the IMIX mean."""
    return (IMIX_MEAN_FRAME if imix else 64) * 8


def run_trunk(trunk: str, duration: float = 3.0, rounds: int = 3, imix: bool = False, bidirectional: bool = False,
              hugepages: bool = False, progress: Progress = _noop, keep: bool = False) -> dict:
    """Measure one trunk type: HARMLESS vs plain, alternating, ``rounds`` rounds of ``duration`` seconds.

    Returns:
        dict with ``trunk``, ``harmless_mpps``, ``plain_mpps``, ``harmless_gbps``, ``plain_gbps``, ``ratio``,
        ``harmless_cycles_per_packet``, ``plain_cycles_per_packet``, ``cycles_ratio``, ``bidirectional``,
        ``frames`` (``64`` or ``imix``), ``method``, ``xdp_modes`` (afxdp), ``round_ratios``, ``samples``.

    Raises:
        HarmlessError: a system could not be built or the generator failed.
    """
    if trunk not in TRUNK_TYPES:
        raise ValueError(f"trunk must be one of {TRUNK_TYPES}")
    t0 = time.monotonic()
    workdir = make_workdir()
    wl = l2_workload(2)
    sess = TrunkSession(workdir, hugepages=hugepages, progress=progress, trunk=trunk,
                        bidirectional=bidirectional, imix=imix)
    result: dict = {}
    try:
        with clean_stop():
            sess.open(wl)
            problems = sess.systems.verify()
            if problems:
                raise BenchSetupError("HARMLESS bridges did not verify: " + "; ".join(problems))
            progress(f"{trunk}: warm-up window per system (discarded)")
            for s in ("harmless", "plain"):
                sess.measure(s, 1.0, warmup=0.5)
            result = compare(sess, duration, rounds, progress)
            if isinstance(sess.systems, VethSystems) and trunk == "afxdp":
                result["xdp_modes"] = sess.systems.xdp_modes()
    finally:
        sess.close()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    bits = frame_bits(imix)
    result.update({"trunk": trunk, "bidirectional": bidirectional, "frames": "imix" if imix else 64,
                   "mean_frame_bytes": round(bits / 8, 1),
                   "method": METHOD_LOOP if bidirectional else METHOD_ONEWAY, "duration_s": duration,
                   "rounds": rounds, "elapsed_s": round(time.monotonic() - t0, 1)})
    return result


def median_spread(values: list[float]) -> dict:
    """``{"median", "min", "max", "spread_pct"}`` of repeated figures (spread = (max-min)/median). Pure."""
    if not values:
        return {"median": 0.0, "min": 0.0, "max": 0.0, "spread_pct": 0.0, "n": 0}
    m = statistics.median(values)
    return {"median": round(m, 3), "min": round(min(values), 3), "max": round(max(values), 3),
            "spread_pct": round((max(values) - min(values)) / m * 100, 1) if m else 0.0, "n": len(values)}


#: the per-run figures that ``--repeat`` reduces to median and spread
REPEATED = ("ratio", "cycles_ratio", "harmless_mpps", "plain_mpps", "harmless_gbps", "plain_gbps",
            "harmless_cycles_per_packet", "plain_cycles_per_packet")


def combine_repeats(runs: list[dict]) -> dict:
    """Fold ``--repeat N`` runs of one trunk type: medians as the headline figures, ``spread`` per figure. Pure."""
    out = {k: v for k, v in runs[0].items() if k not in ("samples",)}
    spread = {}
    for k in REPEATED:
        vals = [r[k] for r in runs if isinstance(r.get(k), (int, float))]
        ms = median_spread(vals)
        out[k] = ms["median"]
        spread[k] = ms
    out["repeat"] = len(runs)
    out["spread"] = spread
    out["runs"] = [{k: r.get(k) for k in (*REPEATED, "round_ratios", "redone_rounds", "elapsed_s")} for r in runs]
    return out


def run_trunks(trunks: list[str], repeat: int = 1, progress: Progress = _noop, **kw) -> dict:
    """``--trunk all`` / several types: ``{"trunks": {type: result}, "versions", "machine", ...}``.

    ``repeat`` runs every type that often (interleaved: system, afxdp, dpdk, system, ...) so that a busy period of
    the machine does not hit one type only.
    """
    info = machine_info()
    per: dict[str, list[dict]] = {t: [] for t in trunks}
    errors: dict[str, str] = {}
    for i in range(repeat):
        for t in trunks:
            if t in errors:
                continue
            progress(f"== trunk {t} (run {i + 1}/{repeat})")
            try:
                per[t].append(run_trunk(t, progress=progress, **kw))
            except HarmlessError as e:
                errors[t] = str(e)
                progress(f"   {t}: failed: {e}")
    res = {t: combine_repeats(v) for t, v in per.items() if v}
    return {"trunks": res, "errors": errors, "repeat": repeat, "versions": info.get("versions", {}),
            "machine": info}
