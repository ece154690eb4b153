"""netmiko_cli fallback driver against the lab's emulated IOS switch (real netmiko ``cisco_ios``, real SSH)."""
import pytest

from harmless.errors import CommitError
from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from harmless.switch_drivers.netmiko_cli.driver import NetmikoCliDriver
from tests.drivers.conftest import refused_apply

ACCESS = [AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p1"),
          AccessPortChange("FastEthernet0/11", 111, "harmless-sw1-p3", qinq=True)]
TRUNKS = [TrunkChange("GigabitEthernet0/1", (107, 111))]


def _drv(sw, **kw):
    return NetmikoCliDriver(sw.host, sw.port, sw.username, sw.password, optional_args={"device_type": "cisco_ios"},
                            timeout=kw.get("timeout", 20))


@pytest.fixture
def sw(start_switch):
    """A switch of its own per test (0.5 s to start): no test depends on another having restored its config."""
    return start_switch()


@pytest.fixture
def rejecting(start_switch):
    return start_switch("--reject", r"^switchport trunk allowed vlan")


def test_capabilities_are_honest_and_commit_confirm_is_refused(sw):
    with _drv(sw) as drv:
        caps = drv.capabilities
        assert not caps.commit_confirm and not caps.replace and caps.qinq and caps.stag_tpids == (0x8100,)
        drv.facts()
        drv.load_merge(drv.render(ACCESS, TRUNKS))
        with pytest.raises(NotImplementedError, match="commit-confirm"):
            drv.commit(revert_in=60)
        drv.discard()


def test_apply_idempotent_rollback_and_exact_restore(sw):
    with _drv(sw) as drv:
        facts = drv.facts()
        assert facts.hostname == "sw1" and facts.vlans[100] == "users"
        before = drv.running_config()
        config = drv.render(ACCESS, TRUNKS)
        diff = drv.apply(config)
        assert "+interface GigabitEthernet0/1" in diff and "+ switchport mode dot1q-tunnel" in diff
        facts = drv.facts()
        assert facts.ports["FastEthernet0/11"] == PortVlanState("FastEthernet0/11", "tunnel", access_vid=111)
        assert facts.ports["GigabitEthernet0/1"].allowed_vids == (107, 111)
        assert drv.apply(drv.render(ACCESS, TRUNKS)) == ""                  # our diff: nothing left
        drv.rollback()                                                       # line-wise undo of the last commit
        assert drv.running_config() == before
        drv.apply(config)
        sent = drv.restore(before)
        assert "no vlan 107" in sent and drv.running_config() == before


def test_refused_line_restores_the_original(rejecting):
    with _drv(rejecting) as drv:
        msg = refused_apply(drv, ACCESS, TRUNKS)
        assert "switchport trunk allowed vlan 107,111" in msg and "Invalid input" in msg


def test_protected_lines_are_refused_before_touching_the_device(sw):
    with _drv(sw) as drv:
        before = drv.running_config()
        with pytest.raises(CommitError, match="access/management lines"):
            drv.load_merge("username admin privilege 15 secret x\nend\n")
        with pytest.raises(CommitError, match="access/management lines"):
            drv.restore(before.replace("hostname sw1", "hostname other"))
        assert drv.running_config() == before
