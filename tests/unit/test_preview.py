"""Before any change, the whole picture (issue #25), offline on realistic configs: every refusal of every port in one
run with the inventory text that fixes it, explanations printed once, trunk checks (LAG / uplink / shut / load), the
full device diff; the findings model; port speeds; the controller check's verdicts (no network: the probe results are
given)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harmless import offline, preflight
from harmless.cli import main
from harmless.errors import Finding, Refused, report_lines, summary
from harmless.inventory import parse_inventory
from harmless.otc import reach
from harmless.switch_drivers import speeds

HERE = Path(__file__).parent
C3850 = HERE / "preview_configs" / "c3850_48p_uplink_po_voice_dot1x.cfg"
EOS_720XP = HERE / "ports_corpus" / "eos" / "access_720xp.cfg"


def inventory(tmp_path: Path, access, trunks, driver="ios", **switch) -> Path:
    sw = {"name": "accb2", "driver": driver, "host": "192.0.2.48", "username": "harmless", "password_env": "HL_X",
          "trunks": trunks, "access_ports": access, "openflow": {"controllers": ["tcp:192.0.2.9:6653"]}, **switch}
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump({"switches": [sw]}, sort_keys=False))
    return p


def plan_cli(tmp_path: Path, inv: Path, cfg: Path, *extra: str):
    r = CliRunner().invoke(main, ["plan", "-i", str(inv), "--config", f"accb2={cfg}", *extra],
                           env={"HARMLESS_STATE_DIR": str(tmp_path / "state"), "HL_X": "x", "COLUMNS": "200"})
    return r.exit_code, r.stdout, r.stderr


def lines_of(text: str, label: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith(f"{label}: ")]


# ----------------------------------------------------------------------------- the 48-port Catalyst
FIRST_TRY = ["Gi1/0/1", "Gi1/0/2", "Gi1/0/3", "Gi1/0/4", "Gi1/0/25", "Gi1/0/26", "Gi1/0/37", "Gi1/0/38",
             "Gi1/0/41", "Gi1/0/45"]


def test_every_refusal_of_a_48_port_catalyst_in_one_run(tmp_path):
    """Uplink Port-channel1 named as the trunk, voice + 802.1X ports, a printer with port security, an AP trunk:
    one run lists all nine refusals, each with the inventory text that fixes it, and explains keep once."""
    inv = inventory(tmp_path, FIRST_TRY, [{"switch_port": "Port-channel1", "server_interface": "eth1"}])
    code, out, err = plan_cli(tmp_path, inv, C3850)
    assert code == 2, err
    errors = lines_of(err, "error")
    assert len(errors) == 9, err
    assert "accb2 Gi1/0/1 has a voice VLAN (20) and 802.1X/MAB authentication" in errors[0]
    assert "{interface: Gi1/0/1, keep: [voice, dot1x]}" in errors[0]
    assert "{interface: Gi1/0/25, keep: [voice]}" in errors[4]
    assert "{interface: Gi1/0/41, keep: [port_security]}" in errors[6]
    assert "accb2 Gi1/0/45 is a trunk (native VLAN 40, allowed VLANs 10,40)" in errors[7]
    assert errors[8].startswith(f"error: {inv}: switches[0].trunks[0].shared: accb2 Port-channel1 is a link "
                                "aggregation group (TenGigabitEthernet1/1/1, TenGigabitEthernet1/1/2) and a trunk "
                                "that carries VLANs 10,20,30,40,99 now (an uplink)")
    assert "{switch_port: Port-channel1, server_interface: eth1, shared: true}" in errors[8]
    notes = lines_of(err, "note")
    assert len(notes) == 3                     # voice, dot1x, port security: each explained once
    assert notes[0].startswith("note: keep: [voice]: the voice VLAN stays on the legacy switch") and \
        notes[0].endswith("(accb2: Gi1/0/1, Gi1/0/2, Gi1/0/3, Gi1/0/4, Gi1/0/25, Gi1/0/26)")
    assert err.rstrip().endswith("9 refusals: nothing was changed")
    print("\n" + err)


def test_the_48_port_catalyst_fixed_plans_with_warnings_and_the_full_diff(tmp_path):
    access = [{"interface": "Gi1/0/1", "keep": ["voice", "dot1x"]},
              {"interface": "Gi1/0/2", "keep": ["voice", "dot1x"]},
              {"interface": "Gi1/0/25", "keep": ["voice"]}, "Gi1/0/37", "Gi1/0/38"]
    inv = inventory(tmp_path, access, [{"switch_port": "Gi1/0/48", "server_interface": "eth1"}])
    code, out, err = plan_cli(tmp_path, inv, C3850)
    assert code == 0, err
    text = " ".join(out.split())
    assert "warning: " + f"{inv}: switches[0].trunks[0].switch_port: accb2 Gi1/0/48 is shut down " \
           "(administratively down): the plan brings it up (no shutdown); down shuts it again" in text
    assert "accb2 Gi1/0/48 carries 5 migrated ports, 5 Gbit/s over 1 Gbit/s: 5:1 (limit 12:1)" in text
    assert "note: GigabitEthernet1/0/1, GigabitEthernet1/0/2, GigabitEthernet1/0/25 keep voice on the switch" in text
    diff = out[out.index("switch config diff for accb2"):]
    assert diff.splitlines()[0] == "switch config diff for accb2 (- removed, + added: 6 lines removed, 17 added)"
    assert " interface GigabitEthernet1/0/1\n- switchport access vlan 10\n+ switchport access vlan 101\n" in diff
    assert " interface GigabitEthernet1/0/48\n- shutdown\n+ switchport mode trunk\n" \
           "+ switchport trunk allowed vlan 101,102,125,137,138\n" in diff
    print("\n" + out)


def test_json_carries_findings_and_the_structured_diff(tmp_path):
    inv = inventory(tmp_path, ["Gi1/0/37"], [{"switch_port": "Gi1/0/48", "server_interface": "eth1"}])
    code, out, err = plan_cli(tmp_path, inv, C3850, "--json")
    assert code == 0, err
    d = json.loads(out.strip().splitlines()[-1])
    assert [(f["severity"], f["kind"]) for f in d["findings"]] == [("warning", "trunk-shutdown"),
                                                                   ("note", "trunk-load"),
                                                                   ("note", "mac-learning-unknown")]
    ch = d["changes"]["accb2"]
    assert ch["syntax"] == "ios" and ch["text"].startswith("+vlan 137\n")
    assert {"context": "interface GigabitEthernet1/0/37", "change": "changed", "lines": [
        {"op": "-", "text": "switchport access vlan 10"}, {"op": "+", "text": "switchport access vlan 137"}]} \
        in ch["blocks"]


# ----------------------------------------------------------------------------- trunks on realistic configs
def findings(tmp_path, cfg: Path, access, trunk: dict, driver="ios", **switch) -> list[Finding]:
    """Offline plan findings (refusals raised are returned too)."""
    inv = parse_inventory(inventory(tmp_path, access, [trunk], driver=driver, **switch).read_text(), "inv.yaml")
    try:
        return offline.plan_offline(inv, "inv.yaml", {"accb2": cfg}).findings
    except Refused as e:
        return e.findings


@pytest.mark.parametrize("cfg, driver, access, trunk, kind, words", [
    (C3850, "ios", ["Gi1/0/37"], "Port-channel1", "trunk-in-use",
     ["link aggregation group (TenGigabitEthernet1/1/1, TenGigabitEthernet1/1/2)", "carries VLANs 10,20,30,40,99"]),
    (C3850, "ios", ["Gi1/0/37"], "TenGigabitEthernet1/1/3", None, []),          # a free 10G port
    (C3850, "ios", ["Gi1/0/37"], "Gi1/0/46", "trunk-in-use", ["a trunk that carries VLANs 10 now (an uplink)"]),
    (C3850, "ios", ["Gi1/0/37"], "Te1/1/1", "trunk-lag-member", ["member of Port-channel1",
                                                                 "use Port-channel1 itself"]),
    (EOS_720XP, "eos", ["Ethernet1"], "Port-Channel100", "trunk-in-use",
     ["link aggregation group (Ethernet49/1, Ethernet50/1)", "carries VLANs 10,20,30,4000"]),
    (EOS_720XP, "eos", ["Ethernet1"], "Ethernet4", None, []),
])
def test_trunk_refusals_on_realistic_configs(tmp_path, cfg, driver, access, trunk, kind, words):
    found = findings(tmp_path, cfg, access, {"switch_port": trunk, "server_interface": "eth1"}, driver=driver)
    refusals = [f for f in found if f.severity == "refusal"]
    if kind is None:
        assert refusals == [], refusals
        return
    assert [f.kind for f in refusals] == [kind], refusals
    assert refusals[0].where == "inv.yaml: switches[0].trunks[0]" + (".shared" if kind == "trunk-in-use" else
                                                                        ".switch_port")
    for w in words:
        assert w in refusals[0].problem + refusals[0].fix


def test_a_shared_trunk_keeps_its_vlans_ios_and_eos(tmp_path):
    inv = parse_inventory(inventory(tmp_path, ["Gi1/0/37"], [{"switch_port": "Gi1/0/46", "server_interface": "eth1",
                                                               "shared": True}]).read_text(), "inv.yaml")
    res = offline.plan_offline(inv, "inv.yaml", {"accb2": C3850})
    assert [(f.severity, f.kind) for f in res.findings][:1] == [("warning", "trunk-shared")]
    assert "shared: true keeps VLANs 10 on it and adds HARMLESS's" in res.findings[0].problem
    assert " interface GigabitEthernet1/0/46\n- switchport trunk allowed vlan 10,40\n" \
           "+ switchport trunk allowed vlan 10,40,137\n" in res.changes["accb2"].text()
    # EOS: the uplink LAG shared on purpose: the VIDs are added to its list
    inv = parse_inventory(inventory(tmp_path, ["Ethernet1"], [{"switch_port": "Port-Channel100",
                                                                "server_interface": "eth1", "shared": True}],
                                    driver="eos").read_text(), "inv.yaml")
    res = offline.plan_offline(inv, "inv.yaml", {"accb2": EOS_720XP})
    assert "switchport trunk allowed vlan add 101" in res.configs["accb2"]
    assert " interface Port-Channel100\n-   switchport trunk allowed vlan 10,20,30,4000\n" \
           "+   switchport trunk allowed vlan 10,20,30,101,4000\n" in res.changes["accb2"].text()


def test_a_shut_eos_trunk_is_brought_up_in_the_plan(tmp_path):
    inv = parse_inventory(inventory(tmp_path, ["Ethernet1"], [{"switch_port": "Ethernet5", "server_interface": "eth1"}],
                                    driver="eos").read_text(), "inv.yaml")
    res = offline.plan_offline(inv, "inv.yaml", {"accb2": EOS_720XP})
    assert [f.kind for f in res.findings if f.severity == "warning"] == ["trunk-shutdown"]
    assert res.plan.switches[0].trunks[0].bring_up is True
    assert "   no shutdown\n" in res.configs["accb2"]
    assert " interface Ethernet5\n-   shutdown\n" in res.changes["accb2"].text()


def test_trunk_load_warns_above_the_limit(tmp_path):
    keep = [{"interface": f"Gi1/0/{n}", "keep": ["voice", "dot1x"]} for n in range(1, 14)]
    found = findings(tmp_path, C3850, keep, {"switch_port": "Gi1/0/48", "server_interface": "eth1"})
    load = [f for f in found if f.kind.startswith("trunk-oversubscribed")]
    assert len(load) == 1 and "13 migrated ports, 13 Gbit/s over 1 Gbit/s: 13:1 (limit 12:1)" in load[0].problem
    found = findings(tmp_path, C3850, keep[:4], {"switch_port": "Gi1/0/48", "server_interface": "eth1"},
                     oversubscription_limit=3)
    assert [f.problem for f in found if f.kind == "trunk-oversubscribed"][0].endswith(
        "4 Gbit/s over 1 Gbit/s: 4:1 (limit 3:1); hairpinned traffic will queue and drop on it")
    found = findings(tmp_path, C3850, keep[:4], {"switch_port": "TenGigabitEthernet1/1/3", "server_interface": "eth1"})
    assert [f.problem.split(": ", 1)[1] for f in found if f.kind == "trunk-load"] == ["0.4:1 (limit 12:1)"]


def test_trunk_load_unknown_speed_is_said():
    """EOS EthernetN names no speed and the 720XP config sets none: the load is not compared, and that is said."""
    sw = parse_inventory(yaml.safe_dump({"switches": [{
        "name": "s", "driver": "eos", "host": "h", "username": "u", "password_env": "X", "access_ports": ["Ethernet1"],
        "trunks": [{"switch_port": "Ethernet4", "server_interface": "eth1"}]}]}), "i.yaml").switches[0]
    from harmless.switch_drivers.eos.model import parse_model
    m = parse_model(EOS_720XP.read_text())
    found = preflight.load_findings(sw, m, preflight.Session(where="w", driver="eos"), {"Ethernet4": ["Ethernet1"]})
    assert [f.kind for f in found] == ["trunk-load-unknown"]
    assert "their speed or the trunk's is unknown" in found[0].problem


@pytest.mark.parametrize("driver, name, lines, mbps", [
    ("ios", "FastEthernet0/7", (), 100), ("ios", "GigabitEthernet1/0/7", (), 1000),
    ("ios", "TenGigabitEthernet1/1/1", (), 10_000), ("ios", "GigabitEthernet1/0/7", ("speed 100",), 100),
    ("ios", "TwoGigabitEthernet1/0/1", (), 2500), ("ios", "HundredGigE1/0/49", (), 100_000),
    ("netmiko_cli", "FastEthernet0/1", (), 100), ("eos", "Ethernet7", (), None),
    ("eos", "Ethernet7", ("speed forced 10000full",), 10_000), ("eos", "Ethernet49/1", ("speed 100g",), 100_000),
    ("junos", "ge-0/0/7", (), 1000), ("junos", "xe-0/1/0", (), 10_000), ("junos", "et-0/0/48", (), None),
    ("procurve", "7", (), None), ("procurve", "7", ("speed-duplex 100-full",), 100),
    ("ios", "GigabitEthernet1/0/7", ("speed auto",), 1000),
])
def test_port_speeds(driver, name, lines, mbps):
    assert speeds.port_speed_mbps(driver, name, lines) == mbps


def test_speed_formats():
    assert speeds.format_mbps(100) == "100 Mbit/s" and speeds.format_mbps(2500) == "2.5 Gbit/s"
    assert speeds.lag_speed_mbps([10_000, 10_000]) == 20_000 and speeds.lag_speed_mbps([1000, None]) is None


# ----------------------------------------------------------------------------- the findings model
def test_report_lines_group_explanations_and_summary():
    f = [Finding(severity="note", kind="n", where="w", problem="a note"),
         Finding(severity="refusal", kind="k", where="w", problem="p1", fix="f", switch="s", port="A",
                 explain=("keep: [voice]: x",)),
         Finding(severity="refusal", kind="k", where="w", problem="p2", switch="s", port="B",
                 explain=("keep: [voice]: x", "keep: [dot1x]: y")),
         Finding(severity="warning", kind="w", where="", problem="careful")]
    assert report_lines(f) == [("error", "w: p1 (fix: f)"), ("error", "w: p2"), ("warning", "careful"),
                               ("note", "w: a note"), ("note", "keep: [voice]: x (s: A, B)"),
                               ("note", "keep: [dot1x]: y (s: B)")]
    assert summary(f) == "2 refusals, 1 warning, 1 note" and summary([]) == "nothing to report"
    e = Refused(f)
    assert str(e) == "w: p1 (fix: f)\nw: p2" and e.exit_code == 2 and e.where == "w" and len(e.refusals) == 2


# ----------------------------------------------------------------------------- the controller check's verdicts
def test_controller_verdicts_per_bridge(monkeypatch, tmp_path):
    """None reachable: a refusal naming each target's reason and --no-wait; one of two: a warning; no HELLO: a
    warning. (The probe itself runs against real controllers in tests/ovs and tests/lab.)"""
    inv = parse_inventory(yaml.safe_dump({"switches": [
        {"name": f"s{i}", "driver": "ios", "host": "h", "port": 22 + i, "username": "u", "password_env": "X",
         "access_ports": ["Fa0/7"], "trunks": [{"switch_port": "Gi0/1", "server_interface": f"eth{i}"}],
         "openflow": {"controllers": targets}}
        for i, targets in enumerate([["tcp:10.0.0.1:6653", "tcp:10.0.0.2:6653"], ["tcp:10.0.0.3:6653"],
                                     ["tcp:10.0.0.4:6653"]])]}), "inv.yaml")
    answers = {"tcp:10.0.0.1:6653": {"stage": "tcp", "reason": "Connection refused", "hello": None},
               "tcp:10.0.0.2:6653": {"stage": "ok", "reason": "", "hello": "OpenFlow13"},
               "tcp:10.0.0.3:6653": {"stage": "tls", "reason": "tlsv1 alert unknown ca", "hello": None},
               "tcp:10.0.0.4:6653": {"stage": "hello", "reason": "connected, but no OpenFlow HELLO", "hello": None}}
    monkeypatch.setattr(reach, "probe", lambda target, tls=None, timeout=3: answers[target])
    checks, found = reach.check_controllers(inv, "inv.yaml")
    assert [c.stage for c in checks] == ["tcp", "ok", "tls", "hello"]
    assert [(f.severity, f.kind, f.switch) for f in found] == [
        ("warning", "controller-partly-unreachable", "s0"), ("refusal", "controller-unreachable", "s1"),
        ("warning", "controller-no-hello", "s2")]
    assert found[1].line() == ("inv.yaml: switches[1].openflow.controllers: no controller of br-of-s1 is reachable: "
                               "tcp:10.0.0.3:6653: tlsv1 alert unknown ca (fix: start the controller (or fix the "
                               "address, port, firewall or TLS files) before up; up --no-wait skips this check and "
                               "migrates without a controller)")


# ----------------------------------------------------------------------------- renders of shared and shut trunks
def test_shared_and_shut_trunks_render_and_a_second_merge_is_empty():
    from harmless.switch_drivers import devdiff
    from harmless.switch_drivers.base import AccessPortChange, TrunkChange
    from harmless.switch_drivers.ios import render as ios_render
    from harmless.switch_drivers.junos import render as junos_render

    run = ("interface FastEthernet0/7\n switchport access vlan 10\n switchport mode access\n"
           "interface GigabitEthernet0/2\n switchport trunk allowed vlan 10,20\n switchport mode trunk\n shutdown\n")
    access = [AccessPortChange("FastEthernet0/7", 107, "harmless-sw1-p7")]
    cand = ios_render.render_config(access, [TrunkChange("GigabitEthernet0/2", (107,), shared=True, bring_up=True)],
                                    current=run)
    assert "interface GigabitEthernet0/2\n switchport mode trunk\n switchport trunk allowed vlan 10,20,107\n" \
           " no shutdown\n" in cand
    after = devdiff.merged(run, cand, "ios")
    again = ios_render.render_config(access, [TrunkChange("GigabitEthernet0/2", (107,), shared=True)], current=after)
    assert devdiff.merge_diff(after, again, "ios").empty
    # a shared trunk that carries every VLAN keeps doing so: no allowed line
    every = "interface GigabitEthernet0/2\n switchport mode trunk\n"
    cand = ios_render.render_config(access, [TrunkChange("GigabitEthernet0/2", (107,), shared=True)], current=every)
    assert "allowed vlan" not in cand
    # without the current config: "add"
    assert " switchport trunk allowed vlan add 107\n" in ios_render.render_config(
        access, [TrunkChange("GigabitEthernet0/2", (107,), shared=True)])
    # Junos: a shared trunk keeps its members (no delete of its family), a shut one loses its disable
    cand = junos_render.render_config([AccessPortChange("ge-0/0/7", 107, "harmless-sw1-p7")],
                                      [TrunkChange("ge-0/0/23", (107,), shared=True, bring_up=True)])
    assert "delete interfaces ge-0/0/23 unit 0 family ethernet-switching" not in cand
    assert "delete interfaces ge-0/0/23 disable\n" in cand
    assert "delete interfaces ge-0/0/7 unit 0 family ethernet-switching\n" in cand


def test_a_disabled_procurve_trunk_is_refused(tmp_path):
    cfg = tmp_path / "p.cfg"
    cfg.write_text('hostname "sw"\ninterface 24\n   disable\n   exit\nvlan 1\n   name "DEFAULT_VLAN"\n'
                   '   untagged 1-24\n   exit\n')
    sw = parse_inventory(yaml.safe_dump({"switches": [{
        "name": "s", "driver": "procurve", "host": "h", "username": "u", "password_env": "X",
        "access_ports": ["7"], "trunks": [{"switch_port": "24", "server_interface": "eth1"}]}]}), "i.yaml").switches[0]
    from harmless.switch_drivers.procurve.model import parse_model
    found = preflight.switch_findings(sw, parse_model(cfg.read_text()), preflight.Session(where="w", driver="procurve"))
    assert [(f.severity, f.kind) for f in found] == [("refusal", "trunk-shutdown")]
    assert "interface 24 enable" in found[0].fix
