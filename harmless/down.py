"""``harmless down`` as a sequence of named steps (:class:`DownRun`), and undoing an interrupted incremental ``up``
(:func:`recover_previous`).

    gather ─► begin ─► restore_switches ─► remove_server ─► clear_state
              (down.begin) (device.restore,   (server.remove,  (state.clear, down.end)
                            device.restored)   server.removed)

``down`` works from whatever is there: the state, an unfinished journal of an interrupted ``up``/``down``, and the
backup index's active originals (a lost or corrupt state.json does not lose the originals).
"""
from __future__ import annotations

from harmless import fleet, journal
from harmless import state as st
from harmless.deployment import connect, ovs_from_ref, ovs_ref, ref_record, state_ovs
from harmless.errors import CommitError, NothingToDo
from harmless.inventory import Switch
from harmless.otc import bridges
from harmless.ovs import Ovs
from harmless.plan import Plan
from harmless.results import DownResult, RecoverResult
from harmless.state import DeploymentState, StateError
from harmless.steps import (Progress, SwitchEvent, mark_restored_quietly, port_differences, port_states,
                            restore_device)


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


def recover_previous(recs: list[dict], s: DeploymentState, progress: Progress) -> RecoverResult:
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
    """One ``harmless down`` (the caller holds the state lock).

    Attributes (set by :meth:`gather`): ``state`` (None when missing or corrupt: ``corrupt`` holds why), ``recs``
    (the unfinished journal, None when finished), ``targets`` (:func:`_down_targets`), ``ovss``/``names`` (the OVS
    instances and bridges to remove).
    """

    def __init__(self, progress: Progress, on_switch: SwitchEvent):
        self.progress, self.on_switch = progress, on_switch
        self.state: DeploymentState | None = None
        self.corrupt: StateError | None = None
        self.recs: list[dict] | None = None
        self.targets: dict[str, tuple[Switch, dict]] = {}
        self.ovss: list[Ovs] = []
        self.names: list[str] = []
        self.j: journal.Journal | None = None

    def run(self) -> DownResult:
        """Every step in order. Raises as :func:`harmless.orchestrator.down`."""
        self.gather()
        self.begin()
        result = self.restore_switches()
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
        self.ovss, self.names = _server_refs(self.state, self.recs)
        server_left = any(o.ovsdb_running() or (o.private and o.vswitchd_running()) for o in self.ovss)
        if not self.targets and not server_left and not self.state and not self.recs and self.corrupt is None:
            raise NothingToDo("harmless down", "nothing is deployed (no state, no unfinished run, no retained "
                              "original), nothing to do")

    def begin(self) -> None:
        """Archive an interrupted run's journal; ``down.begin``."""
        if self.recs:
            self.progress(f"finishing after {journal.describe(self.recs)}")
            journal.archive("interrupted")
        self.j = journal.Journal("down", self.progress)
        self.j.record("down.begin", switches=sorted(self.targets), bridges=self.names,
                      ovs=next((ref_record(ovs_ref(o, "netdev")) for o in self.ovss if o.private), None))

    def restore_switch(self, sw: Switch) -> tuple[bool, list[str]]:
        """``device.restore`` → ``device.restored``: config replace with the original, then prove it.

        Returns:
            ``(running config equals the original, ports whose mode/VLANs differ from before up)``.
        """
        entry = self.targets[sw.name][1]
        saved = st.read_backup(entry)
        self.progress(f"restoring the original config of {sw.name}")
        self.j.record("device.restore", switch=sw.name, to=entry)
        drv = connect(sw, f"{self.state.inventory if self.state else 'state'}: switch {sw.name}")
        try:
            same = restore_device(drv, saved)
            before = self.state.ports_before.get(sw.name) if self.state else None
            diffs = port_differences(before, st.jsonable(port_states(drv.facts()))) if before is not None else []
        finally:
            drv.close()
        self.j.record("device.restored", switch=sw.name, ok=same and not diffs)
        return same, diffs

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
                raise CommitError(bad[0], "the running config still differs from the original after restore",
                                  f"compare with {self.targets[bad[0]][1]['file']}; run harmless down again")
            raise CommitError(bad[0], "ports are not back in their original mode/VLANs: " + "; ".join(o.value[1][:3]),
                              "run harmless down again or fix these ports by hand")
        for n, (_sw, entry) in self.targets.items():
            mark_restored_quietly(n, entry["file"])
        restored = {n: bool(o.ok and o.value[0]) for n, o in outs.items()}
        return DownResult(restored=restored, config_restored=all(restored.values()) if restored else False,
                          ports_restored={n: o.value[1] for n, o in outs.items() if o.ok}, server=[])

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
