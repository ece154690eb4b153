"""``harmless plan | up | down | recover | status | backups``: the flow of DESIGN.md §3.

    inventory ─► validate ─► read devices ─► plan (pure) ─► apply switch ─► apply server ─► verify ─► state.json
        └───────── every step announced in the write-ahead journal (harmless.journal, fsynced) before it happens ─┘

Guarantees:
  * ``plan`` (and ``up --dry-run``) changes nothing: the candidate is loaded, diffed and discarded.
  * One writer at a time: ``up``/``down``/``recover`` hold the state directory's lock (:func:`harmless.state.lock`).
  * Before the first change the device's running config is saved as its **original** (``state.save_backup``); it
    stays the original until ``down`` proves the device equals it, and a config carrying HARMLESS's VLANs is never
    taken as one.
  * A failure, SIGINT/SIGTERM, or a failed state write at any step rolls back what this run applied (journaled);
    a SIGKILL or power loss leaves an unfinished journal from which ``harmless down`` restores the originals (or
    ``harmless recover`` undoes just that run).
  * ``up`` twice is a no-op on the device (empty diff); after an ovs-vswitchd restart ``up`` rebuilds the bridges and
    flows without committing anything to the switch.
  * ``down`` restores the originals (config replace), checks the running config equals each byte for byte, then
    removes the bridges and stops HARMLESS's private OVS — also when state.json is missing or corrupt.
Progress goes through the ``progress`` callback (the CLI prints it); nothing here prints.
"""
from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from harmless import fleet, journal, linkwatch
from harmless import state as st
from harmless.deployment import connect, connect_deployed, ovs_from_ref, ovs_ref, ref_record, server_ovs, state_ovs
from harmless.errors import CommitError, DeviceError, HarmlessError, InputError, OvsError
from harmless.inventory import Inventory, Switch, load_inventory
from harmless.otc import bridges
from harmless.otc import controllers as controller_side
from harmless.ovs import Ovs
from harmless.plan import Plan, make_plan
from harmless.qos.deploy import check_kernel as qos_check_kernel, overlay as qos_overlay
from harmless.qos.live import finish as qos_live_finish
from harmless.results import PlanResult
from harmless.restore import restore_locked
from harmless.state import DeploymentState, StateError
from harmless.switch_drivers.base import Capabilities, DeviceFacts, SwitchDriver

Progress = Callable[[str], None]
#: ``(switch name, event)``: per-switch milestones for progress bars (``read``, ``migrated``, ``failed``, ...)
SwitchEvent = Callable[[str, str], None]


def _quiet(_msg: str) -> None:
    pass


def _no_event(_switch: str, _event: str) -> None:
    pass


def _check_trunk_interfaces(inv: Inventory, src: str) -> None:
    """Kernel trunk interfaces (auto/system/afxdp) must exist before anything changes."""
    for i, sw in enumerate(inv.switches):
        for j, t in enumerate(sw.trunks):
            if t.type not in ("auto", "system", "afxdp"):
                continue
            ns = inv.server.netns
            if ns and not Path(f"/run/netns/{ns}").exists():
                raise InputError(f"{src}: server.netns", f"no network namespace {ns}",
                                 f"create it (ip netns add {ns}) or remove server.netns")
            argv = ["ip", *(["-n", ns] if ns else []), "link", "show", "dev", t.server_interface]
            if subprocess.run(argv, capture_output=True).returncode != 0:
                raise InputError(f"{src}: switches[{i}].trunks[{j}].server_interface",
                                 f"no interface {t.server_interface} on this server"
                                 + (f" (namespace {ns})" if ns else ""),
                                 "cable the trunk to an existing interface (ip link) and name it here")


def _port_states(facts: DeviceFacts) -> dict[str, dict]:
    """Per-port 802.1Q state as JSON-able dicts (what ``down`` must give back)."""
    return {name: asdict(p) for name, p in sorted(facts.ports.items())}


def port_differences(before: dict[str, dict], after: dict[str, dict]) -> list[str]:
    """Ports whose mode/VLANs differ between two :func:`_port_states` snapshots, as readable lines. Pure."""
    out = []
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        if b == a:
            continue
        if b is None or a is None:
            out.append(f"{name}: {'appeared' if b is None else 'disappeared'}")
            continue
        diffs = [f"{k} {b[k]!r} -> {a[k]!r}" for k in b if b[k] != a.get(k)]
        out.append(f"{name}: " + ", ".join(diffs))
    return out


def compute(inv: Inventory, src: str, progress: Progress = _quiet, keep_open: bool = False,
            tolerate: bool = False, on_switch: SwitchEvent = _no_event, keep_candidate: bool = False
            ) -> tuple[PlanResult, dict[str, SwitchDriver]]:
    """Read every device, plan, render and diff (load + compare + discard), all switches in parallel. Changes nothing.

    Args:
        tolerate: keep going when a switch cannot be read (unreachable, refused): it is left out of the plan and
            reported in ``PlanResult.failed``; otherwise its error is raised.
        keep_open: return the open driver sessions (caller closes them).
        keep_candidate: leave each rendered config loaded as the merge candidate (with ``keep_open``; ``up`` commits
            it without loading it again).
        on_switch: ``(switch, event)`` callback as each switch is read.

    Raises:
        InputError: bad secret reference or a planning conflict (always, nothing changed).
        DeviceError: a switch could not be read and ``tolerate`` is False.
    """
    previous = None
    s = st.load()
    if s and s.plan:
        previous = Plan.from_dict(s.plan)
    # resolve every secret reference before contacting any device
    passwords = {sw.name: sw.password(f"{src}: switches[{i}]") for i, sw in enumerate(inv.switches)}
    where = {sw.name: f"{src}: switches[{i}]" for i, sw in enumerate(inv.switches)}
    drivers: dict[str, SwitchDriver] = {}

    def read(sw: Switch) -> tuple[DeviceFacts, Capabilities]:
        progress(f"connecting to {sw.name} ({sw.driver}) at {sw.host}:{sw.port}")
        drivers[sw.name] = connect(sw, where[sw.name], passwords[sw.name])
        return drivers[sw.name].facts(), drivers[sw.name].capabilities

    try:
        read_out = fleet.run_per_switch(list(inv.switches), read,
                                        on_done=lambda o: on_switch(o.name, "read") if o.ok else None)
        failed = {n: o.error for n, o in read_out.items() if not o.ok}
        if failed and not tolerate:
            raise next(iter(failed.values()))
        facts = {n: o.value[0] for n, o in read_out.items() if o.ok}
        caps = {n: o.value[1] for n, o in read_out.items() if o.ok}
        plan = make_plan(inv, facts, previous, src, caps)

        def diff(sw: Switch) -> tuple[str, str]:
            sp = plan.switch(sw.name)
            drv = drivers[sw.name]
            config = drv.render(sp.access_changes(), sp.trunk_changes())
            progress(f"diffing the tagging config on {sw.name}")
            d = drv.load_merge(config)
            if not keep_candidate:
                drv.discard()
            return config, d

        diff_out = fleet.run_per_switch([sw for sw in inv.switches if sw.name in facts], diff)
        for n, o in diff_out.items():
            if not o.ok:
                if not tolerate or isinstance(o.error, InputError):
                    raise o.error
                failed[n] = o.error
        ok = [sp.name for sp in plan.switches if sp.name not in failed]
        res = PlanResult(plan.only(ok), {n: diff_out[n].value[1] for n in ok}, {n: facts[n] for n in ok},
                         {n: diff_out[n].value[0] for n in ok}, failed=failed)
        return res, drivers
    finally:
        if not keep_open:
            for d in list(drivers.values()):
                d.close()


def plan(inventory_path: str, progress: Progress = _quiet) -> PlanResult:
    """``harmless plan``: the port map and the device diff; nothing changes."""
    inv = load_inventory(inventory_path)
    res, _ = compute(inv, inventory_path, progress)
    return res


def _switch_record(sw: Switch) -> dict:
    """The non-secret part of an inventory switch, enough to reconnect for ``down``."""
    return sw.model_dump(mode="json")


def _error_line(e: BaseException) -> str:
    return str(e) if isinstance(e, HarmlessError) else f"{type(e).__name__}: {e}"


#: how long up/down/recover wait for the state lock before refusing (a watch round holds it for milliseconds)
LOCK_WAIT_S = 3.0

#: VLAN names and descriptions HARMLESS writes start with this (see :func:`harmless.plan.vlan_name`)
HARMLESS_MARK = "harmless-"


def carries_harmless(facts: DeviceFacts) -> list[int]:
    """VIDs of HARMLESS's own VLANs configured on the device (a migrated config is never an "original"). Pure."""
    return sorted(v for v, name in facts.vlans.items() if str(name).startswith(HARMLESS_MARK))


def _refuse_unfinished(where: str) -> None:
    journal.tidy()
    recs = journal.unfinished()
    if recs and not journal.is_finished(recs):
        raise InputError(where, journal.describe(recs),
                         "run harmless recover (undo that run) or harmless down (restore every switch's original "
                         "config and remove the bridges) first")


def up(inventory_path: str, progress: Progress = _quiet, revert_in: int = 300,
       on_switch: SwitchEvent = _no_event, wait_controller: float = 10.0,
       keep_on_no_controller: bool = False) -> dict:
    """``harmless up``: configure the switch(es) in parallel, build the translator and br-of(s), verify, record state.

    Every step is journaled before it happens (:mod:`harmless.journal`); the state directory is locked for the run.
    With several switches a switch that fails (unreachable, commit rejected) is rolled back alone — the device ends in
    its original config — while the others are migrated; the result says which (``failed``). When every switch
    fails, the server side fails, a state write fails, or SIGINT/SIGTERM arrives, everything changed in this run is
    rolled back (each device to the config it had before this run, the server to the previous plan or nothing) and
    the error is raised.

    The first migration of a switch saves its running config as its **original** (never overwritten: a later ``up``
    reuses it until ``down`` proves the device equals it). A running config that already carries HARMLESS's VLANs is
    never taken as an original: ``up`` refuses and points at the retained backup.

    Args:
        inventory_path: the inventory file.
        progress: callback for one-line progress messages (called from worker threads too).
        revert_in: commit-confirm timer (s) on devices that support it; confirmed only after the server side
            is verified.
        on_switch: ``(switch, event)`` callback, events ``read``, ``migrated``, ``unchanged``, ``failed``.
        wait_controller: seconds to wait after verification until every br-of with controllers has one connected
            (0 = do not wait); none → :class:`harmless.otc.controllers.NoControllerError` after rolling back.
        keep_on_no_controller: when the wait times out, keep the deployment (``controllers_missing`` in the result)
            instead of rolling back.

    Returns:
        ``{"plan": ..., "diffs": {switch: diff}, "changed": {switch: bool}, "ovs": {...},
        "results": {switch: {"status": "migrated"|"unchanged"|"failed", "error": str|None}}, "failed": [names],
        "controllers_connected": {bridge: [targets]}, "controllers_missing": str|None}``.

    Raises:
        InputError: bad inventory, unknown interfaces, VID conflicts, unsupported features, an unfinished journal,
            a migrated config without a retained original (nothing changed).
        LockedError: another harmless holds the state directory.
        DeviceError / CommitError: every switch failed (each device back in its original config).
        OvsError: server side failed (devices restored, bridges removed).
        StateWriteError: the state directory is full/read-only (what was applied is rolled back).
        Interrupted: SIGINT/SIGTERM (what was applied is rolled back; exit 130).
    """
    src = inventory_path
    inv = load_inventory(inventory_path)
    _check_trunk_interfaces(inv, src)
    qos_check_kernel(inv, src)               # issue #15: linux-hfsc needs sch_hfsc in this kernel
    controller_side.check_tls(inv, src)      # issue #13: ssl: targets need openflow.tls, one TLS config per OVS
    with st.lock(wait_s=LOCK_WAIT_S), journal.interruptible(progress):
        _refuse_unfinished(src)
        return _up_locked(inv, inventory_path, progress, revert_in, on_switch, wait_controller,
                          keep_on_no_controller)


def _up_locked(inv: Inventory, inventory_path: str, progress: Progress, revert_in: int,
               on_switch: SwitchEvent, wait_controller: float, keep_on_no_controller: bool) -> dict:
    src = inventory_path
    prev_state = st.load()
    if prev_state and Path(prev_state.inventory).resolve() != Path(inventory_path).resolve():
        raise InputError(src, f"another deployment is up (from {prev_state.inventory})",
                         "run harmless down first")
    prev_plan = Plan.from_dict(prev_state.plan) if prev_state and prev_state.plan else None
    res, drivers = compute(inv, src, progress, keep_open=True, tolerate=True, on_switch=on_switch,
                           keep_candidate=True)
    failed: dict[str, BaseException] = dict(res.failed)
    committed: dict[str, bool] = {}
    touched: dict[str, dict] = {}            # switch -> backup entry to roll its device back to
    new_originals: dict[str, dict] = {}      # originals saved by this run (first migrations)
    backups = {n: b.model_dump() for n, b in prev_state.backups.items()} if prev_state else {}
    ports_before = dict(prev_state.ports_before) if prev_state else {}
    records = {s.name: _switch_record(s) for s in inv.switches}
    lock = threading.Lock()
    ovs = None
    created_ovs = False
    effective = prev_plan
    j: journal.Journal | None = None

    def switch_side(sw: Switch) -> bool:
        drv = drivers[sw.name]
        diff = res.diffs[sw.name]
        if sw.name not in backups:
            entry = _original_for(sw, drv, res.facts[sw.name], records[sw.name], progress)
            with lock:
                new_originals[sw.name] = entry
            j.record("backup.saved", switch=sw.name, **entry)
            with lock:
                backups[sw.name] = entry
                ports_before[sw.name] = st.jsonable(_port_states(res.facts[sw.name]))
            rollback_to = entry
        elif diff:
            progress(f"saving the running config of {sw.name} before this change")
            rollback_to = st.save_backup(sw.name, drv.running_config(), role="pre-run", record=records[sw.name])
        if not diff:
            progress(f"{sw.name}: already configured (empty diff), not touching it")
            drv.discard()
            return False
        confirm = drv.capabilities.commit_confirm
        j.record("device.commit", switch=sw.name, rollback_to=rollback_to, diff_lines=len(diff.splitlines()))
        with lock:
            touched[sw.name] = rollback_to
        progress(f"committing {len(diff.splitlines())} diff lines on {sw.name}"
                 + (f" (commit-confirm, reverts in {revert_in} s)" if confirm else ""))
        drv.apply(res.configs[sw.name], revert_in=revert_in if confirm else None, loaded_diff=diff)
        with lock:
            committed[sw.name] = True
        j.record("device.committed", switch=sw.name)
        return True

    journal.check_interrupt("interrupted before any change; nothing was changed")
    try:
        j = journal.Journal("up", progress)
        j.record("up.begin", inventory=str(Path(inventory_path).resolve()),
                 switches=[sw.name for sw in inv.switches], prior_deployed=prev_plan is not None)
        # 1. switch side, every switch in parallel; a failed commit leaves that device in its original config
        todo = [sw for sw in inv.switches if sw.name in res.configs]
        outs = fleet.run_per_switch(todo, switch_side, on_done=lambda o: on_switch(
            o.name, ("migrated" if o.value else "unchanged") if o.ok else "failed"))
        for n, o in outs.items():
            if o.ok:
                committed.setdefault(n, o.value)
            elif isinstance(o.error, (journal.Interrupted, st.StateWriteError)):
                raise o.error
            else:
                failed[n] = o.error
        journal.check_interrupt()
        for n in res.failed:
            on_switch(n, "failed")
        if failed and not any(n in committed for n in outs):
            raise next(iter(failed.values()))
        # switches that failed now but were migrated before keep their previous plan
        keep_prev = [sp for sp in (prev_plan.switches if prev_plan else ()) if sp.name in failed]
        effective = Plan(tuple(sorted([*res.plan.only(committed).switches, *keep_prev],
                                      key=lambda sp: sp.index)))
        effective, qos_live = qos_overlay(effective, prev_state)   # live `harmless qos set` values (docs/qos.md)
        # 2. server side
        progress("building br-otc and the OpenFlow bridge(s)")
        ovs = server_ovs(inv, start=False)
        created_ovs = ovs.private and not ovs.vswitchd_running()
        j.record("server.build", ovs=ref_record(ovs_ref(ovs, inv.server.datapath)), created_ovs=created_ovs,
                 bridges=[sp.bridge for sp in effective.switches])
        ovs.start()
        try:
            for choice in bridges.apply(ovs, effective):     # what each type-auto trunk became, and why
                progress(choice.line())
        except OvsError:
            if ovs.private and ovs.datapath_conflict():
                raise OvsError("server", "another Open vSwitch with a userspace (netdev) datapath already runs in "
                               "this network namespace, so HARMLESS's own cannot open its datapath",
                               "use that one (server.ovs: system) or give HARMLESS its own namespace "
                               "(server.netns)") from None
            raise
        j.record("server.built")
        # 3. verify, then confirm commit-confirm commits
        problems = bridges.verify(ovs, effective)
        if problems:
            raise OvsError("server", "verification failed: " + "; ".join(problems[:3]), "see harmless status")
        # issue #13: wait for a controller on every br-of (NoControllerError rolls back like any OvsError)
        connected, missing = controller_side.wait_after_up(ovs, effective, wait_controller, keep_on_no_controller,
                                                           progress)
        j.record("verified")
        for n, did in committed.items():
            if did and drivers[n].capabilities.commit_confirm:
                j.record("device.confirm", switch=n)
                drivers[n].confirm()
        # legacy links already down show as LINK_DOWN on br-of from the start (never fails up)
        linkwatch.mirror_at_up(ovs, effective, {n: drivers[n] for n in committed}, progress)
        # a switch that failed on its first migration is forgotten: its device is back in its original config
        kept = {sp.name for sp in effective.switches}
        new_state = DeploymentState(
            inventory=str(Path(inventory_path).resolve()), plan=effective.to_dict(),
            backups={n: b for n, b in backups.items() if n in kept},
            ports_before={n: p for n, p in ports_before.items() if n in kept},
            switches={n: r for n, r in records.items() if n in kept},
            ovs=ovs_ref(ovs, inv.server.datapath),
            phase="up", updated=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), qos_live=qos_live,
        )
        j.record("state.save")
        st.save(new_state)
        for n in failed:             # a switch that failed alone: prove it is back as before this run
            if n in touched and n not in kept and not _had_backup(prev_state, n):
                try:
                    if _restore_device(drivers[n], st.read_backup(touched[n])):
                        _mark_restored_quietly(n, touched[n]["file"])
                except HarmlessError as e:
                    progress(f"{n}: could not verify that its original config is back ({e}); harmless down will")
    except BaseException as err:
        if j is None:
            raise
        ok = _rollback_up(j, err, drivers, touched, prev_state, effective, ovs, created_ovs, progress)
        for n, entry in new_originals.items():   # never changed, or proven back: no longer an active original
            if n not in touched or ok:
                _mark_restored_quietly(n, entry["file"])
        if isinstance(err, journal.Interrupted):
            raise journal.Interrupted(
                "harmless up", "interrupted; " + (
                    "rolled back: " + (", ".join(f"{n} is back in the config it had before (verified)"
                                                 for n in touched) or "no switch was changed")
                    + ("; the previous deployment is rebuilt" if prev_plan else "; bridges removed")
                    if ok else "the rollback did not finish"),
                "" if ok else "run harmless down to restore the original configs") from None
        if isinstance(err, HarmlessError) and not isinstance(err, (InputError, CommitError)) and touched:
            err.problem += (" (rolled back: device config restored, bridges removed)" if ok else
                            " (the rollback did not finish: run harmless down)")
        raise
    finally:
        for d in drivers.values():
            d.close()
    j.record("up.end", outcome="up")
    j.close()
    results = {sw.name: {"status": "failed", "error": _error_line(failed[sw.name])} if sw.name in failed else
               {"status": "migrated" if committed.get(sw.name) else "unchanged", "error": None}
               for sw in inv.switches}
    return {"plan": effective.to_dict(), "diffs": res.diffs, "changed": committed, "ovs": ref_record(new_state.ovs),
            "results": results, "failed": sorted(failed),
            "controllers_connected": connected, "controllers_missing": missing}


def _had_backup(prev: DeploymentState | None, switch: str) -> bool:
    """Whether the deployment before this run had an original backup of ``switch`` (it was migrated before)."""
    return prev is not None and switch in prev.backups


def _mark_restored_quietly(switch: str, file: str) -> None:
    try:
        st.mark_restored(switch, file)
    except HarmlessError:
        pass


def _original_for(sw: Switch, drv: SwitchDriver, facts: DeviceFacts, record: dict, progress: Progress) -> dict:
    """The backup entry that is this switch's original: the retained one, or a new one saved now.

    Raises:
        InputError: the device carries HARMLESS's VLANs (a migrated config is never an original): with a retained
            original the fix is ``harmless down``; without one, the VLANs must go by hand first.
    """
    text = drv.running_config()
    ours = carries_harmless(facts)
    kept = st.active_original(sw.name)
    if kept is not None:
        if st.sha256(text) == kept["sha256"]:
            progress(f"{sw.name}: the device equals its retained original backup; keeping it as the original")
            return {"file": kept["file"], "sha256": kept["sha256"]}
        if ours:
            raise InputError(sw.name, f"the device still carries HARMLESS VLANs {ours[:5]} from an earlier migration "
                             f"whose original config is retained in {kept['file']}",
                             "run harmless down (it restores that original), then harmless up")
        progress(f"{sw.name}: the retained backup {kept['file']} no longer matches the device, which carries no "
                 "HARMLESS VLAN; saving its config now as the new original")
        st.mark_superseded(sw.name, kept["file"])
    elif ours:
        raise InputError(sw.name, f"the running config already carries HARMLESS VLANs {ours[:5]} and no original "
                         "backup is retained, so it cannot be saved as the original",
                         "restore the switch from your own backup (or remove the harmless-* VLANs and their ports' "
                         "changes by hand), then harmless up; harmless backups lists what HARMLESS saved")
    progress(f"saving the running config of {sw.name} (the original)")
    return st.save_backup(sw.name, text, role="original", record=record)


def _restore_device(drv: SwitchDriver, target: str) -> bool:
    """Make the device's running config equal ``target`` (reconnecting once if the session is gone); True if equal."""
    try:
        current = drv.running_config()
    except DeviceError:
        drv.reconnect()
        current = drv.running_config()
    if current != target:
        drv.restore(target)
        current = drv.running_config()
    return current == target


def _rollback_up(j: journal.Journal, err: BaseException, drivers: dict[str, SwitchDriver],
                 touched: dict[str, dict], prev_state: DeploymentState | None, new_plan: Plan | None, ovs: Ovs | None,
                 created_ovs: bool, progress: Progress) -> bool:
    """Undo a failed or interrupted ``up``: each touched device back to the config it had before this run, the
    server back to the previous plan (or nothing), the state as before. Journaled; never interrupted.

    Returns:
        True when everything was undone and verified (the journal is then closed); False leaves it unfinished for
        ``harmless down``.
    """
    ok = True
    j.record("rollback.begin", reason=_error_line(err)[:300])
    for name, entry in touched.items():
        progress(f"rolling back {name} to the config it had before this run")
        j.record("device.restore", switch=name, to=entry)
        try:
            same = _restore_device(drivers[name], st.read_backup(entry))
        except HarmlessError as e:
            progress(f"could not restore {name}: {e}")
            same = False
        ok &= same
        j.record("device.restored", switch=name, ok=same)
        if same and not _had_backup(prev_state, name):
            _mark_restored_quietly(name, entry["file"])
    prior_plan = Plan.from_dict(prev_state.plan) if prev_state and prev_state.plan else None
    if ovs is not None:
        try:
            if prior_plan is not None:
                j.record("server.remove", rebuild_previous=True)
                ovs.start()
                bridges.apply(ovs, prior_plan)
            else:
                names = [sp.bridge for sp in (new_plan.switches if new_plan else ())]
                j.record("server.remove", bridges=names, stop_ovs=created_ovs)
                if ovs.private:
                    ovs.start()     # ovs-vswitchd may have died (del-br waits for it)
                if ovs.ovsdb_running():
                    bridges.remove(ovs, names)
                if created_ovs:
                    ovs.stop()
            j.record("server.removed")
        except HarmlessError as e:
            progress(f"could not undo the server side: {e}")
            ok = False
    try:
        j.record("state.clear")
        if prev_state:
            st.save(prev_state)
        else:
            st.clear()
    except HarmlessError as e:
        progress(f"could not restore the state file: {e}")
        ok = False
    if ok:
        j.record("rollback.end")
        j.close()
    return ok


# ----------------------------------------------------------------------------- down / recover
def _down_targets(s: DeploymentState | None, recs: list[dict] | None) -> dict[str, tuple[Switch, dict]]:
    """``{switch: (inventory entry, original backup entry)}`` for every switch ``down`` must give back: the deployed
    ones (state), every switch with an active original in the backup index (state lost or corrupt, or an
    interrupted run), and those an unfinished journal touched."""
    out: dict[str, tuple[Switch, dict]] = {}
    if s:
        for name, rec in s.switches.items():
            if name in s.backups:
                out[name] = (Switch.model_validate(rec), s.backups[name].model_dump())
    for e in st.active_originals():
        if e["switch"] not in out and e.get("record"):
            out[e["switch"]] = (Switch.model_validate(e["record"]), {"file": e["file"], "sha256": e["sha256"]})
    for name in journal.touched_switches(recs or []):
        if name in out:
            continue
        mine = [r for r in recs if r.get("switch") == name and r.get("step") in
                ("device.commit", "device.restore", "device.restored")]
        if mine[-1]["step"] == "device.restored" and mine[-1].get("ok"):
            continue                       # the interrupted run's rollback already proved it back
        back = next((r.get("rollback_to") or r.get("to") for r in mine if r.get("rollback_to") or r.get("to")), None)
        rec = next((e["record"] for e in reversed(st.backup_index()) if e["switch"] == name and e.get("record")), None)
        if back is None or rec is None:
            raise StateError("harmless down", f"{name} was touched by an interrupted run but no backup of it is "
                             "retained", "restore it from your own backup")
        out[name] = (Switch.model_validate(rec), back)
    return out


def _server_refs(s: DeploymentState | None, recs: list[dict] | None) -> tuple[list[Ovs], list[str]]:
    """OVS instances and bridges a deployment or an interrupted run may have built (for ``down``)."""
    refs, names = [], []
    if s and s.ovs:
        refs.append(ref_record(s.ovs))
    if s and s.plan:
        names += [sw["bridge"] for sw in s.plan["switches"]]
    for r in recs or []:
        if r.get("step") in ("server.build", "down.begin") and r.get("ovs"):
            refs.append(r["ovs"])
        names += [b for b in r.get("bridges", []) if isinstance(b, str)]
    # HARMLESS's own private OVS lives in the state directory: always look there too
    refs.append({"private": True, "base_dir": str(st.state_dir() / "ovs"),
                 "netns": next((r.get("netns") for r in refs if r.get("private")), None)})
    uniq, seen = [], set()
    for r in refs:
        key = (bool(r.get("private")), r.get("base_dir"), r.get("netns"))
        if key not in seen:
            seen.add(key)
            uniq.append(ovs_from_ref(r))
    return uniq, sorted(set(names))


def _remove_server(ovss: list[Ovs], names: list[str], progress: Progress) -> list[str]:
    """Remove br-otc and every HARMLESS br-of from each instance; stop private instances. Returns what was done."""
    done = []
    for ovs in ovss:
        if not ovs.ovsdb_running():
            if ovs.private and ovs.vswitchd_running():
                ovs.stop()
                done.append(f"stopped ovs-vswitchd in {ovs.base_dir}")
            continue
        if ovs.private:
            ovs.start()   # vswitchd may have died; del-br waits for it
        present = set(ovs.vsctl("list-br").split())
        ours = [b for b in present if b == "br-otc" or b in names or b.startswith("br-of-")] if ovs.private else \
            [b for b in present if b in names]
        if ours or "br-otc" in present:
            progress(f"removing {', '.join(sorted(set(ours) | ({'br-otc'} & present)))}")
            bridges.remove(ovs, [b for b in ours if b != "br-otc"])
            done.append("bridges removed")
        if ovs.private:
            ovs.stop()
            done.append(f"private Open vSwitch in {ovs.base_dir} stopped")
    return done


def down(progress: Progress = _quiet, on_switch: SwitchEvent = _no_event) -> dict:
    """``harmless down``: give every switch back its original config (in parallel), prove it, remove the bridges.

    Works from whatever is there: the state, an unfinished journal of an interrupted ``up``/``down``, and the backup
    index's active originals (so a lost or corrupt state.json does not lose the originals). For every switch: config
    replace with its original, then check (a) the running config equals the original byte for byte and (b) every
    port has the mode and VLANs it had before ``up`` (when known). Only when every switch passes are the bridges
    removed, HARMLESS's private OVS stopped and the state forgotten (a corrupt state file is moved aside); otherwise
    the journal stays unfinished so ``down`` can be retried, and the error names the switches and ports.

    Returns:
        ``{"restored": {switch: bool}, "config_restored": bool, "ports_restored": {switch: [differences]},
        "server": [what was removed]}`` — ``config_restored`` is True when every device equals its original.

    Raises:
        InputError: nothing is deployed.
        LockedError: another harmless holds the state directory.
        HarmlessError: a device could not be restored (the journal is kept so ``down`` can be retried).
    """
    with st.lock(wait_s=LOCK_WAIT_S), journal.interruptible(progress):
        return _down_locked(progress, on_switch)


def _down_locked(progress: Progress, on_switch: SwitchEvent) -> dict:
    journal.tidy()
    recs = journal.unfinished()
    if journal.is_finished(recs):
        recs = None
    corrupt = None
    try:
        s = st.load()
    except StateError as e:
        s, corrupt = None, e
        progress(f"{e.where}: {e.problem}; restoring from the retained original backups")
    targets = _down_targets(s, recs)
    ovss, names = _server_refs(s, recs)
    server_left = any(o.ovsdb_running() or (o.private and o.vswitchd_running()) for o in ovss)
    if not targets and not server_left and not s and not recs and corrupt is None:
        raise InputError("harmless down", "nothing is deployed (no state, no unfinished run, no retained original)",
                         "run harmless up first")
    if recs:
        progress(f"finishing after {journal.describe(recs)}")
        journal.archive("interrupted")
    j = journal.Journal("down", progress)
    j.record("down.begin", switches=sorted(targets), bridges=names,
             ovs=next((ref_record(ovs_ref(o, "netdev")) for o in ovss if o.private), None))
    ports_before = s.ports_before if s else {}

    def restore(sw: Switch) -> tuple[bool, list[str]]:
        entry = targets[sw.name][1]
        saved = st.read_backup(entry)
        progress(f"restoring the original config of {sw.name}")
        j.record("device.restore", switch=sw.name, to=entry)
        drv = connect(sw, f"{s.inventory if s else 'state'}: switch {sw.name}")
        try:
            same = _restore_device(drv, saved)
            before = ports_before.get(sw.name)
            diffs = port_differences(before, st.jsonable(_port_states(drv.facts()))) if before is not None else []
        finally:
            drv.close()
        j.record("device.restored", switch=sw.name, ok=same and not diffs)
        return same, diffs

    outs = fleet.run_per_switch([t[0] for t in targets.values()], restore, on_done=lambda o: on_switch(
        o.name, "restored" if o.ok and o.value[0] and not o.value[1] else "failed"))
    restored = {n: bool(o.ok and o.value[0]) for n, o in outs.items()}
    ports = {n: o.value[1] for n, o in outs.items() if o.ok}
    bad = [n for n, o in outs.items() if not o.ok or not o.value[0] or o.value[1]]
    if bad:
        n = bad[0]
        o = outs[n]
        if not o.ok:
            raise o.error
        if not o.value[0]:
            raise CommitError(n, "the running config still differs from the original after restore",
                              f"compare with {targets[n][1]['file']}; run harmless down again")
        raise CommitError(n, "ports are not back in their original mode/VLANs: " + "; ".join(o.value[1][:3]),
                          "run harmless down again or fix these ports by hand")
    for n, (_sw, entry) in targets.items():
        _mark_restored_quietly(n, entry["file"])
    j.record("server.remove", bridges=names)
    server = _remove_server(ovss, names, progress)
    j.record("server.removed")
    j.record("state.clear")
    if corrupt is not None:
        moved = st.set_aside("corrupt")
        progress(f"moved the corrupt state to {moved}")
    else:
        st.clear()
    j.record("down.end")
    j.close()
    return {"restored": restored, "config_restored": all(restored.values()) if restored else False,
            "ports_restored": ports, "server": server}


def recover(progress: Progress = _quiet, on_switch: SwitchEvent = _no_event) -> dict:
    """``harmless recover``: finish what an interrupted run left (read from its unfinished journal).

    * an interrupted ``up`` on top of an existing deployment: every switch it touched goes back to the config it had
      before that run (its pre-run backup), the server is rebuilt to the deployed plan, the state stays;
    * an interrupted first ``up``, ``down`` or rollback: the same as :func:`down` (originals back, bridges removed).

    Returns:
        ``{"recovered": "nothing"|"previous deployment"|"down", ...}`` (with :func:`down`'s keys for ``down``).

    Raises:
        LockedError, HarmlessError: as :func:`down`.
    """
    with st.lock(wait_s=LOCK_WAIT_S), journal.interruptible(progress):
        journal.tidy()
        recs = journal.unfinished()
        if journal.is_finished(recs):
            return {"recovered": "nothing"}
        first = recs[0]
        if first.get("op") == "qos":          # an interrupted `harmless qos set/clear`: apply what the state says
            return qos_live_finish(recs, progress).model_dump(mode="json")
        if first.get("op") == "restore":      # an interrupted harmless restore (server only): run it again
            return {"recovered": "restore", **restore_locked(progress).model_dump(mode="json")}
        try:
            s = st.load()
        except StateError:
            s = None
        if first.get("op") == "up" and first.get("prior_deployed") and s and s.plan:
            return _recover_previous(recs, s, progress)
        r = _down_locked(progress, on_switch)
        return {"recovered": "down", **r}


def _recover_previous(recs: list[dict], s: DeploymentState, progress: Progress) -> dict:
    """Undo an interrupted incremental ``up``: touched devices to their pre-run config, server to the state's plan."""
    targets = {}
    for r in recs:
        if r.get("step") == "device.commit":
            targets[r["switch"]] = r["rollback_to"]
    progress(f"undoing {journal.describe(recs)}")
    journal.archive("interrupted")
    j = journal.Journal("recover", progress)
    j.record("recover.begin", switches=sorted(targets))
    for name, entry in targets.items():
        rec = s.switches.get(name) or next((e["record"] for e in st.backup_index() if e["switch"] == name), None)
        sw = Switch.model_validate(rec)
        j.record("device.restore", switch=name, to=entry)
        drv = connect(sw, f"{s.inventory}: switch {name}")
        try:
            if not _restore_device(drv, st.read_backup(entry)):
                raise CommitError(name, "the running config still differs from its pre-run backup after restore",
                                  "run harmless recover again, or harmless down")
        finally:
            drv.close()
        j.record("device.restored", switch=name, ok=True)
    ovs = state_ovs(s)
    j.record("server.remove", rebuild_previous=True)
    ovs.start()
    bridges.apply(ovs, Plan.from_dict(s.plan))
    j.record("server.removed")
    j.record("recover.end")
    j.close()
    return {"recovered": "previous deployment", "switches": sorted(targets)}


def backups() -> list[dict]:
    """``harmless backups``: every saved config (switch, time, SHA-256, role, status), oldest first; the active
    original of each switch is the one ``down`` gives back."""
    return [{k: e.get(k) for k in ("switch", "time", "sha256", "role", "status", "file")} for e in st.backup_index()]


def status(with_device: bool = True) -> dict:
    """``harmless status``: port map, link state, per-port counters, controller connections.

    Returns:
        ``{"deployed": bool, "switches": [{"name", "bridge", "datapath_id", "ports": [{"interface", "ofport",
        "vid", "device_link", "br_of_state", "blocked_by_watch", "rx_packets", "tx_packets", "qos"}],
        "controllers": [...], "trunks": {...}}]}`` (``qos``: the port's QoS or None, docs/qos.md; ``device_link``
        up/down/admin-down/unknown as the device reports it; ``br_of_state``
        the OpenFlow port state a controller sees, e.g. LIVE or LINK_DOWN; ``blocked_by_watch`` whether
        ``harmless watch`` holds the port link-down).
    """
    recs = journal.unfinished()
    pending = None if journal.is_finished(recs) else journal.describe(recs)
    s = st.load()
    if not s or not s.plan:
        return {"deployed": False, "switches": [], "unfinished_journal": pending}
    plan_obj = Plan.from_dict(s.plan)
    ovs = state_ovs(s)
    out = {"deployed": True, "unfinished_journal": pending, "inventory": s.inventory, "ovs_running": ovs.vswitchd_running() if ovs.private
           else ovs.ovsdb_running(), "switches": []}
    for sp in plan_obj.switches:
        links: dict[str, str] = {}
        if with_device and sp.name in s.switches:
            try:
                drv = connect_deployed(s, sp.name)
                try:
                    links = drv.link_states()
                except NotImplementedError:
                    links = {}
                finally:
                    drv.close()
            except HarmlessError as e:
                links = {"error": str(e)}
        try:
            ps = bridges.port_status(ovs, sp)
        except OvsError as e:
            ps = {"ports": {}, "controllers": [], "trunks": {}, "error": str(e)}
        ports = []
        for p in sp.ports:
            c = ps["ports"].get(p.ofport, {})
            ports.append({"interface": p.interface, "ofport": p.ofport, "vid": p.vid,
                          "device_link": links.get(p.interface, "unknown"),
                          "br_of_state": c.get("br_of_state", "unknown"),
                          "blocked_by_watch": c.get("blocked_by_watch", False),
                          "rx_packets": c.get("rx_packets", 0), "tx_packets": c.get("tx_packets", 0),
                          "qos": asdict(p.qos) if p.qos else None})
        out["switches"].append({"name": sp.name, "bridge": sp.bridge, "datapath_id": sp.datapath_id,
                                "ports": ports, "controllers": ps["controllers"], "trunks": ps["trunks"],
                                **({"error": ps["error"]} if "error" in ps else {})})
    return out
