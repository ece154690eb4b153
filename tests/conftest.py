"""Shared test helpers: skip reasons for root/OVS, an isolated HARMLESS state directory."""
from __future__ import annotations

import os
import shutil
import time

import pytest

from harmless.ovs import ovs_installed


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


def wait_for(cond, timeout: float, what: str, interval: float = 0.2):
    """Poll ``cond()`` every ``interval`` s until it returns something true (returned) or ``timeout`` s pass
    (AssertionError naming ``what`` and the last value)."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        last = cond()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")
