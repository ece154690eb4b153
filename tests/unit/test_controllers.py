"""Controller side of br-of (pure parts): TLS checks and commands, Controller-row settings, lab --tls-dir."""
from __future__ import annotations

import os

import pytest

from harmless.errors import InputError
from harmless.inventory import parse_inventory
from harmless.lab import topology
from harmless.otc import controllers as cs
from harmless.plan import Plan, SwitchPlan

SW = """
  - name: {name}
    driver: ios
    host: 127.0.0.1
    port: {port}
    username: admin
    password_env: HL_PW
    trunks: [{{switch_port: GigabitEthernet0/1, server_interface: trk{name}}}]
    access_ports: [FastEthernet0/7]
    openflow: {openflow}
"""


def inv(*openflows):
    text = "switches:" + "".join(SW.format(name=f"s{i}", port=2200 + i, openflow=o) for i, o in enumerate(openflows))
    return parse_inventory(text, "inv.yaml")


@pytest.fixture
def pki(tmp_path):
    files = {}
    for name in ("key.pem", "cert.pem", "ca.pem", "other-ca.pem"):
        p = tmp_path / name
        p.write_text("-----BEGIN X-----\n")
        os.chmod(p, 0o600 if name == "key.pem" else 0o644)
        files[name] = str(p)
    return files


def tls(f, ca="ca.pem"):
    return f"{{controllers: ['ssl:127.0.0.1:6653'], tls: {{private_key: {f['key.pem']}, " \
           f"certificate: {f['cert.pem']}, ca_cert: {f[ca]}}}}}"


def test_check_tls_returns_the_one_configuration(pki):
    assert cs.check_tls(inv(tls(pki), tls(pki)), "inv.yaml") == (pki["key.pem"], pki["cert.pem"], pki["ca.pem"])
    assert cs.check_tls(inv("{controllers: ['tcp:127.0.0.1:6653']}"), "inv.yaml") is None


def test_check_tls_refuses_ssl_without_tls():
    try:
        i = inv("{controllers: ['ssl:127.0.0.1:6653']}")
    except InputError as e:          # the inventory's own validation may refuse it already
        assert "tls" in str(e)
        return
    with pytest.raises(InputError, match=r"inv.yaml: switches\[0\].openflow.controllers: ssl:127.0.0.1:6653 is a "
                                         r"TLS target but openflow.tls is not set"):
        cs.check_tls(i, "inv.yaml")


def test_check_tls_refuses_two_different_tls_configurations(pki):
    with pytest.raises(InputError, match=r"switches\[1\].openflow.tls: names other TLS files than "
                                         r"switches\[0\].openflow.tls \(Open vSwitch has one SSL configuration"):
        cs.check_tls(inv(tls(pki), tls(pki, ca="other-ca.pem")), "inv.yaml")


def test_check_tls_refuses_missing_files_and_an_open_key(pki):
    os.chmod(pki["key.pem"], 0o644)
    try:
        i = inv(tls(pki))
    except InputError as e:
        assert "private_key" in str(e)
    else:
        with pytest.raises(InputError, match=r"tls.private_key: .* is readable by others \(mode 0o644\).*chmod 600"):
            cs.check_tls(i, "inv.yaml")
    os.chmod(pki["key.pem"], 0o600)
    os.unlink(pki["ca.pem"])
    try:
        i = inv(tls(pki))
    except InputError as e:
        assert "ca_cert" in str(e)
    else:
        with pytest.raises(InputError, match=r"tls.ca_cert: cannot read .*ca.pem"):
            cs.check_tls(i, "inv.yaml")


def sp(name, tls_files=None):
    return SwitchPlan(name, f"br-of-{name}", "1", ("OpenFlow13",), ("ssl:127.0.0.1:6653",), (), (), tls=tls_files)


def test_plan_tls_and_plan_round_trip():
    t = ("/k", "/c", "/ca")
    p = Plan((sp("a", t), sp("b", t), sp("c")))
    assert cs.plan_tls(p) == t
    back = Plan.from_dict(p.to_dict())
    assert back == p and back.switches[0].tls == t and back.switches[0].max_backoff_ms == 1000
    with pytest.raises(InputError, match="different TLS files"):
        cs.plan_tls(Plan((sp("a", t), sp("b", ("/k", "/c", "/other")))))


def test_tls_commands():
    want = ("/k", "/c", "/ca")
    mine = {"private_key": "/k", "certificate": "/c", "ca_cert": "/ca", "external_ids": {"harmless": "tls"}}
    users = {**mine, "external_ids": {}}
    assert cs.tls_commands(want, None) == [["set-ssl", "/k", "/c", "/ca"],
                                           ["set", "SSL", ".", "external_ids:harmless=tls"]]
    assert cs.tls_commands(want, mine) == []                  # idempotent
    assert cs.tls_commands(want, users)[0][0] == "set-ssl"     # replaced (and marked) when we need TLS
    assert cs.tls_commands(None, mine) == [["del-ssl"]]        # ours and no longer needed
    assert cs.tls_commands(None, users) == []                  # the user's: never deleted
    assert cs.tls_commands(None, None) == []


def test_settings_commands():
    rows = [{"uuid": "u1"}, {"uuid": "u2"}]
    assert cs.settings_commands(rows, 1000, 5000) == [
        ["set", "Controller", "u1", "connection_mode=out-of-band", "max_backoff=1000", "inactivity_probe=5000"],
        ["set", "Controller", "u2", "connection_mode=out-of-band", "max_backoff=1000", "inactivity_probe=5000"]]


def test_inventory_defaults_reach_the_plan():
    from harmless.plan import plan_switch
    from harmless.switch_drivers.base import DeviceFacts
    i = inv("{controllers: ['tcp:127.0.0.1:6653'], max_backoff_ms: 2000, inactivity_probe_ms: 0}",
            "{controllers: ['tcp:127.0.0.1:6653']}")
    facts = DeviceFacts("sw", "m", "v", ("FastEthernet0/7", "GigabitEthernet0/1"), {})
    a = plan_switch(i.switches[0], facts, None, "x")
    b = plan_switch(i.switches[1], facts, None, "x")
    assert (a.max_backoff_ms, a.inactivity_probe_ms, a.tls) == (2000, 0, None)
    assert (b.max_backoff_ms, b.inactivity_probe_ms) == (1000, 5000)


def test_lab_tls_dir(tmp_path):
    with pytest.raises(InputError, match=r"--controller: ssl:127.0.0.1:6653 is a TLS target .* --tls-dir"):
        topology.lab_tls(["ssl:127.0.0.1:6653"], None)
    assert topology.lab_tls(["tcp:127.0.0.1:6653"], None) is None
    with pytest.raises(InputError, match=r"--tls-dir: .*switch-privkey.pem is missing"):
        topology.lab_tls(["ssl:127.0.0.1:6653"], str(tmp_path))
    for f in topology.TLS_FILES.values():
        (tmp_path / f).write_text("x")
    got = topology.lab_tls(["ssl:127.0.0.1:6653"], str(tmp_path))
    assert got == {"private_key": str(tmp_path / "switch-privkey.pem"),
                   "certificate": str(tmp_path / "switch-cert.pem"), "ca_cert": str(tmp_path / "ca-cert.pem")}


def test_cli_up_wait_options_reach_the_orchestrator_and_exit_codes(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from harmless import cli, orchestrator
    from harmless.results import UpResult
    calls = []

    def fake_up(inventory, progress, revert_in, on_switch, wait_controller, keep_on_no_controller):
        calls.append((wait_controller, keep_on_no_controller))
        missing = "br-of-s0: no controller connected within 3 s to tcp:127.0.0.1:1 (x)" if keep_on_no_controller \
            else None
        return UpResult(plan={}, diffs={}, ovs={}, changed={"s0": True}, failed=[], results={},
                        controllers_missing=missing,
                        controllers_connected={} if missing else {"br-of-s0": ["tcp:127.0.0.1:6653"]})
    monkeypatch.setattr(orchestrator, "up", fake_up)
    monkeypatch.setattr(cli, "_need_root", lambda: None)
    monkeypatch.setenv("HL_PW", "x")
    p = tmp_path / "inv.yaml"
    p.write_text("switches:" + SW.format(name="s0", port=2200, openflow="{controllers: ['tcp:127.0.0.1:6653']}"))
    r = CliRunner().invoke(cli.main, ["up", "-i", str(p)])
    assert r.exit_code == 0 and "controller connected to br-of-s0: tcp:127.0.0.1:6653" in r.stdout, r.output
    assert CliRunner().invoke(cli.main, ["up", "-i", str(p), "--no-wait"]).exit_code == 0
    assert CliRunner().invoke(cli.main, ["up", "-i", str(p), "--wait-controller", "2.5"]).exit_code == 0
    r = CliRunner().invoke(cli.main, ["up", "-i", str(p), "--wait-controller", "3", "--keep-on-no-controller"])
    assert r.exit_code == cli.EXIT_NO_CONTROLLER == 4
    assert "(x) (deployment kept: --keep-on-no-controller)" in r.stderr      # brackets/parentheses printed as is
    assert calls == [(10.0, False), (0, False), (2.5, False), (3.0, True)]
    assert CliRunner().invoke(cli.main, ["up", "-i", str(p), "--wait-controller", "-1"]).exit_code == 2


def test_cli_status_shows_last_error_and_tls_log_lines(monkeypatch):
    from click.testing import CliRunner

    from harmless import cli, orchestrator
    from harmless.results import StatusReport
    line = ("2026-11-24T06:54:29.099Z|00068|stream_ssl|WARN|SSL_connect: error:0A000086:SSL routines::certificate "
            "verify failed")
    monkeypatch.setattr(orchestrator, "status", lambda with_device=True: StatusReport.model_validate({
        "deployed": True, "inventory": "inv.yaml", "switches": [{
            "name": "sw1", "bridge": "br-of-sw1", "datapath_id": "1", "ports": [], "trunks": {},
            "controllers": [{"target": "ssl:127.0.0.1:6644", "is_connected": False, "role": "-", "state": "BACKOFF",
                             "last_error": "Protocol error", "tls_log": [line]}]}]}))
    r = CliRunner().invoke(cli.main, ["status", "--no-device"])
    assert r.exit_code == 0, r.output
    assert "controller ssl:127.0.0.1:6644: not connected, role -, last error: Protocol error" in r.stdout
    assert "TLS SSL_connect: error:0A000086:SSL routines::certificate verify failed" in r.stdout


def test_log_diagnosis_since_the_last_start(tmp_path):
    from types import SimpleNamespace
    (tmp_path / "ovs-vswitchd.log").write_text(
        "2026-11-24T06:00:00.000Z|00001|vlog|INFO|opened log file x\n"
        "2026-11-24T06:00:01.000Z|00002|stream_ssl|WARN|SSL_connect: old failure before a restart\n"
        "2026-11-24T06:10:00.000Z|00001|vlog|INFO|opened log file x\n"
        "2026-11-24T06:10:01.000Z|00050|rconn|WARN|br-of-sw1<->tcp:127.0.0.1:6999: connection failed "
        "(Connection refused)\n"
        "2026-11-24T06:10:02.000Z|00051|rconn|WARN|br-of-sw2<->tcp:127.0.0.1:6999: connection failed "
        "(Network is unreachable)\n"
        "2026-11-24T06:10:03.000Z|00068|stream_ssl|WARN|SSL_connect: error:0A000086:SSL routines::certificate "
        "verify failed\n")
    ovs = SimpleNamespace(logdir=tmp_path)
    assert cs.rconn_error(ovs, "br-of-sw1", "tcp:127.0.0.1:6999") == "Connection refused"
    assert cs.rconn_error(ovs, "br-of-sw2", "tcp:127.0.0.1:6999") == "Network is unreachable"
    assert cs.rconn_error(ovs, "br-of-sw3", "tcp:127.0.0.1:6999") is None
    lines = cs.tls_log_lines(ovs, 3)
    assert len(lines) == 1 and lines[0].endswith("certificate verify failed")     # not the one before the restart
    assert cs.tls_log_lines(ovs, 3, since=1795500000.0 + 10 ** 9) == []           # nothing that recent
    rows = [{"target": "ssl:127.0.0.1:6644", "is_connected": False, "last_error": "Protocol error", "state": "x"}]
    assert cs.why_not_connected(ovs, rows) == ("ssl:127.0.0.1:6644: Protocol error; TLS: SSL_connect: "
                                               "error:0A000086:SSL routines::certificate verify failed")
    assert cs.tls_log_lines(SimpleNamespace(logdir=tmp_path / "missing"), 3) == []


def test_the_tls_reason_is_the_newest_line_that_names_one_not_a_reset_after_the_alert():
    alert = "2026-11-24T06:10:03.000Z|00068|stream_ssl|WARN|SSL_read: error:0A000418:SSL routines::tlsv1 alert unknown ca"
    reset = "2026-11-24T06:10:03.001Z|00069|stream_ssl|WARN|SSL_write: system error (Connection reset by peer)"
    assert cs.telling_tls_line([alert, reset]) == alert
    assert cs.telling_tls_line([reset]) == reset
    assert cs.telling_tls_line([]) is None
