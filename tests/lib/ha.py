"""What the two-server lab's test modules share (tests/lab/test_ha_lab.py, tests/faults/test_fault_failover.py)."""
from __future__ import annotations

from pathlib import Path

from harmless import orchestrator
from harmless import state as st
from harmless.ha import demo, lab


def teardown_pair(info: dict, name: str, d: Path) -> None:
    """``harmless down`` on each server that still has a deployment (a failure is printed, the teardown goes on),
    then the two-server lab removed (:func:`harmless.ha.lab.ha_lab_down`)."""
    for s in lab.SERVERS:
        try:
            with demo._as(info, s):
                if st.load():
                    orchestrator.down()
        except Exception as e:  # noqa: BLE001 - cleanup, reported
            print(f"cleanup: down on {s}: {e}")
    lab.ha_lab_down(name, d)
