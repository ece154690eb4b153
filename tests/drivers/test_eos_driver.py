"""EosDriver against the lab's emulated Arista EOS switch (real NAPALM eos → pyeapi → eAPI over HTTP).

Round trip backup → merge → compare → commit → restore byte for byte, and the failure paths: a rejected line
(the session is aborted, running config untouched), the eAPI session lost mid-commit (the device committed,
the reply never came: apply() restores the saved config), a commit-confirm timer that expires (the device
reverts by itself) and one that is confirmed in time. One switch process per test (0.3 s to start), so the
tests pass in any order.
"""

import pytest

from harmless.errors import CommitError, DeviceError
from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from tests.conftest import stays, wait_for
from tests.drivers.conftest import PASSWORD, serve
from tests.drivers.eos_fixtures import eos_driver, start_eos

ACCESS = [AccessPortChange("Ethernet7", 107, "hl107"), AccessPortChange("Ethernet8", 108, "hl108", qinq=True)]
TRUNKS = [TrunkChange("Ethernet25", (107, 108), stag_tpid=0x88A8)]


@pytest.fixture
def eos(tmp_path):
    """A switch of its own per test (0.3 s to start): no test depends on another having restored its config."""
    yield from serve(start_eos(tmp_path / "eos"))


@pytest.fixture
def faulty_eos(tmp_path):
    """Rejects `switchport access vlan 110`; drops the reply to the first session commit (once: per test, its own
    switch)."""
    yield from serve(start_eos(tmp_path / "eos-faulty", "--reject", r"^switchport access vlan 110$",
                               "--drop-after", r"^configure session \S+ commit$"))


def test_facts_capabilities_and_link_state(eos):
    with eos_driver(eos) as drv:
        facts, caps, links = drv.facts(), drv.capabilities, drv.link_states()
    assert (facts.hostname, facts.model, facts.os_version) == ("sw2", "vEOS-lab", "4.30.1F-lab")
    assert {f"Ethernet{i}" for i in range(1, 27)} | {"Management1"} == set(facts.interfaces)
    assert facts.vlans == {1: "default", 100: "users", 101: "printers"}
    assert facts.ports["Ethernet7"] == PortVlanState("Ethernet7", "access", access_vid=100)
    assert facts.ports["Ethernet1"] == PortVlanState("Ethernet1", "access", access_vid=1)
    assert facts.ports["Ethernet9"] == PortVlanState("Ethernet9", "trunk", native_vid=1, allowed_vids=(100, 101))
    assert "Management1" not in facts.ports and len(facts.ports) == 26
    assert caps.commit_confirm and caps.replace and caps.qinq and caps.link_state and 0x88A8 in caps.stag_tpids
    assert links["Ethernet12"] == "admin-down" and links["Ethernet7"] == "up"


def test_round_trip_merge_compare_commit_restore_exact(eos):
    with eos_driver(eos) as drv:
        saved = drv.running_config()
        config = drv.render(ACCESS, TRUNKS)
        diff = drv.apply(config)
        assert drv.last_saved_config == saved
        assert "+   name hl107" in diff and "-   switchport access vlan 100" in diff
        assert "+   switchport mode dot1q-tunnel" in diff and "+   switchport dot1q ethertype 0x88a8" in diff
        facts = drv.facts()
        assert facts.ports["Ethernet7"] == PortVlanState("Ethernet7", "access", access_vid=107)
        assert facts.ports["Ethernet8"] == PortVlanState("Ethernet8", "tunnel", access_vid=108)
        assert facts.ports["Ethernet25"] == PortVlanState("Ethernet25", "trunk", native_vid=1, allowed_vids=(107, 108))
        assert {107: "hl107", 108: "hl108"}.items() <= facts.vlans.items()
        # the same config again: empty session diff, nothing committed, no session left pending
        assert drv.apply(config) == ""
        sessions = drv._dev().device.run_commands(["show configuration sessions"])[0]["sessions"]
        assert all(s["state"] != "pending" for s in sessions.values())
        changed = drv.running_config()
        assert changed != saved
        diff = drv.restore(saved)
        assert "-   name hl107" in diff
        assert drv.running_config() == saved                       # byte for byte
        assert drv.restore(saved) == ""                           # nothing left to change


def test_rejected_line_aborts_the_session_and_leaves_running_config(faulty_eos):
    with eos_driver(faulty_eos) as drv:
        saved = drv.running_config()
        config = drv.render([AccessPortChange("Ethernet7", 107, "hl107"), AccessPortChange("Ethernet10", 110, "hl110")],
                            [TrunkChange("Ethernet25", (107, 110))])
        with pytest.raises(CommitError) as ei:
            drv.apply(config)
        assert "switchport access vlan 110: invalid command" in ei.value.problem
        assert drv.running_config() == saved
        sessions = drv._dev().device.run_commands(["show configuration sessions"])[0]["sessions"]
        assert sessions and all(s["state"] == "aborted" for s in sessions.values())   # NAPALM discarded it


def test_session_lost_mid_commit_is_restored_exactly(faulty_eos):
    with eos_driver(faulty_eos) as drv:
        saved = drv.running_config()
        with pytest.raises(CommitError) as ei:
            drv.apply(drv.render(ACCESS, TRUNKS))
        msg = str(ei.value)
        assert "commit failed (ConnectionError" in msg and "original running config is back (verified)" in msg
        assert PASSWORD not in msg
        assert drv.running_config() == saved
    assert "dropping the reply" in faulty_eos.log()


def test_commit_confirm_timer_expiry_reverts_on_the_device(eos):
    with eos_driver(eos) as drv:
        saved = drv.running_config()
        drv.apply(drv.render(ACCESS, TRUNKS), revert_in=2)
        assert drv.facts().ports["Ethernet7"].access_vid == 107     # committed, not yet confirmed
        wait_for(lambda: drv.running_config() == saved, 15, "EOS to revert when the 2 s timer expires", 0.5)
        assert drv.running_config() == saved                        # EOS reverted by itself
        with pytest.raises(CommitError, match="confirm commit was rejected.*No pending commit-confirm"):
            drv.confirm()


def test_commit_confirm_confirmed_in_time_stays(eos):
    with eos_driver(eos) as drv:
        saved = drv.running_config()
        drv.apply(drv.render(ACCESS, TRUNKS), revert_in=2)
        drv.confirm()
        stays(lambda: drv.facts().ports["Ethernet7"].access_vid == 107, 3.0, "VLAN 107 on Ethernet7 past the "
              "2 s timer", 0.5)
        assert drv.facts().ports["Ethernet7"].access_vid == 107     # the timer was cancelled
        drv.restore(saved)
        assert drv.running_config() == saved


def test_wrong_password_and_unreachable(eos, unused_port):
    with pytest.raises(DeviceError) as ei:
        eos_driver(eos, password="not-the-password").open()
    assert "cannot reach/log in" in ei.value.problem and "Unauthorized" in ei.value.problem
    assert "not-the-password" not in str(ei.value)
    with pytest.raises(DeviceError, match="cannot reach/log in"):
        eos_driver(eos, port=unused_port).open()
