"""JunosDriver through NAPALM's ``mock`` driver with Junos device output in NAPALM's mocked_data style.

fake-switches' Juniper NETCONF emulation cannot carry NAPALM ``junos`` (PyEZ): its facts, lock, load and
compare RPCs fail (see README "Switch drivers"), so these tests replay hand-written Junos output
(``mocked_data/junos/<case>/<method>.<n>``, built by ``mocked_data/junos/build.py``) through the real
``napalm.base.mock.MockDriver``. They test our glue: call order, parsing of what the device returns, the
commit-confirm minute rounding, error mapping and apply()'s verified restore, not PyEZ or a Junos device.
"""
from pathlib import Path

import pytest
from napalm.base.mock import MockDriver

from harmless.errors import CommitError
from harmless.switch_drivers.base import AccessPortChange, PortVlanState, TrunkChange
from harmless.switch_drivers.junos.driver import JunosDriver

DATA = Path(__file__).parent / "mocked_data" / "junos"
PASSWORD = "Junos-Pw-51c"
ACCESS = [AccessPortChange("ge-0/0/7", 107, "hl107"), AccessPortChange("ge-0/0/8", 108, "hl108"),
          AccessPortChange("ge-0/0/10", 110, "hl110")]
TRUNKS = [TrunkChange("ge-0/0/25", (107, 108, 110))]


class MockedJunos(JunosDriver):
    """JunosDriver whose NAPALM driver is ``mock`` reading ``DATA/<case>``; records what it was sent."""

    def __init__(self, case: str, **kw):
        super().__init__("192.0.2.3", 830, "admin", PASSWORD, optional_args={"path": str(DATA / case)}, **kw)
        self.sent: list[tuple[str, object]] = []

    def napalm_class(self):
        sent = self.sent

        class Recording(MockDriver):
            def load_merge_candidate(self, filename=None, config=None):
                sent.append(("merge", config))
                return super().load_merge_candidate(filename=filename, config=config)

            def load_replace_candidate(self, filename=None, config=None):
                sent.append(("replace", config))
                return super().load_replace_candidate(filename=filename, config=config)

            def commit_config(self, message="", revert_in=None):
                sent.append(("commit", revert_in))
                return super().commit_config(message=message, revert_in=revert_in)

        return Recording


def test_round_trip_backup_merge_compare_commit_restore():
    with MockedJunos("round_trip") as drv:
        facts = drv.facts()
        assert (facts.hostname, facts.model, drv.vlan_syntax) == ("sw3", "EX3400-24T", "els")
        assert facts.ports["ge-0/0/8"] == PortVlanState("ge-0/0/8", "access", access_vid=100)
        config = drv.render(ACCESS, TRUNKS)
        diff = drv.apply(config)
        saved = drv.last_saved_config
        assert saved.startswith("version 21.4R3") and "## Last commit" not in saved
        assert "+       members hl107;" in diff and "-      storm-control default;" in diff
        assert drv.sent == [("merge", config), ("commit", None)]
        after = drv.facts()
        assert {n: after.ports[n] for n in ("ge-0/0/7", "ge-0/0/25")} == {
            "ge-0/0/7": PortVlanState("ge-0/0/7", "access", access_vid=107),
            "ge-0/0/25": PortVlanState("ge-0/0/25", "trunk", native_vid=None, allowed_vids=(107, 108, 110))}
        assert drv.running_config() != saved
        assert "-       members hl107;" in drv.restore(saved)
        assert drv.sent[-2:] == [("replace", saved), ("commit", None)]
        # the device's restored config carries a newer '## Last commit' stamp, yet it is the saved config
        raw = drv._dev().get_config(retrieve="running")["running"]
        assert raw != saved and raw.startswith("## Last commit: 2026-11-21 10:07:51")
        assert drv.running_config() == saved
        links = drv.link_states()
    assert links == {"ge-0/0/7": "up", "ge-0/0/12": "admin-down", "ge-0/0/9": "down"}


def test_legacy_device_gets_port_mode_and_loses_vlan_side_membership():
    with MockedJunos("legacy") as drv:
        facts = drv.facts()
        config = drv.render(ACCESS[:2], [TrunkChange("ge-0/0/23", (107, 108))])
    assert drv.vlan_syntax == "legacy" and facts.model == "EX4200-24T"
    assert "port-mode access" in config and "interface-mode" not in config
    assert "delete vlans users interface ge-0/0/8.0\n" in config


def test_rejected_line_nothing_committed():
    with MockedJunos("rejected_line") as drv:
        with pytest.raises(CommitError) as ei:
            drv.apply(_els_config(drv))
        assert "load merge candidate was rejected by the device: [edit vlans] hl110: syntax error" in str(ei.value)
        assert drv.running_config() == drv.last_saved_config
        assert [s for s, _ in drv.sent] == ["merge"]                 # no commit was attempted


def _els_config(drv):
    drv.vlan_syntax = "els"
    return drv.render(ACCESS, TRUNKS)


def test_session_lost_mid_commit_restores_the_backup():
    with MockedJunos("lost_session") as drv:
        drv.vlan_syntax = "els"
        with pytest.raises(CommitError) as ei:
            drv.apply(drv.render(ACCESS, TRUNKS))
        msg = str(ei.value)
        assert "commit failed (SessionCloseError: Unexpected session close)" in msg and "(verified)" in msg
        assert PASSWORD not in msg
        assert [s for s, _ in drv.sent] == ["merge", "commit", "replace", "commit"]
        assert drv.sent[2][1] == drv.last_saved_config


def test_commit_confirmed_rounds_to_minutes_and_expiry_is_seen():
    with MockedJunos("confirm_expired") as drv:
        drv.vlan_syntax = "els"
        saved_diff = drv.apply(drv.render(ACCESS, TRUNKS), revert_in=90)
        assert saved_diff and drv.sent[-1] == ("commit", 120)        # commit confirmed 2 (minutes)
        assert drv.running_config() != drv.last_saved_config        # committed, waiting for confirmation
        assert drv.running_config() == drv.last_saved_config        # Junos rolled back by itself
        with pytest.raises(CommitError, match="No pending commit-confirm"):
            drv.confirm()
