"""What a server's agent sees of its own data path: BFD per switch, trunk carrier, ovs-vswitchd alive.

One ``ovsdb-client monitor`` process streams the ``Interface`` table's ``name``, ``bfd_status`` and ``link_state``
(one JSON line per change, ovsdb-client(1)) into :class:`Local`; nothing is polled per interval but the
ovs-vswitchd process itself (``/proc/<pid>/stat``: gone, zombie or stopped). OVSDB keeps the last ``bfd_status``
after ovs-vswitchd died, so BFD counts only while it runs.
"""
from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

from harmless import procs
from harmless.otc.flows import heartbeat_names
from harmless.ovs import Ovs


def vswitchd_state(ovs: Ovs) -> str:
    """``running``, ``stopped`` (SIGSTOP: frozen) or ``down`` (not running, or a zombie)."""
    try:
        pid = int((ovs.rundir / "ovs-vswitchd.pid").read_text().strip())
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return "down"
    state = stat[stat.rfind(")") + 2]
    return "down" if state in "ZX" else "stopped" if state in "Tt" else "running"


def parse_monitor_line(line: str, rows: dict[str, dict], pending: list[str]) -> None:
    """Fold one ``ovsdb-client --format=json monitor`` line into ``rows`` (``{uuid: {"name", "bfd", "link"}}``).

    An update is ``initial``/``insert``/``delete`` rows, or an ``old`` row (its uuid, changed columns) followed by a
    ``new`` row with an empty uuid (``pending`` carries that uuid between them). Pure but for the two arguments.
    """
    try:
        doc = json.loads(line)
    except ValueError:
        return
    heads = doc.get("headings") or []
    for row in doc.get("data") or []:
        r = dict(zip(heads, row))
        uuid, action = r.get("row"), r.get("action")
        if action == "old":
            pending[:] = [uuid]
            continue
        if action == "new":
            uuid = pending[0] if pending else uuid
        if action == "delete":
            rows.pop(uuid, None)
            continue
        bfd = r.get("bfd_status")
        link = r.get("link_state")
        rows[uuid] = {"name": r.get("name"),
                      "bfd": dict(bfd[1]) if isinstance(bfd, list) and bfd and bfd[0] == "map" else {},
                      "link": link if isinstance(link, str) else None}


class Local:
    """The local OVS as the agent sees it (a thread reads the monitor stream; :meth:`restart` after OVS restarts).

    Args:
        ovs: this server's OVS instance.
    """

    def __init__(self, ovs: Ovs):
        self.ovs = ovs
        self._rows: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None

    def running(self) -> bool:
        """The monitor stream is alive."""
        return self._proc is not None and self._proc.poll() is None

    def restart(self) -> None:
        """(Re)start the monitor when OVSDB runs; a no-op while the current one runs."""
        if self.running() or not self.ovs.ovsdb_running():
            return
        self.stop()
        argv = ["ovsdb-client", "--format=json", "monitor", self.ovs.db, "Open_vSwitch", "Interface",
                "name,bfd_status,link_state"]
        self._proc = procs.spawn_piped(argv, text=True)
        rows: dict[str, dict] = {}
        with self._lock:
            self._rows = rows
        threading.Thread(target=self._read, args=(self._proc, rows), daemon=True).start()

    def _read(self, proc: subprocess.Popen, rows: dict[str, dict]) -> None:
        pending: list[str] = []
        for line in proc.stdout:
            with self._lock:
                parse_monitor_line(line, rows, pending)

    def stop(self) -> None:
        procs.stop(self._proc, timeout=2)
        self._proc = None

    def _by_name(self) -> dict[str, dict]:
        with self._lock:
            return {r["name"]: r for r in self._rows.values() if r.get("name")}

    def bfd(self, switch: str) -> bool | None:
        """BFD forwarding on ``switch``'s heartbeat port; None when ovs-vswitchd is not running or there is none."""
        if vswitchd_state(self.ovs) != "running" or not self.running():
            return None
        r = self._by_name().get(heartbeat_names(switch)[1])
        if r is None or not r["bfd"]:
            return None
        return r["bfd"].get("forwarding") == "true"

    def link_up(self, interface: str) -> bool:
        """The trunk ``interface`` has carrier as OVS last reported it (False when unknown)."""
        r = self._by_name().get(interface)
        return bool(r and r["link"] == "up")
