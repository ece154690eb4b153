"""Control-plane timings: reactive flow setup (first packet vs the following ones) and rule installation with
and without OpenFlow bundles. Both systems (HARMLESS br-of and the plain bridge) in the same OVS-DPDK run.

Flow setup: br-of-bench and br-plain get an os-ken controller running :mod:`harmless.bench.reactive_app`
(table-miss -> CONTROLLER; PACKET_IN -> FLOW_MOD (5-tuple) + PACKET_OUT). The paced generator sends ``n_flows``
new flows, one frame each, at ``rate_pps`` (low enough for the controller not to queue): the latency of these
frames is the flow-setup latency (PACKET_IN -> controller -> FLOW_MOD/PACKET_OUT -> forwarded). The same frames are
then sent again (now matching the installed flows): the "subsequent packets" latency. Latencies are
generator-measured (TSC), every frame.

Rule installation: wall time of ``ovs-ofctl add-flows`` of N rules (each rule its own flow_mod; ovs-ofctl ends
with a barrier) against ``ovs-ofctl --bundle add-flows`` (one bundle, atomic commit; OpenFlow 1.3 via the ONF bundle extension), on an
otherwise idle bridge of the same OVS, cleared before each measurement.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from harmless import procs
from harmless.bench.latency import Latency
from harmless.bench.sut import OF_BRIDGE, PAIRS, PLAIN_BRIDGE
from harmless.bench.workloads import l2_workload, mac_n
from harmless.lab.controller import start_controller

APP = "harmless.bench.reactive_app"
BRIDGES = {"harmless": OF_BRIDGE, "plain": PLAIN_BRIDGE}
Progress = Callable[[str], None]


def _lat(r: dict) -> dict:
    return Latency.from_result(r["lat"]).summary_us() | {"sent": r["offered"], "received": r["rx"]}


def _wait_connected(ovs, bridges: list[str], timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        states = [ovs.vsctl("--if-exists", "get", "Controller", br, "is_connected").strip() for br in bridges]
        if all(s == "true" for s in states):
            return
        time.sleep(0.2)
    raise TimeoutError(f"controller did not connect to {bridges}")


def flow_setup(sess, n_flows: int = 200, rate_pps: float = 500, frame_size: int = 64,
               progress: Progress = lambda m: None) -> dict:
    """Reactive flow-setup latency per system (see module doc). ``sess`` is an open PacedSession; its pipeline
    is replaced by the controller's and restored (empty) afterwards: reload a workload before further data-plane
    measurements. Returns ``{system: {"first": {...µs}, "subsequent": {...µs}, "packet_ins": n}}``."""
    ovs = sess.systems.ovs
    port = procs.free_port()
    log = Path(sess.workdir) / "reactive-controller.log"
    ctl = start_controller(port, log, app=APP)
    out: dict = {"n_flows": n_flows, "rate_pps": rate_pps, "app": APP}
    try:
        wl = l2_workload(2)
        sess.load(wl, n_flows, frame_size, install=False)          # n distinct 5-tuples, new to every bridge
        for br in BRIDGES.values():
            ovs.ofctl("-O", "OpenFlow13", "del-flows", br)
            ovs.vsctl("set-controller", br, f"tcp:127.0.0.1:{port}")
        _wait_connected(ovs, list(BRIDGES.values()))
        time.sleep(1.0)                                             # table-miss flow installed on connect
        for system, br in BRIDGES.items():
            ovs.appctl("revalidator/purge")
            a, b = PAIRS[system]
            first = sess.gen.run([a], [b], rate_pps, 600, count=n_flows, drain_ms=500)
            again = sess.gen.run([a], [b], rate_pps, 600, count=n_flows, drain_ms=200)
            n_rules = sum(1 for ln in ovs.ofctl("-O", "OpenFlow13", "dump-flows", br).splitlines()
                          if "priority=10" in ln)
            out[system] = {"first": _lat(first), "subsequent": _lat(again), "flows_installed": n_rules}
            progress(f"  flow setup {system:8s}: first packet p50 {out[system]['first']['p50_us']:.0f} µs, "
                     f"subsequent p50 {out[system]['subsequent']['p50_us']:.1f} µs ({n_rules} flows installed)")
    finally:
        for br in BRIDGES.values():
            try:
                ovs.vsctl("del-controller", br)
            except Exception:   # noqa: BLE001 - teardown goes on
                pass
        procs.stop(ctl)
    return out


def rule_lines(n: int) -> str:
    """``n`` distinct L2 rules (ovs-ofctl syntax), as a controller would push a table."""
    return "".join(f"table=0,priority=100,dl_dst={mac_n(i)},actions=output:10\n" for i in range(n))


def rule_install(ovs, sizes=(1000, 10_000, 100_000), bridge: str = PLAIN_BRIDGE,
                 progress: Progress = lambda m: None) -> list[dict]:
    """Seconds to install N rules with ``ovs-ofctl add-flows`` and with ``--bundle`` (rules/s too)."""
    rows = []
    for n in sizes:
        text = rule_lines(n)
        row = {"n_rules": n}
        for mode, extra in (("plain", []), ("bundle", ["--bundle"])):
            ovs.ofctl("-O", "OpenFlow13", "del-flows", bridge)
            t0 = time.monotonic()
            ovs.ofctl("-O", "OpenFlow13", *extra, "add-flows", bridge, "-", stdin=text, timeout=600)
            dt = time.monotonic() - t0
            got = ovs.ofctl("-O", "OpenFlow13", "dump-aggregate", bridge)
            row[f"{mode}_s"] = round(dt, 3)
            row[f"{mode}_rules_per_s"] = round(n / dt)
            row[f"{mode}_flow_count"] = int(got.split("flow_count=")[1].split()[0])
        rows.append(row)
        progress(f"  install {n} rules: plain {row['plain_s']:.2f} s, bundle {row['bundle_s']:.2f} s")
    ovs.ofctl("-O", "OpenFlow13", "del-flows", bridge)
    return rows
