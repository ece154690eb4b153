"""Unit tests of the journal, the state schema, the backup index and the lock (no root, no device)."""
from __future__ import annotations

import json
import multiprocessing
import os
import signal

import pytest

from harmless import journal
from harmless import state as st
from harmless.errors import HarmlessError
from tests.conftest import wait_for


def test_journal_records_are_on_disk_before_the_step_and_closing_archives(state_dir):
    j = journal.Journal("up")
    j.record("up.begin", switches=["sw1"])
    j.record("device.commit", switch="sw1", rollback_to={"file": "f", "sha256": "0" * 64})
    recs = journal.unfinished()
    assert [r["step"] for r in recs] == ["up.begin", "device.commit"]
    assert recs[1]["switch"] == "sw1" and recs[1]["seq"] == 2 and recs[1]["pid"] == os.getpid()
    assert journal.touched_switches(recs) == ["sw1"]
    assert not journal.is_finished(recs)
    assert "interrupted harmless up" in journal.describe(recs) and "device.commit (sw1)" in journal.describe(recs)
    j.record("up.end")
    j.close()
    assert journal.unfinished() is None
    archived = list((state_dir / "journal").glob("*-up.jsonl"))
    assert len(archived) == 1 and len(archived[0].read_text().splitlines()) == 3


def test_a_torn_last_line_is_ignored_a_corrupt_middle_one_is_kept(state_dir):
    p = state_dir / "journal.jsonl"
    state_dir.mkdir(parents=True, exist_ok=True)
    p.write_text('{"step": "up.begin", "op": "up"}\nGARBAGE\n{"step": "device.commit", "switch": "a"}\n{"step": "dev')
    recs = journal.unfinished()
    assert [r["step"] for r in recs] == ["up.begin", "corrupt", "device.commit"]


def test_a_pending_signal_stops_forward_steps_but_never_undo_steps(state_dir):
    j = journal.Journal("up")
    with journal.interruptible(lambda m: None):
        os.kill(os.getpid(), signal.SIGINT)
        wait_for(journal.interrupted, 5, "the SIGINT to reach the handler", interval=0.01)
        assert journal.interrupted()
        with pytest.raises(journal.Interrupted) as e:
            j.record("device.commit", switch="sw1")
        assert e.value.exit_code == 130
        j.record("rollback.begin")          # undo steps go on
        j.record("device.restore", switch="sw1")
    assert not journal.interrupted()
    assert [r["step"] for r in journal.unfinished()] == ["rollback.begin", "device.restore"]


def test_a_journal_write_that_fails_raises_for_forward_steps_only(state_dir, monkeypatch):
    j = journal.Journal("up", say=lambda m: said.append(m))
    said: list[str] = []

    def nospace(*_a):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal.os, "write", nospace)
    with pytest.raises(st.StateWriteError, match="No space left"):
        j.record("device.commit", switch="sw1")
    j.record("device.restore", switch="sw1")
    assert said and "No space left" in said[0]


def test_state_round_trip_versions_and_damage(state_dir):
    assert st.load() is None
    st.save(st.DeploymentState(inventory="/x/inv.yaml", plan=None,
                               backups={"sw1": {"file": "/b", "sha256": "a" * 64}}))
    d = st.load()
    assert d.version == st.STATE_VERSION and d.backups["sw1"].file == "/b"
    assert oct((state_dir / "state.json").stat().st_mode & 0o777) == "0o600"
    p = state_dir / "state.json"
    # harmless 0.1 wrote no version: read and upgraded
    raw = json.loads(p.read_text())
    del raw["version"]
    p.write_text(json.dumps(raw))
    assert st.load().version == st.STATE_VERSION
    for text, words in [("{not json", "not JSON"), ('{"version": 7, "inventory": "x"}', "state version 7"),
                        ('{"inventory": 5}', "corrupt"), ("[1, 2]", "not a JSON object")]:
        p.write_text(text)
        with pytest.raises(st.StateError) as e:
            st.load()
        assert words in e.value.problem and str(p) == e.value.where and "harmless down" in e.value.fix
        assert e.value.exit_code == 2


def test_the_original_backup_is_never_overwritten_and_has_one_active_entry(state_dir):
    a = st.save_backup("sw1", "hostname sw1\n", record={"name": "sw1"})
    b = st.save_backup("sw1", "hostname sw1\n", role="pre-run")
    assert a["file"] != b["file"]
    assert st.active_original("sw1")["file"] == a["file"]
    assert st.read_backup(a) == "hostname sw1\n"
    st.mark_restored("sw1", a["file"])
    assert st.active_original("sw1") is None
    rows = st.backup_index()
    assert [(r["role"], r["status"]) for r in rows] == [("original", "restored"), ("pre-run", "active")]
    # an altered backup is refused
    with open(a["file"], "a") as f:
        f.write("!\n")
    with pytest.raises(st.StateError, match="SHA-256"):
        st.read_backup(a)


def _hold_lock(state, ready, release):
    os.environ["HARMLESS_STATE_DIR"] = state
    with st.lock("harmless up -i inv.yaml"):
        ready.set()
        release.wait(10)


def test_a_second_writer_is_refused_with_the_holders_pid_and_command(state_dir):
    st.state_dir()
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    p = ctx.Process(target=_hold_lock, args=(str(state_dir), ready, release))
    p.start()
    try:
        assert ready.wait(10)
        assert st.lock_holder() == f"pid {p.pid}: harmless up -i inv.yaml"
        with pytest.raises(st.LockedError) as e:
            with st.lock():
                pass
        assert f"pid {p.pid}" in e.value.problem and "harmless up -i inv.yaml" in e.value.problem
    finally:
        release.set()
        p.join(10)
    with st.lock():                      # released when the holder ends
        assert st.lock_holder() is not None
    assert st.lock_holder() is None


def test_a_dead_holder_releases_the_lock(state_dir):
    st.state_dir()
    pid = os.fork()
    if pid == 0:  # child: take the lock and die without releasing it
        with st.lock("victim"):
            os._exit(0)
    os.waitpid(pid, 0)
    with st.lock():
        pass


def test_state_write_errors_are_one_line_harmless_errors(state_dir, monkeypatch):
    st.state_dir()

    def boom(*_a, **_k):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(st.os, "open", boom)
    with pytest.raises(st.StateWriteError) as e:
        st.save(st.DeploymentState(inventory="x"))
    assert isinstance(e.value, HarmlessError) and "Read-only" in e.value.problem


def test_port_states_compare_equal_after_a_json_round_trip():
    """Issue #11: a trunk's allowed-VLAN list came back from state.json as a list and never equalled the live tuple,
    so `down` could never finish on real configs."""
    from harmless.steps import port_differences, port_states as _port_states
    from harmless.switch_drivers.base import DeviceFacts, PortVlanState

    facts = DeviceFacts("sw1", "m", "v", ("Gi0/2",), {10: "a"}, {
        "Gi0/2": PortVlanState("Gi0/2", "trunk", native_vid=101, allowed_vids=(100, 101, 200)),
        "Fa0/7": PortVlanState("Fa0/7", "access", access_vid=100)})
    stored = json.loads(json.dumps(st.jsonable(_port_states(facts))))
    assert port_differences(stored, st.jsonable(_port_states(facts))) == []
    moved = DeviceFacts("sw1", "m", "v", ("Gi0/2",), {}, {
        "Gi0/2": PortVlanState("Gi0/2", "trunk", native_vid=101, allowed_vids=(100, 101)),
        "Fa0/7": PortVlanState("Fa0/7", "access", access_vid=100)})
    assert port_differences(stored, st.jsonable(_port_states(moved))) == [
        "Gi0/2: allowed_vids [100, 101, 200] -> [100, 101]"]


def test_a_migrated_config_is_recognised_by_harmless_vlan_names():
    from harmless.steps import carries_harmless
    from harmless.switch_drivers.base import DeviceFacts

    f = DeviceFacts("sw1", "m", "v", (), {1: "default", 107: "harmless-sw1-p7", 110: "harmless-sw1-p10", 200: "x"})
    assert carries_harmless(f) == [107, 110]
    assert carries_harmless(DeviceFacts("sw1", "m", "v", (), {1: "default"})) == []


def test_backups_saved_by_parallel_switch_workers_all_reach_the_index(state_dir):
    """`up` saves each switch's original from its own worker thread: no entry may be lost or the index corrupted."""
    import threading

    errors: list[BaseException] = []

    def save(i):
        try:
            st.save_backup(f"sw{i}", f"hostname sw{i}\n", record={"name": f"sw{i}"})
            st.mark_restored(f"sw{i}", "nope")
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=save, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(e["switch"] for e in st.backup_index()) == sorted(f"sw{i}" for i in range(12))
    assert all(st.active_original(f"sw{i}") for i in range(12))
