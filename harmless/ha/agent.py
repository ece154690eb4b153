"""``harmless ha agent``: the peer agent each server of an active/standby pair runs (docs/high-availability.md).

Every ``interval_ms`` it

1. reads its own data path (:class:`harmless.ha.sense.Local`: BFD per switch, trunk carrier, ovs-vswitchd alive);
2. sends the peer an authenticated UDP heartbeat (:mod:`harmless.ha.wire`): its roles, when it last read the
   devices, and per switch whether its own data path works;
3. decides per switch (:func:`harmless.ha.decide.decide`) and acts in a worker thread, one action at a time, each
   under the state lock: ``fence`` (:func:`harmless.ha.failover.failover`, then it tells the peer), ``reread``
   (:func:`harmless.ha.failover.converge`: read the device, take the role it says; also after a freeze, when the
   peer claims a switch it also holds, and to rebuild its own bridges when its ovs-vswitchd died).

On TCP (same port) it answers the peer's requests: ``replicate`` (store the state and build the bridges as standby,
:func:`harmless.ha.replica.store`), ``taking-over``/``not-taking-over`` (the peer's fencing commit is on the way, or
failed: an active server whose ovs-vswitchd died does not rebuild itself meanwhile), ``fenced`` (the peer took these
switches over: drop the controllers at once),
``teardown`` (``down`` ran on the peer, :func:`harmless.ha.replica.teardown`). It writes its live view to
``ha-agent.json``. Its log lines go to stdout (the systemd journal); the shared secret is never printed.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from harmless import state as st
from harmless.deployment import server_ovs, state_ovs
from harmless.errors import HarmlessError
from harmless.ha import record, replica, wire
from harmless.ha.decide import Sight, decide, healthy, mgmt_alive
from harmless.ha.failover import converge, failover, read_roles
from harmless.ha.plan import local_inventory
from harmless.ha.sense import Local, vswitchd_state
from harmless.ha.stage import Stager, warm
from harmless.inventory import load_inventory, parse_agent
from harmless.plan import Plan

Say = Callable[[str], None]
#: a standby rebuilds its bridges when its ovs-vswitchd has been down this long (s)
REPAIR_AFTER_S = 3.0
#: a take-over that failed is tried again after this long (s)
FENCE_RETRY_S = 5.0
#: how long an active server whose ovs-vswitchd died waits, after the standby said it is taking over, for its
#: ``fenced`` (s)
FENCING_WAIT_S = 300.0
#: a new state's take-over candidate is staged this long after it arrived (s; its bridges are being built first)
STAGE_AFTER_S = 3.0
#: an active server replicates its state to a standby whose state differs at most this often (s)
SYNC_S = 30.0
#: the devices are read (roles) at least this often (s), to catch what no heartbeat shows (a failover that broke
#: half-way, a trunk moved by hand)
AUDIT_S = 60.0


class Agent:
    """One server's agent. ``run()`` until ``stop`` is set (SIGTERM/SIGINT in the CLI).

    Args:
        inventory_path: the pair's inventory (the same on both servers).
        me: this server's name (``--server`` / ``HARMLESS_HA_SERVER``).
        say: one log line.

    Raises:
        InputError: bad inventory, no ``ha``, unknown server, a secret that cannot be read or is too short.
    """

    def __init__(self, inventory_path: str, me: str, say: Say = print):
        inv = load_inventory(inventory_path)
        self.path, self.ha, self.me, self.say = inventory_path, inv.ha, me, say
        self.peer = inv.ha.peer(me).name
        self.local_inv = local_inventory(inv, me)
        k = wire.key(inv.ha.secret(f"{inventory_path}: ha"))
        self.sender, self.guard = wire.Sender(me, self.peer, k), wire.Guard(me, self.peer, k)
        self.bind = parse_agent(inv.ha.server(me).agent)
        self.peer_addr = parse_agent(inv.ha.peer(me).agent)
        self.interval = inv.ha.interval_ms / 1000
        self.stop = threading.Event()
        self.heard_at: float | None = None
        self.peer_body: dict = {}
        self.armed: dict[str, bool] = {}
        self.first_sign: dict[str, float] = {}
        self.decisions: dict[str, str] = {}
        self.busy, self.fencing, self.auditing = threading.Lock(), threading.Lock(), threading.Lock()
        self.plan: Plan | None = None
        self.read_at: str | None = None
        self._mtime = 0.0
        self.local = Local(server_ovs(self.local_inv, start=False))
        self.stager = Stager(lambda m: self.say(f"ha agent {self.me}: {m}"))
        self.ovs_down_since: float | None = None
        self.last_reread = 0.0
        self.digest: str | None = None          # of this server's state (replica.digest)
        self.last_sync = 0.0
        self.fence_after = 0.0          # a failed take-over is tried again after FENCE_RETRY_S
        self.peer_fencing_until = 0.0   # the peer said it is taking over (until its commit is done, at most this)
        self.started = record.now_iso()
        self._written = 0.0

    # ------------------------------------------------------------------ the loop
    def run(self) -> None:
        """Listen, then loop every interval until :attr:`stop` is set."""
        udp = socket.socket(socket.AF_INET6 if ":" in self.bind[0] else socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(self.bind)
        tcp = socket.create_server(self.bind, family=udp.family, reuse_port=False)
        tcp.settimeout(0.5)
        for target, arg in ((self._udp_loop, udp), (self._tcp_loop, tcp)):
            threading.Thread(target=target, args=(arg,), daemon=True).start()
        self.say(f"ha agent {self.me}: listening on {self.bind[0]}:{self.bind[1]}, peer {self.peer} at "
                 f"{self.peer_addr[0]}:{self.peer_addr[1]}, heartbeat every {self.ha.interval_ms} ms, detection "
                 f"{self.ha.detect_ms} ms")
        self.refresh()
        if self.plan is not None:
            self.spawn("start", self._reread)
        last = time.monotonic()
        try:
            while not self.stop.is_set():
                now = time.monotonic()
                if now - last > max(1.0, 3 * self.ha.detect_ms / 1000):
                    self.say(f"ha agent {self.me}: resumed after {now - last:.1f} s (frozen?): reading the devices")
                    self.spawn("thaw", self._reread)
                last = now
                self.tick(now)
                self.stop.wait(max(0.0, self.interval - (time.monotonic() - now)))
        finally:
            with self.fencing:                  # a take-over under way runs to its end (no server would forward)
                pass
            udp.close()
            tcp.close()
            self.local.stop()
            self.stager.drop_all()

    def tick(self, now: float) -> None:
        """One interval: sense, heartbeat, decide, act, write the view."""
        self.refresh()
        sights = self.sights(now)
        self.send_heartbeat()
        for name, sight in sights.items():
            self.judge(name, sight, now)
        self.repair(now)
        self.sync(now)
        if self.plan is not None and now - self.last_reread > AUDIT_S and vswitchd_state(self.local.ovs) == "running":
            self.spawn("audit", self._audit, self.auditing)   # the devices are the arbiter: read them now and then
        if now - self._written >= record.AGENT_WRITE_S:
            self.write_view(now)

    def refresh(self) -> None:
        """The deployed plan from ``state.json`` (re-read when it changed) and the local OVS monitor."""
        try:
            m = st.state_file().stat().st_mtime
        except OSError:
            m = 0.0
        if m != self._mtime:
            self._mtime = m
            try:
                s = st.load()
            except HarmlessError:
                s = None
            self.plan = Plan.from_dict(s.plan) if s and s.plan else None
            self.digest = replica.digest(s)
            if self.plan is None:
                self.spawn("unstage", self.stager.drop_all, self.auditing)     # nothing deployed any more
            else:
                threading.Thread(target=warm, args=(s,), daemon=True).start()   # drivers imported ahead
            self.ovs_down_since = None              # a new state: its bridges are being built
            self.last_reread = time.monotonic() - AUDIT_S + STAGE_AFTER_S   # roles just read; stage soon
            if s and s.ovs:
                self.local.ovs = state_ovs(s)
            rec = record.load()
            self.read_at = rec.read_at if rec else None
        self.local.restart()

    def pair_switches(self) -> list:
        return [sp for sp in (self.plan.switches if self.plan else ()) if sp.heartbeat_vid is not None]

    def sights(self, now: float) -> dict[str, Sight]:
        """Per switch of the pair what this server sees now."""
        heard = None if self.heard_at is None else (now - self.heard_at) * 1000
        out = {}
        for sp in self.pair_switches():
            body = self.peer_body
            out[sp.name] = Sight(
                role="standby" if sp.standby else "active", bfd=self.local.bfd(sp.name),
                own_trunk_up=all(self.local.link_up(t.server_interface) for t in sp.trunks), heard_ms=heard,
                peer_dataplane=(body.get("dataplane") or {}).get(sp.name),
                peer_role=(body.get("roles") or {}).get(sp.name), armed=self.armed.get(sp.name, False),
                detect_ms=self.ha.detect_ms, peer_busy=body.get("busy"))
        return out

    def dataplane(self) -> dict[str, bool]:
        """Per switch: this server's own data path works (ovs-vswitchd running, its trunk has carrier)."""
        up = vswitchd_state(self.local.ovs) == "running"
        return {sp.name: up and all(self.local.link_up(t.server_interface) for t in sp.trunks)
                for sp in self.pair_switches()}

    def busy_with(self) -> str | None:
        """The harmless command (not this agent) that holds this server's state lock now, if any."""
        try:
            holder = st.lock_holder()
        except OSError:
            return None
        if not holder or "harmless ha agent" in holder:
            return None
        return holder.split(":", 1)[-1].strip()[:80]

    def send_heartbeat(self) -> None:
        body = {"deployed": self.plan is not None, "read_at": self.read_at, "dataplane": self.dataplane(),
                "roles": {sp.name: "standby" if sp.standby else "active" for sp in self.pair_switches()},
                "busy": self.busy_with(), "digest": self.digest}
        _m, data = self.sender.seal("hb", body)
        try:
            with socket.socket(socket.AF_INET6 if ":" in self.peer_addr[0] else socket.AF_INET,
                               socket.SOCK_DGRAM) as s:
                s.sendto(data, self.peer_addr)
        except OSError:
            pass                        # the management network is down: the peer will notice the silence

    # ------------------------------------------------------------------ decisions
    def judge(self, name: str, sight: Sight, now: float) -> None:
        """Decide about one switch, keep ``armed``/``first_sign``, start the action."""
        if healthy(sight):
            self.armed[name] = True
            self.first_sign.pop(name, None)
        elif sight.role == "standby" and (sight.bfd is False or not mgmt_alive(sight)):
            self.first_sign.setdefault(name, now)
        d = decide(sight)
        if self.decisions.get(name) != d.reason:
            self.decisions[name] = d.reason
            self.say(f"ha agent {self.me}: {name}: {d.reason}")
            self.write_view(now)
        if d.action == "fence" and now >= self.fence_after:
            detect = (now - self.first_sign.get(name, now)) * 1000
            self.spawn("fence", lambda: self._fence({name}, d.reason, detect), self.fencing)
        elif d.action == "reread":
            if sight.peer_role == "active" and (self.peer_body.get("read_at") or "") > (self.read_at or ""):
                self.spawn("demote", lambda: self._demote({name}))
            elif now - self.last_reread > 5:
                self.spawn("reread", self._reread)

    def sync(self, now: float) -> None:
        """As the active server of every switch, replicate the state again when the peer has a deployment whose
        digest differs (it was away during a take-over or an ``up``); at most every :data:`SYNC_S`. A peer without a
        deployment gets nothing (a ``down`` there was on purpose; ``harmless ha sync`` sends it)."""
        body = self.peer_body
        if (self.plan is None or not body.get("deployed") or body.get("digest") in (None, self.digest)
                or any(sp.standby for sp in self.pair_switches()) or now - self.last_sync < SYNC_S
                or self.heard_at is None or (now - self.heard_at) * 1000 > self.ha.detect_ms or self.busy_with()):
            return
        if self.spawn("sync", self._sync):
            self.last_sync = now

    def _sync(self) -> None:
        with st.lock("harmless ha agent: sync", wait_s=5):
            s = st.load()
            if s is None or not s.plan:
                return
            self.say(f"ha agent {self.me}: the standby's state differs from this one: replicating it again")
            replica.push(self.local_inv, self.me, s, lambda m: self.say(f"ha agent {self.me}: {m}"))

    def repair(self, now: float) -> None:
        """This server's ovs-vswitchd has been down for :data:`REPAIR_AFTER_S` (a standby) or ``hold_s`` (an
        active one: the standby should have taken over by then): read the devices and rebuild in the role they
        say. Not while a harmless command holds the lock (``down`` stops it on purpose)."""
        if self.plan is None or vswitchd_state(self.local.ovs) != "down" or self.busy_with():
            self.ovs_down_since = None
            return
        self.ovs_down_since = self.ovs_down_since or now
        active = any(not sp.standby for sp in self.pair_switches())
        wait_s = self.ha.hold_s if active else REPAIR_AFTER_S
        if active and now < self.peer_fencing_until:
            return                      # the standby said it is taking over: its commit decides
        if now - self.ovs_down_since > wait_s and now - self.last_reread > 5:
            self.spawn("repair", self._reread)

    def spawn(self, what: str, fn: Callable[[], None], flag: threading.Lock | None = None) -> bool:
        """Run ``fn`` in a worker unless another action of its kind runs (it is tried again on a later interval).
        A take-over has its own kind (``fencing``), so that reading the devices never delays it; the state lock
        orders what they change. Returns False when another one runs."""
        flag = flag or self.busy
        if not flag.acquire(blocking=False):
            return False

        def work():
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - an agent reports and goes on
                self.say(f"ha agent {self.me}: {what} failed: {e}")
            finally:
                flag.release()

        threading.Thread(target=work, daemon=True, name=f"ha-{what}").start()
        return True

    def _fence(self, names: set[str], reason: str, detect_ms: float) -> None:
        self.say(f"ha agent {self.me}: taking over {', '.join(sorted(names))}: {reason}")
        self.fence_after = time.monotonic() + FENCE_RETRY_S
        self.tell("taking-over", sorted(names))
        try:
            with st.lock("harmless ha agent: failover", wait_s=30):
                res = failover(lambda m: self.say(f"ha agent {self.me}: {m}"), only=names, by="agent",
                               reason=reason, detect_ms=round(detect_ms, 1), on_committed=self.tell_fenced,
                               stager=self.stager)
        except HarmlessError as e:
            # the commit may have happened before the failure: take the role the devices say now
            self.say(f"ha agent {self.me}: take-over failed ({e}); reading the devices")
            self.tell("not-taking-over", sorted(names))
            self.last_reread = 0.0
            self._reread()
            return
        for n in names:
            self.armed[n] = False
        self.say(f"ha agent {self.me}: failover {res.record.outcome}: commit {res.record.commit_ms} ms, "
                 f"activate {res.record.activate_ms} ms, controller {res.record.controller_ms} ms")

    def tell_fenced(self, names: list[str]) -> None:
        """Tell the peer that it lost ``names``: it drops their controllers at once (if it is alive at all; else it
        reads the devices when it is back)."""
        self.tell("fenced", names)

    def tell(self, kind: str, names: list[str]) -> None:
        """Send the peer ``kind`` about ``names`` in the background (1 s at most; an unreachable peer is fine)."""
        def send():
            try:
                wire.request(self.peer_addr, self.sender, self.guard, kind, {"switches": sorted(names)}, timeout=1)
            except HarmlessError:
                pass
        if names:
            threading.Thread(target=send, daemon=True).start()

    def _demote(self, names: set[str]) -> None:
        with st.lock("harmless ha agent: standby", wait_s=2):
            converge(lambda m: self.say(f"ha agent {self.me}: {m}"), roles={n: "standby" for n in names})
        for n in names:
            self.armed[n] = False

    def _audit(self) -> None:
        """Read the devices (without the state lock); only when a role differs from this server's, take the lock
        and the roles (:meth:`_reread`, which reads them again under it)."""
        self.last_reread = time.monotonic()
        s = st.load()
        if s is None or not s.plan:
            return
        plan = Plan.from_dict(s.plan)
        roles = read_roles(s, plan)
        differ = [n for n, r in roles.items() if r in ("active", "standby")
                  and plan.switch(n).standby != (r == "standby")]
        if differ:
            self.say(f"ha agent {self.me}: the devices say other roles for {', '.join(differ)}")
            self._reread()
            return
        before = self.stager.names()
        self.stager.refresh(s, plan)            # the take-over's candidate loaded on the switch ahead
        if self.stager.names() != before:
            self.write_view(time.monotonic())

    def _reread(self) -> None:
        self.last_reread = time.monotonic()
        if st.load() is None:
            return                      # nothing deployed (any more): nothing to read
        before = {sp.name: sp.standby for sp in self.pair_switches()}
        with st.lock("harmless ha agent: reading roles", wait_s=2):
            roles = converge(lambda m: self.say(f"ha agent {self.me}: {m}"))
        for n, r in roles.items():
            if r in ("active", "standby") and before.get(n) != (r == "standby"):
                self.armed[n] = False

    # ------------------------------------------------------------------ the peer
    def _udp_loop(self, sock: socket.socket) -> None:
        while not self.stop.is_set():
            try:
                data, _addr = sock.recvfrom(wire.MAX_DATAGRAM)
            except OSError:
                return
            m = self.guard.accept(data)
            if m is not None and m.kind == "hb":
                self.heard_at, self.peer_body = time.monotonic(), m.body

    def _tcp_loop(self, srv: socket.socket) -> None:
        while not self.stop.is_set():
            try:
                conn, _addr = srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(120)
            try:
                m = self.guard.accept(wire.recv_frame(conn))
            except (OSError, ConnectionError):
                return
            if m is None:
                return
            body = self.handle(m)
            _r, data = self.sender.seal("reply", body, re=m.seq)
            try:
                wire.send_frame(conn, data)
            except OSError:
                pass

    def handle(self, m: wire.Message) -> dict:
        """A request of the peer (see the module doc); the reply's body (``error`` when it failed)."""
        try:
            if m.kind in ("taking-over", "not-taking-over"):   # its commit is on the way (or failed)
                self.peer_fencing_until = time.monotonic() + FENCING_WAIT_S if m.kind == "taking-over" else 0.0
                return {"ok": True}
            if m.kind == "fenced":
                self.peer_fencing_until = 0.0
                self.say(f"ha agent {self.me}: {self.peer} took over {', '.join(m.body.get('switches', []))}")
                self._demote(set(m.body.get("switches", [])) & {sp.name for sp in self.pair_switches()})
                return {"ok": True}
            with st.lock(f"harmless ha agent: {m.kind} from {self.peer}", wait_s=30):
                if m.kind == "replicate":
                    out = replica.store(m.body, self.me, self.peer, self.local_inv, self.path,
                                        lambda s: self.say(f"ha agent {self.me}: {s}"))
                    self.armed.clear()
                    return out
                if m.kind == "teardown":
                    self.stager.drop_all()
                    return replica.teardown(m.body, lambda s: self.say(f"ha agent {self.me}: {s}"))
            return {"error": f"unknown request {m.kind}"}
        except HarmlessError as e:
            return {"error": str(e)}

    def write_view(self, now: float) -> None:
        """``ha-agent.json`` (best effort)."""
        self._written = now
        heard = None if self.heard_at is None else round((now - self.heard_at) * 1000, 1)
        view = record.AgentView(pid=os.getpid(), started=self.started, updated=record.now_iso(),
                                peer_heard_ms=heard, peer=self.peer_body,
                                bfd={sp.name: self.local.bfd(sp.name) for sp in self.pair_switches()},
                                dataplane=self.dataplane(), decisions=dict(self.decisions),
                                staged=self.stager.names())
        try:
            record.save_agent(view)
        except HarmlessError:
            pass


def agent_address(path: str | Path, me: str) -> tuple[str, int]:
    """Where server ``me``'s agent listens (for the CLI's requests)."""
    return parse_agent(load_inventory(path).ha.server(me).agent)
