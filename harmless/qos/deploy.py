"""What ``harmless up`` needs from QoS before and while it plans: the kernel check of ``scheduler: hfsc`` and the
overlay of live ``harmless qos set`` values on a freshly computed plan (docs/qos.md).

Layer: beside the plan (it reads :class:`harmless.plan.Plan` and the state), below the commands, so that the
orchestrator (``up``) and :mod:`harmless.qos.live` (``harmless qos``) share it without importing each other.
"""
from __future__ import annotations

from dataclasses import asdict, replace

from harmless import state as st
from harmless.errors import InputError
from harmless.inventory import Inventory
from harmless.otc import qos as qos_side
from harmless.plan import Plan
from harmless.qos.model import PortQos, uses_hfsc
from harmless.state import DeploymentState


def qos_dict(q: PortQos | None) -> dict | None:
    """A port's QoS as a dict (None when it has none). Pure."""
    return asdict(q) if q is not None else None


def overlay(plan: Plan, prev_state: DeploymentState | None) -> tuple[Plan, dict]:
    """Re-apply live settings to a freshly computed plan (for ``up``). Pure.

    A live entry of a port is kept when the port is still planned and the inventory's QoS of it (as the new plan
    has it) equals the inventory value recorded at the live change, or the plan already carries the live value.

    Returns:
        ``(plan with the live QoS in it, the qos_live entries kept)``.
    """
    live = prev_state.qos_live if prev_state is not None else {}
    kept: dict[str, dict] = {}
    sps = []
    for sp in plan.switches:
        mine = live.get(sp.name) or {}
        ports = []
        for p in sp.ports:
            e = mine.get(p.interface)
            cur = st.jsonable(qos_dict(p.qos))
            if e is not None and (e.get("inventory") == cur or e.get("qos") == cur):
                p = replace(p, qos=PortQos.from_dict(e.get("qos")))
                kept.setdefault(sp.name, {})[p.interface] = e
            ports.append(p)
        sps.append(replace(sp, ports=tuple(ports)))
    return Plan(tuple(sps)), kept


def check_kernel(inv: Inventory, src: str) -> None:
    """Before ``up`` changes anything: refuse ``scheduler: hfsc`` when this kernel cannot create an HFSC qdisc
    (OVS would log the failure and leave the port unshaped). Raises InputError naming the field."""
    if not uses_hfsc(inv):
        return
    ok, why = qos_side.hfsc_supported()
    if not ok:
        i, j = next((i, j) for i, sw in enumerate(inv.switches) for j, p in enumerate(sw.access_ports)
                    if p.qos is not None and p.qos.scheduler == "hfsc")
        raise InputError(f"{src}: switches[{i}].access_ports[{j}].qos.scheduler", why,
                         "use scheduler: htb (or a kernel with CONFIG_NET_SCH_HFSC); nothing was changed")
