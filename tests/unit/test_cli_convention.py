"""The command-line convention (docs/cli.md): every command's table at 80 columns in a terminal and in a pipe keeps
every header and cell whole, on realistic data; exit codes (nothing to do = 0); "did you mean" for a misspelled
inventory key, command and switch; --switch, --config [SWITCH=]FILE and the older forms.

The CLI runs through click's CliRunner: "a terminal" is rich's ``TTY_COMPATIBLE=1`` with ``COLUMNS=80`` (what rich
reads from a real terminal), "a pipe" is CliRunner's plain stdout. A table is read back (tests/lib/tables.py) and
compared cell by cell with what ``--json`` or the typed result says; commands that need a deployment render a typed
result given to them (their renderers are what is under test; the data comes from the orchestrator in the lab).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harmless import cli, orchestrator
from harmless.cli import main
from harmless.ports import vid_ranges
from tests.lib.tables import Table, read_plain, read_terminal, squash

CORPUS = Path(__file__).parent / "ports_corpus"
TERMINAL = {"TTY_COMPATIBLE": "1", "COLUMNS": "80", "TERM": "xterm-256color", "NO_COLOR": "1"}
PIPE = {"TTY_COMPATIBLE": None, "FORCE_COLOR": None, "COLUMNS": "80"}


def run(args, env=None):
    r = CliRunner().invoke(main, args, env=env or {})
    return r.exit_code, r.stdout, r.stderr


def catalyst_48() -> str:
    """A Catalyst 2960-48 access switch as `show running-config` prints it: 44 user ports (phones with a voice VLAN,
    802.1X and MAB, port security, long descriptions, a shut port), two uplinks in a LACP port-channel, a trunk to
    the HARMLESS server, the management SVI."""
    out = ["!", "version 15.2", "hostname access-floor3-west", "!", "vtp mode transparent", "!",
           "spanning-tree mode rapid-pvst", "!"]
    for vid, name in ((10, "DATA"), (11, "VOICE"), (12, "GUEST"), (99, "MGMT")):
        out += [f"vlan {vid}", f" name {name}", "!"]
    out += ["interface Port-channel1", " description uplink to dist-sw1/dist-sw2 (LACP, do not touch)",
            " switchport trunk allowed vlan 10-12,99", " switchport mode trunk", "!"]
    for n in range(1, 45):
        out += [f"interface FastEthernet0/{n}", f" description room 3.{100 + n} desk {n} phone and PC, patch "
                                                f"panel B row {n // 12 + 1}",
                " switchport access vlan 10", " switchport mode access"]
        if n % 4 == 1:
            out.append(" switchport voice vlan 11")
        if n % 11 == 0:
            out += [" authentication port-control auto", " mab", " dot1x pae authenticator"]
        if n % 13 == 0:
            out += [" switchport port-security", " switchport port-security mac-address sticky"]
        if n == 44:
            out.append(" shutdown")
        out += [" spanning-tree portfast", "!"]
    for n in (45, 46, 47, 48):
        out += [f"interface FastEthernet0/{n}", " switchport access vlan 10", " switchport mode access", "!"]
    for n in (1, 2):
        out += [f"interface GigabitEthernet0/{n}", " description uplink member", " switchport mode trunk",
                " channel-group 1 mode active", "!"]
    out += ["interface Vlan99", " ip address 10.0.99.2 255.255.255.0", "!", "end", ""]
    return "\n".join(out)


def both_forms(args, keys: int = 1) -> tuple[list[Table], list[Table]]:
    """Run ``args`` at 80 columns in a terminal and in a pipe; check what holds for every table of both forms
    (exit 0, no line over 80 characters in the terminal, no cut cell) and return the tables read back."""
    code, term, err = run(args, TERMINAL)
    assert code == 0, err
    assert all(len(ln) <= 80 for ln in re.sub(r"\x1b\[[0-9;]*m", "", term).splitlines()), term
    assert "…" not in term and "..." not in term                     # rich's ellipsis: a cut cell
    code, plain, err = run(args, PIPE)
    assert code == 0, err
    assert "┃" not in plain and "│" not in plain and "\x1b" not in plain
    return read_terminal(term, keys), read_plain(plain)


def assert_same(expected: Table, term: Table, plain: Table) -> None:
    """The pipe's table equals the expected one exactly; the terminal's has the same headers (whole) and the same
    cells, wrapped at most (the same text without whitespace)."""
    assert plain.headers == expected.headers and plain.rows == expected.rows
    assert term.headers == expected.headers
    assert [[squash(c) for c in r] for r in term.rows] == [[squash(c) for c in r] for r in expected.rows]
    assert squash(expected.title) in squash(term.title) and plain.title == expected.title


# ----------------------------------------------------------------------------- every command's table
def test_ports_of_a_48_port_catalyst_at_80_columns_and_in_a_pipe(tmp_path):
    cfg = tmp_path / "access-floor3-west.cfg"
    cfg.write_text(catalyst_48())
    code, js, _ = run(["ports", "--driver", "ios", "--config", str(cfg), "--json"])
    model = json.loads(js)
    assert code == 0 and len(model["ports"]) >= 52
    (term,), (plain,) = both_forms(["ports", "--driver", "ios", "--config", str(cfg)])
    yes = {True: "yes", False: ""}
    rows = [[p["interface"], p["mode"] + (" (mgmt)" if p["management"] else ""),
             "" if p["access_vid"] is None else str(p["access_vid"]),
             "" if p["native_vid"] is None else str(p["native_vid"]), vid_ranges(p["allowed_vids"]),
             "LAG" if p["is_lag"] else (p["lag"] or ""), "" if p["voice_vid"] is None else str(p["voice_vid"]),
             yes[p["dot1x"]], yes[p["port_security"]], yes[p["shutdown"]],
             str(len(p["unparsed"])) if p["unparsed"] else "", p["description"] or ""] for p in model["ports"]]
    expected = Table(plain.title, ["interface", "mode", "access", "native", "allowed", "LAG", "voice", "802.1X",
                                   "port-sec", "shutdown", "unparsed", "description"], rows)
    assert_same(expected, term, plain)
    assert plain.by_key()["FastEthernet0/44"][8] == "yes" and plain.by_key()["FastEthernet0/11"][6] == "yes"
    assert plain.by_key()["Port-channel1"][3] == "10-12,99"
    assert "room 3.144 desk 44 phone and PC, patch panel B row 4" in plain.column("description")


def _inventory(tmp_path, ports, names=("sw1",)) -> Path:
    sws = [{"name": n, "driver": "ios", "host": "127.0.0.1", "port": 1 + i, "username": "admin",
            "password_env": f"HL_CC_PW_{n.upper()}",
            "trunks": [{"switch_port": "FastEthernet0/48", "server_interface": f"cc-trunk{i}"}],
            "access_ports": ports} for i, n in enumerate(names)]
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump({"switches": sws}))
    return p


def test_plan_offline_of_a_48_port_switch_at_80_columns_and_in_a_pipe(tmp_path):
    cfg = tmp_path / "sw1.cfg"
    cfg.write_text(catalyst_48())
    ports = [f"FastEthernet0/{n}" for n in range(2, 44) if n % 4 != 1 and n % 11 and n % 13]   # no voice/802.1X
    inv = _inventory(tmp_path, ports)
    args = ["plan", "-i", str(inv), "--config", f"sw1={cfg}"]
    code, js, err = run([*args, "--json"])
    assert code == 0, err
    sw = json.loads(js)["plan"]["switches"][0]
    (term,), (plain,) = both_forms(args)
    expected = Table(plain.title, ["legacy port", "OpenFlow port", "VID", "trunk"],
                     [[p["interface"], str(p["ofport"]), str(p["vid"]), p["trunk"]] for p in sw["ports"]])
    assert [r[0] for r in expected.rows] == ports and expected.title.startswith("sw1: br-of-sw1 (datapath id")
    assert_same(expected, term, plain)


def _status_report():
    from harmless.results import StatusReport
    ports = [{"interface": f"GigabitEthernet1/0/{n}", "ofport": 1000 + n, "vid": 3000 + n,
              "device_link": "notconnect" if n % 5 else "up", "br_of_state": "LINK_DOWN" if n % 5 else "LIVE",
              "blocked_by_watch": n % 5 != 0, "rx_packets": 18446744073709551615 - n, "tx_packets": 98765432109876 * n}
             for n in range(1, 49)]
    return StatusReport.model_validate({
        "deployed": True, "inventory": "/etc/harmless/inventories/building-7-floor-3.yaml", "switches": [{
            "name": "floor3west", "bridge": "br-of-floor3west", "datapath_id": "0x00000000000f3e57",
            "ports": ports, "trunks": {}, "controllers": []}]})


def test_status_with_long_names_and_counters_at_80_columns_and_in_a_pipe(monkeypatch):
    report = _status_report()
    monkeypatch.setattr(orchestrator, "status", lambda with_device=True: report)
    (term,), (plain,) = both_forms(["status", "--no-device"])
    expected = Table("floor3west: br-of-floor3west (datapath id 0x00000000000f3e57)",
                     ["legacy port", "OF port", "VID", "device link", "br-of state", "held", "port-down",
                      "rx packets", "tx packets"],
                     [[p.interface, str(p.ofport), str(p.vid), p.device_link, p.br_of_state,
                       "yes" if p.blocked_by_watch else "no", "no", str(p.rx_packets), str(p.tx_packets)]
                      for p in report.switches[0].ports])
    assert_same(expected, term, plain)
    assert "18446744073709551614" in plain.column("rx packets")            # the widest counter, whole


def test_backups_with_long_paths_at_80_columns_and_in_a_pipe(monkeypatch):
    rows = [{"switch": f"floor{n}west", "time": f"2026-11-2{n}T10:1{n}:00Z", "sha256": f"{n}" * 64,
             "role": "original" if n % 2 else "pre-run", "status": "active",
             "file": f"/var/lib/harmless/backups/floor{n}west/2026-11-2{n}T10-1{n}-00Z-original-running-config.txt"}
            for n in range(1, 5)]
    monkeypatch.setattr(orchestrator, "backups", lambda: rows)
    (term,), (plain,) = both_forms(["backups"])
    expected = Table("saved switch configs (oldest first)",
                     ["switch", "time (UTC)", "SHA-256 prefix", "role", "status", "file"],
                     [[r["switch"], r["time"], r["sha256"][:16], r["role"],
                       "active original" if r["role"] == "original" else "active", r["file"]] for r in rows])
    assert_same(expected, term, plain)
    (term,), (plain,) = both_forms(["backups", "--switch", "floor2west"])
    assert plain.rows == expected.rows[1:2]


def test_up_results_of_a_fleet_with_failures_at_80_columns_and_in_a_pipe(monkeypatch, tmp_path):
    from harmless.results import SwitchUp, UpResult
    names = ("edgea", "edgeb", "edgec")
    err = ("inv.yaml: switches[1].host: cannot reach edgeb at 192.0.2.77:22 (timed out after 30 s) (fix: check "
           "the address, the port and that SSH is enabled on the switch)")
    res = UpResult(plan={}, diffs={}, ovs={}, changed={"edgea": True, "edgec": False}, failed=["edgeb"],
                   results={"edgea": SwitchUp(status="migrated"), "edgeb": SwitchUp(status="failed", error=err),
                            "edgec": SwitchUp(status="unchanged")}, controllers_connected={})
    monkeypatch.setattr(orchestrator, "up", lambda *a, **kw: res)
    monkeypatch.setattr(cli, "_need_root", lambda: None)
    inv = _inventory(tmp_path, ["FastEthernet0/7"], names)
    code, term, _ = run(["up", "-i", str(inv), "-q"], TERMINAL)
    assert code == cli.EXIT_PARTIAL == 3
    code, plain, _ = run(["up", "-i", str(inv), "-q"], PIPE)
    expected = Table("switches", ["switch", "result", "detail"],
                     [["edgea", "migrated", ""], ["edgeb", "failed", err], ["edgec", "unchanged", ""]])
    assert_same(expected, read_terminal(term)[0], read_plain(plain)[0])
    assert all(len(ln) <= 80 for ln in term.splitlines())


def test_qos_show_at_80_columns_and_in_a_pipe(monkeypatch):
    from harmless.qos import cli as qos_cli
    from harmless.qos import live
    show = live.QosShow(deployed=True, ports=[
        live.QosPortView(switch="floor3west", interface=f"GigabitEthernet1/0/{n}", ofport=n, vid=3000 + n,
                         trunk="enp1s0f1", qos={"ingress_mbps": 20.0, "egress_mbps": 50.0, "scheduler": "hfsc"},
                         source="live", meter={"burst_kb": 6000, "band_drops": 123456789},
                         queue={"id": n, "trunk": "enp1s0f1", "type": "linux-hfsc", "sent_packets": 987654321,
                                "dropped": 42}) for n in (1, 2, 48)])
    monkeypatch.setattr(live, "show", lambda: show)
    monkeypatch.setattr(qos_cli, "need_root", lambda: None)
    (term,), (plain,) = both_forms(["qos", "show"], keys=2)
    expected = Table("per-port QoS (Mbit/s, kbit)",
                     ["switch", "port", "OF port", "VID", "ingress", "meter drops", "egress", "queue", "sent pkts",
                      "dropped", "source"],
                     [["floor3west", f"GigabitEthernet1/0/{n}", str(n), str(3000 + n), "20 / 6000", "123456789",
                       "50 hfsc", f"{n} on enp1s0f1 (linux-hfsc)", "987654321", "42", "live"] for n in (1, 2, 48)])
    assert_same(expected, term, plain)


def test_capex_at_80_columns_and_in_a_pipe():
    (term,), (plain,) = both_forms(["capex", "--ports", "48"])
    assert plain.headers == ["option", "CAPEX [USD]", "per port [USD]", "× HARMLESS", "TCO 5 y [USD]"]
    assert plain.by_key()["HARMLESS *"][:3] == ["1,880", "39.17", "1.00"]
    assert_same(plain, term, plain)


def test_demo_summary_and_oshi_bench_at_80_columns_and_in_a_pipe(monkeypatch):
    import harmless.demo
    from harmless.oshi import bench
    from harmless.oshi import cli as oshi_cli
    summary = {"ping_loss_before_pct": 0, "plan": [{"interface": f"FastEthernet0/{n}", "ofport": n, "vid": 100 + n}
                                                   for n in (7, 8, 10)],
               "ping_loss_pct": 0, "hairpinned_packets": 1234, "ports": [{"ofport": n, "rx_packets": 10 * n,
                                                                          "tx_packets": 11 * n} for n in (7, 8, 10)],
               "trace_datapath_actions": "push_vlan(vid=110,pcp=0),hl-lab-trunk", "config_restored": True,
               "ping_loss_after_down_pct": 0, "ok": True, "seconds": 41.2}
    monkeypatch.setattr(harmless.demo, "run_demo", lambda progress, pings: summary)
    monkeypatch.setattr(cli, "_need_root", lambda: None)
    (term,), (plain,) = both_forms(["demo", "-q"])
    assert plain.headers == ["check", "result"] and len(plain.rows) == 8
    assert plain.by_key()["plan"] == ["FastEthernet0/7→OF 7/VID 107, FastEthernet0/8→OF 8/VID 108, "
                                      "FastEthernet0/10→OF 10/VID 110"]
    assert_same(plain, term, plain)
    cases = {c: {"us_per_packet": 1.5, "ovs_us_per_packet": 0.75, "ratio_vs_router": 1.25, "delivered_pct": 99.9,
                 "spread_us": [1.25, 1.75]} for c in bench.CASES}
    monkeypatch.setattr(bench, "run", lambda **kw: {"rate_pps": 20000, "trials": [{}] * (3 * len(bench.CASES)),
                                                    "cases": cases, "machine": {"cpus": 2}})
    monkeypatch.setattr(oshi_cli, "_need_root", lambda: None)
    (term,), (plain,) = both_forms(["oshi", "bench", "-q"])
    assert plain.headers == ["case", "µs CPU / packet", "of which OVS", "vs router", "delivered", "spread (µs)"]
    assert_same(plain, term, plain)


# ----------------------------------------------------------------------------- exit codes
def test_down_with_nothing_deployed_exits_0_twice_and_json_is_the_empty_result(monkeypatch, tmp_path):
    monkeypatch.setattr(cli, "_need_root", lambda: None)
    env = {"HARMLESS_STATE_DIR": str(tmp_path)}
    for _ in range(2):
        code, out, err = run(["down"], env)
        assert code == 0 and out == "" and "nothing is deployed" in err and "error" not in err, err
    code, out, err = run(["down", "--json"], env)
    assert code == 0 and json.loads(out) == {"restored": {}, "config_restored": False, "ports_restored": {},
                                             "server": [], "kept": {}, "discarded": {}, "proven_against": {}}
    code, out, _ = run(["status", "--json"], env)
    assert code == 0 and json.loads(out)["deployed"] is False


def test_qos_clear_with_nothing_deployed_is_nothing_to_do(monkeypatch, tmp_path):
    from harmless.qos import cli as qos_cli
    monkeypatch.setattr(qos_cli, "need_root", lambda: None)
    env = {"HARMLESS_STATE_DIR": str(tmp_path)}
    assert run(["qos", "clear"], env)[:2] == (0, "no port has QoS\n")
    assert run(["qos", "clear", "--json"], env)[:2] == (0, "[]\n")
    code, _, err = run(["qos", "clear", "--switch", "sw1"], env)            # a named switch: refused
    assert code == 2 and "nothing is deployed" in err


def test_usage_errors_exit_2_like_bad_input():
    assert run(["plan"])[0] == 2                                           # -i missing
    assert run(["status", "--no-such-option"])[0] == 2


# ----------------------------------------------------------------------------- did you mean
def test_misspelled_inventory_key_is_named_with_the_closest_key(tmp_path):
    p = _inventory(tmp_path, ["FastEthernet0/7"])
    d = yaml.safe_load(p.read_text())
    d["switches"][0]["acces_ports"] = d["switches"][0].pop("access_ports")
    d["switches"][0]["trunks"][0]["server_interfase"] = d["switches"][0]["trunks"][0].pop("server_interface")
    p.write_text(yaml.safe_dump(d))
    code, out, err = run(["plan", "-i", str(p)])
    assert code == 2 and out == ""
    assert err.strip() in (
        f"error: {p}: switches[0].trunks[0].server_interfase: unknown key (did you mean 'server_interface'?) "
        "(fix: rename it to server_interface)",
        f"error: {p}: switches[0].acces_ports: unknown key (did you mean 'access_ports'?) (fix: rename it to "
        "access_ports)"), err


def test_unknown_key_without_a_close_one_lists_the_allowed_keys(tmp_path):
    p = _inventory(tmp_path, [{"interface": "FastEthernet0/7", "colour": "blue"}])
    code, _, err = run(["plan", "-i", str(p)])
    assert code == 2
    assert "switches[0].access_ports[0].colour: unknown key (fix: remove it; allowed here: interface, " in err


@pytest.mark.parametrize("args, suggestion", [
    (["stauts"], "Did you mean 'status'?"),
    (["qos", "shw"], "Did you mean 'show'?"),
    (["plan", "--jsn"], "Did you mean '--json'?"),
])
def test_misspelled_command_or_option_gets_a_suggestion(args, suggestion):
    code, _, err = run(args)
    assert code == 2 and suggestion in err


def test_unknown_switch_gets_the_closest_name_before_any_device_is_contacted(tmp_path):
    inv = _inventory(tmp_path, ["FastEthernet0/7"], ("edge1", "core1"))
    code, _, err = run(["plan", "-i", str(inv), "--switch", "edge2"])
    assert code == 2 and "no switch named 'edge2' (did you mean 'edge1'?)" in err


# ----------------------------------------------------------------------------- --switch and --config
def test_plan_switch_contacts_only_that_switch(tmp_path):
    """sw2's password is not set: planning sw1 alone never resolves it, and the error is sw1's unreachable port."""
    inv = _inventory(tmp_path, ["FastEthernet0/7"], ("sw1", "sw2"))
    code, _, err = run(["plan", "-i", str(inv), "--switch", "sw1"], {"HL_CC_PW_SW1": "x", "HL_CC_PW_SW2": None})
    assert code == 1 and "cannot reach sw1 at 127.0.0.1:1" in err and "sw2" not in err, err
    code, _, err = run(["plan", "-i", str(inv)], {"HL_CC_PW_SW1": "x", "HL_CC_PW_SW2": None})
    assert code == 2 and "HL_CC_PW_SW2" in err                              # without --switch: both are needed


def test_plan_config_forms_and_br_otc_numbers_kept(tmp_path):
    cfg = tmp_path / "sw.cfg"
    cfg.write_text(catalyst_48())
    one = _inventory(tmp_path, ["FastEthernet0/7"])
    named = run(["plan", "-i", str(one), "--config", f"sw1={cfg}", "--json"])
    bare = run(["plan", "-i", str(one), "--config", str(cfg), "--json"])
    assert named[0] == bare[0] == 0 and named[1] == bare[1]                 # one switch: SWITCH= may be left out
    two = _inventory(tmp_path, ["FastEthernet0/7"], ("sw1", "sw2"))
    code, _, err = run(["plan", "-i", str(two), "--config", str(cfg)])
    assert code == 2 and "has 2 switches: which one" in err and "--config SWITCH=" in err
    code, out, err = run(["plan", "-i", str(two), "--switch", "sw2", "--config", str(cfg), "--json"])
    assert code == 0, err
    (sp,) = json.loads(out)["plan"]["switches"]
    assert sp["name"] == "sw2" and sp["index"] == 2                        # its br-otc number, as in the full plan
    code, _, err = run(["plan", "-i", str(two), "--switch", "sw2", "--config", f"sw1={cfg}"])
    assert code == 2 and "--switch sw2 plans only sw2" in err


def test_qos_set_switch_and_port_options_and_the_older_positional_form(monkeypatch):
    from harmless.qos import cli as qos_cli
    from harmless.qos import live
    calls = []
    monkeypatch.setattr(qos_cli, "need_root", lambda: None)
    monkeypatch.setattr(live, "set_qos", lambda sw, port, *a, **kw: calls.append((sw, port)) or live.QosChange(
        switch=sw, interface=port, ofport=7, vid=107, **{"from": None}, to={"egress_mbps": 50.0}, dry_run=True))
    for args in (["--switch", "sw1", "--port", "Fa0/7"], ["sw1", "Fa0/7"], ["sw1", "Fa0/7", "--switch", "sw1"]):
        code, _, err = run(["qos", "set", *args, "--egress", "50", "--dry-run"])
        assert code == 0, err
    assert calls == [("sw1", "Fa0/7")] * 3
    code, _, err = run(["qos", "set", "sw1", "Fa0/7", "--switch", "sw2", "--egress", "50"])
    assert code == 2 and "disagree" in err
    code, _, err = run(["qos", "set", "--port", "Fa0/7", "--egress", "50"])
    assert code == 2 and "which port?" in err


def test_every_command_that_prints_progress_has_quiet_and_every_result_json():
    """The convention's options where they belong (docs/cli.md): -q/--quiet with progress, --json with a result."""
    import click

    def commands(group, path=()):
        for name, c in group.commands.items():
            if isinstance(c, click.Group):
                yield from commands(c, (*path, name))
                if not c.invoke_without_command:
                    continue
            yield " ".join((*path, name)), {o for p in c.params for o in getattr(p, "opts", [])}
    progress = {"plan", "up", "down", "recover", "restore", "ports", "demo", "lab up", "qos set", "qos clear", "bench",
                "qos demo", "oshi up", "oshi down", "oshi demo", "oshi bench", "overlay up", "overlay demo",
                "failover", "ha sync", "ha demo"}
    for name, opts in commands(main):
        if name in progress:
            assert {"-q", "--quiet"} <= opts, name
        if name not in ("exporter", "ha agent"):                           # servers; every other prints a result
            assert "--json" in opts, name
        if "-i" in opts:
            assert "--inventory" in opts, name


def test_recover_dry_run_says_what_it_would_do_and_changes_nothing(monkeypatch, tmp_path):
    from harmless import journal
    env = {"HARMLESS_STATE_DIR": str(tmp_path)}
    assert run(["recover", "--dry-run"], env)[:2] == (0, "nothing to recover (no interrupted run)\n")
    monkeypatch.setenv("HARMLESS_STATE_DIR", str(tmp_path))
    j = journal.Journal("up")                                       # an interrupted first up (SIGKILL mid-commit)
    j.record("up.begin", switches=["sw1"], prior_deployed=False)
    j.record("device.commit", switch="sw1", rollback_to={"file": "f", "sha256": "0" * 64})
    before = journal.default_path().read_bytes()
    code, out, err = run(["recover", "--dry-run"], env)
    assert code == 0, err
    assert out.startswith("an interrupted harmless up (pid ") and "stopped after step device.commit (sw1)" in out
    assert "recover would do what harmless down does: every switch back to its original config" in out and "sw1" in out
    code, out, _ = run(["recover", "--dry-run", "--json"], env)
    assert json.loads(out)["recovered"] == "down" and json.loads(out)["switches"] == ["sw1"]
    assert journal.default_path().read_bytes() == before                 # nothing archived, nothing written


def test_the_error_kinds_exit_with_the_documented_codes():
    """errors.py's and state/journal's exit codes are the rows of docs/cli.md's table (clikit's EXIT_*)."""
    from harmless import clikit, errors, journal, state
    from harmless.errors import DeviceError, HarmlessError, InputError, NothingToDo, OvsError
    assert NothingToDo.exit_code == clikit.EXIT_OK == 0
    assert HarmlessError.exit_code == DeviceError.exit_code == OvsError.exit_code == state.LockedError.exit_code \
        == state.StateWriteError.exit_code == clikit.EXIT_FAILURE == 1
    assert InputError.exit_code == state.StateError.exit_code == clikit.EXIT_INPUT == 2
    assert journal.Interrupted.exit_code == clikit.EXIT_INTERRUPTED == 130
    assert (cli.EXIT_PARTIAL, cli.EXIT_NO_CONTROLLER) == (3, 4)
    assert errors.EXIT_UNFINISHED == clikit.EXIT_UNFINISHED == 6 and clikit.EXIT_DIFFERS == 7    # issue #22
    table = Path(__file__).parents[2].joinpath("docs", "cli.md").read_text()
    for code in (0, 1, 2, 3, 4, 5, 6, 7, 130):
        assert f"\n| {code} | " in table, code
