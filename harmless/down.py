"""``harmless down`` as a sequence of named steps (:class:`DownRun`), and undoing an interrupted incremental ``up``
(:func:`recover_previous`).

    gather ─► check ─────────► begin ─► restore_switches ──────► remove_server ─► clear_state
              (read-only:      (down.begin) (down.target,        (server.remove,  (state.clear, down.end)
               conflicts stop                device.restore,      server.removed)
               here)                         device.restored)

``down`` works from whatever is there: the state, an unfinished journal of an interrupted ``up``/``down``, and the
backup index's active originals (a lost or corrupt state.json does not lose the originals). HARMLESS owns only what
it wrote (:mod:`harmless.ownership`): each switch gets its original back with the operator's later changes kept, and
a change of the operator to what HARMLESS owns stops ``down`` before anything changes (``--discard-changes``: the
original exactly). ``down --dry-run`` (:meth:`DownRun.preview`) shows all of it and changes nothing.
"""
from __future__ import annotations

from harmless import fleet, journal
from harmless import state as st
from harmless.deployment import connect, ovs_from_ref, ovs_ref, ref_record, state_ovs
from harmless.errors import CommitError, HarmlessError, NothingToDo
from harmless.inventory import Switch
from harmless.otc import bridges
from harmless.ovs import Ovs
from harmless.ownership import DriftConflict, SwitchRevert, plan_down
from harmless.plan import Plan
from harmless.results import DownPreview, DownResult, RecoverResult
from harmless.state import DeploymentState, StateError
from harmless.steps import (Progress, SwitchEvent, error_line, mark_restored_quietly, port_changes_allowed,
                            port_differences, port_states, restore_device, restore_merged)
from harmless.switch_drivers import devdiff
from harmless.switch_drivers.base import SwitchDriver


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
                ("device.revert", "device.commit", "device.restore", "device.restored")]
        if mine[-1]["step"] == "device.restored" and mine[-1].get("ok"):
            continue                       # the interrupted run's rollback already proved it back
        back = next((r.get("rollback_to") or r.get("to") for r in mine if r.get("rollback_to") or r.get("to")), None)
        rec = next((e["record"] for e in reversed(st.backup_index()) if e["switch"] == name and e.get("record")), None)
        if back is None or rec is None:
            raise StateError("harmless down", f"{name} was touched by an interrupted run but no backup of it is "
                             "retained", "restore it from your own backup")
        out[name] = (Switch.model_validate(rec), back)
    return out


def _owned_records(s: DeploymentState | None, targets: dict[str, tuple[Switch, dict]]) -> dict[str, st.Ownership]:
    """What HARMLESS owns on each target switch: the state's record, else the copy kept with the switch's active
    original in the backup index (state.json lost or corrupt). A switch given back to a pre-run backup (an
    interrupted ``up`` without a state) has none: it gets that config exactly."""
    out = {n: o for n, o in (s.owned if s else {}).items() if n in targets}
    for e in st.active_originals():
        name = e["switch"]
        if name in targets and name not in out and e.get("owned") and targets[name][1]["file"] == e["file"]:
            out[name] = st.Ownership.model_validate(e["owned"])
    return out


def _prerun_of(recs: list[dict] | None, name: str, original_file: str) -> dict | None:
    """The pre-run backup of a switch an unfinished incremental ``up`` changed (its ``rollback_to`` that is not the
    original), or None."""
    for r in recs or []:
        if r.get("step") == "down.begin" and (r.get("prerun") or {}).get(name):
            return r["prerun"][name]                   # an interrupted down that was finishing such an up
        if r.get("op") == "up" and r.get("switch") == name and r.get("step") in ("device.revert", "device.commit"):
            back = r.get("rollback_to")
            if back and back.get("file") != original_file:
                return back
    return None


def _server_preview(ovss: list[Ovs], names: list[str]) -> tuple[list[str], list[str]]:
    """What :func:`_remove_server` would remove and stop, read-only: ``(bridges present, private OVS dirs)``."""
    found, stop = [], []
    for ovs in ovss:
        if ovs.ovsdb_running():
            present = set(ovs.vsctl("list-br").split())
            found += sorted(b for b in present if b in names or b == "br-otc" or (ovs.private and
                                                                                  b.startswith("br-of-")))
        if ovs.private and (ovs.ovsdb_running() or ovs.vswitchd_running()):
            stop.append(str(ovs.base_dir))
    return sorted(set(found)), stop


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


def recover_previous(recs: list[dict], s: DeploymentState, progress: Progress) -> RecoverResult:
    """Undo an interrupted incremental ``up``: touched devices to their pre-run config, server to the state's plan."""
    targets = {}
    for r in recs:
        if r.get("step") in ("device.revert", "device.commit"):
            targets.setdefault(r["switch"], r["rollback_to"])
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
            if not restore_device(drv, st.read_backup(entry)):
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
    return RecoverResult(recovered="previous deployment", switches=sorted(targets))


class DownRun:
    """One ``harmless down`` (the caller holds the state lock), or its ``--dry-run`` (:meth:`preview`, no lock needed).

    Args:
        discard: ``--discard-changes``: every switch gets its original exactly, also where the operator changed what
            HARMLESS owns.

    Attributes (set by :meth:`gather`): ``state`` (None when missing or corrupt: ``corrupt`` holds why), ``recs``
    (the unfinished journal, None when finished), ``targets`` (:func:`_down_targets`), ``owned`` (what HARMLESS owns
    per switch, from the state or the backup index), ``prerun`` (the pre-run backup of a switch an interrupted ``up``
    was changing: what is merged instead of the device's config), ``ovss``/``names`` (the OVS instances and bridges
    to remove).
    """

    def __init__(self, progress: Progress, on_switch: SwitchEvent, discard: bool = False):
        self.progress, self.on_switch, self.discard = progress, on_switch, discard
        self.state: DeploymentState | None = None
        self.corrupt: StateError | None = None
        self.recs: list[dict] | None = None
        self.targets: dict[str, tuple[Switch, dict]] = {}
        self.owned: dict[str, st.Ownership] = {}
        self.prerun: dict[str, dict] = {}
        self.sessions: dict[str, SwitchDriver] = {}      # open driver sessions, from check to restore
        self.ovss: list[Ovs] = []
        self.names: list[str] = []
        self.j: journal.Journal | None = None

    def run(self) -> DownResult:
        """Every step in order. Raises as :func:`harmless.orchestrator.down`."""
        try:
            self.gather()
            self.check()
            self.begin()
            result = self.restore_switches()
        finally:
            self.close_sessions()
        self.remove_server(result)
        self.clear_state()
        return result

    def gather(self) -> None:
        """What to give back and remove: the state, the unfinished journal, the retained originals.

        Raises:
            NothingToDo: nothing is deployed (no state, no unfinished run, no retained original, no server left);
                the CLI exits 0 (docs/cli.md: nothing to do is a success).
        """
        journal.tidy()
        recs = journal.unfinished()
        self.recs = None if journal.is_finished(recs) else recs
        try:
            self.state = st.load()
        except StateError as e:
            self.corrupt = e
            self.progress(f"{e.where}: {e.problem}; restoring from the retained original backups")
        self.targets = _down_targets(self.state, self.recs)
        self.owned = _owned_records(self.state, self.targets)
        self.prerun = {n: p for n, (_sw, e) in self.targets.items() if (p := _prerun_of(self.recs, n, e["file"]))}
        self.ovss, self.names = _server_refs(self.state, self.recs)
        server_left = any(o.ovsdb_running() or (o.private and o.vswitchd_running()) for o in self.ovss)
        if not self.targets and not server_left and not self.state and not self.recs and self.corrupt is None:
            raise NothingToDo("harmless down", "nothing is deployed (no state, no unfinished run, no retained "
                              "original), nothing to do")

    # ------------------------------------------------------------------ what each switch gets back (read-only)
    def revert_of(self, name: str, drv: SwitchDriver) -> SwitchRevert:
        """What ``down`` gives back on one switch now (:func:`harmless.ownership.plan_down`; reads the device).

        A switch an interrupted ``up`` was changing is merged from its pre-run backup (the config before that run):
        what that run half-applied is HARMLESS's, not the operator's.

        Raises:
            StateError: a backup is missing or altered; HarmlessError: the config does not parse in its syntax.
        """
        sw, entry = self.targets[name]
        prerun = self.prerun.get(name)
        now = st.read_backup(prerun) if prerun else drv.running_config()
        try:
            return plan_down(name, self.owned.get(name), drv.config_syntax(), st.read_backup(entry), now,
                             entry["file"], self.discard, devdiff.syntax_of(sw.driver, sw.optional_args))
        except ValueError as e:
            raise HarmlessError(name, f"cannot read the running config as objects ({e}), so HARMLESS's own lines "
                                "cannot be told from the operator's", "harmless down --discard-changes restores the "
                                "original exactly (later changes are lost)") from None

    def read_reverts(self, names: set[str] | None = None) -> tuple[dict[str, SwitchRevert], dict[str, str]]:
        """Every target switch's (or those in ``names``) :meth:`revert_of`, in parallel: ``({switch: revert},
        {switch: why unreadable})``."""
        def one(sw: Switch) -> SwitchRevert:
            drv = self.session(sw)
            try:
                return self.revert_of(sw.name, drv)
            except BaseException:
                self.sessions.pop(sw.name, None)
                drv.close()
                raise

        outs = fleet.run_per_switch([t[0] for n, t in self.targets.items() if names is None or n in names], one)
        return ({n: o.value for n, o in outs.items() if o.ok},
                {n: error_line(o.error) for n, o in outs.items() if not o.ok})

    def session(self, sw: Switch) -> SwitchDriver:
        """The open session to ``sw`` (opened now if there is none; :meth:`close_sessions` ends them)."""
        if sw.name not in self.sessions:
            self.sessions[sw.name] = connect(sw, f"{self.state.inventory if self.state else 'state'}: switch "
                                                 f"{sw.name}")
        return self.sessions[sw.name]

    def close_sessions(self) -> None:
        """Close every session :meth:`session` opened."""
        for drv in self.sessions.values():
            drv.close()
        self.sessions.clear()

    def check(self) -> None:
        """Before any change: stop when the operator changed what HARMLESS owns (unless ``discard``).

        Raises:
            DriftConflict: the conflicts of every switch (nothing changed, no journal).
        """
        if not self.targets or not self.owned or self.discard:
            return
        reverts, _unreadable = self.read_reverts(set(self.owned))   # an unreachable one fails later, as before
        bad = [r for r in reverts.values() if r.conflicts]
        if bad:
            raise DriftConflict(bad)

    def preview(self) -> DownPreview:
        """``down --dry-run``: what every switch would get back and what would be removed; changes nothing."""
        self.gather()
        try:
            reverts, unreadable = self.read_reverts() if self.targets else ({}, {})
        finally:
            self.close_sessions()
        bridges, stop = _server_preview(self.ovss, self.names)
        return DownPreview(switches=reverts, unreachable=unreadable, bridges=bridges, stop_ovs=stop,
                           unfinished_journal=journal.describe(self.recs) if self.recs else None,
                           blocked=not self.discard and any(r.conflicts for r in reverts.values()))

    # ------------------------------------------------------------------ the steps that change things
    def begin(self) -> None:
        """Archive an interrupted run's journal; ``down.begin`` (with the pre-run backups of switches an interrupted
        ``up`` was changing, so a killed ``down`` still merges from them)."""
        if self.recs:
            self.progress(f"finishing after {journal.describe(self.recs)}")
            journal.archive("interrupted")
        self.j = journal.Journal("down", self.progress)
        self.j.record("down.begin", switches=sorted(self.targets), bridges=self.names,
                      ovs=next((ref_record(ovs_ref(o, "netdev")) for o in self.ovss if o.private), None),
                      discard_changes=self.discard, prerun=self.prerun)

    def restore_switch(self, sw: Switch) -> tuple[bool, list[str], SwitchRevert, dict]:
        """``down.target`` (when operator changes are kept) → ``device.restore`` → ``device.restored``: config replace
        with the original (or the original + the operator's kept changes), then prove it line by line.

        Returns:
            ``(running config equals the target, ports whose mode/VLANs differ from before up other than by a kept
            change, the revert, the backup entry proven against)``.

        Raises:
            DriftConflict: the operator changed an owned object since the check.
        """
        entry = self.targets[sw.name][1]
        drv = self.session(sw)
        try:
            r = self.revert_of(sw.name, drv)
            if r.conflicts and not self.discard:
                raise DriftConflict([r])
            to = entry if r.equals_original else self.save_target(sw, r, entry)
            self.progress(f"restoring the original config of {sw.name}"
                          + (f" (keeping {len(r.kept)} changes made since up)" if r.kept else ""))
            self.j.record("device.restore", switch=sw.name, to=to)
            same = restore_device(drv, r.target) if r.equals_original else not restore_merged(drv, r.target)
            diffs = self.port_check(sw.name, drv, r)
        finally:
            self.sessions.pop(sw.name, None)
            drv.close()
        self.j.record("device.restored", switch=sw.name, ok=same and not diffs)
        return same, diffs, r, to

    def save_target(self, sw: Switch, r: SwitchRevert, original: dict) -> dict:
        """``down.target``: the config the device will end with (original + kept changes), saved as a backup."""
        to = st.save_backup(sw.name, r.target, role="merged", record=sw.model_dump(mode="json"))
        self.j.record("down.target", switch=sw.name, original=original, target=to,
                      reverted=[c.label for c in r.reverted], kept=[c.label for c in r.kept],
                      discarded=[c.label for c in r.discarded])
        return to

    def port_check(self, name: str, drv: SwitchDriver, r: SwitchRevert) -> list[str]:
        """Ports whose mode/VLANs differ from before the first ``up`` other than as the target says ([] when the
        ports before are not known)."""
        before = self.state.ports_before.get(name) if self.state else None
        if before is None:
            return []
        diffs = port_differences(before, st.jsonable(port_states(drv.facts())))
        allowed = set() if r.equals_original else port_changes_allowed(drv, before, r.target)
        return [d for d in diffs if d not in allowed]

    def restore_switches(self) -> DownResult:
        """Every switch in parallel; each proven back is marked restored in the backup index.

        Raises:
            HarmlessError: a switch could not be restored or proven back (the journal stays unfinished).
        """
        outs = fleet.run_per_switch([t[0] for t in self.targets.values()], self.restore_switch,
                                    on_done=lambda o: self.on_switch(
                                        o.name, "restored" if o.ok and o.value[0] and not o.value[1] else "failed"))
        bad = [n for n, o in outs.items() if not o.ok or not o.value[0] or o.value[1]]
        if bad:
            o = outs[bad[0]]
            if not o.ok:
                raise o.error
            if not o.value[0]:
                raise CommitError(bad[0], "the running config still differs from the original (with the kept "
                                  "changes) after restore", f"compare with {o.value[3]['file']}; run harmless down "
                                  "again")
            raise CommitError(bad[0], "ports are not back in their original mode/VLANs: " + "; ".join(o.value[1][:3]),
                              "run harmless down again or fix these ports by hand")
        for n, (_sw, entry) in self.targets.items():
            to = outs[n].value[3]
            mark_restored_quietly(n, entry["file"], None if to is entry else to["file"])
        restored = {n: bool(o.ok and o.value[0]) for n, o in outs.items()}
        return DownResult(restored=restored, config_restored=all(restored.values()) if restored else False,
                          ports_restored={n: o.value[1] for n, o in outs.items() if o.ok}, server=[],
                          kept={n: [c.label for c in o.value[2].kept] for n, o in outs.items() if o.value[2].kept},
                          discarded={n: [c.label for c in o.value[2].discarded] for n, o in outs.items()
                                     if o.value[2].discarded},
                          proven_against={n: o.value[3]["file"] for n, o in outs.items()})

    def remove_server(self, result: DownResult) -> None:
        """``server.remove`` → ``server.removed``: the bridges removed, HARMLESS's private OVS stopped."""
        self.j.record("server.remove", bridges=self.names)
        result.server = _remove_server(self.ovss, self.names, self.progress)
        self.j.record("server.removed")

    def clear_state(self) -> None:
        """``state.clear`` (a corrupt state file is moved aside) → ``down.end``."""
        self.j.record("state.clear")
        if self.corrupt is not None:
            moved = st.set_aside("corrupt")
            self.progress(f"moved the corrupt state to {moved}")
        else:
            st.clear()
        self.j.record("down.end")
        self.j.close()
