"""``harmless up`` as a sequence of named steps, one method per journal step (:class:`UpRun`).

    step (method)      journal records
    check_reverts      (read-only: what an incremental up gives back; a change by hand to it stops here)
    begin              up.begin
    commit_switches    per switch, in parallel: backup.saved (save_original), device.revert (give back what the
                       inventory no longer asks for, revert_objects), device.commit, device.committed
    plan_server        (the plan to deploy: the switches done now, live QoS re-applied)
    build_server       server.build, server.built
    verify             verified
    confirm            per commit-confirm switch: device.confirm
    mirror_links       (br-of ports of links already down start LINK_DOWN)
    save_state         state.save; then up.end
    rollback           on any failure, SIGINT/SIGTERM or failed state write: rollback.begin, per touched switch
                       device.restore, device.restored, server.remove, server.removed, state.clear, rollback.end

The run's context (the inventory, the plan result, the open driver sessions, the previous state) is fixed when the
run starts; what the parallel switch steps change (which switches were committed, touched, got a new original) lives
in this object behind one lock. The journal records, their order and fields are those :mod:`harmless.journal`
documents (the fault matrix, ``tests/faults``, asserts them).
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

from harmless import fleet, journal, linkwatch
from harmless import state as st
from harmless.deployment import ovs_ref, ref_record, server_ovs
from harmless.errors import CommitError, HarmlessError, InputError, OvsError, report_lines
from harmless.inventory import Inventory, Switch
from harmless.otc import bridges
from harmless.otc import controllers as controller_side
from harmless.ovs import Ovs
from harmless.ownership import DriftConflict, dropped, labels, plan_revert, port_keys, record, revert_conflicts
from harmless.plan import Plan
from harmless.qos.deploy import overlay as qos_overlay
from harmless.results import SwitchUp, UpResult
from harmless.state import DeploymentState
from harmless.steps import (Progress, SwitchEvent, compute, error_line, mark_restored_quietly, original_for,
                            port_states, restore_device, restore_merged)


class UpRun:
    """One ``harmless up`` (the caller holds the state lock and has refused an unfinished journal).

    Args:
        inv: the validated inventory; ``src`` its file.
        progress, on_switch, revert_in, wait_controller, keep_on_no_controller, only: as
            :func:`harmless.orchestrator.up`.
    """

    def __init__(self, inv: Inventory, src: str, progress: Progress, on_switch: SwitchEvent, revert_in: int,
                 wait_controller: float, keep_on_no_controller: bool, only: set[str] | None = None):
        self.inv, self.src, self.progress, self.on_switch = inv, src, progress, on_switch
        self.only = only            # --switch: the switches this run reads and changes (None: every switch)
        self.chosen = [sw for sw in inv.switches if only is None or sw.name in only]
        self.revert_in, self.wait_controller, self.keep_on_no_controller = revert_in, wait_controller, \
            keep_on_no_controller
        self.prev: DeploymentState | None = st.load()
        if self.prev and Path(self.prev.inventory).resolve() != Path(src).resolve():
            raise InputError(src, f"another deployment is up (from {self.prev.inventory})", "run harmless down first")
        self.prev_plan = Plan.from_dict(self.prev.plan) if self.prev and self.prev.plan else None
        self.res, self.drivers = compute(inv, src, progress, keep_open=True, tolerate=True, on_switch=on_switch,
                                         keep_candidate=True, only=only)
        for label, line in report_lines([f for f in self.res.findings if f.severity == "warning"]):
            progress(f"{label}: {line}")            # what plan warned about (a trunk brought up, its load, ...)
        self.records = {**(self.prev.switches if self.prev and only is not None else {}),   # non-secret, to
                        **{s.name: s.model_dump(mode="json") for s in inv.switches}}       # reconnect
        self._lock = threading.Lock()       # guards the five dicts below (the switch steps run in parallel)
        self.failed: dict[str, BaseException] = dict(self.res.failed)
        self.committed: dict[str, bool] = {}
        self.touched: dict[str, dict] = {}          # switch -> backup entry to roll its device back to
        self.new_originals: dict[str, dict] = {}    # originals saved by this run (first migrations)
        self.backups = {n: b.model_dump() for n, b in self.prev.backups.items()} if self.prev else {}
        self.ports_before = dict(self.prev.ports_before) if self.prev else {}
        self.owned: dict[str, st.Ownership] = dict(self.prev.owned) if self.prev else {}   # what HARMLESS wrote
        self.reverts: dict[str, list[str]] = {}     # switch -> owned keys this run gives back (check_reverts)
        self.j: journal.Journal | None = None
        self.ovs: Ovs | None = None
        self.created_ovs = False
        self.effective = self.prev_plan
        self.qos_live: dict = {}
        self.connected: dict[str, list[str]] = {}
        self.missing: str | None = None
        self.state: DeploymentState | None = None

    # ------------------------------------------------------------------ the run
    def run(self) -> UpResult:
        """Every step in order; a failure rolls back what this run applied and raises (see :func:`fail`)."""
        try:
            journal.check_interrupt("interrupted before any change; nothing was changed")
            self.check_reverts()
            try:
                for step in (self.begin, self.commit_switches, self.plan_server, self.build_server, self.verify,
                             self.confirm, self.mirror_links, self.save_state, self.prove_failed_back):
                    step()
            except BaseException as err:
                if self.j is None:
                    raise
                self.fail(err)
        finally:
            for d in self.drivers.values():
                d.close()
        self.j.record("up.end", outcome="up")
        self.j.close()
        return self.result()

    def check_reverts(self) -> None:
        """Before any change: the owned objects each switch's new tagging config no longer addresses (a port removed
        from the inventory, a moved VID or trunk) are given back by this run; one the operator changed stops it.

        Raises:
            DriftConflict: such an object was changed by hand since the last ``up`` (nothing changed).
        """
        bad = []
        for sw in self.inv.switches:
            o = self.owned.get(sw.name)
            if sw.name not in self.res.configs or o is None:
                continue
            config = self.res.configs[sw.name]
            keys = dropped(o, config) + port_keys(o, config, self._shrinking_shared_trunks(sw.name))
            if not keys:
                continue
            self.reverts[sw.name] = keys
            conflict = revert_conflicts(sw.name, o, self.drivers[sw.name].running_config(), keys)
            if conflict:
                bad.append(conflict)
        if bad:
            raise DriftConflict(bad, command="harmless up")

    def _shrinking_shared_trunks(self, name: str) -> list[str]:
        """``shared`` trunks of ``name`` that lose VIDs in this run: a shared trunk's tagging config only adds VIDs
        (the port keeps the operator's), so it is given back first and the tagging config rendered again."""
        if self.prev_plan is None or name not in {sp.name for sp in self.prev_plan.switches}:
            return []
        before = {t.switch_port: set(t.vids) for t in self.prev_plan.switch(name).trunks}
        return [t.switch_port for t in self.res.plan.switch(name).trunks
                if t.shared and before.get(t.switch_port, set()) - set(t.vids)]

    def begin(self) -> None:
        """``up.begin``: the journal of this run."""
        self.j = journal.Journal("up", self.progress)
        self.j.record("up.begin", inventory=str(Path(self.src).resolve()),
                      switches=[sw.name for sw in self.chosen], prior_deployed=self.prev_plan is not None)

    # ------------------------------------------------------------------ 1. switch side, in parallel
    def save_original(self, sw: Switch, changing: bool) -> tuple[dict | None, str | None]:
        """``backup.saved`` on a first migration (the original); a pre-run backup before an incremental change.

        Returns:
            ``(the backup entry to roll the device back to, the running config now)``; ``(None, None)`` when a
            migrated switch is not ``changing``.
        """
        drv = self.drivers[sw.name]
        if sw.name not in self.backups:
            before = drv.running_config()
            entry = original_for(sw, drv, self.res.facts[sw.name], self.records[sw.name], self.progress, before)
            with self._lock:
                self.new_originals[sw.name] = entry
            self.j.record("backup.saved", switch=sw.name, **entry)
            with self._lock:
                self.backups[sw.name] = entry
                self.ports_before[sw.name] = st.jsonable(port_states(self.res.facts[sw.name]))
            return entry, before
        if changing:
            self.progress(f"saving the running config of {sw.name} before this change")
            before = drv.running_config()
            return st.save_backup(sw.name, before, role="pre-run", record=self.records[sw.name]), before
        return None, None

    def commit_switch(self, sw: Switch) -> bool:
        """[``device.revert``] → ``device.commit`` → ``device.committed``: one switch's tagging config (commit-confirm
        where supported), after giving back what the inventory no longer asks for; then what HARMLESS owns there.

        Returns:
            True when committed, False when the device already had it (empty diff, nothing touched).
        """
        drv, diff = self.drivers[sw.name], self.res.diffs[sw.name]
        keys = self.reverts.get(sw.name, [])
        rollback_to, before = self.save_original(sw, bool(diff or keys))
        if not diff and not keys:
            self.progress(f"{sw.name}: already configured (empty diff), not touching it")
            drv.discard()
            self.note_owned(sw, None)
            return False
        if keys:
            self.revert_objects(sw, keys, rollback_to, before)
            self.rerender(sw)
        confirm = drv.capabilities.commit_confirm
        self.j.record("device.commit", switch=sw.name, rollback_to=rollback_to, diff_lines=len(diff.splitlines()))
        with self._lock:
            self.touched[sw.name] = rollback_to
        self.progress(f"committing {len(diff.splitlines())} diff lines on {sw.name}"
                      + (f" (commit-confirm, reverts in {self.revert_in} s)" if confirm else ""))
        drv.apply(self.res.configs[sw.name], revert_in=self.revert_in if confirm else None,
                  loaded_diff=None if keys else diff)
        with self._lock:
            self.committed[sw.name] = True
        self.j.record("device.committed", switch=sw.name)
        self.note_owned(sw, before)
        return True

    def revert_objects(self, sw: Switch, keys: list[str], rollback_to: dict, before: str) -> None:
        """``device.revert``: give the owned objects ``keys`` back (their config before HARMLESS took them), keeping
        everything else as the device has it (the primitive ``down`` uses, on a subset).

        Raises:
            CommitError: one was changed by hand since :meth:`check_reverts`, or the device does not show the result.
        """
        target, m = plan_revert(self.owned[sw.name], before, keys)
        if m.conflicts:
            raise CommitError(sw.name, "changed by hand while this up ran: " + ", ".join(
                labels(self.owned[sw.name], [c.key for c in m.conflicts])), "run harmless up again")
        if not m.replace:
            return
        self.j.record("device.revert", switch=sw.name, rollback_to=rollback_to, keys=m.reverted)
        with self._lock:
            self.touched[sw.name] = rollback_to
        self.progress(f"{sw.name}: giving back {', '.join(labels(self.owned[sw.name], m.reverted))} "
                      "(no longer in the inventory's plan)")
        left = restore_merged(self.drivers[sw.name], target)
        if left:
            raise CommitError(sw.name, "giving back what the inventory no longer asks for did not take: "
                              + ", ".join(left[:3]), "run harmless up again (this run is rolled back)")

    def rerender(self, sw: Switch) -> None:
        """After giving objects back: read the device again and render the tagging config from what it is now (a
        shared trunk's allowed list is its current one + HARMLESS's VIDs; the render's cleanup reads the config)."""
        drv, sp = self.drivers[sw.name], self.res.plan.switch(sw.name)
        drv.facts()
        config = drv.render(sp.access_changes(), sp.trunk_changes())
        with self._lock:
            self.res.configs[sw.name] = config

    def note_owned(self, sw: Switch, before: str | None) -> None:
        """What HARMLESS owns on ``sw`` after this run's commit (``before``: the config before it; None: nothing
        was committed, the record is only made when there is none yet, e.g. after an upgrade)."""
        prev = self.owned.get(sw.name)
        if before is None and prev is not None:
            return
        drv = self.drivers[sw.name]
        after = drv.running_config()
        original = st.read_backup(self.backups[sw.name]) if prev is None and self._had_backup(sw.name) else None
        try:
            rec = record(drv.config_syntax().name, self.res.configs[sw.name], before or after, after, prev, original)
        except (ValueError, KeyError) as e:
            self.progress(f"{sw.name}: cannot read its config as objects ({e}); harmless down will give back the "
                          "original exactly")
            return
        with self._lock:
            self.owned[sw.name] = rec

    def commit_switches(self) -> None:
        """Every switch in parallel; a switch that fails is left in its original config and noted in ``failed``.

        Raises:
            The first switch's error when every switch failed; Interrupted / StateWriteError at once.
        """
        todo = [sw for sw in self.inv.switches if sw.name in self.res.configs]
        outs = fleet.run_per_switch(todo, self.commit_switch, on_done=lambda o: self.on_switch(
            o.name, ("migrated" if o.value else "unchanged") if o.ok else "failed"))
        for n, o in outs.items():
            if o.ok:
                self.committed.setdefault(n, o.value)
            elif isinstance(o.error, (journal.Interrupted, st.StateWriteError)):
                raise o.error
            else:
                self.failed[n] = o.error
        journal.check_interrupt()
        for n in self.res.failed:
            self.on_switch(n, "failed")
        if self.failed and not any(n in self.committed for n in outs):
            raise next(iter(self.failed.values()))

    # ------------------------------------------------------------------ 2. server side
    def plan_server(self) -> None:
        """The plan to deploy: the switches done now, those that failed now but were migrated before keep their
        previous plan, and so do those this run leaves alone (``--switch``); live ``harmless qos set`` values
        re-applied (docs/qos.md)."""
        keep_prev = [sp for sp in (self.prev_plan.switches if self.prev_plan else ())
                     if sp.name in self.failed or (self.only is not None and sp.name not in self.only)]
        effective = Plan(tuple(sorted([*self.res.plan.only(self.committed).switches, *keep_prev],
                                      key=lambda sp: sp.index)))
        self.effective, self.qos_live = qos_overlay(effective, self.prev)

    def build_server(self) -> None:
        """``server.build`` → ``server.built``: br-otc and every br-of (one OVSDB transaction, flows as a bundle)."""
        self.progress("building br-otc and the OpenFlow bridge(s)")
        ovs = self.ovs = server_ovs(self.inv, start=False)
        self.created_ovs = ovs.private and not ovs.vswitchd_running()
        self.j.record("server.build", ovs=ref_record(ovs_ref(ovs, self.inv.server.datapath)),
                      created_ovs=self.created_ovs, bridges=[sp.bridge for sp in self.effective.switches])
        ovs.start()
        try:
            for choice in bridges.apply(ovs, self.effective):     # what each type-auto trunk became, and why
                self.progress(choice.line())
        except OvsError:
            if ovs.private and ovs.datapath_conflict():
                raise OvsError("server", "another Open vSwitch with a userspace (netdev) datapath already runs in "
                               "this network namespace, so HARMLESS's own cannot open its datapath",
                               "use that one (server.ovs: system) or give HARMLESS its own namespace "
                               "(server.netns)") from None
            raise
        self.j.record("server.built")

    def verify(self) -> None:
        """``verified``: the bridges are as planned and (issue #13) a controller is connected on every br-of.

        Raises:
            OvsError: verification failed; NoControllerError: no controller in time (both roll back).
        """
        problems = bridges.verify(self.ovs, self.effective)
        if problems:
            raise OvsError("server", "verification failed: " + "; ".join(problems[:3]), "see harmless status")
        self.connected, self.missing = controller_side.wait_after_up(
            self.ovs, self.effective, self.wait_controller, self.keep_on_no_controller, self.progress)
        self.j.record("verified")

    def confirm(self) -> None:
        """``device.confirm`` per switch committed with commit-confirm (only now that the server verified)."""
        for n, did in self.committed.items():
            if did and self.drivers[n].capabilities.commit_confirm:
                self.j.record("device.confirm", switch=n)
                self.drivers[n].confirm()

    def mirror_links(self) -> None:
        """Legacy links already down show as LINK_DOWN on br-of from the start (never fails ``up``)."""
        linkwatch.mirror_at_up(self.ovs, self.effective, {n: self.drivers[n] for n in self.committed},
                               self.progress)

    # ------------------------------------------------------------------ 3. the state
    def save_state(self) -> None:
        """``state.save``; a switch that failed on its first migration is forgotten (its device is back)."""
        kept = {sp.name for sp in self.effective.switches}
        self.state = DeploymentState(
            inventory=str(Path(self.src).resolve()), plan=self.effective.to_dict(),
            backups={n: b for n, b in self.backups.items() if n in kept},
            ports_before={n: p for n, p in self.ports_before.items() if n in kept},
            switches={n: r for n, r in self.records.items() if n in kept},
            ovs=ovs_ref(self.ovs, self.inv.server.datapath),
            phase="up", updated=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), qos_live=self.qos_live,
            owned={n: o for n, o in self.owned.items() if n in kept})
        self.j.record("state.save")
        for n, o in self.state.owned.items():        # a copy beside the original: down keeps the operator's changes
            st.set_owned(n, self.state.backups[n].file, o.model_dump(mode="json"))   # also without state.json
        st.save(self.state)

    def prove_failed_back(self) -> None:
        """A switch that failed alone on its first migration: prove it is back as before this run."""
        kept = {sp.name for sp in self.effective.switches}
        for n in self.failed:
            if n in self.touched and n not in kept and not self._had_backup(n):
                try:
                    if restore_device(self.drivers[n], st.read_backup(self.touched[n])):
                        mark_restored_quietly(n, self.touched[n]["file"])
                except HarmlessError as e:
                    self.progress(f"{n}: could not verify that its original config is back ({e}); "
                                  "harmless down will")

    def result(self) -> UpResult:
        """What this run did, per switch."""
        results = {sw.name: SwitchUp(status="failed", error=error_line(self.failed[sw.name]))
                   if sw.name in self.failed else
                   SwitchUp(status="migrated" if self.committed.get(sw.name) else "unchanged")
                   for sw in self.chosen}
        return UpResult(plan=self.effective.to_dict(), diffs=self.res.diffs, changed=self.committed,
                        ovs=ref_record(self.state.ovs), results=results, failed=sorted(self.failed),
                        controllers_connected=self.connected, controllers_missing=self.missing)

    def _had_backup(self, switch: str) -> bool:
        """Whether the deployment before this run had an original of ``switch`` (it was migrated before)."""
        return self.prev is not None and switch in self.prev.backups

    # ------------------------------------------------------------------ rollback
    def fail(self, err: BaseException) -> None:
        """Roll back after ``err`` and raise it (an interruption as :class:`harmless.journal.Interrupted` saying
        what was rolled back; another HarmlessError with the rollback's outcome added to its problem)."""
        ok = self.rollback(err)
        for n, entry in self.new_originals.items():   # never changed, or proven back: no longer an active original
            if n not in self.touched or ok:
                mark_restored_quietly(n, entry["file"])
        if isinstance(err, journal.Interrupted):
            raise journal.Interrupted(
                "harmless up", "interrupted; " + (
                    "rolled back: " + (", ".join(f"{n} is back in the config it had before (verified)"
                                                 for n in self.touched) or "no switch was changed")
                    + ("; the previous deployment is rebuilt" if self.prev_plan else "; bridges removed")
                    if ok else "the rollback did not finish"),
                "" if ok else "run harmless down to restore the original configs") from None
        if isinstance(err, HarmlessError) and not isinstance(err, (InputError, CommitError)) and self.touched:
            err.problem += (" (rolled back: device config restored, bridges removed)" if ok else
                            " (the rollback did not finish: run harmless down)")
        raise err

    def rollback(self, err: BaseException) -> bool:
        """Undo a failed or interrupted ``up``: each touched device back to the config it had before this run, the
        server back to the previous plan (or nothing), the state as before. Journaled; never interrupted.

        Returns:
            True when everything was undone and verified (the journal is then closed); False leaves it unfinished
            for ``harmless down``.
        """
        self.j.record("rollback.begin", reason=error_line(err)[:300])
        ok = self._rollback_devices()
        if self.ovs is not None:
            ok &= self._rollback_server()
        ok &= self._rollback_state()
        if ok:
            self.j.record("rollback.end")
            self.j.close()
        return ok

    def _rollback_devices(self) -> bool:
        """``device.restore`` → ``device.restored`` per touched switch; True when every one is proven back."""
        ok = True
        for name, entry in self.touched.items():
            self.progress(f"rolling back {name} to the config it had before this run")
            self.j.record("device.restore", switch=name, to=entry)
            try:
                same = restore_device(self.drivers[name], st.read_backup(entry))
            except HarmlessError as e:
                self.progress(f"could not restore {name}: {e}")
                same = False
            ok &= same
            self.j.record("device.restored", switch=name, ok=same)
            if same and not self._had_backup(name):
                mark_restored_quietly(name, entry["file"])
        return ok

    def _rollback_server(self) -> bool:
        """``server.remove`` → ``server.removed``: the previous plan rebuilt, or this run's bridges removed."""
        ovs = self.ovs
        try:
            if self.prev_plan is not None:
                self.j.record("server.remove", rebuild_previous=True)
                ovs.start()
                bridges.apply(ovs, self.prev_plan)
            else:
                names = [sp.bridge for sp in (self.effective.switches if self.effective else ())]
                self.j.record("server.remove", bridges=names, stop_ovs=self.created_ovs)
                if ovs.private:
                    ovs.start()     # ovs-vswitchd may have died (del-br waits for it)
                if ovs.ovsdb_running():
                    bridges.remove(ovs, names)
                if self.created_ovs:
                    ovs.stop()
            self.j.record("server.removed")
            return True
        except HarmlessError as e:
            self.progress(f"could not undo the server side: {e}")
            return False

    def _rollback_state(self) -> bool:
        """``state.clear``: the state as before this run."""
        try:
            self.j.record("state.clear")
            if self.prev:
                st.save(self.prev)
            else:
                st.clear()
            return True
        except HarmlessError as e:
            self.progress(f"could not restore the state file: {e}")
            return False
