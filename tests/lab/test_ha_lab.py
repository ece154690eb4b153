"""Active/standby servers on the two-server lab (issue #23): one emulated switch (EOS: its commits take a fraction of
a second, so the module stays lean) with two trunks to two server namespaces, each with its own OVS and agent, a
controller on the management network, hosts pinging every 10 ms.

The tests assert outcomes: the standby built as standby, a take-over when the active's OVS dies, traffic resuming,
exactly one trunk forwarding at every sample (the switch's own forwarding decision, ofproto/trace), nothing at all on
a management cut, a split brain (each server believes the other dead) ending with one forwarding trunk, and down
from the standby giving back the exact original and removing both servers' bridges. Times are the demo's (harmless
ha demo), never asserted here."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harmless import originals
from harmless import state as st
from harmless.deployment import connect
from harmless.deployment import state_ovs
from harmless.inventory import load_inventory
from harmless.ha import demo, lab, record
from harmless.lab.topology import lab_ovs
from harmless.plan import Plan
from tests.conftest import require_root_ovs, stays, wait_for
from tests.lib.ha import deployed_pair

DETECT_MS = 300


def _importable():
    import importlib.util
    if importlib.util.find_spec("fake_switches") is None:
        pytest.skip("fake-switches is not installed (packaging/install.sh installs it)")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The lab, its agents running, deployed from server a; torn down afterwards (also on failure)."""
    require_root_ovs()
    _importable()
    with deployed_pair("h", tmp_path_factory.mktemp("halab")) as info:
        yield info


def settled(info) -> str:
    """Wait until both agents see each other on both paths with one active; its name."""
    return wait_for(lambda: demo.healthy(info, DETECT_MS), 120, "the pair to be healthy",
                    detail=lambda: _logs(info))


def _logs(info) -> str:
    return " | ".join(Path(info["dir"], f"agent-{s}.log").read_text()[-600:] for s in lab.SERVERS)


def server_state(info, s):
    with demo._as(info, s):
        return st.load()


def flash_manifest(info):
    """The manifest of the original's copy on the switch's flash (harmless.originals), None when there is none."""
    drv = connect(load_inventory(info["inventory"]).switches[0], "test")
    try:
        text = drv.read_file(originals.MANIFEST)
    finally:
        drv.close()
    return originals.Manifest.parse(text, "flash") if text else None


def controllers_of(info, s) -> list[str]:
    ovs = state_ovs(server_state(info, s))
    return ovs.vsctl("get-controller", "br-of-sw1").split()


def test_up_builds_the_standby_as_standby_with_the_same_datapath(pair):
    active = settled(pair)
    standby = next(s for s in lab.SERVERS if s != active)
    a, b = server_state(pair, active), server_state(pair, standby)
    pa, pb = Plan.from_dict(a.plan).switches[0], Plan.from_dict(b.plan).switches[0]
    assert not pa.standby and pb.standby and pa.datapath_id == pb.datapath_id
    assert [p.ofport for p in pa.ports] == [p.ofport for p in pb.ports]
    assert b.backups["sw1"].sha256 == a.backups["sw1"].sha256               # the original is on both servers
    assert controllers_of(pair, active) and controllers_of(pair, standby) == []
    ovs_b = state_ovs(b)
    ofports = ovs_b.vsctl("--columns=name,ofport", "list", "Interface", "sw1-p7", "sw1-p8")
    assert "ofport              : 7" in ofports and "ofport              : 8" in ofports
    assert demo.forwarding_trunks(pair) == [pa.trunks[0].switch_port]
    with demo._as(pair, standby):
        assert record.load().replicated_from == active
        copies = st.copies_of("sw1", b.backups["sw1"].file)      # a down here removes the copies too
    assert [c["kind"] for c in copies] == ["switch"] and flash_manifest(pair).sha256 == b.backups["sw1"].sha256


def test_the_active_s_ovs_killed_the_standby_takes_over_with_one_trunk_at_every_sample(pair, tmp_path):
    active = settled(pair)
    standby = next(s for s in lab.SERVERS if s != active)
    before = server_state(pair, active).owned["sw1"]
    res = demo.observe(pair, "kill-ovs", active, DETECT_MS, tmp_path, lambda m: None)
    assert res.failover and res.to_server == standby, res
    assert res.traffic_resumed and res.one_trunk_at_every_sample, res
    assert settled(pair) == standby                      # the old active's agent rebuilt it, as standby
    assert controllers_of(pair, active) == [] and controllers_of(pair, standby)
    now = server_state(pair, standby)
    trunk = Plan.from_dict(now.plan).switches[0].trunks[0].switch_port
    assert demo.forwarding_trunks(pair) == [trunk]
    # the record of what HARMLESS owns after the fencing commit is next to the copy on the flash (down -i uses it)
    assert now.owned["sw1"] != before and flash_manifest(pair).owned == now.owned["sw1"].model_dump(mode="json")


def test_a_management_cut_alone_is_no_failure_of_the_active(pair, tmp_path):
    active = settled(pair)
    res = demo.observe(pair, "mgmt-cut", active, DETECT_MS, tmp_path, lambda m: None)
    assert not res.failover and res.traffic_resumed and res.one_trunk_at_every_sample, res
    assert settled(pair) == active


def test_a_split_brain_ends_with_exactly_one_forwarding_trunk(pair, tmp_path):
    """Management cut AND the heartbeat VLAN dropped inside the switch, both trunks alive: each server believes the
    other dead. The standby fences; the cut-off active cannot even read the switch and keeps believing it is active;
    the switch's config lets only one trunk forward all along, and once the management network is back the old
    active takes the role the device says. The new standby never fences back while BFD stays blocked."""
    active = settled(pair)
    standby = next(s for s in lab.SERVERS if s != active)
    sw = lab_ovs(pair)
    sampler = demo.Sampler(pair)
    sw.ofctl("add-flow", "br-legacy", "priority=100,dl_vlan=199,actions=drop")   # no BFD between the servers
    lab.mgmt_link(pair, active, up=False)
    try:
        with demo._as(pair, standby):
            wait_for(lambda: (record.load().last_failover or record.Failover(time="", by="", switches=[],
                                                                           from_server="", to_server="",
                                                                           reason="")).to_server == standby,
                     60, "the standby to fence the active", detail=lambda: _logs(pair))
        with demo._as(pair, active):                     # the cut-off active still believes it is active
            assert not Plan.from_dict(st.load().plan).switches[0].standby
        trunk = Plan.from_dict(server_state(pair, standby).plan).switches[0].trunks[0].switch_port
        stays(lambda: demo.forwarding_trunks(pair) == [trunk], 3, "one forwarding trunk, the new active's")
    except BaseException:
        sampler.stop()
        sw.ofctl("--strict", "del-flows", "br-legacy", "priority=100,dl_vlan=199")
        raise
    finally:
        lab.mgmt_link(pair, active, up=True)
    with demo._as(pair, active):                         # back on the network: it takes the role the device says
        wait_for(lambda: Plan.from_dict(st.load().plan).switches[0].standby, 30, "the old active to stand by",
                 detail=lambda: _logs(pair))
    sw.ofctl("--strict", "del-flows", "br-legacy", "priority=100,dl_vlan=199")
    counts = sampler.stop()
    assert counts.get("2", 0) == 0 and counts.get("1", 0) > 0, counts
    assert settled(pair) == standby


def test_up_succeeds_only_once_the_standby_stored_the_state(pair):
    """Replication before success (issue #23 item 3): with the standby's agent stopped, up fails and rolls back (the
    deployment stays as it was); with --no-standby it keeps the deployment and says the state was not replicated;
    harmless ha sync sends it once the agent is back."""
    from harmless import orchestrator
    from harmless.errors import HarmlessError
    active = settled(pair)
    standby = next(s for s in lab.SERVERS if s != active)
    before = server_state(pair, active).plan
    lab.stop_agent(pair, standby)
    try:
        with demo._as(pair, active), pytest.raises(HarmlessError, match="no answer to replicate"):
            orchestrator.up(pair["inventory"], server=active, wait_controller=30)
        assert server_state(pair, active).plan == before                  # rolled back to what was deployed
        with demo._as(pair, active):
            r = orchestrator.up(pair["inventory"], server=active, wait_controller=30, no_standby=True)
        assert r.standby == {"server": standby, "replicated": False, "reason": "--no-standby"}
    finally:
        lab.start_agent(pair, standby)
    wait_for(lambda: demo._agent_hears(pair, standby), 60, "the standby's agent")
    with demo._as(pair, active):
        p = subprocess.run([*_harmless(), "ha", "sync", "-i", pair["inventory"], "--server", active, "--json"],
                           capture_output=True, text=True, env={**os.environ, **lab.server_env(pair, active)})
    assert p.returncode == 0 and json.loads(p.stdout)["replicated"], p.stderr
    assert settled(pair) == active


def _harmless() -> list[str]:
    import sys
    return [sys.executable, "-m", "harmless.cli"]


def test_down_on_the_standby_gives_back_the_original_and_removes_both_servers_bridges(pair):
    active = settled(pair)
    standby = next(s for s in lab.SERVERS if s != active)
    ok, line = demo.undeploy(pair, standby, lambda m: None)
    assert ok, line
    for s in lab.SERVERS:
        assert server_state(pair, s) is None
        out = subprocess.run(["ip", "netns", "exec", pair["servers"][s]["netns"], "ip", "-o", "link"],
                             capture_output=True, text=True).stdout
        assert "br-of-sw1" not in out and "br-otc" not in out, (s, out)
    assert json.loads(Path(pair["dir"], "halab.json").read_text())["name"] == pair["name"]
    assert flash_manifest(pair) is None                          # the copy on the switch is gone too
