"""``harmless status``: the deployed port map with link states, counters and controller connections
(:class:`harmless.results.StatusReport`). Changes nothing."""
from __future__ import annotations

from dataclasses import asdict

from harmless import journal
from harmless import state as st
from harmless.deployment import connect_deployed, state_ovs
from harmless.errors import HarmlessError, InputError, OvsError, did_you_mean
from harmless.otc import bridges
from harmless.ovs import Ovs
from harmless.plan import Plan, SwitchPlan
from harmless.results import PortStatus, StatusReport, SwitchStatus
from harmless.state import DeploymentState


def device_links(s: DeploymentState, name: str) -> dict[str, str]:
    """``{interface: link state}`` as the switch reports it; ``{}`` when its driver cannot tell, ``{"error": line}``
    when it cannot be reached."""
    try:
        drv = connect_deployed(s, name)
        try:
            return drv.link_states()
        except NotImplementedError:
            return {}
        finally:
            drv.close()
    except HarmlessError as e:
        return {"error": str(e)}


def switch_status(ovs: Ovs, sp: SwitchPlan, links: dict[str, str], shut: dict[str, dict] | None = None
                  ) -> SwitchStatus:
    """One switch's br-of: its ports (with the device's ``links`` and the legacy ports HARMLESS ``shut`` for a
    controller's port-down, ``state.port_admin[switch]``), controllers and trunks."""
    try:
        ps = bridges.port_status(ovs, sp)
    except OvsError as e:
        ps = {"ports": {}, "controllers": [], "trunks": {}, "error": str(e)}
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
    return SwitchStatus(name=sp.name, bridge=sp.bridge, datapath_id=sp.datapath_id, ports=ports,
                        controllers=ps["controllers"], trunks=ps["trunks"], error=ps.get("error"))


def status(with_device: bool = True, only: str | None = None) -> StatusReport:
    """``harmless status``: port map, link state, per-port counters, controller connections.

    Args:
        with_device: log in to each switch for its link states (else ``device_link`` is ``unknown``).
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
        links = device_links(s, sp.name) if with_device and sp.name in s.switches else {}
        switches.append(switch_status(ovs, sp, links, s.port_admin.get(sp.name, {})))
    return StatusReport(deployed=True, unfinished_journal=pending, inventory=s.inventory,
                        ovs_running=ovs.vswitchd_running() if ovs.private else ovs.ovsdb_running(),
                        switches=switches)
