"""``harmless demo``: the whole core path on the built-in lab, with the bundled controller and real traffic.

lab up → pings inside VLAN 100 (direct, before HARMLESS) → controller (os-ken learning switch) → plan → up →
pings between every pair of hosts (now hairpinned through the server) → counters → ``down`` → check the device's
running config equals the one before ``up`` → lab down. Everything started is stopped, also on failure or Ctrl-C.
"""
from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml

from harmless import orchestrator as orch
from harmless import state as st
from harmless.deployment import state_ovs
from harmless.errors import HarmlessError, InputError
from harmless.lab import topology as lab
from harmless.otc import bridges
from harmless.otc.flows import trunk_ofport
from harmless.plan import Plan

CONTROLLER_APP = "harmless.pipelines.learning_switch"


def free_port(preferred: int | None = None) -> int:
    """A free TCP port on 127.0.0.1 (``preferred`` when it is free)."""
    if preferred:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", preferred))
                return preferred
            except OSError:
                pass
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_controller(port: int, log_file: Path, app: str = CONTROLLER_APP, netns: str | None = None,
                     env: dict[str, str] | None = None, extra_args: tuple[str, ...] = ()) -> subprocess.Popen:
    """Start ``osken-manager`` with ``app`` listening on 127.0.0.1:``port`` (OpenFlow), in ``netns`` if given.

    ``env`` adds environment variables (e.g. ``HARMLESS_OF_ROLE`` for the learning switch's controller role);
    ``extra_args`` more osken-manager options (e.g. ``--ctl-privkey``/``--ctl-cert``/``--ca-certs`` and
    ``--ofp-ssl-listen-port`` for TLS, with which osken-manager listens for TLS only).
    """
    mgr = Path(sys.executable).parent / "osken-manager"
    exe = str(mgr) if mgr.exists() else shutil.which("osken-manager")
    if not exe:
        raise HarmlessError("controller", "osken-manager not found", "run packaging/install.sh")
    out = open(log_file, "w")
    ns = ["ip", "netns", "exec", netns] if netns else []
    return subprocess.Popen([*ns, exe, "--ofp-tcp-listen-port", str(port), "--ofp-listen-host", "127.0.0.1",
                             *extra_args, app],
                            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, **(env or {})})


def stop_process(p: subprocess.Popen | None) -> None:
    if p is None or p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(5)


def _all_pairs_loss(info: dict, count: int) -> tuple[float, dict]:
    pairs = {}
    for a, b in itertools.permutations(sorted(int(h) for h in info["hosts"]), 2):
        pairs[f"{a}->{b}"] = lab.ping(info, a, b, count=count)
    return (sum(pairs.values()) / len(pairs) if pairs else 100.0), pairs


def run_demo(progress=lambda m: None, lab_name: str = "demo", hosts: tuple[int, ...] = (7, 8, 10),
             pings: int = 3) -> dict:
    """Run the demo; return the summary dict (``ping_loss_pct``, ``hairpinned_packets``, ``config_restored``, ...).

    Raises:
        InputError: a deployment is already up (``harmless down`` first).
        HarmlessError: any step failed (after cleaning up).
    """
    if st.load():
        raise InputError("harmless demo", "a HARMLESS deployment is already up", "run harmless down first")
    summary: dict = {"lab": lab_name, "hosts": list(hosts)}
    ctl = None
    deployed = False
    t0 = time.monotonic()
    try:
        # the server side runs in its own namespace so the demo works beside any other userspace OVS
        info = lab.lab_up(lab.LabSpec(name=lab_name, ssh_port=free_port(2299), hosts=hosts,
                                      server_netns=f"hl-{lab_name}-srv"), progress)
        d = lab.lab_dir(lab_name)
        progress("pinging between the hosts before HARMLESS (VLAN 100, switched by the legacy switch)")
        summary["ping_loss_before_pct"], _ = _all_pairs_loss(info, 1)
        port = 6653   # inside the server namespace: nothing else listens there
        progress(f"starting the bundled controller ({CONTROLLER_APP}) on tcp:127.0.0.1:{port}")
        ctl = start_controller(port, d / "controller.log", netns=info["server_netns"])
        inv_path = d / "inventory.yaml"
        inv_path.write_text(yaml.safe_dump(lab.inventory(info, [f"tcp:127.0.0.1:{port}"]), sort_keys=False))
        progress("harmless plan")
        res = orch.plan(str(inv_path), progress)
        summary["plan"] = [{"interface": p.interface, "ofport": p.ofport, "vid": p.vid}
                           for p in res.plan.switches[0].ports]
        summary["switch_diff_lines"] = len(res.diffs["sw1"].splitlines())
        progress("harmless up")
        orch.up(str(inv_path), progress)
        deployed = True
        progress("waiting for the controller to connect to br-of")
        end = time.monotonic() + 30
        while True:
            s = orch.status(with_device=False)
            ctls = s.switches[0].controllers
            if ctls and all(c["is_connected"] for c in ctls):
                break
            if time.monotonic() > end:
                raise HarmlessError("controller", "did not connect to br-of within 30 s", f"see {d / 'controller.log'}")
            time.sleep(0.5)
        progress(f"pinging between every pair of hosts ({pings} pings each), hairpinned through the server")
        summary["ping_loss_pct"], summary["pairs"] = _all_pairs_loss(info, pings)
        s = orch.status(with_device=False)
        summary["ports"] = [p.model_dump(mode="json") for p in s.switches[0].ports]
        state_now = st.load()
        ovs = state_ovs(state_now)
        summary["hairpinned_packets"] = bridges.otc_hairpinned_packets(ovs)
        sp = Plan.from_dict(state_now.plan).switches[0]
        a, b = sp.ports[0], sp.ports[-1]
        trace = ovs.appctl("ofproto/trace", "br-otc",
                           f"in_port={trunk_ofport(1, 0)},dl_vlan={a.vid},dl_src={lab.host_mac(a.ofport)},"
                           f"dl_dst={lab.host_mac(b.ofport)},dl_type=0x0800,nw_src={lab.host_ip(a.ofport)},"
                           f"nw_dst={lab.host_ip(b.ofport)}")
        summary["trace_datapath_actions"] = next((ln.split(":", 1)[1].strip() for ln in trace.splitlines()
                                                  if ln.startswith("Datapath actions")), "")
        progress("harmless down")
        down = orch.down(progress)
        deployed = False
        summary["config_restored"] = down.config_restored
        progress("pinging again after down (back on the legacy switch)")
        summary["ping_loss_after_down_pct"], _ = _all_pairs_loss(info, 1)
    finally:
        if deployed:
            try:
                orch.down(progress)
            except HarmlessError as e:
                progress(f"cleanup: harmless down failed: {e}")
        stop_process(ctl)
        lab.lab_down(lab_name)
    summary["seconds"] = round(time.monotonic() - t0, 1)
    summary["ok"] = (summary.get("ping_loss_pct") == 0.0 and summary.get("hairpinned_packets", 0) > 0
                     and summary.get("config_restored") is True)
    return summary
