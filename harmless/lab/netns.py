"""Lab primitives: network namespaces, veth cables, addresses, commands in a namespace, teardown by name prefix.

The one way the labs (the built-in lab :mod:`harmless.lab.topology`, OSHI's :mod:`harmless.oshi.lab`, the edge
overlay's :mod:`harmless.overlay.lab`) build and remove their networks. Every command goes through
:func:`harmless.procs.run`; a failing ``ip`` raises :class:`LabError` naming the command and the kernel's message.

Teardown (:func:`remove_prefixed`) works from names alone (every lab names its namespaces and the cable ends it
leaves in this namespace with its own prefix), so it also cleans up after a build that failed half-way.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

from harmless.errors import HarmlessError
from harmless.ovs import Ovs
from harmless.procs import run, wait_gone

NETNS_DIR = Path("/run/netns")
FIX = "run as root on a kernel with network namespaces and veth"
NO_IPV6 = ("net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
ROUTER = ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")


class LabError(HarmlessError):
    """A step building or changing a lab failed (an ``ip`` command, a daemon that did not start)."""


def ip(*args: str, netns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """``ip ARGS`` (``ip -n NETNS ARGS`` when ``netns`` is given).

    Raises:
        LabError: it failed (``check``): the command and iproute2's message.
    """
    argv = ["ip", *(["-n", netns] if netns else []), *args]
    return run(argv, check=check, error=LabError, fix=FIX, where=" ".join(argv))


def run_in(netns: str | None, *argv: str, check: bool = False, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``argv`` (no shell) in namespace ``netns`` (None: this one); by default a failure is only returned."""
    return run(argv, netns=netns, check=check, timeout=timeout, error=LabError, fix=FIX)


def exists(netns: str) -> bool:
    """True when the named namespace exists."""
    return (NETNS_DIR / netns).exists()


def add_ns(netns: str, *, ipv6: bool = False, router: bool = False) -> None:
    """Create namespace ``netns`` with ``lo`` up; IPv6 off unless ``ipv6``; ``router``: IPv4 forwarding on and
    reverse-path filtering off (sysctl failures are ignored: a kernel without IPv6 is fine)."""
    ip("netns", "add", netns)
    ip("link", "set", "lo", "up", netns=netns)
    sysctls = (() if ipv6 else NO_IPV6) + (ROUTER if router else ())
    if sysctls:
        run_in(netns, "sysctl", "-qw", *sysctls)


def veth(a: str, a_ns: str | None, b: str, b_ns: str | None, *, mtu: int | None = None, b_mac: str | None = None,
         up: bool = True) -> None:
    """A veth cable: ``a`` created in ``a_ns``, ``b`` in ``b_ns`` (None: this namespace); ``b_mac`` sets ``b``'s
    MAC; ``up`` brings both ends up."""
    m = ["mtu", str(mtu)] if mtu else []
    ip("link", "add", a, *(["netns", a_ns] if a_ns else []), *m, "type", "veth", "peer", "name", b,
       *(["netns", b_ns] if b_ns else []), *(["address", b_mac] if b_mac else []), *m)
    if up:
        link_up(a_ns, a)
        link_up(b_ns, b)


def link_up(netns: str | None, dev: str) -> None:
    """``ip link set DEV up`` in ``netns``."""
    ip("link", "set", "dev", dev, "up", netns=netns)


def no_tx_offload(netns: str | None, dev: str) -> None:
    """TX checksum offload off (the userspace datapath forwards frames as they are: partial checksums would arrive
    unfinished); failures are ignored."""
    run_in(netns, "ethtool", "-K", dev, "tx", "off")


def iface_up(netns: str | None, dev: str, addr: str | None = None, mac: str | None = None,
             offload: bool = False) -> None:
    """Configure an interface: MAC ``mac``, address ``addr`` (``a.b.c.d/len``), up, TX offload off unless
    ``offload``."""
    if mac:
        ip("link", "set", "dev", dev, "address", mac, netns=netns)
    if addr:
        ip("addr", "add", addr, "dev", dev, netns=netns)
    link_up(netns, dev)
    if not offload:
        no_tx_offload(netns, dev)


def move(dev: str, from_ns: str | None, to_ns: str, new_name: str | None = None) -> str:
    """Move ``dev`` from ``from_ns`` (None: this namespace) into ``to_ns``, renamed to ``new_name``; returns the
    name it has there (still down)."""
    ip("link", "set", dev, "netns", to_ns, netns=from_ns)
    if new_name and new_name != dev:
        ip("link", "set", dev, "name", new_name, netns=to_ns)
    return new_name or dev


def sysctl(netns: str | None, *settings: str) -> None:
    """``sysctl -qw SETTINGS`` in ``netns`` (failures ignored)."""
    run_in(netns, "sysctl", "-qw", *settings)


def ping(netns: str, dst: str, count: int = 3, interval: float = 0.2, src: str | None = None) -> float:
    """Ping ``dst`` from namespace ``netns`` (``-I src`` if given); return the loss in percent (100 on no answer)."""
    argv = ["ping", "-c", str(count), "-i", str(interval), "-W", "2", *(["-I", src] if src else []), dst]
    p = run_in(netns, *argv, timeout=count * interval + 30)
    m = re.search(r"([\d.]+)% packet loss", p.stdout)
    return float(m.group(1)) if m else 100.0


def wait_tcp(port: int, timeout: float, host: str = "127.0.0.1") -> bool:
    """Wait up to ``timeout`` s until ``host:port`` (this namespace) accepts a TCP connection."""
    end = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), timeout=0.5).close()
            return True
        except OSError:
            if time.monotonic() >= end:
                return False
            time.sleep(0.1)


def stop_ovs(base_dir: Path | str, netns: str | None) -> None:
    """Stop a private OVS instance (idempotent; failures ignored: teardown goes on)."""
    with contextlib.suppress(HarmlessError):
        Ovs(Path(base_dir), netns=netns).stop()


def stop_ovs_all(instances: list[tuple[Path, str | None]], workers: int = 4) -> None:
    """Stop several private OVS instances ``(base_dir, netns)`` in parallel (each stop waits for ovs-vswitchd)."""
    if instances:
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            list(pool.map(lambda x: stop_ovs(*x), instances))


def remove_prefixed(prefix: str) -> bool:
    """Delete every namespace named ``<prefix>*`` and every interface of this namespace named so (cable ends a lab
    left here). Works after a build that failed half-way. Returns True when anything was there."""
    found = False
    for n in sorted(NETNS_DIR.glob(f"{prefix}*")) if NETNS_DIR.exists() else []:
        found = True
        ip("netns", "del", n.name, check=False)
    for dev in Path("/sys/class/net").glob(f"{prefix}*"):
        found = True
        ip("link", "del", dev.name, check=False)
    return found


def stop_pid_file(pidf: Path) -> None:
    """Stop the process group whose leader's pid is in ``pidf`` (a lab daemon): SIGTERM, up to 5 s, then SIGKILL;
    a child of this process is reaped. Idempotent: a missing file, a stale pid or a process already gone are not
    errors."""
    try:
        pid = int(pidf.read_text().strip())
        os.killpg(pid, signal.SIGTERM)
        if not wait_gone(pid, 5, kill=False):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    except (OSError, ValueError):
        pass
