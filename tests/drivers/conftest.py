"""Fixtures for driver tests against the lab's emulated Cisco IOS switch.

``start_fakeswitch(tmp_dir, ...)`` runs ``python -m harmless.emulators.fakeswitch`` as a subprocess on a free
loopback port (log to a file, never an unread PIPE: a full pipe would block the Twisted reactor), waits
until SSH listens and returns a :class:`FakeSwitch`; ``stop()`` kills it by pid. Module-scoped fixtures
reuse one process per test module because NAPALM's inline transfer costs ~7 s per candidate load.
"""
from __future__ import annotations

import contextlib
import importlib.util
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harmless.procs import free_port
from harmless.errors import CommitError
from tests.conftest import wait_for

PASSWORD = "Lab-Pw-7f3a9c"          # test-only; asserted never to show up in errors or logs
USERNAME = "admin"
LAB_ARGS = {"inline_transfer": True, "dest_file_system": "flash:"}
STARTUP_CONFIG = """\
vtp mode transparent
vlan 100
 name users
!
vlan 101
 name printers
!
interface FastEthernet0/7
 switchport access vlan 100
 switchport mode access
!
interface FastEthernet0/8
 switchport access vlan 100
 switchport mode access
!
interface FastEthernet0/9
 switchport access vlan 101
!
interface FastEthernet0/12
 shutdown
!
end
"""


def _require_fake_switches():
    if importlib.util.find_spec("fake_switches") is None:
        pytest.skip("fake_switches is not installed (pip install --no-deps fake-switches==1.5.0 "
                    "'Twisted[conch]>=24'); the lab switch cannot run")


@dataclass
class FakeSwitch:
    """A running lab switch process."""

    port: int
    proc: subprocess.Popen
    dir: Path
    log_path: Path
    extra: dict = field(default_factory=dict)
    host: str = "127.0.0.1"
    username: str = USERNAME
    password: str = PASSWORD

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def driver(self, **kw):
        from harmless.switch_drivers.ios.driver import IosDriver
        args = dict(LAB_ARGS)
        args.update(kw.pop("optional_args", {}))
        return IosDriver(self.host, kw.pop("port", self.port), kw.pop("username", self.username),
                         kw.pop("password", self.password), optional_args=args, timeout=kw.pop("timeout", 30))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def start_fakeswitch(tmp_dir: Path, *extra_args: str, startup_config: str | None = STARTUP_CONFIG,
                     hostname: str = "sw1", timeout: float = 20.0) -> FakeSwitch:
    """Start one lab switch in ``tmp_dir``; raise RuntimeError (with the log) if it does not come up."""
    _require_fake_switches()
    tmp_dir.mkdir(parents=True, exist_ok=True)
    pw = tmp_dir / "password"
    pw.write_text(PASSWORD + "\n")
    pw.chmod(0o600)
    args = [sys.executable, "-m", "harmless.emulators.fakeswitch", "--hostname", hostname,
            "--username", USERNAME, "--password-file", str(pw), "--log-file", str(tmp_dir / "fakeswitch.log"),
            "--pid-file", str(tmp_dir / "fakeswitch.pid"), "--status-file", str(tmp_dir / "status.json")]
    if startup_config is not None:
        (tmp_dir / "startup.cfg").write_text(startup_config)
        args += ["--startup-config", str(tmp_dir / "startup.cfg")]
    last_err = ""
    for _ in range(3):                       # a free port can be taken between probe and bind: retry
        port = free_port()
        out = open(tmp_dir / "stdout.txt", "w")
        proc = subprocess.Popen([*args, "--listen-port", str(port), *extra_args], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=str(Path(__file__).resolve().parents[2]))
        out.close()
        sw = FakeSwitch(port=port, proc=proc, dir=tmp_dir, log_path=tmp_dir / "fakeswitch.log")
        if serving(proc, port, timeout):
            return sw
        sw.stop()
        last_err = sw.log() + (tmp_dir / "stdout.txt").read_text()
    raise RuntimeError(f"lab switch did not start:\n{last_err}")


def serving(proc: subprocess.Popen, port: int, timeout: float) -> bool:
    """Wait until ``proc`` accepts TCP connections on 127.0.0.1:``port`` (True), exits or ``timeout`` s pass."""
    def listens() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            return False
    with contextlib.suppress(AssertionError):
        wait_for(lambda: proc.poll() is not None or listens(), timeout, f"a listener on port {port}", 0.05)
    return proc.poll() is None and listens()


def serve(sw: FakeSwitch) -> Iterator[FakeSwitch]:
    """Fixture body: yield the started switch ``sw``, stop it at teardown (also when the test fails)."""
    try:
        yield sw
    finally:
        sw.stop()


def _switch_factory(new_dir: Callable[[int], Path]) -> Iterator[Callable[..., FakeSwitch]]:
    """Fixture body: yield ``start(*extra_args, **kw)`` (see :func:`start_fakeswitch`; the n-th switch runs in
    ``new_dir(n)``); every switch it started is stopped at teardown, also when the test fails."""
    started: list[FakeSwitch] = []

    def start(*extra_args: str, **kw) -> FakeSwitch:
        sw = start_fakeswitch(new_dir(len(started)), *extra_args, **kw)
        started.append(sw)
        return sw

    try:
        yield start
    finally:
        for sw in started:
            sw.stop()


def raw_running(drv) -> str:
    """``show running-config`` exactly as an IOS device prints it (header and byte count included)."""
    return drv._device.cli(["show running-config"])["show running-config"]


def refused_apply(drv, access, trunks) -> str:
    """Render and apply a config the device refuses; assert ``apply`` raised CommitError saying the original is back
    (verified) and the running config equals the one before. Returns the error text for vendor-specific checks."""
    drv.facts()
    before = drv.running_config()
    with pytest.raises(CommitError) as exc:
        drv.apply(drv.render(access, trunks))
    assert "original running config is back (verified)" in str(exc.value)
    assert drv.running_config() == before
    return str(exc.value)


@pytest.fixture(scope="module")
def module_switch(tmp_path_factory):
    """One lab switch (startup config: VLANs 100/101, Fa0/7-8 access 100, Fa0/9 vlan 101, Fa0/12 shut) per module."""
    yield from serve(start_fakeswitch(tmp_path_factory.mktemp("fakeswitch")))


@pytest.fixture
def rejecting_switch(tmp_path):
    """A lab switch of its own for one test, rejecting ``spanning-tree bpduguard ...`` lines (fault injection)."""
    yield from serve(start_fakeswitch(tmp_path / "fakeswitch-reject", "--reject", r"^spanning-tree bpduguard"))


@pytest.fixture
def lab_password() -> str:
    """The lab switch's password (test-only), for asserting it never leaks."""
    return PASSWORD


@pytest.fixture
def unused_port() -> int:
    """A loopback TCP port nothing listens on."""
    return free_port()


@pytest.fixture
def start_switch(tmp_path):
    """Factory: ``start_switch(*extra_args, **kw)`` starts a lab switch (see :func:`start_fakeswitch`);
    every switch it started is stopped at teardown, also when the test fails."""
    yield from _switch_factory(lambda n: tmp_path / f"sw{n}")


@pytest.fixture(scope="module")
def module_switches(tmp_path_factory):
    """Module-scoped factory: ``module_switches(*extra_args, **kw)`` starts a lab switch (see
    :func:`start_fakeswitch`) shared by the module's tests; all are stopped at module teardown."""
    yield from _switch_factory(lambda n: tmp_path_factory.mktemp(f"hl-i-sw{n}"))
