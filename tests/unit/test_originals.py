"""harmless.originals on its own: the places a copy goes, store / fetch / remove, and every way a copy is refused.
The switch side is an in-memory file store standing in for a driver (the real drivers' file commands are tested in
tests/drivers/test_file_store.py against the emulated switches and NAPALM's mock)."""
from __future__ import annotations

import os

import pytest

from harmless import originals
from harmless.inventory import OriginalsSettings
from harmless.originals import MANIFEST, ORIGINAL, CopyError, Place

ORIG = "version 12.1\n!\nhostname sw1\n!\ninterface FastEthernet0/7\n switchport access vlan 100\n!\nend"


class FlashDriver:
    """A driver's file-store methods over a dict; ``rewrite`` alters what the device's own copy reads back as."""

    name = "ios"

    def __init__(self, store: str | None = "flash:", rewrite=None):
        self.files: dict[str, str] = {}
        self.store, self.rewrite = store, rewrite

    def file_store(self):
        return self.store

    def write_file(self, name, text):
        self.files[name] = text + "\n"                      # as Tcl's puts writes it: one final newline more

    def write_config_copy(self, name, config):
        self.files[name] = self.rewrite(config) if self.rewrite else config

    def read_file(self, name):
        return self.files.get(name)

    read_config_copy = read_file

    def delete_file(self, name):
        self.files.pop(name, None)


def test_places_follow_the_settings_and_the_platform(tmp_path):
    drv = FlashDriver()
    assert [p.location().kind for p in originals.places("sw1", drv, OriginalsSettings())] == ["switch"]
    both = originals.places("sw1", drv, OriginalsSettings(directory=str(tmp_path)))
    assert [str(p.location()) for p in both] == ["the switch: sw1 flash:harmless-original.cfg",
                                                 f"the off-box directory: {tmp_path}/sw1/harmless-original.cfg"]
    assert originals.places("sw1", FlashDriver(store=None), OriginalsSettings()) == []      # ProCurve: none
    assert originals.places("sw1", drv, OriginalsSettings(on_switch=False)) == []
    again = originals.places_of("sw1", [p.location().model_dump() for p in both], drv)
    assert [p.location() for p in again] == [p.location() for p in both]
    assert [p.location().kind for p in originals.places_of("sw1", [both[0].location()], None)] == []


def test_store_fetch_remove_on_the_switch_and_off_box(tmp_path):
    drv = FlashDriver()
    where = originals.places("sw1", drv, OriginalsSettings(directory=str(tmp_path)))
    for p in where:
        originals.store(p, ORIG, owned={"syntax": "blocks", "objects": []})
    assert drv.files[ORIGINAL] == ORIG                                     # the device's own copy
    assert (tmp_path / "sw1" / ORIGINAL).read_text() == ORIG
    assert oct((tmp_path / "sw1" / MANIFEST).stat().st_mode & 0o777) == "0o600"
    got = originals.fetch("sw1", where)
    assert got.text == ORIG and got.location == where[0].location() and got.also == [where[1].location()]
    assert got.manifest.owned == {"syntax": "blocks", "objects": []} and got.manifest.size == len(ORIG)
    assert originals.remove(where) == [p.location() for p in where]
    assert drv.files == {} and not (tmp_path / "sw1").exists()
    assert originals.fetch("sw1", where) is None


def test_a_device_copy_that_reads_back_differently_is_written_as_text():
    drv = FlashDriver(rewrite=lambda c: "! Last configuration change at 10:00\n" + c)
    [p] = originals.places("sw1", drv, OriginalsSettings())
    originals.store(p, ORIG)
    assert drv.files[ORIGINAL] == ORIG + "\n"                               # written with write_file instead
    assert originals.fetch("sw1", [p]).text == ORIG                          # the final newline is tolerated


def test_a_copy_that_never_reads_back_equal_stops_the_store():
    drv = FlashDriver(rewrite=lambda c: c + "\nextra")
    drv.write_file = lambda name, text: drv.files.__setitem__(name, text + "\nextra")
    [p] = originals.places("sw1", drv, OriginalsSettings())
    with pytest.raises(CopyError, match="does not match the original's SHA-256"):
        originals.store(p, ORIG)
    assert MANIFEST not in drv.files                                         # no manifest vouches for it


def test_line_endings_a_transfer_adds_are_tolerated_nothing_else():
    m = originals.Manifest(switch="sw1", sha256=originals.sha256(ORIG), size=len(ORIG), saved="t")
    for variant in (ORIG, ORIG + "\n", ORIG.replace("\n", "\r\n"), ORIG.replace("\n", "\r\n") + "\r\n"):
        assert originals.verify(variant, m) == ORIG
    for bad in (ORIG.replace("vlan 100", "vlan 101"), ORIG[:-3], " " + ORIG, ORIG + "\n\n!"):
        assert originals.verify(bad, m) is None


def _two_places(tmp_path):
    drv = FlashDriver()
    where = originals.places("sw1", drv, OriginalsSettings(directory=str(tmp_path)))
    for p in where:
        originals.store(p, ORIG)
    return drv, where


def test_a_tampered_copy_alone_is_refused(tmp_path):
    drv = FlashDriver()
    [p] = originals.places("sw1", drv, OriginalsSettings())
    originals.store(p, ORIG)
    drv.files[ORIGINAL] = ORIG.replace("vlan 100", "vlan 666")
    with pytest.raises(CopyError) as e:
        originals.fetch("sw1", [p])
    assert e.value.where == "the switch: sw1 flash:harmless-original.cfg"
    assert "refused" in e.value.problem and "altered or damaged" in e.value.problem and "nothing was changed" in \
        e.value.fix


def test_a_damaged_copy_is_passed_over_when_the_other_verifies_with_its_sha256(tmp_path):
    drv, where = _two_places(tmp_path)
    drv.files[ORIGINAL] = ORIG[:20]                                          # truncated on the switch
    got = originals.fetch("sw1", where)
    assert got.text == ORIG and got.location.kind == "directory"
    assert got.warnings and "altered or damaged" in got.warnings[0] and "sw1 flash:" in got.warnings[0]


def test_a_rewritten_manifest_does_not_vouch_for_a_rewritten_copy(tmp_path):
    """Copy and manifest both rewritten on the switch, consistently: two originals disagree, both refused."""
    drv, where = _two_places(tmp_path)
    evil = ORIG.replace("vlan 100", "vlan 666")
    drv.files[ORIGINAL] = evil
    drv.files[MANIFEST] = originals.Manifest(switch="sw1", sha256=originals.sha256(evil), size=len(evil),
                                             saved="t").render()
    with pytest.raises(CopyError, match="its copies hold different originals"):
        originals.fetch("sw1", where)


@pytest.mark.parametrize("damage,why", [
    (lambda f: f.pop(MANIFEST), "no harmless-original.sha256 next to it"),
    (lambda f: f.pop(ORIGINAL), "harmless-original.cfg is missing"),
    (lambda f: f.__setitem__(MANIFEST, "garbage\n"), "the manifest is damaged"),
    (lambda f: f.__setitem__(MANIFEST, f[MANIFEST].replace("switch: sw1", "switch: sw2")),
     "it is the original of switch sw2, not sw1"),
])
def test_every_unverifiable_copy_is_refused(damage, why):
    drv = FlashDriver()
    [p] = originals.places("sw1", drv, OriginalsSettings())
    originals.store(p, ORIG)
    damage(drv.files)
    with pytest.raises(CopyError, match=why):
        originals.fetch("sw1", [p])


def test_the_off_box_directory_is_checked_before_up(tmp_path):
    originals.check_directory(OriginalsSettings(), "inv.yaml: originals")            # none: nothing to check
    originals.check_directory(OriginalsSettings(directory=str(tmp_path)), "inv.yaml: originals")
    with pytest.raises(CopyError) as e:
        originals.check_directory(OriginalsSettings(directory=str(tmp_path / "nope")), "inv.yaml: originals")
    assert e.value.where == "inv.yaml: originals.directory" and "not a directory" in e.value.problem
    if os.geteuid() != 0:                                                     # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(CopyError, match="not writable"):
            originals.check_directory(OriginalsSettings(directory=str(ro)), "inv.yaml: originals")


def test_an_unwritable_directory_is_a_copy_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    p = Place("sw1", directory=blocker)                                      # <file>/sw1 cannot be created
    with pytest.raises(CopyError, match="cannot write the off-box copy"):
        originals.store(p, ORIG)
