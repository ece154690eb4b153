"""Lab data plane: the emulated switch's VLAN config is mirrored onto OVS ports.

A bare ``ovsdb-server`` with a fresh database stands in for the lab OVS (no ovs-vswitchd, so every
``ovs-vsctl`` uses ``--no-wait``); the switch is configured through the real IosDriver.
"""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from harmless.switch_drivers.base import AccessPortChange, TrunkChange
from tests.conftest import wait_for

SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
PORT_MAP = {"FastEthernet0/7": "fa0-7", "FastEthernet0/10": "fa0-10", "GigabitEthernet0/1": "gi0-1"}

pytestmark = [pytest.mark.root, pytest.mark.ovs]


def _need_ovs():
    if os.geteuid() != 0:
        pytest.skip("needs root (the lab runs OVS as root)")
    missing = [b for b in ("ovsdb-server", "ovsdb-tool", "ovs-vsctl") if shutil.which(b) is None]
    if missing or not SCHEMA.exists():
        pytest.skip(f"needs Open vSwitch ({', '.join(missing) or SCHEMA} missing; apt-get install openvswitch-switch)")


def _vsctl(db, *args):
    return subprocess.run(["ovs-vsctl", f"--db={db}", "--no-wait", "--timeout=5", *args],
                          capture_output=True, text=True, check=True, timeout=15).stdout.strip()


@pytest.fixture(scope="module")
def ovsdb():
    """A private ovsdb-server (unique temp dir, killed by pid) with br-legacy and the mapped ports."""
    _need_ovs()
    d = Path(tempfile.mkdtemp(prefix="hl-ovsdb-"))
    sock, pidfile = d / "db.sock", d / "ovsdb-server.pid"
    pid = None
    try:
        subprocess.run(["ovsdb-tool", "create", str(d / "conf.db"), str(SCHEMA)], check=True, timeout=15)
        subprocess.run(["ovsdb-server", str(d / "conf.db"), f"--remote=punix:{sock}", f"--pidfile={pidfile}",
                        f"--unixctl={d / 'ovsdb-server.ctl'}", f"--log-file={d / 'ovsdb-server.log'}",
                        "--detach"], check=True, timeout=15)
        pid = int(pidfile.read_text())
        db = f"unix:{sock}"
        _vsctl(db, "init")
        add = ["add-br", "br-legacy"]
        for p in PORT_MAP.values():
            add += ["--", "add-port", "br-legacy", p]
        _vsctl(db, *add)
        yield db
    finally:
        if pid is None and pidfile.exists():
            pid = int(pidfile.read_text())
        if pid is not None:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        shutil.rmtree(d, ignore_errors=True)


def _ovs_port(db, name):
    tag = _vsctl(db, "get", "Port", name, "tag")
    trunks = json.loads(_vsctl(db, "get", "Port", name, "trunks"))            # "[107, 110]" / "[]"
    mode = _vsctl(db, "get", "Port", name, "vlan_mode")
    return {"tag": None if tag == "[]" else int(tag), "trunks": trunks, "vlan_mode": None if mode == "[]" else mode}


def _wait_for(db, expected, timeout=10.0):
    """The OVS ports once they equal ``expected``, or as they are after ``timeout`` s (for the caller's assert)."""
    got = {}

    def reached():
        got.update({p: _ovs_port(db, p) for p in expected})
        return got == expected
    with contextlib.suppress(AssertionError):
        wait_for(reached, timeout, "the OVS ports", 0.1)
    return got


def test_switch_config_drives_ovs_ports(ovsdb, start_switch):
    sw = start_switch("--ovs-db", ovsdb, "--bridge", "br-legacy", "--port-map", json.dumps(PORT_MAP),
                      "--sync-interval", "0.2")
    initial = {"fa0-7": {"tag": 100, "trunks": [], "vlan_mode": "access"},
               "fa0-10": {"tag": 1, "trunks": [], "vlan_mode": "access"},
               "gi0-1": {"tag": 1, "trunks": [], "vlan_mode": "access"}}
    assert _wait_for(ovsdb, initial) == initial, sw.log()

    with sw.driver() as drv:
        before = drv.running_config()
        drv.apply(drv.render([AccessPortChange("FastEthernet0/7", 107, "hl107"),
                              AccessPortChange("FastEthernet0/10", 110, "hl110", qinq=True)],
                             [TrunkChange("GigabitEthernet0/1", (107, 110))]))
        tagged = {"fa0-7": {"tag": 107, "trunks": [], "vlan_mode": "access"},
                  "fa0-10": {"tag": 110, "trunks": [], "vlan_mode": "dot1q-tunnel"},   # QinQ port
                  "gi0-1": {"tag": 1, "trunks": [107, 110], "vlan_mode": "native-untagged"}}
        assert _wait_for(ovsdb, tagged) == tagged, sw.log()
        # Cisco dot1q-tunnel puts a 0x8100 S-tag on the trunk, not OVS's 802.1ad default
        assert _vsctl(ovsdb, "get", "Port", "fa0-10", "other_config:qinq-ethtype").strip('"') == "802.1q"

        drv.restore(before)
        assert _wait_for(ovsdb, initial) == initial, sw.log()

    status = json.loads((sw.dir / "status.json").read_text())
    assert status["ovs"]["error"] is None and status["ovs"]["applies"] >= 3
