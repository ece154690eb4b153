"""Measurement engine and ``harmless bench --quick``.

Method of the Mpps figures here: **maximum forwarding rate (RFC 2889 §5.3 style), closed loop**, not RFC 2544
throughput. testpmd injects ``64 x 32`` frames per port (``start tx_first 64``) and then returns every frame it
receives on the port it came from with MACs, IPs and ports swapped (``5tswap``, loop topology); the system under test forwards them port A -> B
-> A ... The rate is the sum of frames the generator received per second, i.e. frames the SUT forwarded. The loop
runs at the pace of its slowest element (the SUT's PMD on CPU1 or the generator on CPU0), so next to it we record
OVS's **processing cycles per packet** (``pmd-stats-show``), which does not depend on the generator's speed.

Systems are measured in alternation (H, P, P, H, H, P ...) in one OVS instance and the medians are compared.
"""
from __future__ import annotations

import contextlib
import os
import platform
import shutil
import signal
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from harmless import procs
from harmless.bench.ovsstats import summarize
from harmless.ovsstats import parse_pmd_stats
from harmless.bench.sut import (PAIRS, Progress, SessionBase, Systems, _noop, baseline_forwarder_options,
                                generator_ports)
from harmless.bench.testpmd import Testpmd, TestpmdOptions, VirtioPort, txpkts_for
from harmless.bench.workloads import Workload, l2_workload
from harmless.errors import HarmlessError
from harmless.ovs import VSWITCHD_DPDK, VSWITCHD_PLAIN, DpdkOptions

METHOD_LOOP = "RFC 2889 maximum forwarding rate, closed loop (testpmd tx_first 64x32/port + 5tswap), not RFC 2544"

@dataclass
class LoopSample:
    """One closed-loop measurement window of one system."""

    system: str
    mpps: float
    cycles_per_packet: float
    ovs_mpps: float
    idle_fraction: float
    duration_s: float
    datapath: dict = field(default_factory=dict)
    note: str = ""
    gbps: float = 0.0      # Ethernet frames incl. FCS (no preamble/IFG), Gbit/s received by the generator

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def cpu_hz() -> float:
    """The CPU clock in Hz (``/proc/cpuinfo`` ``cpu MHz``, first CPU; the TSC rate on current x86 CPUs)."""
    for ln in Path("/proc/cpuinfo").read_text().splitlines():
        if ln.startswith("cpu MHz"):
            return float(ln.split(":", 1)[1]) * 1e6
    return 0.0


def measure_loop(gen: Testpmd, pair: tuple[int, int], duration: float, warmup: float, system: str,
                 appctl: Callable[..., str] | None = None, burst_count: int = 64,
                 cpu_seconds: Callable[[], float] | None = None) -> LoopSample:
    """One closed-loop window on generator ports ``pair``; ``appctl`` reads OVS PMD stats (None = no OVS).

    ``cpu_seconds`` (cumulative CPU time of ovs-vswitchd): used when no thread of OVS reports processing cycles
    (AF_PACKET ports are served by the main thread, which ``pmd-stats-show`` gives no cycles for); then cycles per
    packet = CPU time of the window x :func:`cpu_hz` / packets OVS received (user + system time: the system calls
    of receive and send included; it never busy-polls, so idle time is not in it).
    """
    gen.command("stop")
    if appctl:
        # start from an empty datapath flow table / EMC: flows of the other system (same 5-tuples) would
        # otherwise share EMC slots with this one's (all generated frames have the same hash per direction)
        appctl("revalidator/purge")
    gen.command("set portlist " + ",".join(str(p) for p in pair))
    gen.command(f"start tx_first {burst_count}")
    if appctl:
        # the injected burst is untagged and crossed the bootstrap flows once; drop those datapath flows so
        # they do not hold EMC slots for the rest of the window
        time.sleep(0.3)
        appctl("revalidator/purge")
    time.sleep(warmup)
    if appctl:
        appctl("dpif-netdev/pmd-stats-clear")
    s0 = gen.port_stats()
    c0 = cpu_seconds() if cpu_seconds else 0.0
    t0 = time.monotonic()
    time.sleep(duration)
    s1 = gen.port_stats()
    c1 = cpu_seconds() if cpu_seconds else 0.0
    t1 = time.monotonic()
    dp = summarize(parse_pmd_stats(appctl("dpif-netdev/pmd-stats-show"))) if appctl else None
    if dp and cpu_seconds and dp.processing_cycles == 0 and dp.packets:
        import dataclasses
        dp = dataclasses.replace(dp, cycles_per_packet=(c1 - c0) * cpu_hz() / dp.packets)
    gen.command("stop")
    dt = t1 - t0
    rx = sum(s1[p].rx_packets - s0[p].rx_packets for p in pair)
    rx_bytes = sum(s1[p].rx_bytes - s0[p].rx_bytes for p in pair)
    return LoopSample(system, rx / dt / 1e6, dp.cycles_per_packet if dp else 0.0,
                      (dp.packets / dt / 1e6) if dp else 0.0, dp.idle_fraction if dp else 0.0, round(dt, 3),
                      dp.as_dict() if dp else {}, gbps=frame_gbps(rx, rx_bytes, dt))


def frame_gbps(packets: int, nbytes: int, seconds: float) -> float:
    """Gbit/s of Ethernet frames with FCS (testpmd's byte counters exclude the 4-byte CRC; no preamble/IFG). Pure."""
    return (nbytes + 4 * packets) * 8 / seconds / 1e9 if seconds > 0 else 0.0


def _out(argv: list[str]) -> str:
    """Standard output of ``argv``, stripped; "" when it is not installed or times out (10 s)."""
    try:
        return procs.run(argv, timeout=10, check=False).stdout.strip()
    except HarmlessError:
        return ""


#: Debian packages whose versions every result records (``dpkg-query``)
PACKAGES = ("openvswitch-switch", "openvswitch-switch-dpdk", "openvswitch-common", "dpdk", "dpdk-dev",
            "librte-eal23", "libxdp1", "libbpf1")


def parse_ovs_version(text: str) -> str:
    """``ovs-vswitchd (Open vSwitch) 3.1.0`` (first line of ``--version``) -> ``3.1.0``; "" if absent. Pure."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.rsplit(" ", 1)[-1] if "Open vSwitch" in first else ""


def versions() -> dict:
    """Versions from the binaries themselves (``--version``) and from dpkg (empty values where absent).

    Returns:
        ``{"ovs": "3.1.0", "ovs_dpdk": "3.1.0", "dpdk": "DPDK 22.11.x" (linked into ovs-vswitchd-dpdk),
        "testpmd": <dpdk-dev package version>, "packages": {name: version}}``.
    """
    plain = _out([str(VSWITCHD_PLAIN), "--version"]) if VSWITCHD_PLAIN.exists() else ""
    if not plain and shutil.which("ovs-vswitchd"):
        plain = _out(["ovs-vswitchd", "--version"])
    dp = _out([str(VSWITCHD_DPDK), "--version"]) if VSWITCHD_DPDK.exists() else ""
    pk = {}
    for name in PACKAGES:
        v = _out(["dpkg-query", "-W", "-f", "${Version}", name])
        if v:
            pk[name] = v
    dpdk = next((ln.strip() for ln in dp.splitlines() if ln.strip().startswith("DPDK")), "")
    return {"ovs": parse_ovs_version(plain) or parse_ovs_version(dp), "ovs_dpdk": parse_ovs_version(dp),
            "dpdk": dpdk or (f"DPDK {pk['dpdk']}" if "dpdk" in pk else ""), "testpmd": pk.get("dpdk-dev", ""),
            "ovs_vsctl": parse_ovs_version(_out(["ovs-vsctl", "--version"])), "packages": pk}


def machine_info() -> dict:
    """Machine, versions, cores and load: recorded with every result.

    ``virtualization``: ``systemd-detect-virt --vm`` / ``--container`` (``none`` on bare metal; "" when the tool is
    absent; a ``hypervisor`` CPU flag that the tool does not name is recorded as such) and ``virtual`` (bool);
    ``loadavg`` is read when the run starts, so that a shared machine shows in the result.
    """
    info = {"hostname": platform.node(), "kernel": platform.release(), "python": platform.python_version(),
            "cpus": os.cpu_count()}
    try:
        info["loadavg"] = [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        info["loadavg"] = []
    try:
        cpu = Path("/proc/cpuinfo").read_text()
        info["cpu_model"] = next((ln.split(":", 1)[1].strip() for ln in cpu.splitlines()
                                  if ln.startswith("model name")), "")
        flags = next((ln.split(":", 1)[1].split() for ln in cpu.splitlines() if ln.startswith("flags")), [])
        info["avx512"] = sorted(f for f in flags if f.startswith("avx512"))
        info["hypervisor_flag"] = "hypervisor" in flags
        info["mhz"] = next((float(ln.split(":", 1)[1]) for ln in cpu.splitlines() if ln.startswith("cpu MHz")),
                           None)
    except OSError:
        pass
    vm, ct = _out(["systemd-detect-virt", "--vm"]), _out(["systemd-detect-virt", "--container"])
    if vm == "none" and info.get("hypervisor_flag"):
        vm = "yes (hypervisor CPU flag; systemd-detect-virt --vm: none)"
    info["virtualization"] = {"vm": vm, "container": ct, "virtual": bool(vm and vm != "none") or
                              bool(ct and ct != "none")}
    info["versions"] = versions()
    # the keys earlier result files had
    info["ovs"] = info["versions"]["ovs"]
    info["testpmd_pkg"] = info["versions"]["testpmd"]
    info["ovs_dpdk_pkg"] = info["versions"]["ovs_dpdk"]
    return info


class _Terminate(Exception):
    pass


@contextlib.contextmanager
def clean_stop():
    """Turn SIGTERM/SIGHUP into KeyboardInterrupt so ``finally`` blocks tear everything down."""
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    for s in old:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def make_workdir() -> Path:
    # short path: vhost-user socket paths must stay below 108 bytes
    return Path(tempfile.mkdtemp(prefix="hlb-", dir="/tmp"))


@dataclass
class Session(SessionBase):
    """One benchmark session: one OVS-DPDK with (a)+(b), one testpmd generator; stopped in ``close``."""

    frame_size: int = 64

    def open(self, workload: Workload) -> None:
        self.progress("starting OVS-DPDK (1 PMD on CPU1) and building HARMLESS + plain bridges")
        self.systems = Systems(self.workdir, DpdkOptions(hugepages=self.hugepages), dict(self.other_config))
        self.systems.start()
        self.systems.build(workload)
        self.progress("starting testpmd generator (4 vhost-user ports, CPU0)")
        self.gen = Testpmd(self.workdir, "gen", generator_ports(self.systems.sock, workload),
                           TestpmdOptions(hugepages=self.hugepages, frame_size=self.frame_size))
        self.gen.start()
        self.gen.wait_links()

    def measure(self, system: str, duration: float, warmup: float = 1.0) -> LoopSample:
        return measure_loop(self.gen, PAIRS[system], duration, warmup, system, self.appctl)

    def set_frame_size(self, size: int) -> None:
        self.gen.command("stop")
        self.gen.command(f"set txpkts {txpkts_for(size)}")
        self.frame_size = size


#: a loop window whose PMD idled more than this was starved by the generator (CPU0 taken by other jobs): redo it
MAX_IDLE = 0.2


def compare(session: Session, duration: float, rounds: int, progress: Progress = _noop,
            systems: tuple[str, str] = ("harmless", "plain"), max_redo: int | None = None) -> dict:
    """Alternate the two systems ``rounds`` times (ABBA order); return medians and ratios.

    A round in which either window's PMD idled more than :data:`MAX_IDLE` (the generator, not OVS, set the pace)
    is measured again, at most ``max_redo`` (default ``rounds``) times in total; the count is recorded.
    """
    samples: dict[str, list[LoopSample]] = {s: [] for s in systems}
    redo_left = rounds if max_redo is None else max_redo
    redone = 0
    r = 0
    while r < rounds:
        order = systems if r % 2 == 0 else systems[::-1]
        got = {}
        for s in order:
            smp = session.measure(s, duration)
            got[s] = smp
            progress(f"  round {r + 1}/{rounds} {s:8s} {smp.mpps:6.2f} Mpps  {smp.cycles_per_packet:6.0f} cyc/pkt"
                     f"  (PMD idle {smp.idle_fraction:.0%})")
        if max(x.idle_fraction for x in got.values()) > MAX_IDLE and redo_left > 0:
            redo_left -= 1
            redone += 1
            progress("  (PMD starved by the generator in this round: measured again)")
            continue
        for s in systems:
            samples[s].append(got[s])
        r += 1
    out = summarize_pair(samples, systems)
    out["redone_rounds"] = redone
    return out


def summarize_pair(samples: dict[str, list[LoopSample]], systems: tuple[str, str] = ("harmless", "plain")) -> dict:
    """Medians per system; Mpps ratio and cycles ratio as medians of the per-round ratios (pure)."""
    a, b = systems
    med = {s: {"mpps": statistics.median(x.mpps for x in v), "gbps": statistics.median(x.gbps for x in v),
               "cycles_per_packet": statistics.median(x.cycles_per_packet for x in v)} for s, v in samples.items()}
    out = {f"{a}_mpps": round(med[a]["mpps"], 3), f"{b}_mpps": round(med[b]["mpps"], 3),
           f"{a}_gbps": round(med[a]["gbps"], 3), f"{b}_gbps": round(med[b]["gbps"], 3),
           f"{a}_cycles_per_packet": round(med[a]["cycles_per_packet"], 1),
           f"{b}_cycles_per_packet": round(med[b]["cycles_per_packet"], 1)}
    # Ratios are medians of per-round ratios: the two windows of a round are adjacent in time and share the
    # machine's momentary load, so pairing them cancels most of the noise a ratio of medians keeps.
    pairs = list(zip(samples[a], samples[b]))
    r_mpps = [x.mpps / y.mpps for x, y in pairs if y.mpps]
    r_cyc = [y.cycles_per_packet / x.cycles_per_packet for x, y in pairs if x.cycles_per_packet]
    out["ratio"] = round(statistics.median(r_mpps), 3) if r_mpps else 0.0
    out["cycles_ratio"] = round(statistics.median(r_cyc), 3) if r_cyc else 0.0
    out["round_ratios"] = [round(x, 3) for x in r_mpps]
    out["samples"] = {s: [x.as_dict() for x in v] for s, v in samples.items()}
    return out


def run_baseline(workdir: Path, duration: float, hugepages: bool, frame_size: int = 64,
                 progress: Progress = _noop) -> LoopSample:
    """(c) DPDK io-forwarding baseline: generator <-> testpmd io forwarder (no OVS; run it when OVS is stopped)."""
    sock = workdir / "sock-base"
    sock.mkdir(parents=True, exist_ok=True)
    ports = [VirtioPort(str(sock / "a.sock"), "02:00:00:00:00:07", "02:00:00:00:00:0a"),
             VirtioPort(str(sock / "b.sock"), "02:00:00:00:00:0a", "02:00:00:00:00:07")]
    gen = Testpmd(workdir, "bgen", ports, TestpmdOptions(hugepages=hugepages, frame_size=frame_size))
    fwd_opt = baseline_forwarder_options()
    fwd_opt.hugepages = hugepages
    fwd = Testpmd(workdir, "bfwd", ports, fwd_opt)
    try:
        progress("baseline: testpmd io forwarder (CPU1) <-> generator (CPU0), no OVS")
        gen.start(wait=False)        # virtio_user server=1 blocks until the forwarder connects
        fwd.start(wait=False)
        gen.wait_ready()
        fwd.wait_ready()
        fwd.command("start")
        gen.wait_links()
        smp = measure_loop(gen, (0, 1), duration, 1.0, "baseline")
        progress(f"  baseline {smp.mpps:6.2f} Mpps")
        return smp
    finally:
        for t in (fwd, gen):
            try:
                t.stop()
            except Exception:   # noqa: BLE001 - teardown must go on
                pass
        shutil.rmtree(sock, ignore_errors=True)


def run_quick(duration: float = 3.0, rounds: int = 5, hugepages: bool = False, n_macs: int = 2,
              baseline: bool = False, progress: Progress = _noop, keep: bool = False) -> dict:
    """``harmless bench --quick``: L2 bridge workload, 64 B, HARMLESS vs plain in one OVS-DPDK run.

    Returns:
        dict with ``harmless_mpps``, ``plain_mpps``, ``ratio`` (Mpps), ``harmless_cycles_per_packet``,
        ``plain_cycles_per_packet``, ``cycles_ratio`` (plain/harmless cycles), method, settings, machine.
    """
    t_start = time.monotonic()
    workdir = make_workdir()
    wl = l2_workload(n_macs)
    sess = Session(workdir, hugepages=hugepages, frame_size=64, progress=progress)
    result: dict = {}
    try:
        with clean_stop():
            sess.open(wl)
            problems = sess.systems.verify()
            if problems:
                raise RuntimeError("HARMLESS bridges did not verify: " + "; ".join(problems))
            progress("warm-up window per system (discarded)")
            for sysname in ("harmless", "plain"):
                sess.measure(sysname, 1.0, warmup=0.5)
            result = compare(sess, duration, rounds, progress)
            boot = sess.systems.ovs.ofctl("-O", "OpenFlow13", "dump-flows", "br-otc", "cookie=0xb007/-1")
            result["bootstrap_packets"] = sum(int(x.split("n_packets=")[1].split(",")[0])
                                              for x in boot.splitlines() if "n_packets=" in x)
            sess.close()
            if baseline:
                b = run_baseline(workdir, duration, hugepages, progress=progress)
                result["baseline_mpps"] = round(b.mpps, 3)
    finally:
        sess.close()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    result.update({
        "workload": "l2", "n_flows": wl.n_rules, "frame_size": 64, "method": METHOD_LOOP,
        "duration_s": duration, "rounds": rounds, "hugepages": hugepages,
        "settings": {"ovs_pmd_cpu_mask": "0x2", "ovs_lcore_mask": "0x1", "testpmd_lcores": "0@0,1@0",
                     "trunks": "2 x dpdkvhostuserclient (VID 107, VID 110)", "pipeline": wl.note,
                     "translator": "pop_vlan / push_vlan+set_field (harmless.otc.flows)"},
        "machine": machine_info(), "elapsed_s": round(time.monotonic() - t_start, 1)})
    return result
