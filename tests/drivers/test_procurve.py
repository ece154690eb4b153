"""ProcurveDriver (real netmiko ``hp_procurve``, real SSH) against the lab's tiny ProCurve CLI emulator."""
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harmless.procs import free_port
from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from harmless.switch_drivers.procurve.driver import ProcurveDriver
from tests.drivers.conftest import refused_apply, serving

pytest.importorskip("fake_switches", reason="fake_switches (its Twisted SSH transport) is not installed")

PASSWORD = "Pc-Pw-91ab-test"
STARTUP = 'vlan 100\nname "users"\nuntagged 7-8\nexit\nvlan 105\nname "harmless-sw2-p9"\ntagged 25\nexit\n'
ACCESS = [AccessPortChange("7", 107, "harmless-sw2-p1"), AccessPortChange("8", 108, "harmless-sw2-p2")]
TRUNKS = [TrunkChange("25", (107, 108))]


def _start(tmp: Path, *extra: str):
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "pw").write_text(PASSWORD + "\n")
    (tmp / "startup").write_text(STARTUP)
    port = free_port()
    log = open(tmp / "out.txt", "w")
    proc = subprocess.Popen([sys.executable, "-m", "harmless.emulators.procurve", "--listen-port", str(port),
                             "--password-file", str(tmp / "pw"), "--startup-config", str(tmp / "startup"),
                             "--log-file", str(tmp / "log"), *extra], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, cwd=str(Path(__file__).resolve().parents[2]))
    log.close()
    if serving(proc, port, 20):
        return proc, port
    proc.kill()
    raise RuntimeError((tmp / "out.txt").read_text())


def _stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def procurve(tmp_path):
    """A switch of its own per test: no test depends on another having restored its config."""
    proc, port = _start(tmp_path / "procurve")
    yield port
    _stop(proc)


@pytest.fixture
def rejecting_procurve(tmp_path):
    proc, port = _start(tmp_path / "procurve-rej", "--reject", r"^untagged 8$")
    yield port
    _stop(proc)


def _drv(port):
    return ProcurveDriver("127.0.0.1", port, "manager", PASSWORD, timeout=20)


def test_facts_caps_apply_idempotent_restore(procurve):
    with _drv(procurve) as drv:
        caps = drv.capabilities
        assert not caps.commit_confirm and not caps.replace and not caps.qinq and not caps.lag
        facts = drv.facts()
        assert facts.hostname == "sw2" and facts.vlans[100] == "users"
        assert facts.ports["7"] == PortVlanState("7", "access", access_vid=100)
        before = drv.running_config()
        config = drv.render(ACCESS, TRUNKS)
        assert config.endswith("no vlan 105\n")                       # stale HARMLESS VLAN of an earlier plan
        diff = drv.apply(config)
        assert "+vlan 107" in diff and "-vlan 105" in diff
        facts = drv.facts()
        assert facts.ports["7"] == PortVlanState("7", "access", access_vid=107)
        assert facts.ports["25"] == PortVlanState("25", "trunk", native_vid=1, allowed_vids=(1, 107, 108))
        assert 105 not in facts.vlans
        assert drv.apply(drv.render(ACCESS, TRUNKS)) == ""            # idempotent
        sent = drv.restore(before)
        assert "no vlan 107" in sent and "vlan 105" in sent
        assert drv.running_config() == before
        with pytest.raises(NotImplementedError):
            drv.commit(revert_in=60)


def test_refused_line_leaves_the_original(rejecting_procurve):
    with _drv(rejecting_procurve) as drv:
        msg = refused_apply(drv, ACCESS, TRUNKS)
        assert "untagged 8" in msg and "Invalid input" in msg
        assert PASSWORD not in msg


def test_harmless_ports_online_reads_the_device(procurve, rejecting_procurve, tmp_path):
    """``harmless ports -i`` logs in over SSH (netmiko), reads the running config and prints its port model;
    the same text saved and read offline gives the same object."""
    import json

    import yaml
    from click.testing import CliRunner

    from harmless.cli import main
    from harmless.switch_drivers.models import parse_model

    pw = tmp_path / "pw"
    pw.write_text(PASSWORD + "\n")
    pw.chmod(0o600)
    inv = tmp_path / "inv.yaml"
    inv.write_text(yaml.safe_dump({"switches": [{
        "name": "sw2", "driver": "procurve", "host": "127.0.0.1", "port": procurve, "username": "manager",
        "password_file": str(pw), "trunks": [{"switch_port": "25", "server_interface": "hl-trunk0"}],
        "access_ports": ["7"]}]}))
    r = CliRunner().invoke(main, ["ports", "-i", str(inv), "--json"], env={})
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    ports = {p["interface"]: p for p in got["ports"]}
    assert (ports["7"]["mode"], ports["7"]["access_vid"]) == ("access", 100)
    assert (ports["25"]["mode"], ports["25"]["allowed_vids"]) == ("trunk", [105])
    assert {100, 105} <= set(got["vlans"])
    assert PASSWORD not in r.stdout + r.stderr
    with _drv(procurve) as drv:
        saved = tmp_path / "running.cfg"
        saved.write_text(drv.running_config())
    assert parse_model("procurve", saved.read_text()).to_json_dict() == got
    off = CliRunner().invoke(main, ["ports", "--driver", "procurve", "--config", str(saved), "--json"], env={})
    assert off.exit_code == 0 and json.loads(off.stdout) == got
    two = yaml.safe_load(inv.read_text())
    # the same emulated device by another name for its address: one device listed twice is refused by validation
    twice = dict(two["switches"][0], name="sw2b", host="localhost",
                 trunks=[dict(two["switches"][0]["trunks"][0], server_interface="hl-sw2b-trk")])
    inv.write_text(yaml.safe_dump({"switches": [two["switches"][0], twice]}))
    dup = CliRunner().invoke(main, ["ports", "-i", str(inv), "--json"], env={})
    assert dup.exit_code == 2 and "same device as switches[0]" in dup.stderr, dup.stderr
    # a second device (the module's other emulator): several switches print {name: object}
    inv.write_text(yaml.safe_dump({"switches": [two["switches"][0], dict(twice, port=rejecting_procurve)]}))
    both = CliRunner().invoke(main, ["ports", "-i", str(inv), "--json"], env={})
    assert both.exit_code == 0, both.stderr
    with _drv(rejecting_procurve) as drv:
        other = parse_model("procurve", drv.running_config()).to_json_dict()
    assert json.loads(both.stdout) == {"sw2": got, "sw2b": other}                # several switches: {name: object}                 # several switches: {name: object}


def test_down_merge_keeps_the_operators_vlan_edits_on_the_device(procurve):
    """Issue #22 on the ProCurve syntax through the real driver: the merged config ``down`` computes (original +
    the operator's edits, HARMLESS's memberships reverted) is accepted by the line-wise restore and equals, byte for
    byte, what the same edits give on the unmigrated switch; an edit to the trunk's memberships is a conflict."""
    from harmless import ownership

    edits = ["vlan 555", 'name "ops"', "untagged 12", "exit", "vlan 100", "tagged 20", "exit"]
    with _drv(procurve) as drv:
        original = drv.running_config()
        drv._push("operator", edits)
        reference = drv.running_config()
        drv.restore(original)
        drv.facts()
        config = drv.render(ACCESS, TRUNKS)
        drv.apply(config)
        owned = ownership.record("procurve", config, original, drv.running_config(), None)
        drv._push("operator", edits)
        r = ownership.plan_down("sw2", owned, drv.config_syntax(), original, drv.running_config(), "o")
        assert not r.conflicts and {c.label for c in r.kept} == {"vlan 555", "port 12", "port 20"}
        drv.restore(r.target)                         # the driver checks the text after its line-wise restore
        assert drv.running_config() == reference
        drv.restore(original)
        drv.apply(config)
        drv._push("operator", ["vlan 555", 'name "ops"', "tagged 25", "exit"])
        r = ownership.plan_down("sw2", owned, drv.config_syntax(), original, drv.running_config(), "o")
        assert [c.label for c in r.conflicts] == ["port 25"]
