"""harmless.procs: a zombie counts as gone (PID 1 of a container may reap late), a live process does not."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from harmless.procs import alive, wait_gone
from tests.conftest import wait_for


def test_zombie_is_gone_but_kill_0_still_sees_it():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        # exited, not reaped: a zombie of this process
        wait_for(lambda: not alive(p.pid), 10, "the child to exit (a zombie)", 0.02)
        assert not alive(p.pid)
        os.kill(p.pid, 0)                                     # what the old check asked: still "there"
        assert wait_gone(p.pid, timeout=1, kill=False)
    finally:
        p.wait(timeout=10)
    assert not alive(p.pid)


def test_running_process_is_alive_and_killed_after_the_timeout():
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])   # a process that stays (the case)
    try:
        assert alive(p.pid)
        assert not wait_gone(p.pid, timeout=0.3)              # did not go by itself: SIGKILLed
        assert p.wait(timeout=10) == -9
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_run_raises_the_callers_error_with_what_failed_and_the_fix():
    import pytest
    from harmless.errors import OvsError
    from harmless.procs import run
    assert run([sys.executable, "-c", "print('hi')"]).stdout == "hi\n"
    with pytest.raises(OvsError) as e:
        run([sys.executable, "-c", "import sys; sys.exit('bad thing')"], error=OvsError, fix="do this")
    assert "bad thing" in e.value.problem and e.value.fix == "do this"
    assert run([sys.executable, "-c", "import sys; sys.exit(3)"], check=False).returncode == 3
    with pytest.raises(OvsError, match="command not found"):
        run(["no-such-program-harmless"], error=OvsError)
    with pytest.raises(OvsError, match="timed out after 0.2 s"):
        run([sys.executable, "-c", "import time; time.sleep(5)"], timeout=0.2, error=OvsError)   # outlives timeout


def test_run_in_a_namespace_prefixes_ip_netns_exec():
    from harmless.procs import in_netns
    assert in_netns(["ping", "-c1", "x"], "ns1") == ["ip", "netns", "exec", "ns1", "ping", "-c1", "x"]
    assert in_netns(["ping"], None) == ["ping"]


def test_cpu_seconds_of_a_gone_process_is_zero_and_of_this_one_positive():
    from harmless.procs import cpu_seconds
    sum(i * i for i in range(200_000))
    assert cpu_seconds(os.getpid()) > 0
    assert cpu_seconds(2 ** 22 + 12345) == 0


def test_spawn_piped_talks_over_stdin_and_stdout_and_stop_ends_its_process_group():
    import signal
    from harmless.procs import spawn_piped, stop
    echo = "import sys\nfor line in sys.stdin:\n    print('got', line.strip(), flush=True)\n"
    p = spawn_piped([sys.executable, "-c", echo], text=True)
    p.stdin.write("hello\n")
    p.stdin.flush()
    assert p.stdout.readline() == "got hello\n"
    p.stdin.close()
    stop(p, timeout=5, grace=5, group=True)                   # quits by itself once stdin closes: no signal
    assert p.returncode == 0
    # a child that ignores SIGTERM, in the same (new) session: group=True reaches it, SIGKILL after the timeout
    code = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            "print(c.pid, flush=True); time.sleep(60)")
    p = spawn_piped([sys.executable, "-c", code], text=True)
    child = int(p.stdout.readline())
    t0 = time.monotonic()
    stop(p, timeout=0.5, group=True)
    assert p.returncode == -signal.SIGKILL and time.monotonic() - t0 < 5
    assert wait_gone(child, timeout=5, kill=False)           # the child got the group's SIGTERM
    stop(None)
    stop(p)                                                   # ended: no-op
