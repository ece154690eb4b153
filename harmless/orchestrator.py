"""``harmless plan | up | down | status``: the flow of DESIGN.md §3.

    inventory ─► validate ─► read devices ─► plan (pure) ─► apply switch ─► apply server ─► verify ─► state.json

Guarantees:
  * ``plan`` (and ``up --dry-run``) changes nothing: the candidate is loaded, diffed and discarded.
  * Before the first change the device's running config is saved (``state.save_backup``).
  * A failure at any step rolls back what was applied: a rejected commit leaves the device in its original config
    (the driver verifies this); a server-side failure restores the device from the backup and removes the bridges.
  * ``up`` twice is a no-op on the device (empty diff); after an ovs-vswitchd restart ``up`` rebuilds the bridges and
    flows without committing anything to the switch.
  * ``down`` restores the saved config (config replace) and checks the running config equals the backup, then
    removes the bridges.
Progress goes through the ``progress`` callback (the CLI prints it); nothing here prints.
"""
from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from harmless import fleet
from harmless import state as st
from harmless.errors import CommitError, DeviceError, HarmlessError, InputError, OvsError
from harmless.inventory import Inventory, Switch, load_inventory
from harmless.otc import bridges
from harmless.otc import controllers as controller_side
from harmless.ovs import DpdkOptions, Ovs, open_ovs
from harmless.plan import Plan, make_plan
from harmless.switch_drivers import get_driver
from harmless.switch_drivers.base import Capabilities, DeviceFacts, SwitchDriver

Progress = Callable[[str], None]
#: ``(switch name, event)``: per-switch milestones for progress bars (``read``, ``migrated``, ``failed``, ...)
SwitchEvent = Callable[[str, str], None]


def _quiet(_msg: str) -> None:
    pass


def _no_event(_switch: str, _event: str) -> None:
    pass


@dataclass
class PlanResult:
    """What ``plan``/``up`` computed: the plan, the per-switch device diff and device facts."""

    plan: Plan
    diffs: dict[str, str]
    facts: dict[str, DeviceFacts]
    configs: dict[str, str] = field(default_factory=dict)
    failed: dict[str, BaseException] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"plan": self.plan.to_dict(), "diffs": self.diffs,
                "device_vlans": {n: sorted(f.vlans) for n, f in self.facts.items()}}


def connect(sw: Switch, where: str, password: str | None = None) -> SwitchDriver:
    """Open a driver session to one switch. Raises InputError (secret) or DeviceError (unreachable)."""
    cls = get_driver(sw.driver)
    drv = cls(sw.host, sw.port, sw.username, password if password is not None else sw.password(where),
              optional_args=sw.optional_args, timeout=60)
    try:
        drv.open()
    except DeviceError as e:
        raise DeviceError(f"{where}.host", f"cannot reach {sw.name} at {sw.host}:{sw.port} ({e.problem})",
                          "check host, port, username and the password reference; nothing was changed") from None
    return drv


def server_ovs(inv: Inventory, start: bool = True) -> Ovs:
    """The server's OVS instance per ``server:`` (system or private, netdev or DPDK)."""
    dp = None
    if inv.server.datapath == "dpdk":
        d = inv.server.dpdk
        dp = DpdkOptions(hugepages=d.hugepages, socket_mem_mb=d.socket_mem_mb, lcore_mask=d.lcore_mask,
                         pmd_cpu_mask=d.pmd_cpu_mask)
    return open_ovs(inv.server.ovs, st.state_dir() / "ovs", dpdk=dp, start=start, netns=inv.server.netns)


def state_ovs(s: dict) -> Ovs:
    """The OVS instance recorded in a deployment state."""
    o = s.get("ovs") or {}
    return Ovs(Path(o["base_dir"]), netns=o.get("netns")) if o.get("private") else Ovs(None)


def _check_trunk_interfaces(inv: Inventory, src: str) -> None:
    """Kernel trunk interfaces (system/afxdp) must exist before anything changes."""
    for i, sw in enumerate(inv.switches):
        for j, t in enumerate(sw.trunks):
            if t.type not in ("system", "afxdp"):
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
            tolerate: bool = False, on_switch: SwitchEvent = _no_event
            ) -> tuple[PlanResult, dict[str, SwitchDriver]]:
    """Read every device, plan, render and diff (load + compare + discard), all switches in parallel. Changes nothing.

    Args:
        tolerate: keep going when a switch cannot be read (unreachable, refused): it is left out of the plan and
            reported in ``PlanResult.failed``; otherwise its error is raised.
        keep_open: return the open driver sessions (caller closes them).
        on_switch: ``(switch, event)`` callback as each switch is read.

    Raises:
        InputError: bad secret reference or a planning conflict (always, nothing changed).
        DeviceError: a switch could not be read and ``tolerate`` is False.
    """
    previous = None
    s = st.load()
    if s and s.get("plan"):
        previous = Plan.from_dict(s["plan"])
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


def up(inventory_path: str, progress: Progress = _quiet, revert_in: int = 300,
       on_switch: SwitchEvent = _no_event, wait_controller: float = 10.0,
       keep_on_no_controller: bool = False) -> dict:
    """``harmless up``: configure the switch(es) in parallel, build the translator and br-of(s), verify, record state.

    With several switches a switch that fails (unreachable, commit rejected) is rolled back alone — the device ends in
    its original config — while the others are migrated; the result says which (``failed``). When every switch
    fails, or the server side fails, the error is raised after everything changed in this run is rolled back.

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
        InputError: bad inventory, unknown interfaces, VID conflicts, unsupported features (nothing changed).
        DeviceError / CommitError: every switch failed (each device back in its original config).
        OvsError: server side failed (devices restored, bridges removed).
    """
    src = inventory_path
    inv = load_inventory(inventory_path)
    _check_trunk_interfaces(inv, src)
    controller_side.check_tls(inv, src)      # issue #13: ssl: targets need openflow.tls, one TLS config per OVS
    prev_state = st.load() or {}
    if prev_state.get("inventory") and Path(prev_state["inventory"]).resolve() != Path(inventory_path).resolve():
        raise InputError(src, f"another deployment is up (from {prev_state['inventory']})",
                         "run harmless down first")
    prev_plan = Plan.from_dict(prev_state["plan"]) if prev_state.get("plan") else None
    res, drivers = compute(inv, src, progress, keep_open=True, tolerate=True, on_switch=on_switch)
    failed: dict[str, BaseException] = dict(res.failed)
    committed: dict[str, bool] = {}
    backups = dict(prev_state.get("backups", {}))
    ports_before = dict(prev_state.get("ports_before", {}))
    records = {s.name: _switch_record(s) for s in inv.switches}
    lock = threading.Lock()
    ovs = None
    created_ovs = False

    def switch_side(sw: Switch) -> bool:
        drv = drivers[sw.name]
        if sw.name not in backups:
            progress(f"saving the running config of {sw.name}")
            entry = st.save_backup(sw.name, drv.running_config())
            with lock:
                backups[sw.name] = entry
                ports_before[sw.name] = _port_states(res.facts[sw.name])
                st.save({**prev_state, "inventory": str(Path(inventory_path).resolve()), "backups": backups,
                         "ports_before": ports_before, "switches": records, "phase": "applying"})
        if not res.diffs[sw.name]:
            progress(f"{sw.name}: already configured (empty diff), not touching it")
            return False
        confirm = drv.capabilities.commit_confirm
        progress(f"committing {len(res.diffs[sw.name].splitlines())} diff lines on {sw.name}"
                 + (f" (commit-confirm, reverts in {revert_in} s)" if confirm else ""))
        drv.apply(res.configs[sw.name], revert_in=revert_in if confirm else None)
        return True

    try:
        # 1. switch side, every switch in parallel; a failed commit leaves that device in its original config
        todo = [sw for sw in inv.switches if sw.name in res.configs]
        outs = fleet.run_per_switch(todo, switch_side, on_done=lambda o: on_switch(
            o.name, ("migrated" if o.value else "unchanged") if o.ok else "failed"))
        for n, o in outs.items():
            if o.ok:
                committed[n] = o.value
            else:
                failed[n] = o.error
        for n in res.failed:
            on_switch(n, "failed")
        if failed and not committed:
            raise next(iter(failed.values()))
        # switches that failed now but were migrated before keep their previous plan
        keep_prev = [sp for sp in (prev_plan.switches if prev_plan else ()) if sp.name in failed]
        effective = Plan(tuple(sorted([*res.plan.only(committed).switches, *keep_prev],
                                      key=lambda sp: sp.index)))
        # 2. server side
        progress("building br-otc and the OpenFlow bridge(s)")
        ovs = server_ovs(inv, start=False)
        created_ovs = ovs.private and not ovs.vswitchd_running()
        ovs.start()
        try:
            bridges.apply(ovs, effective)
        except OvsError:
            if ovs.private and ovs.datapath_conflict():
                raise OvsError("server", "another Open vSwitch with a userspace (netdev) datapath already runs in "
                               "this network namespace, so HARMLESS's own cannot open its datapath",
                               "use that one (server.ovs: system) or give HARMLESS its own namespace "
                               "(server.netns)") from None
            raise
        # 3. verify, then confirm commit-confirm commits
        problems = bridges.verify(ovs, effective)
        if problems:
            raise OvsError("server", "verification failed: " + "; ".join(problems[:3]), "see harmless status")
        # issue #13: wait for a controller on every br-of (NoControllerError rolls back like any OvsError)
        connected, missing = controller_side.wait_after_up(ovs, effective, wait_controller, keep_on_no_controller,
                                                           progress)
        for n, did in committed.items():
            if did and drivers[n].capabilities.commit_confirm:
                drivers[n].confirm()
    except BaseException as err:
        _rollback_up(res, drivers, committed, backups, ovs, created_ovs, progress)
        touched = any(committed.values()) or ovs is not None
        if touched and isinstance(err, HarmlessError) and not isinstance(err, (InputError, CommitError)):
            err.problem += " (rolled back: device config restored, bridges removed)"
        raise
    finally:
        for d in drivers.values():
            d.close()
    # a switch that failed on its first migration is forgotten: its device is back in its original config
    kept = {sp.name for sp in effective.switches}
    new_state = {
        "inventory": str(Path(inventory_path).resolve()), "plan": effective.to_dict(),
        "backups": {n: b for n, b in backups.items() if n in kept},
        "ports_before": {n: p for n, p in ports_before.items() if n in kept},
        "switches": {n: r for n, r in records.items() if n in kept},
        "ovs": {"private": ovs.private, "base_dir": str(ovs.base_dir) if ovs.private else None,
                "netns": ovs.netns, "datapath": inv.server.datapath},
        "phase": "up", "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    st.save(new_state)
    results = {sw.name: {"status": "failed", "error": _error_line(failed[sw.name])} if sw.name in failed else
               {"status": "migrated" if committed.get(sw.name) else "unchanged", "error": None}
               for sw in inv.switches}
    return {"plan": effective.to_dict(), "diffs": res.diffs, "changed": committed, "ovs": new_state["ovs"],
            "results": results, "failed": sorted(failed),
            "controllers_connected": connected, "controllers_missing": missing}


def _rollback_up(res: PlanResult, drivers, committed, backups, ovs, created_ovs, progress) -> None:
    """Undo a failed ``up``: restore devices committed in this run from their backup, remove bridges we built."""
    prior = st.load() or {}
    for name, did in committed.items():
        if not did:
            continue
        progress(f"rolling back {name} to its saved config")
        try:
            saved = st.read_backup(backups[name])
            drivers[name].restore(saved)
        except (HarmlessError, ValueError) as e:  # keep going; report below
            progress(f"could not restore {name}: {e}")
    if ovs is not None and not prior.get("plan"):
        try:
            bridges.remove(ovs, [sp.bridge for sp in res.plan.switches])
            if created_ovs:
                ovs.stop()
        except HarmlessError as e:
            progress(f"could not remove bridges: {e}")
    if not prior.get("plan"):
        st.clear()


def down(progress: Progress = _quiet, on_switch: SwitchEvent = _no_event) -> dict:
    """``harmless down``: restore every device's saved config (in parallel), prove it, remove the bridges.

    For every switch: config replace with the backup, then check (a) the running config equals the backup byte for
    byte and (b) every port has the mode and VLANs it had before ``up`` (parsed per-port state). Only when every
    switch passes are the bridges removed and the state forgotten; otherwise the state is kept so ``down`` can be
    retried, and the error names the switches and ports.

    Returns:
        ``{"restored": {switch: bool}, "config_restored": bool, "ports_restored": {switch: [differences]}}`` —
        ``config_restored`` is True when every device's running config equals its backup byte for byte.

    Raises:
        HarmlessError: nothing is deployed, or a device could not be restored (state kept so ``down`` can be retried).
    """
    s = st.load()
    if not s:
        raise InputError("harmless down", "nothing is deployed (no state)", "run harmless up first")
    todo = [Switch.model_validate(rec) for name, rec in s.get("switches", {}).items() if name in s.get("backups", {})]

    def restore(sw: Switch) -> tuple[bool, list[str]]:
        saved = st.read_backup(s["backups"][sw.name])
        progress(f"restoring the saved config of {sw.name}")
        drv = connect(sw, f"{s['inventory']}: switch {sw.name}")
        try:
            if drv.running_config() != saved:
                drv.restore(saved)
            same = drv.running_config() == saved
            before = s.get("ports_before", {}).get(sw.name)
            diffs = port_differences(before, _port_states(drv.facts())) if before is not None else []
        finally:
            drv.close()
        return same, diffs

    outs = fleet.run_per_switch(todo, restore, on_done=lambda o: on_switch(
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
            raise CommitError(n, "the running config still differs from the saved one after restore",
                              f"compare with {s['backups'][n]['file']}")
        raise CommitError(n, "ports are not back in their original mode/VLANs: " + "; ".join(o.value[1][:3]),
                          "run harmless down again or fix these ports by hand")
    plan_d = s.get("plan")
    if plan_d:
        progress("removing br-otc and the OpenFlow bridge(s)")
        ovs = state_ovs(s)
        if ovs.ovsdb_running():
            if ovs.private:
                ovs.start()   # vswitchd may have died; del-br waits for it
            bridges.remove(ovs, [sw["bridge"] for sw in plan_d["switches"]])
            if ovs.private:
                ovs.stop()
    st.clear()
    return {"restored": restored, "config_restored": all(restored.values()) if restored else False,
            "ports_restored": ports}


def status(with_device: bool = True) -> dict:
    """``harmless status``: port map, link state, per-port counters, controller connections.

    Returns:
        ``{"deployed": bool, "switches": [{"name", "bridge", "datapath_id", "ports": [{"interface", "ofport",
        "vid", "device_link", "rx_packets", "tx_packets"}], "controllers": [...], "trunks": {...}}]}``.
    """
    s = st.load()
    if not s or not s.get("plan"):
        return {"deployed": False, "switches": []}
    plan_obj = Plan.from_dict(s["plan"])
    ovs = state_ovs(s)
    out = {"deployed": True, "inventory": s["inventory"], "ovs_running": ovs.vswitchd_running() if ovs.private
           else ovs.ovsdb_running(), "switches": []}
    for sp in plan_obj.switches:
        links: dict[str, str] = {}
        if with_device and sp.name in s.get("switches", {}):
            try:
                sw = Switch.model_validate(s["switches"][sp.name])
                drv = connect(sw, f"{s['inventory']}: switch {sp.name}")
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
                          "rx_packets": c.get("rx_packets", 0), "tx_packets": c.get("tx_packets", 0)})
        out["switches"].append({"name": sp.name, "bridge": sp.bridge, "datapath_id": sp.datapath_id,
                                "ports": ports, "controllers": ps["controllers"], "trunks": ps["trunks"],
                                **({"error": ps["error"]} if "error" in ps else {})})
    return out
