"""Drive Debian's ``dpdk-testpmd`` non-interactively through its interactive prompt (``-i`` on a pipe).

testpmd is the traffic generator of the benchmarks (pktgen-dpdk is not packaged for Debian 12 nor on PyPI;
``shared/notes/ovs-dpdk-on-this-machine.md`` §5). It runs as the vhost-user *server* (``net_virtio_user`` with
``server=1``) so OVS ports are ``dpdkvhostuserclient`` and reconnect by themselves.

Output is line-buffered through ``stdbuf`` (testpmd's stdout is fully buffered on a pipe); a command is done when
the next ``testpmd> `` prompt appears. :func:`parse_port_stats` parses ``show port stats all`` (pure, unit tested).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harmless import procs
from harmless.errors import HarmlessError

TESTPMD = "dpdk-testpmd"
PROMPT = "testpmd> "
DPDK_RUNDIR = Path("/var/run/dpdk")


class TestpmdError(HarmlessError):
    __test__ = False
    """testpmd did not start, died, or a command timed out."""

    def __init__(self, what: str, hint: str = "see the testpmd log in the benchmark's work folder"):
        super().__init__("dpdk-testpmd", what, hint)


def testpmd_installed() -> bool:
    return shutil.which(TESTPMD) is not None


@dataclass(frozen=True)
class PortStats:
    """Counters of one port from ``show port stats all``."""

    port: int
    rx_packets: int
    rx_missed: int
    rx_bytes: int
    rx_errors: int
    rx_nombuf: int
    tx_packets: int
    tx_errors: int
    tx_bytes: int
    rx_pps: int = 0
    tx_pps: int = 0


_STATS_HDR = re.compile(r"NIC statistics for port (\d+)")
_KV = re.compile(r"([A-Za-z][A-Za-z-]*):\s+(\d+)")


def parse_port_stats(text: str) -> dict[int, PortStats]:
    """Parse the output of ``show port stats all`` (or ``show port stats N``).

    Returns:
        ``{port: PortStats}``; ports whose block is incomplete are skipped.
    """
    out: dict[int, PortStats] = {}
    blocks = _STATS_HDR.split(text)
    # split -> [pre, port, body, port, body, ...]
    for i in range(1, len(blocks) - 1, 2):
        port = int(blocks[i])
        body = blocks[i + 1]
        kv = {k.lower(): int(v) for k, v in _KV.findall(body)}
        try:
            out[port] = PortStats(port, kv["rx-packets"], kv.get("rx-missed", 0), kv.get("rx-bytes", 0),
                                  kv.get("rx-errors", 0), kv.get("rx-nombuf", 0), kv["tx-packets"],
                                  kv.get("tx-errors", 0), kv.get("tx-bytes", 0), kv.get("rx-pps", 0),
                                  kv.get("tx-pps", 0))
        except KeyError:
            continue
    return out


@dataclass
class VirtioPort:
    """One ``net_virtio_user`` vdev of the generator.

    Attributes:
        path: vhost-user socket path (testpmd is the server: OVS connects as client).
        mac: the port's own MAC (source of generated frames).
        peer: destination MAC of generated frames (``--eth-peer``).
    """

    path: str
    mac: str
    peer: str


@dataclass
class TestpmdOptions:
    __test__ = False    # not a pytest test class
    """How testpmd is started.

    Attributes:
        lcores: ``--lcores`` mapping; the default keeps main and forwarding lcore on CPU0 (OVS PMD owns CPU1).
        hugepages: False = ``--no-huge -m <mem_mb>`` (memfd-backed, shareable with vhost-user).
        forward_mode: io | mac | macswap | 5tswap | txonly | flowgen | rxonly. Default ``5tswap`` (MACs, IPs and
            L4 ports swapped: the two directions are different 5-tuples, as real replies are; with ``macswap``
            both directions share one RSS hash and fight over the same two EMC slots).
        topology: ``loop`` (rx on a port, tx on the same port) or ``paired``.
        frame_size: ``--txpkts`` (frame size without the 4-byte CRC: 64 B frame = 60 here; see :func:`txpkts_for`).
        mbufs: ``--total-num-mbufs``.
        vdev_kind: ``virtio_user`` (generator), ``vhost`` (io-forwarding baseline: net_vhost clients) or
            ``af_packet`` (generator on the far side of veth pairs: ``VirtioPort.path`` is the interface name).
        netns: run testpmd in this network namespace (``ip netns exec``; the af_packet generator's veth ends).
        txsplit_rand: ``set txsplit rand`` before traffic: each generated frame takes a random number of the
            ``txpkts_segments`` (uniform), which is how :data:`IMIX_SEGMENTS` makes the simple IMIX.
        txpkts_segments: ``set txpkts`` segment lengths (overrides ``frame_size`` when set).
    """

    lcores: str = "0@0,1@0"
    hugepages: bool = False
    mem_mb: int = 512
    forward_mode: str = "5tswap"
    topology: str = "loop"
    frame_size: int = 64
    mbufs: int = 65536
    vdev_kind: str = "virtio_user"
    extra_eal: tuple[str, ...] = ()
    extra_app: tuple[str, ...] = ()
    netns: str | None = None
    txsplit_rand: bool = False
    txpkts_segments: tuple[int, ...] = ()


#: ``set txpkts`` segments that, with ``set txsplit rand`` (uniform 1..12 segments), give the simple IMIX 7:4:1 of
#: 64/570/1518-byte frames (with FCS): 1-7 segments = 64-70 B, 8-11 = 570-573 B, 12 = 1518 B (with FCS)
#: (IMIX: RFC 6985 section 4 names it; the 7:4:1 "simple IMIX" is the common Agilent/Spirent definition)
IMIX_SEGMENTS = (60, 1, 1, 1, 1, 1, 1, 500, 1, 1, 1, 945)
#: mean frame size (bytes, with FCS) of :data:`IMIX_SEGMENTS` under ``txsplit rand``
IMIX_MEAN_FRAME = sum(sum(IMIX_SEGMENTS[:n]) + 4 for n in range(1, len(IMIX_SEGMENTS) + 1)) / len(IMIX_SEGMENTS)


def txpkts_for(frame_size: int) -> int:
    """testpmd ``--txpkts`` for an Ethernet frame size as RFC 2544 counts it (with the 4-byte FCS)."""
    return max(frame_size - 4, 60)


def build_argv(prefix: str, ports: list[VirtioPort], opt: TestpmdOptions) -> list[str]:
    """The testpmd command line (pure)."""
    eal = [f"--lcores={opt.lcores}", "--no-pci", f"--file-prefix={prefix}"]
    eal += ["--no-huge", "-m", str(opt.mem_mb)] if not opt.hugepages else ["--in-memory", "--single-file-segments"]
    app = ["-i", f"--forward-mode={opt.forward_mode}", f"--port-topology={opt.topology}", "--nb-cores=1",
           f"--total-num-mbufs={opt.mbufs}", f"--txpkts={txpkts_for(opt.frame_size)}"]
    for i, p in enumerate(ports):
        if opt.vdev_kind == "vhost":
            eal.append(f"--vdev=net_vhost{i},iface={p.path},client=1,queues=1")
        elif opt.vdev_kind == "af_packet":
            eal.append(f"--vdev=net_af_packet{i},iface={p.path},qpairs=1,framecnt=2048")
        else:
            eal.append(f"--vdev=net_virtio_user{i},path={p.path},queues=1,server=1,mac={p.mac}")
        app.append(f"--eth-peer={i},{p.peer}")
    ns = ["ip", "netns", "exec", opt.netns] if opt.netns else []
    return [*ns, "stdbuf", "-oL", "-eL", TESTPMD, *eal, *opt.extra_eal, "--", *app, *opt.extra_app]


@dataclass
class Testpmd:
    __test__ = False
    """One running testpmd process, driven through its prompt.

    Args:
        workdir: folder for the log file.
        name: label (file prefix ``hlb<pid><name>`` for /var/run/dpdk).
        ports: the vdevs.
        options: start options.
    """

    workdir: Path
    name: str
    ports: list[VirtioPort]
    options: TestpmdOptions = field(default_factory=TestpmdOptions)
    _proc: subprocess.Popen | None = field(default=None, init=False, repr=False)
    _buf: list[str] = field(default_factory=list, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _log: object = field(default=None, init=False, repr=False)

    @property
    def prefix(self) -> str:
        return f"hlb{os.getpid()}{self.name}"

    @property
    def text(self) -> str:
        with self._lock:
            return "".join(self._buf)

    def start(self, timeout: float = 30, wait: bool = True) -> None:
        """Start testpmd and (unless ``wait`` is False: then call :meth:`wait_ready`) wait for its first prompt."""
        if not testpmd_installed():
            raise TestpmdError("dpdk-testpmd not found", "apt-get install dpdk-dev")
        self.workdir.mkdir(parents=True, exist_ok=True)
        argv = build_argv(self.prefix, self.ports, self.options)
        self._log = open(self.workdir / f"testpmd-{self.name}.log", "w")
        self._log.write("# " + " ".join(argv) + "\n")
        self._proc = procs.spawn_piped(argv)   # its own session: Ctrl-C goes to us; we stop it cleanly
        threading.Thread(target=self._reader, daemon=True).start()
        if wait:
            self.wait_ready(timeout)

    def wait_ready(self, timeout: float = 30) -> None:
        self._wait_for(PROMPT, 0, timeout)
        if self.options.txpkts_segments:
            self.command("set txpkts " + ",".join(str(x) for x in self.options.txpkts_segments))
        if self.options.txsplit_rand:
            self.command("set txsplit rand")

    def _reader(self) -> None:
        fd = self._proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            s = chunk.decode(errors="replace")
            with self._lock:
                self._buf.append(s)
            if self._log:
                try:
                    self._log.write(s)
                    self._log.flush()
                except ValueError:
                    pass

    def _wait_for(self, token: str, start: int, timeout: float) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            t = self.text
            i = t.find(token, start)
            if i >= 0:
                return t[start:i]
            if self._proc.poll() is not None:
                raise TestpmdError(f"exited with code {self._proc.returncode}: {t[-400:].strip()}")
            time.sleep(0.02)
        raise TestpmdError(f"timed out waiting for {token!r}")

    def command(self, cmd: str, timeout: float = 15) -> str:
        """Send one command; return its output (up to the next prompt)."""
        if self._proc is None or self._proc.poll() is not None:
            raise TestpmdError("not running")
        mark = len(self.text)
        self._proc.stdin.write((cmd + "\n").encode())
        self._proc.stdin.flush()
        out = self._wait_for(PROMPT, mark, timeout)
        # drop the echoed command line
        return out.split("\n", 1)[1] if "\n" in out else ""

    def port_stats(self) -> dict[int, PortStats]:
        return parse_port_stats(self.command("show port stats all"))

    def link_up(self, port: int) -> bool:
        out = self.command(f"show port info {port}")
        m = re.search(r"Link status:\s*(\w+)", out)
        return bool(m and m.group(1).lower() == "up")

    def wait_links(self, timeout: float = 20) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if all(self.link_up(i) for i in range(len(self.ports))):
                return
            time.sleep(0.3)
        raise TestpmdError("vhost-user links did not come up", "is ovs-vswitchd running with the client ports?")

    def stop(self) -> None:
        """Quit testpmd (``stop``/``quit``, then SIGTERM/SIGKILL) and remove its /var/run/dpdk folder."""
        p = self._proc
        if p is not None and p.poll() is None:
            try:
                p.stdin.write(b"stop\nquit\n")
                p.stdin.flush()
                p.stdin.close()
            except OSError:
                pass
            procs.stop(p, timeout=5, grace=8, group=True)
        self._proc = None
        if self._log:
            try:
                self._log.close()
            except OSError:
                pass
            self._log = None
        shutil.rmtree(DPDK_RUNDIR / self.prefix, ignore_errors=True)
        if self.options.vdev_kind == "virtio_user":
            for port in self.ports:        # server sockets testpmd created
                try:
                    os.unlink(port.path)
                except OSError:
                    pass
