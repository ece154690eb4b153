"""FRR (Debian's ``frr`` package: zebra + ospfd) per OSHI node, inside the node's network namespace.

Each node gets its own folder (under :data:`RUN_BASE`, owned by the ``frr`` user that the daemons run as) with ``zebra.conf``/``ospfd.conf``, pid files, the zebra API socket and the vty
sockets (``--vty_socket``), so several FRR instances run side by side without touching ``/etc/frr`` or
``/var/run/frr``. OSPF runs on the node's internal ports (the IP stack's side of every physical port), point to
point, hello 1 s / dead 3 s so that the lab converges and re-routes within seconds; connected networks (loopback,
CE and controller subnets) are redistributed.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

from harmless.errors import HarmlessError
from harmless.procs import alive, run

FRR_DIR = Path("/usr/lib/frr")
DAEMONS = ("zebra", "ospfd")
#: parent of the per-node FRR folders (must be traversable by the frr user, unlike the 0700 state directory)
RUN_BASE = Path("/run/hl-oshi")


def frr_installed() -> bool:
    return all((FRR_DIR / d).exists() for d in DAEMONS) and shutil.which("vtysh") is not None


def zebra_conf(hostname: str, log: Path, src: str | None = None) -> str:
    """zebra configuration; with ``src``, OSPF routes are installed with that preferred source address.

    The node's loopback as source keeps the in-band control channel (and anything else the node originates) alive
    across a link failure: an address of the failed link's subnet would stay "connected" elsewhere (the internal
    port does not go down with the physical one), so replies to it would be black-holed.
    """
    text = f"hostname {hostname}\nlog file {log}\n!\n"
    if src:
        text += (f"route-map OSHI-SRC permit 10\n set src {src}\n!\n"
                 "ip protocol ospf route-map OSHI-SRC\n!\n")
    return text


def ospfd_conf(hostname: str, router_id: str, ospf_ifaces: list[str], log: Path, hello_multiplier: int = 4) -> str:
    """ospfd configuration: OSPF area 0 on ``ospf_ifaces`` (point-to-point), redistribute connected.

    Fast hellos: dead interval 1 s with ``hello_multiplier`` hellos per second (FRR's ``ip ospf dead-interval
    minimal hello-multiplier``): an internal port does not go down when its physical port does, so a failed link
    is only noticed when hellos stop.
    """
    lines = [f"hostname {hostname}", f"log file {log}", "!"]
    for i in ospf_ifaces:
        lines += [f"interface {i}", " ip ospf area 0", " ip ospf network point-to-point",
                  f" ip ospf dead-interval minimal hello-multiplier {hello_multiplier}", "!"]
    lines += ["router ospf", f" ospf router-id {router_id}", " redistribute connected",
              " timers throttle spf 0 50 500", "!"]
    return "\n".join(lines) + "\n"


# Left as is: every ospfd (8.4) writes its graceful-restart state to /run/frr/ospfd-gr.json, whatever the pathspace
# (-N) or socket options; the instances share that file, which is harmless here because graceful restart is not
# configured.


class Frr:
    """The FRR daemons of one node.

    Args:
        base: the node's FRR folder.
        netns: the node's network namespace.
    """

    def __init__(self, base: Path, netns: str):
        self.base, self.netns = Path(base), netns

    def _pid(self, d: str) -> int | None:
        try:
            pid = int((self.base / f"{d}.pid").read_text().strip())
            return pid if alive(pid) else None
        except (OSError, ValueError):
            return None

    def start(self, zebra: str, ospfd: str) -> None:
        """Write the configs and start zebra, then ospfd. Raises HarmlessError (log named) if one does not run."""
        self.base.mkdir(parents=True, exist_ok=True)
        for d in (RUN_BASE, self.base.parent):          # traversable by frr whatever the umask
            if d.exists() and d != Path("/run"):
                d.chmod(0o755)
        # FRR drops privileges to frr:frr (and insists that its user is in the frrvty group, which root is not):
        # the node's folder belongs to frr, its parents must be traversable.
        shutil.chown(self.base, "frr", "frr")
        (self.base / "zebra.conf").write_text(zebra)
        (self.base / "ospfd.conf").write_text(ospfd)
        common = ["-d", "-u", "frr", "-g", "frr", "--vty_socket", str(self.base), "-z", str(self.base / "zserv.api")]
        for d in DAEMONS:
            argv = [str(FRR_DIR / d), *common, "-f", str(self.base / f"{d}.conf"),
                    "-i", str(self.base / f"{d}.pid"), "--log", f"file:{self.base / (d + '.log')}"]
            p = run(argv, netns=self.netns, timeout=30, check=False)
            end = time.monotonic() + 10
            while self._pid(d) is None and time.monotonic() < end:
                time.sleep(0.1)
            if self._pid(d) is None:
                raise HarmlessError(f"frr {d} in {self.netns}", f"did not start ({(p.stderr or p.stdout).strip()[-200:]})",
                                    f"see {self.base / (d + '.log')}")

    def vtysh(self, cmd: str, timeout: float = 10) -> str:
        """Output of one vtysh command in the node's namespace ('' on failure).

        Raises:
            CommandError: it timed out after ``timeout`` s.
        """
        return run(["vtysh", "--vty_socket", str(self.base), "-c", cmd], netns=self.netns, timeout=timeout,
                   check=False).stdout

    def ospf_neighbors_full(self) -> int:
        """Number of OSPF neighbours in state Full."""
        try:
            data = json.loads(self.vtysh("show ip ospf neighbor json") or "{}")
        except (ValueError, HarmlessError):
            return 0
        n = 0
        for lst in data.get("neighbors", {}).values():
            for nb in lst:
                state = nb.get("nbrState") or nb.get("state", "")
                if state.startswith("Full"):
                    n += 1
        return n

    def pids(self) -> list[int]:
        return [p for p in (self._pid(d) for d in DAEMONS) if p is not None]

    def stop(self) -> None:
        """Stop ospfd and zebra (SIGTERM, then SIGKILL after 5 s). Idempotent."""
        stop_all([self])


def stop_all(instances: list[Frr], timeout: float = 5) -> None:
    """Stop the daemons of several nodes at once (zebra takes seconds to exit; waiting in parallel)."""
    pids = [p for f in instances for p in f.pids()]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    end = time.monotonic() + timeout
    while pids and time.monotonic() < end:
        pids = [p for p in pids if alive(p)]
        time.sleep(0.05)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


