"""``harmless qos demo``: per-port QoS measured on the built-in lab with iperf3 (issue #15, "How to prove it").

Lab: hosts on FastEthernet0/7 (sender) and FastEthernet0/10 (receiver), the bundled learning switch, the server
side in its own namespace. One TCP flow h7 -> h10 crosses port 7's **ingress** (meter on its ``pop_vlan`` flow) and
port 10's **egress** (its queue on the trunk), so each measurement configures one of them and leaves the other open:

1. egress of Fa0/10 at 10 Mbit/s (from the inventory) and 50 Mbit/s (``qos set``), HTB;
2. ingress of Fa0/7 at 10 and 50 Mbit/s (meter, default burst: 300 ms at the rate, docs/qos.md);
3. egress with HFSC at 20 Mbit/s (when the kernel has sch_hfsc; else the reason is reported);
4. live change: egress 50 -> 10 Mbit/s while the flow runs (``apply_ms``: journal + state + OVS; ``effective_s``:
   from the change to the end of the first 0.5 s iperf3 interval at or below 1.05 x the new rate);
5. ovs-vswitchd CPU (utime+stime from /proc) at the same offered load (iperf3 ``-b`` 40 Mbit/s, below every
   limit) without QoS, with only the meter (100 Mbit/s), only the queue (100 Mbit/s), and both.

Measured rate = iperf3's receiver goodput (TCP payload), so a shaper at R Mbit/s of Ethernet frames shows about
0.95 R (1448 of 1518 bytes per full frame). The result is one JSON-able dict (see :func:`run`).
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import yaml

from harmless import orchestrator as orch
from harmless import state as st
from harmless.demo import cleanup
from harmless.deployment import state_ovs
from harmless.errors import HarmlessError, InputError
from harmless.lab import topology as lab
from harmless.lab.controller import start_controller
from harmless.otc import qos as qos_side
from harmless.qos import live
from harmless.qos.model import INGRESS_BURST_S
from harmless.procs import cpu_seconds, free_port, run as run_cmd, spawn, stop

SENDER, RECEIVER = 7, 10


def iperf3(info: dict, seconds: int, interval: float = 1.0, bitrate: str | None = None) -> dict:
    """One iperf3 TCP run from the sender host to the receiver host; returns iperf3's JSON (``-J``).

    Raises:
        HarmlessError: iperf3 failed (no server, no path).
    """
    h_src, h_dst = info["hosts"][str(SENDER)], info["hosts"][str(RECEIVER)]
    argv = ["iperf3", "-c", h_dst["ip"], "-t", str(seconds), "-i", str(interval), "-J", "--connect-timeout", "3000"]
    if bitrate:
        argv += ["-b", bitrate]
    p = run_cmd(argv, netns=h_src["netns"], timeout=seconds + 30, check=False)
    try:
        data = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise HarmlessError("iperf3", f"no result ({(p.stderr or p.stdout).strip()[:200]})",
                            "check the lab hosts' connectivity (harmless status)") from None
    if data.get("error"):
        raise HarmlessError("iperf3", data["error"], "check the lab hosts' connectivity (harmless status)")
    return data


def goodput_mbps(data: dict) -> float:
    """Receiver goodput of an iperf3 JSON result in Mbit/s."""
    return round(data["end"]["sum_received"]["bits_per_second"] / 1e6, 2)


def _vswitchd_pid(ovs) -> int:
    pid = ovs._pid("ovs-vswitchd")
    if pid is None:
        raise HarmlessError("ovs-vswitchd", "not running", "see harmless status")
    return pid


def _measure(info: dict, seconds: int, what: str, port: str, configured: float, progress) -> dict:
    progress(f"iperf3 TCP {seconds} s, {what} of {port} at {configured:g} Mbit/s")
    m = goodput_mbps(iperf3(info, seconds))
    return {"port": port, "configured_mbps": configured, "measured_mbps": m, "ratio": round(m / configured, 3)}


def run(seconds: int = 10, name: str = "qosd", progress=lambda m: None) -> dict:
    """Run the demo (about 2 min with 10 s measurements); everything it starts is stopped, also on failure.

    Returns:
        ``{"ingress": [{"port", "configured_mbps", "measured_mbps", "ratio"}], "egress": [...], "hfsc": {...} |
        {"supported": False, "reason"}, "live_change": {"port", "from_mbps", "to_mbps", "measured_mbps",
        "apply_ms", "effective_s"}, "cpu_overhead_pct": float, "cpu": {...}, "unshaped_mbps": float,
        "bursts_kb": {...}, "within_bounds": {...}, "ok": bool, "seconds": float}``.

    Raises:
        InputError: a deployment is already up.
        HarmlessError: a step failed (after cleaning up).
    """
    if st.load():
        raise InputError("harmless qos demo", "a HARMLESS deployment is already up", "run harmless down first")
    t0 = time.monotonic()
    r: dict = {"iperf3_seconds": seconds}
    ctl = srv = None
    deployed = False
    try:
        info = lab.lab_up(lab.LabSpec(name=name, ssh_port=free_port(2298), hosts=(SENDER, RECEIVER),
                                      server_netns=f"hl-{name}-srv"), progress)
        d = lab.lab_dir(name)
        ctl = start_controller(6653, d / "controller.log", netns=info["server_netns"])
        tx, rx = lab.access_iface("ios", SENDER), lab.access_iface("ios", RECEIVER)
        progress("harmless up (Fa0/10 egress 10 Mbit/s from the inventory)")
        orch.up(str(_inventory(info, d, tx, rx)), progress, wait_controller=30)
        deployed = True
        for _ in range(10):                      # the learning switch learns both hosts
            if lab.ping(info, SENDER, RECEIVER, count=2) == 0.0:
                break
        srv = spawn(["iperf3", "-s"], d / "iperf3-server.log", netns=info["hosts"][str(RECEIVER)]["netns"])
        time.sleep(1)
        r.update(_rates(info, seconds, tx, rx, progress))
        r["hfsc"] = _hfsc(info, seconds, rx, progress)
        r["live_change"] = _live_change(info, seconds, rx, progress)
        # CPU of ovs-vswitchd at the same offered load, with and without QoS
        ovs = state_ovs(st.load())
        r["cpu"] = cpu = _cpu(info, seconds, _vswitchd_pid(ovs), tx, rx, progress)
        base = cpu["without_qos"]["cpu_pct"]
        r["cpu_overhead_pct"] = round((cpu["with_qos"]["cpu_pct"] - base) / base * 100, 1) if base else None
        live.clear_qos(progress=progress)
        progress("harmless down")
        down = orch.down(progress)
        deployed = False
        r["config_restored"] = down.config_restored
    finally:
        stop(srv)
        cleanup(deployed, ctl, name, progress)
    r["within_bounds"] = _bounds(r)
    r["ok"] = all(v is not False for v in r["within_bounds"].values()) and r.get("config_restored") is True
    r["seconds"] = round(time.monotonic() - t0, 1)
    return r


def _inventory(info: dict, d: Path, tx: str, rx: str) -> Path:
    """The lab inventory with ``tx`` and ``rx`` migrated, ``rx`` with egress 10 Mbit/s; returns its file."""
    inv = lab.inventory(info, ["tcp:127.0.0.1:6653"])
    inv["switches"][0]["access_ports"] = [tx, {"interface": rx, "qos": {"egress_mbps": 10}}]
    inv_path = d / "inventory.yaml"
    inv_path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return inv_path


def _rates(info: dict, seconds: int, tx: str, rx: str, progress) -> dict:
    """Egress of ``rx`` (HTB) at 10 (from the inventory) and 50 Mbit/s, the unshaped rate, ingress of ``tx``
    (meter) at 10 and 50 Mbit/s; leaves both ports without QoS."""
    r: dict = {"egress": [_measure(info, seconds, "egress (htb)", rx, 10, progress)]}
    live.set_qos("sw1", rx, egress_mbps=50, progress=progress)
    r["egress"].append(_measure(info, seconds, "egress (htb)", rx, 50, progress))
    live.clear_qos("sw1", rx, progress=progress)
    progress(f"iperf3 TCP {seconds} s without QoS (what the lab carries unshaped)")
    r["unshaped_mbps"] = goodput_mbps(iperf3(info, seconds))
    r["ingress"] = []
    for rate in (10, 50):
        res = live.set_qos("sw1", tx, ingress_mbps=rate, progress=progress)
        r["ingress"].append(_measure(info, seconds, "ingress (meter)", tx, rate, progress))
        r.setdefault("bursts_kb", {})[f"ingress_{rate}"] = (res.to["ingress_burst_kb"]
                                                            or round(rate * 1000 * INGRESS_BURST_S))
    live.clear_qos("sw1", tx, progress=progress)
    return r


def _hfsc(info: dict, seconds: int, rx: str, progress) -> dict:
    """Egress of ``rx`` with HFSC at 20 Mbit/s, or why the kernel cannot (no sch_hfsc)."""
    ok, why = qos_side.hfsc_supported()
    if not ok:
        return {"supported": False, "port": rx, "configured_mbps": 20, "measured_mbps": None, "reason": why}
    live.set_qos("sw1", rx, egress_mbps=20, scheduler="hfsc", progress=progress)
    out = {"supported": True, **_measure(info, seconds, "egress (hfsc)", rx, 20, progress)}
    live.clear_qos("sw1", rx, progress=progress)
    return out


def _live_change(info: dict, seconds: int, rx: str, progress) -> dict:
    """Egress of ``rx`` 50 -> 10 Mbit/s while a flow runs: rates before/after, ``apply_ms``, ``effective_s``."""
    live.set_qos("sw1", rx, egress_mbps=50, progress=progress)
    total, change_at, interval = seconds + 7, 4.0, 0.5      # >= `seconds` measured from 2 s after the change
    progress(f"iperf3 TCP {total} s; at {change_at:g} s the egress of {rx} goes 50 -> 10 Mbit/s")
    result: dict = {}
    th = threading.Thread(target=lambda: result.update(iperf3(info, total, interval)))
    start = time.monotonic()
    th.start()
    time.sleep(change_at)
    at = time.monotonic() - start
    ch = live.set_qos("sw1", rx, egress_mbps=10, progress=progress)
    th.join(total + 40)
    ivs = [(iv["sum"]["start"], iv["sum"]["end"], iv["sum"]["bits_per_second"] / 1e6)
           for iv in result.get("intervals", [])]
    after = [v for s0, _e, v in ivs if s0 >= at + 2.0]
    eff = next((e - at for s0, e, v in ivs if s0 >= at and v <= 10 * 1.05), None)
    before = [v for s0, e, v in ivs if e <= at]
    live.clear_qos("sw1", rx, progress=progress)
    return {"port": rx, "from_mbps": 50, "to_mbps": 10,
            "measured_before_mbps": round(sum(before) / len(before), 2) if before else None,
            "measured_mbps": round(sum(after) / len(after), 2) if after else None,
            "measured_over_s": round(len(after) * interval, 1),
            "apply_ms": ch.apply_ms, "effective_s": round(eff, 2) if eff is not None else None}


def _cpu(info: dict, seconds: int, pid: int, tx: str, rx: str, progress) -> dict:
    """ovs-vswitchd CPU (% of one core) at 40 Mbit/s offered: without QoS, meter only, queue only, both."""
    cpu = {}
    for label in ("without_qos", "ingress_only", "egress_only", "with_qos"):
        if label == "ingress_only":
            live.set_qos("sw1", tx, ingress_mbps=100, progress=progress)
        elif label == "egress_only":
            live.clear_qos("sw1", tx, progress=progress)
            live.set_qos("sw1", rx, egress_mbps=100, progress=progress)
        elif label == "with_qos":
            live.set_qos("sw1", tx, ingress_mbps=100, progress=progress)
        progress(f"ovs-vswitchd CPU, iperf3 TCP {seconds} s at 40 Mbit/s offered, {label.replace('_', ' ')}")
        c0, w0 = cpu_seconds(pid), time.monotonic()
        m = goodput_mbps(iperf3(info, seconds, bitrate="40M"))
        c1, w1 = cpu_seconds(pid), time.monotonic()
        cpu[label] = {"cpu_pct": round((c1 - c0) / (w1 - w0) * 100, 2), "measured_mbps": m}
    return cpu


def _bounds(r: dict) -> dict:
    """Which measurements are within their bounds (None: not measured)."""
    return {
        "egress_0.90_1.05": all(0.90 <= x["ratio"] <= 1.05 for x in r["egress"]),
        "ingress_0.75_1.05": all(0.75 <= x["ratio"] <= 1.05 for x in r["ingress"]),
        "hfsc_0.90_1.05": (0.90 <= r["hfsc"]["ratio"] <= 1.05) if r["hfsc"].get("supported") else None,
        "live_change_within_2s": r["live_change"]["effective_s"] is not None
        and r["live_change"]["effective_s"] <= 2.0,
    }
