"""What the two-server lab's test modules share (tests/lab/test_ha_lab.py, tests/faults/test_fault_failover.py)."""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harmless import orchestrator
from harmless import state as st
from harmless.ha import demo, lab
from harmless.procs import free_port


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


@contextmanager
def deployed_pair(prefix: str, d: Path) -> Iterator[dict]:
    """The two-server EOS lab (named ``prefix`` + a random tag, files in ``d``), both agents running and hearing each
    other, deployed from server a; torn down afterwards (:func:`teardown_pair`), also on failure. Yields its info."""
    name = prefix + uuid.uuid4().hex[:5]
    info = lab.ha_lab_up(lab.HaLabSpec(name=name, ssh_port=free_port(), vendor="eos"), d)
    try:
        for s in lab.SERVERS:
            lab.start_agent(info, s)
        demo.wait(lambda: all(demo._agent_hears(info, s) for s in lab.SERVERS), 60, "the agents")
        demo.deploy(info, "a", lambda m: None)
        yield info
    finally:
        teardown_pair(info, name, d)
