"""``harmless demo``: the whole core path on the built-in lab, with the bundled controller and real traffic.

lab up → pings inside VLAN 100 (direct, before HARMLESS) → controller (os-ken learning switch) → plan → up →
pings between every pair of hosts (now hairpinned through the server) → counters → ``down`` → check the device's
running config equals the one before ``up`` → lab down. Everything started is stopped, also on failure or Ctrl-C.
"""
from __future__ import annotations

import itertools
import time
from pathlib import Path

import yaml

from harmless import orchestrator as orch
from harmless import state as st
from harmless.deployment import state_ovs
from harmless.errors import HarmlessError, InputError
from harmless.lab import topology as lab
from harmless.lab.controller import LEARNING_SWITCH, start_controller
from harmless.otc import bridges
from harmless.otc.flows import trunk_ofport
from harmless.plan import Plan
from harmless.procs import free_port, stop

CONTROLLER_APP = LEARNING_SWITCH


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
        summary.update(_plan(inv_path, progress))
        progress("harmless up")
        orch.up(str(inv_path), progress)
        deployed = True
        _wait_connected(d / "controller.log")
        progress(f"pinging between every pair of hosts ({pings} pings each), hairpinned through the server")
        summary["ping_loss_pct"], summary["pairs"] = _all_pairs_loss(info, pings)
        s = orch.status(with_device=False)
        summary["ports"] = [p.model_dump(mode="json") for p in s.switches[0].ports]
        state_now = st.load()
        ovs = state_ovs(state_now)
        summary["hairpinned_packets"] = bridges.otc_hairpinned_packets(ovs)
        sp = Plan.from_dict(state_now.plan).switches[0]
        summary["trace_datapath_actions"] = _trace(ovs, sp)
        progress("harmless down")
        down = orch.down(progress)
        deployed = False
        summary["config_restored"] = down.config_restored
        progress("pinging again after down (back on the legacy switch)")
        summary["ping_loss_after_down_pct"], _ = _all_pairs_loss(info, 1)
    finally:
        cleanup(deployed, ctl, lab_name, progress)
    summary["seconds"] = round(time.monotonic() - t0, 1)
    summary["ok"] = (summary.get("ping_loss_pct") == 0.0 and summary.get("hairpinned_packets", 0) > 0
                     and summary.get("config_restored") is True)
    return summary


def _plan(inv_path: Path, progress) -> dict:
    """``harmless plan``: the port plan and the size of the switch's config diff."""
    progress("harmless plan")
    res = orch.plan(str(inv_path), progress)
    return {"plan": [{"interface": p.interface, "ofport": p.ofport, "vid": p.vid} for p in res.plan.switches[0].ports],
            "switch_diff_lines": len(res.diffs["sw1"].splitlines())}


def _wait_connected(log: Path, timeout: float = 30) -> None:
    """Wait until every controller of the switch's br-of is connected.

    Raises:
        HarmlessError: not within ``timeout`` s (the controller's log is named).
    """
    end = time.monotonic() + timeout
    while True:
        s = orch.status(with_device=False)
        ctls = s.switches[0].controllers
        if ctls and all(c["is_connected"] for c in ctls):
            return
        if time.monotonic() > end:
            raise HarmlessError("controller", f"did not connect to br-of within {timeout:g} s", f"see {log}")
        time.sleep(0.5)


def _trace(ovs, sp) -> str:
    """Datapath actions of ``ofproto/trace`` on br-otc for a frame from the first to the last migrated port of
    switch plan ``sp`` (arriving on the trunk with the first port's VID)."""
    a, b = sp.ports[0], sp.ports[-1]
    trace = ovs.appctl("ofproto/trace", "br-otc",
                       f"in_port={trunk_ofport(1, 0)},dl_vlan={a.vid},dl_src={lab.host_mac(a.ofport)},"
                       f"dl_dst={lab.host_mac(b.ofport)},dl_type=0x0800,nw_src={lab.host_ip(a.ofport)},"
                       f"nw_dst={lab.host_ip(b.ofport)}")
    return next((ln.split(":", 1)[1].strip() for ln in trace.splitlines() if ln.startswith("Datapath actions")), "")


def cleanup(deployed: bool, ctl, lab_name: str, progress) -> None:
    """Undo whatever a lab demo still has up: the deployment (``harmless down``, errors reported through
    ``progress``), the controller process ``ctl`` (None: none), the lab ``lab_name``. Used by the demo and the QoS demo."""
    if deployed:
        try:
            orch.down(progress)
        except HarmlessError as e:
            progress(f"cleanup: harmless down failed: {e}")
    stop(ctl)
    lab.lab_down(lab_name)
