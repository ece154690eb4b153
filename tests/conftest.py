"""Shared test helpers: skip reasons for root/OVS, an isolated HARMLESS state directory."""
from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from harmless.ovs import ovs_installed


def pytest_addoption(parser):
    parser.addoption("--reverse-order", action="store_true",
                     help="run the collected tests in reverse order (shows a test that depends on an earlier one)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--reverse-order"):
        items.reverse()


def require_root_ovs():
    """Skip unless running as root with Open vSwitch installed (CI installs both via packaging/install.sh)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, OVS daemons)")
    if not ovs_installed():
        pytest.skip("needs Open vSwitch (apt-get install openvswitch-switch; packaging/install.sh does)")
    if not shutil.which("ip"):
        pytest.skip("needs iproute2")


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    """A private HARMLESS_STATE_DIR for one test."""
    d = tmp_path / "state"
    monkeypatch.setenv("HARMLESS_STATE_DIR", str(d))
    return d


def wait_for(cond, timeout: float, what: str, interval: float = 0.2, detail=None):
    """Poll ``cond()`` every ``interval`` s until it returns something true (returned) or ``timeout`` s pass
    (AssertionError naming ``what``, the last value and ``detail()`` if given, e.g. a log's tail)."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        last = cond()
        if last:
            return last
        time.sleep(interval)
    more = f": {detail()}" if detail is not None else ""
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r}){more}")


def stays(cond, seconds: float, what: str, interval: float = 0.1):
    """Poll ``cond()`` every ``interval`` s for ``seconds`` s: it must stay true the whole window (the bounded check
    that "nothing changes"); AssertionError naming ``what`` and the value as soon as it turns false."""
    end = time.monotonic() + seconds
    while True:
        last = cond()
        if not last:
            raise AssertionError(f"{what} stopped holding after {seconds - (end - time.monotonic()):.1f} s "
                                 f"(got: {last!r})")
        if time.monotonic() >= end:
            return last
        time.sleep(interval)


def tcpdump(netns: str, *args: str, timeout: float = 20) -> subprocess.Popen:
    """``tcpdump ARGS`` in ``netns`` (text stdout piped), returned once it says it is listening (the capture is on:
    no frame sent afterwards is missed); AssertionError with its message if it exits or is not listening in
    ``timeout`` s."""
    p = subprocess.Popen(["ip", "netns", "exec", netns, "tcpdump", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    said = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = p.stderr.readline()            # tcpdump prints "listening on IFACE, ..." once its socket is open
        said.append(line)
        if line.startswith("listening on"):
            return p
        if not line and p.poll() is not None:
            break
    p.kill()
    raise AssertionError(f"tcpdump {' '.join(args)} in {netns} did not start listening: {''.join(said)!r}")
