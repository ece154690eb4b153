"""Running commands and processes: the one way HARMLESS starts anything (DESIGN.md §2, layer "procs").

* :func:`run` runs one command (an argv list, never a shell string), optionally inside a network namespace, with a
  timeout, and turns every failure (not installed, timed out, non-zero exit) into a :class:`HarmlessError` subclass
  that names *what* failed and the *fix*.
* :func:`spawn` starts a long-running process (a controller, a daemon of the lab) with its output in a log file;
  :func:`spawn_piped` one that is driven over its standard input and output (a DPDK generator's console);
  :func:`stop` ends either (SIGTERM, then SIGKILL; optionally after a grace period, to its whole process group).
* :func:`alive` / :func:`wait_gone` treat a zombie as gone.
* :func:`free_port` and :func:`cpu_seconds` are the process-level facts the labs and benchmarks share.

HARMLESS's daemons (ovsdb-server, ovs-vswitchd, the lab's emulated switch, FRR) detach, so once they exit they are
zombies of PID 1 until it reaps them. ``kill(pid, 0)`` succeeds on a zombie; on machines (containers) whose PID 1
reaps only now and then, a plain ``kill(pid, 0)`` loop waited 1–2 s per daemon for nothing.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Sequence

from harmless.errors import HarmlessError


class CommandError(HarmlessError):
    """A command HARMLESS ran failed (default error class of :func:`run`)."""


def in_netns(argv: Sequence[str], netns: str | None) -> list[str]:
    """``argv`` prefixed with ``ip netns exec NETNS`` when ``netns`` is given (pure)."""
    return ["ip", "netns", "exec", netns, *argv] if netns else list(argv)


def run(argv: Sequence[str], *, netns: str | None = None, stdin: str | None = None, timeout: float = 30,
        check: bool = True, env: dict[str, str] | None = None, error: type[HarmlessError] = CommandError,
        fix: str = "", where: str | None = None) -> subprocess.CompletedProcess:
    """Run ``argv`` (in ``netns`` if given) and capture its text output.

    The command runs in a session of its own: the SIGINT of a Ctrl-C and the SIGHUP of a closed terminal reach
    harmless (which finishes the step in flight, :mod:`harmless.journal`), never the ``ovs-vsctl`` or ``ip`` it is
    running at that moment.

    Args:
        argv: the command and its arguments (no shell).
        netns: a network namespace to run it in (``ip netns exec``).
        stdin: text fed to its standard input.
        timeout: seconds before it is killed and ``error`` raised.
        check: raise ``error`` on a non-zero exit (otherwise the caller reads ``returncode``).
        env: the whole environment (None: inherit).
        error: the :class:`HarmlessError` subclass raised (``OvsError`` for OVS tools, ``InputError``, ...).
        fix: what the user should do when it fails (the error's fix).
        where: the error's *where* (default: the first words of the command).

    Returns:
        The :class:`subprocess.CompletedProcess` (``stdout``/``stderr`` as text).

    Raises:
        ``error``: the program is not installed (fix: ``packaging/install.sh``), it timed out, or (``check``) it
        exited non-zero (problem: the last line of its stderr, else stdout).
    """
    full = in_netns(argv, netns)
    what = where or " ".join(str(a) for a in full[:5 if netns else 3])
    try:
        p = subprocess.run(full, input=stdin, capture_output=True, text=True, env=env, timeout=timeout,
                           start_new_session=True)
    except FileNotFoundError:
        raise error(what, f"{full[0]}: command not found", "run packaging/install.sh") from None
    except subprocess.TimeoutExpired:
        raise error(what, f"timed out after {timeout:g} s", fix) from None
    if check and p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()
        raise error(what, msg[-1] if msg else f"exit status {p.returncode}", fix)
    return p


def spawn(argv: Sequence[str], log_file: Path | str, *, netns: str | None = None,
          env: dict[str, str] | None = None, append: bool = False) -> subprocess.Popen:
    """Start a long-running process in its own session, stdout and stderr written to ``log_file``.

    Args:
        argv: the command (no shell); env: variables added to this process's environment; append: add to
            ``log_file`` instead of starting it afresh (e.g. a controller restarted).

    Raises:
        CommandError: the program is not installed.
    """
    full = in_netns(argv, netns)
    out = open(log_file, "a" if append else "w")
    try:
        return subprocess.Popen(full, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env={**os.environ, **(env or {})})
    except FileNotFoundError:
        raise CommandError(full[0], "command not found", "run packaging/install.sh") from None
    finally:
        out.close()


def spawn_piped(argv: Sequence[str], *, text: bool = False, netns: str | None = None,
                env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start an interactive process in its own session: its stdin and stdout are pipes (stderr joins stdout).

    The caller writes commands to ``p.stdin`` and reads ``p.stdout`` (e.g. in a thread); :func:`stop` ends it.

    Args:
        argv: the command (no shell).
        text: text pipes (line-buffered) instead of bytes.
        netns: a network namespace to run it in.
        env: variables added to this process's environment.

    Raises:
        CommandError: the program is not installed.
    """
    full = in_netns(argv, netns)
    try:
        return subprocess.Popen(full, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=text, bufsize=1 if text else -1, start_new_session=True,
                                env={**os.environ, **(env or {})})
    except FileNotFoundError:
        raise CommandError(full[0], "command not found", "run packaging/install.sh") from None


def stop(p: subprocess.Popen | None, timeout: float = 10, *, grace: float = 0, group: bool = False) -> None:
    """End a process started by :func:`spawn`/:func:`spawn_piped`. None or ended: no-op.

    Args:
        p: the process.
        timeout: seconds between SIGTERM and SIGKILL.
        grace: seconds to wait for it to exit by itself first (after the caller asked it to quit).
        group: signal its whole process group (it was started in its own session, so the group is its pid),
            which reaches the children it started.
    """
    if p is None or p.poll() is not None:
        return
    if grace > 0:
        try:
            p.wait(grace)
            return
        except subprocess.TimeoutExpired:
            pass

    def send(sig: int) -> None:
        try:
            os.killpg(p.pid, sig) if group else p.send_signal(sig)
        except OSError:
            pass

    send(signal.SIGTERM)
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        p.wait(5)


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


def free_port(preferred: int | None = None) -> int:
    """A free TCP port on 127.0.0.1 (``preferred`` when it is free)."""
    if preferred:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", preferred))
                return preferred
            except OSError:
                pass
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(*pids: int) -> float:
    """CPU time (utime + stime, all threads) of ``pids`` in seconds: ``/proc/<pid>/stat`` fields 14 and 15, in
    ticks of ``SC_CLK_TCK`` (proc(5)). A process that is gone counts 0."""
    total = 0
    for pid in pids:
        try:
            f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(f[11]) + int(f[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")
