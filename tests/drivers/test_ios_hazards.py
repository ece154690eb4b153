"""IOS conversion hazards, QinQ, commit-confirm and a lost session, against the emulated switch over SSH
(real NAPALM ios / netmiko). Each test's own switch emulates an ISL-capable Catalyst 3750 with the archive
feature on and a fast revert clock (one IOS minute = MINUTE seconds).
"""
import time

import pytest

from harmless.errors import CommitError, DeviceError
from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from tests.conftest import stays, wait_for
from tests.drivers.conftest import raw_running

MINUTE = 4.0
STARTUP_3750 = """\
vtp mode transparent
vlan 100
 name users
!
vlan 105
 name harmless-sw1-p9
!
interface FastEthernet0/7
 switchport access vlan 100
 switchport mode access
 switchport nonegotiate
!
interface FastEthernet0/8
 switchport access vlan 100
 switchport mode access
!
interface GigabitEthernet0/1
 switchport access vlan 100
 switchport mode access
 switchport nonegotiate
!
archive
 path flash:archive
 maximum 5
!
end
"""
ACCESS = [AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p1"),
          AccessPortChange("FastEthernet0/11", 111, "harmless-sw1-p3", qinq=True)]
TRUNKS = [TrunkChange("GigabitEthernet0/1", (107, 111))]


@pytest.fixture
def sw3750(start_switch):
    """A 3750 of its own per test (0.5 s to start): no test depends on another having restored its config."""
    return start_switch("--platform", "3750", "--minute-seconds", str(MINUTE), startup_config=STARTUP_3750)


def test_facts_caps_and_render_on_an_isl_platform(sw3750):
    with sw3750.driver() as drv:
        facts = drv.facts()
        caps = drv.capabilities
        config = drv.render(ACCESS, TRUNKS)
    assert facts.model == "WS-C3750G-24TS-1U"
    assert caps.commit_confirm and caps.qinq and caps.stag_tpids == (0x8100,) and caps.link_state
    assert facts.ports["GigabitEthernet0/1"] == PortVlanState("GigabitEthernet0/1", "access", access_vid=100)
    # ISL-capable: encapsulation before trunk mode; stale access VLAN and stale HARMLESS VLAN 105 removed
    assert ("interface GigabitEthernet0/1\n no switchport access vlan\n switchport trunk encapsulation dot1q\n"
            " switchport mode trunk\n switchport trunk allowed vlan 107,111\n") in config
    assert "no vlan 105\n" in config


def test_nonegotiate_port_to_trunk_and_back(sw3750):
    """The hazard of napalm#1009: the emulator refuses the plain replace; the driver's restore succeeds."""
    from napalm.base.exceptions import ReplaceConfigException

    with sw3750.driver() as drv:
        drv.facts()
        before_raw, before = raw_running(drv), drv.running_config()
        diff = drv.apply(drv.render(ACCESS, TRUNKS))
        assert "+ switchport trunk encapsulation dot1q" in diff and "no vlan 105" in diff
        facts = drv.facts()
        assert facts.ports["GigabitEthernet0/1"] == PortVlanState("GigabitEthernet0/1", "trunk", native_vid=1,
                                                                  allowed_vids=(107, 111))
        assert facts.ports["FastEthernet0/11"] == PortVlanState("FastEthernet0/11", "tunnel", access_vid=111)
        assert 105 not in facts.vlans and facts.vlans[107] == "harmless-sw1-p1"
        assert " switchport access vlan 100\n switchport trunk encapsulation" not in drv.running_config()
        assert drv.apply(drv.render(ACCESS, TRUNKS)) == ""                 # idempotent, no cleanup left

        # plain NAPALM replace (what restore did before): IOS refuses to drop Gi0/1's encapsulation or mode
        dev = drv._device
        dev.load_replace_candidate(config=before)
        with pytest.raises(ReplaceConfigException, match="Command rejected.*(NoNegotiate|encapsulation)"):
            dev.commit_config()
        assert " switchport trunk allowed vlan 107,111" in drv.running_config()   # device kept the new config

        drv.restore(before)                                                   # bridge merge + replace
        assert raw_running(drv) == before_raw


def test_commit_confirm_confirmed_in_time_stays(sw3750):
    with sw3750.driver() as drv:
        drv.facts()
        before = drv.running_config()
        drv.apply(drv.render(ACCESS[:1], []), revert_in=60)
        drv.confirm()
        after = drv.running_config()
        assert after != before and " switchport access vlan 107" in after
        stays(lambda: drv.running_config() == after, MINUTE * 1.5, "the confirmed config past the (cancelled) "
              "timer", 1.0)
        assert drv.running_config() == after
        drv.restore(before)
        assert drv.running_config() == before


def test_commit_confirm_timer_expires_and_device_reverts(sw3750):
    with sw3750.driver() as drv:
        drv.facts()
        before_raw = raw_running(drv)
        drv.apply(drv.render(ACCESS[:1], []), revert_in=60)
        assert " switchport access vlan 107" in drv.running_config()
        pending = drv._device.cli(["show archive config rollback timer"])["show archive config rollback timer"]
        assert "Timer value" in pending and sw3750.username in pending
    with sw3750.driver() as drv:                                             # no confirm: a new session checks
        wait_for(lambda: raw_running(drv) == before_raw, MINUTE * 4, "the device to revert (1-minute timer)", 0.5)
        assert raw_running(drv) == before_raw
        with pytest.raises(CommitError, match="No pending"):
            drv.confirm()
    assert "revert timer expired" in sw3750.log()


def test_lost_session_mid_commit_is_reconnected_and_restored(start_switch):
    sw = start_switch("--drop-session-on", r"^copy flash:.*merge.* running-config", startup_config=STARTUP_3750)
    # netmiko cannot see a closed channel and waits for the prompt until NAPALM's read_timeout (90 s);
    # netmiko's read_timeout_override (a NAPALM optional_arg) bounds that wait
    with sw.driver(optional_args={"read_timeout_override": 8}) as drv:
        drv.facts()
        before_raw = raw_running(drv)
        t0 = time.monotonic()
        with pytest.raises(DeviceError) as exc:
            drv.apply(drv.render(ACCESS, TRUNKS))
        assert "original running config is back (verified)" in str(exc.value)
        assert time.monotonic() - t0 < 60
    assert "dropping the SSH session" in sw.log()
    with sw.driver() as fresh:
        assert raw_running(fresh) == before_raw
