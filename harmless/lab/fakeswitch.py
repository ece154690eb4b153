"""The lab's legacy switch: one emulated Cisco IOS switch (management plane) driving an OVS bridge
(data plane); with ``--vendor eos`` an emulated Arista EOS switch instead (:mod:`harmless.lab.eos_ext`).

Run as ``python -m harmless.lab.fakeswitch --hostname sw1 --listen-port 2201 --username admin
--password-file F [--startup-config F] [--ovs-db unix:SOCK --bridge br-legacy --port-map JSON]
[--sync-interval 0.3] [--platform 2960|3750] [--reject REGEX ...] [--drop-session-on REGEX ...]
[--minute-seconds S] [--log-file F] [--pid-file F] [--status-file F]``.

Management plane: fake-switches' ``cisco_2960_24TT_L`` (FastEthernet0/1-24, GigabitEthernet0/1-2) over
SSH on loopback, extended by :mod:`harmless.lab.ios_ext` so the real NAPALM ``ios`` driver can merge,
diff, commit, roll back and replace. The password comes from a file (never argv) and is filtered out of
every log line.

Data plane: every ``--sync-interval`` seconds :func:`desired_ovs_ports` maps the switch's in-memory
VLAN config onto the mapped OVS ports; when that changed since the last successful apply, the changed
ports are written in ONE ``ovs-vsctl --no-wait -- set Port ... -- set Port ...`` transaction
(argument list, no shell; run off the reactor thread so SSH never stalls).

Prints ``ready`` on stdout (and in the log) once SSH listens. Exit status 2 on bad arguments or a
rejected startup config. SIGTERM/SIGINT stop it cleanly (pid file removed).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

MODEL = "cisco_2960_24TT_L"
log = logging.getLogger("harmless.lab.fakeswitch")


# ----------------------------------------------------------------------------- data plane (pure)
def port_ovs_state(port) -> dict:
    """The OVS ``Port`` columns that reproduce one IOS switchport's 802.1Q behaviour.

    Args:
        port: a fake_switches ``Port`` (attributes ``mode``, ``access_vlan``, ``trunk_vlans``,
            ``trunk_native_vlan``).

    Returns:
        ``{"vlan_mode": str, "tag": int, "trunks": list[int]}``:
        access or no mode (IOS dynamic, which with a non-negotiating peer is access) → ``access``,
        tag = access VLAN (default 1); ``dot1q-tunnel`` → OVS ``dot1q-tunnel`` with ``qinq_ethtype`` ``802.1q``
        (Cisco's S-tag TPID is 0x8100); trunk →
        ``native-untagged`` with tag = native VLAN (default 1, untagged as on IOS) and
        trunks = allowed VLANs (``[]`` = all). An IOS ``allowed vlan none`` trunk becomes
        ``trunks=[native]`` (OVS cannot express "nothing"). ``shutdown`` is not mirrored.
    """
    if port.mode == "trunk":
        native = port.trunk_native_vlan or 1
        if port.trunk_vlans is None:
            trunks: list[int] = []
        else:
            trunks = sorted({v for v in port.trunk_vlans if 1 <= v <= 4094})
            if len(trunks) == 4094:
                trunks = []
            elif not trunks:
                trunks = [native]
        return {"vlan_mode": "native-untagged", "tag": native, "trunks": trunks}
    if port.mode == "dot1q-tunnel":    # Cisco dot1q-tunnel: the outer (S-)tag is 0x8100, not OVS's 802.1ad default
        return {"vlan_mode": "dot1q-tunnel", "tag": port.access_vlan or 1, "trunks": [], "qinq_ethtype": "802.1q"}
    return {"vlan_mode": "access", "tag": port.access_vlan or 1, "trunks": []}


def desired_ovs_ports(switch_configuration, port_map: dict[str, str]) -> dict[str, dict]:
    """Desired 802.1Q state of every mapped OVS port.

    Args:
        switch_configuration: fake_switches SwitchConfiguration of the emulated switch.
        port_map: ``{switch interface: OVS port}``, e.g. ``{"FastEthernet0/7": "fa0-7"}``.

    Returns:
        ``{ovs port: {"vlan_mode", "tag", "trunks"}}`` (see :func:`port_ovs_state`).

    Raises:
        KeyError: an interface of ``port_map`` does not exist on the switch.
    """
    out = {}
    for iface, ovs_port in port_map.items():
        port = switch_configuration.get_port(iface)
        if port is None:
            raise KeyError(f"switch has no interface {iface!r}")
        out[ovs_port] = port_ovs_state(port)
    return out


def vlan_limit(ports: dict[str, dict]) -> int:
    """``Open_vSwitch other_config:vlan-limit`` for the lab switch's OVS: 2 when a port is a QinQ customer port
    (``dot1q-tunnel``: OVS must parse the C-tag under the S-tag), else 1 — as on a real switch's access port, where
    only the outermost tag counts (OVS's default is 1 as well). Pure.

    Args:
        ports: ``{ovs port: state}`` as from :func:`desired_ovs_ports` (every port, not only changed ones).
    """
    return 2 if any(st.get("vlan_mode") == "dot1q-tunnel" for st in ports.values()) else 1


def vsctl_argv(db: str, changes: dict[str, dict], vsctl: str = "ovs-vsctl", limit: int | None = None) -> list[str]:
    """One ``ovs-vsctl`` transaction setting ``changes`` (``{ovs port: state}``) and, when ``limit`` is given,
    ``Open_vSwitch other_config:vlan-limit`` (see :func:`vlan_limit`); pure.

    Returns:
        e.g. ``["ovs-vsctl", "--db=unix:/x.sock", "--no-wait", "--timeout=5",
        "--", "set", "Port", "fa0-7", "vlan_mode=access", "tag=107", "trunks=[]"]``.
    """
    argv = [vsctl, f"--db={db}", "--no-wait", "--timeout=5"]
    for name in sorted(changes):
        st = changes[name]
        trunks = ",".join(str(v) for v in st["trunks"]) if st["trunks"] else "[]"
        argv += ["--", "set", "Port", name, f"vlan_mode={st['vlan_mode']}", f"tag={st['tag']}",
                 f"trunks={trunks}"]
        if "qinq_ethtype" in st:                          # dot1q-tunnel outer TPID (802.1q or 802.1ad)
            argv.append(f"other_config:qinq-ethtype={st['qinq_ethtype']}")
    if limit is not None:
        argv += ["--", "set", "Open_vSwitch", ".", f"other_config:vlan-limit={limit}"]
    return argv


class OvsSync:
    """Keeps the mapped OVS ports in line with the switch config (call :meth:`tick` periodically).

    Args:
        switch_configuration: the emulated switch's configuration.
        port_map: ``{switch interface: OVS port}``.
        db: OVSDB remote (``unix:/path/db.sock``).
        run: runs an argv and returns ``(returncode, stderr text)``; blocking (called off-reactor).
        on_change: called with the state dict after every successful apply or new error.
    """

    def __init__(self, switch_configuration, port_map: dict[str, str], db: str,
                 run: Callable[[list[str]], tuple[int, str]] | None = None,
                 on_change: Callable[[dict], None] | None = None):
        self.sc, self.port_map, self.db = switch_configuration, dict(port_map), db
        self.run = run or _run
        self.on_change = on_change or (lambda state: None)
        self.applied: dict[str, dict] = {}
        self.vlan_limit: int | None = None       # last vlan-limit written (None: not yet)
        self.error: str | None = None
        self.busy = False
        self.applies = 0

    def pending(self) -> dict[str, dict]:
        """Ports whose desired state differs from the last applied one."""
        desired = desired_ovs_ports(self.sc, self.port_map)
        return {p: s for p, s in desired.items() if self.applied.get(p) != s}

    def apply(self, changes: dict[str, dict]) -> bool:
        """Write ``changes`` in one transaction (blocking), with the vlan-limit the ports then need when it
        changes (:func:`vlan_limit`: 2 only while a dot1q-tunnel port exists). Returns True on success."""
        limit = vlan_limit({**self.applied, **changes})
        rc, err = self.run(vsctl_argv(self.db, changes, limit=None if limit == self.vlan_limit else limit))
        if rc == 0:
            self.vlan_limit = limit
            self.applied.update(changes)
            self.applies += 1
            self.error = None
            log.info("ovs: applied %s", json.dumps(changes, sort_keys=True))
            self.on_change(self.state())
            return True
        msg = (err.strip().splitlines() or [f"exit status {rc}"])[-1]
        if msg != self.error:
            log.error("ovs: ovs-vsctl failed (will retry): %s", msg)
            self.error = msg
            self.on_change(self.state())
        return False

    def tick(self):
        """Reactor callback: compute pending changes, apply them in a thread. Returns a Deferred or None."""
        if self.busy:
            return None
        changes = self.pending()
        if not changes:
            return None
        from twisted.internet import threads

        self.busy = True
        d = threads.deferToThread(self.apply, changes)

        def done(result):
            self.busy = False
            return result

        d.addBoth(done)
        d.addErrback(lambda f: log.error("ovs: sync failed: %s", f.getErrorMessage()))
        return d

    def poll_links(self) -> set[str]:
        """Read the mapped OVS interfaces' ``link_state`` (blocking); return the switch interfaces whose link is down.

        This is how "pulling a cable" in the lab (``ip link set <veth> down`` in the switch's namespace) reaches the
        emulated device's ``show interfaces`` (line protocol down), hence NAPALM ``get_interfaces``.
        """
        rc, out = self.run_out(["ovs-vsctl", f"--db={self.db}", "--timeout=5", "--format=json", "--columns=name,"
                                "link_state", "list", "Interface"])
        if rc != 0:
            return set()
        by_ovs = {v: k for k, v in self.port_map.items()}
        down = set()
        for name, link in json.loads(out)["data"]:
            if name in by_ovs and link != "up":
                down.add(by_ovs[name])
        return down

    def run_out(self, argv: list[str]) -> tuple[int, str]:
        try:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return 1, str(exc)
        return res.returncode, res.stdout

    def state(self) -> dict:
        """JSON-able summary: applied port states, last error, number of transactions."""
        return {"applied": self.applied, "error": self.error, "applies": self.applies}


def _run(argv: list[str]) -> tuple[int, str]:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=15, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 1, str(exc)
    return res.returncode, res.stderr


# ----------------------------------------------------------------------------- process
class _Redact(logging.Filter):
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


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m harmless.lab.fakeswitch``."""
    p = argparse.ArgumentParser(prog="python -m harmless.lab.fakeswitch",
                                description="One emulated Cisco IOS switch (SSH on loopback) or Arista EOS switch "
                                            "(eAPI over HTTP on loopback) driving an OVS bridge.")
    p.add_argument("--vendor", choices=("ios", "eos"), default="ios",
                   help="ios: Cisco 2960 over SSH (NAPALM ios); eos: Arista over eAPI/HTTP (NAPALM eos, "
                        "transport http), see harmless.lab.eos_ext")
    p.add_argument("--hostname", default="sw1")
    p.add_argument("--listen-host", default="127.0.0.1")
    p.add_argument("--listen-port", type=int, required=True)
    p.add_argument("--username", default="admin")
    p.add_argument("--password-file", required=True, type=Path,
                   help="file holding the SSH password (also the enable secret); first line is used")
    p.add_argument("--startup-config", type=Path, help="IOS config applied at start through the config processor")
    p.add_argument("--ovs-db", help="OVSDB remote of the lab data plane, e.g. unix:/run/lab/db.sock")
    p.add_argument("--bridge", default="br-legacy", help="OVS bridge holding the mapped ports (checked at start)")
    p.add_argument("--port-map", default="{}", help='JSON {"FastEthernet0/7": "fa0-7", ...}')
    p.add_argument("--sync-interval", type=float, default=0.3)
    p.add_argument("--reject", action="append", default=[], metavar="REGEX",
                   help="test-only fault injection: reject config lines matching REGEX (repeatable)")
    p.add_argument("--drop-after", metavar="REGEX",
                   help="test-only fault injection (eos): drop the reply to the first request that ran a "
                        "command matching REGEX (a session lost mid-commit)")
    p.add_argument("--platform", choices=("2960", "3750"), default="2960",
                   help="Catalyst behaviour: 2960 = dot1q-only (no 'switchport trunk encapsulation'); "
                        "3750 = ISL-capable (trunks need 'switchport trunk encapsulation dot1q' first)")
    p.add_argument("--session-port", metavar="INTERFACE",
                   help="ios: show users / show ip arp / show mac address-table say the management session arrives "
                        "on INTERFACE (a management station behind it)")
    p.add_argument("--drop-session-on", action="append", default=[], metavar="REGEX",
                   help="test-only fault injection: run an exec command matching REGEX silently, then close "
                        "the SSH session (a session lost mid-commit)")
    p.add_argument("--fault-file", metavar="FILE",
                   help="test-only runtime fault injection (ios): JSON {reject: [REGEX], drop: [REGEX], "
                        "slow: {REGEX: seconds}}, re-read whenever it changes")
    p.add_argument("--minute-seconds", type=float, default=60.0,
                   help="test-only time scale: how many seconds one minute of the archive revert timer lasts")
    p.add_argument("--log-file", type=Path)
    p.add_argument("--pid-file", type=Path)
    p.add_argument("--status-file", type=Path, help="JSON status (listening port, OVS sync state)")
    p.add_argument("-v", "--verbose", action="store_true", help="INFO logging of fake-switches too")
    return p


def _write_json(path: Path | None, data: dict) -> None:
    if path is None:
        return
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    """Run the switch until SIGTERM/SIGINT. Returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        password = args.password_file.read_text().splitlines()[0]
    except (OSError, IndexError):
        print(f"fakeswitch: cannot read a password from {args.password_file}", file=sys.stderr)
        return 2
    if not password:
        print(f"fakeswitch: {args.password_file}: empty password", file=sys.stderr)
        return 2
    try:
        port_map = json.loads(args.port_map)
        assert isinstance(port_map, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in port_map.items())
    except (ValueError, AssertionError):
        print("fakeswitch: --port-map must be a JSON object {interface: ovs port}", file=sys.stderr)
        return 2

    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_Redact(password))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    # fake-switches logs every received line at DEBUG (the enable secret included): never below INFO,
    # and WARNING unless -v.
    logging.getLogger("fake_switches").setLevel(logging.INFO if args.verbose else logging.WARNING)
    if args.vendor == "eos":
        from harmless.lab import eos_ext

        return eos_ext.serve(args, password, port_map)

    from fake_switches import switch_factory
    from fake_switches.command_processing.piping_processor_base import NotPipingProcessor
    from fake_switches.terminal import NoopTerminalController
    from fake_switches.transports.ssh_service import SwitchSshService
    from twisted.internet import reactor, task
    from twisted.internet.error import CannotListenError

    from harmless.lab import ios_ext

    ios_ext.install()
    core = switch_factory.SwitchFactory().get(MODEL, args.hostname, password)  # enable secret: str
    sc = core.switch_configuration
    ios_ext.set_platform(sc, args.platform)
    ios_ext.set_session_port(sc, args.session_port)
    sc._archive_user = args.username             # who owns a commit-confirm (show archive config rollback timer)
    sc._new_processor = core.new_command_processor
    unknown = [i for i in port_map if sc.get_port(i) is None]
    if unknown:
        log.error("--port-map names interfaces the %s does not have: %s", MODEL, ", ".join(unknown))
        return 2
    if args.startup_config:
        proc = core.new_command_processor()
        quiet = logging.getLogger("harmless.lab.fakeswitch.startup")
        quiet.setLevel(logging.WARNING)
        proc.init(sc, NoopTerminalController(), quiet, NotPipingProcessor())
        bad = ios_ext.apply_config_text(proc, args.startup_config.read_text())
        if bad:
            log.error("startup config %s: rejected lines: %s", args.startup_config, bad)
            return 2
        log.info("startup config %s applied", args.startup_config)
    ios_ext.set_reject_patterns(args.reject)
    ios_ext.set_drop_patterns(args.drop_session_on)
    ios_ext.set_minute_seconds(args.minute_seconds)
    ios_ext.set_fault_file(args.fault_file)
    if args.drop_session_on:
        log.info("fault injection: dropping the SSH session after exec commands matching %s", args.drop_session_on)
    if args.reject:
        log.info("fault injection: rejecting config lines matching %s", args.reject)

    status = {"hostname": args.hostname, "model": MODEL, "platform": args.platform, "listen_host": args.listen_host,
              "listen_port": args.listen_port, "pid": os.getpid(), "ovs": None}
    sync = None
    if args.ovs_db and port_map:
        def on_change(state):
            status["ovs"] = state
            _write_json(args.status_file, status)

        sync = OvsSync(sc, port_map, args.ovs_db, on_change=on_change)
        rc, out = _list_ports(args.ovs_db, args.bridge)
        missing = sorted(set(port_map.values()) - set(out.split())) if rc == 0 else []
        if rc != 0 or missing:
            log.warning("ovs: bridge %s: %s", args.bridge,
                        f"missing ports {missing}" if rc == 0 else f"cannot list ports ({out.strip()})")

    try:
        SwitchSshService(args.listen_host, port=args.listen_port, switch_core=core,
                         users={args.username: password.encode()}).hook_to_reactor(reactor)
    except CannotListenError as exc:
        log.error("cannot listen on %s:%s (%s)", args.listen_host, args.listen_port, exc.socketError)
        return 1
    if sync is not None:
        task.LoopingCall(sync.tick).start(args.sync_interval, now=True)

        def links():
            from twisted.internet import threads
            d = threads.deferToThread(sync.poll_links)
            d.addCallback(ios_ext.set_oper_down)
            d.addErrback(lambda f: log.error("ovs: link poll failed: %s", f.getErrorMessage()))
            return d
        task.LoopingCall(links).start(1.0, now=True)
    return serve(reactor, args, status, f"listening on {args.listen_host}:{args.listen_port}")


def serve(reactor, args, status: dict, where: str) -> int:
    """Write the pid and status files, print ``ready``, run the Twisted reactor until stopped, remove the pid file.

    Shared by every emulated vendor (IOS here, EOS in :mod:`harmless.lab.eos_ext`). Returns the exit status 0.
    """
    if args.pid_file:
        args.pid_file.write_text(f"{os.getpid()}\n")
    _write_json(args.status_file, status)
    log.info("ready: %s (%s) %s", args.hostname, status.get("model", ""), where)
    print("ready", flush=True)
    try:
        reactor.run()
    finally:
        if args.pid_file:
            args.pid_file.unlink(missing_ok=True)
    return 0


def _list_ports(db: str, bridge: str) -> tuple[int, str]:
    try:
        res = subprocess.run(["ovs-vsctl", f"--db={db}", "--timeout=5", "list-ports", bridge],
                             capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 1, str(exc)
    return res.returncode, res.stdout if res.returncode == 0 else res.stderr


if __name__ == "__main__":
    sys.exit(main())
