"""Faucet 1.10 (PyPI ``faucet``) and Gauge against br-of on the lab, with the shipped ``examples/faucet`` configs.

One lab for the module (hosts on FastEthernet0/7, 0/8, 0/10; HARMLESS's server side in its own namespace, where
Faucet and Gauge run too; Prometheus labels ports by their faucet.yaml name, h7 = OpenFlow port 7):

1. ``harmless up`` against a controller port where nothing listens: refused before any change (exit 2, one line
   naming the target, ``Connection refused`` and the fix; device config byte-identical, no state); against a port
   where something listens that never speaks OpenFlow: exit 1 after the wait, everything rolled back.
2. ``harmless up`` with Faucet (tcp:127.0.0.1:6653) and Gauge (6654): up waits for them and names them; hosts learn
   (Faucet's ``vlan_hosts_learned``) and ping each other through the hairpin; Gauge exports br-of port counters.
3. The Faucet ACL of port 10 drops ICMP from that host (pings fail) while its ARP still passes.
4. A pulled host cable (the lab's veth of FastEthernet0/8 down, ``harmless watch`` running) shows as down in
   Faucet's Prometheus ``port_status`` and comes back up when plugged in again; pings work again.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import wait_for
import yaml
from click.testing import CliRunner

from harmless import state as st
from harmless.cli import main
from harmless.procs import stop as stop_process
from harmless.lab import topology as lab
from tests.lab.conftest import make_lab, quiet_session

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "faucet"
FAUCET_PORT, GAUGE_PORT = 6653, 6654
FAUCET_PROM, GAUGE_PROM = 9302, 9303
BIN = Path(sys.executable).parent


def _faucet_env(state: Path) -> dict:
    return {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}",   # faucet execs osken-manager from PATH
            "FAUCET_CONFIG": str(state / "faucet.yaml"), "FAUCET_LOG": str(state / "faucet.log"),
            "FAUCET_EXCEPTION_LOG": str(state / "faucet_exception.log"),
            "FAUCET_PROMETHEUS_ADDR": "127.0.0.1", "FAUCET_PROMETHEUS_PORT": str(FAUCET_PROM),
            "GAUGE_CONFIG": str(state / "gauge.yaml"), "GAUGE_LOG": str(state / "gauge.log"),
            "GAUGE_EXCEPTION_LOG": str(state / "gauge_exception.log")}


def _run_in(ns: str, argv: list[str], state: Path, log: str) -> subprocess.Popen:
    out = open(state / log, "w")
    return subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=_faucet_env(state), cwd=state, start_new_session=True)


def start_faucet(state: Path, info: dict) -> subprocess.Popen:
    """Faucet with the example faucet.yaml (checked first with check_faucet_config) in the server namespace."""
    if shutil.which("faucet", path=str(BIN)) is None:
        pytest.skip("faucet is not installed (packaging/requirements.txt has it; run packaging/install.sh)")
    shutil.copy(EXAMPLES / "faucet.yaml", state / "faucet.yaml")
    shutil.copy(EXAMPLES / "gauge.yaml", state / "gauge.yaml")     # faucet_configs: faucet.yaml, cwd = state
    chk = subprocess.run([str(BIN / "check_faucet_config"), str(state / "faucet.yaml")], capture_output=True,
                         text=True, env=_faucet_env(state))
    assert chk.returncode == 0, chk.stdout + chk.stderr
    return _run_in(info["server_netns"], [str(BIN / "faucet"), f"--ryu-ofp-tcp-listen-port={FAUCET_PORT}",
                                          "--ryu-ofp-listen-host=127.0.0.1"], state, "faucet.out")


@pytest.fixture(scope="module")
def flab(tmp_path_factory):
    gen = make_lab(tmp_path_factory, hosts=(7, 8, 10), controller=start_faucet)
    L = next(gen)
    gauge = _run_in(L.info["server_netns"], [str(BIN / "gauge"), f"--ryu-ofp-tcp-listen-port={GAUGE_PORT}",
                                              "--ryu-ofp-listen-host=127.0.0.1"], L.state_dir, "gauge.out")
    inv = yaml.safe_load(L.inventory.read_text())
    inv["switches"][0]["openflow"]["controllers"] = [f"tcp:127.0.0.1:{FAUCET_PORT}", f"tcp:127.0.0.1:{GAUGE_PORT}"]
    L.inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
    try:
        yield L
    finally:
        stop_process(gauge)
        next(gen, None)


def prometheus(ns: str, port: int) -> dict[tuple[str, tuple], float]:
    """Scrape a Prometheus endpoint inside ``ns``: ``{(metric name, sorted label items): value}``."""
    code = ("import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("
            "'http://127.0.0.1:%s/metrics' % sys.argv[1], timeout=5).read().decode())")
    p = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code, str(port)], capture_output=True,
                       text=True, timeout=30)
    if p.returncode != 0:
        return {}
    from prometheus_client.parser import text_string_to_metric_families
    out = {}
    for fam in text_string_to_metric_families(p.stdout):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def metric(samples: dict, name: str, **labels) -> float | None:
    for (n, lab_items), v in samples.items():
        if n == name and all(dict(lab_items).get(k) == str(x) for k, x in labels.items()):
            return v
    return None



def test_up_without_a_listening_controller_is_refused_before_any_change(flab):
    inv = yaml.safe_load(flab.inventory.read_text())
    inv["switches"][0]["openflow"]["controllers"] = ["tcp:127.0.0.1:6999"]      # nothing listens there
    p = flab.inventory.with_name("inv-nobody.yaml")
    p.write_text(yaml.safe_dump(inv, sort_keys=False))
    original = flab.running_config()
    t0 = time.monotonic()
    r = CliRunner().invoke(main, ["up", "-i", str(p), "--wait-controller", "1"])   # probes 1 s, then refuses
    took = time.monotonic() - t0
    assert r.exit_code == 2, r.output
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and "no controller of br-of-sw1 is reachable" in errors[0], r.stderr
    assert "tcp:127.0.0.1:6999: Connection refused" in errors[0] and "up --no-wait skips this check" in errors[0]
    assert "Traceback" not in r.stderr
    assert flab.running_config() == original
    assert st.load() is None
    print(f"\nup against a port where nothing listens: exit {r.exit_code} after {took:.1f} s: {errors[0]}")


def test_up_when_what_listens_never_becomes_a_controller_rolls_back(flab):
    """Something accepts TCP on the target but never speaks OpenFlow: the check before any change only warns (no
    HELLO), OVS never completes a handshake, and up rolls back after --wait-controller."""
    inv = yaml.safe_load(flab.inventory.read_text())
    inv["switches"][0]["openflow"]["controllers"] = ["tcp:127.0.0.1:6998"]
    p = flab.inventory.with_name("inv-silent.yaml")
    p.write_text(yaml.safe_dump(inv, sort_keys=False))
    silent = _run_in(flab.info["server_netns"], [sys.executable, "-c", SILENT_LISTENER, "6998"], flab.state_dir,
                     "silent.out")
    try:
        wait_for(lambda: "listening" in (flab.state_dir / "silent.out").read_text(), 15, "the silent listener")
        original = flab.running_config()
        r = CliRunner().invoke(main, ["up", "-i", str(p), "--wait-controller", "4"])
    finally:
        stop_process(silent)
    assert r.exit_code == 1, r.output
    said = " ".join(r.stderr.split())
    assert "tcp:127.0.0.1:6998 of br-of-sw1" in said and "no OpenFlow HELLO" in said        # the warning
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("error: br-of-sw1: no controller connected within 4 s to tcp:127.0.0.1:6998"), line
    assert "rolled back" in line and "fix: start the controller" in line, line
    assert flab.running_config() == original
    assert st.load() is None


#: a TCP listener that accepts and never answers (not an OpenFlow controller)
SILENT_LISTENER = """import socket, sys, time
s = socket.create_server(("127.0.0.1", int(sys.argv[1])))
print("listening", flush=True)
conns = []
while True:
    conns.append(s.accept()[0])
"""


def test_faucet_learns_pings_and_gauge_counts(flab):
    r = CliRunner().invoke(main, ["up", "-i", str(flab.inventory), "--json", "--wait-controller", "30"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout.strip().splitlines()[-1])
    # up waited for a controller and names the connected ones (Faucet; Gauge too when it was as quick)
    assert f"tcp:127.0.0.1:{FAUCET_PORT}" in res["controllers_connected"]["br-of-sw1"] or \
        f"tcp:127.0.0.1:{GAUGE_PORT}" in res["controllers_connected"]["br-of-sw1"], res["controllers_connected"]
    ns = flab.info["server_netns"]
    wait_for(lambda: metric(prometheus(ns, FAUCET_PROM), "dp_status", dp_id="0x1") == 1.0, 60,
             "Faucet to configure datapath 0x1")
    losses = wait_for(lambda: (lambda x: x if x == [0.0, 0.0] else None)(
        [lab.ping(flab.info, 7, 8, count=3), lab.ping(flab.info, 8, 7, count=3)]), 60, "pings 7<->8 through Faucet")
    assert losses == [0.0, 0.0]
    samples = prometheus(ns, FAUCET_PROM)
    learned = metric(samples, "vlan_hosts_learned", dp_id="0x1", vlan="100")
    assert learned is not None and learned >= 2, learned
    g = wait_for(lambda: metric(prometheus(ns, GAUGE_PROM), "of_port_rx_packets", dp_id="0x1", port="h7"), 60,
                 "Gauge to export port 7's counters")
    assert g > 0
    print(f"\nFaucet: vlan_hosts_learned={learned:.0f}; Gauge: of_port_rx_packets(port 7)={g:.0f}")


def test_faucet_acl_drops_icmp_from_port_10_only(flab):
    assert lab.ping(flab.info, 10, 7, count=3) == 100.0           # the ACL drops ICMP from port 10
    neigh = subprocess.run(["ip", "-n", flab.info["hosts"]["10"]["netns"], "neigh", "show",
                            flab.info["hosts"]["7"]["ip"]], capture_output=True, text=True).stdout
    assert flab.info["hosts"]["7"]["mac"] in neigh, neigh          # ...but ARP from port 10 passed
    assert lab.ping(flab.info, 7, 8, count=3) == 0.0               # others unaffected


def test_pulled_host_link_shows_down_in_faucet_and_comes_back(flab):
    ns, sw_ns = flab.info["server_netns"], flab.info["switch_netns"]
    veth = flab.info["port_map"]["FastEthernet0/8"]
    assert metric(prometheus(ns, FAUCET_PROM), "port_status", dp_id="0x1", port="h8") == 1.0
    watch = subprocess.Popen([sys.executable, "-m", "harmless.cli", "watch", "--interval", "1", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ})
    try:
        # watch polls every second: its session to the switch open is enough (the next poll sees the cable)
        wait_for(lambda: watch.poll() is not None or quiet_session(watch.pid, flab.info["ssh_port"], 0), 30,
                 "watch connected to the switch")
        t0 = time.monotonic()
        subprocess.run(["ip", "-n", sw_ns, "link", "set", veth, "down"], check=True)
        wait_for(lambda: metric(prometheus(ns, FAUCET_PROM), "port_status", dp_id="0x1", port="h8") == 0.0, 20,
                 "Faucet's port_status of port 8 to go to 0 (OFPPS_LINK_DOWN)")
        down_s = time.monotonic() - t0
        assert lab.ping(flab.info, 7, 8, count=2) == 100.0
        t0 = time.monotonic()
        subprocess.run(["ip", "-n", sw_ns, "link", "set", veth, "up"], check=True)
        wait_for(lambda: metric(prometheus(ns, FAUCET_PROM), "port_status", dp_id="0x1", port="h8") == 1.0, 20,
                 "Faucet's port_status of port 8 back to 1")
        up_s = time.monotonic() - t0
        wait_for(lambda: lab.ping(flab.info, 7, 8, count=2) == 0.0, 30, "pings 7->8 again")
        print(f"\nFaucet port_status of port 8: down after {down_s:.1f} s, up after {up_s:.1f} s")
    finally:
        watch.terminate()
        watch.wait(10)
        subprocess.run(["ip", "-n", sw_ns, "link", "set", veth, "up"])
