"""Measurements on the edge-overlay lab: pings, captures, the core's MAC table, migration, iperf3 + CPU.

All traffic stays inside the lab's namespaces. Used by ``harmless overlay demo`` and the lab tests.
"""
from __future__ import annotations

import concurrent.futures
import itertools
import json
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from harmless.lab import netns
from harmless.overlay import lab as L
from harmless.procs import cpu_seconds, spawn, stop

PING_RE = re.compile(r"(\d+) packets transmitted, (\d+) received")
MAC_RE = re.compile(r"([0-9a-f]{2}(?::[0-9a-f]{2}){5})")


def ping(lab: str, vm: str, ip: str, count: int = 3, interval: float = 0.2, size: int = 56,
         dont_fragment: bool = False, wait_s: float = 1) -> tuple[int, int]:
    """Ping ``ip`` from VM ``vm``; returns (sent, received). ``size`` = ICMP payload bytes (1472 -> 1500-byte IP)."""
    argv = ["ping", "-n", "-q", "-c", str(count), "-i", str(interval), "-W", str(wait_s), "-s", str(size)]
    if dont_fragment:
        argv += ["-M", "do"]
    p = netns.run_in(L.vm_netns(lab, vm), *argv, ip, timeout=count * interval + wait_s + 30)
    m = PING_RE.search(p.stdout)
    return (int(m.group(1)), int(m.group(2))) if m else (count, 0)


def intra_tenant_pairs(reg) -> list[tuple[str, str, str]]:
    """Every unordered VM pair of each tenant: ``(tenant, a, b)``."""
    out = []
    for t in reg.tenants:
        for a, b in itertools.combinations(t.vms, 2):
            out.append((t.name, a.name, b.name))
    return out


def all_pairs_loss(lab: str, count: int = 3) -> tuple[float, dict]:
    """Loss (%) over pings between every VM pair of every tenant (both directions, in parallel)."""
    reg = L.registry(lab)
    ips = {v.name: v.address for _, v in reg.vms()}
    jobs = [(a, b) for _, x, y in intra_tenant_pairs(reg) for a, b in ((x, y), (y, x))]
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        res = list(ex.map(lambda ab: ping(lab, ab[0], ips[ab[1]], count=count), jobs))
    sent = sum(s for s, _ in res)
    recv = sum(r for _, r in res)
    return (100.0 * (sent - recv) / sent if sent else 100.0), {f"{a}->{b}": r for (a, b), r in zip(jobs, res)}


class Capture:
    """tcpdump on ``eth0`` of every VM (``-e -n``: link-level headers, no name lookups) while the block runs.

    After the block, :meth:`frames` gives ``{vm: [(src MAC, dst MAC, line)]}`` of the frames each VM *received*
    (frames it sent itself are left out).
    """

    def __init__(self, lab: str, vms: list[str]):
        self.lab, self.vms = lab, vms
        self.procs: dict[str, subprocess.Popen] = {}
        self.out: dict[str, str] = {}
        self.dir: Path | None = None

    def __enter__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="capture-", dir=L.lab_dir(self.lab)))
        for vm in self.vms:
            self.procs[vm] = spawn(["tcpdump", "-i", "eth0", "-e", "-n", "-l", "-p", "-Q", "in", "-U"],
                                   self.dir / f"{vm}.txt", netns=L.vm_netns(self.lab, vm))
        time.sleep(1.0)                  # tcpdump needs a moment before it captures
        return self

    def __exit__(self, *exc):
        time.sleep(0.3)
        for vm, p in self.procs.items():
            p.send_signal(signal.SIGINT)
        for vm, p in self.procs.items():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                stop(p)
            self.out[vm] = (self.dir / f"{vm}.txt").read_text(errors="replace")
        shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def frames(self) -> dict[str, list[tuple[str, str, str]]]:
        res = {}
        for vm, text in self.out.items():
            rows = []
            for line in text.splitlines():
                macs = MAC_RE.findall(line)
                if len(macs) >= 2:
                    rows.append((macs[0], macs[1], line))
            res[vm] = rows
        return res


def leaks(reg, frames: dict) -> tuple[int, int, list[str]]:
    """Count frames a VM received from another tenant's VM (by source MAC; MACs are unique in the registry) and
    frames whose source MAC is not a VM of its own tenant at all (e.g. a server's MAC: source MAC not restored).

    Returns: ``(cross-tenant frames, frames with a foreign non-VM source MAC, up to 5 example lines)``.
    """
    tenant_of = {v.name: t for t, v in reg.vms()}
    mac_tenant = {v.mac: t for t, v in reg.vms()}
    cross, foreign, ex = 0, 0, []
    for vm, rows in frames.items():
        t = tenant_of.get(vm)
        for src, _dst, line in rows:
            if src in mac_tenant and mac_tenant[src] != t:
                cross += 1
                ex.append(f"{vm}: {line}")
            elif src not in mac_tenant:
                foreign += 1
                ex.append(f"{vm}: {line}")
    return cross, foreign, ex[:5]


def cross_tenant_attempts(lab: str) -> dict:
    """Try to reach other tenants on purpose: (1) ping every IP of every other tenant (ARP for IPs the own tenant
    lacks is refused by the controller; IPs it shares reach the own tenant's VM), (2) with a static ARP entry
    naming a VM of another tenant (its real MAC), ping it -- the edge switch has no flow for that pair.

    Returns ``{"replies": replies from a VM of another tenant (must be 0), "sent": pings sent}``.
    """
    reg = L.registry(lab)
    vms = reg.vms()
    sent = replies = 0
    jobs = []
    for ta, a in vms:
        for tb, b in vms:
            if ta == tb:
                continue
            jobs.append((a, b))
    # static neighbour entry for the victim's IP -> the victim's MAC (only when the attacker's tenant does not
    # itself use that IP, otherwise we would break its own traffic)
    own_ips = {t.name: {v.address for v in t.vms} for t in reg.tenants}
    tenant_of = {v.name: t for t, v in vms}

    def one(ab):
        a, b = ab
        n = L.vm_netns(lab, a.name)
        if b.address not in own_ips[tenant_of[a.name]]:
            netns.run_in(n, "ip", "neigh", "replace", b.address, "lladdr", b.mac, "dev", "eth0", "nud", "permanent")
            s, r = ping(lab, a.name, b.address, count=2, interval=0.1, wait_s=1)
            netns.run_in(n, "ip", "neigh", "del", b.address, "dev", "eth0")
            return s, r
        return 0, 0

    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        for s, r in ex.map(one, jobs):
            sent += s
            replies += r
    return {"sent": sent, "replies": replies}


def legacy_fdb(lab: str) -> list[tuple[int, int, str]]:
    """The core switch's MAC table: ``[(port, VLAN, MAC)]`` (``ovs-appctl fdb/show br-core``)."""
    out = L.core_ovs(lab).appctl("fdb/show", L.CORE_BRIDGE)
    rows = []
    for line in out.splitlines()[1:]:
        f = line.split()
        if len(f) >= 3 and MAC_RE.match(f[2]):
            rows.append((int(f[0]) if f[0].isdigit() else -1, int(f[1]), f[2]))
    return rows


def migrate_while_pinging(lab: str, vm: str, to: str, pinger: str, interval: float = 0.05,
                          duration: float = 4.0) -> dict:
    """Move ``vm`` to server ``to`` while ``pinger`` pings it every ``interval`` s; returns sent/received/lost
    and whether the controller now has the VM on ``to`` with a VID there."""
    reg = L.registry(lab)
    ip = reg.vm(vm)[1].address
    res = {}

    def run():
        res["sent"], res["received"] = ping(lab, pinger, ip, count=int(duration / interval), interval=interval,
                                            wait_s=1)

    th = threading.Thread(target=run)
    th.start()
    time.sleep(duration / 3)
    moved = L.vm_move(lab, vm, to)
    th.join()
    time.sleep(0.3)
    s = L.status(lab)
    after = ping(lab, pinger, ip, count=3, interval=0.1)
    ok = (s.get("where", {}).get(vm, [None])[0] == to and vm in s.get("vids", {}).get(to, {})
          and vm not in s.get("vids", {}).get(moved["from"], {}) and after[1] == after[0])
    return {"vm": vm, "from": moved["from"], "to": to, "sent": res["sent"], "received": res["received"],
            "lost": res["sent"] - res["received"], "ok": ok}


def vswitchd_pids(lab: str) -> list[int]:
    """PIDs of every ovs-vswitchd of the lab (servers and core)."""
    pids = []
    for d in sorted(L.lab_dir(lab).glob("ovs-*")):
        try:
            pids.append(int((d / "run" / "ovs-vswitchd.pid").read_text()))
        except (OSError, ValueError):
            pass
    return pids


def iperf(lab: str, client: str, server: str, seconds: float = 3.0, port: int = 5201) -> dict:
    """iperf3 TCP from VM ``client`` to VM ``server`` for ``seconds``.

    Returns ``{"gbps": receiver goodput Gbit/s, "cpu_s": CPU seconds of every ovs-vswitchd of the lab plus both
    iperf3 processes during the run, "cpu_per_gbit": cpu_s per Gbit transferred, "retransmits"}``.
    """
    reg = L.registry(lab)
    ip = reg.vm(server)[1].address
    srv = spawn(["iperf3", "-s", "-1", "-p", str(port)], L.lab_dir(lab) / f"iperf3-{port}.log",
                netns=L.vm_netns(lab, server))
    try:
        time.sleep(0.5)
        pids = vswitchd_pids(lab)
        c0 = cpu_seconds(*pids)
        p = netns.run_in(L.vm_netns(lab, client), "iperf3", "-c", ip, "-p", str(port), "-t", str(seconds), "-J",
                     timeout=seconds + 30)
        c1 = cpu_seconds(*pids)
    finally:
        try:
            srv.wait(5)                 # -1: it ends after the one test
        except subprocess.TimeoutExpired:
            stop(srv)
    try:
        j = json.loads(p.stdout)
        end = j["end"]
        gbps = end["sum_received"]["bits_per_second"] / 1e9
        secs = end["sum_received"]["seconds"]
        cpu = end.get("cpu_utilization_percent", {})
        iperf_cpu = (cpu.get("host_total", 0) + cpu.get("remote_total", 0)) / 100 * secs
        retr = end.get("sum_sent", {}).get("retransmits")
    except (ValueError, KeyError):
        return {"gbps": 0.0, "cpu_s": None, "cpu_per_gbit": None, "retransmits": None,
                "error": (p.stderr or p.stdout).strip()[-200:]}
    cpu_s = (c1 - c0) + iperf_cpu
    gbit = gbps * secs
    return {"gbps": round(gbps, 3), "cpu_s": round(cpu_s, 2),
            "cpu_per_gbit": round(cpu_s / gbit, 3) if gbit > 0 else None, "retransmits": retr}


def set_mtu(lab: str, vms: list[str], mtu: int) -> None:
    """Set the MTU (bytes) of the VMs' eth0."""
    for vm in vms:
        netns.run_in(L.vm_netns(lab, vm), "ip", "link", "set", "dev", "eth0", "mtu", str(mtu), check=True)
