"""harmless.procs: a zombie counts as gone (PID 1 of a container may reap late), a live process does not."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from harmless.procs import alive, wait_gone


def test_zombie_is_gone_but_kill_0_still_sees_it():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 10
        while alive(p.pid) and time.monotonic() < deadline:   # exited, not reaped: a zombie of this process
            time.sleep(0.02)
        assert not alive(p.pid)
        os.kill(p.pid, 0)                                     # what the old check asked: still "there"
        assert wait_gone(p.pid, timeout=1, kill=False)
    finally:
        p.wait(timeout=10)
    assert not alive(p.pid)


def test_running_process_is_alive_and_killed_after_the_timeout():
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert alive(p.pid)
        assert not wait_gone(p.pid, timeout=0.3)              # did not go by itself: SIGKILLed
        assert p.wait(timeout=10) == -9
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
