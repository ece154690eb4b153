"""A take-over killed at every step of its journal (issue #23): ``harmless failover`` on the standby is SIGKILLed right
after each record (``failover.begin`` … ``failover.end``, :mod:`harmless.ha.failover`), on the two-server lab (EOS,
agents stopped so that nothing but the command under test acts).

Every case must end, after one ``harmless recover`` on that server (run in the test's process: only the command
under test is its own process), with: exactly one trunk carrying HARMLESS's
VLANs on the device (never both: the device's config is the arbiter), the server's role as the device says (its br-of
connected to the controller exactly when its trunk carries them), no unfinished journal. A final ``down`` from the
other server gives back the exact original."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from harmless import orchestrator
from harmless import state as st
from harmless.deployment import state_ovs
from harmless.ha.failover import converge
from harmless.ha import demo, lab
from harmless.plan import Plan
from tests.conftest import require_root_ovs
from tests.lib.ha import deployed_pair

pytestmark = pytest.mark.lab

STEPS = ["failover.begin", "fence.commit", "fence.committed", "roles.apply", "roles.applied", "roles.save",
         "failover.end"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The lab deployed from a, both agents then stopped; torn down afterwards."""
    require_root_ovs()
    import importlib.util
    if importlib.util.find_spec("fake_switches") is None:
        pytest.skip("fake-switches is not installed (packaging/install.sh installs it)")
    with deployed_pair("f", tmp_path_factory.mktemp("hafault")) as info:
        for s in lab.SERVERS:
            lab.stop_agent(info, s)
        info["original"] = _original(info)
        yield info


def _original(info) -> str:
    with demo._as(info, "a"):
        return st.read_backup(st.active_original("sw1"))


def cli(info, server: str, *args: str, **fault) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARMLESS_FAULT")}
    env.update(lab.server_env(info, server))
    env.update({f"HARMLESS_FAULT_{k.upper()}": v for k, v in fault.items()})
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "harmless.cli", *args], env=env, capture_output=True, text=True,
                       timeout=240, stdin=subprocess.DEVNULL)
    print(f"{server}: harmless {' '.join(args)} {fault}: exit {p.returncode} in {time.monotonic() - t0:.1f} s")
    return p


def role_on(info, server: str) -> tuple[str, list[str]]:
    """``(the server's role as its state says, its br-of's controllers)``."""
    with demo._as(info, server):
        s = st.load()
    sp = Plan.from_dict(s.plan).switches[0]
    return ("standby" if sp.standby else "active"), state_ovs(s).vsctl("get-controller", "br-of-sw1").split()


def trunk_of(info, server: str) -> str:
    with demo._as(info, server):
        return Plan.from_dict(st.load().plan).switches[0].trunks[0].switch_port


def roles_in_process(info, server: str) -> dict:
    """``harmless ha roles`` on ``server``, in this process (the command under test runs as its own process)."""
    with demo._as(info, server), st.lock(wait_s=3):
        return converge()


@pytest.mark.parametrize("step", STEPS)
def test_a_take_over_killed_at_each_step_ends_with_one_trunk_and_the_device_s_roles(pair, step):
    # the current standby takes over, killed at the step; the cases alternate between the servers
    roles = {s: roles_in_process(pair, s)["sw1"] for s in lab.SERVERS}
    standby = next(s for s, r in roles.items() if r == "standby")
    active = next(s for s in lab.SERVERS if s != standby)
    assert roles[active] == "active" and demo.forwarding_trunks(pair) == [trunk_of(pair, active)]
    r = cli(pair, standby, "failover", "--json", at=f"{step}:KILL")
    assert r.returncode == -9, (step, r.returncode, r.stderr[-500:])
    trunks = demo.forwarding_trunks(pair)
    assert len(trunks) == 1, (step, trunks)                         # never both, never none (EOS commits at once)
    with demo._as(pair, standby):
        recs = [json.loads(x) for x in (st.state_dir() / "journal.jsonl").read_text().splitlines() if x.strip()]
        assert recs[0]["op"] == "failover" and recs[-1]["step"] == step
        got = orchestrator.recover()
        assert got.recovered == ("nothing" if step == "failover.end" else "roles")   # an ended journal is finished
        assert not (st.state_dir() / "journal.jsonl").exists()
    role, ctl = role_on(pair, standby)
    device_says = "active" if trunks == [trunk_of(pair, standby)] else "standby"
    assert role == device_says and bool(ctl) == (role == "active"), (step, role, ctl, trunks)
    moved = STEPS.index(step) >= STEPS.index("fence.committed")
    assert (device_says == "active") == moved, (step, device_says)


def test_down_from_the_standby_afterwards_gives_back_the_original(pair):
    """With the agents back, the active replicates its state to the standby (what the take-overs changed: the
    trunks HARMLESS owns); down on the standby then gives back the original."""
    for s in lab.SERVERS:
        lab.start_agent(pair, s)
    standby = next(s for s in lab.SERVERS if s != demo.wait(lambda: demo.healthy(pair, 300), 120, "the pair"))
    ok, line = demo.undeploy(pair, standby, lambda m: None)
    assert ok, line
