"""``harmless status``: the deployed port map with link states, counters and controller connections, and how each
switch differs from what HARMLESS deployed (:class:`harmless.results.StatusReport`). Changes nothing."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from harmless import journal
from harmless import state as st
from harmless.conformance import check
from harmless.deployment import connect_deployed, state_ovs
from harmless.errors import HarmlessError, InputError, OvsError, did_you_mean
from harmless.ha.view import pair_view
from harmless.otc import bridges
from harmless.ovs import Ovs
from harmless.plan import Plan, SwitchPlan
from harmless.results import PortStatus, StatusReport, SwitchStatus
from harmless.state import DeploymentState
from harmless.switch_drivers.portmodel import SwitchModel


@dataclass
class DeviceView:
    """What one login to a switch tells ``status``: ``links`` ``{interface: state}`` (``{}`` when its driver cannot
    tell), ``model`` its port model now (None when the driver has none or the config does not parse), ``error`` why
    the switch could not be read (then both are empty)."""

    links: dict[str, str] = field(default_factory=dict)
    model: SwitchModel | None = None
    error: str | None = None


def read_device(s: DeploymentState, name: str) -> DeviceView:
    """Log in to switch ``name`` of the deployment once: its link states and port model (read-only)."""
    try:
        drv = connect_deployed(s, name)
        try:
            view = DeviceView()
            try:
                view.links = drv.link_states()
            except NotImplementedError:
                pass
            try:
                view.model = drv.port_model()
            except (NotImplementedError, ValueError):
                pass
            return view
        finally:
            drv.close()
    except HarmlessError as e:
        return DeviceView(error=str(e))


def switch_status(ovs: Ovs, sp: SwitchPlan, dev: DeviceView | None, inventory: str,
                  shut: dict[str, dict] | None = None) -> SwitchStatus:
    """One switch's br-of: its ports (with the device's link states and the legacy ports HARMLESS ``shut`` for a
    controller's port-down, ``state.port_admin[switch]``), controllers and trunks, and how the device differs from
    the plan (:func:`harmless.conformance.check`; ``differences`` None when the device was not read)."""
    try:
        ps = bridges.port_status(ovs, sp)
    except OvsError as e:
        ps = {"ports": {}, "controllers": [], "trunks": {}, "error": str(e)}
    links = dev.links if dev else {}
    ports = []
    for p in sp.ports:
        c = ps["ports"].get(p.ofport, {})
        ports.append(PortStatus(interface=p.interface, ofport=p.ofport, vid=p.vid,
                                device_link=links.get(p.interface, "unknown"),
                                br_of_state=c.get("br_of_state", "unknown"),
                                blocked_by_watch=c.get("blocked_by_watch", False),
                                rx_packets=c.get("rx_packets", 0), tx_packets=c.get("tx_packets", 0),
                                qos=asdict(p.qos) if p.qos else None, admin_down=c.get("admin_down", False),
                                device_shut=p.interface in (shut or {})))
    differences = None
    if dev is not None and dev.model is not None:
        held = {p.ofport for p in ports if p.blocked_by_watch}
        differences = check(sp, dev.model, inventory, links=links if "error" not in ps else None, held=held)
    return SwitchStatus(name=sp.name, bridge=sp.bridge, datapath_id=sp.datapath_id, ports=ports,
                        controllers=ps["controllers"], trunks=ps["trunks"], error=ps.get("error"),
                        differences=differences, device_error=dev.error if dev else None)


def status(with_device: bool = True, only: str | None = None) -> StatusReport:
    """``harmless status``: port map, link state, per-port counters, controller connections, and (with the device)
    how each switch differs from what HARMLESS deployed (``differences``, :mod:`harmless.conformance`).

    Args:
        with_device: log in to each switch for its link states and port model (else ``device_link`` is
            ``unknown`` and ``differences`` None).
        only: report just this deployed switch (``--switch``; the others are not contacted).

    Returns:
        The report; ``deployed`` False (with ``unfinished_journal``) when nothing is deployed.

    Raises:
        StateError: state.json is corrupt.
        InputError: ``only`` is not a deployed switch.
    """
    recs = journal.unfinished()
    pending = None if journal.is_finished(recs) else journal.describe(recs)
    s = st.load()
    if not s or not s.plan:
        return StatusReport(deployed=False, unfinished_journal=pending)
    ovs = state_ovs(s)
    switches = []
    plan = Plan.from_dict(s.plan)
    names = [sp.name for sp in plan.switches]
    if only is not None and only not in names:
        raise InputError("harmless status --switch", f"no deployed switch named {only!r}"
                         + did_you_mean(only, names), f"use one of: {', '.join(names)}")
    for sp in plan.switches:
        if only is not None and sp.name != only:
            continue
        dev = read_device(s, sp.name) if with_device and sp.name in s.switches else None
        switches.append(switch_status(ovs, sp, dev, s.inventory, s.port_admin.get(sp.name, {})))
    return StatusReport(deployed=True, unfinished_journal=pending, inventory=s.inventory, ha=pair_view(),
                        ovs_running=ovs.vswitchd_running() if ovs.private else ovs.ovsdb_running(),
                        switches=switches)
