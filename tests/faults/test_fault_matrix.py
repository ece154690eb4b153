"""The fault matrix of issues #11 and #22 on the lab's emulated IOS switch: a kill (SIGKILL, SIGINT, SIGTERM, SIGHUP)
at every journal step of ``up`` and of ``down``, a closed terminal, output nobody reads, SSH loss before/after the
commit, a slow ``write memory``, ovs-vswitchd killed, ovsdb-server killed before ``down``, an OVS error after the
commit, a full state directory (during ``up``, before ``down``) and a read-only one, corrupt/missing/unknown-version
state, concurrent ``up``, and the switch changed behind HARMLESS's back (a port or trunk by hand, a reload without the
migration, a watch killed while holding a port down). Every case ends — after at most one ``harmless down`` or ``harmless recover`` — with the device's running config
byte-equal to the true original, no HARMLESS bridge or daemon left, the journal finished and no active original
left; the next case's ``up`` + ``down`` is the "following cycle" that must still restore the true original (the last
test runs one explicitly). Cases run in order on one lab (module fixture); each prints its outcome, and
``docs/faults.md`` holds the table.
"""
from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import wait_for
from tests.faults.conftest import matrix

pytestmark = pytest.mark.lab

UP_STEPS = ["up.begin", "backup.saved", "original.store", "original.stored", "device.commit", "device.committed",
            "server.build", "server.built", "verified", "device.confirm", "state.save", "original.update", "up.end"]
DOWN_STEPS = ["down.begin", "device.restore", "device.restored", "original.remove", "original.removed",
              "server.remove", "server.removed", "state.clear", "down.end"]
#: steps after the last side effect of `up`: a SIGINT/SIGTERM there lets the run finish (nothing left to undo)
UP_COMPLETES_AFTER = {"state.save", "original.update", "up.end"}
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
    assert not fl.switch_copies(), f"{case}: a copy of the original is left on the switch: {fl.switch_copies()}"
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
#: SIGKILL at every step of `up` (each leaves a different journal for down/recover, or a different rollback). SIGINT,
#: SIGTERM and SIGHUP run one handler (tests/unit/test_stops.py covers all three): SIGINT is sampled at each step after
#: which the rollback differs (nothing done; copy being stored; commit in flight; device committed; server being built;
#: server verified; after the last change), SIGHUP (a dropped SSH session, issue #22) at every other step, so every
#: step of `up` meets a catchable signal once; SIGTERM during `up` only on EOS and during `down` here, to keep the
#: suite's time down (docs/faults.md)
INT_UP_STEPS = ["up.begin", "original.store", "device.commit", "device.committed", "server.build", "verified",
                "state.save"]
HUP_UP_STEPS = [s for s in UP_STEPS if s not in INT_UP_STEPS]
UP_CASES = matrix([(s, "KILL") for s in UP_STEPS] + [(s, "INT") for s in INT_UP_STEPS]
                  + [(s, "HUP") for s in HUP_UP_STEPS],
                  [(s, "KILL") for s in UP_STEPS] + [("device.commit", "INT"), ("server.build", "INT"),
                                                    ("state.save", "INT"), ("server.built", "HUP")])
DOWN_CASES = matrix([(s, "KILL") for s in DOWN_STEPS] + [(s, "INT") for s in ("device.restore", "server.remove")]
                    + [("device.restore", "TERM")],
                    [(s, "KILL") for s in DOWN_STEPS] + [("device.restore", "TERM")])


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
        if step not in ("up.begin", "backup.saved", "original.store", "original.stored", "device.commit"):
            assert "back in the config it had before (verified)" in last, r.stderr[-3000:]
        assert_clean(fl, case + " (before any down)")
        outcome = "exit 130, rolled back by itself"
    assert_clean(fl, case)
    record(case, f"SIG{sig} right after the '{step}' record", outcome)


@pytest.mark.parametrize("step,sig", UP_CASES, ids=[f"{s}-{g}" for s, g in UP_CASES])
def test_up_killed_at_every_step(flab, step, sig):
    up_killed_case(flab, step, sig)


# ----------------------------------------------------------------------------- a closed terminal, unread output
def test_terminal_closed_during_up(flab):
    """`harmless up` in a terminal (a pty, its controlling terminal) that goes away while br-otc is being built, as when
    the SSH session drops: the kernel sends SIGHUP and writes to the terminal fail (EIO); up rolls back as on Ctrl-C
    and exits 130."""
    fl = flab
    case = "terminal closed during up"
    at, gone = fl.state.parent / "at-server-build", fl.state.parent / "terminal-gone"
    at.unlink(missing_ok=True)
    gone.unlink(missing_ok=True)
    env = fl.env(HARMLESS_FAULT_AT="server.build",
                 HARMLESS_FAULT_EXEC=f"touch {at}; i=0; while [ ! -e {gone} ] && [ $i -lt 600 ]; do sleep 0.1; "
                                     "i=$((i+1)); done")
    pid, master = pty.fork()
    if pid == 0:                                  # the child: harmless with the pty as its controlling terminal
        os.execve(sys.executable, [sys.executable, "-m", "harmless.cli", "up", "-i", str(fl.inventory), "--no-wait"],
                  env)
    seen = b""
    deadline = time.monotonic() + 120
    while not at.exists() and time.monotonic() < deadline:     # read what it prints until it is at server.build
        if select.select([master], [], [], 0.2)[0]:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
    assert at.exists(), seen.decode(errors="replace")[-800:]
    os.close(master)                              # the terminal goes away
    gone.touch()
    rc = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    assert rc == 130, (rc, seen.decode(errors="replace")[-800:], fl.journal()[-3:])
    archived = sorted((fl.state / "journal").glob("*-up.jsonl"))[-1].read_text()
    assert '"rollback.begin"' in archived and '"rollback.end"' in archived, archived[-600:]
    assert_clean(fl, case)
    record(case, "the pty of `harmless up` closed at 'server.build' (SIGHUP, EIO on every write)",
           "exit 130, rolled back by itself")


def test_output_nobody_reads_never_changes_the_outcome(flab):
    """`harmless up | true`, `harmless status | true`, `harmless down | head -n 1` with stderr closed too: every write
    fails (EPIPE); each command still does all its work and exits with the code that says what the switch is (`--json`
    output closed: tests/unit/test_stops.py)."""
    fl = flab
    case = "output closed"
    assert fl.cli_unread("up", "-i", str(fl.inventory), "--no-wait") == 0
    assert (fl.state / "state.json").exists() and fl.server_bridges() and fl.running_config() != fl.original
    assert not (fl.state / "journal.jsonl").exists()
    assert fl.cli_unread("status") == 0
    assert fl.cli_unread("down") == 0
    assert_clean(fl, case)
    record(case, "stdout and stderr closed by the reader (EPIPE) for up, status and down",
           "exit 0 each; deployed, then restored")


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


# ----------------------------------------------------------------------------- a fresh machine's down -i killed
def test_fresh_machine_down_killed_while_adopting_the_switch_copy(flab):
    """The server dies after up; on a fresh state directory ``down -i`` is killed right after it journaled taking the
    switch's copy as the original (before it saved it): running ``down -i`` again finishes from the same copy."""
    fl = flab
    case = "fresh down -i KILL at original.adopt"
    r = fl.cli(*up_args(fl))
    assert r.returncode == 0, r.stderr[-800:]
    assert fl.switch_copies() == ["harmless-original.cfg", "harmless-original.sha256"]
    fl.server_dies()
    r = fl.cli("down", "-i", str(fl.inventory), at="original.adopt", signal="KILL")
    assert r.returncode == -9, (r.returncode, r.stderr[-500:])
    assert fl.running_config() != fl.original and fl.switch_copies()      # killed before any change
    again = fl.cli("down", "-i", str(fl.inventory))
    assert again.returncode == 0, again.stderr[-800:]
    assert "original from the switch: sw1 flash:harmless-original.cfg" in again.stdout, again.stdout
    assert_clean(fl, case)
    record(case, "server gone (OVS killed, state wiped); SIGKILL right after the 'original.adopt' record",
           "down -i again: original from the switch's copy, copy removed")


# ----------------------------------------------------------------------------- kill during a rollback
@pytest.mark.parametrize("step", matrix(["rollback.begin", "device.restore", "server.remove"], ["device.restore"]))
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


def test_ovsdb_server_killed_then_down(flab):
    """HARMLESS's own ovsdb-server dies while deployed; `down` starts it to delete the bridges from its database (it
    used to stop, leaving br-otc and br-of-sw1 in conf.db for the next start, and say nothing)."""
    fl = flab
    case = "ovsdb-server killed, then down"
    assert fl.cli(*up_args(fl)).returncode == 0
    subprocess.run(["sh", "-c", f"kill -9 $(cat {fl.state}/ovs/run/ovsdb-server.pid)"], check=True)
    r = fl.cli("down")
    assert r.returncode == 0 and "not running: starting it to remove its bridges" in r.stderr, r.stderr[-800:]
    rows = subprocess.run(["ovsdb-tool", "query", str(fl.state / "ovs" / "db" / "conf.db"),
                           '["Open_vSwitch",{"op":"select","table":"Bridge","where":[],"columns":["name"]}]'],
                          capture_output=True, text=True, check=True).stdout
    assert json.loads(rows)[0]["rows"] == [], rows
    assert_clean(fl, case)
    record("ovsdb-server killed", "SIGKILL to HARMLESS's ovsdb-server while deployed, then down",
           "down exit 0; bridges deleted from its database (it is started for that), stopped")


# ----------------------------------------------------------------------------- state directory faults
@pytest.mark.parametrize("at", matrix(["device.commit", "server.build"], ["server.build"]))
def test_disk_full(flab, at):
    fl = flab
    filler = fl.state / "filler"
    r = fl.cli(*up_args(fl), at=at, exec=f"dd if=/dev/zero of={filler} bs=1M count=100 2>/dev/null; sync")
    filler.unlink(missing_ok=True)
    assert "Traceback" not in r.stderr and "No space left" in r.stderr, r.stderr[-800:]
    # HARMLESS's own OVS lives on the full disk too: when it cannot be started to undo the server side, the rollback
    # does not finish and the exit code says so (6, issue #22; the switch itself is back); otherwise 1
    unfinished = "the rollback did not finish" in r.stderr
    assert r.returncode == (6 if unfinished else 1), (r.returncode, r.stderr[-800:])
    outcome = (f"exit {r.returncode}, " + ("switch restored, server side left: rollback unfinished; " if unfinished
                                          else "rolled back; ") + finish(fl, f"disk full at {at}"))
    assert_clean(fl, f"disk full at {at}")
    record("state dir full", f"tmpfs filled right after '{at}'", outcome)


def test_disk_full_before_down(flab):
    """The state directory's disk is full when `down` runs (it used to end in `internal error: OSError`, from writing
    the lock holder's name): the switch is restored anyway. Whether HARMLESS's own OVS (its database lives there too)
    can still delete the bridges depends on the room left in its database file's last page: if it can, down ends
    (exit 0) and says which records it could not write; if not, one line says the switch is back, what failed and to
    free space (exit 6). Either way one more `down` after freeing space finishes."""
    fl = flab
    case = "state dir full before down"
    assert fl.cli(*up_args(fl)).returncode == 0
    filler = fl.state / "filler"
    subprocess.run(["sh", "-c", f"dd if=/dev/zero of={filler} bs=1M count=100 2>/dev/null; sync"], check=False)
    try:
        r = fl.cli("down")
        assert r.returncode in (0, 6) and "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert "could not journal down.begin (No space left on device)" in r.stderr, r.stderr[-800:]
        if r.returncode == 6:
            last = r.stderr.strip().splitlines()[-1]
            assert last.startswith("error: ") and "every switch is restored (verified)" in last, last
            assert "free space" in last and "harmless down again" in last, last
        else:
            assert "restored, but the backup index could not record it" in r.stderr, r.stderr[-800:]
        assert fl.running_config() == fl.original
    finally:
        filler.unlink(missing_ok=True)
    outcome = finish(fl, case)
    assert_clean(fl, case)
    record("state dir full", "tmpfs filled after up, before down",
           f"down exit {r.returncode}, switch restored, says what it could not record"
           + (" and to free space" if r.returncode == 6 else "") + f"; {outcome}")


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


@pytest.mark.parametrize("damage", matrix(["corrupt", "missing", "unknown-version"], ["corrupt"]))
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


# ----------------------------------------------------------------------------- the switch changed behind HARMLESS
def status_differences(fl) -> tuple[int, list[dict]]:
    """``harmless status --json``: its exit code and every switch's differences."""
    r = fl.cli("status", "--json")
    return r.returncode, [f for sw in json.loads(r.stdout)["switches"] for f in sw.get("differences") or []]


def watch_differs(fl) -> list[dict]:
    """``harmless watch --once --json``: the device-state events it prints (it checks at its first round)."""
    r = fl.cli("watch", "--once", "--json")
    assert r.returncode == 0, r.stderr[-800:]
    evs = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    return [e for e in evs if e.get("event") == "device-state" and e["status"] == "differs"]


def exporter_differences(fl) -> dict:
    """The exporter's device metrics after one device poll (in-process, what `harmless exporter` serves):
    ``{"as_deployed": value, "differences": {(kind, interface): fix}}``."""
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from harmless import exporter
    from harmless import state as st
    with st.using(fl.state):
        poller = exporter.DevicePoller()
        poller.poll_once()
        text = generate_latest(exporter.registry(poller)).decode()
    out: dict = {"as_deployed": None, "differences": {}}
    for fam in text_string_to_metric_families(text):
        for smp in fam.samples:
            if smp.name == "harmless_device_as_deployed":
                out["as_deployed"] = smp.value
            elif smp.name == "harmless_device_difference":
                out["differences"][(smp.labels["kind"], smp.labels["interface"])] = smp.labels["fix"]
    return out


def hold_port_with_a_watch_that_dies(fl, n: int) -> None:
    """Pull host ``n``'s cable, let `harmless watch` hold br-of port ``n`` LINK_DOWN, SIGKILL the watch, plug the
    cable back: the hold outlives the watch (a watch killed while holding a port down)."""
    veth = fl.info["port_map"][f"FastEthernet0/{n}"]
    netns = ["ip", "-n", fl.info["switch_netns"], "link", "set", veth]
    subprocess.run([*netns, "down"], check=True)
    w = subprocess.Popen([sys.executable, "-m", "harmless.cli", "watch", "--interval", "0.5", "--check-interval", "0"],
                         env=fl.env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def held():
            r = fl.cli("status", "--json")
            return any(p["blocked_by_watch"] for sw in json.loads(r.stdout)["switches"] for p in sw["ports"]
                       if p["ofport"] == n)
        wait_for(held, 60, f"harmless watch to hold br-of port {n} LINK_DOWN")
    finally:
        w.kill()
        w.wait(10)
        subprocess.run([*netns, "up"], check=True)


def test_switch_changed_behind_harmless_is_reported(flab):
    """A migrated port moved back to VLAN 1 by hand, VLAN 108 taken off the HARMLESS trunk by hand, and a watch killed
    while holding port 10 down: status (exit 7), watch (--json events) and the exporter (metrics) name each with what
    to type; `up` puts everything back. Then the switch reloads from a startup config without the migration (the
    operator's own pre-HARMLESS backup copied to startup-config): reported as `not-migrated`; `down` finishes."""
    fl = flab
    fl.device("copy running-config flash:pre-harmless.cfg")           # the operator's own backup, before HARMLESS
    assert fl.cli(*up_args(fl)).returncode == 0
    fl.configure("interface FastEthernet0/7", "switchport access vlan 1",
                 "interface GigabitEthernet0/1", "switchport trunk allowed vlan 107,110")
    hold_port_with_a_watch_that_dies(fl, 10)
    def three():          # the stale hold shows once the device reports FastEthernet0/10's link up again
        rc, f = status_differences(fl)
        return (rc, f) if len(f) == 3 else None
    rc, found = wait_for(three, 30, "status to report the port, the trunk and the stale hold")
    assert rc == 7, found
    kinds = {(f["kind"], f["interface"]): f for f in found}
    assert set(kinds) == {("port", "FastEthernet0/7"), ("trunk", "GigabitEthernet0/1"), ("held", "FastEthernet0/10")}
    assert kinds[("port", "FastEthernet0/7")]["found"] == "an access port of VLAN 1"
    assert "no longer carries VLAN(s) 108" in kinds[("trunk", "GigabitEthernet0/1")]["problem"]
    assert all(f"harmless up -i {fl.inventory}" in f["fix"] for k, f in kinds.items() if k[0] != "held")
    assert "harmless watch --once" in kinds[("held", "FastEthernet0/10")]["fix"]
    m = exporter_differences(fl)
    assert m["as_deployed"] == 0 and set(m["differences"]) == set(kinds), m
    assert {(e["kind"], e["interface"]) for e in watch_differs(fl)} == {("port", "FastEthernet0/7"),
                                                                        ("trunk", "GigabitEthernet0/1")}
    assert fl.cli(*up_args(fl)).returncode == 0                        # puts HARMLESS's configuration back
    assert status_differences(fl) == (0, [])      # and no false difference on this realistic config
    # a reload from a startup config without the migration
    out = fl.device("copy flash:pre-harmless.cfg startup-config", "reload", "no", "")
    assert "Proceed with reload? [confirm]" in out[2], out
    rc, found = status_differences(fl)
    assert rc == 7 and [f["kind"] for f in found] == ["not-migrated"], found
    assert [e["kind"] for e in watch_differs(fl)] == ["not-migrated"]
    assert set(exporter_differences(fl)["differences"]) == {("not-migrated", "")}
    assert fl.running_config() == fl.original
    outcome = finish(fl, "switch changed behind HARMLESS")
    assert_clean(fl, "switch changed behind HARMLESS")
    record("switch changed by hand", "Fa0/7 to VLAN 1; VLAN 108 off the trunk; watch killed holding port 10",
           "status exit 7 (3 differences, each with its fix), watch --json events, exporter metrics; up fixes all")
    record("reload without the migration", "pre-HARMLESS config copied to startup-config, reload",
           f"status exit 7 (not-migrated), watch event, exporter metric; {outcome}")


def test_concurrent_up_is_refused(flab):
    fl = flab
    holder: dict = {}
    release = fl.state.parent / "release-first-up"
    release.unlink(missing_ok=True)

    def first():      # the up under test holds the lock at device.commit until the other two have run
        holder["r"] = fl.cli(*up_args(fl), at="device.commit",
                             exec=f"i=0; while [ ! -e {release} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done")

    t = threading.Thread(target=first)
    t.start()
    try:
        wait_for(lambda: (fl.state / "journal.jsonl").exists(), 60, "the first up's journal (it holds the lock)")
        second = fl.cli(*up_args(fl))
        w = fl.cli("down")
    finally:
        release.touch()
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
