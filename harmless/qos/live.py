"""``harmless qos set | show | clear``: change a migrated port's QoS while traffic flows (issue #15).

A live change touches neither the legacy switch nor any flow that does not change: a rate change is one OpenFlow
``mod-meter`` (ingress) and one OVSDB update of the port's Queue row (egress); adding or removing a direction also
replaces the port's two translator flows, in one OpenFlow bundle (``replace-flows``: unchanged flows keep their
counters, nothing is dropped in between).

Persistence: the deployed plan in ``state.json`` carries each port's effective QoS (``plan.switches[].ports[].qos``),
and ``qos_live`` records what was set live: ``{switch: {interface: {"qos": {...} | None, "inventory": {...} | None,
"time": UTC}}}`` with the inventory's value at that moment. ``harmless up`` re-applies a live setting as long as the
inventory's ``qos`` of that port is unchanged since (:func:`harmless.qos.deploy.overlay`); an edited inventory wins. After an
``ovs-vswitchd`` restart ``harmless up`` (or ``harmless recover``) re-creates the meters, queues and classifiers.

Journal (:mod:`harmless.journal`, op ``qos``): ``qos.begin`` → ``state.save`` → ``server.qos`` → ``qos.end``, each
fsynced before its side effect; a failure rolls back (``rollback.begin`` → state and OVS as before →
``rollback.end``); a run killed in between leaves an unfinished journal that ``harmless recover`` finishes by applying
what the state says (:func:`finish`).
"""
from __future__ import annotations

import time
from dataclasses import asdict, replace
from typing import Callable, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harmless import journal
from harmless import state as st
from harmless.deployment import deployed_switch, state_ovs
from harmless.errors import HarmlessError, InputError, OvsError
from harmless.otc import bridges
from harmless.otc import qos as qos_side
from harmless.plan import Plan, SwitchPlan
from harmless.qos.deploy import qos_dict as _asdict
from harmless.results import OmitWhenNone
from harmless.qos.model import KERNEL_QDISC_TRUNKS, PortQos, QosSettings, trunk_problem
from harmless.state import DeploymentState

Progress = Callable[[str], None]
#: how long ``qos`` commands wait for the state lock (a ``watch`` round holds it for milliseconds)
LOCK_WAIT_S = 3.0


def _quiet(_m: str) -> None:
    pass


def apply_live(ovs, plan: Plan) -> None:
    """Make OVS enforce the plan's QoS: meters and queues first, then the translator flows (one bundle; flows that
    do not change are not touched), then unused meters are deleted. Raises OvsError."""
    stale = qos_side.apply_before_flows(ovs, plan)
    bridges.install_flows(ovs, plan)
    qos_side.prune_meters(ovs, stale)


def _deployed() -> tuple[DeploymentState, Plan]:
    s = st.load()
    if not s or not s.plan:
        raise InputError("harmless qos", "nothing is deployed", "run harmless up -i INVENTORY first")
    return s, Plan.from_dict(s.plan)


def _find(s: DeploymentState, plan: Plan, switch: str, interface: str) -> tuple[SwitchPlan, int, int]:
    """``(switch plan, index of the port in it, br-otc switch number)``; names compared canonically per driver.

    Raises:
        InputError: unknown switch or port (names the known ones).
    """
    sps = {sp.name: (i, sp) for i, sp in plan.numbered()}
    if switch not in sps:
        raise InputError("SWITCH", f"no deployed switch {switch!r} (deployed: {', '.join(sorted(sps))})",
                         "name a switch of the inventory")
    i, sp = sps[switch]
    canon = deployed_switch(s, switch).canonical if s.switches.get(switch) else (lambda x: x)
    for k, p in enumerate(sp.ports):
        if canon(p.interface) == canon(interface) or p.interface.lower() == interface.lower():
            return sp, k, i
    raise InputError("PORT", f"{interface} is not a migrated port of {switch} (migrated: "
                     f"{', '.join(p.interface for p in sp.ports)})", "name one of them, e.g. "
                     f"harmless qos set {switch} {sp.ports[0].interface} --egress 50")


def _check_enforceable(sp: SwitchPlan, k: int, q: PortQos | None, scheduler_given: bool,
                       running_type: str | None = None) -> None:
    """Refuse what the port's trunk cannot enforce; ``running_type`` is the trunk Interface's OVS type now."""
    if q is None:
        return
    trunk = next(t for t in sp.trunks if t.switch_port == sp.ports[k].trunk)
    bad = trunk_problem(trunk.type, q, scheduler_given)
    if bad:
        raise InputError(f"--{bad[0].split('_')[0]}", bad[1], bad[2])
    if trunk.type == "auto" and running_type == "afxdp" and q.egress_mbps is not None:
        raise InputError("--egress", f"trunk {trunk.server_interface} (type auto) runs AF_XDP now, whose transmits "
                         "bypass the kernel's queueing discipline", f"add qos: {{egress_mbps: ...}} to "
                         f"{sp.ports[k].interface} in the inventory and run harmless up (an auto trunk with egress "
                         "shaping runs AF_PACKET), or drop --egress")
    if q.egress_mbps is not None and trunk.type in KERNEL_QDISC_TRUNKS and q.scheduler == "hfsc":
        ok, why = qos_side.hfsc_supported()
        if not ok:
            raise InputError("--scheduler", why, "use --scheduler htb")
    others = {p.qos.scheduler for p in sp.ports if p is not sp.ports[k] and p.trunk == sp.ports[k].trunk
              and p.qos is not None and p.qos.egress_mbps is not None}
    if q.egress_mbps is not None and trunk.type in KERNEL_QDISC_TRUNKS and others and q.scheduler not in others:
        raise InputError("--scheduler", f"the other shaped ports of trunk {trunk.server_interface} use "
                         f"{others.pop()} (one scheduler per trunk)", "use the same --scheduler")


class QosChange(OmitWhenNone):
    """One port's live QoS change (``harmless qos set``/``clear``; ``--json`` prints :meth:`model_dump` with
    ``mode="json"``).

    Attributes:
        switch, interface, ofport, vid: the migrated port.
        from_: its QoS before (``dataclasses.asdict`` of :class:`~harmless.qos.model.PortQos`, None: none); dumped
            as ``from``.
        to: its QoS after (None: removed).
        dry_run: nothing was changed.
        apply_ms: journal + state write + OVS change (ms); None (left out of the dump) on a dry run.
    """

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True,
                              serialize_by_alias=True)

    switch: str
    interface: str
    ofport: int
    vid: int
    from_: dict | None = Field(alias="from")
    to: dict | None
    dry_run: bool
    apply_ms: float | None = None
    OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("apply_ms",)    # not measured on a dry run


def _change(switch: str, interface: str, make: Callable[[PortQos | None], PortQos | None], scheduler_given: bool,
            progress: Progress, dry_run: bool) -> QosChange:
    """One port's change under the lock: checked, planned, then (unless ``dry_run``) journaled and applied."""
    with st.lock(wait_s=LOCK_WAIT_S), journal.interruptible(progress):
        journal.tidy()
        recs = journal.unfinished()
        if recs and not journal.is_finished(recs):
            raise InputError("harmless qos", journal.describe(recs), "run harmless recover first")
        s, plan = _deployed()
        sp, k, _i = _find(s, plan, switch, interface)
        port = sp.ports[k]
        new_q = make(port.qos)
        trunk_if = next(t.server_interface for t in sp.trunks if t.switch_port == port.trunk)
        rows = {r["name"]: r for r in state_ovs(s).vsctl_json("Interface", columns=["name", "type"])}
        _check_enforceable(sp, k, new_q, scheduler_given, (rows.get(trunk_if) or {}).get("type"))
        new_sp = replace(sp, ports=tuple(replace(p, qos=new_q) if j == k else p for j, p in enumerate(sp.ports)))
        new_plan = Plan(tuple(new_sp if x.name == sp.name else x for x in plan.switches))
        result = QosChange(switch=sp.name, interface=port.interface, ofport=port.ofport, vid=port.vid,
                           from_=_asdict(port.qos), to=_asdict(new_q), dry_run=dry_run)
        if dry_run:
            return result
        new_state = s.model_copy(update={"plan": new_plan.to_dict(), "qos_live": _live_after(s, result)})
        result.apply_ms = _journaled_apply(s, new_state, plan, new_plan, result, progress)
        progress(f"{sp.name} {port.interface}: {new_q.describe() if new_q else 'no QoS'} "
                 f"(applied in {result.apply_ms} ms)")
        return result


def _live_after(s: DeploymentState, c: QosChange) -> dict[str, dict[str, dict]]:
    """The state's ``qos_live`` with change ``c`` recorded (the inventory value stays the one of the first live
    change of the port). Pure but for the clock."""
    live = {n: dict(v) for n, v in s.qos_live.items()}
    prior = (live.get(c.switch) or {}).get(c.interface)
    inv_value = prior["inventory"] if prior else st.jsonable(c.from_)
    live.setdefault(c.switch, {})[c.interface] = {
        "qos": st.jsonable(c.to), "inventory": inv_value, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    return live


def _journaled_apply(s: DeploymentState, new_state: DeploymentState, plan: Plan, new_plan: Plan, c: QosChange,
                     progress: Progress) -> float:
    """``qos.begin`` → ``state.save`` → ``server.qos`` → ``qos.end``; a failure rolls state and OVS back
    (``rollback.begin`` → ``rollback.end``) and re-raises.

    Returns:
        The time from ``qos.begin`` to OVS enforcing the change (ms, 0.1 ms resolution).
    """
    ovs = state_ovs(s)
    j = journal.Journal("qos", progress)
    t0 = time.monotonic()
    try:
        j.record("qos.begin", switch=c.switch, interface=c.interface, **{"from": c.from_, "to": c.to})
        j.record("state.save")
        st.save(new_state)
        j.record("server.qos", switch=c.switch, interface=c.interface)
        apply_live(ovs, new_plan)
    except BaseException as e:
        j.record("rollback.begin", reason=str(e)[:300])
        try:
            st.save(s)
            apply_live(ovs, plan)
        except HarmlessError as e2:
            progress(f"could not roll the QoS change back: {e2}; run harmless recover")
            raise
        j.record("rollback.end")
        j.close()
        if isinstance(e, OvsError):
            e.problem += " (rolled back: the previous QoS is in force)"
        raise
    apply_ms = round((time.monotonic() - t0) * 1000, 1)
    j.record("qos.end")
    j.close()
    return apply_ms


#: ``harmless qos set`` option of each QoS field (error messages name the option the user typed)
SET_OPTIONS = {"ingress_mbps": "--ingress", "ingress_burst_kb": "--ingress-burst", "egress_mbps": "--egress",
               "egress_burst_kb": "--egress-burst", "scheduler": "--scheduler"}


def set_qos(switch: str, interface: str, ingress_mbps: float | None = None, egress_mbps: float | None = None,
            ingress_burst_kb: int | None = None, egress_burst_kb: int | None = None, scheduler: str | None = None,
            progress: Progress = _quiet, dry_run: bool = False) -> QosChange:
    """``harmless qos set``: change one port's QoS live; unspecified values keep the port's current ones.

    Args:
        switch, interface: the migrated port (interface names compared canonically: ``Fa0/7``).
        ingress_mbps, egress_mbps: new rates (Mbit/s); None keeps the current one.
        ingress_burst_kb, egress_burst_kb: new bursts (kbit); None keeps the current one (or the default).
        scheduler: ``htb`` or ``hfsc`` (kernel trunks).
        dry_run: validate and return what would change; change nothing.

    Returns:
        A :class:`QosChange`; dumped: ``{"switch", "interface", "ofport", "vid", "from": {...}|None, "to": {...},
        "dry_run": bool, "apply_ms": float}`` (``apply_ms``: journal + state write + OVS change, ms; not on a dry
        run).

    Raises:
        InputError: nothing deployed, unknown port, values out of range, a trunk that cannot enforce it, an
            unfinished journal (exit 2, nothing changed).
        LockedError: another harmless holds the state directory.
        OvsError: OVS refused the change (rolled back).
    """
    def make(cur: PortQos | None) -> PortQos:
        base = asdict(cur) if cur else {}
        given = {"ingress_mbps": ingress_mbps, "egress_mbps": egress_mbps, "ingress_burst_kb": ingress_burst_kb,
                 "egress_burst_kb": egress_burst_kb, "scheduler": scheduler}
        merged = {**base, **{k: v for k, v in given.items() if v is not None}}
        if merged.get("egress_mbps") is None and scheduler is None:
            merged.pop("scheduler", None)      # the plan's default "htb" means nothing without egress
        try:
            q = QosSettings.model_validate(merged)
        except ValidationError as e:  # one line naming the option
            err = e.errors()[0]
            field = str(err["loc"][0]) if err["loc"] else ""
            raise InputError(SET_OPTIONS.get(field, "harmless qos set"),
                             err["msg"].removeprefix("Value error, "),
                             "see harmless qos set --help (rates in Mbit/s > 0, bursts in kbit >= 12)") from None
        return PortQos.from_settings(q)

    return _change(switch, interface, make, scheduler is not None, progress, dry_run)


def clear_qos(switch: str | None = None, interface: str | None = None, progress: Progress = _quiet,
              dry_run: bool = False) -> list[QosChange]:
    """``harmless qos clear``: remove the QoS of one port, of every port of a switch, or of every port.

    Returns:
        One :class:`QosChange` per port that had QoS; [] when nothing is deployed and no switch is named (no port
        has QoS: nothing to do, docs/cli.md).

    Raises:
        As :func:`set_qos` (a named switch or port with nothing deployed: InputError).
    """
    if switch is None and not ((cur := st.load()) and cur.plan):
        return []
    s, plan = _deployed()
    targets = []
    for sp in plan.switches:
        if switch is not None and sp.name != switch:
            continue
        for p in sp.ports:
            if p.qos is not None:
                targets.append((sp.name, p.interface))
    if switch is not None and interface is not None:
        targets = [(switch, interface)]
    elif switch is not None and switch not in {sp.name for sp in plan.switches}:
        _find(s, plan, switch, "")
    return [_change(n, i, lambda _cur: None, False, progress, dry_run) for n, i in targets]


class QosPortView(BaseModel):
    """One migrated port in ``harmless qos show``.

    Attributes:
        switch, interface, ofport, vid: the port.
        trunk: the server interface of its trunk.
        qos: its configured QoS (``dataclasses.asdict`` of :class:`~harmless.qos.model.PortQos`) or None.
        source: ``inventory`` or ``live`` (``harmless qos set``), None without QoS.
        meter: what OVS enforces on ingress (id, kbit/s, burst kbit, packets, band drops) or None.
        queue: what OVS enforces on egress (id, trunk, QoS type, Queue other_config, tc class and its sent/dropped
            counters) or None.
    """

    model_config = ConfigDict(extra="forbid")

    switch: str
    interface: str
    ofport: int
    vid: int
    trunk: str | None
    qos: dict | None
    source: Literal["inventory", "live"] | None
    meter: dict | None
    queue: dict | None


class QosShow(OmitWhenNone):
    """``harmless qos show``: ``deployed``, the ports, and ``error`` (only in the dump when OVS could not be read)."""

    model_config = ConfigDict(extra="forbid")

    deployed: bool
    ports: list[QosPortView] = Field(default_factory=list)
    error: str | None = None
    OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("error",)


def show(with_counters: bool = True) -> QosShow:
    """``harmless qos show``: per migrated port its configured QoS, where it comes from, and what OVS enforces.

    Returns:
        A :class:`QosShow`; dumped: ``{"deployed": bool, "ports": [{"switch", "interface", "ofport", "vid",
        "trunk", "qos": {...}|None, "source": "inventory"|"live"|None, "meter": {...}|None, "queue": {...}|None}]}``
        plus ``"error"`` when OVS could not be read (``meter``: id, kbit/s, burst kbit, packets, band drops;
        ``queue``: id, trunk, QoS type, Queue other_config, tc class and its sent/dropped counters).
    """
    s = st.load()
    if not s or not s.plan:
        return QosShow(deployed=False)
    plan = Plan.from_dict(s.plan)
    view: dict = {}
    error = None
    if with_counters:
        try:
            view = qos_side.port_view(state_ovs(s), plan)
        except OvsError as e:
            error = str(e)
    live = s.qos_live
    rows = []
    for sp in plan.switches:
        trunks = {t.switch_port: t.server_interface for t in sp.trunks}
        for p in sp.ports:
            v = (view.get(sp.name) or {}).get(p.ofport, {})
            rows.append(QosPortView(switch=sp.name, interface=p.interface, ofport=p.ofport, vid=p.vid,
                                    trunk=trunks.get(p.trunk), qos=_asdict(p.qos),
                                    source=("live" if p.interface in (live.get(sp.name) or {}) else "inventory")
                                    if p.qos else None, meter=v.get("meter"), queue=v.get("queue")))
    return QosShow(deployed=True, ports=rows, error=error)


class QosFinish(BaseModel):
    """What :func:`finish` did for ``harmless recover``: ``applied`` False when nothing is deployed any more."""

    model_config = ConfigDict(extra="forbid")

    recovered: Literal["qos"] = "qos"
    applied: bool


def finish(recs: list[dict], progress: Progress = _quiet) -> QosFinish:
    """Finish an interrupted ``harmless qos`` run (for ``harmless recover``; the caller holds the lock): make OVS
    enforce what the state says (the state is written before OVS is changed, so it is the intended value or, when the
    run died before writing it, the previous one), then archive the journal."""
    s = st.load()
    progress(f"finishing {journal.describe(recs)}")
    if s and s.plan:
        ovs = state_ovs(s)
        ovs.start()
        apply_live(ovs, Plan.from_dict(s.plan))
    journal.archive("interrupted")
    return QosFinish(applied=bool(s and s.plan))
