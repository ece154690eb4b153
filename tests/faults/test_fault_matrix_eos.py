"""The fault matrix's kill cases on the emulated Arista EOS switch (eAPI, configuration sessions with commit timers),
and the switch changed behind HARMLESS's back: the same end-state checks as on IOS
(:mod:`tests.faults.test_fault_matrix`)."""
from __future__ import annotations

import pytest

from tests.faults.test_fault_matrix import (assert_clean, exporter_differences, finish, record, status_differences,
                                            up_args, up_killed_case, watch_differs)

pytestmark = pytest.mark.lab

CASES = [("device.commit", "KILL"), ("device.committed", "KILL"), ("server.built", "KILL"), ("device.confirm", "KILL"),
         ("device.committed", "INT"), ("verified", "TERM")]


@pytest.mark.parametrize("step,sig", CASES, ids=[f"{s}-{g}" for s, g in CASES])
def test_eos_up_killed(flab_eos, step, sig):
    up_killed_case(flab_eos, step, sig, label="EOS ")


def test_eos_down_killed_then_finished(flab_eos):
    fl = flab_eos
    r = fl.cli(*up_args(fl))
    assert r.returncode == 0, r.stderr[-800:]
    r = fl.cli("down", at="device.restore", signal="KILL")
    assert r.returncode == -9
    outcome = finish(fl, "EOS down KILL at device.restore")
    assert_clean(fl, "EOS down KILL at device.restore")
    record("EOS down KILL at device.restore", "SIGKILL right after the 'device.restore' record", outcome)


def test_eos_switch_changed_behind_harmless_is_reported(flab_eos):
    """On EOS: Ethernet7 moved back to VLAN 1 and VLAN 108 taken off the HARMLESS trunk by hand, then a reload from a
    startup config without the migration (`reload now` over eAPI): status (exit 7), watch (--json events) and the
    exporter report each with what to type; `up` puts the hand changes back; `down` finishes."""
    fl = flab_eos
    trunk = fl.info["trunk_port"]
    fl.device("write memory", "copy startup-config flash:pre-harmless.cfg")   # the operator's own backup
    assert fl.cli(*up_args(fl)).returncode == 0
    fl.configure("interface Ethernet7", "switchport access vlan 1", f"interface {trunk}",
                 "switchport trunk allowed vlan remove 108")
    rc, found = status_differences(fl)
    assert rc == 7 and {(f["kind"], f["interface"]) for f in found} == {("port", "Ethernet7"), ("trunk", trunk)}, found
    assert {(e["kind"], e["interface"]) for e in watch_differs(fl)} == {("port", "Ethernet7"), ("trunk", trunk)}
    m = exporter_differences(fl)
    assert m["as_deployed"] == 0 and set(m["differences"]) == {("port", "Ethernet7"), ("trunk", trunk)}
    assert all(f"harmless up -i {fl.inventory}" in fix for fix in m["differences"].values())
    assert fl.cli(*up_args(fl)).returncode == 0
    assert status_differences(fl) == (0, [])      # up put both back; no false difference on this realistic config
    fl.device("copy flash:pre-harmless.cfg startup-config", "reload now")
    rc, found = status_differences(fl)
    assert rc == 7 and [f["kind"] for f in found] == ["not-migrated"], found
    assert [e["kind"] for e in watch_differs(fl)] == ["not-migrated"]
    assert fl.running_config() == fl.original
    outcome = finish(fl, "EOS switch changed behind HARMLESS")
    assert_clean(fl, "EOS switch changed behind HARMLESS")
    record("EOS switch changed by hand", "Et7 to VLAN 1; VLAN 108 off the trunk", "status exit 7, watch events, "
           "exporter metrics; up fixes both")
    record("EOS reload without the migration", "pre-HARMLESS config copied to startup-config, reload now",
           f"status exit 7 (not-migrated), watch event; {outcome}")
