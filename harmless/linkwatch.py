"""Link-state mirroring: a legacy access port going down or up shows up at every controller as an OpenFlow
port-status with the port's state, ``OFPPS_LINK_DOWN`` or ``OFPPS_LIVE``, as on a hardware OpenFlow switch.

``harmless watch`` polls every switch of the deployment (driver ``link_states()``, i.e. NAPALM ``get_interfaces``)
every ``interval`` seconds and mirrors each migrated port's link onto its br-of port (``docs/link-state.md``):

* link down (or admin down) on the legacy switch -> :func:`harmless.otc.bridges.set_link` switches the br-of
  interface from its patch port to a carrier-less tap of the same name and OpenFlow port number: OVS sends
  OFPT_PORT_STATUS DELETE then ADD with ``state=LINK_DOWN`` to every controller, and nothing passes either way;
* link up -> back to the patch port: DELETE, ADD, MODIFY with ``state=LIVE``.

Why this construction: br-of ports are OVS patch ports, which OVS always reports LIVE (no carrier to drop), and a
port type with a carrier (a veth pair between br-otc and br-of) costs ~99 % of the throughput on OVS-DPDK (every
packet crosses the kernel twice); swapping only while the link is down costs nothing while it is up. The port's
*config* bits (``PORT_DOWN``, ``NO_RECV``, ``NO_FWD``, ``NO_PACKET_IN``) are left to the controller (administrative
down), as the OpenFlow spec means them. The held-down mark lives in OVSDB (``Interface external_ids:harmless-link``),
so it survives an ovs-vswitchd restart and ``harmless up`` keeps it; a port whose device link state is unknown is
left as it is.
"""
from __future__ import annotations

import re
import select
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable, Literal

from pydantic import BaseModel, ConfigDict, field_serializer

from harmless import conformance
from harmless import state as st
from harmless.deployment import connect_deployed, deployed_switch, state_ovs
from harmless.errors import HarmlessError, InputError
from harmless.otc import bridges
from harmless.otc.flows import patch_names
from harmless.ovs import Ovs
from harmless.plan import Plan, SwitchPlan
from harmless.state import DeploymentState
from harmless.switch_drivers.base import SwitchDriver

#: shortest poll interval (s) ``watch`` accepts: one NAPALM get_interfaces over SSH takes 0.2-2 s on real switches
MIN_INTERVAL = 0.5
#: seconds between ``watch``'s checks of each switch's config against the deployment (reading the running config and
#: parsing its port model takes 0.1-2 s on real switches; 0 = never)
DEFAULT_CHECK_INTERVAL = 30.0
#: serialises changes to br-of ports between the threads of one ``harmless watch`` (this link mirror and the port-mod
#: watcher, :mod:`harmless.portmod`); across processes the state lock (:func:`harmless.state.shared_lock`) does
PORTS = threading.Lock()


class LinkEvent(BaseModel):
    """One mirrored change: ``link`` is ``up`` or ``down`` for br-of port ``ofport`` of ``switch``.

    ``detected_at`` is when the device's answer that showed the change arrived, ``applied_at`` when OVS had applied
    it (port-status sent); both ``time.time()`` seconds, 0.0 when not measured. ``model_dump(mode="json")`` is what
    ``harmless watch --json`` prints per change (the times rounded to ms).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    switch: str
    interface: str
    ofport: int
    link: str
    device_state: str
    detected_at: float = 0.0
    applied_at: float = 0.0

    @field_serializer("detected_at", "applied_at", when_used="json")
    def _ms(self, t: float) -> float:
        return round(t, 3)


class DeviceStateEvent(conformance.Difference):
    """A change of how a switch differs from its deployment, as ``harmless watch`` reports it: ``differs`` when a
    :class:`~harmless.conformance.Difference` appears, ``resolved`` when it is gone. ``model_dump(mode="json")`` is the
    ``--json`` line (``"event": "device-state"`` tells it from a link event)."""

    event: Literal["device-state"] = "device-state"
    status: Literal["differs", "resolved"]


@dataclass(frozen=True)
class LinkPoll:
    """One switch's answer in a ``watch`` round: ``links`` as the driver's ``link_states()`` returned them
    (``{interface: "up" | "down" | "admin-down"}``), ``seen`` when the answer arrived (``time.time()`` s)."""

    switch: str
    links: dict[str, str]
    seen: float


def changes(sp: SwitchPlan, device_links: dict[str, str], held: set[int], present: set[int]) -> list[LinkEvent]:
    """Which br-of ports must change (pure).

    Args:
        sp: the switch's plan (migrated ports).
        device_links: ``{interface: "up" | "down" | "admin-down"}`` from the driver; missing = unknown (left alone).
        held: OpenFlow port numbers HARMLESS currently holds link-down (:func:`held_ports`).
        present: OpenFlow port numbers that exist on the switch's br-of.

    Returns:
        One :class:`LinkEvent` per port whose br-of link does not match its legacy link (admin-down counts as down).
    """
    out = []
    for p in sp.ports:
        dev = device_links.get(p.interface)
        if dev is None or p.ofport not in present:
            continue
        want_down = dev != "up"
        if want_down != (p.ofport in held):
            out.append(LinkEvent(switch=sp.name, interface=p.interface, ofport=p.ofport,
                                 link="down" if want_down else "up", device_state=dev))
    return out


def held_ports(sp: SwitchPlan, held_names: set[str]) -> set[int]:
    """OpenFlow port numbers of ``sp`` whose br-of interface is among ``held_names`` (pure)."""
    return {p.ofport for p in sp.ports if patch_names(sp.name, p.ofport)[1] in held_names}


def apply(ovs: Ovs, sp: SwitchPlan, ev: LinkEvent) -> None:
    """Show one change on br-of (:func:`harmless.otc.bridges.set_link`; OVS sends the port-status messages)."""
    bridges.set_link(ovs, sp, ev.ofport, up=ev.link == "up")


def poll_once(ovs: Ovs, plan: Plan, links: dict[str, dict[str, str]],
              detected_at: dict[str, float] | None = None) -> list[LinkEvent]:
    """Mirror one poll's device link states onto every br-of; return what changed.

    Args:
        links: ``{switch: {interface: state}}`` as the drivers returned them (switches missing = not polled).
        detected_at: ``{switch: time.time()}`` when each switch's answer arrived (recorded in the events).
    """
    events = []
    held_names = bridges.held_down(ovs)
    for sp in plan.switches:
        if sp.name not in links:
            continue
        present = set(bridges.parse_ports_desc(ovs.ofctl("-O", "OpenFlow13", "dump-ports-desc", sp.bridge)))
        for ev in changes(sp, links[sp.name], held_ports(sp, held_names), present):
            apply(ovs, sp, ev)
            events.append(ev.model_copy(update={"detected_at": (detected_at or {}).get(sp.name, 0.0),
                                                "applied_at": time.time()}))
    return events


def mirror_at_up(ovs: Ovs, plan: Plan, drivers: dict, progress: Callable[[str], None] = lambda m: None
                 ) -> list[LinkEvent]:
    """One mirror pass at the end of ``harmless up``, with the driver sessions ``up`` already has open, so a port
    whose legacy link is already down is on br-of as LINK_DOWN from the start (not only after ``watch``'s first poll).

    Args:
        drivers: ``{switch: open driver}``; switches without one are skipped.

    Returns:
        The changes made. Never raises for a device or OVS failure: it is reported through ``progress`` and
        ``harmless watch`` mirrors the link on its first poll.
    """
    events = []
    for sp in plan.switches:
        drv = drivers.get(sp.name)
        if drv is None:
            continue
        try:
            links = drv.link_states()
            events += poll_once(ovs, plan, {sp.name: links}, {sp.name: time.time()})
        except NotImplementedError:
            progress(f"{sp.name}: the driver cannot read link states; br-of ports start up (harmless watch "
                     "mirrors nothing for this switch)")
        except HarmlessError as e:
            progress(f"{sp.name}: link states not mirrored at up ({e}); harmless watch does it on its first poll")
    for ev in events:
        progress(f"{ev.switch} {ev.interface}: legacy link {ev.device_state}, br-of port {ev.ofport} built "
                 f"{'LINK_DOWN' if ev.link == 'down' else 'LIVE'}")
    return events


#: syslog messages that announce a link change on the device: Cisco IOS/IOS-XE and Arista EOS ``%LINK-3-UPDOWN`` /
#: ``%LINEPROTO-5-UPDOWN``, Junos ``SNMP_TRAP_LINK_DOWN``/``_UP``, HP ProCurve/Aruba ``port N is now off-line``/``on-line``
LINK_MESSAGE = re.compile(r"%LINK-\d-UPDOWN|%LINEPROTO-\d-UPDOWN|SNMP_TRAP_LINK_(?:DOWN|UP)|is now (?:on|off)-line",
                          re.IGNORECASE)


def syslog_trigger(message: str, source_ip: str, switches_by_ip: dict[str, str]) -> str | None:
    """The switch whose link-state poll a syslog datagram asks for, or None (pure).

    Only a message from a deployed switch's management address that announces a link change counts. The message
    only triggers a poll: the device's own answer (``link_states()``) stays what is mirrored, so a forged datagram
    can make watch poll early but cannot take a port down.

    Args:
        message: the datagram's text (RFC 3164 or 5424).
        source_ip: the sender's address.
        switches_by_ip: ``{management IP: switch name}``.
    """
    name = switches_by_ip.get(source_ip)
    return name if name is not None and LINK_MESSAGE.search(message) else None


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``0.0.0.0:514``, ``[::]:5514``) -> (host, port). Raises InputError naming ``--syslog``."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise InputError("--syslog", f"{text!r} is not HOST:PORT", "give HOST:PORT, e.g. --syslog 0.0.0.0:514")
    return host, int(port)


def _listen(addr: tuple[str, int]) -> socket.socket:
    fam = socket.AF_INET6 if ":" in addr[0] else socket.AF_INET
    sock = socket.socket(fam, socket.SOCK_DGRAM)
    try:
        sock.bind(addr)
    except OSError as e:
        sock.close()
        raise HarmlessError("--syslog", f"cannot listen on {addr[0]}:{addr[1]}/udp ({e.strerror})",
                            "choose a free port, or stop the other syslog receiver") from None
    return sock


def _resolve(hosts: dict[str, str]) -> dict[str, str]:
    """``{switch: host}`` -> ``{IP: switch}`` (names that do not resolve are left out)."""
    out = {}
    for name, host in hosts.items():
        try:
            for info in socket.getaddrinfo(host, None, type=socket.SOCK_DGRAM):
                out[info[4][0]] = name
        except OSError:
            continue
    return out


class Sessions:
    """Driver sessions to the deployed switches, opened on first use and kept open between polls (``watch`` and the
    exporter's device poller); a session that failed is dropped (:meth:`drop`) and reopened on its next use."""

    def __init__(self) -> None:
        self._open: dict[str, SwitchDriver] = {}

    def get(self, s: DeploymentState, name: str) -> SwitchDriver:
        """The open session to switch ``name`` of ``s`` (:func:`harmless.deployment.connect_deployed`; raises as it
        does, e.g. DeviceError, KeyError for a switch the state does not record)."""
        if name not in self._open:
            self._open[name] = connect_deployed(s, name)
        return self._open[name]

    def names(self) -> list[str]:
        """The switches with an open session."""
        return list(self._open)

    def drop(self, name: str) -> None:
        """Close and forget the session to ``name`` (a failure to close a dead session is ignored)."""
        drv = self._open.pop(name, None)
        if drv is not None:
            try:
                drv.close()
            except Exception:  # noqa: BLE001 - closing a dead session
                pass

    def close_all(self) -> None:
        for name in self.names():
            self.drop(name)


class _Watch:
    """One ``harmless watch`` run: the deployment it mirrors, its sessions and where it reports."""

    def __init__(self, s: DeploymentState, on_event: Callable[[LinkEvent], None], on_error: Callable[[str], None],
                 on_state: Callable[[DeviceStateEvent], None]):
        self.s = s
        self.plan = Plan.from_dict(s.plan)
        self.by_name = {sp.name: sp for sp in self.plan.switches}
        self.ovs = state_ovs(s)
        self.sessions = Sessions()
        self.on_event, self.on_error, self.on_state = on_event, on_error, on_state
        self.differences: dict[str, list[conformance.Difference]] = {}    # what was last reported per switch

    def check(self, sp: SwitchPlan) -> None:
        """Compare the switch's port model with its plan (:func:`harmless.conformance.check`); report what appeared
        (``differs``) and what is gone (``resolved``) since the last check."""
        try:
            now = conformance.check(sp, self.sessions.get(self.s, sp.name).port_model(), self.s.inventory)
        except NotImplementedError:
            return                               # a driver without a port model: nothing to compare
        except (HarmlessError, ValueError) as e:
            self.on_error(f"{sp.name}: its configuration was not checked ({e})")
            self.sessions.drop(sp.name)
            return
        before = self.differences.get(sp.name, [])
        self.differences[sp.name] = now
        for f in now:
            if f not in before:
                self.on_state(DeviceStateEvent(status="differs", **f.model_dump()))
        for f in before:
            if f not in now:
                self.on_state(DeviceStateEvent(status="resolved", **f.model_dump()))

    def read(self, sp: SwitchPlan) -> LinkPoll | None:
        """The switch's link states (None, reported, when it cannot answer: its session is dropped)."""
        try:
            links = self.sessions.get(self.s, sp.name).link_states()
            return LinkPoll(switch=sp.name, links=links, seen=time.time())
        except (HarmlessError, NotImplementedError) as e:
            self.on_error(f"{sp.name}: {e or 'the driver cannot read link states'}")
            self.sessions.drop(sp.name)
            return None

    def mirror(self, sp: SwitchPlan, answer: LinkPoll) -> None:
        """Mirror one answer onto br-of under the state lock (never while up/down/recover change things)."""
        try:
            with st.shared_lock("harmless watch (mirroring link state)"), PORTS:
                for ev in poll_once(self.ovs, self.plan, {sp.name: answer.links}, {sp.name: answer.seen}):
                    self.on_event(ev)
        except st.LockedError as e:
            self.on_error(f"{sp.name}: not mirrored this round: {e.problem}")
        except HarmlessError as e:
            self.on_error(f"{sp.name}: {e}")

    def poll(self, sp: SwitchPlan) -> None:
        answer = self.read(sp)
        if answer is not None:
            self.mirror(sp, answer)

    def round(self) -> None:
        """Poll every switch; each switch's answer is mirrored at once (no wait for the others)."""
        for sp in self.plan.switches:
            self.poll(sp)

    def wait(self, deadline: float, sock: socket.socket | None, by_ip: dict[str, str]) -> None:
        """Until ``deadline`` (monotonic s): poll a switch at once when its syslog announces a link change."""
        while (left := deadline - time.monotonic()) > 0:
            if sock is None:
                time.sleep(left)
                return
            if not select.select([sock], [], [], left)[0]:
                return
            data, src = sock.recvfrom(8192)
            name = syslog_trigger(data.decode("utf-8", "replace"), src[0], by_ip)
            if name is not None:
                self.poll(self.by_name[name])


def watch(interval: float = 1.0, once: bool = False, on_event: Callable[[LinkEvent], None] = lambda e: None,
          on_error: Callable[[str], None] = lambda m: None, syslog: tuple[str, int] | None = None,
          check_interval: float = DEFAULT_CHECK_INTERVAL,
          on_state: Callable[[DeviceStateEvent], None] = lambda e: None) -> None:
    """Poll the deployed switches every ``interval`` seconds and mirror link changes (until Ctrl-C or ``once``).

    Driver sessions stay open between polls and are reopened after an error (reported through ``on_error``, the
    loop goes on). With ``syslog`` (host, port) watch also listens for the switches' syslog over UDP: a link-change
    message from a switch's management address (:func:`syslog_trigger`) polls that switch at once, so the reaction
    no longer waits for the next interval (the switch must log to this host: e.g. IOS ``logging host <ip>``).

    Every ``check_interval`` seconds (and at the first round; 0 = never) each switch's config is also compared with
    its deployment (:func:`harmless.conformance.check`: a reload without the migration, a migrated port or trunk
    changed by hand): each difference is reported once through ``on_state`` when it appears and once when it is
    gone (:class:`DeviceStateEvent`). Watch reports it; it changes nothing on the switch.

    Raises:
        InputError: nothing is deployed or ``interval`` is below :data:`MIN_INTERVAL`.
        HarmlessError: the syslog port cannot be bound.
    """
    if interval < MIN_INTERVAL:
        raise InputError("--interval", f"{interval} s is too short for polling a switch",
                         f"use {MIN_INTERVAL} s or more")
    s = st.load()
    if not s or not s.plan:
        raise InputError("harmless watch", "nothing is deployed", "run harmless up first")
    w = _Watch(s, on_event, on_error, on_state)
    sock = _listen(syslog) if syslog else None
    by_ip = _resolve({n: deployed_switch(s, n).host for n in w.by_name if n in s.switches}) if sock else {}
    checked = None
    try:
        while True:
            t0 = time.monotonic()
            w.round()
            if check_interval > 0 and (checked is None or t0 - checked >= check_interval):
                checked = t0
                for sp in w.plan.switches:
                    if sp.name in s.switches:
                        w.check(sp)
            if once:
                return
            w.wait(t0 + interval, sock, by_ip)
    finally:
        if sock is not None:
            sock.close()
        w.sessions.close_all()
