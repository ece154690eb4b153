"""Before any change, the whole picture (issue #25), on the emulated IOS switch (a Catalyst 3750, no controller
running):

* ``up`` with the controller down is refused before any contact with the switch: no TCP connection reaches it (a
  counting proxy stands between HARMLESS and the emulated switch), its running config is unchanged, nothing is
  journaled or saved;
* ``plan`` on an inventory with 6 refusals prints all 6 in one run, the same lines online and offline;
* the full diff (removals and additions) is the same online and offline, and the config ``up`` leaves on the device
  is the one the diff predicted; a shut trunk is brought up by ``up`` and shut again by ``down``.
"""
from __future__ import annotations

import json
import socket
import threading

import pytest
import yaml
from click.testing import CliRunner

from harmless import journal, offline
from harmless import orchestrator as orch
from harmless import state as st
from harmless.cli import main
from harmless.inventory import load_inventory
from harmless.switch_drivers import devdiff
from tests.lab.conftest import make_lab

pytestmark = pytest.mark.lab

EXTRA = """\
interface FastEthernet0/2
 switchport trunk encapsulation dot1q
 switchport mode trunk
interface FastEthernet0/3
 switchport access vlan 100
 switchport mode access
 channel-group 1 mode on
interface FastEthernet0/4
 switchport access vlan 100
 switchport mode access
 channel-group 1 mode on
interface Port-channel1
 switchport trunk encapsulation dot1q
 switchport trunk allowed vlan 100,101
 switchport mode trunk
interface FastEthernet0/5
 switchport access vlan 100
 switchport mode access
 switchport voice vlan 101
interface FastEthernet0/6
 switchport access vlan 100
 switchport mode access
 authentication port-control auto
 mab
 dot1x pae authenticator
interface FastEthernet0/9
 switchport access vlan 100
 switchport mode access
 switchport port-security
 switchport port-security mac-address sticky
interface GigabitEthernet0/1
 shutdown
"""


class CountingProxy:
    """A TCP proxy on 127.0.0.1 to ``port`` that counts the connections it is asked for (contact with the switch)."""

    def __init__(self, port: int):
        self.target, self.count = port, 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.count += 1
            u = socket.create_connection(("127.0.0.1", self.target))
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def plab(tmp_path_factory):
    """A Catalyst 3750 emulation with the ports above; its trunk Gi0/1 is shut; no controller listens."""
    yield from make_lab(tmp_path_factory, controller=None, platform="3750", extra_config=EXTRA)


def write_inventory(lab_, name: str, access=None, trunk=None, port=None, **switch) -> str:
    inv = yaml.safe_load(lab_.inventory.read_text())
    sw = inv["switches"][0]
    sw.update(switch)
    if access is not None:
        sw["access_ports"] = access
    if trunk is not None:
        sw["trunks"][0]["switch_port"] = trunk
    if port is not None:
        sw["port"] = port
    p = lab_.state_dir / name
    p.write_text(yaml.safe_dump(inv, sort_keys=False))
    return str(p)


def cli(*args: str):
    r = CliRunner().invoke(main, list(args), env={"COLUMNS": "200"})
    return r.exit_code, r.stdout, r.stderr


def test_up_with_the_controller_down_is_refused_before_any_contact(plab):
    proxy = CountingProxy(plab.info["ssh_port"])
    try:
        inv = write_inventory(plab, "via-proxy.yaml", port=proxy.port)
        before = plab.running_config()                      # read directly, not through the proxy
        code, out, err = cli("up", "-i", inv, "--wait-controller", "2")   # probes for 2 s, then refuses
        assert code == 2, err
        errors = [ln for ln in err.splitlines() if ln.startswith("error: ")]
        assert errors == [f"error: {inv}: switches[0].openflow.controllers: no controller of br-of-sw1 is reachable "
                          f"(from namespace {plab.info['server_netns']}): tcp:127.0.0.1:6653: Connection refused "
                          "(fix: start the controller (or fix the address, port, firewall or TLS files) before up; "
                          "up --no-wait skips this check and migrates without a controller)"], err
        assert err.rstrip().endswith("1 refusal: nothing was changed")
        assert proxy.count == 0                              # the switch was never contacted
        assert plab.running_config() == before
        assert st.load() is None and not journal.unfinished() and st.backup_index() == []
        # control: plan goes through the proxy (so 0 above means no contact) and only warns about the controller
        code, out, err = cli("plan", "-i", inv)
        assert code == 0, err
        assert proxy.count > 0
        assert "warning: " + f"{inv}: switches[0].openflow.controllers: no controller of br-of-sw1 is reachable" in \
            " ".join(out.split()) and "up refuses this (unless --no-wait)" in " ".join(out.split())
        assert "controllers: tcp:127.0.0.1:6653 (unreachable: Connection refused)" in out
    finally:
        proxy.close()


SIX = ["FastEthernet0/2", "FastEthernet0/3", "FastEthernet0/5", "FastEthernet0/6", "FastEthernet0/9",
       "FastEthernet0/7"]


def test_plan_prints_six_refusals_in_one_run_online_and_offline(plab):
    inv = write_inventory(plab, "six.yaml", access=SIX, trunk="Port-channel1")
    saved = plab.state_dir / "sw1-running.cfg"
    saved.write_text(plab.running_config())
    code, out, err = cli("plan", "-i", inv)
    assert code == 2, err
    errors = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 6, err
    for words in ("sw1 FastEthernet0/2 is a trunk", "sw1 FastEthernet0/3 is a member of Port-channel1",
                  "{interface: FastEthernet0/5, keep: [voice]}", "{interface: FastEthernet0/6, keep: [dot1x]}",
                  "{interface: FastEthernet0/9, keep: [port_security]}",
                  "sw1 Port-channel1 is a link aggregation group (FastEthernet0/3, FastEthernet0/4) and a trunk that "
                  "carries VLANs 100,101 now"):
        assert sum(words in e for e in errors) == 1, (words, err)
    assert "6 refusals, 1 warning: nothing was changed" in err          # the warning: no controller
    code_off, out_off, err_off = cli("plan", "-i", inv, "--config", f"sw1={saved}")
    assert code_off == 2
    assert [ln for ln in err_off.splitlines() if ln.startswith("error: ")] == errors
    print("\n" + err)


def test_full_diff_online_equals_offline_and_up_leaves_what_it_showed(plab):
    # mac_learning: on: offline, whether the 3750 can turn learning off is unknown (a note), online it is probed
    inv = write_inventory(plab, "ok.yaml", access=["FastEthernet0/7", "FastEthernet0/8"], trunk="GigabitEthernet0/1",
                          mac_learning="on")
    original = plab.running_config()
    saved = plab.state_dir / "sw1-ok.cfg"
    saved.write_text(original)
    code, out, err = cli("plan", "-i", inv, "--json")
    code_off, out_off, err_off = cli("plan", "-i", inv, "--json", "--config", f"sw1={saved}")
    assert code == 0 and code_off == 0, err + err_off
    online, saved_plan = (json.loads(o.strip().splitlines()[-1]) for o in (out, out_off))
    assert online["changes"] == saved_plan["changes"]
    text = online["changes"]["sw1"]["text"]
    assert " interface FastEthernet0/7\n- switchport access vlan 100\n+ switchport access vlan 107\n" in text
    assert " interface GigabitEthernet0/1\n- shutdown\n" in text
    assert [f["kind"] for f in online["findings"] if f["severity"] == "warning"] == ["trunk-shutdown",
                                                                                    "controller-unreachable"]
    candidate = offline.plan_offline(load_inventory(inv), inv, {"sw1": saved}).configs["sw1"]
    res = orch.up(inv, wait_controller=0)
    assert res.changed == {"sw1": True}
    after = plab.running_config()
    predicted = devdiff.merged(original, candidate, "ios")
    assert devdiff.config_diff(predicted, after, "ios").empty, devdiff.config_diff(predicted, after, "ios").text()
    assert "\ninterface GigabitEthernet0/1\n" in after and " shutdown\n" not in _block(after, "GigabitEthernet0/1")
    down = orch.down()
    assert down.config_restored is True and plab.running_config() == original
    assert " shutdown" in _block(plab.running_config(), "GigabitEthernet0/1")


def _block(config: str, iface: str) -> str:
    lines = config.splitlines()
    i = lines.index(f"interface {iface}")
    out = []
    for ln in lines[i + 1:]:
        if not ln.startswith(" "):
            break
        out.append(ln)
    return "\n".join(out) + "\n"
