"""harmless.procs: a zombie counts as gone (PID 1 of a container may reap late), a live process does not."""
from __future__ import annotations

import os
import subprocess
import sys

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
