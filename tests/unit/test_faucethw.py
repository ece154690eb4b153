"""The Faucet hardware-suite runner's own logic (tests/interop/faucethw): reading Faucet's JSON report, the reason
of a failure, the comparison rows, the Markdown table, the method filter of hw_main. No root, no Faucet."""
from __future__ import annotations

import json
import unittest

from tests.interop.faucethw import hw_main
from tests.interop.faucethw.report import Report, markdown
from tests.interop.faucethw.run import Outcome, load_lists, parse_report, reason_of, rows_of

# the shape of clib_mininet_test_main.report_results' JSON (-j): tracebacks with newlines turned into tabs
TRACE_PORT = ("Traceback (most recent call last):\t  File 'mininet_tests.py', line 133, in test_untagged\t"
              "    self.flap_all_switch_ports()\tAssertionError: 1 != 0 : dpid 1 port 7 status 1 != expected 0\t")
TRACE_VLAN = ("Traceback (most recent call last):\t  File 'mininet_test_topo.py', line 80, in config\t"
              "Exception: Error: Unknown device type.\t")
REPORT = {"hw_config": {}, "tests": {
    "mininet_tests.FaucetUntaggedTest.test_untagged": {"status": "FAIL", "output": TRACE_PORT,
                                                       "test_duration_secs": 61},
    "mininet_tests.FaucetUntaggedACLTest.test_port5001_blocked": {"status": "OK", "output": "",
                                                                  "test_duration_secs": 40},
    "mininet_tests.FaucetTaggedTest.test_tagged": {"status": "ERROR", "output": TRACE_VLAN,
                                                   "test_duration_secs": 3}}}


def test_reason_is_the_last_exception_line():
    assert reason_of(TRACE_PORT) == "AssertionError: 1 != 0 : dpid 1 port 7 status 1 != expected 0"


def test_reason_keeps_no_path_of_this_machine():
    r = reason_of("Traceback:\tAssertionError: x not found in /var/tmp/faucet-tests-ab/T-test_untagged/gauge-meter.txt\t")
    assert r == "AssertionError: x not found in .../gauge-meter.txt"


def test_reason_names_a_missing_kernel_vlan_device():
    r = reason_of(TRACE_VLAN)
    assert r.startswith("needs a kernel VLAN device (no 8021q module here)") and "Unknown device type" in r


def test_report_parsed_per_method_and_missing_tests_are_not_run(tmp_path):
    p = tmp_path / "report.json"
    p.write_text(json.dumps(REPORT))
    out = parse_report(p, ["FaucetUntaggedTest", "FaucetUntaggedACLTest.test_port5001_blocked", "FaucetTaggedTest",
                           "FaucetUntaggedLLDPTest"])
    assert out["FaucetUntaggedTest.test_untagged"].status == "fail"
    assert out["FaucetUntaggedTest.test_untagged"].seconds == 61
    assert out["FaucetUntaggedACLTest.test_port5001_blocked"] == Outcome(status="pass", seconds=40)
    assert out["FaucetTaggedTest.test_tagged"].status == "error"
    assert out["FaucetUntaggedLLDPTest"].status == "not run"
    assert parse_report(tmp_path / "absent.json", ["X"])["X"].status == "not run"


def test_rows_mark_regressions_and_known_causes():
    fail = Outcome(status="fail", reason="port 7 status 1 != expected 0")
    ok = Outcome(status="pass")
    res = {"plain": {"A.t": ok, "B.t": ok, "C.t": fail, "D.t": ok},
           "harmless": {"A.t": fail, "B.t": ok, "C.t": fail, "D.t": fail}}
    rows = {r.test: r for r in rows_of(res, {"A": {"why": "port-mod ignored"}})}
    assert rows["A.t"].regression and rows["A.t"].known == "port-mod ignored"
    assert not rows["B.t"].regression and rows["B.t"].why == ""
    assert not rows["C.t"].regression                      # fails on both: no comparison, not a regression
    assert rows["D.t"].regression and rows["D.t"].known == ""
    rep = Report(date="d", machine={"cores": "2"}, versions={"faucet": "1.10.12"}, test_list="ci",
                 sides=["plain", "harmless"], parallel=True, seconds={"total": 1.0}, rows=list(rows.values()))
    assert [r.test for r in rep.regressions] == ["A.t", "D.t"]
    assert rep.summary()["of_them_known"] == 1 and rep.summary()["failed_on_both"] == 1
    md = markdown(rep)
    assert "| `A.t` | pass | FAIL | port-mod ignored — port 7 status 1 != expected 0 |" in md
    assert "| `B.t` | pass | pass |  |" in md


def test_method_filter_keeps_only_requested_methods():
    class T(unittest.TestCase):
        def test_a(self):
            pass

        def test_b(self):
            pass

    def make_suite(cls, *args):
        return unittest.TestSuite(cls(n) for n in unittest.TestLoader().getTestCaseNames(cls))

    only = hw_main.only_methods(make_suite, {"T": {"test_b"}})
    assert [t._testMethodName for t in only(T)] == ["test_b"]
    assert [t._testMethodName for t in hw_main.only_methods(make_suite, {"T": set()})(T)] == ["test_a", "test_b"]


def test_lists_name_classes_or_methods_and_known_entries_have_reasons():
    data = load_lists()
    assert {"ci", "long"} <= set(data["lists"])
    for tests in data["lists"].values():
        assert all(t.startswith("Faucet") and t.count(".") <= 1 for t in tests), tests
    assert all(k.get("why") and k.get("item") for k in data["known"].values())
