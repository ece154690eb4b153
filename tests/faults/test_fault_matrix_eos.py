"""The fault matrix's kill cases on the emulated Arista EOS switch (eAPI, configuration sessions with commit timers):
the same end-state checks as on IOS (:mod:`tests.faults.test_fault_matrix`)."""
from __future__ import annotations

import pytest

from tests.faults.test_fault_matrix import assert_clean, finish, record, up_args, up_killed_case

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
