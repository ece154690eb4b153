"""``harmless restore``: rebuild the server side of the deployment from the state, without touching any switch.

What ``harmless-restore.service`` runs at boot (after Open vSwitch) and what an operator runs after an
``ovs-vswitchd`` restart: OpenFlow flows live only in ovs-vswitchd's memory, so a restarted daemon comes back with
br-otc's translator flows gone (no hairpin) and, after a reboot or a lost database, without the bridges. ``restore``
converges the server to the plan recorded in ``state.json`` with the same code ``harmless up`` uses for its server
step (:func:`harmless.otc.bridges.apply`: bridges, ports with their OpenFlow port numbers, patch pairs, controllers
and their TLS/backoff settings, link-down placeholders of ports ``watch`` holds down, the translator flows as one
bundle), then verifies it (:func:`harmless.otc.bridges.verify`). It never opens a session to a switch.

Steps, each journaled (:mod:`harmless.journal`, op ``restore``) before it happens:
``restore.begin`` → ``server.build`` → ``server.built`` → ``restore.end`` (per-port QoS meters and queues are part
of :func:`~harmless.otc.bridges.apply`). A restore killed half-way leaves a ``restore`` journal; the next ``restore``
(or ``recover``) simply runs it again (every step is idempotent).

An interrupted ``harmless qos`` run is server-only too: its state is written before OVS is changed, so rebuilding from
the state finishes it (what ``harmless recover`` does for it). An unfinished journal of another operation (an
interrupted ``up``/``down``/``recover``) is **reported, not finished**: finishing it means restoring switch configs (``harmless recover`` / ``harmless down``), which a boot-time
unit must not do without an operator. ``restore`` then changes nothing and fails (exit 1) with one line naming the
interrupted run and the command to run.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from harmless import journal
from harmless import state as st
from harmless.deployment import ref_record, state_ovs
from harmless.errors import HarmlessError, OvsError
from harmless.health import expected_translator_flows, translator_flows_present
from harmless.otc import bridges
from harmless.ovs import Ovs
from harmless.plan import Plan, SwitchPlan
from harmless.state import DeploymentState

Progress = Callable[[str], None]

#: journal ops whose interrupted run ``restore`` finishes by rebuilding the server from the state (no switch involved)
SERVER_ONLY_OPS = ("restore", "qos")

#: how long (s) ``restore`` waits for the br-of controllers to reconnect before reporting them (never fails on it)
CONTROLLER_WAIT_S = 5.0


class UnfinishedRunError(HarmlessError):
    """An interrupted ``up``/``down``/``recover`` journal is waiting for an operator. Exit code 1."""


def _quiet(_m: str) -> None:
    pass


def _check_netns(ovs: Ovs) -> None:
    if ovs.netns and not Path(f"/run/netns/{ovs.netns}").exists():
        raise OvsError("server.netns", f"the network namespace {ovs.netns} of the deployment does not exist (a reboot "
                       "removes namespaces)", f"create it and its trunk interfaces (ip netns add {ovs.netns}), then "
                       "run harmless restore again")


#: the keys of :class:`SwitchRestore` known before the rebuild (a dry run dumps only these)
_BEFORE_KEYS = ("bridge", "bridge_was_present", "translator_flows_before", "translator_flows_expected")


class SwitchRestore(BaseModel):
    """One switch in :class:`RestoreResult`: what was there before (always) and what was rebuilt (not on a dry run).

    Attributes:
        bridge: its br-of.
        bridge_was_present: br-of existed before the restore.
        translator_flows_before: its translator flows on br-otc before the restore.
        translator_flows_expected: how many the plan has.
        translator_flows: its translator flows on br-otc after the rebuild.
        ports: its migrated ports.
        held_down: its br-of interfaces ``watch`` holds link-down.
        controllers: ``{target: connected}`` of its br-of.
    """

    model_config = ConfigDict(extra="forbid")

    bridge: str
    bridge_was_present: bool
    translator_flows_before: int
    translator_flows_expected: int
    translator_flows: int | None = None
    ports: int | None = None
    held_down: list[str] | None = None
    controllers: dict[str, bool] | None = None

    @model_serializer(mode="wrap")
    def _no_unbuilt(self, handler) -> dict:
        d = handler(self)
        return {k: v for k, v in d.items() if v is not None or k in _BEFORE_KEYS}



class RestoreOvs(BaseModel):
    """The server's OVS in :class:`RestoreResult`: private or the system's, the daemons ``restore`` started."""

    model_config = ConfigDict(extra="forbid")

    private: bool
    started: list[str] = Field(default_factory=list)


class RestoreResult(BaseModel):
    """What ``harmless restore`` did (``--json`` prints :meth:`model_dump` with ``mode="json"``).

    Attributes:
        restored: the server was rebuilt.
        reason: why not (``nothing deployed``, ``dry run``), else None.
        switches: per switch its :class:`SwitchRestore`.
        ovs: the OVS instance (None, dumped as ``{}``, when nothing is deployed).
        seconds: wall time of the restore (s).
        finished_journal: the interrupted run (``restore``/``qos``) this restore finished, else None.
    """

    model_config = ConfigDict(extra="forbid")

    restored: bool
    reason: str | None = None
    switches: dict[str, SwitchRestore] = Field(default_factory=dict)
    ovs: RestoreOvs | None = None
    seconds: float = 0.0
    finished_journal: str | None = None

    @model_serializer(mode="wrap")
    def _ovs_as_dict(self, handler) -> dict:
        d = handler(self)
        if d["ovs"] is None:
            d["ovs"] = {}
        return d


def restore(progress: Progress = _quiet, wait_controller: float = CONTROLLER_WAIT_S,
            dry_run: bool = False) -> RestoreResult:
    """Rebuild bridges, ports, controllers and translator flows of the deployed plan; never contacts a switch.

    Args:
        progress: one line per step; lines about one switch start with ``<switch>:`` (the unit's journal lines).
        wait_controller: seconds to wait for every br-of's controllers to reconnect (0: do not wait); a controller
            that stays away is reported, not an error.
        dry_run: report what would be rebuilt (missing bridges, translator flows present/expected), change nothing.

    Returns:
        A :class:`RestoreResult`; dumped: ``{"restored": bool, "reason": str|None, "switches": {switch: {"bridge",
        "bridge_was_present": bool, "translator_flows_before": int, "translator_flows": int,
        "translator_flows_expected": int, "ports": int, "held_down": [br-of interface], "controllers": {target: bool
        connected}}}, "ovs": {"private": bool, "started": [daemons started]}, "seconds": float,
        "finished_journal": str|None}`` (a dry run's switches carry only the four keys of the state before).
        ``restored`` False with ``reason`` "nothing deployed" when there is no state (nothing is done, exit 0).

    Raises:
        UnfinishedRunError: an interrupted up/down/recover journal is pending (nothing changed).
        LockedError: another harmless holds the state directory.
        StateError: state.json is corrupt.
        OvsError: OVS is not running (system instance) / could not start, the namespace is missing, the
            transaction or the flow bundle failed, or the result does not verify.
    """
    with st.lock("harmless restore", wait_s=10.0):
        return restore_locked(progress, wait_controller, dry_run)


def restore_locked(progress: Progress = _quiet, wait_controller: float = CONTROLLER_WAIT_S,
                   dry_run: bool = False) -> RestoreResult:
    """:func:`restore` for a caller that already holds the state lock (``harmless recover``)."""
    t0 = time.monotonic()
    finished = _take_unfinished(progress, dry_run)
    s = st.load()
    if not s or not s.plan:
        progress("nothing deployed (no state): nothing to restore")
        return RestoreResult(restored=False, reason="nothing deployed", seconds=_since(t0), finished_journal=finished)
    plan = Plan.from_dict(s.plan)
    ovs = state_ovs(s)
    _check_netns(ovs)
    started = _daemons_to_start(ovs)
    before = _before(ovs, plan)
    for sp in plan.switches:
        b = before[sp.name]
        progress(f"{sp.name}: {sp.bridge} " + ("present" if b.bridge_was_present else "missing")
                 + f", {b.translator_flows_before} of {b.translator_flows_expected} translator flows on br-otc")
    res = RestoreResult(restored=False, reason="dry run", switches=before,
                        ovs=RestoreOvs(private=ovs.private, started=started), finished_journal=finished)
    if not dry_run:
        res.switches = _rebuild(s, ovs, plan, before, started, wait_controller, progress)
        res.restored, res.reason = True, None
    res.seconds = _since(t0)
    return res


def _since(t0: float) -> float:
    return round(time.monotonic() - t0, 2)


def _take_unfinished(progress: Progress, dry_run: bool) -> str | None:
    """Tidy the journal; an unfinished server-only run is taken over (archived, unless ``dry_run``) and described.

    Raises:
        UnfinishedRunError: the unfinished run is not server-only (nothing changed).
    """
    if not dry_run:
        journal.tidy()
    recs = journal.unfinished()
    if not recs or journal.is_finished(recs):
        return None
    if recs[0].get("op") not in SERVER_ONLY_OPS:
        raise UnfinishedRunError("harmless restore", journal.describe(recs) + "; the server was not rebuilt "
                                 "(finishing it restores switch configs)",
                                 "run harmless recover (undo that run) or harmless down, then harmless up")
    finished = journal.describe(recs)
    progress(f"finishing {finished}")
    if not dry_run:
        journal.archive("interrupted")
    return finished


def _daemons_to_start(ovs: Ovs) -> list[str]:
    """The daemons of a private instance that are down (``restore`` starts them).

    Raises:
        OvsError: the system instance is not running (``restore`` does not start it).
    """
    if ovs.private:
        return [d for d, up in (("ovsdb-server", ovs.ovsdb_running()),
                                ("ovs-vswitchd", ovs.vswitchd_running())) if not up]
    if not ovs.ovsdb_running():
        raise OvsError("ovs", "the system Open vSwitch is not running",
                       "start it (systemctl start openvswitch-switch), then run harmless restore")
    return []


def _rebuild(s: DeploymentState, ovs: Ovs, plan: Plan, before: dict[str, SwitchRestore], started: list[str],
             wait_controller: float, progress: Progress) -> dict[str, SwitchRestore]:
    """The journaled rebuild (``restore.begin`` → ``server.build`` → ``server.built`` → ``restore.end``).

    Returns:
        Per switch ``before`` completed with what is there now. Raises OvsError (as :func:`restore`).
    """
    j = journal.Journal("restore", progress)
    j.record("restore.begin", switches=[sp.name for sp in plan.switches])
    j.record("server.build", ovs=ref_record(s.ovs) if s.ovs else None, created_ovs=False,
             bridges=[sp.bridge for sp in plan.switches])
    if started:
        progress(f"{','.join(sp.name for sp in plan.switches)}: starting {' and '.join(started)} of HARMLESS's "
                 f"Open vSwitch in {ovs.base_dir}")
    ovs.start()
    bridges.apply(ovs, plan)
    problems = bridges.verify(ovs, plan)
    if problems:
        raise OvsError("server", "rebuilt but does not verify: " + "; ".join(problems[:3]),
                       "see harmless status and the ovs-vswitchd log")
    j.record("server.built")
    out = _after(ovs, plan, before, wait_controller)
    for sp in plan.switches:
        progress(_rebuilt_line(sp, out[sp.name]))
    j.record("restore.end")
    j.close()
    return out


def _after(ovs: Ovs, plan: Plan, before: dict[str, SwitchRestore], wait_controller: float
           ) -> dict[str, SwitchRestore]:
    """Per switch ``before`` completed with its translator flows, ports, held-down ports and controllers now."""
    held = bridges.held_down(ovs)
    connected = _wait_controllers(ovs, plan, wait_controller)
    present = translator_flows_present(ovs, plan)
    return {sp.name: before[sp.name].model_copy(update={
        "translator_flows": present[sp.name], "ports": len(sp.ports),
        "held_down": sorted(n for n in held if n.startswith(f"{sp.name}-p")),
        "controllers": connected.get(sp.bridge, {})}) for sp in plan.switches}


def _rebuilt_line(sp: SwitchPlan, r: SwitchRestore) -> str:
    """The progress line of one rebuilt switch. Pure."""
    ctl = ", ".join(f"{t} {'connected' if c else 'not connected yet'}"
                    for t, c in r.controllers.items()) or "no controller configured"
    mine = r.held_down
    return (f"{sp.name}: {sp.bridge} rebuilt: {r.ports} ports, {r.translator_flows} of "
            f"{r.translator_flows_expected} translator flows"
            + (f", {len(mine)} held link-down ({', '.join(mine)})" if mine else "") + f"; {ctl}")


def _before(ovs: Ovs, plan: Plan) -> dict[str, SwitchRestore]:
    """Per switch: is its br-of there, how many of its translator flows are on br-otc (nothing is changed)."""
    try:
        present = set(ovs.vsctl("list-br", timeout=10).split()) if ovs.ovsdb_running() else set()
    except OvsError:
        present = set()
    flows = translator_flows_present(ovs, plan) if "br-otc" in present and ovs.vswitchd_running() \
        else {sp.name: 0 for sp in plan.switches}
    expected = expected_translator_flows(plan)
    return {sp.name: SwitchRestore(bridge=sp.bridge, bridge_was_present=sp.bridge in present,
                                   translator_flows_before=flows[sp.name],
                                   translator_flows_expected=len(expected[sp.name])) for sp in plan.switches}


def _wait_controllers(ovs: Ovs, plan: Plan, timeout: float) -> dict[str, dict[str, bool]]:
    """``{bridge: {target: connected}}`` once every br-of with controllers has one connected, or at ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        out = {}
        for sp in plan.switches:
            try:
                ctl = bridges.port_status(ovs, sp)["controllers"]
            except OvsError:
                ctl = []
            out[sp.bridge] = {c["target"]: c["is_connected"] for c in ctl}
        if all(any(v.values()) or not v for v in out.values()) or time.monotonic() >= deadline:
            return out
        time.sleep(0.2)
