"""Link-state mirroring and controller redundancy on the lab.

* Two controllers on one br-of (OpenFlow 1.3 multiple controllers): a master and a slave; ``harmless status`` shows
  both connected with their roles and traffic flows through the master. A third, listening-only os-ken app
  (``tests/apps/portlog.py``) timestamps every port-status it receives.
* A port whose cable is out when ``harmless up`` runs is built LINK_DOWN; ``watch`` brings it up once plugged.
* Pulling a lab access link (the legacy port's cable, ``ip link set ... down`` in the switch's namespace) makes
  ``harmless watch`` show the br-of port as ``OFPPS_LINK_DOWN`` to every controller (port-status DELETE + ADD with
  LINK_DOWN, config bits untouched), ``harmless status`` shows device link, br-of state and the watch's hold;
  plugging it back makes it LIVE again and traffic flows. The link-down latency (device answer -> port-status at the
  controller, and cable pulled -> port-status) is measured and printed.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import stays, wait_for
import yaml

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from harmless.lab.controller import start_controller
from harmless.procs import stop as stop_process
from harmless.lab import topology as lab
from tests.lab.conftest import make_lab, quiet_session

SLAVE_PORT = 6654
LOG_PORT = 6655
PORTLOG_APP = str(Path(__file__).resolve().parents[1] / "apps" / "portlog.py")
#: the lab switch's emulated CLI answers get_interfaces in well under a second; watch polls every WATCH_INTERVAL s
WATCH_INTERVAL = 1.0


@pytest.fixture(scope="module")
def lab2ctl(tmp_path_factory):
    gen = make_lab(tmp_path_factory, hosts=(7, 8), controller_env={"HARMLESS_OF_ROLE": "master"})
    L = next(gen)
    slave = start_controller(SLAVE_PORT, L.state_dir / "slave.log", netns=L.info["server_netns"],
                             env={"HARMLESS_OF_ROLE": "slave"})
    portlog = start_controller(LOG_PORT, L.state_dir / "portlog-app.log", app=PORTLOG_APP,
                               netns=L.info["server_netns"],
                               env={"HARMLESS_PORTLOG": str(L.state_dir / "portlog.jsonl")})
    inv = yaml.safe_load(L.inventory.read_text())
    inv["switches"][0]["openflow"]["controllers"] += [f"tcp:127.0.0.1:{SLAVE_PORT}", f"tcp:127.0.0.1:{LOG_PORT}"]
    L.inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
    try:
        yield L
    finally:
        stop_process(portlog)
        stop_process(slave)
        next(gen, None)


def read_line(proc, timeout) -> str:
    """One stdout line of ``proc`` within ``timeout`` s (else fail with its stderr)."""
    import select
    r, _, _ = select.select([proc.stdout], [], [], timeout)
    if not r:
        proc.terminate()
        raise AssertionError(f"no event from harmless watch within {timeout} s; stderr: {proc.stderr.read()[-1500:]}")
    return proc.stdout.readline()



def port_events(path: Path, port: int) -> list[dict]:
    if not path.exists():
        return []
    return [e for e in map(json.loads, path.read_text().splitlines()) if e["ev"] == "port_status" and e["port"] == port]


def osken_port_status(log: Path, port: int) -> list[tuple[str, int, int]]:
    """(reason, config, state) of every port-status the learning switch logged for ``port``."""
    return [(m.group(1), int(m.group(2), 16), int(m.group(3), 16)) for m in
            re.finditer(rf"port-status dpid=\w+ port={port} reason=(\w+) config=(0x[0-9a-f]+) state=(0x[0-9a-f]+)",
                         log.read_text())]


OFPPS_LINK_DOWN, OFPPS_LIVE = 0x1, 0x4


def device_link(L, iface):
    d = L.driver()
    try:
        return d.link_states().get(iface)
    finally:
        d.close()


def test_master_and_slave_controllers_are_visible_and_a_pulled_link_reaches_them(lab2ctl):
    L = lab2ctl
    # host 8's cable is out when `up` runs: its br-of port is built LINK_DOWN (no watch running yet)
    veth8 = L.info["port_map"]["FastEthernet0/8"]
    subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth8, "down"], check=True)
    wait_for(lambda: device_link(L, "FastEthernet0/8") == "down", 20, "the lab switch to report Fa0/8 down")
    orch.up(str(L.inventory))
    p8 = next(p for p in orch.status().switches[0].ports if p.ofport == 8)
    assert (p8.device_link, p8.br_of_state, p8.blocked_by_watch) == ("down", "LINK_DOWN", True)
    subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth8, "up"], check=True)
    wait_for(lambda: device_link(L, "FastEthernet0/8") == "up", 20, "the lab switch to report Fa0/8 up")

    def roles():
        ctl = orch.status(with_device=False).switches[0].controllers
        got = {c["target"]: c["role"] for c in ctl if c["is_connected"]}
        return got if len(got) == 3 and "other" not in (got["tcp:127.0.0.1:6653"], got[f"tcp:127.0.0.1:{SLAVE_PORT}"]) \
            else None
    got = wait_for(roles, 20, "all three controllers connected with their roles")
    assert (got["tcp:127.0.0.1:6653"], got[f"tcp:127.0.0.1:{SLAVE_PORT}"]) == ("master", "slave")

    logs = {"master": L.state_dir / "controller.log", "slave": L.state_dir / "slave.log"}
    portlog = L.state_dir / "portlog.jsonl"
    watch = subprocess.Popen([sys.executable, "-m", "harmless.cli", "watch", "--interval", str(WATCH_INTERVAL),
                              "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ})
    veth = L.info["port_map"]["FastEthernet0/7"]
    try:
        ev = json.loads(read_line(watch, 20))      # first poll: host 8's cable is back
        assert (ev["interface"], ev["ofport"], ev["link"], ev["device_state"]) == ("FastEthernet0/8", 8, "up", "up")
        wait_for(lambda: [e for e in port_events(portlog, 8) if e["live"] and e["reason"] != "DELETE"], 10,
                 "port 8 LIVE at the app")
        assert wait_for(lambda: lab.ping(L.info, 7, 8, count=2) == 0.0, 15, "traffic once port 8 is up")
        stays(lambda: port_events(portlog, 7) == [], WATCH_INTERVAL + 0.5, "no port-status for port 7 (a further "
              "poll: nothing to change)")
        assert port_events(portlog, 7) == []
        t_pull = time.time()
        subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth, "down"], check=True)
        ev = json.loads(read_line(watch, 20))
        assert (ev["interface"], ev["ofport"], ev["link"], ev["device_state"]) == ("FastEthernet0/7", 7, "down", "down")
        down = wait_for(lambda: [e for e in port_events(portlog, 7) if e["link_down"]], 10, "LINK_DOWN at the app")[0]
        assert (down["reason"], down["name"], down["live"], down["config"]) == ("ADD", "sw1-p7", False, 0)
        # master and slave (the learning switch) got it too: ADD with OFPPS_LINK_DOWN, config untouched
        for who, log in logs.items():
            seen = wait_for(lambda: [x for x in osken_port_status(log, 7) if x[2] & OFPPS_LINK_DOWN], 10,
                            f"LINK_DOWN port-status at the {who}")
            assert seen[0] == ("ADD", 0, OFPPS_LINK_DOWN), who
        device_to_ctl = down["t"] - ev["detected_at"]
        pull_to_ctl = down["t"] - t_pull
        print(f"\nlink-down latency: device answer -> port-status at the controller {1000 * device_to_ctl:.0f} ms; "
              f"cable pulled -> port-status {1000 * pull_to_ctl:.0f} ms (watch --interval {WATCH_INTERVAL} s)")
        assert 0 <= device_to_ctl < 1.0
        desc = deployment.state_ovs(st.load()).ofctl("-O", "OpenFlow13", "dump-ports-desc", "br-of-sw1")
        assert re.search(r"7\(sw1-p7\).*\n\s+config:\s+0\n\s+state:\s+LINK_DOWN\n", desc)
        p7 = next(p for p in orch.status().switches[0].ports if p.ofport == 7)
        assert (p7.device_link, p7.br_of_state, p7.blocked_by_watch) == ("down", "LINK_DOWN", True)
        assert lab.ping(L.info, 8, 7, count=2) == 100.0

        t_plug = time.time()
        subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth, "up"], check=True)
        ev = json.loads(read_line(watch, 20))
        assert (ev["ofport"], ev["link"]) == (7, "up")
        up = wait_for(lambda: [e for e in port_events(portlog, 7) if e["live"] and e["reason"] != "DELETE"], 10,
                      "LIVE at the app")[0]
        assert (up["reason"], up["link_down"], up["config"]) == ("MODIFY", False, 0)
        for who, log in logs.items():
            wait_for(lambda: [x for x in osken_port_status(log, 7) if x[2] & OFPPS_LIVE and x[0] != "DELETE"], 10,
                     f"LIVE port-status at the {who}")
        print(f"link-up: cable plugged -> port-status LIVE {1000 * (up['t'] - t_plug):.0f} ms")
        p7 = next(p for p in orch.status().switches[0].ports if p.ofport == 7)
        assert (p7.device_link, p7.br_of_state, p7.blocked_by_watch) == ("up", "LIVE", False)
        assert wait_for(lambda: lab.ping(L.info, 7, 8, count=2) == 0.0, 15, "traffic after the link came back")
    finally:
        watch.terminate()
        watch.wait(10)
    assert orch.down().config_restored


def test_a_link_change_syslog_from_the_switch_polls_it_at_once(lab2ctl):
    """``watch --syslog``: with a 30 s poll interval, the switch's ``%LINK-3-UPDOWN`` message (sent here by the test
    from the switch's management address, as a switch with ``logging host`` would) makes watch poll at once."""
    import socket

    from harmless.procs import free_port
    L = lab2ctl
    orch.up(str(L.inventory))
    port = free_port()
    watch = subprocess.Popen([sys.executable, "-m", "harmless.cli", "watch", "--interval", "30", "--json",
                              "--syslog", f"127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**os.environ})
    t_start = time.time()
    veth = L.info["port_map"]["FastEthernet0/7"]
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def log(text):
        sender.sendto(f"<187>42: *Nov 24 07:00:00.000: {text}".encode(), ("127.0.0.1", port))
    try:
        wait_for(lambda: watch.poll() is not None or quiet_session(watch.pid, L.info["ssh_port"]), 30,
                 "watch's first (scheduled) poll: everything up, nothing to change")
        assert watch.poll() is None, watch.stderr.read()
        subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth, "down"], check=True)
        wait_for(lambda: device_link(L, "FastEthernet0/7") == "down", 20, "the lab switch to report Fa0/7 down")
        log("%SYS-5-CONFIG_I: Configured from console by admin on vty0")   # not a link message: no poll
        import select
        assert select.select([watch.stdout], [], [], 2.0)[0] == [], "watch polled on a message that is no link change"
        t_log = time.time()
        log("%LINK-3-UPDOWN: Interface FastEthernet0/7, changed state to down")
        ev = json.loads(read_line(watch, 10))
        assert (ev["ofport"], ev["link"]) == (7, "down")
        assert ev["detected_at"] - t_start < 30          # not the next scheduled poll
        print(f"\nsyslog -> device polled -> br-of LINK_DOWN: {1000 * (ev['applied_at'] - t_log):.0f} ms")
        assert ev["applied_at"] - t_log < 3.0
        p7 = next(p for p in orch.status().switches[0].ports if p.ofport == 7)
        assert (p7.br_of_state, p7.blocked_by_watch) == ("LINK_DOWN", True)
        subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth, "up"], check=True)
        wait_for(lambda: device_link(L, "FastEthernet0/7") == "up", 20, "the lab switch to report Fa0/7 up")
        log("%LINEPROTO-5-UPDOWN: Line protocol on Interface FastEthernet0/7, changed state to up")
        ev = json.loads(read_line(watch, 10))
        assert (ev["ofport"], ev["link"]) == (7, "up") and ev["detected_at"] - t_start < 30
    finally:
        sender.close()
        watch.terminate()
        watch.wait(10)
    assert orch.down().config_restored
