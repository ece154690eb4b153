"""Taking over a switch (fencing the active), and taking the role the device says (converging).

The device's config is the arbiter of who forwards (docs/high-availability.md). A take-over is therefore one commit on
each switch that moves HARMLESS's VLANs to this server's trunk (:meth:`harmless.switch_drivers.base.SwitchDriver.fence`),
after which this server reads the device again and takes the role it says; only then does its br-of connect to the
controllers. Both are journaled (:mod:`harmless.journal`) before they happen:

    failover.begin ─► per switch: fence.commit ─► fence.committed ─► roles.apply ─► roles.applied ─► roles.save ─►
    failover.end
    converge.begin ─► roles.apply ─► roles.applied ─► roles.save ─► converge.end

(all of them run to the end once begun: a SIGINT/SIGTERM is noted, never raised between them, :data:`harmless.journal.
UNDO_STEPS`)

A run killed at any step is finished by :func:`converge` (``harmless recover`` runs it; so does the agent when it
starts): a kill before ``fence.committed`` leaves the VLANs where the device has them, one after it leaves them on
this server's trunk, and either way the roles are read from the device and applied. Nothing is rolled back: a
fencing commit that happened is what the device says, and undoing it would cut the traffic again.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from harmless import fleet, journal
from harmless import state as st
from harmless.deployment import connect_deployed, deployed_switch, state_ovs
from harmless.errors import CommitError, DeviceError, HarmlessError, InputError
from harmless.ha import record
from harmless.ha.plan import Role, device_role, with_roles
from harmless.ha.stage import Staged, Stager
from harmless.inventory import Switch
from harmless.otc import bridges
from harmless.ownership import record as ownership_record
from harmless.otc import controllers as controller_side
from harmless.plan import Plan, SwitchPlan
from harmless.state import DeploymentState
from harmless.steps import update_copies

Progress = Callable[[str], None]


class FailoverError(HarmlessError):
    """A take-over could not be done (nothing deployed, no pair, a fencing commit refused)."""


def _deployed_pair() -> tuple[DeploymentState, Plan]:
    """The deployed state and plan of an active/standby pair. Raises InputError otherwise."""
    s = st.load()
    if not s or not s.plan:
        raise InputError("harmless failover", "nothing is deployed on this server", "run harmless up first")
    plan = Plan.from_dict(s.plan)
    if not any(sp.heartbeat_vid is not None for sp in plan.switches):
        raise InputError("harmless failover", "the deployment has no standby server (no ha: in its inventory)",
                         "add ha: to the inventory (docs/high-availability.md) and run harmless up")
    return s, plan


def still_migrated(sp: SwitchPlan, ports: dict, canonical) -> bool:
    """Every migrated access port of ``sp`` is on its own HARMLESS VLAN on the device (``ports``: its per-port
    state). A take-over must never migrate a switch again that a ``down`` gave back. Pure."""
    by_name = {canonical(n): p for n, p in ports.items()}
    return all((p := by_name.get(canonical(pp.interface))) is not None and p.access_vid == pp.vid for pp in sp.ports)


def read_role(s: DeploymentState, sp: SwitchPlan) -> Role:
    """This server's role for one switch, read from the device now (:func:`harmless.ha.plan.device_role`).

    Raises:
        DeviceError: the switch cannot be reached or read.
    """
    drv = connect_deployed(s, sp.name)
    try:
        return device_role(sp, drv.port_states(), deployed_switch(s, sp.name).canonical)
    finally:
        drv.close()


def read_roles(s: DeploymentState, plan: Plan) -> dict[str, Role | str]:
    """Every HA switch's role read from its device in parallel; ``error: <line>`` for one that cannot be read."""
    sws = [deployed_switch(s, sp.name) for sp in plan.switches if sp.heartbeat_vid is not None]
    outs = fleet.run_per_switch(sws, lambda sw: read_role(s, plan.switch(sw.name)))
    return {n: o.value if o.ok else f"error: {o.error}" for n, o in outs.items()}


def _apply_roles(s: DeploymentState, plan: Plan, roles: dict[str, str], j: journal.Journal,
                 progress: Progress, on_controllers: Callable[[], None] = lambda: None,
                 owned: dict[str, st.Ownership] | None = None) -> Plan:
    """This server's bridges and state as the ``roles`` say (journaled ``roles.apply`` … ``roles.save``);
    ``on_controllers`` is called just before the controller targets are set; ``owned``: what HARMLESS owns on the
    switches a fencing commit just changed (saved with the state, and beside each original)."""
    flips = {n: r == "standby" for n, r in roles.items() if r in ("active", "standby")}
    new = with_roles(plan, flips)
    ovs = state_ovs(s)
    j.record("roles.apply", roles=roles)
    on_controllers()
    if ovs.vswitchd_running():
        bridges.set_controllers(ovs, new)        # the controllers first: what a take-over waits for
    ovs.start()
    bridges.apply(ovs, new)                      # then everything else as the plan says (idempotent)
    j.record("roles.applied")
    if new != plan or owned:
        j.record("roles.save")
        for n, o in (owned or {}).items():
            if n in s.backups:
                st.set_owned(n, s.backups[n].file, o.model_dump(mode="json"))
        st.save(s.model_copy(update={"plan": new.to_dict(), "updated": record.now_iso(),
                                     "owned": {**s.owned, **(owned or {})}}))
        progress("roles now: " + ", ".join(f"{n} {'standby' if sp.standby else 'active'}"
                                          for n, sp in ((sp.name, sp) for sp in new.switches)))
    return new


def _pair_names(plan: Plan) -> tuple[str, str]:
    """``(this server, the other)`` as the plan names them."""
    sp = next(sp for sp in plan.switches if sp.heartbeat_vid is not None)
    return sp.server or "?", sp.peer or "?"


def _write_roles(plan: Plan, roles: dict[str, str], failover: record.Failover | None = None) -> None:
    """``ha.json``: the roles read now (and the failover, when one happened)."""
    me, peer = _pair_names(plan)
    rec = record.load() or record.HaRecord(server=me, peer=peer)
    rec.roles.update({n: r for n, r in roles.items() if not r.startswith("error")})
    rec.read_at = record.now_iso()
    if failover is not None:
        rec.last_failover = failover
    record.save(rec)


def _archive_interrupted(progress: Progress) -> None:
    """An unfinished take-over or role change before this one is finished by this one (it reads the devices):
    archive its journal. Anything else unfinished (an ``up``, a ``down``) waits for ``harmless recover``.

    Raises:
        InputError: an unfinished journal of another command.
    """
    journal.tidy()
    recs = journal.unfinished()
    if not recs or journal.is_finished(recs):
        return
    if recs[0].get("op") not in ("failover", "converge"):
        raise InputError("harmless failover", journal.describe(recs),
                         "run harmless recover first (it finishes or undoes that run)")
    progress(f"finishing {journal.describe(recs)}")
    journal.archive("interrupted")


def converge(progress: Progress = lambda m: None, roles: dict[str, str] | None = None) -> dict[str, str]:
    """Take the role the device says for every switch (the caller holds the state lock): read each device (unless
    ``roles`` are given, e.g. just read after a fencing commit), then this server's br-of connects to the
    controllers where it is active and to none where it is standby. Journaled (``converge.*``).

    Returns:
        Per switch its role (``active``/``standby``/``neither``/``both``, or ``error: ...``).

    Raises:
        InputError: nothing deployed, or no pair.
    """
    s, plan = _deployed_pair()
    roles = roles if roles is not None else read_roles(s, plan)
    for n, r in roles.items():
        if r in ("neither", "both"):
            progress(f"{n}: the device's config says {r} of the two trunks carries HARMLESS's VLANs"
                     + (" (a loop: fix the trunks by hand or run harmless failover)" if r == "both" else
                        " (no server forwards: run harmless failover on the server that should)"))
    _archive_interrupted(progress)
    j = journal.Journal("converge", progress)
    j.record("converge.begin", roles=roles)
    _apply_roles(s, plan, roles, j, progress)
    _write_roles(plan, roles)
    j.record("converge.end")
    j.close()
    return roles


@dataclass
class FailoverResult:
    """What :func:`failover` did: per switch ``moved``/``already active``/``failed: ...``, the roles read after, and
    the record written to ``ha.json`` (its time split)."""

    switches: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    record: record.Failover | None = None
    dry_run: bool = False

    def to_dict(self) -> dict:
        return {"switches": self.switches, "roles": self.roles, "dry_run": self.dry_run,
                "failover": self.record.model_dump(mode="json") if self.record else None}


def _fence_one(s: DeploymentState, sp: SwitchPlan, j: journal.Journal, progress: Progress,
               staged: Staged | None = None) -> tuple[str, str, st.Ownership | None]:
    """``fence.commit`` → ``fence.committed`` for one switch; returns ``(outcome, role read after, what HARMLESS
    owns there now or None)``. With a
    ``staged`` take-over (:mod:`harmless.ha.stage`) its session and loaded candidate are used; one that fails before
    the commit is dropped and the switch is fenced the long way."""
    sw: Switch = deployed_switch(s, sp.name)
    step = {"committing": False, "previous": s.owned.get(sp.name)}
    if staged is not None:
        try:
            return _fence_with(staged.drv, sw, sp, j, progress, staged.diff, step) + (step.get("owned"),)
        except DeviceError as e:
            if step["committing"]:                  # the commit itself failed: apply() says what the device has
                raise
            progress(f"{sp.name}: the staged candidate cannot be used ({e.problem}); loading it again")
        finally:
            staged.drv.close()
    drv = connect_deployed(s, sp.name)
    try:
        return _fence_with(drv, sw, sp, j, progress, None, step) + (step.get("owned"),)
    finally:
        drv.close()


def _fence_with(drv, sw: Switch, sp: SwitchPlan, j: journal.Journal, progress: Progress,
                staged_diff: str | None, step: dict) -> tuple[str, str]:
    """One switch's fencing on an open session (see :func:`_fence_one`); ``step["committing"]`` is set once the
    commit began."""
    ports = drv.port_states()
    before = device_role(sp, ports, sw.canonical)
    if before == "active":
        return "already active", before
    if not still_migrated(sp, ports, sw.canonical):
        raise FailoverError(sp.name, "its access ports are not on their HARMLESS VLANs any more (the switch was "
                            "given back by a down, or changed by hand): not taking it over",
                            "run harmless down on this server to forget the deployment, or harmless up")
    active = replace(sp, standby=False)
    j.record("fence.commit", switch=sp.name, role_before=before, trunk=[t.switch_port for t in sp.trunks],
             staged=staged_diff is not None)
    progress(f"{sp.name}: moving HARMLESS's VLANs to this server's trunk "
             f"{', '.join(t.switch_port for t in sp.trunks)} (one commit{', staged' if staged_diff else ''})")
    step["committing"] = True
    drv.fence(active.access_changes(), active.trunk_changes(), staged_diff=staged_diff)
    now = drv.running_config()
    after = device_role(sp, drv.ports_of(now), sw.canonical)
    j.record("fence.committed", switch=sp.name, role_after=after)
    if after != "active":
        raise CommitError(sp.name, f"after the fencing commit the device's config says {after}, not this "
                          "server's trunk", "check the trunks' allowed VLANs on the switch")
    step["owned"] = _owned_after(drv, active, step.get("previous"), now)
    return "moved", after


def _owned_after(drv, active: SwitchPlan, previous: st.Ownership | None, now: str) -> st.Ownership | None:
    """What HARMLESS owns on the switch after a fencing commit (:func:`harmless.ownership.record`: the trunks' lines
    as HARMLESS left them now), None when its config cannot be read as objects (``down`` then gives back the
    original exactly)."""
    if previous is None:
        return None
    try:
        candidate = drv.render(active.access_changes(), active.trunk_changes())
        return ownership_record(drv.config_syntax().name, candidate, drv.last_saved_config or now, now, previous)
    except (ValueError, KeyError):
        return None


def _update_copies(s: DeploymentState, owned: dict[str, st.Ownership], j: journal.Journal,
                   progress: Progress) -> None:
    """``original.update`` for each switch a fencing commit moved: the record of what HARMLESS owns there now is
    rewritten next to the copies of its original (the switch's file store, ``originals.directory``;
    :func:`harmless.steps.update_copies`), so a ``down -i`` from a fresh machine keeps the operator's changes as a
    ``down`` here does. Never fails the take-over: a copy that cannot be reached is reported."""
    for n, o in owned.items():
        ref = s.backups.get(n)
        if ref is None or not st.copies_of(n, ref.file):
            continue
        try:
            drv = connect_deployed(s, n) if any(c.get("kind") == "switch" for c in st.copies_of(n, ref.file)) \
                else None
        except HarmlessError as e:
            progress(f"{n}: the copy of its original on the switch keeps the record from before the take-over ({e})")
            drv = None
        try:
            update_copies(j, n, drv, {"file": ref.file, "sha256": ref.sha256}, o.model_dump(mode="json"), progress)
        finally:
            if drv is not None:
                drv.close()


def failover(progress: Progress = lambda m: None, only: set[str] | None = None, by: str = "operator",
             reason: str = "harmless failover", detect_ms: float | None = None,
             wait_controller: float = 10.0, on_committed: Callable[[list[str]], None] = lambda names: None,
             stager: Stager | None = None) -> FailoverResult:
    """Make this server the active one of its switches (the caller holds the state lock): fence the peer on each
    switch where this server is standby, read the device, connect br-of to the controllers. See the module doc.

    Args:
        only: just these switches (default: every switch of the pair).
        by / reason / detect_ms: for the record (``agent`` with the decision's reason and detection time).
        wait_controller: seconds to wait for a controller on every br-of afterwards (for ``controller_ms``; 0:
            do not wait).
        on_committed: called with the switches moved, right after the fencing commits (the agent tells the
            other server then, so it drops its controllers while this one connects).
        stager: the agent's staged take-overs (:class:`harmless.ha.stage.Stager`), used where they fit.

    Raises:
        InputError: nothing deployed, no pair, an unknown switch in ``only``.
        FailoverError: every fencing commit failed (the VLANs stay where they were).
    """
    s, plan = _deployed_pair()
    names = [sp.name for sp in plan.switches if sp.heartbeat_vid is not None and (only is None or sp.name in only)]
    if only and set(only) - set(names):
        raise InputError("harmless failover --switch", f"{sorted(set(only) - set(names))[0]} is not a switch of the "
                         "pair", f"use one of: {', '.join(sp.name for sp in plan.switches)}")
    t0 = time.time()
    _archive_interrupted(progress)
    j = journal.Journal("failover", progress)
    me, peer = _pair_names(plan)
    j.record("failover.begin", switches=names, by=by, reason=reason)
    sws = [deployed_switch(s, n) for n in names]
    staged = {n: stager.take(plan.switch(n)) for n in names} if stager is not None else {}
    outs = fleet.run_per_switch(sws, lambda sw: _fence_one(s, plan.switch(sw.name), j, progress,
                                                           staged.get(sw.name)))
    t_commit = time.time()
    res = FailoverResult(switches={n: o.value[0] if o.ok else f"failed: {o.error}" for n, o in outs.items()})
    res.roles = {n: o.value[1] for n, o in outs.items() if o.ok}
    on_committed([n for n, v in res.switches.items() if v == "moved"])
    mark: list[float] = []
    owned = {n: o.value[2] for n, o in outs.items() if o.ok and o.value[2] is not None}
    new = _apply_roles(s, plan, res.roles, j, progress, lambda: mark.append(time.time()), owned)
    t_active = mark[0] if mark else time.time()
    t_ctl = _controller_at(state_ovs(s), new, wait_controller, t_active)
    _update_copies(s, owned, j, progress)          # after traffic resumed: never in the loss window
    j.record("failover.end", switches=res.switches)
    j.close()
    ms = (lambda a, b: round((b - a) * 1000, 1) if a is not None and b is not None else None)
    res.record = record.Failover(
        time=record.now_iso(), by=by, switches=[n for n, v in res.switches.items() if v == "moved"],
        from_server=peer, to_server=me, reason=reason, detect_ms=detect_ms, commit_ms=ms(t0, t_commit),
        activate_ms=ms(t_commit, t_active), controller_ms=ms(t_active, t_ctl),
        outcome="done" if all(o.ok for o in outs.values()) else "failed: " + "; ".join(
            v for v in res.switches.values() if v.startswith("failed")),
        decided_at=t0, committed_at=t_commit, activated_at=t_active, controller_at=t_ctl)
    _write_roles(new, res.roles, res.record)
    if outs and not any(o.ok for o in outs.values()):
        raise FailoverError("harmless failover", res.record.outcome, "the VLANs stay where they were; check the "
                            "switch and run harmless failover again")
    return res


def _controller_at(ovs, plan: Plan, timeout: float, since: float) -> float | None:
    """When (epoch s) every active br-of had a controller connection logged by ovs-vswitchd at or after ``since``
    (:func:`harmless.otc.controllers.connected_since`); None when not within ``timeout`` s or nothing to wait for."""
    todo = [sp.bridge for sp in plan.switches if sp.live_controllers]
    end = time.monotonic() + timeout
    while todo and timeout > 0:
        seen = [controller_side.connected_since(ovs, br, since - 0.05) for br in todo]
        if all(t is not None for t in seen):
            return max(seen)
        if time.monotonic() > end:
            return None
        time.sleep(0.02)
    return None


def preview(only: set[str] | None = None) -> FailoverResult:
    """``harmless failover --dry-run``: every switch's role read from its device, and what a take-over would do
    there (read only: no lock, no journal, nothing changed).

    Raises:
        InputError: nothing deployed, no pair.
    """
    s, plan = _deployed_pair()
    todo = Plan(tuple(sp for sp in plan.switches if only is None or sp.name in only))
    roles = read_roles(s, todo)
    res = FailoverResult(roles=roles, dry_run=True)
    for sp in todo.switches:
        if sp.heartbeat_vid is None:
            continue
        r = roles.get(sp.name, "")
        if r == "active":
            res.switches[sp.name] = "already active"
        elif r.startswith("error"):
            res.switches[sp.name] = f"cannot tell ({r})"
        else:
            lines = "; ".join(f"{t.interface} carries {','.join(map(str, t.vids))}"
                              for t in replace(sp, standby=False).trunk_changes())
            res.switches[sp.name] = f"would move the VLANs in one commit: {lines}"
    return res
