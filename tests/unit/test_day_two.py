"""The smaller accidents of issue #22, each with a clear line and nothing lost (no root, no device; the lab cases are in
tests/faults): a switch renamed in the inventory, a full disk under the lock and under `down`, the system's Open
vSwitch not running at `down`."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from harmless import journal
from harmless import state as st
from harmless.down import DownRun, _remove_server
from harmless.errors import EXIT_UNFINISHED, InputError, OvsError
from harmless.inventory import Switch
from harmless.steps import original_for, retained_under_another_name
from harmless.switch_drivers.base import DeviceFacts

MIGRATED = "hostname sw1\nvlan 107\n name harmless-sw1-p7\ninterface FastEthernet0/7\n switchport access vlan 107\n"


def switch(name: str, port: int = 22) -> Switch:
    return Switch.model_validate({
        "name": name, "driver": "ios", "host": "10.0.0.21", "port": port, "username": "admin",
        "password_env": "HL_TEST_PW", "trunks": [{"switch_port": "GigabitEthernet0/1", "server_interface": "eth1"}],
        "access_ports": ["FastEthernet0/7"]})


def migrated_device():
    facts = DeviceFacts(hostname="sw1", model="WS-C2960", os_version="15.2", interfaces=(),
                        vlans={1: "default", 107: "harmless-sw1-p7"})
    return SimpleNamespace(running_config=lambda: MIGRATED), facts


def test_a_switch_renamed_in_the_inventory_is_told_where_its_original_is(state_dir):
    old = st.save_backup("sw1", "hostname sw1\n", role="original",
                         record=switch("sw1").model_dump(mode="json"))
    drv, facts = migrated_device()
    with pytest.raises(InputError) as e:
        original_for(switch("core1"), drv, facts, switch("core1").model_dump(mode="json"), lambda _m: None)
    msg = str(e.value)
    assert "retained under the name sw1" in msg and old["file"] in msg and "renamed in the inventory?" in msg
    assert "name: sw1" in msg and "harmless down" in msg
    assert "no original backup is retained" not in msg


def test_another_device_with_the_same_name_pattern_is_not_taken_for_it(state_dir):
    st.save_backup("sw1", "hostname sw1\n", role="original", record=switch("sw1", port=2222).model_dump(mode="json"))
    assert retained_under_another_name(switch("core1")) is None
    drv, facts = migrated_device()
    with pytest.raises(InputError, match="no original backup is retained"):
        original_for(switch("core1"), drv, facts, {}, lambda _m: None)


def test_the_lock_is_taken_on_a_full_disk(state_dir, monkeypatch):
    """Writing the holder's name into the lock file was what made `down` on a full disk an internal error."""
    def nospace(*_a):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(st.os, "pwrite", nospace)
    with st.lock():
        assert st.lock_holder() == "unknown"     # held; who holds it could not be written


def test_a_down_that_stops_after_begin_says_what_is_done_and_to_free_space(state_dir):
    run = DownRun(lambda _m: None, lambda _n, _e: None)
    run.j = journal.Journal("down")
    run.j.write_error = "No space left on device"
    e = run._unfinished(OvsError("ovs-vsctl", "transaction error: conf.db: write failed"), restored=True)
    assert e.exit_code == EXIT_UNFINISHED
    assert e.problem.startswith("every switch is restored (verified), but then: transaction")
    assert "free space" in e.fix and "harmless down again" in e.fix
    raw = run._unfinished(OSError(28, "No space left on device"), restored=False)
    assert isinstance(raw, st.StateWriteError) and raw.exit_code == EXIT_UNFINISHED and "No space" in raw.problem


def test_down_does_not_pretend_the_system_ovs_was_cleaned(tmp_path):
    class SystemOvs:
        private = False

        def ovsdb_running(self):
            return False
    with pytest.raises(OvsError) as e:
        _remove_server([SystemOvs()], ["br-of-sw1"], lambda _m: None)
    assert "ovsdb-server is not running" in e.value.problem and "harmless down again" in e.value.fix


def test_a_private_ovs_that_never_ran_is_skipped(tmp_path):
    said: list[str] = []

    class NeverRan:
        private = True
        base_dir = tmp_path / "ovs"

        def ovsdb_running(self):
            return False

        def vswitchd_running(self):
            return False
    assert _remove_server([NeverRan()], [], said.append) == [] and said == []


def _report(differences=None, unfinished=None):
    from harmless.results import StatusReport
    return StatusReport.model_validate({
        "deployed": True, "inventory": "inv.yaml", "unfinished_journal": unfinished, "switches": [{
            "name": "sw1", "bridge": "br-of-sw1", "datapath_id": "1", "ports": [], "trunks": {}, "controllers": [],
            "differences": differences}]})


def test_status_prints_each_difference_with_its_fix_and_exits_7(monkeypatch):
    from click.testing import CliRunner

    from harmless import cli, orchestrator
    found = [{"switch": "sw1", "kind": "port", "interface": "FastEthernet0/7", "expected": "access port of VLAN 107",
              "found": "an access port of VLAN 1", "problem": "FastEthernet0/7 is an access port of VLAN 1, not "
              "HARMLESS's access port of VLAN 107", "fix": "harmless up -i inv.yaml puts HARMLESS's configuration "
              "back"}]
    monkeypatch.setattr(orchestrator, "status", lambda **_kw: _report(found))
    r = CliRunner().invoke(cli.main, ["status"])
    assert r.exit_code == 7, r.output
    assert "differs: FastEthernet0/7 is an access port of VLAN 1" in r.stdout
    assert "(fix: harmless up -i inv.yaml puts HARMLESS's configuration back)" in r.stdout
    r = CliRunner().invoke(cli.main, ["status", "--json"])
    assert r.exit_code == 7 and '"kind": "port"' in r.stdout
    monkeypatch.setattr(orchestrator, "status", lambda **_kw: _report([]))
    assert CliRunner().invoke(cli.main, ["status"]).exit_code == 0
    monkeypatch.setattr(orchestrator, "status", lambda **_kw: _report(None, unfinished="an interrupted harmless up"))
    r = CliRunner().invoke(cli.main, ["status"])
    assert r.exit_code == EXIT_UNFINISHED and "interrupted harmless up" in r.stderr
