"""Port-mod, hairpin and port properties on the lab, as a hardware OpenFlow switch shows them (issue #21).

One lab: an emulated Catalyst 3750 (it has per-VLAN MAC learning control, ``no mac address-table learning vlan``),
hosts on FastEthernet0/7 and 0/8, and behind port 7 two more hosts A and B (macvlan in VEPA mode on host 7's
interface, as Faucet's hairpin test builds them: everything they send leaves through port 7, also to each other).
The controller is os-ken with ``tests/apps/portlog.py`` (logs every port-status) and ``tests/apps/portmod.py`` (sends
port-mods); the tests install its pipeline on br-of with ``ovs-ofctl`` (A <-> B back out of port 7, 7 <-> 8).

* hairpin: with MAC learning on in HARMLESS's VLANs (inventory ``mac_learning: on``) the legacy switch learns A on
  the trunk and drops B's answer, which it would have to send back out of the trunk (no ping); with learning off
  (the default on a platform that can) A and B talk through the hairpin;
* port-mod: ``harmless watch`` runs; the controller's OFPPC_PORT_DOWN on port 8 reaches the controller as
  PORT_DOWN/LINK_DOWN, blocks the traffic, shuts Fa0/8 on the device (host 8 loses its link), shows in ``status``
  and the exporter; clearing it brings everything back; ``down`` gives the original config back byte for byte;
* port properties: the device's speed of each migrated port is exported (``harmless_port_speed_mbps``); br-of's
  patch ports report 0 (docs/transparency.md says why).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from prometheus_client import generate_latest

from harmless import exporter
from harmless import orchestrator as orch
from harmless import state as st
from harmless.deployment import state_ovs
from harmless.lab import netns
from harmless.lab.controller import start_controller
from harmless.procs import stop as stop_process
from tests.conftest import wait_for
from tests.lab.conftest import make_lab

APPS = Path(__file__).resolve().parents[1] / "apps"
PORT_DOWN, LINK_DOWN, LIVE = 1, 1, 4
MAC_A, MAC_B = "02:00:00:00:07:0a", "02:00:00:00:07:0b"
IP_A, IP_B = "198.18.0.71", "198.18.0.72"


@pytest.fixture(scope="module")
def labpm(tmp_path_factory):
    def controller(state, info):
        return start_controller(6653, state / "controller.log", app=str(APPS / "portlog.py"),
                                extra_args=(str(APPS / "portmod.py"),), netns=info["server_netns"],
                                env={"HARMLESS_PORTLOG": str(state / "portlog.jsonl"),
                                     "HARMLESS_PORTMOD_CMD": str(state / "portmod.cmd"),
                                     "HARMLESS_PORTMOD_LOG": str(state / "portmod.jsonl")})
    gen = make_lab(tmp_path_factory, hosts=(7, 8), platform="3750", controller=controller)
    L = next(gen)
    L.original = L.running_config()                  # before any up: what down must give back
    made = []
    try:
        h7 = L.info["hosts"]["7"]["netns"]
        for tag, mac, ip in (("a", MAC_A, IP_A), ("b", MAC_B, IP_B)):
            ns = f"hl-{L.info['name']}-h7{tag}"
            netns.add_ns(ns)
            made.append(ns)
            for cmd in (["-n", h7, "link", "add", "link", "eth0", "name", f"mv{tag}", "type", "macvlan", "mode",
                         "vepa"], ["-n", h7, "link", "set", f"mv{tag}", "netns", ns],
                        ["-n", ns, "link", "set", f"mv{tag}", "address", mac, "up"],
                        ["-n", ns, "addr", "add", f"{ip}/24", "dev", f"mv{tag}"]):
                subprocess.run(["ip", *cmd], check=True)
        L.hairpin = made
        yield L
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        next(gen, None)


def _up(L, **settings):
    """``harmless up`` with the lab's switch entry updated by ``settings``."""
    inv = yaml.safe_load(L.inventory.read_text())
    inv["switches"][0].update(settings)
    L.inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
    return orch.up(str(L.inventory), wait_controller=30)


def _pipeline(L) -> None:
    """The controller's flows (as a controller would install them): A <-> B back out of port 7, 7 <-> 8."""
    ovs = state_ovs(st.load())
    ovs.ofctl("-O", "OpenFlow13", "del-flows", "br-of-sw1", "cookie=0x21/-1")
    for f in (f"priority=30,in_port=7,dl_dst={MAC_A},actions=in_port",
              f"priority=30,in_port=7,dl_dst={MAC_B},actions=in_port",
              "priority=20,in_port=7,dl_dst=ff:ff:ff:ff:ff:ff,actions=in_port,output:8",
              "priority=10,in_port=7,actions=output:8", "priority=10,in_port=8,actions=output:7"):
        ovs.ofctl("-O", "OpenFlow13", "add-flow", "br-of-sw1", f"cookie=0x21,{f}")


def _hairpin_loss(L) -> float:
    ns_a = L.hairpin[0]
    subprocess.run(["ip", "-n", ns_a, "neigh", "flush", "all"], capture_output=True)
    return netns.ping(ns_a, IP_B, count=3)


def test_a_frame_sent_back_out_of_its_in_port_reaches_the_other_host_once_mac_learning_is_off(labpm):
    L = labpm
    res = _up(L, mac_learning="on")
    assert "mac address-table learning" not in res.diffs["sw1"]
    _pipeline(L)
    # the switch learns A on the trunk from A's hairpinned broadcast and drops B's answer, which it would have to
    # send back out of the trunk (host 7's own traffic suffers alike: its broadcasts come back on the trunk too)
    assert _hairpin_loss(L) == 100.0
    res = _up(L, mac_learning="off")
    assert "mac address-table learning vlan 107,108" in res.diffs["sw1"]      # NAPALM shows "no" lines as "-"
    assert "\nno mac address-table learning vlan 107,108\n" in L.running_config()
    _pipeline(L)
    assert wait_for(lambda: _hairpin_loss(L) == 0.0, 20, "A and B to talk through the hairpin")
    assert lab_ping(L, 7, 8) == 0.0


def lab_ping(L, src: int, dst: int) -> float:
    from harmless.lab import topology
    return topology.ping(L.info, src, dst, count=2)


def test_the_devices_port_speed_is_exported_and_br_of_reports_none(labpm):
    L = labpm
    if not (st.load() and st.load().plan):
        _up(L)
    drv = L.driver()
    try:
        props = drv.port_properties()
    finally:
        drv.close()
    assert (props["FastEthernet0/7"]["speed_mbps"], props["GigabitEthernet0/1"]["speed_mbps"]) == (100.0, 1000.0)
    poller = exporter.DevicePoller()
    try:
        poller.poll_once()
        text = generate_latest(exporter.registry(poller)).decode()
    finally:
        poller._sessions.close_all()
    assert re.search(r'harmless_port_speed_mbps\{interface="FastEthernet0/7",ofport="7",switch="sw1"\} 100\.0', text)
    desc = state_ovs(st.load()).ofctl("-O", "OpenFlow13", "dump-ports-desc", "br-of-sw1")
    # the patch port has no speed in OVS (lib/netdev-vport.c has no get_features): docs/transparency.md
    assert re.search(r"7\(sw1-p7\):.*\n(?:.*\n)*?\s+speed: 0 Mbps now", desc)


def _events(path: Path, port: int) -> list[dict]:
    return [e for e in map(json.loads, path.read_text().splitlines()) if e.get("port") == port] if path.exists() \
        else []


def _carrier(ns: str) -> bool:
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show", "eth0"], capture_output=True, text=True).stdout
    return "LOWER_UP" in json.loads(out)[0]["flags"]


def _port_mod(L, dpid: int, port: int, config: int) -> float:
    """Controller sends OFPT_PORT_MOD (mask PORT_DOWN); returns when it did (``time.time()``)."""
    sent = L.state_dir / "portmod.jsonl"
    n = len(sent.read_text().splitlines()) if sent.exists() else 0
    with open(L.state_dir / "portmod.cmd", "a") as f:
        f.write(f"{dpid} {port} {config} {PORT_DOWN}\n")
    rec = wait_for(lambda: [json.loads(x) for x in sent.read_text().splitlines()[n:]] if sent.exists() else None,
                   10, "the controller to send the port-mod", 0.02)
    assert rec[0]["ev"] == "sent", rec
    return rec[0]["t"]


def test_port_down_from_the_controller_takes_the_hosts_link_down_and_down_restores_the_config(labpm):
    L = labpm
    res = _up(L)
    dpid = int(res.plan["switches"][0]["datapath_id"], 16)
    _pipeline(L)
    h8 = L.info["hosts"]["8"]["netns"]
    log = L.state_dir / "portlog.jsonl"
    watch = subprocess.Popen([sys.executable, "-m", "harmless.cli", "watch", "--interval", "1", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: subprocess.run(["pgrep", "-P", str(watch.pid), "-x", "tail"],
                                        capture_output=True).returncode == 0 or watch.poll() is not None, 30,
                 "harmless watch to follow ovs-vswitchd's log")
        assert watch.poll() is None, watch.stderr.read()
        assert wait_for(lambda: lab_ping(L, 7, 8) == 0.0, 20, "7 <-> 8 before")
        mark = len(_events(log, 8))
        t0 = _port_mod(L, dpid, 8, PORT_DOWN)
        down = wait_for(lambda: [e for e in _events(log, 8)[mark:] if e["config"] & PORT_DOWN and
                                 e["state"] & LINK_DOWN], 10, "PORT_DOWN + LINK_DOWN at the controller", 0.02)[0]
        assert lab_ping(L, 7, 8) == 100.0
        wait_for(lambda: not _carrier(h8), 60, "host 8 to lose its link (Fa0/8 shut on the device)", 0.05,
                 detail=lambda: f"watch said: {_drain(watch.stderr)} {_drain(watch.stdout)}")
        t_host = time.time()
        print(f"\nport-mod down -> port-status PORT_DOWN at the controller {1000 * (down['t'] - t0):.0f} ms; "
              f"-> host 8 link down {t_host - t0:.1f} s (hold + device commit)")
        assert re.search(r"interface FastEthernet0/8\n(?: .*\n)* shutdown\n", L.running_config())
        p8 = next(p for p in orch.status().switches[0].ports if p.ofport == 8)
        assert (p8.admin_down, p8.device_shut, p8.device_link, p8.br_of_state) == (True, True, "admin-down",
                                                                                     "LINK_DOWN")
        metrics = generate_latest(exporter.registry(None)).decode()
        for side in ("br_of", "device"):
            assert re.search(rf'harmless_port_admin_down\{{interface="FastEthernet0/8",ofport="8",side="{side}",'
                             r'switch="sw1"\} 1\.0', metrics), side
        assert lab_ping(L, 7, 8) == 100.0

        mark = len(_events(log, 8))
        t0 = _port_mod(L, dpid, 8, 0)
        up = wait_for(lambda: [e for e in _events(log, 8)[mark:] if e["state"] & LIVE], 60,
                      "LIVE at the controller once the device port is back", 0.05)[0]
        assert up["config"] == 0 and _carrier(h8)
        print(f"port-mod up -> port-status LIVE at the controller {up['t'] - t0:.1f} s (device commit + watch poll)")
        assert wait_for(lambda: lab_ping(L, 7, 8) == 0.0, 20, "7 <-> 8 after")
        assert "shutdown" not in L.running_config().split("interface FastEthernet0/8")[1].split("!")[0]
        assert st.load().port_admin == {}
        kinds = [(e["where"], e["admin"]) for e in map(json.loads, _stdout(watch)) if "admin" in e]
        assert ("br-of", "down") in kinds and ("device", "down") in kinds and ("device", "up") in kinds, kinds
    finally:
        watch.terminate()
        watch.wait(30)
    assert orch.down().config_restored
    assert L.running_config() == L.original


def _drain(stream) -> str:
    """What a running process wrote to ``stream`` so far (non-blocking)."""
    import os
    import select
    out = ""
    while select.select([stream], [], [], 0.2)[0]:
        chunk = os.read(stream.fileno(), 65536).decode()
        if not chunk:
            break
        out += chunk
    return out


def _stdout(proc) -> list[str]:
    """The JSON lines a running process printed so far (non-blocking)."""
    return [x for x in _drain(proc.stdout).splitlines() if x.startswith("{")]
