"""Open vSwitch lifecycle and the thin, argument-list wrappers around its tools.

One :class:`Ovs` is one ``ovsdb-server`` + ``ovs-vswitchd`` pair: either the system's (``/var/run/openvswitch``)
or a private one that HARMLESS starts itself in ``base_dir`` (run/db/log folders, as in
``shared/notes/ovs-dpdk-on-this-machine.md`` §2), optionally inside a network namespace (the lab's legacy switch
runs its own OVS in its own namespace: two userspace datapaths cannot share one namespace because both want the
``ovs-netdev`` tap).

Datapaths: ``netdev`` (userspace, the default here: no kernel module) with the plain ``ovs-vswitchd``, or ``dpdk``
(still ``datapath_type=netdev`` bridges) with Debian's ``ovs-vswitchd-dpdk`` binary, hugepages or ``--no-huge``.

All commands are run with argument lists (no shell); failures raise :class:`harmless.errors.OvsError`.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from harmless.errors import OvsError
from harmless import procs
from harmless.procs import alive, wait_gone

SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
VSWITCHD_PLAIN = Path("/usr/lib/openvswitch-switch/ovs-vswitchd")
VSWITCHD_DPDK = Path("/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk")
SYSTEM_RUNDIR = Path("/var/run/openvswitch")


def ovs_installed() -> bool:
    """True when the OVS user-space tools and a vswitchd binary are present."""
    return all(shutil.which(t) for t in ("ovsdb-server", "ovs-vsctl", "ovs-ofctl", "ovs-appctl")) and (
        VSWITCHD_PLAIN.exists() or shutil.which("ovs-vswitchd") is not None)


def _run(argv: list[str], env: dict | None = None, stdin: str | None = None, timeout: float = 30,
         check: bool = True) -> subprocess.CompletedProcess:
    """An OVS tool through :func:`harmless.procs.run`; failures are :class:`OvsError`."""
    return procs.run(argv, env=env, stdin=stdin, timeout=timeout, check=check, error=OvsError,
                     fix="check that ovs-vswitchd runs (harmless status) and see the OVS logs")


def transaction_args(cmds: list[list[str]]) -> list[str]:
    """``ovs-vsctl`` arguments running ``cmds`` in one transaction: the commands joined by ``--`` (ovs-vsctl(8):
    ``ovs-vsctl [options] -- [options] command [args] [-- [options] command [args]]...``). Pure.

    Example: ``[["add-br", "b"], ["set", "Bridge", "b", "fail_mode=secure"]]`` ->
    ``["add-br", "b", "--", "set", "Bridge", "b", "fail_mode=secure"]``.
    """
    out: list[str] = []
    for c in cmds:
        out += (["--"] if out else []) + list(c)
    return out


@dataclass(frozen=True)
class DpdkOptions:
    """How to initialise DPDK inside ovs-vswitchd (shared/notes/ovs-dpdk-on-this-machine.md §4.1).

    Attributes:
        hugepages: use 2 MiB hugepages from a private hugetlbfs mount; False = ``--no-huge -m 2048 --legacy-mem``.
        socket_mem_mb: DPDK socket memory in MiB (hugepage mode).
        lcore_mask: CPU mask of the DPDK main lcore (OVS main/handler threads).
        pmd_cpu_mask: CPU mask of the poll-mode-driver threads.
    """

    hugepages: bool = True
    socket_mem_mb: int = 1024
    lcore_mask: str = "0x1"
    pmd_cpu_mask: str = "0x2"


@dataclass
class Ovs:
    """One OVS instance (database + switch daemon).

    Args:
        base_dir: private folder (run/, db/, log/, etc/) or None for the system's OVS.
        netns: network namespace the private daemons run in (None = the caller's).
        dpdk: DPDK options, None for the plain userspace datapath.
    """

    base_dir: Path | None = None
    netns: str | None = None
    dpdk: DpdkOptions | None = None
    _env: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self):
        env = dict(os.environ)
        if self.base_dir is not None:
            self.base_dir = Path(self.base_dir)
            env.update(OVS_RUNDIR=str(self.rundir), OVS_DBDIR=str(self.base_dir / "db"),
                       OVS_LOGDIR=str(self.base_dir / "log"), OVS_SYSCONFDIR=str(self.base_dir / "etc"))
        self._env = env

    # ------------------------------------------------------------------ paths
    @property
    def private(self) -> bool:
        return self.base_dir is not None

    @property
    def rundir(self) -> Path:
        return self.base_dir / "run" if self.base_dir is not None else SYSTEM_RUNDIR

    @property
    def db(self) -> str:
        """OVSDB remote, ``unix:<rundir>/db.sock``."""
        return f"unix:{self.rundir / 'db.sock'}"

    @property
    def logdir(self) -> Path:
        return self.base_dir / "log" if self.base_dir is not None else Path("/var/log/openvswitch")

    @property
    def vswitchd_log(self) -> Path:
        """ovs-vswitchd's log file: ``<base_dir>/log/ovs-vswitchd.log``, or the Debian package's
        ``/var/log/openvswitch/ovs-vswitchd.log`` for the system instance (``ovs-ctl --log-file``)."""
        return self.logdir / "ovs-vswitchd.log"

    def vswitchd_pid(self) -> int | None:
        """The running ovs-vswitchd's process id, or None."""
        return self._pid("ovs-vswitchd")

    def _pid(self, daemon: str) -> int | None:
        try:
            pid = int((self.rundir / f"{daemon}.pid").read_text().strip())
            return pid if alive(pid) else None
        except (OSError, ValueError):
            return None

    def ovsdb_running(self) -> bool:
        return self._pid("ovsdb-server") is not None and (self.rundir / "db.sock").exists()

    def vswitchd_running(self) -> bool:
        return self._pid("ovs-vswitchd") is not None

    # ------------------------------------------------------------------ tools
    def vsctl(self, *args: str, timeout: float = 30, wait: bool = True) -> str:
        """Run one ``ovs-vsctl`` transaction (several commands separated by ``--``); return stdout."""
        argv = ["ovs-vsctl", f"--db={self.db}", f"--timeout={int(timeout)}"]
        if not wait:
            argv.append("--no-wait")
        return _run(argv + list(args), env=self._env, timeout=timeout + 5).stdout

    def transact(self, cmds: list[list[str]], timeout: float = 60) -> str:
        """Run ``cmds`` (one ``ovs-vsctl`` command each, e.g. ``["--may-exist", "add-br", "br0"]``) as one OVSDB
        transaction: one ``ovs-vsctl`` call, commands separated by ``--`` (:func:`transaction_args`), all or nothing.

        An empty list runs nothing and returns ``""``.

        Returns:
            ovs-vsctl's standard output (one line per command that prints something, e.g. a created row's UUID).

        Raises:
            OvsError: ovs-vsctl failed or timed out (``timeout`` seconds); nothing of the transaction is applied.
        """
        if not cmds:
            return ""
        return self.vsctl(*transaction_args(cmds), timeout=timeout)

    def vsctl_json(self, table: str, *records: str, columns: list[str] | None = None) -> list[dict]:
        """``ovs-vsctl --format=json list TABLE [records]`` as a list of ``{column: python value}`` rows."""
        args = ["--format=json", "--data=json"]
        if columns:
            args.append("--columns=" + ",".join(columns))
        out = json.loads(self.vsctl(*args, "list", table, *records))
        return [{h: _ovsdb_value(v) for h, v in zip(out["headings"], row)} for row in out["data"]]

    def ofctl(self, *args: str, stdin: str | None = None, timeout: float = 30) -> str:
        """Run ``ovs-ofctl`` (bridges are found through this instance's run folder)."""
        return _run(["ovs-ofctl", *args], env=self._env, stdin=stdin, timeout=timeout).stdout

    def appctl(self, *args: str, target: str = "ovs-vswitchd", timeout: float = 30) -> str:
        """Run ``ovs-appctl -t <target>`` against this instance's daemon."""
        t = target
        pid = self._pid(target)
        if pid is not None:
            t = str(self.rundir / f"{target}.{pid}.ctl")
        return _run(["ovs-appctl", "-t", t, *args], env=self._env, timeout=timeout).stdout

    # ------------------------------------------------------------------ lifecycle
    def _ns(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.netns, *argv] if self.netns else argv

    def start(self) -> None:
        """Start whatever part of a private instance is not running (idempotent).

        Raises:
            OvsError: on the system instance (HARMLESS does not start it), a missing binary, or a daemon
                that did not come up (the log file is named).
        """
        if not self.private:
            if not self.ovsdb_running():
                raise OvsError("ovs", "the system Open vSwitch is not running",
                               "start it (service openvswitch-switch start) or use server.ovs: private")
            return
        for d in ("run", "db", "log", "etc/openvswitch", "bin"):
            (self.base_dir / d).mkdir(parents=True, exist_ok=True)
        dbfile = self.base_dir / "db" / "conf.db"
        if not self.ovsdb_running():
            if not dbfile.exists():
                _run(["ovsdb-tool", "create", str(dbfile), str(SCHEMA)])
            _run(self._ns(["ovsdb-server", str(dbfile), f"--remote=punix:{self.rundir / 'db.sock'}",
                           "--remote=db:Open_vSwitch,Open_vSwitch,manager_options",
                           f"--pidfile={self.rundir / 'ovsdb-server.pid'}", "--detach",
                           f"--log-file={self.logdir / 'ovsdb-server.log'}"]), env=self._env)
            self.vsctl("init", wait=False)
        if not self.vswitchd_running():
            binary = self._configure_dpdk()
            _run(self._ns([str(binary), self.db, f"--pidfile={self.rundir / 'ovs-vswitchd.pid'}", "--detach",
                           f"--log-file={self.logdir / 'ovs-vswitchd.log'}"]), env=self._env, timeout=120)
            if not self.vswitchd_running():
                raise OvsError("ovs-vswitchd", "did not start", f"see {self.logdir / 'ovs-vswitchd.log'}")

    def datapath_conflict(self) -> bool:
        """True when this vswitchd could not open its userspace datapath because another OVS with a ``netdev``
        datapath owns the ``ovs-netdev`` tap of the same network namespace (two cannot share one namespace)."""
        log = self.logdir / "ovs-vswitchd.log"
        try:
            text = log.read_text()
            text = text[text.rfind("opened log file"):]          # only since this daemon's last start
            return "ovs-netdev: creating tap device failed: Device or resource busy" in text
        except OSError:
            return False

    def _configure_dpdk(self) -> Path:
        """Write DPDK settings into Open_vSwitch.other_config; return the vswitchd binary to run."""
        if self.dpdk is None:
            self.vsctl("set", "Open_vSwitch", ".", "other_config:dpdk-init=false", wait=False)
            return VSWITCHD_PLAIN if VSWITCHD_PLAIN.exists() else Path(shutil.which("ovs-vswitchd"))
        if not VSWITCHD_DPDK.exists():
            raise OvsError("server.datapath", "dpdk selected but the OVS-DPDK binary is missing",
                           "apt-get install openvswitch-switch-dpdk (packaging/install.sh does)")
        d = self.dpdk
        prefix = f"hl{os.getpid()}"
        common = [f"other_config:dpdk-lcore-mask={d.lcore_mask}", f"other_config:pmd-cpu-mask={d.pmd_cpu_mask}",
                  "other_config:dpdk-init=true"]
        if d.hugepages:
            huge = self.base_dir / "huge"
            huge.mkdir(exist_ok=True)
            if procs.run(["mountpoint", "-q", str(huge)], check=False).returncode != 0:
                _run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", str(huge)])
            need = d.socket_mem_mb // 2
            nr = int(Path("/proc/sys/vm/nr_hugepages").read_text())
            free = int(next(ln.split()[1] for ln in Path("/proc/meminfo").read_text().splitlines()
                            if ln.startswith("HugePages_Free")))
            if free < need:
                Path("/proc/sys/vm/nr_hugepages").write_text(str(nr + need - free))
            self.vsctl("set", "Open_vSwitch", ".", *common,
                       f"other_config:dpdk-socket-mem={d.socket_mem_mb}",
                       f"other_config:dpdk-socket-limit={d.socket_mem_mb}",
                       f"other_config:dpdk-hugepage-dir={huge}",
                       f"other_config:dpdk-extra=--file-prefix={prefix} --no-pci", wait=False)
        else:
            self.vsctl("set", "Open_vSwitch", ".", *common,
                       f"other_config:dpdk-extra=--file-prefix={prefix} --no-pci --no-huge -m 2048 --legacy-mem",
                       wait=False)
            self.vsctl("remove", "Open_vSwitch", ".", "other_config", "dpdk-socket-mem", "dpdk-socket-limit",
                       "dpdk-hugepage-dir", wait=False)
        # The control socket is named after argv[0]: run the DPDK binary through a link called ovs-vswitchd.
        link = self.base_dir / "bin" / "ovs-vswitchd"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(VSWITCHD_DPDK)
        return link

    def stop_vswitchd(self, cleanup: bool = True) -> None:
        """Stop ovs-vswitchd (``exit --cleanup`` also removes the datapath and its taps)."""
        pid = self._pid("ovs-vswitchd")
        if pid is None:
            return
        try:
            self.appctl("exit", *(["--cleanup"] if cleanup else []), timeout=20)
        except OvsError:
            os.kill(pid, signal.SIGTERM)
        wait_gone(pid)

    def stop(self) -> None:
        """Stop a private instance completely: bridges, vswitchd, ovsdb-server, hugetlbfs mount. Idempotent."""
        if not self.private:
            raise OvsError("ovs", "refusing to stop the system Open vSwitch", "")
        prefix = None
        if self.ovsdb_running():
            extra = self.vsctl("--if-exists", "get", "Open_vSwitch", ".", "other_config:dpdk-extra", timeout=10)
            m = re.search(r"--file-prefix=(\S+)", extra)
            prefix = m.group(1).strip('"') if m else None
        if self.ovsdb_running() and self.vswitchd_running():
            for br in self.vsctl("list-br", timeout=10).split():
                self.vsctl("--if-exists", "del-br", br, timeout=20)
        self.stop_vswitchd()
        if prefix:   # DPDK's runtime folder (OVS runs DPDK --in-memory, but EAL still creates it)
            shutil.rmtree(Path("/var/run/dpdk") / prefix, ignore_errors=True)
        pid = self._pid("ovsdb-server")
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            wait_gone(pid)
        huge = self.base_dir / "huge"
        if huge.exists() and procs.run(["mountpoint", "-q", str(huge)], check=False).returncode == 0:
            procs.run(["umount", str(huge)], check=False)


def _ovsdb_value(v):
    """OVSDB JSON datum -> Python: ["set", [...]] -> list, ["map", [[k, v]...]] -> dict, ["uuid", u] -> u."""
    if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str):
        kind, val = v
        if kind == "set":
            return [_ovsdb_value(x) for x in val]
        if kind == "map":
            return {_ovsdb_value(k): _ovsdb_value(x) for k, x in val}
        if kind in ("uuid", "named-uuid"):
            return val
    return v


def system_ovs() -> Ovs | None:
    """The system's running OVS (``/var/run/openvswitch/db.sock`` answering), or None."""
    o = Ovs(None)
    if not (SYSTEM_RUNDIR / "db.sock").exists():
        return None
    try:
        o.vsctl("show", timeout=3)
    except OvsError:
        return None
    return o


def open_ovs(mode: str, base_dir: Path, dpdk: DpdkOptions | None = None, start: bool = True,
             netns: str | None = None) -> Ovs:
    """The OVS instance HARMLESS uses for the server side.

    Args:
        mode: ``auto`` (the system's when one runs, else private), ``system`` or ``private``.
        base_dir: folder of the private instance.
        dpdk: DPDK options for a private instance (None = plain userspace datapath).
        netns: network namespace of a private instance (None = the caller's); with a namespace the system OVS
            is never used.
        start: start the private daemons when they are not running.

    Raises:
        OvsError: ``system`` requested but none runs; a daemon failed to start.
    """
    if mode in ("auto", "system") and not (mode == "auto" and netns):
        sys_ovs = system_ovs()
        if sys_ovs is not None:
            return sys_ovs
        if mode == "system":
            raise OvsError("server.ovs", "no system Open vSwitch is running",
                           "start it, or set server.ovs: private (HARMLESS then runs its own)")
    o = Ovs(base_dir, netns=netns, dpdk=dpdk)
    if start:
        o.start()
    return o
