"""``harmless ha demo``: the faults of issue #23 on the two-server lab, with the figures (docs/high-availability.md).

For each fault the lab is deployed (``up`` on the active server), both agents see each other on both paths, one
host pings another every 10 ms and a sampler asks the emulated switch every few ms which trunk(s) a broadcast from
that host leaves on (``ofproto/trace``: the switch's own forwarding decision). Then the fault hits the active server:

* ``kill-ovs``: its ovs-vswitchd gets SIGKILL;
* ``trunk-down``: its end of the trunk cable goes down;
* ``freeze``: every process of the server gets SIGSTOP (links stay up), SIGCONT after the take-over;
* ``mgmt-cut``: its management cable is cut (BFD still says alive: no take-over may happen);
* ``both-cut``: management and trunk cut together.

Per fault it reports the loss window (the longest gap between ping replies, minus the 10 ms interval), the time split
(detection, fencing commit, controller reconnect, pipeline: from the fault, the new active's failover record and the
first reply after the gap), the samples by number of trunks the switch forwarded on, and whether ``down`` afterwards
(run on the other server than the last active, so both servers' ``down`` is shown) gave back the exact original.
"""
from __future__ import annotations

import json
import os
import platform
import re
import signal
import threading
import time
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field

from harmless import orchestrator as orch
from harmless import procs
from harmless import state as st
from harmless.deployment import connect
from harmless.errors import HarmlessError
from harmless.ha import lab, record, replica
from harmless.inventory import load_inventory
from harmless.switch_drivers import get_driver

FAULTS = ("kill-ovs", "trunk-down", "freeze", "mgmt-cut", "both-cut")
#: ping interval (s): one ping every 10 ms (issue #23)
PING_INTERVAL = 0.01


class Split(BaseModel):
    """A take-over's time split (ms): from the fault to the decision, the fencing commit, the controller connection
    (br-of's targets set and ovs-vswitchd connected), and the pipeline (until the first reply came back)."""

    detection_ms: float | None = None
    commit_ms: float | None = None
    controller_ms: float | None = None
    pipeline_ms: float | None = None


class FaultResult(BaseModel):
    """One fault's figures (see the module doc)."""

    fault: str
    hit: str = Field(description="the server the fault hit (the active one)")
    failover_expected: bool
    failover: bool
    to_server: str | None = None
    loss_ms: float
    lost_pings: int
    split: Split = Split()
    samples: int = 0
    samples_by_trunks: dict[str, int] = Field(default_factory=dict)
    one_trunk_at_every_sample: bool = False
    device_forwarding_trunks: list[str] = Field(default_factory=list)
    traffic_resumed: bool = False
    down_from: str | None = None
    down_restored: bool | None = None
    goal_ms: float | None = Field(None, description="the fencing commit time + 1000 ms")
    ok: bool = False
    notes: list[str] = Field(default_factory=list)


class DemoResult(BaseModel):
    """The whole run: the machine, the pair's timers, each fault."""

    vendor: str
    interval_ms: int
    multiplier: int
    machine: dict
    faults: list[FaultResult]
    seconds: float
    ok: bool


# ----------------------------------------------------------------------------- helpers
def _as(info: dict, server: str):
    """The state directory of ``server`` for a block (and its name for ``up``)."""
    return st.using(info["servers"][server]["state_dir"])


def deploy(info: dict, server: str, progress) -> None:
    """``up`` on ``server`` (it becomes the active one; the other stores the state)."""
    with _as(info, server):
        orch.up(info["inventory"], progress, server=server, wait_controller=30)


def undeploy(info: dict, server: str, progress) -> tuple[bool, str]:
    """``down`` on ``server``; then the device is read afresh and compared with the original it gave back.

    Returns:
        ``(running config equals the original byte for byte, one line)``.
    """
    with _as(info, server):
        original = st.read_backup(st.active_original("sw1"))
        r = orch.down(progress)
    inv = load_inventory(info["inventory"])
    drv = connect(inv.switches[0], "demo")
    try:
        same = drv.running_config() == original
    finally:
        drv.close()
    peer = r.standby or {}
    return same and r.config_restored, (f"down on {server}: config " + ("equals" if same else "DIFFERS from")
                                        + f" the original; other server: {peer.get('removed') or peer.get('error')}")


def healthy(info: dict, detect_ms: float) -> str | None:
    """The active server's name when both agents run, hear each other, see BFD up, agree on one active and hold
    the same state (:func:`harmless.ha.replica.digest`), and the standby has staged its take-over where its driver
    can; else None."""
    roles, staged, digests = {}, {}, set()
    for s in lab.SERVERS:
        with _as(info, s):
            view, rec = record.load_agent(), record.load()
            digests.add(replica.digest(st.load()))
        if view is None or rec is None or view.peer_heard_ms is None or view.peer_heard_ms > detect_ms:
            return None
        if view.bfd.get("sw1") is not True or time.time() - _epoch(view.updated) > 3 * record.AGENT_WRITE_S:
            return None
        roles[s], staged[s] = rec.roles.get("sw1"), "sw1" in view.staged
    active = [s for s, r in roles.items() if r == "active"]
    if len(active) != 1 or sorted(roles.values()) != ["active", "standby"] or len(digests) != 1:
        return None                     # one active, and both hold the same state (replicated again if needed)
    standby = next(s for s in roles if s != active[0])
    stages = getattr(get_driver(load_inventory(info["inventory"]).switches[0].driver), "can_stage", False)
    return active[0] if staged[standby] or not stages else None       # the steady state: the take-over staged


def _agent_hears(info: dict, server: str) -> bool:
    """``server``'s agent runs (its view was written lately by a live process) and has heard the other one."""
    with _as(info, server):
        view = record.load_agent()
    return (view is not None and view.peer_heard_ms is not None and procs.alive(view.pid)
            and time.time() - _epoch(view.updated) <= 3 * record.AGENT_WRITE_S)


def _epoch(iso: str) -> float:
    import calendar
    return calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ"))


def wait(cond, timeout: float, what: str, poll: float = 0.2):
    """Poll ``cond`` until true (returned) or ``timeout`` s (HarmlessError naming ``what``)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(poll)
    raise HarmlessError("harmless ha demo", f"timed out after {timeout:g} s waiting for {what}",
                        "see the agents' logs in the lab directory")


class Pinger:
    """``ping -D -i 0.01`` from the first host to the second, its replies read back afterwards."""

    def __init__(self, info: dict, log: Path):
        hosts = list(info["hosts"].values())
        self.log = log
        self.proc = procs.spawn(["ping", "-D", "-n", "-i", str(PING_INTERVAL), "-W", "1", hosts[1]["ip"]], log,
                                netns=hosts[0]["netns"])

    def stop(self) -> list[tuple[int, float]]:
        """End it; ``[(icmp_seq, reply time in epoch s)]`` in order."""
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
        except OSError:
            pass
        procs.stop(self.proc, timeout=5)
        rows = {int(m.group(2)): float(m.group(1)) for m in
                re.finditer(r"^\[(\d+\.\d+)\] \d+ bytes from .*icmp_seq=(\d+)", self.log.read_text(), re.M)}
        return sorted(rows.items())


def loss_window(replies: list[tuple[int, float]], since: float) -> tuple[float, int, float | None]:
    """``(loss ms, pings lost, time of the first reply after the longest gap)`` over the replies from ``since``
    on: the longest gap between two replies minus one interval. Pure."""
    rows = [r for r in replies if r[1] >= since - 1]
    if len(rows) < 2:
        return float("inf"), 0, None
    gap, a, b = max((b[1] - a[1], a, b) for a, b in zip(rows, rows[1:]))
    return round(max(0.0, gap - PING_INTERVAL) * 1000, 1), b[0] - a[0] - 1, b[1]


class Sampler:
    """Asks the emulated switch which trunk(s) a broadcast from the first host leaves on, as often as it can, in a
    thread (:func:`harmless.ha.lab.flood_trunks`)."""

    def __init__(self, info: dict):
        self.info, self.dp = info, lab.datapath_ports(info)
        self.samples: list[tuple[float, tuple[str, ...]]] = []
        self.stop_ev = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.stop_ev.is_set():
            try:
                self.samples.append((time.time(), tuple(lab.flood_trunks(self.info, self.dp))))
            except HarmlessError:
                pass
            self.stop_ev.wait(0.005)

    def stop(self) -> Counter:
        self.stop_ev.set()
        self.t.join(5)
        return Counter(str(len(s)) for _t, s in self.samples)


def inject(info: dict, fault: str, server: str) -> None:
    """Make ``fault`` happen to ``server`` (see the module doc)."""
    if fault == "kill-ovs":
        lab.kill_vswitchd(info, server)
    elif fault == "trunk-down":
        lab.trunk_link(info, server, up=False)
    elif fault == "freeze":
        lab.signal_server(info, server, signal.SIGSTOP)
    elif fault == "mgmt-cut":
        lab.mgmt_link(info, server, up=False)
    elif fault == "both-cut":
        lab.mgmt_link(info, server, up=False)
        lab.trunk_link(info, server, up=False)


def undo(info: dict, fault: str, server: str) -> None:
    """End ``fault`` on ``server`` (a killed ovs-vswitchd is rebuilt by its own agent)."""
    if fault == "freeze":
        lab.signal_server(info, server, signal.SIGCONT)
    if fault in ("mgmt-cut", "both-cut"):
        lab.mgmt_link(info, server, up=True)
    if fault in ("trunk-down", "both-cut"):
        lab.trunk_link(info, server, up=True)


def _failover_after(info: dict, server: str, since: float) -> record.Failover | None:
    """``server``'s last failover record when it began after ``since``."""
    with _as(info, server):
        rec = record.load()
    lf = rec.last_failover if rec else None
    return lf if lf and lf.decided_at and lf.decided_at >= since and lf.outcome == "done" else None


def forwarding_trunks(info: dict) -> list[str]:
    """The trunk ports whose allowed VLANs on the device (its running config, read now) include a migrated port's
    VID."""
    inv = load_inventory(info["inventory"])
    sw = inv.switches[0]
    drv = connect(sw, "demo")
    try:
        ports = drv.port_states()
    finally:
        drv.close()
    vids = {p.access_vid for n, p in ports.items() if sw.canonical(n) in {sw.canonical(a.interface)
                                                                         for a in sw.access_ports}}
    return sorted(t.switch_port for t in sw.trunks if (p := next((q for n, q in ports.items()
                                                                  if sw.canonical(n) == sw.canonical(t.switch_port)),
                                                                 None)) is not None and p.mode == "trunk"
                  and (p.allowed_vids is None or vids & set(p.allowed_vids)))


def _replies_after(pinger: Pinger, t: float) -> int:
    return len(re.findall(r"^\[(\d+\.\d+)\]", pinger.log.read_text(), re.M)) if t == 0 else sum(
        1 for m in re.finditer(r"^\[(\d+\.\d+)\] \d+ bytes", pinger.log.read_text(), re.M) if float(m.group(1)) > t)


def observe(info: dict, fault: str, active: str, detect_ms: float, d: Path, progress) -> FaultResult:
    """Run one fault on the deployed, healthy lab (see the module doc); the fault is undone before it returns."""
    other = next(s for s in lab.SERVERS if s != active)
    expected = fault != "mgmt-cut"
    pinger, sampler = Pinger(info, d / f"ping-{fault}.txt"), Sampler(info)
    lf, res = None, FaultResult(fault=fault, hit=active, failover_expected=expected, failover=False,
                                loss_ms=0, lost_pings=0)
    try:
        wait(lambda: _replies_after(pinger, 0) >= 50, 30, "pings through the hairpin before the fault")
        t_fault = time.time()
        progress(f"{fault}: hitting the active server {active}")
        inject(info, fault, active)
        if expected:
            lf = wait(lambda: _failover_after(info, other, t_fault), 120, f"{other} to take over", poll=0.05)
        else:                     # the time under test: nothing may happen for 20 detection times
            time.sleep(max(3.0, 20 * detect_ms / 1000))
            lf = _failover_after(info, other, t_fault)
        mark = (lf.controller_at or lf.activated_at) if lf else t_fault
        wait(lambda: _replies_after(pinger, mark) >= 50, 60, "pings through the hairpin after the fault")
    finally:
        replies, counts = pinger.stop(), sampler.stop()
        undo(info, fault, active)
    res.loss_ms, res.lost_pings, resume = loss_window(replies, t_fault)
    res.traffic_resumed = resume is not None and sum(1 for _s, t in replies if t > (resume or 0)) >= 10
    res.samples, res.samples_by_trunks = sum(counts.values()), dict(counts)
    res.one_trunk_at_every_sample = res.samples > 0 and counts.get("2", 0) == 0
    if lf is not None:
        res.failover, res.to_server = True, lf.to_server
        res.split = Split(detection_ms=round((lf.decided_at - t_fault) * 1000, 1), commit_ms=lf.commit_ms,
                          controller_ms=round(((lf.controller_at or lf.activated_at) - lf.committed_at) * 1000, 1),
                          pipeline_ms=round((resume - (lf.controller_at or lf.activated_at)) * 1000, 1)
                          if resume else None)
        res.goal_ms = round(lf.commit_ms + 1000, 1)
    return res


def _settle(info: dict, detect_ms: float, progress) -> str:
    """Wait until the pair is healthy again; the active server's name."""
    progress("waiting until both servers see each other on both paths")
    return wait(lambda: healthy(info, detect_ms), 180, "the pair to be healthy (both agents, BFD up, one active)")


def run_fault(info: dict, fault: str, active: str, detect_ms: float, d: Path, progress) -> tuple[FaultResult, str]:
    """Deploy on ``active``, run ``fault``, settle, ``down`` on the server that is then the standby (or, without a
    take-over, on the active one). Returns the figures and the server to deploy the next fault on."""
    deploy(info, active, progress)
    _settle(info, detect_ms, progress)
    res = observe(info, fault, active, detect_ms, d, progress)
    now_active = _settle(info, detect_ms, progress)
    res.device_forwarding_trunks = forwarding_trunks(info)
    res.down_from = active
    res.down_restored, line = undeploy(info, active, progress)
    res.notes.append(line)
    win = res.goal_ms if res.failover else 1000.0
    res.ok = (res.failover == res.failover_expected and res.one_trunk_at_every_sample and res.traffic_resumed
              and bool(res.down_restored) and len(res.device_forwarding_trunks) == 1 and res.loss_ms <= win)
    progress(f"{fault}: loss {res.loss_ms} ms, failover {res.failover} -> {res.to_server}, "
             f"samples {res.samples_by_trunks}, down restored {res.down_restored}")
    return res, now_active


def run_demo(vendor: str = "ios", faults: tuple[str, ...] = FAULTS, name: str = "hademo", ssh_port: int = 2680,
             d: Path | None = None, progress=lambda m: None, keep: bool = False) -> DemoResult:
    """Build the two-server lab, run each fault (:func:`run_fault`), tear the lab down (unless ``keep``).

    Raises:
        HarmlessError: the lab could not be built, or a step timed out (the lab is torn down).
    """
    d = Path(d or st.state_dir() / "labs" / f"{name}-ha")
    t0 = time.monotonic()
    spec = lab.HaLabSpec(name=name, ssh_port=ssh_port, vendor=vendor)
    info = lab.ha_lab_up(spec, d, progress)
    results: list[FaultResult] = []
    try:
        for s in lab.SERVERS:
            lab.start_agent(info, s)
        wait(lambda: all(_agent_hears(info, s) for s in lab.SERVERS), 60, "both agents to run and hear each other")
        active = "a"
        for fault in faults:
            res, active = run_fault(info, fault, active, spec.interval_ms * spec.multiplier, d, progress)
            results.append(res)
    finally:
        if not keep:
            lab.ha_lab_down(name, d)
    return DemoResult(vendor=vendor, interval_ms=spec.interval_ms, multiplier=spec.multiplier,
                      machine={"cpus": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2),
                               "kernel": platform.release(), "python": platform.python_version()},
                      faults=results, seconds=round(time.monotonic() - t0, 1), ok=all(r.ok for r in results))


def save(res: DemoResult, path: Path) -> None:
    """Write the figures as JSON (the committed results: bench/results/ha/)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res.model_dump(mode="json"), indent=2) + "\n")
