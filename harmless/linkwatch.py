"""Link-state mirroring: a legacy access port going down or up shows up at the controller as an OpenFlow port-status.

``harmless watch`` polls every switch of the deployment (driver ``link_states()``, i.e. NAPALM ``get_interfaces``)
every ``interval`` seconds and mirrors each migrated port's link onto its br-of port:

* link down (or admin down) on the legacy switch -> the br-of port gets ``NO_RECV NO_FWD NO_PACKET_IN``
  (``ovs-ofctl mod-port``): OVS sends OFPT_PORT_STATUS (reason MODIFY) to every controller and the port stops
  forwarding, as a dead link would;
* link up -> those bits are cleared, another port-status.

Why config bits and not ``OFPPS_LINK_DOWN``: br-of ports are OVS patch ports, whose netdev has no carrier (OVS 3.1
always reports them LIVE and ignores ``mod-port down``), so the link-down *state* bit cannot be set on them; the
config bits are the part of the OpenFlow port that OVS lets us change, and every change is reported. A port whose
device link state is unknown is left alone. The bits live in ovs-vswitchd (not OVSDB): each poll compares with the
bridge's port description, so a vswitchd restart is repaired on the next poll.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Callable

from harmless import state as st
from harmless.errors import HarmlessError, InputError
from harmless.inventory import Switch
from harmless.ovs import Ovs
from harmless.plan import Plan, SwitchPlan

#: the OpenFlow port config bits HARMLESS sets on a br-of port whose legacy link is down
DOWN_BITS = ("no-receive", "no-forward", "no-packet-in")
_DOWN_FLAGS = {"NO_RECV", "NO_FWD", "NO_PACKET_IN"}


@dataclass(frozen=True)
class LinkEvent:
    """One mirrored change: ``link`` is ``up`` or ``down`` for br-of port ``ofport`` of ``switch``."""

    switch: str
    interface: str
    ofport: int
    link: str
    device_state: str


def parse_port_config(text: str) -> dict[int, set[str]]:
    """Config flags per OpenFlow port from ``ovs-ofctl -O OpenFlow13 dump-ports-desc BRIDGE``.

    Returns:
        ``{ofport: {"NO_RECV", ...}}`` (empty set = config 0); LOCAL is skipped.
    """
    out: dict[int, set[str]] = {}
    port = None
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+)\(", line)
        if m:
            port = int(m.group(1))
            continue
        if re.match(r"^\s*LOCAL\(", line):
            port = None
            continue
        m = re.match(r"^\s*config:\s*(.*)$", line)
        if m and port is not None:
            out[port] = {f for f in m.group(1).split() if f != "0"}
    return out


def changes(sp: SwitchPlan, device_links: dict[str, str], current: dict[int, set[str]]) -> list[LinkEvent]:
    """Which br-of ports must change (pure).

    Args:
        sp: the switch's plan (migrated ports).
        device_links: ``{interface: "up" | "down" | "admin-down"}`` from the driver; missing = unknown (left alone).
        current: :func:`parse_port_config` of the switch's br-of.

    Returns:
        One :class:`LinkEvent` per port whose br-of config does not match its legacy link.
    """
    out = []
    for p in sp.ports:
        dev = device_links.get(p.interface)
        if dev is None or p.ofport not in current:
            continue
        want_down = dev != "up"
        is_down = _DOWN_FLAGS <= current[p.ofport]
        if want_down != is_down:
            out.append(LinkEvent(sp.name, p.interface, p.ofport, "down" if want_down else "up", dev))
    return out


def apply(ovs: Ovs, sp: SwitchPlan, ev: LinkEvent) -> None:
    """Set or clear :data:`DOWN_BITS` on one br-of port (each change makes OVS send a port-status)."""
    for bit in DOWN_BITS:
        ovs.ofctl("-O", sp.protocols[-1], "mod-port", sp.bridge, str(ev.ofport),
                  bit if ev.link == "down" else bit.replace("no-", ""))


def poll_once(ovs: Ovs, plan: Plan, links: dict[str, dict[str, str]]) -> list[LinkEvent]:
    """Mirror one poll's device link states onto every br-of; return what changed."""
    events = []
    for sp in plan.switches:
        if sp.name not in links:
            continue
        current = parse_port_config(ovs.ofctl("-O", sp.protocols[-1], "dump-ports-desc", sp.bridge))
        for ev in changes(sp, links[sp.name], current):
            apply(ovs, sp, ev)
            events.append(ev)
    return events


def watch(interval: float = 2.0, once: bool = False, on_event: Callable[[LinkEvent], None] = lambda e: None,
          on_error: Callable[[str], None] = lambda m: None) -> None:
    """Poll the deployed switches every ``interval`` seconds and mirror link changes (until Ctrl-C or ``once``).

    Driver sessions stay open between polls and are reopened after an error (reported through ``on_error``, the
    loop goes on). Raises InputError when nothing is deployed or ``interval`` is below 0.5 s.
    """
    from harmless.orchestrator import connect, state_ovs
    if interval < 0.5:
        raise InputError("--interval", f"{interval} s is too short for polling a switch", "use 0.5 s or more")
    s = st.load()
    if not s or not s.get("plan"):
        raise InputError("harmless watch", "nothing is deployed", "run harmless up first")
    plan = Plan.from_dict(s["plan"])
    ovs = state_ovs(s)
    sessions: dict[str, object] = {}
    try:
        while True:
            t0 = time.monotonic()
            links: dict[str, dict[str, str]] = {}
            for sp in plan.switches:
                try:
                    if sp.name not in sessions:
                        sw = Switch.model_validate(s["switches"][sp.name])
                        sessions[sp.name] = connect(sw, f"{s['inventory']}: switch {sp.name}")
                    links[sp.name] = sessions[sp.name].link_states()
                except (HarmlessError, NotImplementedError) as e:
                    on_error(f"{sp.name}: {e or 'the driver cannot read link states'}")
                    drv = sessions.pop(sp.name, None)
                    if drv is not None:
                        drv.close()
            try:
                for ev in poll_once(ovs, plan, links):
                    on_event(ev)
            except HarmlessError as e:
                on_error(str(e))
            if once:
                return
            time.sleep(max(0.0, interval - (time.monotonic() - t0)))
    finally:
        for drv in sessions.values():
            drv.close()
