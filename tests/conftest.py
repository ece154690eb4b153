"""Shared test helpers: skip reasons for root/OVS, an isolated HARMLESS state directory."""
from __future__ import annotations

import os
import shutil

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
