"""The controller side of br-of on a private OVS with real os-ken controllers (no lab):

* mutual TLS: the switch's key/certificate and the controller CA from ``openflow.tls`` (``set-ssl``), an os-ken
  controller with ``--ctl-privkey/--ctl-cert/--ca-certs`` (material made with ``ovs-pki``): connects; with a wrong CA
  on either side it does not, and the status (``last_error``, the ``stream_ssl`` log lines) says why;
* the check ``up`` makes before touching any switch (``harmless.otc.reach``): TCP, the TLS handshake and the
  controller's HELLO from the server's namespace, refused with the reason for a wrong CA on either side;
* ``wait_controllers`` against a port where nothing listens: fails within the timeout naming the target and error;
* Controller rows carry ``max_backoff``/``inactivity_probe``/out-of-band;
* reconnect time after a controller restart: a plain OVS bridge (OVS defaults), a br-of with OVS's default backoff
  (HARMLESS before issue #13) and a br-of with HARMLESS's default (``max_backoff_ms`` 1000), printed.
"""
from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from harmless.inventory import parse_inventory
from harmless.lab.controller import listening, start_controller
from harmless.procs import stop as stop_process
from harmless.otc import bridges
from harmless.otc import controllers as cs
from harmless.otc import reach
from harmless.ovs import Ovs
from harmless.plan import Plan, PortPlan, SwitchPlan, TrunkPlan
from tests.conftest import require_root_ovs, wait_for

TRUNK = "trk0"
APP = str(Path(__file__).with_name("connect_times_app.py"))


def switch_plan(controllers=(), tls=None, name="sw1", dpid="00000000000000aa", max_backoff_ms=1000, ports=True):
    pp = (PortPlan("FastEthernet0/7", 7, 107, "GigabitEthernet0/1", f"harmless-{name}-p7"),) if ports else ()
    tr = (TrunkPlan("GigabitEthernet0/1", TRUNK, "system", (), (107,)),) if ports else ()
    return SwitchPlan(name, f"br-of-{name}", dpid, ("OpenFlow13",), tuple(controllers), pp, tr,
                      max_backoff_ms=max_backoff_ms, tls=tls)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A private OVS in its own namespace (where the controllers run too) and a PKI made with ovs-pki."""
    require_root_ovs()
    ns = f"hlc-{uuid.uuid4().hex[:6]}"
    base = tmp_path_factory.mktemp("ctl")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    o = Ovs(base / "ovs", netns=ns)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        subprocess.run(["ip", "-n", ns, "link", "add", TRUNK, "type", "veth", "peer", "name", "trk0-peer"],
                       check=True)
        for dev in (TRUNK, "trk0-peer"):
            subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
        o.start()
        yield {"ovs": o, "ns": ns, "dir": base, "pki": make_pki(base / "tls")}
    finally:
        try:
            o.stop()
        finally:
            subprocess.run(["ip", "netns", "del", ns])


def make_pki(d: Path) -> dict:
    """Two independent ovs-pki PKIs: ``pki`` (switch and controller certificates) and ``other`` (a wrong CA)."""
    d.mkdir()

    def pki(*args):
        subprocess.run(["ovs-pki", *args, "--dir", str(d / "pki"), "-l", str(d / "pki.log")], cwd=d, check=True,
                       capture_output=True)
    pki("init")
    pki("req+sign", "sw", "switch")
    pki("req+sign", "ctl", "controller")
    subprocess.run(["ovs-pki", "init", "--dir", str(d / "other"), "-l", str(d / "pki.log")], check=True,
                   capture_output=True)
    return {"sw_key": str(d / "sw-privkey.pem"), "sw_cert": str(d / "sw-cert.pem"),
            "ctl_key": str(d / "ctl-privkey.pem"), "ctl_cert": str(d / "ctl-cert.pem"),
            "switch_ca": str(d / "pki/switchca/cacert.pem"), "controller_ca": str(d / "pki/controllerca/cacert.pem"),
            "other_switch_ca": str(d / "other/switchca/cacert.pem"),
            "other_controller_ca": str(d / "other/controllerca/cacert.pem")}


def tls_controller(env, port: int, ca_certs: str, log: str):
    k = env["pki"]
    return start_controller(port + 1000, env["dir"] / log, netns=env["ns"], extra_args=(
        "--ofp-ssl-listen-port", str(port), "--ctl-privkey", k["ctl_key"], "--ctl-cert", k["ctl_cert"],
        "--ca-certs", ca_certs))


def wait_log(path: Path, pattern: str, timeout: float) -> re.Match:
    return wait_for(lambda: re.search(pattern, path.read_text() if path.exists() else ""), timeout,
                    f"{pattern!r} in {path}", detail=lambda: path.read_text()[-1500:])


def test_mutual_tls_with_osken_connects(env):
    ovs, k = env["ovs"], env["pki"]
    ctl = tls_controller(env, 6643, k["switch_ca"], "tls-ok.log")
    try:
        plan = Plan((switch_plan(("ssl:127.0.0.1:6643",), (k["sw_key"], k["sw_cert"], k["controller_ca"])),))
        bridges.apply(ovs, plan)
        ssl = cs.current_ssl(ovs)
        assert (ssl["private_key"], ssl["certificate"], ssl["ca_cert"]) == (k["sw_key"], k["sw_cert"],
                                                                          k["controller_ca"])
        assert cs.wait_controllers(ovs, plan, 30) == {"br-of-sw1": ["ssl:127.0.0.1:6643"]}
        # the controller completed the OpenFlow handshake over TLS and programmed the switch
        wait_log(env["dir"] / "tls-ok.log", r"datapath 00000000000000aa connected", 15)
        assert "actions=CONTROLLER" in ovs.ofctl("-O", "OpenFlow13", "dump-flows", "br-of-sw1")
    finally:
        stop_process(ctl)


@pytest.mark.parametrize("side", ["switch trusts another CA", "controller trusts another CA"])
def test_wrong_ca_does_not_connect_and_status_says_why(env, side):
    ovs, k = env["ovs"], env["pki"]
    switch_ca = k["other_controller_ca"] if side.startswith("switch") else k["controller_ca"]
    ctl_ca = k["switch_ca"] if side.startswith("switch") else k["other_switch_ca"]
    port = 6644 if side.startswith("switch") else 6645       # a fresh target: a fresh OVS connection and backoff
    ctl = tls_controller(env, port, ctl_ca, f"tls-bad-{side[0]}.log")
    try:
        plan = Plan((switch_plan((f"ssl:127.0.0.1:{port}",), (k["sw_key"], k["sw_cert"], switch_ca)),))
        bridges.apply(ovs, plan)
        t0 = time.monotonic()
        with pytest.raises(cs.NoControllerError) as e:
            cs.wait_controllers(ovs, plan, 10)
        assert 10 <= time.monotonic() - t0 < 25
        msg = str(e.value)
        assert msg.startswith(f"br-of-sw1: no controller connected within 10 s to ssl:127.0.0.1:{port}")
        assert "fix: start the controller" in msg
        st = bridges.port_status(ovs, plan.switches[0])["controllers"][0]
        assert st["target"] == f"ssl:127.0.0.1:{port}" and st["is_connected"] is False
        # the reason: OVS's TLS layer logs the failed verification (switch side) or the controller's alert
        tls = " ".join(st["tls_log"])
        want = r"certificate verify failed" if side.startswith("switch") else r"(unknown ca|alert|certificate)"
        assert re.search(want, tls, re.I), st
        assert re.search(want, msg, re.I), msg
        print(f"\n[{side}] wait_controllers: {msg}\n[{side}] status tls_log: {st['tls_log'][-1]}")
    finally:
        stop_process(ctl)


def reach_inventory(env, port: int, ca_cert: str):
    """A one-switch inventory whose br-of has one ``ssl:`` controller on ``port``, in the env's namespace."""
    k = env["pki"]
    return parse_inventory(yaml.safe_dump({"server": {"netns": env["ns"]}, "switches": [{
        "name": "sw1", "driver": "ios", "host": "192.0.2.1", "username": "u", "password_env": "X",
        "access_ports": ["FastEthernet0/7"],
        "trunks": [{"switch_port": "GigabitEthernet0/1", "server_interface": TRUNK}],
        "openflow": {"controllers": [f"ssl:127.0.0.1:{port}"],
                     "tls": {"private_key": k["sw_key"], "certificate": k["sw_cert"], "ca_cert": ca_cert}}}]}),
        "inv.yaml")


def test_controller_check_before_up_over_tls(env):
    """harmless up's controller check (harmless.otc.reach), from the server's namespace, against real os-ken TLS
    controllers: the handshake with openflow.tls succeeds and the controller's HELLO arrives; or it is refused with
    the reason: the switch side's certificate verification (it trusts another CA), the controller's alert (it trusts
    another CA), the refused connection (nothing listens)."""
    k = env["pki"]
    cases = []          # (case, check, findings)
    for port, ctl_ca, probes in ((6646, k["switch_ca"], (("both trust each other", k["controller_ca"]),
                                                          ("switch trusts another CA", k["other_controller_ca"]))),
                                 (6647, k["other_switch_ca"], (("controller trusts another CA", k["controller_ca"]),)),
                                 (6649, None, (("nothing listens", k["controller_ca"]),))):
        ctl = None if ctl_ca is None else tls_controller(env, port, ctl_ca, f"reach-{port}.log")
        try:
            if ctl is not None:
                wait_for(lambda: listening(ctl.pid, port), 30, f"the controller to listen on {port}")
            for case, switch_ca in probes:
                checks, found = reach.check_controllers(reach_inventory(env, port, switch_ca), "inv.yaml")
                cases.append((case, port, checks[0], found))
        finally:
            stop_process(ctl)
    for case, port, c, found in cases:
        print(f"\n[{case}] {c.stage}: {c.reason or c.hello}")
        if case.startswith("both"):
            assert c.stage == "ok" and c.hello.startswith("OpenFlow") and found == [], (c, found)
            continue
        assert [f.kind for f in found] == ["controller-unreachable"]
        line = found[0].line()
        assert line.startswith(f"inv.yaml: switches[0].openflow.controllers: no controller of br-of-sw1 is reachable "
                               f"(from namespace {env['ns']}): ssl:127.0.0.1:{port}: "), line
        assert "up --no-wait skips this check" in line
        want = {"switch": ("tls", r"certificate verify failed"),
                "controller": ("tls", r"alert .*(unknown ca|certificate)"),
                "nothing": ("tcp", r"Connection refused")}[case.split()[0]]
        assert c.stage == want[0] and re.search(want[1], c.reason, re.I), c


def test_wait_controllers_fails_when_nothing_listens(env):
    ovs = env["ovs"]
    plan = Plan((switch_plan(("tcp:127.0.0.1:6999",)),))
    bridges.apply(ovs, plan)
    t0 = time.monotonic()
    with pytest.raises(cs.NoControllerError, match=r"br-of-sw1: no controller connected within 3 s to "
                                                   r"tcp:127.0.0.1:6999 \(tcp:127.0.0.1:6999: Connection refused\)"):
        cs.wait_controllers(ovs, plan, 3)
    assert 3 <= time.monotonic() - t0 < 10
    rows = cs.controller_rows(ovs, "br-of-sw1")
    assert [(r["max_backoff"], r["inactivity_probe"]) for r in rows] == [(1000, 5000)]
    mode = ovs.vsctl("get", "Controller", rows[0]["uuid"], "connection_mode").strip()
    assert mode == "out-of-band"
    # a plan without controllers has nothing to wait for
    assert cs.wait_controllers(ovs, Plan((switch_plan(()),)), 1) == {}


#: how long the controller is down in each round (s): the rounds land at different points of OVS's backoff schedule
DOWN_S = (2.0, 5.0, 9.0)
POLL = """import socket, sys, time
while True:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2).close()
        break
    except OSError:
        time.sleep(0.005)   # the measurement's resolution: when the port listens again, to 5 ms
print(f"{time.time():.6f}", flush=True)
"""


def test_reconnect_time_after_a_controller_restart(env):
    """Plain OVS bridge (OVS defaults: max_backoff 8 s) vs br-of with OVS's default backoff (HARMLESS before) vs
    br-of with HARMLESS's default max_backoff_ms 1000; the controller is down ``down`` seconds, then restarted."""
    ovs, ns = env["ovs"], env["ns"]
    port = 6655
    target = f"tcp:127.0.0.1:{port}"
    plan = Plan((switch_plan((target,)),
                 switch_plan((target,), name="sw2", dpid="00000000000000bb", max_backoff_ms=8000, ports=False)))
    bridges.apply(ovs, plan)
    ovs.vsctl("--may-exist", "add-br", "br-plain", "--", "set", "Bridge", "br-plain", "datapath_type=netdev",
              "fail_mode=secure", "protocols=OpenFlow13", "other_config:datapath-id=00000000000000cc",
              "--", "set-controller", "br-plain", target)
    ovs.vsctl("set", "Controller", ovs.vsctl("get", "Bridge", "br-plain", "controller").strip("[] \n"),
              "connection_mode=out-of-band")
    names = {"00000000000000cc": "plain OVS bridge (OVS defaults)",
             "00000000000000bb": "br-of, max_backoff 8000 ms (OVS default; HARMLESS before)",
             "00000000000000aa": "br-of, max_backoff 1000 ms (HARMLESS default)"}
    results: dict[str, list[float]] = {n: [] for n in names}
    ctl = None
    try:
        log = env["dir"] / "reconnect-0.log"
        ctl = start_controller(port, log, app=APP, netns=ns)
        for dpid in names:
            wait_log(log, f"CONNECTED dpid={dpid}", 30)
        assert set(cs.wait_controllers(ovs, plan, 10)) == {"br-of-sw1", "br-of-sw2"}   # as `harmless up` does
        for rnd, down in enumerate(DOWN_S, start=1):
            time.sleep(3)                     # a connection that lived a while (OVS resets its backoff then)
            stop_process(ctl)
            time.sleep(down)                  # the behaviour under test: the controller down `down` seconds
            poll = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", POLL, str(port)],
                                    stdout=subprocess.PIPE, text=True)
            log = env["dir"] / f"reconnect-{rnd}.log"
            ctl = start_controller(port, log, app=APP, netns=ns)
            listening = float(poll.communicate(timeout=60)[0])
            for dpid in names:
                t = float(wait_log(log, rf"CONNECTED dpid={dpid} t=([\d.]+)", 30).group(1))
                results[dpid].append(round(t - listening, 2))
    finally:
        stop_process(ctl)
        ovs.vsctl("--if-exists", "del-br", "br-plain", "--", "--if-exists", "del-br", "br-of-sw2")
    print("\nreconnect time after a controller restart (s from listening again to the switch's handshake; "
          f"controller down {', '.join(f'{d:g}' for d in DOWN_S)} s, plus its start-up):")
    for dpid, name in names.items():
        print(f"  {name:60s} {results[dpid]}  max {max(results[dpid]):.2f}")
    # OVS retries every max_backoff (1 s), plus the handshake on a busy machine: about one second
    assert all(0 <= t <= 2.0 for t in results["00000000000000aa"]), results
