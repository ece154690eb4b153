"""IosDriver against the lab's emulated Cisco IOS switch (real NAPALM ios / netmiko code paths).

Tests that only read share one switch process per module (``module_switch``, never changed); a test that changes
the config gets its own (``start_switch``, ``rejecting_switch``: a start costs about 1 s, a candidate load ~7 s),
so no test depends on another having restored the startup config, and any order passes.
"""
import logging
import time

import pytest

from harmless.errors import CommitError, DeviceError
from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from tests.drivers.conftest import raw_running

ACCESS = [AccessPortChange("FastEthernet0/7", 107, "hl107"), AccessPortChange("FastEthernet0/10", 110, "hl110")]
TRUNKS = [TrunkChange("GigabitEthernet0/1", (107, 110))]


def test_facts_and_capabilities(module_switch):
    with module_switch.driver() as drv:
        facts = drv.facts()
        caps = drv.capabilities
        links = drv.link_states()
    assert (facts.hostname, facts.model) == ("sw1", "WS-C2960-24TT-L")
    assert "12.2" in facts.os_version
    assert {f"FastEthernet0/{i}" for i in range(1, 25)} | {"GigabitEthernet0/1", "GigabitEthernet0/2"} <= set(facts.interfaces)
    assert facts.vlans == {1: "default", 100: "users", 101: "printers"}
    assert facts.ports["FastEthernet0/7"] == PortVlanState("FastEthernet0/7", "access", access_vid=100)
    assert facts.ports["FastEthernet0/9"] == PortVlanState("FastEthernet0/9", "dynamic", access_vid=101)
    assert facts.ports["GigabitEthernet0/1"] == PortVlanState("GigabitEthernet0/1", "dynamic", access_vid=1)
    assert not caps.commit_confirm and caps.replace      # the fake has no IOS archive feature
    assert facts.ports["FastEthernet0/12"].shutdown and links["FastEthernet0/12"] == "admin-down"
    assert links["FastEthernet0/7"] == "up" and set(links.values()) <= {"up", "down", "admin-down"}


def test_apply_is_idempotent_and_restore_is_exact(start_switch):
    with start_switch().driver() as drv:
        before_raw, before = raw_running(drv), drv.running_config()
        config = drv.render(ACCESS, TRUNKS)

        diff = drv.apply(config)
        assert "+vlan 107" in diff and "+ switchport access vlan 110" in diff
        assert "+ switchport trunk allowed vlan 107,110" in diff
        assert drv.last_saved_config == before
        facts = drv.facts()
        assert facts.vlans == {1: "default", 100: "users", 101: "printers", 107: "hl107", 110: "hl110"}
        assert facts.ports["FastEthernet0/7"] == PortVlanState("FastEthernet0/7", "access", access_vid=107)
        assert facts.ports["FastEthernet0/10"] == PortVlanState("FastEthernet0/10", "access", access_vid=110)
        assert facts.ports["GigabitEthernet0/1"] == PortVlanState("GigabitEthernet0/1", "trunk", native_vid=1,
                                                                  allowed_vids=(107, 110))
        assert facts.ports["FastEthernet0/8"].access_vid == 100          # untouched

        assert drv.apply(config) == ""                                   # idempotent
        with pytest.raises(NotImplementedError, match="archive"):
            drv.commit(revert_in=120)

        restore_diff = drv.restore(before)
        assert "-vlan 107" in restore_diff
        assert drv.running_config() == before
        assert raw_running(drv) == before_raw                            # byte for byte


def test_closed_driver_raises_device_error(module_switch):
    drv = module_switch.driver()
    with pytest.raises(DeviceError, match="not connected"):
        drv.running_config()


def test_unreachable_port_is_a_quick_device_error(module_switch, unused_port):
    port = unused_port
    t0 = time.monotonic()
    with pytest.raises(DeviceError) as exc:
        module_switch.driver(port=port).open()
    assert time.monotonic() - t0 < 15
    assert f"127.0.0.1:{port}" in str(exc.value) and "cannot reach/log in" in str(exc.value)


def test_wrong_password_never_shows_a_password(module_switch, caplog, lab_password):
    wrong = "Wr0ng-Pw-e41d"
    caplog.set_level(logging.DEBUG)
    drv = module_switch.driver(password=wrong, optional_args={"secret": lab_password})
    with pytest.raises(DeviceError) as exc:
        drv.open()
    text = f"{exc.value}|{exc.value.problem}|{exc.value.fix}|{exc.value!r}|{drv!r}"
    assert f"127.0.0.1:{module_switch.port}" in str(exc.value)
    for secret in (wrong, lab_password):
        assert secret not in text
        assert secret not in caplog.text
        assert secret not in module_switch.log()


def test_rejected_line_leaves_the_original_config(rejecting_switch):
    with rejecting_switch.driver() as drv:
        before_raw, before = raw_running(drv), drv.running_config()
        bad = drv.render(ACCESS, TRUNKS).replace("end\n", "interface FastEthernet0/11\n spanning-tree bpduguard enable\n!\nend\n")
        with pytest.raises(CommitError) as exc:
            drv.apply(bad)
        msg = str(exc.value)
        assert "spanning-tree bpduguard enable" in msg and "Invalid input" in msg and "verified" in msg
        assert drv.running_config() == before and raw_running(drv) == before_raw


def test_failed_commit_without_napalm_rollback_is_restored_by_the_driver(rejecting_switch):
    with rejecting_switch.driver() as drv:
        before_raw = raw_running(drv)
        drv._device.rollback = lambda: None          # as if NAPALM's automatic rollback had not worked
        bad = drv.render(ACCESS[:1], []).replace("end\n", "spanning-tree bpduguard default\nend\n")
        with pytest.raises(CommitError, match="spanning-tree bpduguard default"):
            drv.apply(bad)
        assert raw_running(drv) == before_raw


def test_l2pt_capabilities_follow_the_platform_and_a_refused_tunnel_leaves_the_original(start_switch):
    """``show version`` decides what the driver says the switch tunnels (switch_drivers/ios/platforms.py); a model
    HARMLESS does not know renders what is asked and the device's refusal rolls the commit back."""
    from tests.drivers.conftest import refused_apply
    tunnel = [AccessPortChange("FastEthernet0/7", 107, "hl107", l2pt=("lldp",))]
    for platform, lldp in (("me3750", True), ("3750", False)):
        with start_switch("--platform", platform).driver() as drv:
            drv.facts()
            caps = drv.capabilities
            assert ("lldp" in caps.l2pt) == lldp and "stp" in caps.l2pt and caps.l2pt_mac == "01:00:0c:cd:cd:d0"
    with start_switch().driver() as drv:                  # the default 2960: unknown to the table, refuses the line
        drv.facts()
        assert drv.capabilities.l2pt is None
        assert "l2protocol-tunnel lldp" in refused_apply(drv, tunnel, TRUNKS)
