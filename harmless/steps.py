"""The device steps ``up``, ``down`` and ``recover`` share, and reading every device into a plan (``compute``).

Layer: commands (below :mod:`harmless.up`, :mod:`harmless.down`, :mod:`harmless.status` and the entry points in
:mod:`harmless.orchestrator`). Nothing here prints: progress goes through the ``progress`` callback.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable

from harmless import fleet, journal, procs
from harmless import state as st
from harmless.deployment import connect
from harmless.errors import DeviceError, HarmlessError, InputError
from harmless.inventory import Inventory, Switch
from harmless.ownership import dropped, labels, unproven
from harmless.plan import Plan, device_change, plan_with_findings
from harmless.results import PlanResult
from harmless.switch_drivers.base import Capabilities, DeviceFacts, SwitchDriver

Progress = Callable[[str], None]
#: ``(switch name, event)``: per-switch milestones for progress bars (``read``, ``migrated``, ``failed``, ...)
SwitchEvent = Callable[[str, str], None]

#: how long up/down/recover wait for the state lock before refusing (a watch round holds it for milliseconds)
LOCK_WAIT_S = 3.0

#: VLAN names and descriptions HARMLESS writes start with this (see :func:`harmless.plan.vlan_name`)
HARMLESS_MARK = "harmless-"


def quiet(_msg: str) -> None:
    """A ``progress`` callback that says nothing."""


def no_event(_switch: str, _event: str) -> None:
    """A ``on_switch`` callback that ignores every event."""


def error_line(e: BaseException) -> str:
    """One line for an error: a HarmlessError as it prints, anything else with its type."""
    return str(e) if isinstance(e, HarmlessError) else f"{type(e).__name__}: {e}"


def carries_harmless(facts: DeviceFacts) -> list[int]:
    """VIDs of HARMLESS's own VLANs configured on the device (a migrated config is never an "original"). Pure."""
    return sorted(v for v, name in facts.vlans.items() if str(name).startswith(HARMLESS_MARK))


def refuse_unfinished(where: str) -> None:
    """Raise InputError when an unfinished journal of another run waits for ``recover``/``down``."""
    journal.tidy()
    recs = journal.unfinished()
    if recs and not journal.is_finished(recs):
        raise InputError(where, journal.describe(recs),
                         "run harmless recover (undo that run) or harmless down (restore every switch's original "
                         "config and remove the bridges) first")


def mark_restored_quietly(switch: str, file: str, kept: str | None = None) -> None:
    """:func:`harmless.state.mark_restored`, ignoring a failed write (the next ``down`` proves it again)."""
    try:
        st.mark_restored(switch, file, kept)
    except HarmlessError:
        pass


def check_trunk_interfaces(inv: Inventory, src: str) -> None:
    """Kernel trunk interfaces (auto/system/afxdp) must exist before anything changes. Raises InputError."""
    ns = inv.server.netns
    for i, sw in enumerate(inv.switches):
        for j, t in enumerate(sw.trunks):
            if t.type not in ("auto", "system", "afxdp"):
                continue
            if ns and not Path(f"/run/netns/{ns}").exists():
                raise InputError(f"{src}: server.netns", f"no network namespace {ns}",
                                 f"create it (ip netns add {ns}) or remove server.netns")
            argv = ["ip", *(["-n", ns] if ns else []), "link", "show", "dev", t.server_interface]
            if procs.run(argv, check=False).returncode != 0:
                raise InputError(f"{src}: switches[{i}].trunks[{j}].server_interface",
                                 f"no interface {t.server_interface} on this server"
                                 + (f" (namespace {ns})" if ns else ""),
                                 "cable the trunk to an existing interface (ip link) and name it here")


def port_states(facts: DeviceFacts) -> dict[str, dict]:
    """Per-port 802.1Q state as JSON-able dicts (what ``down`` must give back)."""
    return {name: asdict(p) for name, p in sorted(facts.ports.items())}


def port_differences(before: dict[str, dict], after: dict[str, dict]) -> list[str]:
    """Ports whose mode/VLANs differ between two :func:`port_states` snapshots, as readable lines. Pure."""
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


def original_for(sw: Switch, drv: SwitchDriver, facts: DeviceFacts, record: dict, progress: Progress,
                 text: str | None = None) -> dict:
    """The backup entry that is this switch's original: the retained one, or a new one saved now (``text``: the
    running config just read, else it is read here).

    Raises:
        InputError: the device carries HARMLESS's VLANs (a migrated config is never an original): with a retained
            original the fix is ``harmless down``; without one, the VLANs must go by hand first.
    """
    text = drv.running_config() if text is None else text
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


def restore_device(drv: SwitchDriver, target: str) -> bool:
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


def restore_merged(drv: SwitchDriver, target: str) -> list[str]:
    """Make the device's config equal ``target`` object by object (a merged config: the device prints it in its own
    order), reconnecting once if the session is gone; returns the objects still differing ([] = proven line by line).
    """
    syntax = drv.config_syntax()
    try:
        current = drv.running_config()
    except DeviceError:
        drv.reconnect()
        current = drv.running_config()
    if unproven(syntax, target, current):
        drv.restore(target)
        current = drv.running_config()
    return unproven(syntax, target, current)


def port_changes_allowed(drv: SwitchDriver, before: dict[str, dict], target: str) -> set[str]:
    """The port differences from ``before`` (:func:`port_differences` lines) that a target config carries (the
    operator's kept changes); empty when the driver cannot parse ports from text."""
    try:
        ports = drv.ports_of(target)
    except NotImplementedError:
        return set()
    return set(port_differences(before, st.jsonable({n: asdict(p) for n, p in sorted(ports.items())})))


def _read_devices(inv: Inventory, src: str, progress: Progress, on_switch: SwitchEvent,
                  drivers: dict[str, SwitchDriver], only: set[str] | None = None) -> dict[str, fleet.SwitchOutcome]:
    """Open a session to every switch (of ``only``, when given) and read its facts and capabilities, in parallel
    (sessions into ``drivers``)."""
    chosen = [(i, sw) for i, sw in enumerate(inv.switches) if only is None or sw.name in only]
    # resolve every secret reference before contacting any device
    passwords = {sw.name: sw.password(f"{src}: switches[{i}]") for i, sw in chosen}
    where = {sw.name: f"{src}: switches[{i}]" for i, sw in chosen}

    def read(sw: Switch) -> tuple[DeviceFacts, Capabilities]:
        progress(f"connecting to {sw.name} ({sw.driver}) at {sw.host}:{sw.port}")
        drivers[sw.name] = connect(sw, where[sw.name], passwords[sw.name])
        return drivers[sw.name].facts(), drivers[sw.name].capabilities

    return fleet.run_per_switch([sw for _, sw in chosen], read,
                                on_done=lambda o: on_switch(o.name, "read") if o.ok else None)


def _diff_devices(switches: list[Switch], plan: Plan, drivers: dict[str, SwitchDriver], progress: Progress,
                  keep_candidate: bool) -> dict[str, fleet.SwitchOutcome]:
    """Render each switch's tagging config and let the device diff it (``(config, diff, running config)`` per switch),
    in parallel."""
    def diff(sw: Switch) -> tuple[str, str, str]:
        sp = plan.switch(sw.name)
        drv = drivers[sw.name]
        running = drv.running_config()
        config = drv.render(sp.access_changes(), sp.trunk_changes())
        progress(f"diffing the tagging config on {sw.name}")
        d = drv.load_merge(config)
        if not keep_candidate:
            drv.discard()
        return config, d, running

    return fleet.run_per_switch(switches, diff)


def _result(inv: Inventory, src: str, plan: Plan, findings: list, facts: dict, diff_out: dict, failed: dict
            ) -> PlanResult:
    """The :class:`PlanResult` of the switches that were planned and diffed, with their full device diffs."""
    ok = [sp.name for sp in plan.switches if sp.name not in failed]
    index = {sw.name: i for i, sw in enumerate(inv.switches)}
    changes = {}
    for n in ok:
        config, _d, running = diff_out[n].value
        change, more = device_change(inv.switches[index[n]], running, config, f"{src}: switches[{index[n]}]")
        findings = [*findings, *more]
        if change is not None:
            changes[n] = change
    return PlanResult(plan.only(ok), {n: diff_out[n].value[1] for n in ok}, {n: facts[n] for n in ok},
                      {n: diff_out[n].value[0] for n in ok}, failed=failed, findings=findings, changes=changes)


def compute(inv: Inventory, src: str, progress: Progress = quiet, keep_open: bool = False,
            tolerate: bool = False, on_switch: SwitchEvent = no_event, keep_candidate: bool = False,
            only: set[str] | None = None) -> tuple[PlanResult, dict[str, SwitchDriver]]:
    """Read every device, plan, render and diff (load + compare + discard), all switches in parallel. Changes nothing.

    Every refusal of every switch is collected before anything is raised (:class:`~harmless.errors.Refused`); the
    result carries the warnings and notes and each switch's full device diff (``changes``).

    Args:
        tolerate: keep going when a switch cannot be read (unreachable, refused): it is left out of the plan and
            reported in ``PlanResult.failed``; otherwise its error is raised.
        keep_open: return the open driver sessions (caller closes them).
        keep_candidate: leave each rendered config loaded as the merge candidate (with ``keep_open``; ``up`` commits
            it without loading it again).
        on_switch: ``(switch, event)`` callback as each switch is read.
        only: read and plan only these switches (``--switch``); the others are not contacted and are left out of
            the plan, which keeps every switch's br-otc number (its position in the inventory).

    Raises:
        Refused: every refusal of every switch (an InputError; always, nothing changed).
        InputError: bad secret reference.
        DeviceError: a switch could not be read and ``tolerate`` is False.
    """
    s = st.load()
    previous = Plan.from_dict(s.plan) if s and s.plan else None
    drivers: dict[str, SwitchDriver] = {}
    try:
        read_out = _read_devices(inv, src, progress, on_switch, drivers, only)
        failed = {n: o.error for n, o in read_out.items() if not o.ok}
        if failed and not tolerate:
            raise next(iter(failed.values()))
        facts = {n: o.value[0] for n, o in read_out.items() if o.ok}
        caps = {n: o.value[1] for n, o in read_out.items() if o.ok}
        plan, findings = plan_with_findings(inv, facts, previous, src, caps)
        diff_out = _diff_devices([sw for sw in inv.switches if sw.name in facts], plan, drivers, progress,
                                 keep_candidate)
        for n, o in diff_out.items():
            if not o.ok:
                if not tolerate or isinstance(o.error, InputError):
                    raise o.error
                failed[n] = o.error
        res = _result(inv, src, plan, findings, facts, diff_out, failed)
        owned = s.owned if s else {}
        res.reverts = {n: labels(owned.get(n), keys) for n in res.configs
                       if (keys := dropped(owned.get(n), res.configs[n]))}
        return res, drivers
    finally:
        if not keep_open:
            for d in list(drivers.values()):
                d.close()
