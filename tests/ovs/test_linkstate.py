"""br-of link state as a controller sees it: the link-down construction on a private OVS with a real os-ken app.

A private OVS in its own network namespace runs br-otc + br-of (the product's own ``bridges.apply``), a trunk veth
whose far end stands for the legacy switch, and ``osken-manager`` with ``tests/apps/portlog.py`` (logs every
port-status the controller receives). ``bridges.set_link`` takes br-of port 7 down and up; the tests assert what the
controller received (reason, OFPPS_LINK_DOWN / OFPPS_LIVE, config bits), that port number, name and the translator
flows stay, that the controller's flows survive, and with real frames on the trunk that nothing passes either way
while the link is down.
"""
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from harmless.otc import bridges
from harmless.ovs import Ovs
from harmless.plan import Plan, PortPlan, SwitchPlan, TrunkPlan
from tests.conftest import require_root_ovs, stays, wait_for

TRUNK, FAR = "trk0", "trk0-far"
CTL_PORT = 6653          # inside the test's own namespace
APP = Path(__file__).resolve().parents[1] / "apps" / "portlog.py"
MAC7, MAC10 = "02:00:00:00:00:07", "02:00:00:00:00:0a"
COOKIE = 0x77
#: how long an exchange captures at most (s): all frames back end it sooner; none may come back meanwhile when held down
EXCHANGE_S = 3.0


def make_plan():
    return Plan((SwitchPlan("sw1", "br-of-sw1", "00000000000000ab", ("OpenFlow13",), (f"tcp:127.0.0.1:{CTL_PORT}",),
                            tuple(PortPlan(f"FastEthernet0/{n}", n, 100 + n, "GigabitEthernet0/1", f"h{n}")
                                  for n in (7, 10)),
                            (TrunkPlan("GigabitEthernet0/1", TRUNK, "system", (), (107, 110)),)),))


class Env:
    def __init__(self, ovs, log, plan):
        self.ovs, self.log, self.plan = ovs, log, plan
        self.sp = plan.switches[0]

    def events(self, since=0):
        if not self.log.exists():
            return []
        return [json.loads(x) for x in self.log.read_text().splitlines()[since:]]

    def wait_events(self, since, pred, what, timeout=15):
        def evs():
            got = [e for e in self.events(since) if e["ev"] == "port_status" and e["port"] == 7]
            return got if pred(got) else None
        return wait_for(evs, timeout, what, 0.1, detail=lambda: f"controller got {self.events(since)}")

    def desc7(self):
        return bridges.parse_ports_desc(self.ovs.ofctl("-O", "OpenFlow13", "dump-ports-desc", "br-of-sw1"))[7]

    def ofports(self):
        return {r["name"]: r["ofport"] for r in self.ovs.vsctl_json("Interface", columns=["name", "ofport"])}

    def exchange(self, vid_in, vid_out, n=5):
        """Send ``n`` frames with VID ``vid_in`` into the trunk from the legacy side; count those coming back with
        ``vid_out`` (the hairpin through br-of): the capture waits for the ``n``-th (at most :data:`EXCHANGE_S` s
        after sending: the window in which none may come back when the port is held down), then 0.5 s more in
        which an extra copy would show."""
        code = f"""
import threading
from scapy.all import AsyncSniffer, Dot1Q, Ether, IP, UDP, sendp
on, all_back, extra, seen = threading.Event(), threading.Event(), threading.Event(), []
def count(p):
    seen.append(p)
    if len(seen) >= {n}:
        all_back.set()
    if len(seen) > {n}:
        extra.set()
s = AsyncSniffer(iface="{FAR}", lfilter=lambda p: Dot1Q in p and p[Dot1Q].vlan == {vid_out}, prn=count,
                 started_callback=on.set)
s.start(); assert on.wait(30), "capture did not start"
src, dst = ("{MAC7}", "{MAC10}") if {vid_in} == 107 else ("{MAC10}", "{MAC7}")
sendp([Ether(src=src, dst=dst) / Dot1Q(vlan={vid_in}) / IP(src="198.18.0.1", dst="198.18.0.2") / UDP()] * {n},
      iface="{FAR}", verbose=False)
all_back.wait({EXCHANGE_S})
extra.wait(0.5)                 # the window for an extra copy (more than n back is a failure too): ends at one
print(len(s.stop()))
"""
        p = subprocess.run(["ip", "netns", "exec", self.ovs.netns, sys.executable, "-c", code], capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return int(p.stdout.strip().splitlines()[-1])

    def brotc_flows(self):
        return self.ovs.ofctl("-O", "OpenFlow14", "--no-stats", "dump-flows", "br-otc")

    def ctl_flows(self):
        return [x for x in self.ovs.ofctl("-O", "OpenFlow13", "--no-stats", "dump-flows", "br-of-sw1").splitlines()
                if f"cookie={COOKIE:#x}" in x]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    require_root_ovs()
    mgr = Path(sys.executable).parent / "osken-manager"
    if not mgr.exists():
        pytest.skip("needs osken-manager (packaging/install.sh installs os-ken)")
    ns = f"hll-{uuid.uuid4().hex[:6]}"
    tmp = tmp_path_factory.mktemp("linkstate")
    log = tmp / "portlog.jsonl"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    o = Ovs(tmp / "ovs", netns=ns)
    ctl = None
    try:
        for cmd in (["link", "add", TRUNK, "type", "veth", "peer", "name", FAR], ["link", "set", TRUNK, "up"],
                    ["link", "set", FAR, "up"], ["link", "set", "lo", "up"]):
            subprocess.run(["ip", "-n", ns, *cmd], check=True)
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])
        o.start()
        ctl = subprocess.Popen(["ip", "netns", "exec", ns, str(mgr), "--ofp-tcp-listen-port", str(CTL_PORT),
                                "--ofp-listen-host", "127.0.0.1", str(APP)],
                               env={**os.environ, "HARMLESS_PORTLOG": str(log)}, stdout=open(tmp / "osken.log", "w"), stderr=subprocess.STDOUT, start_new_session=True)
        plan = make_plan()
        bridges.apply(o, plan)
        e = Env(o, log, plan)
        wait_for(lambda: ctl.poll() is not None or any(x["ev"] == "port_desc" for x in e.events()), 60,
                 "os-ken app to see br-of connect")
        assert ctl.poll() is None, (tmp / "osken.log").read_text()
        # the controller's pipeline (as a controller would install it): 7 <-> 10, asking for flow-removed
        for a, b in ((7, 10), (10, 7)):
            o.ofctl("-O", "OpenFlow13", "add-flow", "br-of-sw1",
                    f"cookie={COOKIE:#x},priority=10,in_port={a},send_flow_rem,actions=output:{b}")
        yield e
    finally:
        if ctl is not None:
            ctl.terminate()
            ctl.wait(10)
        try:
            o.stop()
        finally:
            subprocess.run(["ip", "netns", "del", ns])


def test_link_down_reaches_the_controller_as_link_down_and_nothing_passes(env):
    o, sp = env.ovs, env.sp
    assert env.exchange(107, 110) == 5 and env.exchange(110, 107) == 5      # the hairpin works both ways
    assert env.desc7()["state"] == {"LIVE"}
    otc_before, ctl_before, ofports_before = env.brotc_flows(), env.ctl_flows(), env.ofports()
    mac_before = o.vsctl("get", "Interface", "sw1-p7", "mac_in_use").strip().strip('"')
    mark = len(env.events())

    bridges.set_link(o, sp, 7, up=False)
    evs = env.wait_events(mark, lambda v: any(x["reason"] == "MODIFY" for x in v), "port-status MODIFY (link down)")
    # OVS reports the swap as DELETE then ADD; ADD and the MODIFY after it carry OFPPS_LINK_DOWN, no LIVE, config
    # untouched; the MODIFY gives the port its previous hardware address back
    assert [x["reason"] for x in evs] == ["DELETE", "ADD", "MODIFY"]
    for x in evs[1:]:
        assert (x["port"], x["name"], x["link_down"], x["live"], x["config"]) == (7, "sw1-p7", True, False, 0), x
    assert evs[-1]["hw_addr"] == mac_before
    assert env.desc7() == {"name": "sw1-p7", "config": set(), "state": {"LINK_DOWN"}}
    view = bridges.link_view(o, sp)
    assert view[7] == {"br_of_state": "LINK_DOWN", "br_of_config": [], "blocked_by_watch": True, "admin_down": False}
    assert view[10]["br_of_state"] == "LIVE" and not view[10]["blocked_by_watch"]
    # same OpenFlow port numbers on br-of and br-otc, same translator flows, the controller's flows kept
    assert env.ofports() == ofports_before
    assert env.brotc_flows() == otc_before
    assert env.ctl_flows() == ctl_before
    assert not [x for x in env.events(mark) if x["ev"] == "flow_removed"]
    # blocked both ways: legacy port 7 -> br-of (VID 107 in) and br-of -> legacy port 7 (VID 107 out)
    assert env.exchange(107, 110) == 0
    assert env.exchange(110, 107) == 0
    trace = o.appctl("ofproto/trace", "br-otc", "in_port=1900,dl_vlan=107,dl_src=02:00:00:00:00:07,"
                                                 "dl_dst=02:00:00:00:00:0a")
    assert trace.split("Datapath actions:")[1].strip().splitlines()[0] == "drop"

    # up (the product's own convergence) keeps a held-down port down
    mark = len(env.events())
    bridges.apply(o, env.plan)
    assert bridges.verify(o, env.plan) == []
    assert env.desc7()["state"] == {"LINK_DOWN"}
    stays(lambda: [x for x in env.events(mark) if x["ev"] == "port_status"] == [], 0.5, "no port-status")
    assert [x for x in env.events(mark) if x["ev"] == "port_status"] == []

    bridges.set_link(o, sp, 7, up=True)
    evs = env.wait_events(mark, lambda v: any(x["live"] for x in v), "port-status with LIVE (link up)")
    assert [x["reason"] for x in evs] == ["DELETE", "ADD", "MODIFY"]
    assert (evs[-1]["link_down"], evs[-1]["live"], evs[-1]["config"]) == (False, True, 0)
    assert env.desc7()["state"] == {"LIVE"} and env.ofports() == ofports_before
    assert env.brotc_flows() == otc_before and env.ctl_flows() == ctl_before
    assert bridges.held_down(o) == set()
    assert subprocess.run(["ip", "-n", o.netns, "link", "show", "sw1-p7"], capture_output=True).returncode != 0
    assert env.exchange(107, 110) == 5 and env.exchange(110, 107) == 5


def test_held_down_survives_a_vswitchd_restart_and_remove_deletes_the_tap(env):
    o, sp = env.ovs, env.sp
    bridges.set_link(o, sp, 7, up=False)
    o.stop_vswitchd(cleanup=False)
    o.start()
    bridges.apply(o, env.plan)              # what `harmless up` does after a restart
    assert env.desc7()["state"] == {"LINK_DOWN"} and bridges.held_down(o) == {"sw1-p7"}
    assert env.exchange(107, 110) == 0
    bridges.remove(o, ["br-of-sw1"])
    assert subprocess.run(["ip", "-n", o.netns, "link", "show", "sw1-p7"], capture_output=True).returncode != 0
    assert subprocess.run(["ip", "-n", o.netns, "link", "show", TRUNK], capture_output=True).returncode == 0


def test_a_foreign_device_with_the_ports_name_is_refused(env):
    from harmless.errors import OvsError
    o, sp = env.ovs, env.sp
    bridges.apply(o, env.plan)
    subprocess.run(["ip", "-n", o.netns, "link", "add", "sw1-p10", "type", "veth", "peer", "name", "x10"], check=True)
    try:
        with pytest.raises(OvsError) as e:
            bridges.set_link(o, sp, 10, up=False)
        assert "not a tap" in e.value.problem
        assert bridges.held_down(o) == set()
        assert bridges.parse_ports_desc(o.ofctl("-O", "OpenFlow13", "dump-ports-desc", "br-of-sw1"))[10]["state"] \
            == {"LIVE"}
    finally:
        subprocess.run(["ip", "-n", o.netns, "link", "del", "sw1-p10"])


def test_a_fast_failover_group_skips_the_port_while_its_link_is_down(env):
    """The LIVE bit is what OpenFlow fast-failover groups watch: bucket 1 (watch port 7) while up, bucket 2 when down."""
    o, sp = env.ovs, env.sp
    bridges.apply(o, env.plan)
    o.ofctl("-O", "OpenFlow13", "add-group", "br-of-sw1",
            "group_id=1,type=ff,bucket=watch_port:7,output:7,bucket=watch_port:10,output:in_port")
    o.ofctl("-O", "OpenFlow13", "add-flow", "br-of-sw1", "cookie=0x99,priority=20,in_port=10,actions=group:1")
    frame = "in_port=1900,dl_vlan=110,dl_src=02:00:00:00:00:0a,dl_dst=02:00:00:00:00:07"

    def actions():
        out = o.appctl("ofproto/trace", "br-otc", frame)
        return out.split("Datapath actions:")[1].strip().splitlines()[0]
    try:
        assert actions().startswith("pop_vlan,push_vlan(vid=107")            # to port 7
        bridges.set_link(o, sp, 7, up=False)
        assert "vid=107" not in actions() and actions() != "drop"         # failed over: back out of port 10
        bridges.set_link(o, sp, 7, up=True)
        assert actions().startswith("pop_vlan,push_vlan(vid=107")
    finally:
        o.ofctl("-O", "OpenFlow13", "del-flows", "br-of-sw1", "cookie=0x99/-1")
        o.ofctl("-O", "OpenFlow13", "del-groups", "br-of-sw1")


FAUCET_YAML = """
vlans:
  office:
    vid: 100
dps:
  sw1:
    dp_id: 0xab
    hardware: "Open vSwitch"
    interfaces:
      7:
        native_vlan: office
      10:
        native_vlan: office
"""


def test_faucet_takes_the_port_down_and_up(env, tmp_path):
    """Faucet 1.10 (its own view, from its log, and its Prometheus ``port_status``) follows the construction.

    Faucet treats every OFPPR_ADD as "port up" whatever its state bits (``valve.port_status_handler``): without the
    MODIFY that follows the ADD it would end "up" on a dead port; this test fails then. Runs last in the module
    (Faucet replaces every flow of br-of).
    """
    import importlib.util
    if importlib.util.find_spec("faucet") is None:
        pytest.skip("needs Faucet (pip install faucet==1.10.12)")
    o, sp = env.ovs, env.sp
    bridges.apply(o, env.plan)
    bridges.set_link(o, sp, 7, up=True)
    (tmp_path / "faucet.yaml").write_text(FAUCET_YAML)
    log = tmp_path / "faucet.log"
    bindir = Path(sys.executable).parent
    fenv = {**os.environ, "FAUCET_CONFIG": str(tmp_path / "faucet.yaml"), "FAUCET_LOG": str(log),
            "FAUCET_EXCEPTION_LOG": str(tmp_path / "faucet-exc.log"), "FAUCET_PROMETHEUS_PORT": "9302",
            "FAUCET_PROMETHEUS_ADDR": "127.0.0.1", "PATH": f"{bindir}:{os.environ['PATH']}"}
    faucet = subprocess.Popen(["ip", "netns", "exec", o.netns, str(bindir / "faucet"), "--ryu-ofp-tcp-listen-port",
                               "6654", "--ryu-ofp-listen-host", "127.0.0.1"], env=fenv,
                              stdout=open(tmp_path / "faucet.out", "w"), stderr=subprocess.STDOUT,
                              start_new_session=True)
    two = Plan((SwitchPlan(sp.name, sp.bridge, sp.datapath_id, sp.protocols,
                           (*sp.controllers, "tcp:127.0.0.1:6654"), sp.ports, sp.trunks),))

    def port_status():
        code = "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:9302', timeout=2).read().decode())"
        p = subprocess.run(["ip", "netns", "exec", o.netns, sys.executable, "-c", code], capture_output=True,
                           text=True, timeout=30)
        import re
        return {int(m.group(1)): float(m.group(2)) for m in
                re.finditer(r'^port_status\{[^}]*port="(\d+)"[^}]*\} (\S+)', p.stdout, re.M)}

    def faucet_view():
        import re
        found = re.findall(r"Port 7 \(7\) (up|down)$", log.read_text() if log.exists() else "", re.M)
        return found[-1] if found else None

    def wait(cond, what, timeout=30):
        wait_for(cond, timeout, what, 0.1,
                 detail=lambda: f"faucet log tail: {log.read_text()[-1500:] if log.exists() else '(none)'}")

    try:
        bridges.apply(o, two)
        wait(lambda: port_status().get(7) == 1.0 and faucet_view() == "up", "Faucet to see port 7 up")
        bridges.set_link(o, sp, 7, up=False)
        wait(lambda: port_status().get(7) == 0.0, "Faucet port_status 0")
        wait(lambda: faucet_view() == "down", "Faucet to take port 7 down")
        stays(lambda: faucet_view() == "down" and port_status().get(7) == 0.0 and port_status().get(10) == 1.0,
              1.0, "port 7 down and port 10 up at Faucet", 0.2)
        assert faucet_view() == "down" and port_status().get(7) == 0.0 and port_status().get(10) == 1.0
        bridges.set_link(o, sp, 7, up=True)
        wait(lambda: port_status().get(7) == 1.0 and faucet_view() == "up", "Faucet to see port 7 up again")
    finally:
        faucet.terminate()
        faucet.wait(10)
        bridges.apply(o, env.plan)
