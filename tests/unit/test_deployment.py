"""Deployment access (:mod:`harmless.deployment`) and the typed results: the DPDK options travel in the state, old
state files without them are still read, and the results dump with the keys ``--json`` always printed."""
from __future__ import annotations

import json

from harmless import deployment
from harmless import state as st
from harmless.ovs import DpdkOptions, Ovs
from harmless.results import DownResult, RecoverResult, StatusReport, SwitchUp, UpResult


def test_dpdk_options_are_recorded_in_the_state_and_come_back(tmp_path, monkeypatch):
    monkeypatch.setenv("HARMLESS_STATE_DIR", str(tmp_path))
    dp = DpdkOptions(hugepages=False, socket_mem_mb=512, lcore_mask="0x4", pmd_cpu_mask="0x8")
    ref = deployment.ovs_ref(Ovs(tmp_path / "ovs", netns="ns1", dpdk=dp), "dpdk")
    st.save(st.DeploymentState(inventory=str(tmp_path / "gone.yaml"), ovs=ref))
    s = st.load()
    assert s.ovs.dpdk.model_dump() == {"hugepages": False, "socket_mem_mb": 512, "lcore_mask": "0x4",
                                       "pmd_cpu_mask": "0x8"}
    ovs = deployment.state_ovs(s)
    assert ovs.private and ovs.netns == "ns1" and ovs.dpdk == dp
    # the journal keeps the four fields it always had
    assert deployment.ref_record(ref) == {"private": True, "base_dir": str(tmp_path / "ovs"), "netns": "ns1",
                                          "datapath": "dpdk"}


def test_a_state_written_before_the_dpdk_options_were_recorded_is_still_read(tmp_path, monkeypatch):
    monkeypatch.setenv("HARMLESS_STATE_DIR", str(tmp_path))
    old = {"version": 2, "inventory": str(tmp_path / "gone.yaml"),
           "ovs": {"private": True, "base_dir": str(tmp_path / "ovs"), "netns": None, "datapath": "dpdk"}}
    st.state_file().write_text(json.dumps(old))
    s = st.load()
    assert s.ovs.dpdk is None
    assert deployment.state_ovs(s).dpdk == DpdkOptions()          # the inventory is gone: the defaults
    old["ovs"]["datapath"] = "netdev"
    st.state_file().write_text(json.dumps(old))
    assert deployment.state_ovs(st.load()).dpdk is None
    old["ovs"] = {"private": False, "base_dir": None, "netns": None, "datapath": "netdev"}
    st.state_file().write_text(json.dumps(old))
    assert not deployment.state_ovs(st.load()).private


def test_results_dump_with_the_keys_json_always_printed():
    up = UpResult(plan={"switches": []}, diffs={"sw1": ""}, changed={"sw1": False}, ovs={"private": True},
                  results={"sw1": SwitchUp(status="unchanged")}, failed=[], controllers_connected={})
    assert list(up.model_dump(mode="json")) == ["plan", "diffs", "changed", "ovs", "results", "failed",
                                                "controllers_connected", "controllers_missing"]
    assert up.model_dump(mode="json")["results"] == {"sw1": {"status": "unchanged", "error": None}}
    down = DownResult(restored={"sw1": True}, config_restored=True, ports_restored={"sw1": []}, server=["x"])
    assert list(down.model_dump()) == ["restored", "config_restored", "ports_restored", "server", "kept", "discarded",
                                       "proven_against"]
    assert RecoverResult(recovered="nothing").model_dump(mode="json") == {"recovered": "nothing"}
    assert RecoverResult(recovered="down", down=down).model_dump(mode="json") == {"recovered": "down",
                                                                                  **down.model_dump()}
    assert RecoverResult(recovered="previous deployment", switches=["sw1"]).model_dump(mode="json") == {
        "recovered": "previous deployment", "switches": ["sw1"]}
    assert RecoverResult(recovered="qos", details={"applied": True}).model_dump(mode="json") == {
        "recovered": "qos", "applied": True}
    assert StatusReport(deployed=False).model_dump(mode="json") == {"deployed": False, "switches": [],
                                                                    "unfinished_journal": None}
    rep = StatusReport.model_validate({"deployed": True, "inventory": "i", "ovs_running": True, "switches": [
        {"name": "sw1", "bridge": "br-of-sw1", "datapath_id": "1", "ports": [], "controllers": [], "trunks": {}}]})
    assert list(rep.model_dump(mode="json")) == ["deployed", "unfinished_journal", "inventory", "ovs_running",
                                                 "switches"]
    assert "error" not in rep.model_dump(mode="json")["switches"][0]
