"""``harmless plan | up | down | recover | status | backups``: the flow of DESIGN.md §3.

    inventory ─► validate ─► read devices ─► plan (pure) ─► apply switch ─► apply server ─► verify ─► state.json
        └───────── every step announced in the write-ahead journal (harmless.journal, fsynced) before it happens ─┘

Guarantees:
  * ``plan`` (and ``up --dry-run``) changes nothing: the candidate is loaded, diffed and discarded.
  * One writer at a time: ``up``/``down``/``recover`` hold the state directory's lock (:func:`harmless.state.lock`).
  * Before the first change the device's running config is saved as its **original** (``state.save_backup``); it
    stays the original until ``down`` proves the device equals it, and a config carrying HARMLESS's VLANs is never
    taken as one.
  * A failure, SIGINT/SIGTERM/SIGHUP, or a failed state write at any step rolls back what this run applied (journaled);
    a SIGKILL or power loss leaves an unfinished journal from which ``harmless down`` restores the originals (or
    ``harmless recover`` undoes just that run).
  * ``up`` twice is a no-op on the device (empty diff); after an ovs-vswitchd restart ``up`` rebuilds the bridges and
    flows without committing anything to the switch.
  * ``down`` gives back the originals with the operator's later changes kept (config replace; HARMLESS owns only
    what it wrote, :mod:`harmless.ownership`), checks the running config equals each line by line (byte for byte
    when nothing is kept), then removes the bridges and stops HARMLESS's private OVS — also when state.json is
    missing or corrupt. A change of the operator to what HARMLESS owns stops it before anything changes.
Progress goes through the ``progress`` callback (the CLI prints it); nothing here prints.

This module is the one entry point the CLI, the labs and the tests call; the steps live below it:
:mod:`harmless.steps` (reading every device into a plan, the device steps up/down/recover share),
:mod:`harmless.up` (:class:`~harmless.up.UpRun`, one method per journal step), :mod:`harmless.down`
(:class:`~harmless.down.DownRun`), :mod:`harmless.status`. Results are typed (:mod:`harmless.results`).
"""
from __future__ import annotations

import os

from harmless import journal, originals
from harmless import state as st
from harmless.down import DownRun, recover_previous
from harmless.errors import HarmlessError, InputError, NothingToDo, Refused, did_you_mean, raise_refusals
from harmless.ha.failover import converge as ha_converge
from harmless.ha.plan import SERVER_ENV, local_inventory, this_server
from harmless.inventory import Inventory, load_inventory
from harmless.otc import controllers as controller_side
from harmless.otc import reach
from harmless.qos.deploy import check_kernel as qos_check_kernel
from harmless.portmod import finish as portmod_finish
from harmless.qos.live import finish as qos_live_finish
from harmless.restore import restore_locked
from harmless.results import DownPreview, DownResult, PlanResult, RecoverResult, StatusReport, UpResult
from harmless.state import StateError
from harmless.status import status as _status
from harmless.steps import (LOCK_WAIT_S, Progress, SwitchEvent, check_trunk_interfaces, compute, no_event, quiet,
                            refuse_unfinished)
from harmless.up import UpRun

__all__ = ["backups", "compute", "down", "down_preview", "plan", "recover", "recover_preview", "status", "up"]


def plan(inventory_path: str, progress: Progress = quiet, only: set[str] | None = None) -> PlanResult:
    """``harmless plan``: the port map, every finding of every switch and the device diff; nothing changes.

    The controllers are checked too (:func:`harmless.otc.reach.check_controllers`); an unreachable one is a
    warning here (``up`` refuses it unless ``--no-wait``).

    ``only`` (``--switch``): plan just these switches of the inventory; the others are not contacted. With an ``ha``
    pair the plan is this server's (``$HARMLESS_HA_SERVER``; on another machine the first of ``ha.servers``) as the
    active one.

    Raises:
        Refused: every refusal of every switch (an InputError), with the warnings and notes.
        InputError: bad inventory, secret or plan; DeviceError: a switch cannot be read.
    """
    inv = load_inventory(inventory_path)
    me = this_server(inv, inventory_path) if inv.ha and os.environ.get(SERVER_ENV) else (
        inv.ha.servers[0].name if inv.ha else None)
    inv = local_inventory(inv, me)
    try:
        res, _ = compute(inv, inventory_path, progress, only=only, me=me)
    except Refused as e:
        raise Refused([*e.findings, *_plan_controllers(inv, inventory_path, progress, only)[1]]) from None
    res.controllers, found = _plan_controllers(inv, inventory_path, progress, only)
    res.findings = [*res.findings, *found]
    return res


def _plan_controllers(inv, src: str, progress: Progress, only: set[str] | None = None) -> tuple[list, list]:
    """``plan``'s controller check: :func:`harmless.otc.reach.check_controllers` with its refusals as warnings."""
    progress("checking the controllers from the server")
    checks, found = reach.check_controllers(inv, src, only=only)
    return checks, [f.model_copy(update={"severity": "warning", "problem": f.problem + "; up refuses this (unless "
                                         "--no-wait)"}) if f.severity == "refusal" else f for f in found]


def check_controllers_before_up(inv, src: str, progress: Progress, wait_controller: float,
                                keep_on_no_controller: bool, only: set[str] | None = None) -> None:
    """``up``'s controller check, before any device is touched: refuse when some br-of has no reachable
    controller within ``wait_controller`` seconds (:func:`harmless.otc.reach.check_controllers`). Skipped with
    ``--no-wait``; only reported with ``--keep-on-no-controller`` (the user asked to migrate without one).

    Raises:
        Refused: the unreachable controllers, their reasons and the fix (nothing was touched).
    """
    if wait_controller <= 0:
        return
    for i, sw in enumerate(inv.switches):   # bad input first: a secret reference that does not resolve
        if only is None or sw.name in only:
            sw.password(f"{src}: switches[{i}]")
    progress("checking the controllers from the server before touching any switch")
    _checks, found = reach.check_controllers(inv, src, wait_s=wait_controller, progress=progress, only=only)
    for f in found:
        if f.severity != "refusal" or keep_on_no_controller:
            progress(f"{'note' if f.severity == 'note' else 'warning'}: {f.line()}")
    if not keep_on_no_controller:
        raise_refusals(found)


def _checks_before_contact(inv: Inventory, src: str, progress: Progress, wait_controller: float,
                           keep_on_no_controller: bool, only: set[str] | None) -> None:
    """What ``up`` checks on this server before any device is contacted (each raises InputError/Refused): the
    off-box copies' directory (issue #23), the kernel's HFSC for linux-hfsc QoS (#15), TLS of ssl: targets (#13),
    a reachable controller per br-of (#25)."""
    originals.check_directory(inv.originals, f"{src}: originals")
    qos_check_kernel(inv, src)
    controller_side.check_tls(inv, src)
    check_controllers_before_up(inv, src, progress, wait_controller, keep_on_no_controller, only)


def up(inventory_path: str, progress: Progress = quiet, revert_in: int | None = None,
       on_switch: SwitchEvent = no_event, wait_controller: float = 10.0,
       keep_on_no_controller: bool = False, only: set[str] | None = None, server: str | None = None,
       no_standby: bool = False) -> UpResult:
    """``harmless up``: configure the switch(es) in parallel, build the translator and br-of(s), verify, record state.

    Every step is journaled before it happens (:mod:`harmless.journal`); the state directory is locked for the run.
    With several switches a switch that fails (unreachable, commit rejected) is rolled back alone — the device ends in
    its original config — while the others are migrated; the result says which (``failed``). When every switch
    fails, the server side fails, a state write fails, or SIGINT/SIGTERM/SIGHUP arrives, everything changed in this run
    is rolled back (each device to the config it had before this run, the server to the previous plan or nothing) and
    the error is raised.

    The first migration of a switch saves its running config as its **original** (never overwritten: a later ``up``
    reuses it until ``down`` proves the device equals it). A running config that already carries HARMLESS's VLANs is
    never taken as an original: ``up`` refuses and points at the retained backup.

    Args:
        inventory_path: the inventory file.
        progress: callback for one-line progress messages (called from worker threads too).
        revert_in: commit-confirm timer (s); confirmed only after the server side is verified. None (the default):
            300 s on devices that support commit-confirm, a plain commit (said through ``progress`` and in the
            result's ``commit_confirm``) on those that do not. Given explicitly, it is a requirement: a device that
            would be committed without commit-confirm is refused (InputError) before anything changes.
        on_switch: ``(switch, event)`` callback, events ``read``, ``migrated``, ``unchanged``, ``failed``.
        wait_controller: seconds to wait after verification until every br-of with controllers has one connected
            (0 = do not wait); none → :class:`harmless.otc.controllers.NoControllerError` after rolling back.
        keep_on_no_controller: when the wait times out, keep the deployment (``controllers_missing`` in the result)
            instead of rolling back.
        only: ``--switch``: read, change and report just these switches of the inventory; every other switch of
            the deployment keeps its deployed plan (its device is not contacted), one not deployed stays so.
        server: with an ``ha`` pair, this server's name (default ``$HARMLESS_HA_SERVER``); it becomes the active
            one (docs/high-availability.md). Its state is replicated to the standby before ``up`` returns: a standby
            that does not store it fails the run (rolled back) unless ``no_standby``.

    Returns:
        :class:`harmless.results.UpResult` (``--json``: ``{"plan", "diffs", "changed", "ovs", "results": {switch:
        {"status": "migrated"|"unchanged"|"given back"|"failed", "error"}}, "failed", "controllers_connected",
        "controllers_missing"}``).

    Raises:
        Refused: (an InputError) every refusal of every switch at once, or no reachable controller of some br-of
            (checked before any device is touched, unless ``wait_controller`` is 0 or ``keep_on_no_controller``).
        InputError: bad inventory, an unfinished journal, a migrated config without a retained original (nothing
            changed).
        LockedError: another harmless holds the state directory.
        DeviceError / CommitError: every switch failed (each device back in its original config).
        OvsError: server side failed (devices restored, bridges removed).
        StateWriteError: the state directory is full/read-only (what was applied is rolled back).
        Interrupted: SIGINT/SIGTERM/SIGHUP (what was applied is rolled back; exit 130).
        Any of these with exit code :data:`harmless.errors.EXIT_UNFINISHED` when the rollback did not finish (the
        journal is left for ``harmless down``).
    """
    src = inventory_path
    me, inv = _this_server(load_inventory(inventory_path), src, server)
    _checks_before_contact(inv, src, progress, wait_controller, keep_on_no_controller, only)
    with st.lock(wait_s=LOCK_WAIT_S), journal.interruptible(progress):
        refuse_unfinished(src)
        return UpRun(inv, src, progress, on_switch, revert_in, wait_controller, keep_on_no_controller,
                     only, me=me, no_standby=no_standby).run()


def _this_server(inv, src: str, server: str | None):
    """``(this server's name or None, the inventory as it plans and builds it)``: with ``ha`` its own netns and trunk
    first (:func:`harmless.ha.plan.local_inventory`); its own trunk interfaces must exist. Raises InputError."""
    me = this_server(inv, src, server)
    check_trunk_interfaces(local_inventory(inv, me, own_trunks_only=True), src)
    return me, local_inventory(inv, me)


def down(progress: Progress = quiet, on_switch: SwitchEvent = no_event, discard_changes: bool = False,
         inventory_path: str | None = None) -> DownResult:
    """``harmless down``: give every switch back its original config with the operator's later changes kept (in
    parallel), prove it, remove the bridges.

    With ``inventory_path`` (``down -i``), also every switch of that inventory this machine does not know (a fresh
    machine, the state directory lost): a migrated one gets back the original found in its copies (the switch's own
    file store, ``originals.directory``; :mod:`harmless.originals`) once its SHA-256 verifies; a copy that does not
    verify stops ``down`` before anything changes. Once a switch is proven back, its copies are removed.

    Works from whatever is there: the state, an unfinished journal of an interrupted ``up``/``down``, and the backup
    index's active originals (so a lost or corrupt state.json does not lose the originals). HARMLESS owns only what it
    wrote (:mod:`harmless.ownership`): each device gets a config replace with its original + every change the operator
    made since ``up`` to what HARMLESS does not own (a new VLAN, a description, an unmigrated port, an ACL); without
    such changes that is the original byte for byte. Then it checks (a) the running config equals that target line by
    line and (b) every port has the mode and VLANs it had before ``up`` (when known) unless a kept change says
    otherwise. Only when every switch passes are the bridges removed, HARMLESS's private OVS stopped and the state
    forgotten (a corrupt state file is moved aside); otherwise the journal stays unfinished so ``down`` can be retried,
    and the error names the switches and ports.

    Args:
        discard_changes: give every switch its original exactly, also where the operator changed what HARMLESS owns
            (the operator's later changes are lost).

    Returns:
        :class:`harmless.results.DownResult` (``restored`` per switch, ``config_restored`` True when every device
        equals its target, ``ports_restored``, ``server``: what was removed, ``kept``/``discarded``: the operator's
        changes, ``proven_against``: the backup each device was proven equal to).

    Raises:
        NothingToDo: nothing is deployed (the CLI exits 0).
        DriftConflict: the operator changed what HARMLESS owns (a migrated port, a HARMLESS VLAN, a trunk); nothing was
            changed (exit code 5; the conflicting lines are in its ``reverts``).
        LockedError: another harmless holds the state directory.
        InputError: the inventory is invalid; CopyError: a copy of an original is refused (nothing changed).
        HarmlessError: a device could not be restored (the journal is kept so ``down`` can be retried).
    """
    inv = load_inventory(inventory_path) if inventory_path else None
    with st.lock(wait_s=LOCK_WAIT_S), journal.interruptible(progress):
        return DownRun(progress, on_switch, discard=discard_changes, inv=inv).run()


def down_preview(progress: Progress = quiet, discard_changes: bool = False,
                 inventory_path: str | None = None, only: str | None = None) -> DownPreview:
    """``harmless down --dry-run``: per switch what ``down`` would give back (objects reverted, the operator's changes
    kept or discarded, conflicts, the diff) and per server the bridges it would remove. Reads the devices; changes
    nothing and takes no lock.

    With ``inventory_path`` (``down -i --dry-run``) also the switches that ``down -i`` would give back from the copies
    of their originals (each copy verified; a refused copy raises CopyError as ``down -i`` would).

    With ``only`` (``down --switch NAME --dry-run``) just that switch and its br-of (the others stay deployed).

    Raises:
        NothingToDo: nothing is deployed (the CLI exits 0). InputError: ``only`` is not a switch of several deployed.
    """
    inv = load_inventory(inventory_path) if inventory_path else None
    if only is None:
        return DownRun(progress, no_event, discard=discard_changes, inv=inv).preview()
    bridge = next(sp["bridge"] for sp in _deployed_switch(only).plan["switches"] if sp["name"] == only)
    p = DownRun(progress, no_event, discard=discard_changes, inv=inv).preview()
    mine = {k: v for k, v in p.switches.items() if k == only}
    return p.model_copy(update={"switches": mine, "unreachable": {k: v for k, v in p.unreachable.items() if k == only},
                                "bridges": [b for b in p.bridges if b == bridge], "stop_ovs": [],
                                "blocked": any(r.conflicts for r in mine.values())})


def _deployed_switch(name: str) -> st.DeploymentState:
    """The deployment, checked to have switch ``name`` among others. Raises NothingToDo (nothing deployed) or
    InputError (no such switch, with a did-you-mean; the only switch: plain ``down``)."""
    s = _state_or_none()
    if s is None or not s.plan:
        raise NothingToDo("harmless down --switch", "nothing is deployed", "")
    names = [sp["name"] for sp in s.plan["switches"]]
    if name not in names:
        raise InputError("harmless down --switch", f"no deployed switch named {name!r}" + did_you_mean(name, names),
                         f"use one of: {', '.join(names)}")
    if len(names) == 1:
        raise InputError("harmless down --switch", f"{name} is the only switch of the deployment",
                         "run harmless down (it gives the switch back and removes the bridges and the translator)")
    return s


def down_switch(name: str, progress: Progress = quiet, on_switch: SwitchEvent = no_event) -> DownResult:
    """``harmless down --switch NAME``: give one switch of a deployment back and leave the others migrated.

    It is the ``up`` of the deployment's inventory without that switch (:class:`harmless.up.UpRun`): the switch gets
    its original config with the operator's later changes kept (``device.revert`` with ``removed: true``, proven
    equal; a change by hand to what HARMLESS owns stops it, exit 5, nothing changed), its br-of and its translator
    ports are removed, the state forgets it; every other switch is read, not changed, and its br-of stays up (its
    controllers are not waited for). An interruption is undone by ``harmless recover`` like any ``up``.

    Returns:
        :class:`harmless.results.DownResult` for that switch (``server``: its br-of).

    Raises:
        NothingToDo: nothing deployed. InputError: no such deployed switch, or it is the only one.
        HarmlessError: the switch could not be given back (it stays migrated; the error says why); as :func:`up`.
    """
    s = _deployed_switch(name)
    bridge = next(sp["bridge"] for sp in s.plan["switches"] if sp["name"] == name)
    me, inv = _this_server(load_inventory(s.inventory), s.inventory, None)
    rest = inv.model_copy(update={"switches": [sw for sw in inv.switches if sw.name != name]})
    with st.lock(wait_s=LOCK_WAIT_S), journal.interruptible(progress):
        refuse_unfinished(s.inventory)
        run = UpRun(rest, s.inventory, progress, on_switch, None, 0, True, None, me=me)
        res = run.run()
    if res.results[name].status != "given back":
        raise HarmlessError(name, res.results[name].error or "it could not be given back; it stays migrated",
                            f"run harmless down --switch {name} again")
    r = run.giveback[name]
    return DownResult(restored={name: True}, config_restored=True, ports_restored={name: []}, server=[bridge],
                      kept={name: [c.label for c in r.kept]} if r.kept else {},
                      proven_against={name: run.given_back[name]["file"]})


def recover(progress: Progress = quiet, on_switch: SwitchEvent = no_event) -> RecoverResult:
    """``harmless recover``: finish what an interrupted run left (read from its unfinished journal).

    * an interrupted ``up`` on top of an existing deployment: every switch it touched goes back to the config it had
      before that run (its pre-run backup), the server is rebuilt to the deployed plan, the state stays;
    * an interrupted first ``up``, ``down`` or rollback: the same as :func:`down` (originals back, bridges removed).

    Returns:
        :class:`harmless.results.RecoverResult` (dumps as ``{"recovered": "nothing"|"qos"|"restore"|"portmod"|"previous
        deployment"|"down", ...}``, with :func:`down`'s keys for ``down``).

    Raises:
        LockedError, HarmlessError: as :func:`down`.
    """
    with st.lock(wait_s=LOCK_WAIT_S), journal.interruptible(progress):
        journal.tidy()
        recs = journal.unfinished()
        s = _state_or_none()
        kind = _recover_kind(recs, s)
        if kind == "nothing":
            return RecoverResult(recovered="nothing")
        if kind == "qos":                     # an interrupted `harmless qos set/clear`: apply what the state says
            details = qos_live_finish(recs, progress).model_dump(mode="json")
            return RecoverResult(recovered="qos", details={k: v for k, v in details.items() if k != "recovered"})
        if kind == "portmod":                 # a legacy port shut/enabled for a port-mod: make it what the state says
            return RecoverResult(recovered="portmod", details=portmod_finish(recs, progress))
        if kind == "restore":                 # an interrupted harmless restore (server only): run it again
            return RecoverResult(recovered="restore", details=restore_locked(progress).model_dump(mode="json"))
        if kind == "previous deployment":
            return recover_previous(recs, s, progress)
        if kind == "roles":                   # an interrupted take-over: take the roles the devices say
            return RecoverResult(recovered="roles", details={"roles": ha_converge(progress)})
        return RecoverResult(recovered="down", down=DownRun(progress, on_switch).run())


def _state_or_none():
    try:
        return st.load()
    except StateError:
        return None


def _recover_kind(recs: list[dict] | None, s) -> str:
    """What :func:`recover` does for the journal records ``recs`` and the state ``s`` (a ``RecoverResult.recovered``
    value): ``nothing`` (no unfinished run), ``qos``, ``restore``, ``portmod``, ``previous deployment`` (an
    interrupted ``up`` on top of a deployment), ``roles`` (an interrupted take-over or role change of an
    active/standby pair) or ``down``."""
    if journal.is_finished(recs):
        return "nothing"
    first = recs[0]
    if first.get("op") in ("qos", "restore", "portmod"):
        return first["op"]
    if first.get("op") in ("failover", "converge") and s and s.plan:
        return "roles"
    if first.get("op") == "up" and first.get("prior_deployed") and s and s.plan:
        return "previous deployment"
    return "down"


def recover_preview() -> RecoverResult:
    """``harmless recover --dry-run``: what :func:`recover` would do, read only (no lock, nothing archived, no device
    or OVS contacted).

    Returns:
        :class:`harmless.results.RecoverResult` with ``recovered`` the kind it would do, ``switches`` the switches
        whose device the interrupted run may have changed, ``details`` ``{"dry_run": True, "journal": <one line
        about the interrupted run>}``.
    """
    recs = journal.unfinished()
    kind = _recover_kind(recs, _state_or_none())
    if kind == "nothing":
        return RecoverResult(recovered="nothing", details={"dry_run": True})
    return RecoverResult(recovered=kind, switches=journal.touched_switches(recs),
                         details={"dry_run": True, "journal": journal.describe(recs)})


def backups() -> list[dict]:
    """``harmless backups``: every saved config (switch, time, SHA-256, role, status), oldest first; the active
    original of each switch is the one ``down`` gives back."""
    return [{k: e.get(k) for k in ("switch", "time", "sha256", "role", "status", "file")} for e in st.backup_index()]


def status(with_device: bool = True, only: str | None = None) -> StatusReport:
    """``harmless status``: port map, link state, per-port counters, controller connections
    (:func:`harmless.status.status`; ``only``: just that switch)."""
    return _status(with_device, only)
