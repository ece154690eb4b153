"""Faucet's own integration tests in hardware-switch mode: br-of of the lab against a plain OVS bridge, one run.

The CI list of ``tests/interop/faucethw/lists.yaml`` (one test method per family that shows transparency: basic
with the port flap and Gauge, hairpin, LLDP, port ACL) runs through ``tests.interop.faucethw`` (docs/faucet.md):
the lab with br-of built by ``harmless up`` (hosts' cables on FastEthernet0/7-10, datapath id 0x1, ``harmless watch``
running) and a plain OVS bridge (userspace datapath, ports 7-10, fail_mode secure, OpenFlow13), Faucet 1.10.12's
``clib`` runner against each, both at the same time, a test that differs run once more on the failing side.

Each test method is one pytest case: it must pass on plain OVS (the baseline of this machine) and on HARMLESS. A test
listed under ``known`` in lists.yaml (a difference whose fix is under way) is an expected failure, strictly: when it
passes on HARMLESS the case fails until the entry is removed. Needs the suite installed
(``python -m tests.interop.faucethw install``; ``.ci/run`` does it), root and OVS.
"""
from __future__ import annotations

import pytest
from rich.console import Console

from tests.conftest import require_root_ovs
from tests.interop.faucethw.install import default_suite, installed
from tests.interop.faucethw.run import load_lists

LISTS = load_lists()
CI = LISTS["lists"]["ci"]
KNOWN = LISTS.get("known") or {}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    require_root_ovs()
    if not installed(default_suite()):
        pytest.skip("Faucet's integration suite is not installed: run .venv/bin/python -m tests.interop.faucethw "
                    "install (.ci/run does)")
    from tests.interop.faucethw.compare import compare
    from tests.interop.faucethw.report import print_table
    rep = compare("ci", CI, work=tmp_path_factory.mktemp("faucethw"))
    print_table(rep, Console(width=160))
    return rep


def known_why(test: str) -> str | None:
    k = KNOWN.get(test) or KNOWN.get(test.split(".")[0])
    return k["why"] if k else None


@pytest.mark.parametrize("test", CI)
def test_faucet_test_passes_on_harmless_as_on_plain_ovs(report, test):
    rows = [r for r in report.rows if r.test == test or r.test.startswith(test + ".")]
    assert rows, f"{test}: no result from Faucet's runner"
    for r in rows:
        assert r.plain.status == "pass", f"{r.test} failed on plain OVS (the baseline): {r.plain.reason}"
        why = known_why(r.test)
        if why and r.harmless.status == "pass":
            pytest.fail(f"{r.test} passes on HARMLESS now: remove it from 'known' in tests/interop/faucethw/lists.yaml")
        if why:
            pytest.xfail(f"known difference ({why}): {r.harmless.reason}")
        assert r.harmless.status == "pass", f"{r.test} passes on plain OVS, fails on HARMLESS: {r.harmless.reason}"
