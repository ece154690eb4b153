"""The fault matrix of issue #11 on the lab's emulated IOS switch: a kill (SIGKILL, SIGINT, SIGTERM) at every journal
step of ``up`` and of ``down``, SSH loss before/after the commit, a slow ``write memory``, ovs-vswitchd killed, an OVS
error after the commit, a full and a read-only state directory, corrupt/missing/unknown-version state, concurrent
``up``. Every case ends — after at most one ``harmless down`` or ``harmless recover`` — with the device's running config
byte-equal to the true original, no HARMLESS bridge or daemon left, the journal finished and no active original
left; the next case's ``up`` + ``down`` is the "following cycle" that must still restore the true original (the last
test runs one explicitly). Cases run in order on one lab (module fixture); each prints its outcome, and
``docs/faults.md`` holds the table.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading

import pytest

from tests.conftest import wait_for

pytestmark = pytest.mark.lab

UP_STEPS = ["up.begin", "backup.saved", "device.commit", "device.committed", "server.build", "server.built",
            "verified", "device.confirm", "state.save", "up.end"]
DOWN_STEPS = ["down.begin", "device.restore", "device.restored", "server.remove", "server.removed", "state.clear",
              "down.end"]
#: steps after the last side effect of `up`: a SIGINT/SIGTERM there lets the run finish (nothing left to undo)
UP_COMPLETES_AFTER = {"state.save", "up.end"}
RESULTS: list[tuple[str, str, str]] = []


def up_args(fl):
    return ("up", "-i", str(fl.inventory), "--json", "--no-wait")


def assert_clean(fl, case: str) -> None:
    """The end state every case must reach: true original on the device, nothing of HARMLESS left."""
    assert fl.running_config() == fl.original, f"{case}: device config differs from the true original"
    assert not fl.server_bridges(), f"{case}: bridges left: {fl.server_bridges()}"
    assert not fl.private_ovs_alive(), f"{case}: private OVS daemons left: {fl.private_ovs_alive()}"
    assert not (fl.state / "state.json").exists(), f"{case}: state.json left"
    assert not (fl.state / "journal.jsonl").exists(), f"{case}: unfinished journal left: {fl.journal()[-2:]}"
    idx = fl.state / "backups" / "index.json"
    if idx.exists():
        active = [e for e in json.loads(idx.read_text())["backups"] if e["role"] == "original"
                  and e["status"] == "active"]
        assert not active, f"{case}: an original is still marked active: {active}"


def finish(fl, case: str, how: str = "down") -> str:
    """At most one `harmless down` (or `recover`); returns what it did and its exit code."""
    r = fl.cli(how)
    assert r.returncode == 0, f"{case}: harmless {how} failed ({r.returncode}): {r.stderr[-800:]}"
    nothing = how == "down" and "nothing is deployed" in r.stderr     # nothing to do is a success (docs/cli.md)
    return f"{how} exit {r.returncode}" + (" (nothing to do)" if nothing else "")


def record(case: str, fault: str, outcome: str) -> None:
    """Print one row of the matrix (``FAULT-MATRIX | case | fault | outcome``; with ``HARMLESS_FAULT_TABLE=FILE``
    also appended there, for docs/faults.md)."""
    RESULTS.append((case, fault, outcome))
    print(f"FAULT-MATRIX | {case} | {fault} | {outcome}")
    table = os.environ.get("HARMLESS_FAULT_TABLE")
    if table:
        with open(table, "a") as f:
            f.write(f"| {case} | {fault} | {outcome} |\n")


# ----------------------------------------------------------------------------- kills during up
#: SIGKILL at every step of `up` (each leaves a different journal for down/recover). SIGINT and SIGTERM run one handler
#: (tests/unit/test_journal_state.py): SIGINT is sampled at each step after which the rollback differs (nothing done;
#: commit in flight; device committed; server being built; server verified; after the last change), SIGTERM at two of
#: them, to keep the suite's time down (docs/faults.md)
INT_UP_STEPS = ["up.begin", "device.commit", "device.committed", "server.build", "verified", "state.save"]
TERM_UP_STEPS = ["device.committed", "server.build"]
UP_CASES = [(s, "KILL") for s in UP_STEPS] + [(s, "INT") for s in INT_UP_STEPS] + [(s, "TERM") for s in TERM_UP_STEPS]
DOWN_CASES = ([(s, "KILL") for s in DOWN_STEPS] + [(s, "INT") for s in ("device.restore", "server.remove")]
              + [("device.restore", "TERM")])


def up_killed_case(fl, step: str, sig: str, label: str = "") -> None:
    """Run ``up`` with SIG right after the ``step`` record, then at most one down/recover; assert the clean end."""
    case = f"{label}up {sig} at {step}"
    r = fl.cli(*up_args(fl), at=step, signal=sig)
    assert "Traceback" not in r.stderr, r.stderr
    if sig == "KILL":
        assert r.returncode == -9, (r.returncode, r.stderr[-500:])
        if step != "up.end":
            assert (fl.state / "journal.jsonl").exists(), f"{case}: no journal left behind"
        how = "recover" if step in ("device.committed", "server.built") else "down"
        outcome = finish(fl, case, how)
    elif step in UP_COMPLETES_AFTER:
        assert r.returncode == 0, (r.returncode, r.stderr[-800:])
        assert fl.running_config() != fl.original
        outcome = "up completed (signal after the last change); " + finish(fl, case)
    else:
        assert r.returncode == 130, (r.returncode, r.stderr[-800:])
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith("error: ") and "interrupted" in last, last
        if step not in ("up.begin", "backup.saved", "device.commit"):
            assert "back in the config it had before (verified)" in last, r.stderr[-3000:]
        assert_clean(fl, case + " (before any down)")
        outcome = "exit 130, rolled back by itself"
    assert_clean(fl, case)
    record(case, f"SIG{sig} right after the '{step}' record", outcome)


@pytest.mark.parametrize("step,sig", UP_CASES, ids=[f"{s}-{g}" for s, g in UP_CASES])
def test_up_killed_at_every_step(flab, step, sig):
    up_killed_case(flab, step, sig)


# ----------------------------------------------------------------------------- kills during down
@pytest.mark.parametrize("step,sig", DOWN_CASES, ids=[f"{s}-{g}" for s, g in DOWN_CASES])
def test_down_killed_at_every_step(flab, step, sig):
    fl = flab
    case = f"down {sig} at {step}"
    r = fl.cli(*up_args(fl))
    assert r.returncode == 0, r.stderr[-800:]
    r = fl.cli("down", at=step, signal=sig)
    assert "Traceback" not in r.stderr
    if sig == "KILL":
        assert r.returncode == -9, (r.returncode, r.stderr[-500:])
        outcome = finish(fl, case, "down" if step != "server.remove" else "recover")
    else:
        # a signal during down: down is itself the way back, so it finishes (exit 0) unless it stopped on purpose
        assert r.returncode in (0, 130), (r.returncode, r.stderr[-800:])
        outcome = f"down exit {r.returncode}" + ("" if r.returncode == 0 else "; " + finish(fl, case))
    assert_clean(fl, case)
    record(case, f"SIG{sig} right after the '{step}' record", outcome)


# ----------------------------------------------------------------------------- kill during a rollback
@pytest.mark.parametrize("step", ["rollback.begin", "device.restore", "server.remove"])
def test_kill_during_the_rollback_of_an_interrupted_up(flab, step):
    """SIGINT after the server build starts a rollback; a SIGKILL at one of its steps ends the process mid-way."""
    fl = flab
    case = f"SIGKILL at {step} of a rollback"
    r = fl.cli(*up_args(fl), at=f"server.build:INT,{step}:KILL")
    assert r.returncode == -9, (r.returncode, r.stderr[-800:])
    steps = [x["step"] for x in fl.journal()]
    assert "rollback.begin" in steps and steps[-1] == step, steps
    outcome = finish(fl, case)
    assert_clean(fl, case)
    record(case, "SIGINT at server.build starts the rollback, SIGKILL at its step", outcome)


# ----------------------------------------------------------------------------- device faults
def test_ssh_session_lost_before_the_commit(flab):
    fl = flab
    fl.set_faults(drop=[r"^show archive config rollback timer"])
    try:
        r = fl.cli(*up_args(fl))
    finally:
        fl.set_faults()
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-800:]
    outcome = finish(fl, "ssh lost at the commit")
    assert_clean(fl, "ssh lost at the commit")
    record("SSH session lost", "session closed at the commit's first command (pending-commit check), before any change", f"exit 1; {outcome}")


def test_ssh_session_lost_after_the_commit(flab):
    """The merge is copied into the running config (the commit happened), then the session drops: the driver
    reconnects, finds the changed config, reverts the pending commit-confirm and restores the original."""
    fl = flab
    fl.set_faults(drop=[r"^copy \S*merge_config\.txt running-config"])
    try:
        r = fl.cli(*up_args(fl))
    finally:
        fl.set_faults()
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-800:]
    assert "last_saved_config" not in r.stderr and "original running config is back (verified)" in r.stderr, \
        r.stderr[-800:]
    assert fl.running_config() == fl.original
    outcome = "exit 1, original back (verified); " + finish(fl, "ssh lost after commit")
    assert_clean(fl, "ssh lost after commit")
    record("SSH session lost", "session closed right after the merge was copied into running-config", outcome)


def test_slow_switch_is_waited_for(flab):
    """A busy switch answers the merge copy (up) and `write memory` (down) only after 12 s: netmiko's own 10 s echo
    wait used to fail `up` with "The command echo was not detected"."""
    fl = flab
    fl.set_faults(slow={r"^copy \S*merge_config\.txt running-config": 12, r"^write mem": 12})
    try:
        r = fl.cli(*up_args(fl))
        assert r.returncode == 0, r.stderr[-800:]
        d = fl.cli("down")
        assert d.returncode == 0, d.stderr[-800:]
    finally:
        fl.set_faults()
    assert_clean(fl, "slow switch")
    record("slow switch", "merge copy and `write memory` answer after 12 s", "up exit 0, down exit 0 (waited)")


# ----------------------------------------------------------------------------- server faults
def test_vswitchd_killed_after_the_bridges_are_built(flab):
    fl = flab
    r = fl.cli(*up_args(fl), at="server.built",
               exec=f"kill -9 $(cat {fl.state}/ovs/run/ovs-vswitchd.pid)")
    assert r.returncode == 1 and "rolled back" in r.stderr, r.stderr[-800:]
    assert_clean(fl, "vswitchd killed")
    record("ovs-vswitchd killed", "SIGKILL to ovs-vswitchd after server.built", "exit 1, rolled back by itself")


def test_ovs_error_after_the_commit(flab):
    """br-otc's flows vanish before verification: the device was committed and must come back."""
    fl = flab
    r = fl.cli(*up_args(fl), at="server.built",
               exec=f"ovs-ofctl -O OpenFlow13 del-flows unix:{fl.state}/ovs/run/br-otc.mgmt")
    assert r.returncode == 1 and "verification failed" in r.stderr and "rolled back" in r.stderr, r.stderr[-800:]
    assert_clean(fl, "ovs error after commit")
    record("OVS error after the commit", "br-otc flows deleted before verification", "exit 1, rolled back by itself")


# ----------------------------------------------------------------------------- state directory faults
@pytest.mark.parametrize("at", ["device.commit", "server.build"])
def test_disk_full(flab, at):
    fl = flab
    filler = fl.state / "filler"
    r = fl.cli(*up_args(fl), at=at, exec=f"dd if=/dev/zero of={filler} bs=1M count=100 2>/dev/null; sync")
    filler.unlink(missing_ok=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-800:]
    assert "No space left" in r.stderr, r.stderr[-500:]
    outcome = "exit 1, rolled back; " + finish(fl, f"disk full at {at}")
    assert_clean(fl, f"disk full at {at}")
    record("state dir full", f"tmpfs filled right after '{at}'", outcome)


def test_read_only_state_dir(flab):
    """A state directory that is read-only (a remount after a disk error): up refuses before touching anything.
    (A remount while a run holds the journal open is refused by the kernel, "mount point is busy"; the full-disk cases
    cover writes that fail half-way.)"""
    fl = flab
    subprocess.run(["mount", "-o", "remount,ro", str(fl.state)], check=True)
    try:
        r = fl.cli(*up_args(fl))
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(fl.state)], check=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr[-800:]
    assert "Read-only file system" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert fl.running_config() == fl.original
    assert_clean(fl, "read-only state dir")
    record("state dir read-only", "remounted read-only before up", "exit 1, one line, nothing changed")


@pytest.mark.parametrize("damage", ["corrupt", "missing", "unknown-version"])
def test_damaged_state_after_up(flab, damage):
    fl = flab
    r = fl.cli(*up_args(fl))
    assert r.returncode == 0, r.stderr[-800:]
    p = fl.state / "state.json"
    if damage == "corrupt":
        p.write_text(p.read_text()[:200])
    elif damage == "missing":
        p.unlink()
    else:
        d = json.loads(p.read_text())
        d["version"] = 99
        p.write_text(json.dumps(d))
    if damage != "missing":
        s = fl.cli("status", "--no-device")
        assert s.returncode == 2 and "internal error" not in s.stderr, s.stderr
        assert str(p) in s.stderr and "fix:" in s.stderr and len(s.stderr.strip().splitlines()) == 1, s.stderr
        u = fl.cli(*up_args(fl))
        assert u.returncode == 2 and str(p) in u.stderr, u.stderr
    else:
        # the migrated config is never taken as an original: up refuses and points at the retained backup
        u = fl.cli(*up_args(fl))
        assert u.returncode == 2 and "retained" in u.stderr and "harmless down" in u.stderr, u.stderr
    outcome = finish(fl, f"state {damage}")
    assert_clean(fl, f"state {damage}")
    record("state.json damaged", f"{damage} after a successful up", f"status/up refuse with one line; {outcome}")


def test_concurrent_up_is_refused(flab):
    fl = flab
    holder: dict = {}

    def first():
        holder["r"] = fl.cli(*up_args(fl), at="device.commit", exec="sleep 6")   # the slow up under test

    t = threading.Thread(target=first)
    t.start()
    wait_for(lambda: (fl.state / "journal.jsonl").exists(), 60, "the first up's journal (it holds the lock)")
    second = fl.cli(*up_args(fl))
    w = fl.cli("down")
    t.join()
    assert second.returncode == 1 and "holds the lock" in second.stderr and "pid" in second.stderr, second.stderr
    assert w.returncode == 1 and "holds the lock" in w.stderr, w.stderr
    assert holder["r"].returncode == 0, holder["r"].stderr[-800:]
    outcome = finish(fl, "concurrent up")
    assert_clean(fl, "concurrent up")
    record("concurrent writers", "a second up and a down while an up commits", f"both refused (pid named); {outcome}")


# ----------------------------------------------------------------------------- a port-mod's device change, killed
#: the steps after which the way back differs: before the state records the shut (``portmod.begin`` behaves as
#: ``state.save``) and after it, before the commit (``device.committed`` behaves as ``device.commit``); sampled to keep
#: the suite's time down, as the signals of ``up`` are (all four pass: ``-k port_mods`` with the full list)
PORTMOD_STEPS = ["state.save", "device.commit"]


def _watch(fl, **fault) -> subprocess.Popen:
    """``harmless watch`` as its own process (port-mods on), once it follows ovs-vswitchd's log."""
    import sys
    env = fl.env(**{f"HARMLESS_FAULT_{k.upper()}": v for k, v in fault.items()})
    w = subprocess.Popen([sys.executable, "-m", "harmless.cli", "watch", "--interval", "2"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: w.poll() is not None or subprocess.run(["pgrep", "-P", str(w.pid), "-x", "tail"],
                                                            capture_output=True).returncode == 0, 60,
             "harmless watch to follow ovs-vswitchd")
    return w


def _port7(fl, word: str) -> None:
    """The operator's (or a controller's) port-mod on br-of port 7 (``ovs-ofctl mod-port``, OVS's own client)."""
    from harmless.deployment import state_ovs
    from harmless.state import DeploymentState
    s = DeploymentState.model_validate_json((fl.state / "state.json").read_text())
    state_ovs(s).ofctl("-O", "OpenFlow13", "mod-port", "br-of-sw1", "7", word)


def _fa07_shut(fl) -> bool:
    return bool(__import__("re").search(r"interface FastEthernet0/7\n(?: .*\n)* shutdown\n", fl.running_config()))


def test_a_port_mods_device_change_killed_at_every_step(flab):
    """``harmless watch`` shuts the legacy port for a port-mod (op ``portmod``); SIGKILL right after each record.
    ``recover`` makes the device what the state says (the state is written before the commit), the port-mod's
    release undoes it, and ``down`` gives the true original back."""
    fl = flab
    r = fl.cli(*up_args(fl))
    assert r.returncode == 0, r.stderr[-800:]
    for step in PORTMOD_STEPS:
        case = f"port-mod device change KILL at {step}"
        w = _watch(fl, at=step, signal="KILL")
        _port7(fl, "down")
        assert w.wait(120) == -9, (w.returncode, w.stderr.read()[-800:])
        assert fl.journal()[-1]["step"] == step
        r = fl.cli("recover", "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["recovered"] == "portmod", r.stderr[-800:]
        recorded = "FastEthernet0/7" in json.loads((fl.state / "state.json").read_text())["port_admin"].get("sw1", {})
        assert recorded == (step in ("device.commit", "device.committed")), step
        assert _fa07_shut(fl) == recorded, f"{case}: the device does not match the state"
        assert not (fl.state / "journal.jsonl").exists()
        w = _watch(fl)                                  # the port-mod is released: the device follows
        try:
            _port7(fl, "up")
            wait_for(lambda: not _fa07_shut(fl) and "port_admin" in (s := json.loads(
                (fl.state / "state.json").read_text())) and not s["port_admin"], 120, f"{case}: released")
        finally:
            w.terminate()
            w.wait(60)
        record(case, f"SIGKILL of harmless watch right after the '{step}' record",
               f"recover: device {'shut' if recorded else 'unchanged'} as the state says; released")
    finish(fl, "port-mod device change")
    assert_clean(fl, "port-mod device change")


def test_a_following_cycle_still_restores_the_true_original(flab):
    fl = flab
    r = fl.cli(*up_args(fl))
    assert r.returncode == 0, r.stderr[-800:]
    assert fl.running_config() != fl.original
    b = fl.cli("backups", "--json")
    rows = json.loads(b.stdout)
    active = [x for x in rows if x["role"] == "original" and x["status"] == "active"]
    assert len(active) == 1 and active[0]["sha256"] == __import__("hashlib").sha256(fl.original.encode()).hexdigest()
    finish(fl, "final cycle")
    assert_clean(fl, "final cycle")
    record("final up + down", "none", "true original restored")
    print("FAULT-MATRIX-SUMMARY", len(RESULTS), "cases;", "timings:",
          sum(t for *_x, t in fl.log), "s of CLI runs")
