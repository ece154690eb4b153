"""Port-mod from a controller, as a hardware switch does it (issue #21; docs/link-state.md, "Port-mod").

A controller that sends OFPT_PORT_MOD with ``OFPPC_PORT_DOWN`` ("port is administratively down", OpenFlow 1.3.5
§7.2.1) expects what a hardware OpenFlow switch does: the port passes nothing either way, its config shows
``PORT_DOWN``, its link goes down (the host behind it loses its link) and every other controller gets a port-status;
clearing the bit brings it back. Open vSwitch does that for a port that is a kernel device (a veth, a tap): it sets
the device down (``ofproto/ofproto.c`` ``update_port_config`` -> ``netdev_turn_flags_off(NETDEV_UP)``).

br-of ports are patch ports, and a patch port has no flags: ``lib/netdev-vport.c`` ``netdev_vport_update_flags``
returns EOPNOTSUPP, so OVS drops the request without a reply and without a port-status; its only trace is one line of
ovs-vswitchd's log, ``netdev|WARN|failed to set flags for network device sw1-p7: Operation not supported``
(:data:`WARN_RE`). This module, run by ``harmless watch``, carries the request out:

* it follows that log (the netdev module's rate limit switched off, ``vlog/disable-rate-limit netdev``) and the
  placeholder taps' flags (``ip monitor link``), :class:`PortModWatcher`;
* a port-mod down on a patch port: the port becomes the tap placeholder that ``watch`` uses for a link that is down,
  with the tap administratively down (:func:`harmless.otc.bridges.set_admin`): OVS reports ``config: PORT_DOWN`` and
  ``state: LINK_DOWN`` to every controller (DELETE, ADD, MODIFY) and nothing passes either way;
* on a placeholder OVS carries a port-mod out itself (it sets the tap's flag); HARMLESS reads the flag and follows:
  a ``PORT_DOWN`` on a port watch holds link-down is recorded, a cleared one releases the port (it stays link-down
  while the legacy link is down, as a hardware port whose link is still coming up);
* then, with inventory ``openflow.port_down: device`` (the default), the legacy port is shut on the switch so the host
  sees its link go down, once the controller has held it down for :data:`DEVICE_HOLD_S` (a shorter flap stays on
  the server) (:class:`DeviceWorker`): journaled (op ``portmod``: ``portmod.begin`` -> ``state.save`` ->
  ``device.commit`` -> ``device.committed`` -> ``portmod.end``), recorded in ``state.json`` (``port_admin``) before
  the commit, undone when the bit is cleared (only a port HARMLESS shut: one the operator had shut stays shut), and
  ``harmless down`` gives the original config back whatever happened. ``port_down: server`` keeps it on the server.

Interplay with link mirroring: the two marks are independent (:data:`~harmless.otc.bridges.LINK_KEY` is the legacy
link, :data:`~harmless.otc.bridges.ADMIN_KEY` the controller's bit); the port is the placeholder while either is set,
its config shows ``PORT_DOWN`` exactly while the controller's bit is set. Shutting the legacy port makes its link
``admin-down``, which watch mirrors as the link mark, so after the controller clears the bit the port turns LIVE when
the legacy link is back up, as on a hardware switch.
"""
from __future__ import annotations

import os
import re
import select
import threading
import time
from pathlib import Path
from typing import Callable, Literal

from pydantic import BaseModel, ConfigDict, field_serializer

from harmless import journal, linkwatch, procs
from harmless import state as st
from harmless.deployment import connect_deployed, state_ovs
from harmless.errors import HarmlessError, InputError, OvsError
from harmless.linkwatch import PORTS, Sessions
from harmless.otc import bridges
from harmless.otc.flows import patch_names
from harmless.ovs import Ovs
from harmless.plan import Plan, SwitchPlan
from harmless.state import DeploymentState

#: the ovs-vswitchd log line of a port-mod that asked a patch port to go down (lib/netdev.c ``do_update_flags``:
#: "failed to %s flags for network device %s: %s", logged at WARN by the ``netdev`` module)
WARN_RE = re.compile(r"\|netdev\|WARN\|failed to set flags for network device (\S+): Operation not supported")
#: a line of ``ip -o monitor link``: ``5: sw1-p7: <BROADCAST,...> ...`` (veth peers print ``name@peer``)
MONITOR_RE = re.compile(r"^\d+:\s+([^:@\s]+)")
#: the taps' flags and ovs-vswitchd's pid are re-read at least this often (s), whatever the streams say
RECHECK_S = 2.0
#: how long a port-mod waits for the state lock another harmless process holds (s; up/down hold it for minutes)
LOCK_WAIT_S = 10.0
#: after a failed device change, the next try for that port waits this long (s)
DEVICE_RETRY_S = 30.0
#: a port-down shorter than this (s) is a flap, carried out on the server only: the device is shut only for a port
#: the controller still holds down after it. A legacy switch's commit takes seconds (3-10 s in the lab), so the shut
#: of a 1-2 s flap (Faucet's ``flap_all_switch_ports``) would land after the controller brought the port back and
#: take it down a second time; ``harmless watch --device-hold`` changes it
DEVICE_HOLD_S = 5.0

Report = Callable[["AdminEvent"], None]
Say = Callable[[str], None]


class AdminEvent(BaseModel):
    """One step of a port-mod carried out (``harmless watch --json`` prints :meth:`model_dump` with ``mode="json"``).

    Attributes:
        switch, interface, ofport: the migrated port (legacy interface, br-of OpenFlow port).
        admin: ``down`` (the controller set ``OFPPC_PORT_DOWN``) or ``up`` (it cleared it).
        where: ``br-of`` (the server side: port held down or released), ``device`` (the legacy port shut or
            re-enabled) or ``device-left`` (the device was not changed: ``detail`` says why).
        seen: how the request was seen: ``log`` (ovs-vswitchd's line for a patch port) or ``tap`` (the placeholder's
            flag); empty for device steps.
        detail: a short explanation (device steps).
        detected_at, applied_at: ``time.time()`` s when the request was seen and when the step was done (0: not
            measured); rounded to ms in the dump.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    switch: str
    interface: str
    ofport: int
    admin: Literal["down", "up"]
    where: Literal["br-of", "device", "device-left"]
    seen: str = ""
    detail: str = ""
    detected_at: float = 0.0
    applied_at: float = 0.0

    @field_serializer("detected_at", "applied_at", when_used="json")
    def _ms(self, t: float) -> float:
        return round(t, 3)


# ----------------------------------------------------------------------------- pure decisions
def asked_down(lines: list[str]) -> set[str]:
    """br-of interface names that a port-mod asked to go down, from ovs-vswitchd log lines (pure)."""
    return {m.group(1) for ln in lines if (m := WARN_RE.search(ln))}


def admin_changes(sp: SwitchPlan, have: dict[str, set[str]], taps_up: dict[str, bool], asked: set[str],
                  seen_at: float = 0.0) -> list[AdminEvent]:
    """The br-of ports of ``sp`` whose administrative state must change (pure).

    Args:
        sp: the switch's plan.
        have: ``{interface: marks}`` (:func:`harmless.otc.bridges.marks`).
        taps_up: ``{placeholder tap: administratively up}`` (:func:`harmless.otc.bridges.tap_flags`).
        asked: interfaces a port-mod asked down while they were patch ports (:func:`asked_down`).
        seen_at: when the request was seen (``time.time()``), recorded in the events.

    Returns:
        ``down`` for a port asked down (log) or whose placeholder tap a controller took down, not yet held;
        ``up`` for a held port whose tap a controller brought up again.
    """
    out = []
    for p in sp.ports:
        name = patch_names(sp.name, p.ofport)[1]
        marks = have.get(name, set())
        held = bridges.ADMIN_KEY in marks
        admin, seen = None, ""
        if name in asked and not held:
            admin, seen = "down", "log"
        elif marks and name in taps_up and taps_up[name] == held:
            admin, seen = ("up" if held else "down"), "tap"
        if admin:
            out.append(AdminEvent(switch=sp.name, interface=p.interface, ofport=p.ofport, admin=admin,
                                  where="br-of", seen=seen, detected_at=seen_at))
    return out


def device_step(shut: bool, recorded: bool, device_link: str | None) -> str | None:
    """What to do on the device for one port (pure): ``"shut"``, ``"no-shut"`` or None (nothing).

    Args:
        shut: the controller holds the port down.
        recorded: HARMLESS shut this legacy port (``state.port_admin``).
        device_link: the device's link state of the port (``admin-down`` when it is shut), None when unknown.

    A port the operator had shut already is left alone both ways (HARMLESS undoes only what it did).
    """
    if shut:
        return None if recorded or device_link == "admin-down" else "shut"
    return "no-shut" if recorded else None


def parse_file_level(vlog_list: str, module: str = "netdev") -> str | None:
    """The file destination's level of ``module`` in ``ovs-appctl vlog/list`` output (``INFO``...), or None (pure)."""
    for line in vlog_list.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == module:
            return parts[3]
    return None


# ----------------------------------------------------------------------------- what OVS gives us
def prepare_ovs(ovs: Ovs) -> tuple[Path, list[str]]:
    """Make ovs-vswitchd log every refused port-mod: the ``netdev`` module's rate limit off and its file level at
    least WARN (raised to WARN when it is lower). Runs again after every ovs-vswitchd restart (settings made with
    ``ovs-appctl`` do not survive one).

    Returns:
        ``(log file, what was changed)``.

    Raises:
        OvsError: ovs-vswitchd does not answer, or its log file is missing (then port-mods cannot be seen).
    """
    log = ovs.vswitchd_log
    if not log.exists():
        raise OvsError(str(log), "ovs-vswitchd's log file is missing, so a controller's port-mod on br-of cannot be "
                       "seen", "run ovs-vswitchd with --log-file (the Debian package does), or harmless watch "
                       "--no-port-mod")
    ovs.appctl("vlog/disable-rate-limit", "netdev")
    changed = []
    if parse_file_level(ovs.appctl("vlog/list")) in ("OFF", "EMER", "ERR"):
        ovs.appctl("vlog/set", "netdev:file:warn")
        changed.append("ovs-vswitchd netdev file log level raised to WARN")
    return log, changed


class _Streams:
    """``tail -F`` of ovs-vswitchd's log and ``ip -o monitor link`` in its namespace, read without blocking."""

    def __init__(self, ovs: Ovs, log: Path):
        self.procs = [procs.spawn_piped(["tail", "-F", "-n", "0", str(log)]),
                      procs.spawn_piped(["ip", "-o", "monitor", "link"], netns=ovs.netns)]
        self.log_fd, self.mon_fd = (p.stdout.fileno() for p in self.procs)
        self._buf = {self.log_fd: b"", self.mon_fd: b""}
        for fd in self._buf:
            os.set_blocking(fd, False)

    @property
    def fds(self) -> list[int]:
        return list(self._buf)

    def lines(self, fd: int) -> list[str]:
        """Complete lines that arrived on ``fd`` (a partial last line waits for the next read)."""
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            data = b""
        if not data and any(p.poll() is not None for p in self.procs):
            raise OvsError("harmless watch", "following ovs-vswitchd's log or the link monitor stopped",
                           "see that tail and ip are installed; watch restarts them")
        *done, self._buf[fd] = (self._buf[fd] + data).split(b"\n")
        return [x.decode("utf-8", "replace") for x in done]

    def close(self) -> None:
        for p in self.procs:
            procs.stop(p, timeout=2)


# ----------------------------------------------------------------------------- the server side
class PortModWatcher(threading.Thread):
    """Carries controllers' port-mods out on br-of at once, and hands the device side to a :class:`DeviceWorker`.

    Args:
        s: the deployment state (its plan and OVS).
        on_event: called with every :class:`AdminEvent`.
        on_error: called with a one-line problem (the watcher goes on; a lost stream is reopened).
        device: the worker that shuts/re-enables legacy ports, None for server-side only.
    """

    def __init__(self, s: DeploymentState, on_event: Report, on_error: Say, device: "DeviceWorker | None"):
        super().__init__(name="harmless-portmod", daemon=True)
        self.plan = Plan.from_dict(s.plan)
        self.ovs = state_ovs(s)
        self.on_event, self.on_error, self.device = on_event, on_error, device
        self._halt = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self.ready = threading.Event()

    def stop(self) -> None:
        self._halt.set()
        os.write(self._wake_w, b"x")

    def run(self) -> None:
        streams, pid = None, None
        while not self._halt.is_set():
            try:
                if streams is None or pid != self.ovs.vswitchd_pid():
                    streams, pid = self._open(streams)
                self._step(streams)
            except HarmlessError as e:
                self.on_error(f"port-mod: {e}")
                if streams is not None:
                    streams.close()
                streams = None
                self._halt.wait(1.0)
        if streams is not None:
            streams.close()

    def _open(self, old: _Streams | None) -> tuple[_Streams, int | None]:
        """(Re)start the streams after a start or an ovs-vswitchd restart, then catch up with the taps."""
        if old is not None:
            old.close()
        log, changed = prepare_ovs(self.ovs)
        for c in changed:
            self.on_error(f"port-mod: {c}")
        streams = _Streams(self.ovs, log)
        self.reconcile(set(), time.time())
        self.ready.set()
        return streams, self.ovs.vswitchd_pid()

    def _step(self, streams: _Streams) -> None:
        """Wait for a log line, a link change or the recheck time; act on what came."""
        ready = select.select([*streams.fds, self._wake_r], [], [], RECHECK_S)[0]
        seen = time.time()
        if self._wake_r in ready:
            os.read(self._wake_r, 64)
        asked = asked_down(streams.lines(streams.log_fd)) if streams.log_fd in ready else set()
        links = streams.lines(streams.mon_fd) if streams.mon_fd in ready else []
        if asked or links or not ready:
            self.reconcile(asked, seen)

    def reconcile(self, asked: set[str], seen: float) -> list[AdminEvent]:
        """Hold down / release every br-of port whose controller's wish changed (under the state lock)."""
        done = []
        with st.shared_lock("harmless watch (port-mod)", LOCK_WAIT_S), PORTS:
            have = bridges.marks(self.ovs)
            taps = bridges.tap_flags(self.ovs, set(have)) if have else {}
            for sp in self.plan.switches:
                for ev in admin_changes(sp, have, taps, asked, seen):
                    bridges.set_admin(self.ovs, sp, ev.ofport, ev.admin == "down", have)
                    have = bridges.marks(self.ovs)
                    done.append(ev.model_copy(update={"applied_at": time.time()}))
        for ev in done:
            self.on_event(ev)
            sp = self.plan.switch(ev.switch)
            if self.device is not None and sp.port_down == "device":
                self.device.ask(ev.switch, ev.interface, ev.ofport, ev.admin == "down")
        return done


# ----------------------------------------------------------------------------- the device side
class DeviceWorker(threading.Thread):
    """Shuts and re-enables legacy ports for the port-mods, one journaled commit at a time, latest wish per port.

    A port whose wish changes again while its commit runs gets one more commit afterwards (nothing is queued twice).
    A shut waits ``hold_s`` seconds (:data:`DEVICE_HOLD_S`): a port the controller releases within that time is never
    shut on the device (a flap). Its own driver sessions (:class:`harmless.linkwatch.Sessions`), apart from the link
    poll's.
    """

    def __init__(self, on_event: Report, on_error: Say, hold_s: float = DEVICE_HOLD_S):
        super().__init__(name="harmless-portmod-device", daemon=True)
        self.on_event, self.on_error, self.hold_s = on_event, on_error, hold_s
        self.want: dict[tuple[str, str], tuple[int, bool]] = {}
        self.asked_at: dict[tuple[str, str], float] = {}
        self.failed_at: dict[tuple[str, str], float] = {}
        self.cv = threading.Condition()
        self.sessions = Sessions()
        self._quit = False

    def ask(self, switch: str, interface: str, ofport: int, shut: bool) -> None:
        """The controller holds (``shut``) or released this port: make the device follow."""
        with self.cv:
            self.want[(switch, interface)] = (ofport, shut)
            self.asked_at[(switch, interface)] = time.monotonic()
            self.failed_at.pop((switch, interface), None)
            self.cv.notify()

    def stop(self) -> None:
        with self.cv:
            self._quit = True
            self.cv.notify()

    def run(self) -> None:
        try:
            while True:
                with self.cv:
                    while not self._quit and not self._due():
                        self.cv.wait(self._next_s())
                    if self._quit:
                        return
                    key = self._due()[0]
                    ofport, shut = self.want.pop(key)
                self._one(key, ofport, shut)
        finally:
            self.sessions.close_all()

    def _due_at(self, key: tuple[str, str]) -> float:
        """When (monotonic s) the wish of ``key`` may be carried out: after a failure's retry time, a shut after the
        hold."""
        at = self.failed_at.get(key, -DEVICE_RETRY_S) + DEVICE_RETRY_S
        return max(at, self.asked_at.get(key, 0.0) + self.hold_s) if self.want[key][1] else at

    def _due(self) -> list[tuple[str, str]]:
        now = time.monotonic()
        return [k for k in self.want if self._due_at(k) <= now]

    def _next_s(self) -> float:
        """Seconds until the next wish is due (at most :data:`DEVICE_RETRY_S`)."""
        now = time.monotonic()
        return min([DEVICE_RETRY_S] + [max(0.01, self._due_at(k) - now) for k in self.want])

    def _one(self, key: tuple[str, str], ofport: int, shut: bool) -> None:
        """One port's device step; a failure is reported and retried after :data:`DEVICE_RETRY_S` (unless the wish
        changed meanwhile)."""
        switch, interface = key
        try:
            ev = device_change(switch, interface, ofport, shut, self.sessions)
            if ev is not None:
                self.on_event(ev)
        except Exception as e:  # noqa: BLE001 - a device or driver failure must not end the worker: report, retry
            self.sessions.drop(switch)
            why = str(e) if isinstance(e, HarmlessError) else f"{type(e).__name__}: {e}"
            self.on_error(f"port-mod: {switch} {interface}: the device was not changed ({why})")
            with self.cv:
                self.want.setdefault(key, (ofport, shut))
                self.failed_at[key] = time.monotonic()


def device_change(switch: str, interface: str, ofport: int, shut: bool, sessions: Sessions) -> AdminEvent | None:
    """Shut (``shut``) or re-enable one legacy port as :func:`device_step` says, journaled, under the state lock.

    Returns:
        The event (``device`` or ``device-left``), or None when nothing was to do.

    Raises:
        InputError: an unfinished journal of another run waits (``harmless recover``).
        DeviceError, CommitError: the device could not be read or changed (its config is the one before).
        LockedError: another harmless holds the state lock.
    """
    t0 = time.time()
    with st.shared_lock("harmless watch (port-mod on the device)", LOCK_WAIT_S):
        s = st.load()
        if not s or not s.plan or switch not in s.switches:
            return None
        recorded = interface in s.port_admin.get(switch, {})
        if shut == recorded:
            return None
        drv = sessions.get(s, switch)
        link = drv.link_states().get(interface) if shut else None
        step = device_step(shut, recorded, link)
        base = dict(switch=switch, interface=interface, ofport=ofport, admin="down" if shut else "up",
                    detected_at=t0)
        if step is None:
            return AdminEvent(**base, where="device-left", detail="the operator had shut it already",
                              applied_at=time.time())
        _journaled(s, drv, switch, interface, ofport, step)
        return AdminEvent(**base, where="device", detail=step, applied_at=time.time())


def _journaled(s: DeploymentState, drv, switch: str, interface: str, ofport: int, step: str) -> None:
    """``portmod.begin`` -> ``state.save`` -> ``device.commit`` -> ``device.committed`` -> ``portmod.end``.

    The state is written first (what the device will be), so a run killed in the commit leaves a journal and a
    state that ``harmless recover`` finishes (:func:`finish`) and ``harmless down`` undoes. A failed commit leaves the
    device as before (:meth:`~harmless.switch_drivers.base.SwitchDriver.apply`) and puts the state back.
    """
    journal.tidy()
    recs = journal.unfinished()
    if recs and not journal.is_finished(recs):
        raise InputError("harmless watch", journal.describe(recs), "run harmless recover first")
    admin = {n: dict(v) for n, v in s.port_admin.items()}
    if step == "shut":
        admin.setdefault(switch, {})[interface] = {"ofport": ofport,
                                                   "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    else:
        admin.get(switch, {}).pop(interface, None)
    new = s.model_copy(update={"port_admin": {n: v for n, v in admin.items() if v}})
    j = journal.Journal("portmod")
    j.record("portmod.begin", switch=switch, interface=interface, ofport=ofport, action=step)
    j.record("state.save")
    st.save(new)
    try:
        j.record("device.commit", switch=switch, interface=interface, action=step)
        drv.apply(drv.render_port_admin(interface, enabled=step == "no-shut"))
    except BaseException as e:
        j.record("rollback.begin", reason=str(e)[:300])
        st.save(s)
        j.record("rollback.end")
        j.close()
        raise
    j.record("device.committed", switch=switch)
    j.record("portmod.end")
    j.close()


def finish(recs: list[dict], progress: Say = lambda m: None) -> dict:
    """Finish an interrupted port-mod device change (``harmless recover``; the caller holds the lock): make the
    device's port what the state says (shut when ``port_admin`` records it, else enabled), then archive the journal.

    Returns:
        ``{"switch", "interface", "shut": bool}`` of the port finished, or ``{}`` when the journal named none.
    """
    begin = next((r for r in recs if r.get("step") == "portmod.begin"), None)
    s = st.load()
    progress(f"finishing {journal.describe(recs)}")
    out: dict = {}
    if begin and s and begin["switch"] in s.switches:
        shut = begin["interface"] in s.port_admin.get(begin["switch"], {})
        drv = connect_deployed(s, begin["switch"])
        try:
            drv.apply(drv.render_port_admin(begin["interface"], enabled=not shut))
        finally:
            drv.close()
        out = {"switch": begin["switch"], "interface": begin["interface"], "shut": shut}
    journal.archive("interrupted")
    return out


# ----------------------------------------------------------------------------- harmless watch
def start(s: DeploymentState, on_event: Report, on_error: Say, wait_s: float = 10.0,
          hold_s: float = DEVICE_HOLD_S) -> PortModWatcher:
    """Start the port-mod watcher (and its device worker when a switch has ``port_down: device``, shutting a port the
    controller holds down for ``hold_s`` seconds); returns once it follows ovs-vswitchd (or after ``wait_s`` seconds,
    the error reported through ``on_error``)."""
    plan = Plan.from_dict(s.plan)
    dev = (DeviceWorker(on_event, on_error, hold_s) if any(sp.port_down == "device" for sp in plan.switches)
           else None)
    w = PortModWatcher(s, on_event, on_error, dev)
    if dev is not None:
        dev.start()
    w.start()
    w.ready.wait(wait_s)
    return w


def stop(w: PortModWatcher | None) -> None:
    """Stop a watcher from :func:`start` and its device worker (a running commit finishes first)."""
    if w is None:
        return
    w.stop()
    w.join(5)
    if w.device is not None:
        w.device.stop()
        w.device.join(300)


def watch(interval: float = 1.0, once: bool = False, on_event: Callable = lambda e: None,
          on_admin: Report = lambda e: None, on_error: Say = lambda m: None,
          syslog: tuple[str, int] | None = None, port_mod: bool = True, hold_s: float = DEVICE_HOLD_S,
          **checks) -> None:
    """``harmless watch``: link mirroring (:func:`harmless.linkwatch.watch`; ``checks``: its ``check_interval`` and
    ``on_state``, the device-state checks) and, beside it, the port-mod watcher (:func:`start`, device shuts after
    ``hold_s`` s; not with ``once`` or ``port_mod=False``), until Ctrl-C.

    Raises:
        As :func:`harmless.linkwatch.watch`; OvsError when ovs-vswitchd's log cannot be followed is reported through
        ``on_error`` (link mirroring goes on).
    """
    if interval < linkwatch.MIN_INTERVAL or once or not port_mod:
        linkwatch.watch(interval, once, on_event, on_error, syslog, **checks)
        return
    s = st.load()
    w = start(s, on_admin, on_error, hold_s=hold_s) if s and s.plan else None
    try:
        linkwatch.watch(interval, once, on_event, on_error, syslog, **checks)
    finally:
        stop(w)


__all__ = ["AdminEvent", "DeviceWorker", "PortModWatcher", "admin_changes", "asked_down", "device_change",
           "device_step", "finish", "prepare_ovs", "start", "stop", "watch"]
