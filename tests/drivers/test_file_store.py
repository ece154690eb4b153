"""The switch's own file store (issue #23) through the real drivers: IOS and EOS against the emulated switches
(``flash:``), Junos through NAPALM's mock (``/var/tmp``), ProCurve (none). Each stores an original with
:mod:`harmless.originals` (the config, read back and verified, and its manifest), finds it again from a new session,
refuses an altered copy, and removes it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from napalm.base.mock import MockDriver

from harmless import originals
from harmless.inventory import OriginalsSettings
from harmless.switch_drivers.junos.driver import JunosDriver
from harmless.switch_drivers.procurve.driver import ProcurveDriver
from tests.drivers.conftest import start_fakeswitch
from tests.drivers.eos_fixtures import eos_driver, start_eos

ON_SWITCH = OriginalsSettings()


@pytest.fixture(scope="module")
def ios_sw(tmp_path_factory):
    sw = start_fakeswitch(tmp_path_factory.mktemp("ios-files"))
    try:
        yield sw
    finally:
        sw.stop()


@pytest.fixture(scope="module")
def eos_sw(tmp_path_factory):
    sw = start_eos(tmp_path_factory.mktemp("eos-files"))
    try:
        yield sw
    finally:
        sw.stop()


def _round_trip(open_driver, store_at: str) -> None:
    """Store the running config as the original, find it from a fresh session, refuse it altered, remove it."""
    with open_driver() as drv:
        assert drv.file_store() == store_at
        original = drv.running_config()
        [place] = originals.places("sw1", drv, ON_SWITCH)
        loc = originals.store(place, original, owned={"syntax": "blocks", "objects": [{"key": "vlan 107"}]})
        assert loc.kind == "switch" and loc.where == f"sw1 {store_at}{originals.ORIGINAL}"
        head = drv.read_file(originals.MANIFEST).splitlines()[0]
        assert head == f"{originals.sha256(original)}  {originals.ORIGINAL}"     # sha256sum -c reads this line
    with open_driver() as drv:                                                   # another session: another machine
        got = originals.fetch("sw1", originals.places("sw1", drv, ON_SWITCH))
        assert got.text == original and got.location == loc
        assert got.manifest.owned == {"syntax": "blocks", "objects": [{"key": "vlan 107"}]}
        drv.write_file(originals.ORIGINAL, original.replace("vlan 100", "vlan 666"))     # tampered on the switch
        with pytest.raises(originals.CopyError, match="SHA-256 is .* the manifest records"):
            originals.fetch("sw1", originals.places("sw1", drv, ON_SWITCH))
        assert originals.remove(originals.places("sw1", drv, ON_SWITCH)) == [loc]
        assert drv.read_file(originals.ORIGINAL) is None and drv.read_file(originals.MANIFEST) is None
        assert originals.fetch("sw1", originals.places("sw1", drv, ON_SWITCH)) is None
        originals.remove(originals.places("sw1", drv, ON_SWITCH))               # removing nothing is fine


def test_ios_flash_round_trip(ios_sw):
    _round_trip(ios_sw.driver, "flash:")


def test_ios_copy_is_the_devices_own_copy_of_its_running_config(ios_sw):
    """On IOS the config file is written by the device (``copy running-config flash:``), not transferred."""
    with ios_sw.driver() as drv:
        drv.write_config_copy("harmless-probe.cfg", "ignored: the device copies its own running config")
        assert drv.read_config_copy("harmless-probe.cfg") == drv.running_config()
        drv.delete_file("harmless-probe.cfg")
        assert drv.read_file("harmless-probe.cfg") is None


def test_ios_tcl_refuses_what_tcl_would_alter(ios_sw):
    from harmless.errors import DeviceError
    with ios_sw.driver() as drv, pytest.raises(DeviceError, match="curly brace"):
        drv.write_file("harmless-x.txt", "banner motd {x}")


def test_eos_flash_round_trip(eos_sw):
    _round_trip(lambda: eos_driver(eos_sw), "flash:")


def test_eos_write_is_byte_exact_in_chunks(eos_sw):
    """Larger than one bash command's chunk, with characters a shell would alter: the bytes come back exact."""
    text = "".join(f"! line {i} $HOME `x` 'q' \"d\" \\ {{}} ümlaut\n" for i in range(700))
    with eos_driver(eos_sw) as drv:
        drv.write_file("harmless-big.txt", text)
        assert drv.read_file("harmless-big.txt") == text
        drv.delete_file("harmless-big.txt")


# ----------------------------------------------------------------------------- Junos (NAPALM's mock)
JUNOS_DATA = Path(__file__).parent / "mocked_data" / "junos"


class MockedJunosFiles(JunosDriver):
    """JunosDriver on NAPALM's mock; ``file show``/``file delete`` are answered from a dict standing for /var/tmp
    (in mocked_data's ``cli`` form), SCP puts into it."""

    def __init__(self, files: dict[str, str]):
        super().__init__("192.0.2.3", 830, "admin", "Junos-Pw-51c",
                         optional_args={"path": str(JUNOS_DATA / "round_trip")})
        self.files, self.sent = files, []

    def _scp_put(self, local: str, remote: str) -> None:
        self.sent.append(("scp", remote))
        self.files[remote] = Path(local).read_text()

    def napalm_class(self):
        files, sent = self.files, self.sent

        class Files(MockDriver):
            def cli(self, commands, encoding="text"):
                out = {}
                for c in commands:
                    sent.append(("cli", c))
                    verb, _, path = c.partition(" ")[2].partition(" ")
                    missing = f"error: could not resolve file: {path}\n"
                    if verb == "show":
                        out[c] = files.get(path, missing)
                    else:
                        out[c] = "" if files.pop(path, None) is not None else missing
                return out

        return Files


def test_junos_var_tmp_round_trip():
    files: dict[str, str] = {}
    original = (JUNOS_DATA / "els_original.conf").read_text()
    with MockedJunosFiles(files) as drv:
        [place] = originals.places("sw3", drv, ON_SWITCH)
        loc = originals.store(place, original)
        assert loc.where == "sw3 /var/tmp/harmless-original.cfg"
        assert ("scp", "/var/tmp/harmless-original.cfg") in drv.sent and files["/var/tmp/harmless-original.cfg"] \
            == original
        assert ("cli", "file show /var/tmp/harmless-original.sha256") in drv.sent
        got = originals.fetch("sw3", originals.places("sw3", drv, ON_SWITCH))
        assert got.text == original and got.manifest.switch == "sw3"
        files["/var/tmp/harmless-original.cfg"] = original + "set vlans evil vlan-id 666\n"
        with pytest.raises(originals.CopyError, match="altered or damaged"):
            originals.fetch("sw3", originals.places("sw3", drv, ON_SWITCH))
        originals.remove(originals.places("sw3", drv, ON_SWITCH))
        assert files == {} and drv.sent[-2:] == [("cli", "file delete /var/tmp/harmless-original.cfg"),
                                                  ("cli", "file delete /var/tmp/harmless-original.sha256")]


def test_procurve_offers_no_file_store():
    drv = ProcurveDriver("192.0.2.4", 22, "manager", "pw")
    assert drv.file_store() is None
    assert originals.places("sw4", drv, ON_SWITCH) == []
    with pytest.raises(NotImplementedError):
        drv.write_file("x", "y")


def test_manifest_is_sha256sum_readable_and_strict(tmp_path):
    m = originals.Manifest(switch="sw1", sha256="a" * 64, size=3, saved="2026-01-01T00:00:00Z",
                           owned={"objects": [{"key": "interface {x}"}]})
    text = m.render()
    assert "{" not in text and "}" not in text            # IOS's Tcl puts cannot carry braces
    assert originals.Manifest.parse(text, "here") == m
    assert json.dumps(m.owned) in json.dumps(originals.Manifest.parse(text, "here").owned)
    for bad in ("", "not a manifest\n", text.replace(originals.ORIGINAL, "other.cfg", 1),
                text.replace("# owned: ", "# owned: !!", 1)):
        with pytest.raises(originals.CopyError, match="manifest is damaged"):
            originals.Manifest.parse(bad, "here")
