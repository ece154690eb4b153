"""Active/standby servers in the plan (pure): which server this is, the pair's plan, roles read from the device.

The plan a server stores and builds (``state.json``'s ``plan``) is its own view of the pair
(docs/high-availability.md): per switch ``trunks`` are its own trunk, ``peer_trunks`` the other server's,
``heartbeat_vid`` the BFD VLAN both carry, and ``standby`` says whether the device's VLANs are on the peer's trunk
(then its br-of connects to no controller). Both views of one deployment describe the same device config
(:meth:`harmless.plan.SwitchPlan.trunk_changes`), so the standby's view, taken as active, is the fencing candidate.

Which trunk carries the VLANs is read from the device, never assumed: :func:`device_role`.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Literal

from harmless.errors import InputError
from harmless.inventory import Inventory, Switch
from harmless.plan import Plan, SwitchPlan, TrunkPlan
from harmless.switch_drivers.base import DeviceFacts, PortVlanState

#: the environment variable naming the server this process runs on (``ha.servers[].name``)
SERVER_ENV = "HARMLESS_HA_SERVER"

Role = Literal["active", "standby", "neither", "both"]


def this_server(inv: Inventory, src: str, name: str | None = None) -> str | None:
    """The name of this server in the inventory's ``ha`` pair: ``name`` (``--server``), else ``$HARMLESS_HA_SERVER``;
    None when the inventory has no ``ha`` section.

    Raises:
        InputError: ``ha`` is set but this server's name is not given or is not one of its servers.
    """
    if inv.ha is None:
        return None
    names = [s.name for s in inv.ha.servers]
    got = name or os.environ.get(SERVER_ENV)
    if not got:
        raise InputError(f"{src}: ha", "this inventory names two servers but not which one this is",
                         f"set {SERVER_ENV} to {names[0]} or {names[1]} (the systemd units read it from "
                         "/etc/harmless/harmless.env), or pass --server")
    if got not in names:
        raise InputError(f"{src}: ha", f"this server is {got!r} ({SERVER_ENV} / --server), which is not one of "
                         f"ha.servers", f"use one of: {', '.join(names)}")
    return got


def local_inventory(inv: Inventory, me: str | None, own_trunks_only: bool = False) -> Inventory:
    """What server ``me`` plans from (its own trunk first, its own netns) or, with ``own_trunks_only``, builds
    (:meth:`harmless.inventory.Inventory.for_server`); the inventory itself without ``ha``."""
    return inv if me is None else inv.for_server(me, own_trunks_only)


def choose_heartbeat_vid(sw: Switch, facts: DeviceFacts, used: set[int], previous: int | None,
                         where: str) -> int:
    """The heartbeat VID of ``sw``: the inventory's, else the previous plan's, else the highest VID of ``vlan_range``
    that no port of the plan (``used``) and no VLAN of the device has.

    Raises:
        InputError: the VID is a port's, or the range has none left.
    """
    vid = sw.heartbeat_vid or previous
    if vid is not None:
        if vid in used:
            raise InputError(f"{where}.heartbeat_vid", f"VID {vid} is an access port's in the plan",
                             "set heartbeat_vid to a VID no port has")
        return vid
    lo, hi = sw.vid_range()
    for v in range(hi, lo - 1, -1):
        if v not in used and v not in facts.vlans and not (sw.driver in ("ios", "netmiko_cli") and 1002 <= v <= 1005):
            return v
    raise InputError(f"{where}.vlan_range", f"{sw.vlan_range} has no free VID left for the heartbeat",
                     "widen vlan_range or set heartbeat_vid")


def pair_switch(sp: SwitchPlan, inv: Inventory, me: str, facts: DeviceFacts, previous: SwitchPlan | None,
                where: str) -> SwitchPlan:
    """One switch's plan, made from server ``me``'s :func:`local_inventory` (every trunk, its own first), split for
    the pair as the active server's view: ``trunks`` its own, ``peer_trunks`` the other's (carrying the same VIDs
    when it takes over), the heartbeat VLAN and BFD timers.

    Raises:
        InputError: see :func:`choose_heartbeat_vid`.
    """
    sw = next(s for s in inv.switches if s.name == sp.name)
    own = {sw.canonical(t.switch_port) for t in sw.trunks if t.server == me}
    vids = tuple(sorted(p.vid for p in sp.ports))
    mine = tuple(replace(t, vids=vids) for t in sp.trunks if sw.canonical(t.switch_port) in own)
    peer = tuple(replace(t, vids=vids) for t in sp.trunks if sw.canonical(t.switch_port) not in own)
    hb = choose_heartbeat_vid(sw, facts, set(vids), previous.heartbeat_vid if previous else None, where)
    ports = tuple(replace(p, trunk=mine[0].switch_port) for p in sp.ports) if mine else sp.ports
    return replace(sp, trunks=mine, ports=ports, heartbeat_vid=hb, heartbeat_ms=inv.ha.interval_ms,
                   heartbeat_mult=inv.ha.multiplier, server=me, peer=inv.ha.peer(me).name, peer_trunks=peer,
                   standby=False)


def pair_plan(plan: Plan, inv: Inventory, me: str | None, facts: dict[str, DeviceFacts],
              previous: Plan | None, src: str) -> Plan:
    """The plan of server ``me`` split for the pair (:func:`pair_switch` per switch, ``me`` active); the plan itself
    without ``ha``."""
    if me is None or inv.ha is None:
        return plan
    prev = {sp.name: sp for sp in previous.switches} if previous else {}
    index = {sw.name: i for i, sw in enumerate(inv.switches)}
    return Plan(tuple(pair_switch(sp, inv, me, facts[sp.name], prev.get(sp.name),
                                  f"{src}: switches[{index[sp.name]}]") for sp in plan.switches))


def peer_view(sp: SwitchPlan, peer: str) -> SwitchPlan:
    """The same switch plan as the other server of the pair sees it: its trunk and the peer's swapped, every port
    on its trunk, the role flipped (the device config both describe is the same). Pure."""
    own = sp.peer_trunks[0].switch_port
    return replace(sp, trunks=sp.peer_trunks, peer_trunks=sp.trunks, server=peer, peer=sp.server,
                   standby=not sp.standby,
                   ports=tuple(replace(p, trunk=own) for p in sp.ports))


def with_roles(plan: Plan, standby: dict[str, bool]) -> Plan:
    """``plan`` with each named switch's ``standby`` flag set as given (others unchanged). Pure."""
    return Plan(tuple(replace(sp, standby=standby[sp.name]) if sp.name in standby else sp for sp in plan.switches))


def _carries(trunks: tuple[TrunkPlan, ...], port_vids: set[int], ports: dict[str, PortVlanState],
             canonical) -> bool:
    """True when one of ``trunks`` carries any of ``port_vids`` on the device (allowed list None = every VLAN)."""
    by_name = {canonical(n): p for n, p in ports.items()}
    for t in trunks:
        p = by_name.get(canonical(t.switch_port))
        if p is None or p.mode != "trunk":
            continue
        if p.allowed_vids is None or port_vids & set(p.allowed_vids):
            return True
    return False


def device_role(sp: SwitchPlan, ports: dict[str, PortVlanState], canonical=lambda n: n) -> Role:
    """This server's role for one switch, as the device's config says (the arbiter, docs/high-availability.md):
    ``active`` when only its own trunk carries the ports' VIDs, ``standby`` when only the peer's does, ``neither``
    (no trunk forwards: an interrupted fencing commit or a change by hand) or ``both`` (a loop: only a change by hand
    can make it; HARMLESS's commits always set both trunks). Pure.

    Args:
        sp: this server's view of the switch.
        ports: the device's per-port VLAN state (:attr:`DeviceFacts.ports` or a driver's ``parse_ports``).
        canonical: the switch OS's canonical interface name (``Gi0/1`` = ``GigabitEthernet0/1``).
    """
    vids = {p.vid for p in sp.ports}
    mine = _carries(sp.trunks, vids, ports, canonical)
    theirs = _carries(sp.peer_trunks, vids, ports, canonical)
    return {(True, False): "active", (False, True): "standby", (False, False): "neither",
            (True, True): "both"}[(mine, theirs)]


def refuse_on_standby(previous: Plan | None, src: str) -> None:
    """``up`` runs on the active server only: raise InputError when this server is the standby of a deployed switch
    (its state says so), naming the fix."""
    standby = [sp.name for sp in (previous.switches if previous else ()) if sp.standby]
    if standby:
        raise InputError(src, f"this server is the standby of {', '.join(standby)} (the switch carries HARMLESS's "
                         "VLANs on the other server's trunk)",
                         "run harmless up on the active server, or harmless failover here first; nothing was changed")
