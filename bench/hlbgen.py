"""Build and drive ``hlbgen``, the paced DPDK generator of the RFC 2544 measurements (``bench/gen/hlbgen.c``).

Why not testpmd: testpmd cannot pace traffic on ``net_virtio_user`` ports (no queue rate limit on that PMD,
``set port ... queue ... rate`` needs the NIC's rate limiter) and does not timestamp frames, so it gives only
closed-loop maximum forwarding rates. hlbgen is ~350 lines of C against Debian's DPDK (``pkg-config libdpdk``
from dpdk-dev), compiled on first use into a cache folder (``$XDG_CACHE_HOME/harmless`` or ``~/.cache/harmless``),
keyed by the source hash and the DPDK version. It runs as the vhost-user *server* of every port (OVS ports are
``dpdkvhostuserclient``), like testpmd in :mod:`harmless.bench.testpmd`.

Protocol and timestamp method: see the header of ``hlbgen.c``. :func:`parse_result` is pure (unit tested).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harmless import procs
from harmless.bench.testpmd import DPDK_RUNDIR, VirtioPort
from harmless.errors import HarmlessError

SOURCE = Path(__file__).with_name("gen") / "hlbgen.c"


class GeneratorError(HarmlessError):
    """hlbgen could not be built, did not start, died, or answered with an error."""

    def __init__(self, what: str, hint: str = "see hlbgen.log in the benchmark's work folder"):
        super().__init__("hlbgen", what, hint)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "harmless"


def build(force: bool = False) -> Path:
    """Compile hlbgen if needed; return the binary's path.

    Raises:
        GeneratorError: compiler, pkg-config or DPDK headers missing, or the compile failed (message says which).
    """
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        raise GeneratorError("no C compiler (cc/gcc) to build the paced generator",
                             "apt-get install gcc libc6-dev pkg-config dpdk-dev")
    if not shutil.which("pkg-config"):
        raise GeneratorError("pkg-config is missing", "apt-get install pkg-config")
    ver = procs.run(["pkg-config", "--modversion", "libdpdk"], check=False, timeout=120)
    if ver.returncode != 0:
        raise GeneratorError("DPDK development files (libdpdk.pc) not found", "apt-get install dpdk-dev")
    src = SOURCE.read_bytes()
    key = hashlib.sha256(src + ver.stdout.encode()).hexdigest()[:12]
    out = cache_dir() / f"hlbgen-{key}"
    if out.exists() and not force:
        return out
    flags = procs.run(["pkg-config", "--cflags", "--libs", "libdpdk"], check=False, timeout=120).stdout.split()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    r = procs.run([cc, "-O2", "-Wall", "-o", str(tmp), str(SOURCE), *flags], check=False, timeout=120)
    if r.returncode != 0:
        raise GeneratorError(f"compiling {SOURCE.name} failed: {r.stderr.strip()[-600:]}",
                             "check gcc/dpdk-dev are installed (apt-get install gcc pkg-config dpdk-dev)")
    tmp.rename(out)
    return out


def parse_result(line: str) -> dict:
    """``result {json}`` line -> dict with derived ``offered`` (tx + tx_fail) and ``lost`` (expected - rx).

    Raises:
        GeneratorError: the line is an ``error ...`` reply or not a result.
    """
    line = line.strip()
    if line.startswith("error"):
        raise GeneratorError(line)
    if not line.startswith("result "):
        raise GeneratorError(f"unexpected reply {line[:120]!r}")
    d = json.loads(line[len("result "):])
    d["offered"] = d["tx"] + d["tx_fail"]
    # tx_expected counts every frame meant to arrive, including those the vring refused (tx_fail: the SUT did
    # not drain its input queue), so those count as lost
    d["expected"] = d["tx_expected"]
    d["lost"] = max(d["tx_expected"] - d["rx"], 0)
    d["offered_pps"] = d["offered"] / d["tx_seconds"] if d["tx_seconds"] else 0.0
    return d


@dataclass
class Hlbgen:
    """One running hlbgen process (the vhost-user server of ``ports``); :meth:`stop` always cleans up.

    Args:
        workdir: folder for the log and template files.
        ports: the generator's ports (socket path, MAC); port i is DPDK port i.
        lcores: EAL ``--lcores`` (default: everything on CPU0; OVS's PMD owns CPU1).
        mem_mb: ``--no-huge -m`` memory (memfd-backed, shareable with vhost-user).
    """

    workdir: Path
    ports: list[VirtioPort]
    lcores: str = "0@0"
    mem_mb: int = 768
    name: str = "gen"
    _proc: subprocess.Popen | None = field(default=None, init=False, repr=False)
    _lines: list[str] = field(default_factory=list, init=False, repr=False)
    _cv: threading.Condition = field(default_factory=threading.Condition, init=False, repr=False)
    tsc_hz: int = 0

    @property
    def prefix(self) -> str:
        return f"hlb{os.getpid()}{self.name}"

    def argv(self, binary: Path) -> list[str]:
        eal = [str(binary), f"--lcores={self.lcores}", "--no-pci", f"--file-prefix={self.prefix}", "--no-huge",
               "-m", str(self.mem_mb), "--log-level=lib.eal:warning"]
        for i, p in enumerate(self.ports):
            eal.append(f"--vdev=net_virtio_user{i},path={p.path},queues=1,server=1,mac={p.mac},queue_size=4096")
        return eal

    def start(self, timeout: float = 60) -> None:
        """Build if needed, start, wait for ``ready``.

        Raises:
            GeneratorError: build or start failed.
        """
        binary = build()
        self.workdir.mkdir(parents=True, exist_ok=True)
        argv = self.argv(binary)
        self._log = open(self.workdir / f"hlbgen-{self.name}.log", "w")
        self._log.write("# " + " ".join(argv) + "\n")
        self._proc = procs.spawn_piped(argv, text=True)
        threading.Thread(target=self._reader, daemon=True).start()
        line = self._expect(("ready",), timeout)
        self.tsc_hz = int(line.split()[-1])

    def _reader(self) -> None:
        for line in self._proc.stdout:
            try:
                self._log.write(line if len(line) < 2000 else line[:2000] + "...\n")
                self._log.flush()
            except ValueError:
                pass
            with self._cv:
                self._lines.append(line.rstrip("\n"))
                self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    def _expect(self, prefixes: tuple[str, ...], timeout: float) -> str:
        end = time.monotonic() + timeout
        with self._cv:
            while True:
                while self._lines:
                    ln = self._lines.pop(0)
                    if ln.startswith(prefixes) or ln.startswith("error"):
                        if ln.startswith("error"):
                            raise GeneratorError(ln)
                        return ln
                if self._proc.poll() is not None:
                    raise GeneratorError(f"exited with code {self._proc.returncode}")
                left = end - time.monotonic()
                if left <= 0:
                    raise GeneratorError(f"timed out waiting for {prefixes[0]!r}")
                self._cv.wait(min(left, 0.5))

    def _send(self, cmd: str) -> None:
        if self._proc is None or self._proc.poll() is not None:
            raise GeneratorError("not running")
        self._proc.stdin.write(cmd + "\n")
        self._proc.stdin.flush()

    def load(self, port: int, path: Path) -> tuple[int, int]:
        """Load a template file for ``port``; returns (frames, expected-to-arrive frames)."""
        self._send(f"load {port} {path}")
        parts = self._expect(("ok load",), 60).split()
        return int(parts[3]), int(parts[4])

    def links(self) -> list[bool]:
        self._send("links")
        return [x == "1" for x in self._expect(("links",), 10).split()[1:]]

    def wait_links(self, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if all(self.links()):
                return
            time.sleep(0.3)
        raise GeneratorError("vhost-user links did not come up", "is ovs-vswitchd running with the client ports?")

    def run(self, tx: list[int], rx: list[int], rate_pps: float, duration_s: float, count: int = 0,
            drain_ms: int = 100) -> dict:
        """One trial: send at ``rate_pps`` (aggregate over ``tx``) for ``duration_s`` (or ``count`` frames per
        tx port), keep receiving ``drain_ms`` after the last frame; returns :func:`parse_result`'s dict."""
        self._send(f"run {','.join(map(str, tx))} {','.join(map(str, rx))} {rate_pps:.0f} {duration_s:.3f} "
                   f"{int(count)} {int(drain_ms)}")
        return parse_result(self._expect(("result",), duration_s + drain_ms / 1000 + 60))

    def stop(self) -> None:
        """``quit``, then SIGTERM/SIGKILL; remove the DPDK run folder. Idempotent."""
        p = self._proc
        if p is not None:
            if p.poll() is None:
                try:
                    p.stdin.write("quit\n")
                    p.stdin.flush()
                    p.stdin.close()
                except (OSError, ValueError):
                    pass
                procs.stop(p, timeout=5, grace=5, group=True)
            self._proc = None
            try:
                self._log.close()
            except (OSError, AttributeError):
                pass
        shutil.rmtree(DPDK_RUNDIR / self.prefix, ignore_errors=True)
        for port in self.ports:
            try:
                os.unlink(port.path)
            except OSError:
                pass
