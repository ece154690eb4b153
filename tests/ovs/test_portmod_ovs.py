"""A controller's port-mod on br-of, side by side with the same port-mod on a plain OVS bridge (issue #21).

One private OVS in its own namespace holds br-otc + br-of (the product's ``bridges.apply``, br-of ports 7 and 10 are
patch ports) and a plain bridge ``plain`` (datapath id 0xcd) whose ports 7 and 10 are veths (the baseline: what OVS
does for a port that is a kernel device). Two os-ken controllers are connected to both bridges: A (``portlog.py`` +
``portmod.py``: it sends the port-mods, as Faucet's ``ofctl_rest`` does from Faucet's own process) and B
(``portlog.py``: an observer). HARMLESS's port-mod watcher (:mod:`harmless.portmod`, server side only) runs against
the OVS as ``harmless watch`` runs it. The tests assert what each controller receives, the port's config and state,
packet fate (real frames on the trunk, ``ofproto/trace``), and the interplay with link mirroring.
"""
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from harmless import portmod
from harmless.linkwatch import PORTS
from harmless import state as st
from harmless.otc import bridges
from harmless.ovs import Ovs
from harmless.plan import Plan, SwitchPlan
from tests.conftest import require_root_ovs, wait_for
from tests.ovs.test_linkstate import FAR, TRUNK, Env, make_plan

APPS = Path(__file__).resolve().parents[1] / "apps"
PLAIN_DPID, HARMLESS_DPID = 0xCD, 0xAB
PORT_DOWN, NO_RECV, NO_FWD, NO_PACKET_IN = 1, 4, 32, 64
LINK_DOWN, LIVE = 1, 4


class Ctl:
    """One os-ken controller's logs: what it received (``portlog.py``) and, for A, what it sent (``portmod.py``)."""

    def __init__(self, log: Path, sent: Path | None = None, cmd: Path | None = None):
        self.log, self.sent, self.cmd = log, sent, cmd

    def events(self, since: int = 0) -> list[dict]:
        return [json.loads(x) for x in self.log.read_text().splitlines()[since:]] if self.log.exists() else []

    def statuses(self, since: int, dpid: int, port: int) -> list[dict]:
        return [e for e in self.events(since) if e["ev"] == "port_status" and e["dpid"] == dpid and e["port"] == port]

    def port_mod(self, dpid: int, port: int, config: int, mask: int) -> float:
        """Send a port-mod through A; returns when A wrote it to the switch (``time.time()``)."""
        n = len(self.sent.read_text().splitlines()) if self.sent.exists() else 0
        with open(self.cmd, "a") as f:
            f.write(f"{dpid} {port} {config} {mask}\n")
        rec = wait_for(lambda: [json.loads(x) for x in self.sent.read_text().splitlines()[n:]]
                       if self.sent.exists() else None, 10, "controller A to send the port-mod", 0.02)
        assert rec[0]["ev"] == "sent", rec
        return rec[0]["t"]


class World:
    def __init__(self, ovs, a, b, env, events, errors):
        self.ovs, self.a, self.b, self.env, self.events, self.errors = ovs, a, b, env, events, errors
        self.sp = env.sp

    def desc(self, bridge: str, port: int) -> dict:
        return bridges.parse_ports_desc(self.ovs.ofctl("-O", "OpenFlow13", "dump-ports-desc", bridge))[port]

    def both(self, port: int) -> tuple[dict, dict]:
        return self.desc("plain", port), self.desc("br-of-sw1", port)

    def wait_config(self, port: int, config: set, state: set, what: str):
        wait_for(lambda: all(d["config"] == config and d["state"] == state for d in self.both(port)), 15, what,
                 0.05, detail=lambda: f"plain/br-of: {self.both(port)}; watcher errors: {self.errors}")

    def port_mod(self, dpid: int, port: int, config: int, mask: int) -> float:
        """Controller A's port-mod, sent once A knows the port's current hardware address (a port-mod with an
        older one is refused by OVS, OFPPMFC_BAD_HW_ADDR: A learns it from the port-status messages)."""
        bridge = "plain" if dpid == PLAIN_DPID else "br-of-sw1"

        def current() -> bool:
            mac = bridges.port_desc_one(self.ovs.ofctl("-O", "OpenFlow13", "dump-ports-desc", bridge), port)[0]
            known = None                       # the latest the controller heard: port description or status
            for e in self.a.events():
                if e["ev"] == "port_status" and e["dpid"] == dpid and e["port"] == port:
                    known = e["hw_addr"]
                elif e["ev"] == "port_desc" and e["dpid"] == dpid and str(port) in e["ports"]:
                    known = e["ports"][str(port)]["hw_addr"]
            return known == mac or (known, mac)
        got = wait_for(current, 10, f"controller A to know {bridge} port {port}'s hardware address", 0.05)
        assert got is True, got
        return self.a.port_mod(dpid, port, config, mask)

    def trace(self, bridge: str, flow: str) -> str:
        return self.ovs.appctl("ofproto/trace", bridge, flow).split("Datapath actions:")[1].strip().splitlines()[0]


def _controller(ns, port, apps, env, log):
    mgr = Path(sys.executable).parent / "osken-manager"
    return subprocess.Popen(["ip", "netns", "exec", ns, str(mgr), "--ofp-tcp-listen-port", str(port),
                             "--ofp-listen-host", "127.0.0.1", *[str(APPS / a) for a in apps]],
                            env={**os.environ, **env}, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _plain_bridge(o: Ovs, ns: str) -> None:
    """The baseline: a plain OVS bridge whose ports 7 and 10 are veths (far ends h7/h10 up, in the same namespace)."""
    for n in (7, 10):
        subprocess.run(["ip", "-n", ns, "link", "add", f"p{n}", "type", "veth", "peer", "name", f"h{n}"], check=True)
        for d in (f"p{n}", f"h{n}"):
            subprocess.run(["ip", "-n", ns, "link", "set", d, "up"], check=True)
    o.transact([["--may-exist", "add-br", "plain"],
                ["set", "Bridge", "plain", "datapath_type=netdev", "fail_mode=secure", "protocols=OpenFlow13",
                 f"other_config:datapath-id={PLAIN_DPID:016x}", "other_config:disable-in-band=true"],
                ["--may-exist", "add-port", "plain", "p7"], ["set", "Interface", "p7", "ofport_request=7"],
                ["--may-exist", "add-port", "plain", "p10"], ["set", "Interface", "p10", "ofport_request=10"],
                ["set-controller", "plain", "tcp:127.0.0.1:6653", "tcp:127.0.0.1:6654"]])


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    require_root_ovs()
    if not (Path(sys.executable).parent / "osken-manager").exists():
        pytest.skip("needs osken-manager (packaging/install.sh installs os-ken)")
    ns = f"hlm-{uuid.uuid4().hex[:6]}"
    tmp = tmp_path_factory.mktemp("portmod")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    o = Ovs(tmp / "ovs", netns=ns)
    procs_, watcher, old_state = [], None, os.environ.get("HARMLESS_STATE_DIR")
    os.environ["HARMLESS_STATE_DIR"] = str(tmp / "state")
    try:
        for cmd in (["link", "add", TRUNK, "type", "veth", "peer", "name", FAR], ["link", "set", TRUNK, "up"],
                    ["link", "set", FAR, "up"], ["link", "set", "lo", "up"]):
            subprocess.run(["ip", "-n", ns, *cmd], check=True)
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])
        o.start()
        a = Ctl(tmp / "a.jsonl", tmp / "a-sent.jsonl", tmp / "a.cmd")
        b = Ctl(tmp / "b.jsonl")
        procs_.append(_controller(ns, 6653, ["portlog.py", "portmod.py"],
                                  {"HARMLESS_PORTLOG": str(a.log), "HARMLESS_PORTMOD_CMD": str(a.cmd),
                                   "HARMLESS_PORTMOD_LOG": str(a.sent)}, tmp / "a.log"))
        procs_.append(_controller(ns, 6654, ["portlog.py"], {"HARMLESS_PORTLOG": str(b.log)}, tmp / "b.log"))
        sp = make_plan().switches[0]
        plan = Plan((SwitchPlan(sp.name, sp.bridge, sp.datapath_id, sp.protocols,
                                ("tcp:127.0.0.1:6653", "tcp:127.0.0.1:6654"), sp.ports, sp.trunks, port_down="server"),))
        bridges.apply(o, plan)
        for x, y in ((7, 10), (10, 7)):          # the controller's pipeline (as in test_linkstate): 7 <-> 10
            o.ofctl("-O", "OpenFlow13", "add-flow", "br-of-sw1", f"cookie=0x77,priority=10,in_port={x},actions=output:{y}")
        _plain_bridge(o, ns)
        for c in (a, b):
            wait_for(lambda: {e["dpid"] for e in c.events() if e["ev"] == "port_desc"} >= {PLAIN_DPID, HARMLESS_DPID},
                     60, "both controllers to see both bridges", detail=lambda: (tmp / "a.log").read_text()[-2000:])
        s = st.DeploymentState(inventory="test", plan=plan.to_dict(),
                               ovs=st.OvsRef(private=True, base_dir=str(o.base_dir), netns=ns))
        events, errors = [], []
        watcher = portmod.start(s, events.append, errors.append)
        assert watcher.ready.is_set(), errors
        yield World(o, a, b, Env(o, a.log, plan), events, errors)
    finally:
        portmod.stop(watcher)
        for p in procs_:
            p.terminate()
            p.wait(10)
        try:
            o.stop()
        finally:
            subprocess.run(["ip", "netns", "del", ns])
            if old_state is None:
                os.environ.pop("HARMLESS_STATE_DIR", None)
            else:
                os.environ["HARMLESS_STATE_DIR"] = old_state


def link(w: World, port: int, up: bool) -> None:
    """What ``harmless watch`` does when the legacy link of ``port`` changes (under its lock, as its mirror does)."""
    with PORTS:
        bridges.set_link(w.ovs, w.sp, port, up=up)


def _first(evs: list[dict], pred) -> dict | None:
    return next((e for e in evs if pred(e)), None)


def test_port_down_blocks_the_port_and_reaches_every_controller_as_on_a_plain_bridge(world):
    w = world
    assert w.env.exchange(107, 110) == 5                      # the hairpin through br-of works before
    marks = {c: (len(c.events())) for c in (w.a, w.b)}
    t_plain = w.port_mod(PLAIN_DPID, 7, PORT_DOWN, PORT_DOWN)
    t_hl = w.port_mod(HARMLESS_DPID, 7, PORT_DOWN, PORT_DOWN)
    w.wait_config(7, {"PORT_DOWN"}, {"LINK_DOWN"}, "port 7 PORT_DOWN + LINK_DOWN on both bridges")
    down = {}
    for c, name in ((w.a, "A"), (w.b, "B")):
        for dpid, t0 in ((PLAIN_DPID, t_plain), (HARMLESS_DPID, t_hl)):
            got = wait_for(lambda: _first(c.statuses(marks[c], dpid, 7),
                                          lambda e: e["config"] & PORT_DOWN and e["state"] & LINK_DOWN), 10,
                           f"controller {name} to get PORT_DOWN + LINK_DOWN of {dpid:#x} port 7", 0.05)
            down[(name, dpid)] = round((got["t"] - t0) * 1000)
    # br-of: the port is re-created (DELETE, ADD) as the placeholder, then MODIFY with PORT_DOWN; its hardware
    # address stays the same in every message, so the controller's next port-mod still matches it; the plain bridge
    # sends MODIFYs only
    hl = wait_for(lambda: [(e["reason"], e["config"], e["state"], e["hw_addr"])
                           for e in w.b.statuses(marks[w.b], HARMLESS_DPID, 7)] if any(
        e["reason"] == "MODIFY" for e in w.b.statuses(marks[w.b], HARMLESS_DPID, 7)) else None, 10,
        "the MODIFY with PORT_DOWN", 0.05)
    assert [r for r, *_ in hl][:3] == ["DELETE", "ADD", "MODIFY"], hl
    assert hl[1][1:3] == (0, LINK_DOWN) and hl[-1][1:] == (PORT_DOWN, LINK_DOWN, hl[0][3]), hl
    assert {h for *_x, h in hl} == {hl[0][3]}, hl
    # both controllers end with the port down on both bridges; on br-of nothing passes either way
    assert w.env.exchange(107, 110) == 0 and w.env.exchange(110, 107) == 0
    ev = [e for e in w.events if e.ofport == 7 and e.admin == "down"][-1]
    assert (ev.where, ev.seen) == ("br-of", "log")
    print(f"\nport-mod down -> port-status PORT_DOWN+LINK_DOWN (ms): {down}; watcher: seen->applied "
          f"{1000 * (ev.applied_at - ev.detected_at):.0f} ms")
    assert bridges.link_view(w.ovs, w.sp)[7]["admin_down"] is True

    marks = {c: (len(c.events())) for c in (w.a, w.b)}
    t_plain = w.port_mod(PLAIN_DPID, 7, 0, PORT_DOWN)
    t_hl = w.port_mod(HARMLESS_DPID, 7, 0, PORT_DOWN)
    w.wait_config(7, set(), {"LIVE"}, "port 7 config 0 + LIVE on both bridges")
    up = {}
    for c, name in ((w.a, "A"), (w.b, "B")):
        for dpid, t0 in ((PLAIN_DPID, t_plain), (HARMLESS_DPID, t_hl)):
            got = wait_for(lambda: _first(c.statuses(marks[c], dpid, 7), lambda e: e["state"] & LIVE), 10,
                           f"controller {name} to get LIVE of {dpid:#x} port 7", 0.05)
            assert got["config"] == 0
            up[(name, dpid)] = round((got["t"] - t0) * 1000)
    print(f"port-mod up -> port-status LIVE (ms): {up}")
    assert w.env.exchange(107, 110) == 5 and w.env.exchange(110, 107) == 5
    assert bridges.marks(w.ovs) == {}
    assert w.errors == []


@pytest.mark.parametrize("bit, word", [(NO_RECV, "NO_RECV"), (NO_FWD, "NO_FWD"), (NO_PACKET_IN, "NO_PACKET_IN")])
def test_no_recv_no_fwd_no_packet_in_behave_as_on_a_plain_bridge(world, bit, word):
    """The bits OVS keeps on a patch port: same config, same packet fate as on the plain bridge, and they survive a
    link flap of the legacy port (a hardware port keeps its config while its link goes down and up)."""
    w = world
    flows = ("cookie=0x5,priority=15,in_port=7,actions=output:10", "cookie=0x5,priority=15,in_port=10,actions=output:7",
             "cookie=0x5,priority=20,in_port=7,dl_type=0x88b5,actions=CONTROLLER:128")
    for br in ("plain", "br-of-sw1"):
        for f in flows:
            w.ovs.ofctl("-O", "OpenFlow13", "add-flow", br, f)
    fates = {"in": "in_port=7,dl_src=02:00:00:00:00:07,dl_dst=02:00:00:00:00:0a",
             "out": "in_port=10,dl_src=02:00:00:00:00:0a,dl_dst=02:00:00:00:00:07",
             "pin": "in_port=7,dl_type=0x88b5,dl_src=02:00:00:00:00:07,dl_dst=02:00:00:00:00:0a"}

    def fate() -> dict:
        out = {}
        for br in ("plain", "br-of-sw1"):
            tr = {k: w.trace(br, v) for k, v in fates.items()}
            out[br] = {k: v != "drop" and not (k == "pin" and "userspace" not in v) for k, v in tr.items()}
        return out

    try:
        before = fate()
        assert before["plain"] == before["br-of-sw1"] == {"in": True, "out": True, "pin": True}, before
        w.port_mod(PLAIN_DPID, 7, bit, bit)
        w.port_mod(HARMLESS_DPID, 7, bit, bit)
        w.wait_config(7, {word}, {"LIVE"}, f"{word} on port 7 of both bridges")
        after = fate()
        assert after["plain"] == after["br-of-sw1"], after
        # NO_RECV drops what comes in, NO_FWD what goes out; NO_PACKET_IN changes neither here: OVS applies it to
        # table-miss packet-ins only (an explicit CONTROLLER action still sends one, on both bridges alike)
        changed = {"NO_RECV": {"in": False, "out": True, "pin": False}, "NO_FWD": {"in": True, "out": False,
                                                                                  "pin": True}}
        assert after["plain"] == changed.get(word, before["plain"]), after
        link(w, 7, up=False)                                      # watch: the legacy link goes down and comes back
        link(w, 7, up=True)
        assert w.desc("br-of-sw1", 7) == {"name": "sw1-p7", "config": {word}, "state": {"LIVE"}}
        assert fate()["br-of-sw1"] == after["br-of-sw1"]
    finally:
        for dpid in (PLAIN_DPID, HARMLESS_DPID):
            w.port_mod(dpid, 7, 0, bit)
        w.wait_config(7, set(), {"LIVE"}, "port 7 back to config 0")
        for br in ("plain", "br-of-sw1"):
            w.ovs.ofctl("-O", "OpenFlow13", "del-flows", br, "cookie=0x5/-1")
        assert "cookie=0x77" in w.ovs.ofctl("-O", "OpenFlow13", "dump-flows", "br-of-sw1")


def test_port_down_and_link_mirroring_each_hold_the_port_until_both_let_go(world):
    """The controller's bit and watch's link mark are independent: the port passes traffic only when neither holds
    it; config shows PORT_DOWN exactly while the controller's bit is set (whichever came first)."""
    w = world
    hl = lambda: w.desc("br-of-sw1", 7)                                                    # noqa: E731
    # link down first (watch), then the controller's port-down on the placeholder (OVS applies it to the tap)
    link(w, 7, up=False)
    w.port_mod(HARMLESS_DPID, 7, PORT_DOWN, PORT_DOWN)
    wait_for(lambda: bridges.marks(w.ovs).get("sw1-p7") == {bridges.LINK_KEY, bridges.ADMIN_KEY}, 10,
             "both marks on sw1-p7", 0.05, detail=lambda: f"{hl()} {w.errors}")
    assert hl()["config"] == {"PORT_DOWN"} and hl()["state"] == {"LINK_DOWN"}
    link(w, 7, up=True)                                        # legacy link back: the controller still holds it
    assert (hl()["config"], hl()["state"]) == ({"PORT_DOWN"}, {"LINK_DOWN"})
    assert w.env.exchange(107, 110) == 0
    w.port_mod(HARMLESS_DPID, 7, 0, PORT_DOWN)
    wait_for(lambda: hl()["state"] == {"LIVE"}, 10, "port 7 LIVE once the controller lets go", 0.05,
             detail=lambda: f"{hl()} {w.errors}")
    assert hl()["config"] == set() and bridges.marks(w.ovs) == {}
    # the controller first, then the link; the controller lets go while the link is still down
    w.port_mod(HARMLESS_DPID, 7, PORT_DOWN, PORT_DOWN)
    wait_for(lambda: hl()["config"] == {"PORT_DOWN"}, 10, "PORT_DOWN", 0.05)
    link(w, 7, up=False)
    w.port_mod(HARMLESS_DPID, 7, 0, PORT_DOWN)
    wait_for(lambda: bridges.marks(w.ovs).get("sw1-p7") == {bridges.LINK_KEY}, 10, "only the link mark left", 0.05,
             detail=lambda: f"{hl()} {bridges.marks(w.ovs)} {w.errors} {w.a.sent.read_text()[-600:]} "
                            f"{bridges.tap_flags(w.ovs, {'sw1-p7'})} {w.events[-3:]}")
    assert (hl()["config"], hl()["state"]) == (set(), {"LINK_DOWN"})     # a hardware port whose link is coming up
    assert w.env.exchange(107, 110) == 0
    link(w, 7, up=True)
    assert (hl()["config"], hl()["state"]) == (set(), {"LIVE"})
    n = w.env.exchange(107, 110)
    assert n == 5, (n, w.ovs.ofctl("-O", "OpenFlow13", "dump-flows", "br-of-sw1"),
                    w.ovs.ofctl("-O", "OpenFlow13", "dump-ports-desc", "br-of-sw1"),
                    w.ovs.vsctl("show"), w.ovs.appctl("ofproto/trace", "br-otc", "in_port=1900,dl_vlan=107"))
    assert w.errors == []


def test_a_held_port_survives_an_ovs_restart_and_the_watcher_follows_the_new_daemon(world):
    w = world
    w.port_mod(HARMLESS_DPID, 10, PORT_DOWN, PORT_DOWN)
    wait_for(lambda: w.desc("br-of-sw1", 10)["config"] == {"PORT_DOWN"}, 10, "port 10 PORT_DOWN", 0.05)
    w.ovs.stop_vswitchd(cleanup=False)
    w.ovs.start()
    bridges.apply(w.ovs, w.env.plan)                           # what harmless up / restore does after a restart
    assert w.desc("br-of-sw1", 10)["config"] == {"PORT_DOWN"} and bridges.admin_down(w.ovs) == {"sw1-p10"}
    assert w.env.exchange(110, 107) == 0
    wait_for(lambda: len([r for r in w.ovs.vsctl_json("Controller", columns=["target", "is_connected"])
                          if r["target"] == "tcp:127.0.0.1:6653" and r["is_connected"]]) == 2, 30,
             "controller A back on both bridges")
    # a port-mod after the restart is still seen (the watcher re-armed ovs-vswitchd's logging)
    w.port_mod(HARMLESS_DPID, 7, PORT_DOWN, PORT_DOWN)
    wait_for(lambda: w.desc("br-of-sw1", 7)["config"] == {"PORT_DOWN"}, 15, "port 7 PORT_DOWN after the restart",
             0.05, detail=lambda: str(w.errors))
    for port in (7, 10):
        w.port_mod(HARMLESS_DPID, port, 0, PORT_DOWN)
    wait_for(lambda: [w.desc("br-of-sw1", p)["state"] for p in (7, 10)] == [{"LIVE"}, {"LIVE"}], 15,
             "both ports LIVE again", 0.05)
    assert bridges.marks(w.ovs) == {}
