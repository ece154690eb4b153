"""Issue #23 item 1 on the lab's emulated IOS switch: the original survives the server.

``up`` keeps a copy of each switch's original on the switch's own ``flash:`` (and, when the inventory names one, in
an off-box directory), with the record of what HARMLESS changed next to it. The server then dies (its OVS killed, its
whole state directory deleted); ``harmless down -i inventory.yaml`` run as a new process with a fresh, empty state
directory gives the switch back its byte-exact original from the switch's copy — with the operator's edits made
since ``up`` kept, as ``down`` on the server would (issue #22's model) — says where it came from and removes the
copies. A tampered copy is refused and changes nothing; with the switch's copy gone, the off-box copy does the same
job.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from harmless import orchestrator as orch
from harmless import originals
from harmless import state as st
from harmless.deployment import state_ovs
from harmless.errors import NothingToDo
from tests.lab.conftest import make_lab

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def olab(tmp_path_factory):
    """Three hosts on Fa0/7, 8, 10 of the emulated IOS switch; one lab for the module."""
    yield from make_lab(tmp_path_factory, hosts=(7, 8, 10), controller=None)


def _inventory(lab, tmp_path, **originals_settings) -> str:
    inv = yaml.safe_load(lab.inventory.read_text())
    if originals_settings:
        inv["originals"] = originals_settings
    p = tmp_path / "inventory.yaml"
    p.write_text(yaml.safe_dump(inv, sort_keys=False))
    return str(p)


def _flash(lab) -> dict[str, str | None]:
    drv = lab.driver()
    try:
        return {n: drv.read_file(n) for n in (originals.ORIGINAL, originals.MANIFEST)}
    finally:
        drv.close()


@pytest.fixture
def server(olab, tmp_path):
    """The HARMLESS server's own state directory for one test (the lab's files stay in the module's). Afterwards,
    also when the test failed half-way, the switch is given back: by this server if it still has the deployment, else
    by a down -i from another empty state directory."""
    with st.using(tmp_path / "server-state") as d:
        try:
            yield d
        finally:
            if d.exists() and st.load():
                orch.down()
    with st.using(tmp_path / "cleanup-state"):
        try:
            orch.down(inventory_path=str(olab.inventory))
        except NothingToDo:
            pass


def _server_dies() -> None:
    """The server is gone: its private OVS killed, its whole state directory deleted."""
    state_ovs(st.load()).stop()
    shutil.rmtree(st.state_dir())


def _fresh_down(inventory: str, tmp_path, *args: str) -> subprocess.CompletedProcess:
    """``harmless down -i INVENTORY [ARGS]`` as its own process, on a state directory that never saw the deployment."""
    fresh = tmp_path / "fresh-state"
    fresh.mkdir(exist_ok=True)
    env = {**os.environ, "HARMLESS_STATE_DIR": str(fresh)}
    return subprocess.run([sys.executable, "-m", "harmless.cli", "down", "-i", inventory, *args], env=env,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


#: the operator's edits while migrated, outside what HARMLESS owns (ports 7, 8 and 10 are migrated)
EDITS = ["vlan 555", "name ops", "interface FastEthernet0/12", "description printer room 2.14"]


def _configure(lab, lines: list[str]) -> None:
    drv = lab.driver()
    try:
        out = drv._dev().device.send_config_set(lines)
        assert "Invalid input" not in out and "rejected" not in out, out
    finally:
        drv.close()


def _replace(lab, text: str) -> None:
    drv = lab.driver()
    try:
        drv.restore(text)
        assert drv.running_config() == text
    finally:
        drv.close()


def test_fresh_machine_restores_the_byte_exact_original_from_the_switch(olab, server, tmp_path):
    original = olab.running_config()
    _configure(olab, EDITS)                       # the reference: the same edits on the unmigrated switch
    edited = olab.running_config()
    _replace(olab, original)
    inv = _inventory(olab, tmp_path)
    orch.up(inv, wait_controller=0)
    saved = st.load().backups["sw1"]
    copy = _flash(olab)
    assert copy[originals.ORIGINAL] is not None and olab.running_config() != original
    assert copy[originals.MANIFEST].startswith(f"{saved.sha256}  {originals.ORIGINAL}\n")
    manifest = originals.Manifest.parse(copy[originals.MANIFEST], "")
    assert originals.verify(copy[originals.ORIGINAL], manifest) == original
    assert manifest.owned == st.load().owned["sw1"].model_dump(mode="json")     # HARMLESS's change, next to it
    _configure(olab, EDITS)                       # the operator edits the migrated switch

    _server_dies()
    r = _fresh_down(inv, tmp_path)                                   # for people: where the original came from
    assert r.returncode == 0, r.stderr[-2000:]
    assert (f"sw1: original from the switch: sw1 flash:harmless-original.cfg (SHA-256 {saved.sha256[:16]}... "
            "verified") in r.stdout, r.stdout
    assert "HARMLESS's change is recorded next to it: the operator's later changes are kept" in r.stdout
    assert "sw1: running config equals the original + 2 change(s) kept" in r.stdout, r.stdout
    assert "sw1: copy removed from the switch: sw1 flash:harmless-original.cfg" in r.stdout
    assert olab.running_config() == edited                            # the original + the edits, byte for byte
    assert _flash(olab) == {originals.ORIGINAL: None, originals.MANIFEST: None}
    _replace(olab, original)
    r = _fresh_down(inv, tmp_path, "--json")                         # again: nothing left to do
    assert r.returncode == 0 and json.loads(r.stdout)["restored"] == {}, r.stderr[-2000:]
    assert "nothing to do" in r.stderr and "sw1: carries no HARMLESS VLAN (not migrated); left alone" in r.stderr


def test_a_tampered_copy_is_refused_and_changes_nothing(olab, server, tmp_path):
    original = olab.running_config()
    inv = _inventory(olab, tmp_path)
    orch.up(inv, wait_controller=0)
    migrated = olab.running_config()
    drv = olab.driver()
    try:                                         # someone edits the copy on the switch's flash
        drv.write_file(originals.ORIGINAL, original.replace("hostname sw1", "hostname evil"))
    finally:
        drv.close()

    r = _fresh_down(inv, tmp_path, "--json")
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    last = r.stderr.strip().splitlines()[-1]
    assert "the copy of sw1's original is refused" in last and "altered or damaged" in last, last
    assert olab.running_config() == migrated                         # nothing changed
    assert not (tmp_path / "fresh-state" / "journal.jsonl").exists()

    # this server still has the deployment: its own original is authoritative; the tampered copy goes too
    assert orch.down().config_restored is True
    assert olab.running_config() == original
    assert _flash(olab) == {originals.ORIGINAL: None, originals.MANIFEST: None}


def test_the_off_box_copy_gives_it_back_when_the_switch_copy_is_gone(olab, server, tmp_path):
    original = olab.running_config()
    offbox = tmp_path / "share"
    offbox.mkdir()
    inv = _inventory(olab, tmp_path, directory=str(offbox))
    orch.up(inv, wait_controller=0)
    assert (offbox / "sw1" / originals.ORIGINAL).read_text() == original
    assert (offbox / "sw1" / originals.MANIFEST).stat().st_mode & 0o077 == 0          # private, like the backups
    check = subprocess.run(["sha256sum", "-c", originals.MANIFEST], cwd=offbox / "sw1", capture_output=True, text=True)
    assert f"{originals.ORIGINAL}: OK" in check.stdout                             # an operator can verify it by hand
    drv = olab.driver()
    try:                                         # the switch's flash was wiped
        drv.delete_file(originals.ORIGINAL)
        drv.delete_file(originals.MANIFEST)
    finally:
        drv.close()

    _server_dies()
    r = _fresh_down(inv, tmp_path, "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(r.stdout)
    assert res["origins"]["sw1"].startswith(f"the off-box directory: {offbox}/sw1/harmless-original.cfg")
    assert olab.running_config() == original
    assert not (offbox / "sw1").exists()
