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

from harmless import journal
from harmless import state as st
from harmless.deployment import ref_record, state_ovs
from harmless.errors import HarmlessError, OvsError
from harmless.health import expected_translator_flows, translator_flows_present
from harmless.otc import bridges
from harmless.ovs import Ovs
from harmless.plan import Plan

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


def restore(progress: Progress = _quiet, wait_controller: float = CONTROLLER_WAIT_S, dry_run: bool = False) -> dict:
    """Rebuild bridges, ports, controllers and translator flows of the deployed plan; never contacts a switch.

    Args:
        progress: one line per step; lines about one switch start with ``<switch>:`` (the unit's journal lines).
        wait_controller: seconds to wait for every br-of's controllers to reconnect (0: do not wait); a controller
            that stays away is reported, not an error.
        dry_run: report what would be rebuilt (missing bridges, translator flows present/expected), change nothing.

    Returns:
        ``{"restored": bool, "reason": str|None, "switches": {switch: {"bridge", "bridge_was_present": bool,
        "translator_flows_before": int, "translator_flows": int, "translator_flows_expected": int,
        "ports": int, "held_down": [br-of interface], "controllers": {target: bool connected}}},
        "ovs": {"private": bool, "started": [daemons started]}, "seconds": float,
        "finished_journal": str|None}``.
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
                   dry_run: bool = False) -> dict:
    """:func:`restore` for a caller that already holds the state lock (``harmless recover``)."""
    t0 = time.monotonic()
    if not dry_run:
        journal.tidy()
    recs = journal.unfinished()
    finished = None
    if recs and not journal.is_finished(recs):
        if recs[0].get("op") not in SERVER_ONLY_OPS:
            raise UnfinishedRunError("harmless restore", journal.describe(recs) + "; the server was not rebuilt "
                                     "(finishing it restores switch configs)",
                                     "run harmless recover (undo that run) or harmless down, then harmless up")
        finished = journal.describe(recs)
        progress(f"finishing {finished}")
        if not dry_run:
            journal.archive("interrupted")
    s = st.load()
    if not s or not s.plan:
        progress("nothing deployed (no state): nothing to restore")
        return {"restored": False, "reason": "nothing deployed", "switches": {}, "ovs": {},
                "seconds": round(time.monotonic() - t0, 2), "finished_journal": finished}
    plan = Plan.from_dict(s.plan)
    ovs = state_ovs(s)
    _check_netns(ovs)
    started = []
    if ovs.private:
        started = [d for d, up in (("ovsdb-server", ovs.ovsdb_running()),
                                   ("ovs-vswitchd", ovs.vswitchd_running())) if not up]
    elif not ovs.ovsdb_running():
        raise OvsError("ovs", "the system Open vSwitch is not running",
                       "start it (systemctl start openvswitch-switch), then run harmless restore")
    before = _before(ovs, plan)
    for sp in plan.switches:
        b = before[sp.name]
        progress(f"{sp.name}: {sp.bridge} " + ("present" if b["bridge_was_present"] else "missing")
                 + f", {b['translator_flows_before']} of {b['translator_flows_expected']} translator flows on "
                 f"br-otc")
    if dry_run:
        return {"restored": False, "reason": "dry run", "switches": before,
                "ovs": {"private": ovs.private, "started": started},
                "seconds": round(time.monotonic() - t0, 2), "finished_journal": finished}
    j = journal.Journal("restore", progress)
    j.record("restore.begin", switches=[sp.name for sp in plan.switches])
    j.record("server.build", ovs=ref_record(s.ovs) if s.ovs else None, created_ovs=False, bridges=[sp.bridge for sp in plan.switches])
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
    held = bridges.held_down(ovs)
    connected = _wait_controllers(ovs, plan, wait_controller)
    out = {}
    present = translator_flows_present(ovs, plan)
    for sp in plan.switches:
        flows = present[sp.name]
        mine = sorted(n for n in held if n.startswith(f"{sp.name}-p"))
        out[sp.name] = {**before[sp.name], "translator_flows": flows, "ports": len(sp.ports),
                        "held_down": mine, "controllers": connected.get(sp.bridge, {})}
        ctl = ", ".join(f"{t} {'connected' if c else 'not connected yet'}"
                        for t, c in out[sp.name]["controllers"].items()) or "no controller configured"
        progress(f"{sp.name}: {sp.bridge} rebuilt: {len(sp.ports)} ports, {flows} of "
                 f"{before[sp.name]['translator_flows_expected']} translator flows"
                 + (f", {len(mine)} held link-down ({', '.join(mine)})" if mine else "") + f"; {ctl}")
    j.record("restore.end")
    j.close()
    return {"restored": True, "reason": None, "switches": out, "ovs": {"private": ovs.private, "started": started},
            "seconds": round(time.monotonic() - t0, 2), "finished_journal": finished}


def _before(ovs: Ovs, plan: Plan) -> dict[str, dict]:
    """Per switch: is its br-of there, how many of its translator flows are on br-otc (nothing is changed)."""
    try:
        present = set(ovs.vsctl("list-br", timeout=10).split()) if ovs.ovsdb_running() else set()
    except OvsError:
        present = set()
    flows = translator_flows_present(ovs, plan) if "br-otc" in present and ovs.vswitchd_running() \
        else {sp.name: 0 for sp in plan.switches}
    expected = expected_translator_flows(plan)
    return {sp.name: {"bridge": sp.bridge, "bridge_was_present": sp.bridge in present,
                      "translator_flows_before": flows[sp.name],
                      "translator_flows_expected": len(expected[sp.name])} for sp in plan.switches}


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
