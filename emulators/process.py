"""What every emulated switch process shares: a log filter that hides the password, the JSON status file, and
running the Twisted reactor until SIGTERM with a pid file and the ``ready`` line the lab waits for."""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

log = logging.getLogger("harmless.emulators")


class Redact(logging.Filter):
    """Replaces the password in every log record (belt and braces: nothing should log it)."""

    def __init__(self, secret: str):
        super().__init__()
        self.secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secret:
            msg = record.getMessage()
            if self.secret in msg:
                record.msg, record.args = msg.replace(self.secret, "***"), ()
        return True


def write_json(path: Path | None, data: dict) -> None:
    """Write ``data`` to ``path`` atomically (temp file + rename); nothing when ``path`` is None."""
    if path is None:
        return
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


def run_reactor(reactor, args, status: dict, where: str) -> int:
    """Write the pid and status files, print ``ready``, run the Twisted reactor until stopped, remove the pid file.

    Shared by every emulated vendor (:mod:`harmless.emulators.ios`, :mod:`harmless.emulators.eos`).
    Returns the exit status 0.
    """
    if args.pid_file:
        args.pid_file.write_text(f"{os.getpid()}\n")
    write_json(args.status_file, status)
    log.info("ready: %s (%s) %s", args.hostname, status.get("model", ""), where)
    print("ready", flush=True)
    try:
        reactor.run()
    finally:
        if args.pid_file:
            args.pid_file.unlink(missing_ok=True)
    return 0
