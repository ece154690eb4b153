"""CLI error paths: one line on stderr naming file, field and fix; exit code; no traceback; nothing changed."""
import socket

import pytest
import yaml
from click.testing import CliRunner

from harmless.cli import main

BASE = {
    "switches": [{
        "name": "sw1", "driver": "ios", "host": "127.0.0.1", "port": 22, "username": "admin",
        "password_env": "HL_CLI_TEST_PW",
        "trunks": [{"switch_port": "GigabitEthernet0/1", "server_interface": "hl-trunk0"}],
        "access_ports": ["FastEthernet0/7"],
    }],
}


def write(tmp_path, mutate):
    d = yaml.safe_load(yaml.safe_dump(BASE))
    mutate(d["switches"][0])
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(d))
    return p


def run(args, env=None):
    r = CliRunner().invoke(main, args, env=env or {})
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("mutate,field", [
    (lambda s: s.pop("host"), "switches[0].host"),
    (lambda s: s.update(access_ports=["FastEthernet0/7", "FastEthernet0/7"]), "switches[0].access_ports[1]"),
    (lambda s: s.update(access_ports=[{"interface": "FastEthernet0/7", "vid": 4095}]), "switches[0].access_ports[0].vid"),
    (lambda s: s.update(access_ports=["GigabitEthernet0/1"]), "switches[0].access_ports[0]"),
    (lambda s: s.update(driver="vendorx"), "switches[0].driver"),
    (lambda s: s.update(password_env=None, password_file="/nonexistent/pw"), "switches[0].password_file"),
])
def test_bad_inventory_one_line_exit_2(tmp_path, mutate, field):
    p = write(tmp_path, mutate)
    code, out, err = run(["plan", "-i", str(p)], env={"HL_CLI_TEST_PW": "x"})
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {p}: {field}"), err
    assert "fix:" in lines[0] and "Traceback" not in err + out


def test_unreachable_device_names_field_and_hides_password(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # closed again when the block ends: nothing listens
    p = write(tmp_path, lambda s: s.update(port=port))
    code, out, err = run(["plan", "-i", str(p), "--json"], env={"HL_CLI_TEST_PW": "Secret-Do-Not-Print-42"})
    assert code == 1
    assert err.strip().splitlines()[-1].startswith(f"error: {p}: switches[0].host: cannot reach sw1 at 127.0.0.1:{port}")
    assert "Secret-Do-Not-Print-42" not in out + err and "Traceback" not in err


def test_missing_inventory_file(tmp_path):
    code, _, err = run(["plan", "-i", str(tmp_path / "missing.yaml")])
    assert code == 2 and "cannot read the inventory" in err


def test_help_explains_commands():
    code, out, _ = run(["--help"])
    assert code == 0
    for cmd in ("plan", "up", "down", "status", "demo", "lab", "capex"):
        assert cmd in out
    code, out, _ = run(["up", "--help"])
    assert "--dry-run" in out and "Saves each switch's running config first" in out and "exit status 3" in out


def test_status_when_nothing_deployed(tmp_path):
    code, out, _ = run(["status", "--json"], env={"HARMLESS_STATE_DIR": str(tmp_path)})
    assert code == 0 and '"deployed": false' in out


def test_python_dash_m_harmless_cli_has_every_command():
    """``python -m harmless.cli`` (used by tests and scripts) must load the component commands without an import
    cycle (they import harmless.cli themselves)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "harmless.cli", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for cmd in ("up", "down", "watch", "capex", "bench", "oshi"):
        assert f"  {cmd} " in r.stdout
