"""Every way a run can be stopped (issue #22): SIGHUP and nested signal blocks, output that cannot be written (a closed
pipe, a hung-up terminal, a descriptor closed before the start), the exit code of a run that leaves its journal
unfinished, and commit-confirm asked of a switch that cannot do it. No root, no device: the lab cases are in
tests/faults (the fault matrix)."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from types import SimpleNamespace

import pytest

from harmless import journal
from harmless.clikit import QuietStream
from harmless.errors import EXIT_UNFINISHED, InputError
from harmless.switch_drivers.base import Capabilities
from harmless.up import UpRun
from tests.conftest import wait_for


# ----------------------------------------------------------------------------- signals
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_every_stop_signal_sets_the_flag_and_stops_the_next_forward_step(state_dir, sig):
    said: list[str] = []
    j = journal.Journal("up")
    with journal.interruptible(said.append):
        os.kill(os.getpid(), sig)
        wait_for(journal.interrupted, 5, f"the {sig.name} to reach the handler", interval=0.01)
        with pytest.raises(journal.Interrupted):
            j.record("server.build")
        j.record("rollback.begin")          # undo steps go on
    assert said and said[0].startswith(f"{sig.name}: finishing the current step")
    assert signal.getsignal(sig) is not journal._on_signal, "the handler outlived its block"


def test_blocks_nest_a_signal_before_the_inner_block_still_interrupts_it(state_dir):
    outer: list[str] = []
    inner: list[str] = []
    with journal.interruptible(outer.append):
        os.kill(os.getpid(), signal.SIGHUP)        # e.g. while the CLI loads the inventory
        wait_for(journal.interrupted, 5, "the SIGHUP", interval=0.01)
        with journal.interruptible(inner.append):  # the orchestrator's block must not clear it
            assert journal.interrupted()
            with pytest.raises(journal.Interrupted):
                journal.check_interrupt()
            os.kill(os.getpid(), signal.SIGHUP)
            wait_for(lambda: inner, 5, "the inner block's say", interval=0.01)
        assert journal.interrupted()               # still set after the inner block: the run is not over
    assert not journal.interrupted()
    assert outer and "SIGHUP" in outer[0] and inner and "again" in inner[0]


def test_outside_any_block_sighup_keeps_its_default(state_dir):
    assert signal.getsignal(signal.SIGHUP) in (signal.SIG_DFL, signal.SIG_IGN)


# ----------------------------------------------------------------------------- output
def test_a_closed_pipe_is_dropped_silently_and_points_the_descriptor_at_dev_null():
    r, w = os.pipe()
    os.close(r)
    f = open(w, "w", buffering=1)  # noqa: SIM115 - closed by the test
    s = QuietStream(f)
    assert s.write("progress line\n") == len("progress line\n")   # EPIPE swallowed (SIGPIPE is ignored by Python)
    assert s.broken
    s.write("more\n")
    s.flush()
    assert os.readlink(f"/proc/self/fd/{w}") == "/dev/null"
    f.close()


def test_a_stream_without_descriptor_is_just_silenced():
    class Dead(io.StringIO):
        def write(self, _s):
            raise OSError(5, "Input/output error")      # a hung-up terminal answers EIO
    s = QuietStream(Dead())
    s.write("x")
    assert s.broken and s.getvalue() == ""              # other attributes are the wrapped stream's


def _cli(args, state_dir, **popen):
    env = {**os.environ, "HARMLESS_STATE_DIR": str(state_dir)}
    return subprocess.Popen([sys.executable, "-m", "harmless.cli", *args], env=env, **popen)


@pytest.mark.parametrize("args", [["status", "--no-device"], ["status", "--json"]])
def test_output_closed_by_the_reader_does_not_change_the_exit_code(state_dir, args):
    """`harmless status | true`: the reader is gone before harmless writes; the exit code stays the command's."""
    p = _cli(args, state_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    p.stdout.close()
    p.stderr.close()
    assert p.wait(60) == 0


def test_output_closed_by_the_reader_keeps_an_error_exit_code(state_dir, tmp_path):
    """`harmless up -i missing.yaml 2>&1 | true`: the error line cannot be written; the exit code is still the input
    error's (2), not the broken pipe's."""
    p = _cli(["up", "-i", str(tmp_path / "missing.yaml")], state_dir, stdout=subprocess.PIPE,
             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    p.stdout.close()
    assert p.wait(60) == 2


def test_descriptors_closed_before_the_start_are_not_taken_by_harmless_files(state_dir):
    """`harmless status >&- 2>&-`: stdout/stderr closed before Python starts (sys.stdout is None then, which a library
    imported on the way, ciscoconfparse2 adding a loguru handler on it, does not survive): exit 0."""
    p = subprocess.run(["sh", "-c", f"exec {sys.executable} -m harmless.cli status --no-device >&- 2>&-"],
                       env={**os.environ, "HARMLESS_STATE_DIR": str(state_dir)}, stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 0


def test_a_broken_pipe_inside_rich_does_not_exit():
    """rich's Console exits 1 on a broken pipe by itself (Console.on_broken_pipe): ours only goes quiet."""
    from harmless.clikit import out
    out.on_broken_pipe()
    assert out.quiet
    out.quiet = False


# ----------------------------------------------------------------------------- commit-confirm
def _run_with(caps: dict[str, bool], revert_in, diffs=None):
    """An UpRun with just what check_commit_confirm reads (the unit under test is our own logic)."""
    run = UpRun.__new__(UpRun)
    said: list[str] = []
    drivers = {n: SimpleNamespace(name="ios", capabilities=Capabilities(commit_confirm=c),
                                  commit_confirm_missing="commit-confirm needs the IOS 'archive' feature, which is "
                                                         "not enabled") for n, c in caps.items()}
    run.drivers, run.progress = drivers, said.append
    run.res = SimpleNamespace(diffs=diffs if diffs is not None else {n: "+ vlan 107" for n in caps})
    run.revert_asked = revert_in is not None
    return run, said


def test_explicit_revert_in_on_a_switch_without_commit_confirm_is_refused_before_any_change():
    run, said = _run_with({"sw1": False, "sw2": True}, revert_in=120)
    with pytest.raises(InputError) as e:
        run.check_commit_confirm()
    assert e.value.where == "--revert-in" and "sw1 cannot do it" in e.value.problem and "archive" in e.value.problem
    assert "nothing was changed" in e.value.problem and "sw2" not in e.value.problem
    assert e.value.exit_code == 2


def test_default_revert_in_commits_plainly_and_says_so():
    run, said = _run_with({"sw1": False, "sw2": True}, revert_in=None)
    run.check_commit_confirm()
    assert len(said) == 1 and said[0].startswith("sw1: committing without commit-confirm")


def test_a_switch_with_nothing_to_commit_needs_no_commit_confirm():
    run, said = _run_with({"sw1": False}, revert_in=120, diffs={"sw1": ""})
    run.check_commit_confirm()
    assert said == []


# ----------------------------------------------------------------------------- exit codes
def test_an_unfinished_rollback_exits_6_a_finished_one_130(state_dir):
    run = UpRun.__new__(UpRun)
    run.touched, run.new_originals, run.prev_plan = {"sw1": {"file": "f"}}, {}, None
    for ok, code in ((True, 130), (False, EXIT_UNFINISHED)):
        run.rollback = lambda _e, ok=ok: ok
        with pytest.raises(journal.Interrupted) as e:
            run.fail(journal.Interrupted("harmless", "interrupted", ""))
        assert e.value.exit_code == code, ok
        assert ("did not finish" in e.value.problem) is (not ok)
