"""Link-state mirroring and controller redundancy on the lab.

* Two controllers on one br-of (OpenFlow 1.3 multiple controllers): a master and a slave; ``harmless status`` shows
  both connected with their roles and traffic flows through the master.
* Pulling a lab access link (the legacy port's cable, ``ip link set ... down`` in the switch's namespace) makes
  ``harmless watch`` mark the br-of port, and the controllers receive an OpenFlow port-status for it; plugging it back
  clears it and traffic flows again.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from harmless import orchestrator as orch
from harmless.demo import start_controller, stop_process
from harmless.lab import topology as lab
from tests.lab.conftest import make_lab

SLAVE_PORT = 6654


@pytest.fixture(scope="module")
def lab2ctl(tmp_path_factory):
    gen = make_lab(tmp_path_factory, hosts=(7, 8), controller_env={"HARMLESS_OF_ROLE": "master"})
    L = next(gen)
    slave = start_controller(SLAVE_PORT, L.state_dir / "slave.log", netns=L.info["server_netns"],
                             env={"HARMLESS_OF_ROLE": "slave"})
    inv = yaml.safe_load(L.inventory.read_text())
    inv["switches"][0]["openflow"]["controllers"].append(f"tcp:127.0.0.1:{SLAVE_PORT}")
    L.inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
    try:
        yield L
    finally:
        stop_process(slave)
        next(gen, None)


def read_line(proc, timeout) -> str:
    """One stdout line of ``proc`` within ``timeout`` s (else fail with its stderr)."""
    import select
    r, _, _ = select.select([proc.stdout], [], [], timeout)
    if not r:
        proc.terminate()
        raise AssertionError(f"no event from harmless watch within {timeout} s; stderr: {proc.stderr.read()[-1500:]}")
    return proc.stdout.readline()


def wait_for(cond, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_master_and_slave_controllers_are_visible_and_a_pulled_link_reaches_them(lab2ctl):
    L = lab2ctl
    orch.up(str(L.inventory))

    def roles():
        ctl = orch.status(with_device=False)["switches"][0]["controllers"]
        got = {c["target"]: c["role"] for c in ctl if c["is_connected"]}
        return got if len(got) == 2 and "other" not in got.values() else None
    assert wait_for(roles, 20, "both controllers connected with their roles") == {
        "tcp:127.0.0.1:6653": "master", f"tcp:127.0.0.1:{SLAVE_PORT}": "slave"}
    assert lab.ping(L.info, 7, 8, count=3) == 0.0

    master_log = L.state_dir / "controller.log"
    watch = subprocess.Popen([sys.executable, "-m", "harmless.cli", "watch", "--interval", "1", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ})
    veth = L.info["port_map"]["FastEthernet0/7"]
    try:
        time.sleep(1.5)       # first poll: every port up, nothing to change
        subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth, "down"], check=True)
        ev = json.loads(read_line(watch, 20))
        assert (ev["interface"], ev["ofport"], ev["link"], ev["device_state"]) == ("FastEthernet0/7", 7, "down", "down")
        # the controller got an OpenFlow port-status for br-of port 7 (NO_RECV|NO_FWD|NO_PACKET_IN = 0x64)
        wait_for(lambda: "port=7 reason=MODIFY config=0x64" in master_log.read_text(), 10, "port-status at master")
        desc = orch.state_ovs(orch.st.load()).ofctl("-O", "OpenFlow13", "dump-ports-desc", "br-of-sw1")
        assert "NO_RECV NO_FWD NO_PACKET_IN" in desc
        subprocess.run(["ip", "-n", L.info["switch_netns"], "link", "set", veth, "up"], check=True)
        ev = json.loads(read_line(watch, 20))
        assert (ev["ofport"], ev["link"]) == (7, "up")
        wait_for(lambda: "port=7 reason=MODIFY config=0x0 " in master_log.read_text(), 10, "port-status 'up' at master")
        assert wait_for(lambda: lab.ping(L.info, 7, 8, count=2) == 0.0, 15, "traffic after the link came back")
    finally:
        watch.terminate()
        watch.wait(10)
    assert orch.down()["config_restored"]
