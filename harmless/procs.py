"""Is a daemon still running? Process checks that treat a zombie as gone.

HARMLESS's daemons (ovsdb-server, ovs-vswitchd, the lab's emulated switch, FRR) detach, so once they exit they are
zombies of PID 1 until it reaps them. ``kill(pid, 0)`` succeeds on a zombie; on machines (containers) whose PID 1
reaps only now and then, a plain ``kill(pid, 0)`` loop waited 1–2 s per daemon for nothing.
"""
from __future__ import annotations

import os
import signal
import time


def alive(pid: int) -> bool:
    """True when ``pid`` exists and is not a zombie (state ``Z``/``X`` in ``/proc/PID/stat``, proc(5))."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        return stat[stat.rfind(")") + 2] not in "ZX"
    except (OSError, IndexError):
        return True     # no /proc: kill(pid, 0) is all we know


def wait_gone(pid: int, timeout: float = 10, kill: bool = True) -> bool:
    """Wait up to ``timeout`` seconds for ``pid`` to exit (poll every 20 ms); then SIGKILL it if ``kill``.

    Returns True when it went by itself.
    """
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.02)
    if kill:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return False
