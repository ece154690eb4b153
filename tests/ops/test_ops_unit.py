"""Unit tests of the operations pieces (issue #16): exporter parsers, last-run summary, restore's journal rules,
the Grafana dashboard and the systemd units as files. No root, no OVS."""
from __future__ import annotations

import calendar
import json
import re
from pathlib import Path

import pytest

from harmless import journal
from harmless import state as st
from harmless.exporter import HarmlessCollector, last_runs, parse_port_counters
from harmless.health import flow_key
from harmless.restore import UnfinishedRunError, restore

ROOT = Path(__file__).resolve().parents[2]


def test_parse_port_counters_keeps_drops_and_errors_and_leaves_unknown_out():
    text = """OFPST_PORT reply (OF1.3) (xid=0x2): 3 ports
  port  7: rx pkts=12, bytes=1120, drop=3, errs=1, frame=0, over=0, crc=0
           tx pkts=11, bytes=1078, drop=2, errs=0, coll=0
           duration=16.069s
  port LOCAL: rx pkts=0, bytes=0, drop=0, errs=0, frame=0, over=0, crc=0
           tx pkts=0, bytes=0, drop=5, errs=0, coll=0
  port  10: rx pkts=3, bytes=294, drop=?, errs=?, frame=?, over=?, crc=?
           tx pkts=?, bytes=?, drop=?, errs=?, coll=?
"""
    assert parse_port_counters(text) == {
        7: {"rx_packets": 12, "rx_bytes": 1120, "rx_dropped": 3, "rx_errors": 1,
            "tx_packets": 11, "tx_bytes": 1078, "tx_dropped": 2, "tx_errors": 0},
        10: {"rx_packets": 3, "rx_bytes": 294}}


def test_flow_key_compares_rendered_and_dumped_flows():
    rendered = "cookie=0x4841524d4c455353,table=0,priority=100,in_port=1901,dl_vlan=107,actions=pop_vlan,output:1007"
    dumped = " cookie=0x4841524d4c455353, priority=100,dl_vlan=107,in_port=1901 actions=pop_vlan,output:1007"
    assert flow_key(rendered) == flow_key(dumped)
    assert flow_key(dumped) != flow_key(dumped.replace("output:1007", "output:1008"))


def _journal(d: Path, name: str, recs: list[dict]) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_last_runs_per_switch_newest_first_and_failures(tmp_path):
    d = tmp_path / "journal"
    _journal(d, "20261101T000000Z-1-up.jsonl", [
        {"op": "up", "step": "up.begin", "t": "2026-11-01T00:00:00Z", "switches": ["sw1", "sw2"]},
        {"op": "up", "step": "device.commit", "switch": "sw1", "t": "2026-11-01T00:00:01Z"},
        {"op": "up", "step": "device.committed", "switch": "sw1", "t": "2026-11-01T00:00:02Z"},
        {"op": "up", "step": "device.commit", "switch": "sw2", "t": "2026-11-01T00:00:02Z"},
        {"op": "up", "step": "up.end", "t": "2026-11-01T00:00:05Z"}])
    _journal(d, "20261102T000000Z-2-interrupted.jsonl", [
        {"op": "down", "step": "down.begin", "t": "2026-11-02T00:00:00Z", "switches": ["sw1"]},
        {"op": "down", "step": "device.restore", "switch": "sw1", "t": "2026-11-02T00:00:03Z"}])
    _journal(d, "20261031T000000Z-3-up.jsonl", [
        {"op": "up", "step": "up.begin", "t": "2026-10-31T00:00:00Z", "switches": ["sw1"]},
        {"op": "up", "step": "rollback.begin", "t": "2026-10-31T00:00:01Z"},
        {"op": "up", "step": "rollback.end", "t": "2026-10-31T00:00:02Z"}])
    runs = last_runs(d)
    up_end = calendar.timegm((2026, 11, 1, 0, 0, 5))
    assert runs[("sw1", "up")] == (up_end, True)                 # the newer, successful up wins
    assert runs[("sw2", "up")] == (up_end, False)                # its commit never finished
    assert runs[("sw1", "down")] == (calendar.timegm((2026, 11, 2, 0, 0, 3)), False)   # interrupted
    assert ("sw2", "down") not in runs


def test_restore_reports_an_interrupted_up_and_changes_nothing(state_dir):
    j = journal.Journal("up")
    j.record("up.begin", switches=["sw1"])
    j.record("device.commit", switch="sw1")
    before = (st.state_dir() / "journal.jsonl").read_text()
    with pytest.raises(UnfinishedRunError) as e:
        restore()
    assert "interrupted harmless up" in str(e.value) and "harmless recover" in str(e.value)
    assert (st.state_dir() / "journal.jsonl").read_text() == before     # still there, untouched


def test_an_interrupted_restore_is_finished_by_the_next_one(state_dir):
    j = journal.Journal("restore")
    j.record("restore.begin", switches=["sw1"])
    r = restore()                                  # nothing deployed: the stale restore journal is archived
    assert r.restored is False and r.reason == "nothing deployed"
    assert "interrupted harmless restore" in r.finished_journal
    assert journal.unfinished() is None


def test_an_interrupted_qos_run_is_finished_by_restore_and_an_up_is_not(state_dir):
    j = journal.Journal("qos")
    j.record("qos.begin", switch="sw1", interface="FastEthernet0/7")
    r = restore()                                  # server-only: finished by rebuilding from the state
    assert "interrupted harmless qos" in r.finished_journal and journal.unfinished() is None
    j = journal.Journal("up")
    j.record("up.begin", switches=["sw1"])
    with pytest.raises(UnfinishedRunError):         # an up touched a switch: reported, not finished
        restore()
    assert journal.unfinished()[0]["op"] == "up"


def test_exporter_without_a_deployment(state_dir):
    fams = {f.name: f for f in HarmlessCollector().collect()}
    assert fams["harmless_deployed"].samples[0].value == 0
    assert [s.value for s in fams["harmless_journal_unfinished"].samples] == [0]


def test_grafana_dashboard_uses_only_exported_metrics():
    dash = json.loads((ROOT / "packaging" / "grafana" / "harmless.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    used = {m for e in exprs for m in re.findall(r"\bharmless_[a-z_]+", e)}
    doc = (ROOT / "harmless" / "exporter.py").read_text()
    exported = {f"harmless_{m}" for m in re.findall(r"``([a-z_]+)``\s+(?:gauge|counter)", doc)}
    assert used and used <= exported, used - exported
    assert len({p["id"] for p in dash["panels"]}) == len(dash["panels"])


@pytest.mark.parametrize("unit", ["harmless-restore", "harmless-watch", "harmless-exporter"])
def test_units_run_the_packaged_cli_and_read_the_settings(unit):
    text = (ROOT / "packaging" / "systemd" / f"{unit}.service").read_text()
    assert re.search(r"^ExecStart=/usr/bin/harmless (restore|watch|exporter)$", text, re.M)
    assert "EnvironmentFile=-/etc/harmless/harmless.env" in text
    assert "NoNewPrivileges=yes" in text and "ProtectSystem=" in text


def test_napalm_interface_counters_sum_packets_and_leave_unreported_ones_out():
    """The driver maps NAPALM ``get_interfaces_counters`` (-1 = not reported) to the exporter's device counters."""
    from harmless.switch_drivers.ios.driver import IosDriver

    class Device:
        def get_interfaces_counters(self):
            return {"FastEthernet0/7": {"rx_unicast_packets": 10, "rx_multicast_packets": 2, "rx_broadcast_packets": 1,
                                        "tx_unicast_packets": 7, "tx_multicast_packets": 0,
                                        "tx_broadcast_packets": -1, "rx_octets": 1300, "tx_octets": 700,
                                        "rx_discards": 4, "tx_discards": -1},
                    "FastEthernet0/8": {}}
    drv = IosDriver("127.0.0.1", 22, "admin", "not-a-secret")
    drv._device = Device()
    assert drv.interface_counters() == {
        "FastEthernet0/7": {"rx_packets": 13, "rx_bytes": 1300, "rx_dropped": 4, "tx_bytes": 700},
        "FastEthernet0/8": {}}


def test_pmd_busy_percent_is_taken_between_scrapes():
    """OVS-DPDK PMD metrics from ``dpif-netdev/pmd-stats-show`` (block format as OVS 3.1 prints it)."""
    def block(idle, busy):
        return (f"pmd thread numa_id 0 core_id 1:\n  packets received: 100\n  idle cycles: {idle} (0.00%)\n"
                f"  processing cycles: {busy} (0.00%)\nmain thread:\n  packets received: 0\n")

    class Ovs:
        texts = [block(900, 100), block(1200, 800)]

        def appctl(self, *args, timeout=30):
            assert args == ("dpif-netdev/pmd-stats-show",)
            return self.texts.pop(0)

    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
    c = HarmlessCollector()
    ovs = Ovs()
    values = []
    for _ in range(2):
        fam = {"pmd_c": CounterMetricFamily("harmless_pmd_cycles", "", labels=["pmd", "kind"]),
               "pmd_b": GaugeMetricFamily("harmless_pmd_busy_percent", "", labels=["pmd"])}
        c._pmd(fam, ovs)
        values.append(({tuple(s.labels.values()): s.value for s in fam["pmd_c"].samples},
                       [(s.labels["pmd"], s.value) for s in fam["pmd_b"].samples]))
    assert values[0] == ({("pmd1", "busy"): 100, ("pmd1", "idle"): 900}, [("pmd1", 10.0)])   # since OVS started
    assert values[1][1] == [("pmd1", 70.0)]             # (800-100) / ((800-100) + (1200-900))


def test_device_poller_survives_any_driver_failure_and_keeps_when_it_last_answered(monkeypatch):
    from harmless import deployment
    from harmless.exporter import DevicePoller

    class Flaky:
        calls = 0

        def port_properties(self):                     # a driver without it: the poller falls back to link states
            raise NotImplementedError

        def link_states(self):
            Flaky.calls += 1
            if Flaky.calls > 1:
                raise TypeError("driver bug")          # not a HarmlessError: must not end the poller
            return {"FastEthernet0/7": True}

        def interface_counters(self):
            return {}

        def close(self):
            pass

    rec = {"name": "sw1", "driver": "ios", "host": "192.0.2.1", "username": "admin", "password_env": "X",
           "trunks": [{"switch_port": "Gi0/1", "server_interface": "t0"}], "access_ports": ["FastEthernet0/7"]}
    monkeypatch.setattr(st, "load", lambda: st.DeploymentState(plan={"switches": [{"name": "sw1"}]},
                                                               switches={"sw1": rec}, inventory="inv.yaml"))
    monkeypatch.setattr(deployment, "connect", lambda sw, where: Flaky())
    p = DevicePoller(interval=0)
    p.poll_once()
    first = p.snapshot()["sw1"]
    assert first.ok and first.links == {"FastEthernet0/7": True} and first.t > 0
    p.poll_once()
    second = p.snapshot()["sw1"]
    assert second.ok is False and second.t == first.t


def test_typed_results_dump_the_keys_the_cli_printed_before():
    """restore, qos set/clear/show/finish and watch events: ``model_dump(mode="json")`` has today's keys."""
    from harmless.linkwatch import LinkEvent
    from harmless.qos.live import QosChange, QosFinish, QosPortView, QosShow
    from harmless.restore import RestoreOvs, RestoreResult, SwitchRestore
    before = SwitchRestore(bridge="br-of-sw1", bridge_was_present=False, translator_flows_before=0,
                           translator_flows_expected=4)
    assert RestoreResult(restored=False, reason="nothing deployed").model_dump(mode="json") == {
        "restored": False, "reason": "nothing deployed", "switches": {}, "ovs": {}, "seconds": 0.0,
        "finished_journal": None}
    dry = RestoreResult(restored=False, reason="dry run", switches={"sw1": before},
                        ovs=RestoreOvs(private=True, started=["ovs-vswitchd"])).model_dump(mode="json")
    assert list(dry["switches"]["sw1"]) == ["bridge", "bridge_was_present", "translator_flows_before",
                                            "translator_flows_expected"]
    assert dry["ovs"] == {"private": True, "started": ["ovs-vswitchd"]}
    built = before.model_copy(update={"translator_flows": 4, "ports": 2, "held_down": [], "controllers": {}})
    assert list(built.model_dump(mode="json")) == ["bridge", "bridge_was_present", "translator_flows_before",
                                                   "translator_flows_expected", "translator_flows", "ports",
                                                   "held_down", "controllers"]
    c = QosChange(switch="sw1", interface="Fa0/7", ofport=7, vid=107, from_=None, to={"egress_mbps": 5.0},
                  dry_run=True)
    assert list(c.model_dump(mode="json")) == ["switch", "interface", "ofport", "vid", "from", "to", "dry_run"]
    c.apply_ms = 1.5
    assert c.model_dump(mode="json")["apply_ms"] == 1.5
    assert QosShow(deployed=False).model_dump(mode="json") == {"deployed": False, "ports": []}
    row = QosPortView(switch="sw1", interface="Fa0/7", ofport=7, vid=107, trunk="t0", qos=None, source=None,
                      meter=None, queue=None)
    assert QosShow(deployed=True, ports=[row], error="x").model_dump(mode="json")["error"] == "x"
    assert QosFinish(applied=True).model_dump(mode="json") == {"recovered": "qos", "applied": True}
    ev = LinkEvent(switch="sw1", interface="Fa0/7", ofport=7, link="down", device_state="down",
                   detected_at=1.00049, applied_at=1.0126)
    assert ev.model_dump(mode="json") == {"switch": "sw1", "interface": "Fa0/7", "ofport": 7, "link": "down",
                                          "device_state": "down", "detected_at": 1.0, "applied_at": 1.013}
