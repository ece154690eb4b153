"""Per-port QoS on the lab (issue #15), one lab for the module: ``up`` with ``qos`` in the inventory builds the
meter, the queue, the kernel classifier and the flows (packet fate via ``ofproto/trace`` and counters after pings);
a live ``harmless qos set`` changes the queue without touching the flows; an ovs-vswitchd restart loses the meters
and ``up`` restores the live value; ``qos clear`` removes the meter; ``down`` leaves no QoS/Queue row in OVSDB.

No rate is asserted here (speed is measured by ``harmless qos demo``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from click.testing import CliRunner

from harmless import journal
from harmless import deployment
from harmless import orchestrator as orch
from harmless.cli import main
from harmless.errors import InputError
from harmless import state as st
from harmless.lab import topology as lab
from harmless.otc import flows
from harmless.otc import qos as qos_side
from harmless.plan import Plan
from harmless.qos import live
from tests.lab.conftest import make_lab

pytestmark = pytest.mark.lab

TX, RX = "FastEthernet0/7", "FastEthernet0/10"
TRUNK = flows.trunk_ofport(1, 0)


@pytest.fixture(scope="module")
def qlab(tmp_path_factory):
    gen = make_lab(tmp_path_factory, hosts=(7, 10))
    lab_ = next(gen)
    try:
        inv = yaml.safe_load(lab_.inventory.read_text())
        inv["switches"][0]["access_ports"] = [{"interface": TX, "qos": {"ingress_mbps": 20}},
                                              {"interface": RX, "qos": {"egress_mbps": 30}}]
        lab_.inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
        orch.up(str(lab_.inventory), wait_controller=30)
        yield lab_
    finally:
        gen.close()          # harmless down if still deployed, controller stopped, lab removed


def _ovs():
    return deployment.state_ovs(st.load())


def _trace(ovs, flow: str) -> str:
    return ovs.appctl("ofproto/trace", "br-otc", flow)


def _queue_rate(ovs) -> str:
    rows = qos_side.read_rows(ovs)
    qos_uuid = rows["ports"][_trunk_iface()]
    queue = rows["queue"][rows["qos"][qos_uuid]["queues"][10]]
    return queue["other_config"]["max-rate"]


def _trunk_iface() -> str:
    return st.load().plan["switches"][0]["trunks"][0]["server_interface"]


def _tc(ovs, *args) -> str:
    return subprocess.run(["tc", "-n", ovs.netns, *args], capture_output=True, text=True, timeout=30).stdout


def test_up_builds_meter_queue_classifier_and_flows(qlab):
    ovs = _ovs()
    meters = qos_side.parse_meters(ovs.ofctl("-O", "OpenFlow13", "dump-meters", "br-otc"))
    assert meters == {1007: {"kbps": 20000, "burst_kb": 6000}}
    # packet fate: the port's VID from the trunk goes through meter 1007, then to patch port 1007
    t = _trace(ovs, f"in_port={TRUNK},dl_vlan=107,dl_type=0x0800,nw_src=10.0.0.7,nw_dst=10.0.0.10")
    assert "meter:1007" in t and "pop_vlan" in t and "output:1007" in t
    # towards port 10: queue 10 selected, tagged with VID 110, out of the trunk
    t = _trace(ovs, "in_port=1010,dl_type=0x0800,nw_src=10.0.0.7,nw_dst=10.0.0.10")
    assert "set_queue:10" in t and f"output:{TRUNK}" in t and "4206->vlan_vid" in t
    rows = qos_side.read_rows(ovs)
    trunk = _trunk_iface()
    qrow = rows["qos"][rows["ports"][trunk]]
    assert qrow["type"] == "linux-htb" and set(qrow["queues"]) == {10}
    assert rows["queue"][qrow["queues"][10]]["other_config"]["max-rate"] == "30000000"
    assert "ceil 30Mbit" in _tc(ovs, "class", "show", "dev", trunk, "classid", "1:b")
    assert "pref 110 bpf" in _tc(ovs, "filter", "show", "dev", trunk, "parent", "1:")
    before = qos_side.tc_classes(ovs, trunk).get("1:b", {}).get("sent_packets", 0)
    assert lab.ping(qlab.info, 7, 10, count=5, interval=0.1) == 0.0
    view = qos_side.port_view(ovs, Plan.from_dict(st.load().plan))["sw1"]
    assert view[7]["meter"]["packets"] >= 5                  # echo requests were metered
    assert view[10]["queue"]["sent_packets"] - before >= 5    # and reached h10 through queue 10's class
    assert view[7]["queue"] is None and view[10]["meter"] is None


def test_live_change_keeps_flows_and_is_journaled(qlab):
    ovs = _ovs()
    push = [ln for ln in ovs.ofctl("-O", "OpenFlow13", "dump-flows", "br-otc", "in_port=1010").splitlines()
            if "actions=" in ln][0]
    n_before = int(push.split("n_packets=")[1].split(",")[0])
    r = live.set_qos("sw1", "Fa0/10", egress_mbps=60)
    assert r.from_["egress_mbps"] == 30 and r.to["egress_mbps"] == 60
    assert _queue_rate(ovs) == "60000000"
    assert "ceil 60Mbit" in _tc(ovs, "class", "show", "dev", _trunk_iface(), "classid", "1:b")
    push = [ln for ln in ovs.ofctl("-O", "OpenFlow13", "dump-flows", "br-otc", "in_port=1010").splitlines()
            if "actions=" in ln][0]
    assert int(push.split("n_packets=")[1].split(",")[0]) >= n_before > 0   # same flow, counters kept
    s = st.load()
    assert s.qos_live["sw1"][RX]["qos"]["egress_mbps"] == 60
    assert s.qos_live["sw1"][RX]["inventory"]["egress_mbps"] == 30
    last = sorted((st.state_dir() / "journal").glob("*-qos.jsonl"))[-1]
    steps = [json.loads(x)["step"] for x in last.read_text().splitlines()]
    assert steps == ["qos.begin", "state.save", "server.qos", "qos.end"]


def test_ovs_restart_then_up_restores_the_live_value(qlab):
    ovs = _ovs()
    ovs.stop_vswitchd()
    ovs.start()
    assert qos_side.parse_meters(ovs.ofctl("-O", "OpenFlow13", "dump-meters", "br-otc")) == {}
    orch.up(str(qlab.inventory), wait_controller=30)
    assert qos_side.parse_meters(ovs.ofctl("-O", "OpenFlow13", "dump-meters", "br-otc")) == \
        {1007: {"kbps": 20000, "burst_kb": 6000}}
    assert _queue_rate(ovs) == "60000000"                        # the live value, not the inventory's 30
    assert "pref 110 bpf" in _tc(ovs, "filter", "show", "dev", _trunk_iface(), "parent", "1:")
    assert "set_queue:10" in _trace(ovs, "in_port=1010,dl_type=0x0800")
    assert lab.ping(qlab.info, 7, 10, count=2, interval=0.2) == 0.0


def test_clear_removes_the_meter_and_its_instruction(qlab):
    ovs = _ovs()
    live.clear_qos("sw1", TX)
    assert qos_side.parse_meters(ovs.ofctl("-O", "OpenFlow13", "dump-meters", "br-otc")) == {}
    assert "meter:" not in _trace(ovs, f"in_port={TRUNK},dl_vlan=107,dl_type=0x0800")
    shown = {p.interface: p for p in live.show().ports}
    assert shown[TX].qos is None and shown[RX].source == "live" and shown[RX].queue["id"] == 10


def test_killed_qos_set_is_finished_by_recover(qlab):
    ovs = _ovs()
    env = {**os.environ, "HARMLESS_STATE_DIR": str(st.state_dir()), "HARMLESS_FAULT_AT": "server.qos:KILL"}
    p = subprocess.run([str(Path(sys.executable).parent / "harmless"), "qos", "set", "sw1", "Fa0/10", "--egress",
                        "40"], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == -9, p.stderr                          # killed after journaling server.qos
    recs = journal.unfinished()
    assert recs[-1]["step"] == "server.qos" and recs[0]["op"] == "qos"
    assert st.load().plan["switches"][0]["ports"][1]["qos"]["egress_mbps"] == 40   # state written first
    assert _queue_rate(ovs) == "60000000"                        # OVS not yet changed
    with pytest.raises(InputError, match="recover"):
        live.set_qos("sw1", "Fa0/10", egress_mbps=45)
    assert orch.recover().recovered == "qos"
    assert _queue_rate(ovs) == "40000000" and journal.is_finished(journal.unfinished())


def test_cli_show_and_status(qlab):
    r = CliRunner().invoke(main, ["qos", "show", "--json"])
    assert r.exit_code == 0, r.output
    ports = {p["interface"]: p for p in json.loads(r.output)["ports"]}
    assert ports[RX]["qos"]["egress_mbps"] == 40 and ports[RX]["queue"]["other_config"]["max-rate"] == "40000000"
    assert ports[TX]["meter"] is None
    r = CliRunner().invoke(main, ["status", "--no-device"])
    assert r.exit_code == 0 and "qos FastEthernet0/10: egress 40 Mbit/s htb" in r.output, r.output
    r = CliRunner().invoke(main, ["qos", "set", "sw1", "Fa0/10", "--egress", "-3"])
    assert r.exit_code == 2 and "greater than 0" in r.output


def test_down_leaves_no_qos_or_queue_row(qlab):
    ovs = _ovs()
    assert qos_side.read_rows(ovs)["queue"]                      # there is something to remove
    db = Path(ovs.base_dir) / "db" / "conf.db"
    trunk = _trunk_iface()
    assert "qdisc htb 1:" in _tc(ovs, "qdisc", "show", "dev", trunk)
    orch.down()
    assert "htb" not in _tc(ovs, "qdisc", "show", "dev", trunk)    # OVS took the qdisc and its filters away
    assert "bpf" not in _tc(ovs, "filter", "show", "dev", trunk)
    for table in ("QoS", "Queue"):
        p = subprocess.run(["ovsdb-tool", "query", str(db),
                            json.dumps(["Open_vSwitch", {"op": "select", "table": table, "where": []}])],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)[0]["rows"] == [], f"{table} rows left after down"
