"""``harmless oshi bench``: the OSHI paper's Sec. VII comparison (VII.A and VII.C) on this machine.

CPU cost per forwarded packet, measured in one run for three devices under test (DUT) between the same sender and
receiver namespaces:
  * ``router``   -- a plain Linux router (namespace with ip_forward; "ROUTER IP" in the paper);
  * ``oshi_ip``  -- best-effort IP through an OSHI node: physical port -> OVS (LME flow) -> internal port -> Linux
    IP forwarding -> internal port -> OVS -> physical port ("OSHI IP": twice through OVS plus the Linux path);
  * ``oshi_vll`` -- MPLS label switching of a VLL in the same OSHI node (table 1: swap, output; "OSHI VLL").

Method: the sender (a raw AF_PACKET socket in its own namespace) offers ``rate`` frames/s of one pre-built frame
(UDP, 64-byte payload; for the VLL case the same IP packet behind an MPLS label) for ``seconds``. The work is done
by processes we can account for per process (so the other users of this shared machine do not enter): the sender
(``getrusage``: its send() syscalls plus the veth receive / Linux forwarding that the kernel runs in softirq on its
behalf), ovs-vswitchd (``/proc/<pid>/stat``; the userspace datapath does its I/O and the Linux path of the
internal ports in its own threads) and ksoftirqd (deferred softirq work). From their sum the sender's own cost is
subtracted (a ``null`` trial in every round: the same frames with a foreign destination MAC, dropped on arrival),
and the rest is divided by the frames delivered to the receiver's interface. Cases are interleaved in every round;
the median over rounds is reported.

Caveats: the userspace (netdev) datapath, not the paper's kernel datapath; the machine has 2 vCPUs shared with
other work, so absolute numbers are noisy -- compare the ratios, measured in the same run.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from harmless.errors import HarmlessError
from harmless.lab import netns
from harmless.ovs import Ovs
from harmless.pipelines.oshi.lme import lme_ofctl
from harmless.procs import cpu_seconds

CASES = ("router", "oshi_ip", "oshi_vll")

SENDER = r"""
import socket, sys, time, resource
iface, frame_hex, rate, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
frame = bytes.fromhex(frame_hex)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
t0 = time.perf_counter()
sent = 0
while True:
    now = time.perf_counter() - t0
    if now >= seconds:
        break
    due = int(now * rate)
    while sent < due:
        s.send(frame)
        sent += 1
    time.sleep(0.0005)
ru = resource.getrusage(resource.RUSAGE_SELF)
print(sent, ru.ru_utime + ru.ru_stime)
"""


def _ns(ns: str, *a: str) -> str:
    return netns.run_in(ns, *a).stdout


def _rx_packets(ns: str, dev: str) -> int:
    return int(_ns(ns, "cat", f"/sys/class/net/{dev}/statistics/rx_packets").strip() or 0)


def _mac(ns: str, dev: str) -> str:
    return _ns(ns, "cat", f"/sys/class/net/{dev}/address").strip()


def frame(dst_mac: str, src_mac: str, src_ip: str, dst_ip: str, label: int | None = None) -> bytes:
    """Ethernet + IPv4 + UDP (64-byte payload), optionally behind one MPLS label (bottom of stack, TTL 64)."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.contrib.mpls import MPLS
    ip = IP(src=src_ip, dst=dst_ip, ttl=64) / UDP(sport=5001, dport=9) / (b"\x00" * 64)
    if label is None:
        return bytes(Ether(dst=dst_mac, src=src_mac, type=0x0800) / ip)
    return bytes(Ether(dst=dst_mac, src=src_mac, type=0x8847) / MPLS(label=label, s=1, ttl=64) / ip)


class BenchLab:
    """src -- DUT -- dst for the router and the OSHI node (two DUT namespaces, one pair of CE namespaces)."""

    def __init__(self):
        tag = uuid.uuid4().hex[:4]
        self.src, self.dst = f"hl-ob{tag}-src", f"hl-ob{tag}-dst"
        self.rtr, self.node = f"hl-ob{tag}-rtr", f"hl-ob{tag}-oshi"
        self.dir = Path(tempfile.mkdtemp(prefix=f"hl-ob{tag}-"))
        self.ovs = Ovs(self.dir / "ovs", netns=self.node)

    def up(self) -> None:
        for ns in (self.src, self.dst, self.rtr, self.node):
            netns.add_ns(ns, router=True)
        for dut, a, b in ((self.rtr, "r", "r"), (self.node, "o", "o")):
            netns.veth("d-in", dut, a, self.src, up=False)
            netns.veth("d-out", dut, b, self.dst, up=False)
            for ns, dev in ((dut, "d-in"), (dut, "d-out"), (self.src, a), (self.dst, b)):
                netns.iface_up(ns, dev)
        # router: 10.72.1.0/24 (src side), 10.72.2.0/24 (dst side)
        netns.ip("addr", "add", "10.72.1.1/24", "dev", "d-in", netns=self.rtr)
        netns.ip("addr", "add", "10.72.2.1/24", "dev", "d-out", netns=self.rtr)
        netns.ip("addr", "add", "10.72.1.2/24", "dev", "r", netns=self.src)
        netns.ip("addr", "add", "10.72.2.2/24", "dev", "r", netns=self.dst)
        # OSHI node: OVS with LME flows, internal ports carry 10.71.1.1 / 10.71.2.1
        self.ovs.start()
        self.ovs.vsctl("add-br", "br-oshi", "--", "set", "Bridge", "br-oshi", "datapath_type=netdev",
                       "fail_mode=secure", "protocols=OpenFlow13",
                       "--", "add-port", "br-oshi", "d-in", "--", "set", "Interface", "d-in", "ofport_request=1",
                       "--", "add-port", "br-oshi", "d-out", "--", "set", "Interface", "d-out", "ofport_request=2",
                       "--", "add-port", "br-oshi", "i-in", "--", "set", "Interface", "i-in", "type=internal",
                       "ofport_request=1001",
                       "--", "add-port", "br-oshi", "i-out", "--", "set", "Interface", "i-out", "type=internal",
                       "ofport_request=1002")
        self.ovs.ofctl("-O", "OpenFlow13", "add-flows", "br-oshi", "-", stdin=lme_ofctl({1: 1001, 2: 1002}))
        self.ovs.ofctl("-O", "OpenFlow13", "add-flow", "br-oshi",
                       "table=1,priority=250,in_port=1,dl_type=0x8847,mpls_label=100,"
                       "actions=set_field:200->mpls_label,output:2")
        for dev, addr in (("i-in", "10.71.1.1/24"), ("i-out", "10.71.2.1/24")):
            netns.iface_up(self.node, dev, addr)
        netns.ip("addr", "add", "10.71.1.2/24", "dev", "o", netns=self.src)
        netns.ip("addr", "add", "10.71.2.2/24", "dev", "o", netns=self.dst)
        # the DUTs need the receivers' MAC addresses: static neighbours, no ARP during the trials
        netns.ip("neigh", "replace", "10.72.2.2", "lladdr", _mac(self.dst, "r"), "dev", "d-out", netns=self.rtr)
        netns.ip("neigh", "replace", "10.71.2.2", "lladdr", _mac(self.dst, "o"), "dev", "i-out", netns=self.node)

    def frames(self) -> dict[str, tuple[str, str, bytes]]:
        """case -> (sender interface, receiver interface, frame)."""
        return {
            "router": ("r", "r", frame(_mac(self.rtr, "d-in"), _mac(self.src, "r"), "10.72.1.2", "10.72.2.2")),
            "oshi_ip": ("o", "o", frame(_mac(self.node, "i-in"), _mac(self.src, "o"), "10.71.1.2", "10.71.2.2")),
            "oshi_vll": ("o", "o", frame(_mac(self.dst, "o"), _mac(self.src, "o"), "10.71.1.2", "10.71.2.2",
                                         label=100)),
        }

    def down(self) -> None:
        try:
            self.ovs.stop()
        except HarmlessError:
            pass
        for ns in (self.src, self.dst, self.rtr, self.node):
            netns.ip("netns", "del", ns, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


def _ksoftirqd_s() -> float:
    total = 0.0
    for d in Path("/proc").glob("[0-9]*"):
        try:
            if (d / "comm").read_text().startswith("ksoftirqd"):
                total += cpu_seconds(int(d.name))
        except OSError:
            pass
    return total


def trial(bl: BenchLab, case: str, spec: tuple[str, str, bytes], rate: int, seconds: float) -> dict:
    """One measurement of one case. Returns counts and CPU times (s) of the processes that do the work: the sender
    (its send() syscalls, and the kernel receive/forwarding that runs in softirq on its behalf), ovs-vswitchd, and
    the ksoftirqd threads (softirq work that was deferred)."""
    tx_if, rx_if, fr = spec
    vswitchd = bl.ovs._pid("ovs-vswitchd")
    rx0, ovs0, ksi0 = _rx_packets(bl.dst, rx_if), cpu_seconds(vswitchd), _ksoftirqd_s()
    p = netns.run_in(bl.src, sys.executable, "-c", SENDER, tx_if, fr.hex(), str(rate), str(seconds),
                     timeout=seconds + 30)
    if p.returncode != 0:
        raise HarmlessError("oshi bench", f"the sender failed: {p.stderr.strip()[-200:]}", "")
    time.sleep(0.3)                                        # let the queues drain
    sent, sender_cpu = p.stdout.split()
    return {"case": case, "sent": int(sent), "delivered": _rx_packets(bl.dst, rx_if) - rx0,
            "sender_cpu_s": float(sender_cpu), "ovs_cpu_s": cpu_seconds(vswitchd) - ovs0,
            "ksoftirqd_cpu_s": _ksoftirqd_s() - ksi0}


def per_packet(t: dict, null: dict) -> dict:
    """Forwarding CPU per delivered packet (µs): all work CPU minus what the sender alone costs per frame (the
    ``null`` trial: same frames, dropped by the first receiving interface)."""
    base = null["sender_cpu_s"] / null["sent"] * t["sent"]
    work = t["sender_cpu_s"] + t["ovs_cpu_s"] + t["ksoftirqd_cpu_s"] - base
    d = t["delivered"]
    return {**t, "us_per_packet": 1e6 * work / d if d else None,
            "ovs_us_per_packet": 1e6 * t["ovs_cpu_s"] / d if d and t["case"] != "router" else 0.0}


def run(rate: int = 20000, seconds: float = 5.0, trials: int = 3, progress=lambda m: None) -> dict:
    """Run the comparison. Returns ``{"cases": {case: {"us_per_packet", "ovs_us_per_packet", "delivered_pct",
    "ratio_vs_router"}}, "trials": [...], "machine": {...}}``.

    Raises:
        HarmlessError: the lab could not be built or a sender failed (the lab is removed).
    """
    bl = BenchLab()
    out = {"rate_pps": rate, "seconds": seconds, "trials": [], "machine": {
        "cpus": os.cpu_count(), "kernel": os.uname().release,
        "ovs": netns.run_in(None, "ovs-vswitchd", "--version").stdout.split("\n")[0],
        "datapath": "netdev (userspace)", "loadavg_before": Path("/proc/loadavg").read_text().split()[:3]}}
    try:
        progress("building the bench lab: sender, receiver, a Linux router and an OSHI node (OVS netdev + LME)")
        bl.up()
        specs = bl.frames()
        # null: the router's frame with a foreign destination MAC, dropped on arrival: the sender's own cost
        specs["null"] = (specs["router"][0], specs["router"][1], b"\x02\x00\x00\x00\x00\x99" + specs["router"][2][6:])
        for case in CASES:                                  # warm up (neighbours, datapath flow caches)
            trial(bl, case, specs[case], rate // 10, 0.5)
        for i in range(trials):
            null = trial(bl, "null", specs["null"], rate, seconds)
            out["trials"].append({**null, "us_per_packet": None})
            for case in CASES:
                progress(f"trial {i + 1}/{trials}: {case} at {rate} packets/s for {seconds} s")
                out["trials"].append(per_packet(trial(bl, case, specs[case], rate, seconds), null))
    finally:
        bl.down()
    cases = {}
    for case in CASES:
        ts = [t for t in out["trials"] if t["case"] == case and t["us_per_packet"] is not None]
        if not ts:
            cases[case] = {"us_per_packet": None}
            continue
        cases[case] = {"us_per_packet": round(statistics.median(t["us_per_packet"] for t in ts), 2),
                       "ovs_us_per_packet": round(statistics.median(t["ovs_us_per_packet"] for t in ts), 2),
                       "delivered_pct": round(100 * statistics.median(t["delivered"] / t["sent"] for t in ts), 1),
                       "spread_us": [round(min(t["us_per_packet"] for t in ts), 2),
                                     round(max(t["us_per_packet"] for t in ts), 2)]}
    ref = cases["router"].get("us_per_packet")
    for c in cases.values():
        if ref and c.get("us_per_packet"):
            c["ratio_vs_router"] = round(c["us_per_packet"] / ref, 2)
    out["cases"] = cases
    return out


def table_rows(r: dict) -> tuple[str, list[str], list[list[str]]]:
    """The result of :func:`run` as ``(title, headers, rows)`` (pure; ``harmless oshi bench`` prints it)."""
    title = (f"OSHI Sec. VII: CPU per forwarded packet at {r['rate_pps']} packets/s "
             f"(median of {len(r['trials']) // len(CASES)} trials)")
    names = {"router": "plain Linux router", "oshi_ip": "OSHI IP (OVS x2 + Linux)", "oshi_vll": "OSHI VLL (MPLS swap)"}
    rows = []
    for case, c in r["cases"].items():
        if c.get("us_per_packet") is None:
            rows.append([names[case], "n/a", "", "", "", ""])
            continue
        rows.append([names[case], f"{c['us_per_packet']:.2f}", f"{c['ovs_us_per_packet']:.2f}",
                     f"{c.get('ratio_vs_router', 0):.2f}x", f"{c['delivered_pct']:.1f}%", str(c["spread_us"])])
    return title, ["case", "µs CPU / packet", "of which OVS", "vs router", "delivered", "spread (µs)"], rows


def print_notes(r: dict, console) -> None:
    """The lines printed under the table: the machine and the caveat about a shared machine."""
    console.print(f"machine: {json.dumps(r['machine'])}")
    console.print("noisy shared machine: compare ratios from the same run, not absolute numbers")
