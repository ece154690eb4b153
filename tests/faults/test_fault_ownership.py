"""The journal steps of issue #22 killed, on the emulated EOS switch (real CLI processes, as the fault matrix):

* ``down`` that keeps the operator's edits, killed (SIGKILL) at ``down.target``, ``device.restore`` and
  ``device.restored``, or interrupted (SIGINT) at ``down.target``: one more ``down`` (at most) ends with the device
  equal to the original + the edits, byte for byte, nothing of HARMLESS left;
* an incremental ``up`` that gives a removed port back (``device.revert``) killed there or at the following
  ``device.commit``: ``recover`` puts the previous deployment back (device as before that up), ``down`` the original;
(A ``down`` stopped by a conflict changes nothing and writes no journal: tests/lab/test_ownership_lab.py.)
"""
from __future__ import annotations

import contextlib
import json

import pytest
import yaml

from harmless import orchestrator as orch
from harmless import state as st
from tests.faults.test_fault_matrix import assert_clean, record, up_args

pytestmark = pytest.mark.lab

EDITS = ["vlan 555", "name ops", "interface Ethernet12", "description printer room 2.14",
         "ip access-list BLOCK-TELNET", "deny tcp any any eq 23", "permit ip any any"]


def configure(fl, lines: list[str] | None = None, replace: str | None = None) -> None:
    """The operator's edit by hand (eAPI config), or a config replace back to ``replace``."""
    from harmless import deployment
    from harmless.inventory import load_inventory
    d = deployment.connect(load_inventory(fl.inventory).switches[0], "test")
    try:
        if replace is not None:
            d.restore(replace)
        else:
            d._dev().device.config(lines)
    finally:
        d.close()


def up_in_process(fl) -> None:
    """A plain ``up`` in this process (the cases kill the runs after it, which are real CLI processes)."""
    with st.using(fl.state):
        orch.up(str(fl.inventory), wait_controller=0)


@pytest.fixture(scope="module")
def edited(flab_eos):
    """The original + EDITS, as the unmigrated switch prints it."""
    fl = flab_eos
    configure(fl, EDITS)
    text = fl.running_config()
    configure(fl, replace=fl.original)
    assert fl.running_config() == fl.original and text != fl.original
    return text


def assert_kept(fl, edited: str, case: str) -> None:
    """The end state with the edits kept: the device equals original + edits, nothing of HARMLESS left."""
    assert fl.running_config() == edited, f"{case}: the device differs from the original + the operator's edits"
    assert not fl.server_bridges() and not fl.private_ovs_alive(), case
    assert not (fl.state / "state.json").exists() and not (fl.state / "journal.jsonl").exists(), case
    idx = json.loads((fl.state / "backups" / "index.json").read_text())["backups"]
    assert not [e for e in idx if e["role"] == "original" and e["status"] == "active"], case
    configure(fl, replace=fl.original)            # the next case starts from the true original


@pytest.mark.parametrize("step,sig", [("down.target", "KILL"), ("device.restore", "KILL"), ("down.target", "INT")])
def test_down_keeping_edits_killed(flab_eos, edited, step, sig):
    fl = flab_eos
    case = f"EOS down keeping edits, SIG{sig} at {step}"
    up_in_process(fl)
    configure(fl, EDITS)
    r = fl.cli("down", at=step, signal=sig)
    assert "Traceback" not in r.stderr
    if sig == "KILL":
        assert r.returncode == -9, (r.returncode, r.stderr[-500:])
        steps = [x["step"] for x in fl.journal()]
        assert steps[-1] == step and "down.target" in steps, steps
        d = fl.cli("down")
        assert d.returncode == 0, d.stderr[-800:]
        outcome = "down exit 0"
    else:
        assert r.returncode == 0, (r.returncode, r.stderr[-800:])      # down is the way back: it finishes
        outcome = "down finished by itself, exit 0"
    assert_kept(fl, edited, case)
    record(case, f"SIG{sig} right after the '{step}' record (operator edits to keep)", outcome + "; edits kept")


@contextlib.contextmanager
def smaller_inventory(fl):
    """The deployment's inventory file without Ethernet10 for the block (an incremental up gives the port back)."""
    text = fl.inventory.read_text()
    inv = yaml.safe_load(text)
    inv["switches"][0]["access_ports"] = ["Ethernet7", "Ethernet8"]
    fl.inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
    try:
        yield
    finally:
        fl.inventory.write_text(text)


@pytest.mark.parametrize("step,how", [("device.revert", "recover"), ("device.commit", "down")])
def test_incremental_up_giving_a_port_back_killed(flab_eos, step, how):
    fl = flab_eos
    case = f"EOS incremental up (a port removed) SIGKILL at {step}, then {how}"
    up_in_process(fl)
    migrated = fl.running_config()
    with smaller_inventory(fl):
        r = fl.cli(*up_args(fl), at=step, signal="KILL")
    assert r.returncode == -9, (r.returncode, r.stderr[-500:])
    steps = [x["step"] for x in fl.journal()]
    assert "device.revert" in steps and steps[-1] == step, steps
    rec = next(x for x in fl.journal() if x["step"] == "device.revert")
    assert sorted(rec["keys"]) == ["interface ethernet10", "vlan 110"] and rec["rollback_to"]["file"]
    d = fl.cli(how, "--json")
    assert d.returncode == 0, d.stderr[-800:]
    if how == "recover":
        assert fl.running_config() == migrated, f"{case}: not the config before that up"
        assert json.loads(d.stdout)["recovered"] == "previous deployment"
        with st.using(fl.state):
            orch.down()
    assert_clean(fl, case)
    record(case, f"SIGKILL right after the '{step}' record", f"{how} exit 0; true original after down")
