"""The one controller launcher of the demos, the labs and the tests: ``osken-manager`` with an os-ken app.

``harmless demo`` and ``harmless qos demo`` run the bundled learning switch, the OSHI lab its controller, the edge
overlay lab its controller; the tests run the same launcher. (``harmless up`` never starts a controller: the user
brings one.) Built on :func:`harmless.procs.spawn` / :func:`harmless.procs.stop`.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from harmless.lab.netns import LabError, stop_pid_file
from harmless.procs import spawn, stop

LEARNING_SWITCH = "harmless.pipelines.learning_switch"


def osken_manager() -> str:
    """Path of ``osken-manager``: beside this Python (the venv), else on ``PATH``.

    Raises:
        LabError: not installed.
    """
    mgr = Path(sys.executable).parent / "osken-manager"
    exe = str(mgr) if mgr.exists() else shutil.which("osken-manager")
    if not exe:
        raise LabError("controller", "osken-manager not found", "run packaging/install.sh")
    return exe


def start_controller(port: int, log_file: Path | str, app: str = LEARNING_SWITCH, netns: str | None = None,
                     env: dict[str, str] | None = None, extra_args: tuple[str, ...] = (),
                     host: str | None = "127.0.0.1", pid_file: Path | None = None, append_log: bool = False,
                     wait_s: float = 0) -> subprocess.Popen:
    """Start ``osken-manager`` with ``app`` listening for OpenFlow on ``host:port`` (in ``netns`` if given).

    Args:
        port: OpenFlow TCP listen port (``--ofp-tcp-listen-port``).
        log_file: its stdout and stderr (``append_log``: appended, e.g. across restarts).
        app: the os-ken application module.
        netns: the network namespace it runs in (None: this one).
        env: environment variables added (e.g. ``HARMLESS_OF_ROLE``, the app's config file).
        extra_args: more osken-manager options (e.g. ``--ctl-privkey``/``--ctl-cert``/``--ca-certs`` and
            ``--ofp-ssl-listen-port`` for TLS, with which osken-manager listens for TLS only).
        host: listen address (``--ofp-listen-host``); None: every address.
        pid_file: write its pid there (a lab's controller outlives the command that started it:
            :func:`stop_controller` stops it from the file).
        wait_s: wait up to that long until it listens on ``port`` (0: return at once).

    Raises:
        LabError: osken-manager is not installed, or it did not listen within ``wait_s`` (log named).
    """
    argv = [osken_manager(), "--ofp-tcp-listen-port", str(port), *(["--ofp-listen-host", host] if host else []),
            *extra_args, app]
    p = spawn(argv, log_file, netns=netns, env=env, append=append_log)
    if pid_file is not None:
        Path(pid_file).write_text(str(p.pid))
    if wait_s and not wait_listening(p, port, wait_s):
        stop(p)
        raise LabError("controller", f"{app} did not listen on port {port} within {wait_s:g} s",
                       f"see {log_file}")
    return p


def listening(pid: int, port: int) -> bool:
    """True when a TCP socket listens on ``port`` in the network namespace of process ``pid``
    (``/proc/<pid>/net/tcp`` and ``tcp6``: local port in hex, state ``0A`` = LISTEN, proc(5))."""
    for name in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for ln in lines:
            f = ln.split()
            if len(f) > 3 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def wait_listening(p: subprocess.Popen, port: int, timeout: float) -> bool:
    """Wait up to ``timeout`` s until process ``p`` listens on ``port``; False when it exited or the time ran out."""
    end = time.monotonic() + timeout
    while p.poll() is None:
        if listening(p.pid, port):
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return False


def stop_controller(pid_file: Path) -> None:
    """Stop the controller started with ``pid_file`` (its process group; idempotent) and remove the file."""
    stop_pid_file(pid_file)
    pid_file.unlink(missing_ok=True)
