"""A fleet of five lab switches on one server, one of which rejects its tagging config.

Checks (issue "fleets"): ``harmless up`` works on all five in parallel (Nornir); the rejecting switch is rolled back
alone and ends exactly as before, the four others end migrated (hosts reach each other through their own br-of),
the exit status says "partial" (3), and ``harmless down`` gives every migrated switch back its original config and
port modes/VLANs.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harmless import deployment
from harmless import orchestrator as orch
from harmless import state as st
from harmless.procs import free_port
from harmless.inventory import load_inventory
from harmless.lab import topology as lab
from tests.lab.conftest import make_labs

N_SWITCHES = 5
REJECTING = 3          # sw3 refuses the access VLAN of its port 8


def _specs(prefix: str, srv: str) -> Iterator[lab.LabSpec]:
    for i in range(1, N_SWITCHES + 1):
        reject = (r"switchport access vlan 108",) if i == REJECTING else ()
        yield lab.LabSpec(name=f"{prefix}{chr(ord('a') + i - 1)}", ssh_port=free_port(), hosts=(7, 8), reject=reject,
                          server_netns=srv)


def _switches(infos: list[dict]) -> list[dict]:
    switches = []
    for i, info in enumerate(infos, start=1):
        sw = lab.inventory(info, ["tcp:127.0.0.1:6653"])["switches"][0]
        sw.update(name=f"sw{i}", datapath_id=f"0x{i:016x}")
        switches.append(sw)
    return switches


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    yield from make_labs(tmp_path_factory, "f", _specs, _switches, "fleet.yaml")


def running_configs(inventory: Path) -> dict[str, str]:
    inv = load_inventory(inventory)
    out = {}
    for sw in inv.switches:
        d = deployment.connect(sw, "test")
        try:
            out[sw.name] = d.running_config()
        finally:
            d.close()
    return out


def test_one_rejecting_switch_is_rolled_back_alone_the_others_are_migrated(fleet):
    before = running_configs(fleet["inventory"])
    r = subprocess.run([sys.executable, "-m", "harmless.cli", "up", "-i", str(fleet["inventory"]), "--json"],
                       capture_output=True, text=True, timeout=600, env={**os.environ})
    assert r.returncode == 3, r.stderr[-2000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["failed"] == [f"sw{REJECTING}"]
    assert "rejected" in res["results"][f"sw{REJECTING}"]["error"]
    assert {n: x["status"] for n, x in res["results"].items() if n != f"sw{REJECTING}"} == {
        f"sw{i}": "migrated" for i in range(1, N_SWITCHES + 1) if i != REJECTING}
    after = running_configs(fleet["inventory"])
    # the rejecting switch ends exactly as before; the others changed
    assert after[f"sw{REJECTING}"] == before[f"sw{REJECTING}"]
    assert all(after[n] != before[n] for n in after if n != f"sw{REJECTING}")
    # the deployment holds the four migrated switches, each with its own br-of
    s = st.load()
    assert sorted(sp["name"] for sp in s.plan["switches"]) == sorted(res["results"].keys() - {f"sw{REJECTING}"})
    assert f"sw{REJECTING}" not in s.backups
    ovs = deployment.state_ovs(s)
    assert sorted(b for b in ovs.vsctl("list-br").split() if b.startswith("br-of-")) == [
        f"br-of-sw{i}" for i in range(1, N_SWITCHES + 1) if i != REJECTING]
    # traffic: on every migrated switch host 7 reaches host 8 through that switch's br-of
    for i, info in enumerate(fleet["infos"], start=1):
        if i != REJECTING:
            assert lab.ping(info, 7, 8, count=3) == 0.0, f"sw{i}"
    # the rejecting switch still forwards in its original VLAN 100, untouched
    assert lab.ping(fleet["infos"][REJECTING - 1], 7, 8, count=3) == 0.0

    d = orch.down()
    assert d.config_restored and set(d.restored) == set(res["results"]) - {f"sw{REJECTING}"}
    assert all(diffs == [] for diffs in d.ports_restored.values())
    assert running_configs(fleet["inventory"]) == before
