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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from harmless import state as st
from harmless.errors import CommitError, DeviceError, HarmlessError, InputError, OvsError
from harmless.inventory import Inventory, Switch, load_inventory
from harmless.otc import bridges
from harmless.ovs import DpdkOptions, Ovs, open_ovs
from harmless.plan import Plan, make_plan
from harmless.switch_drivers import get_driver
from harmless.switch_drivers.base import DeviceFacts, SwitchDriver

Progress = Callable[[str], None]


def _quiet(_msg: str) -> None:
    pass


@dataclass
class PlanResult:
    """What ``plan``/``up`` computed: the plan, the per-switch device diff and device facts."""

    plan: Plan
    diffs: dict[str, str]
    facts: dict[str, DeviceFacts]
    configs: dict[str, str] = field(default_factory=dict)

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


def compute(inv: Inventory, src: str, progress: Progress = _quiet, keep_open: bool = False
            ) -> tuple[PlanResult, dict[str, SwitchDriver]]:
    """Read every device, plan, render and diff (load + compare + discard). Changes nothing.

    Returns the plan result and, when ``keep_open``, the open driver sessions (caller closes them).
    """
    previous = None
    s = st.load()
    if s and s.get("plan"):
        previous = Plan.from_dict(s["plan"])
    drivers: dict[str, SwitchDriver] = {}
    facts: dict[str, DeviceFacts] = {}
    # resolve every secret reference before contacting any device
    passwords = {sw.name: sw.password(f"{src}: switches[{i}]") for i, sw in enumerate(inv.switches)}
    try:
        for i, sw in enumerate(inv.switches):
            where = f"{src}: switches[{i}]"
            progress(f"connecting to {sw.name} ({sw.driver}) at {sw.host}:{sw.port}")
            drivers[sw.name] = connect(sw, where, passwords[sw.name])
            facts[sw.name] = drivers[sw.name].facts()
        caps = {name: d.capabilities for name, d in drivers.items()}
        plan = make_plan(inv, facts, previous, src, caps)
        diffs, configs = {}, {}
        for sp in plan.switches:
            drv = drivers[sp.name]
            configs[sp.name] = drv.render(sp.access_changes(), sp.trunk_changes())
            progress(f"diffing the tagging config on {sp.name}")
            diffs[sp.name] = drv.load_merge(configs[sp.name])
            drv.discard()
        return PlanResult(plan, diffs, facts, configs), drivers
    finally:
        if not keep_open:
            for d in drivers.values():
                d.close()


def plan(inventory_path: str, progress: Progress = _quiet) -> PlanResult:
    """``harmless plan``: the port map and the device diff; nothing changes."""
    inv = load_inventory(inventory_path)
    res, _ = compute(inv, inventory_path, progress)
    return res


def _switch_record(sw: Switch) -> dict:
    """The non-secret part of an inventory switch, enough to reconnect for ``down``."""
    return sw.model_dump(mode="json")


def up(inventory_path: str, progress: Progress = _quiet, revert_in: int = 300) -> dict:
    """``harmless up``: configure the switch(es), build the translator and br-of, verify, record state.

    Args:
        inventory_path: the inventory file.
        progress: callback for one-line progress messages.
        revert_in: commit-confirm timer (s) on devices that support it; confirmed only after the server side
            is verified.

    Returns:
        ``{"plan": ..., "diffs": {switch: diff}, "changed": {switch: bool}, "ovs": {...}}``.

    Raises:
        InputError: bad inventory, unknown interfaces, VID conflicts (nothing changed).
        DeviceError / CommitError: device unreachable or commit rejected (device back in its original config).
        OvsError: server side failed (device restored, bridges removed).
    """
    src = inventory_path
    inv = load_inventory(inventory_path)
    _check_trunk_interfaces(inv, src)
    prev_state = st.load() or {}
    if prev_state.get("inventory") and Path(prev_state["inventory"]).resolve() != Path(inventory_path).resolve():
        raise InputError(src, f"another deployment is up (from {prev_state['inventory']})",
                         "run harmless down first")
    res, drivers = compute(inv, src, progress, keep_open=True)
    committed: dict[str, bool] = {}
    backups = dict(prev_state.get("backups", {}))
    ovs = None
    created_ovs = False
    try:
        # 1. switch side
        for sp in res.plan.switches:
            drv = drivers[sp.name]
            if sp.name not in backups:
                progress(f"saving the running config of {sp.name}")
                backups[sp.name] = st.save_backup(sp.name, drv.running_config())
                st.save({**prev_state, "inventory": str(Path(inventory_path).resolve()), "backups": backups,
                         "switches": {s.name: _switch_record(s) for s in inv.switches}, "phase": "applying"})
            if not res.diffs[sp.name]:
                progress(f"{sp.name}: already configured (empty diff), not touching it")
                committed[sp.name] = False
                continue
            confirm = drv.capabilities.commit_confirm
            progress(f"committing {len(res.diffs[sp.name].splitlines())} diff lines on {sp.name}"
                     + (f" (commit-confirm, reverts in {revert_in} s)" if confirm else ""))
            drv.apply(res.configs[sp.name], revert_in=revert_in if confirm else None)
            committed[sp.name] = True
        # 2. server side
        progress("building br-otc and the OpenFlow bridge(s)")
        ovs = server_ovs(inv, start=False)
        created_ovs = ovs.private and not ovs.vswitchd_running()
        ovs.start()
        try:
            bridges.apply(ovs, res.plan)
        except OvsError:
            if ovs.private and ovs.datapath_conflict():
                raise OvsError("server", "another Open vSwitch with a userspace (netdev) datapath already runs in "
                               "this network namespace, so HARMLESS's own cannot open its datapath",
                               "use that one (server.ovs: system) or give HARMLESS its own namespace "
                               "(server.netns)") from None
            raise
        # 3. verify, then confirm commit-confirm commits
        problems = bridges.verify(ovs, res.plan)
        if problems:
            raise OvsError("server", "verification failed: " + "; ".join(problems[:3]), "see harmless status")
        for sp in res.plan.switches:
            if committed.get(sp.name) and drivers[sp.name].capabilities.commit_confirm:
                drivers[sp.name].confirm()
    except BaseException as err:
        _rollback_up(res, drivers, committed, backups, ovs, created_ovs, progress)
        if isinstance(err, HarmlessError) and not isinstance(err, (InputError, CommitError)):
            err.problem += " (rolled back: device config restored, bridges removed)"
        raise
    finally:
        for d in drivers.values():
            d.close()
    new_state = {
        "inventory": str(Path(inventory_path).resolve()), "plan": res.plan.to_dict(), "backups": backups,
        "switches": {s.name: _switch_record(s) for s in inv.switches},
        "ovs": {"private": ovs.private, "base_dir": str(ovs.base_dir) if ovs.private else None,
                "netns": ovs.netns, "datapath": inv.server.datapath},
        "phase": "up", "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    st.save(new_state)
    return {"plan": res.plan.to_dict(), "diffs": res.diffs, "changed": committed,
            "ovs": new_state["ovs"]}


def _rollback_up(res: PlanResult, drivers, committed, backups, ovs, created_ovs, progress) -> None:
    """Undo a failed ``up``: restore committed devices from their backup, remove bridges we built."""
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


def down(progress: Progress = _quiet) -> dict:
    """``harmless down``: restore every device's saved config, check it, remove the bridges, forget the state.

    Returns:
        ``{"restored": {switch: bool}, "config_restored": bool}`` — ``config_restored`` is True when every device's
        running config now equals its backup byte for byte.

    Raises:
        HarmlessError: nothing is deployed, or a device could not be restored (state kept so ``down`` can be retried).
    """
    s = st.load()
    if not s:
        raise InputError("harmless down", "nothing is deployed (no state)", "run harmless up first")
    restored: dict[str, bool] = {}
    for name, rec in s.get("switches", {}).items():
        if name not in s.get("backups", {}):
            continue
        sw = Switch.model_validate(rec)
        saved = st.read_backup(s["backups"][name])
        progress(f"restoring the saved config of {name}")
        drv = connect(sw, f"{s['inventory']}: switch {name}")
        try:
            if drv.running_config() != saved:
                drv.restore(saved)
            restored[name] = drv.running_config() == saved
        finally:
            drv.close()
        if not restored[name]:
            raise CommitError(name, "the running config still differs from the saved one after restore",
                              f"compare with {s['backups'][name]['file']}")
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
    return {"restored": restored, "config_restored": all(restored.values()) if restored else False}


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
