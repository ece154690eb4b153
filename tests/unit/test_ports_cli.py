"""``harmless ports``: offline --driver/--config (JSON equals the golden model, rich table), bad input (one line,
exit 2), online errors (unknown --switch, unreachable device). The online read itself is tested against the
emulated ProCurve switch in tests/drivers/test_procurve.py."""
import json
import socket
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harmless.cli import main
from tests.lib.tables import read_plain

CORPUS = Path(__file__).parent / "ports_corpus"


def run(args, env=None):
    r = CliRunner().invoke(main, args, env={"COLUMNS": "200", **(env or {})})
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("driver, name", [("junos", "ex4300_vc_els"), ("junos", "ex4300_els_display_set"),
                                          ("procurve", "2920_voice_dot1x"), ("procurve", "2530_48g_unindented")])
def test_offline_json_is_one_object_equal_to_the_golden_model(driver, name):
    code, out, err = run(["ports", "--driver", driver, "--config", str(CORPUS / driver / f"{name}.cfg"), "--json"])
    assert code == 0, err
    assert len(out.strip().splitlines()) == 1
    assert json.loads(out) == json.loads((CORPUS / driver / f"{name}.json").read_text())


def test_offline_table_shows_ports_modes_and_vlans():
    code, out, err = run(["ports", "--driver", "procurve", "--config", str(CORPUS / "procurve" / "5406zl_modules.cfg")])
    assert code == 0, err
    assert "VLANs 1,10,20,30,500" in out and "spanning tree mstp" in out
    rows = read_plain(out)[0].by_key()            # not a terminal: tab-separated lines
    assert rows["Trk1"][:5] == ["trunk", "", "", "10,20", "LAG"]
    assert rows["B1"][0] == "unknown" and rows["B1"][4] == "Trk1"
    assert rows["A5"][0] == "unknown" and rows["A5"][8] == "yes"              # shutdown
    assert rows["A1"][:2] == ["access", "10"]


def test_offline_table_junos_flags():
    code, out, err = run(["ports", "--driver", "junos", "--config", str(CORPUS / "junos" / "ex2300_els_access.cfg")])
    assert code == 0, err
    rows = read_plain(out)[0].by_key()
    assert rows["ge-0/0/0"][:7] == ["access", "20", "", "", "", "25", "yes"]    # voice 25, 802.1X
    assert rows["me0"][0] == "routed (mgmt)"
    assert rows["ge-0/1/0"][:4] == ["trunk", "", "999", "20,25,30,40,99,999"]


@pytest.mark.parametrize("args, needle", [
    (["--driver", "vendorx", "--config", "x.cfg"], "--driver: unknown driver 'vendorx'"),
    (["--driver", "junos", "--config", "/nonexistent/sw.cfg"], "/nonexistent/sw.cfg: cannot read it"),
    (["--driver", "junos", "--config", str(CORPUS / "procurve" / "2810_legacy.cfg")], "not a junos configuration"),
    (["--driver", "procurve", "--config", str(CORPUS / "junos" / "mx204_router.cfg")], "not a procurve configuration"),
    (["--driver", "junos"], "nothing to read"),
    ([], "nothing to read"),
    (["--config", str(CORPUS / "junos" / "mx204_router.cfg")], "the switch OS of this saved config is not known"),
    (["--switch", "sw1", "--driver", "junos", "--config", "x"], "--switch needs -i"),
    (["--config", "sw1="], "names no file"),
    (["--driver", "junos", "--config", "sw1=a.cfg", "--config", "sw1=b.cfg"], "switch sw1 is given twice"),
])
def test_bad_input_is_one_line_exit_2(args, needle):
    code, out, err = run(["ports", *args])
    assert code == 2 and out == ""
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_binary_file_is_bad_input(tmp_path):
    f = tmp_path / "sw.cfg"
    f.write_bytes(b"\xff\xfe\x00garbage")
    code, _out, err = run(["ports", "--driver", "procurve", "--config", str(f)])
    assert code == 2 and "is not a text file" in err


def _inventory(tmp_path, port):
    inv = {"switches": [{"name": "edge1", "driver": "procurve", "host": "127.0.0.1", "port": port,
                         "username": "manager", "password_env": "HL_PORTS_TEST_PW",
                         "trunks": [{"switch_port": "25", "server_interface": "hl-trunk0"}], "access_ports": ["7"]}]}
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(inv))
    return p


def test_online_unknown_switch_is_bad_input(tmp_path):
    code, _out, err = run(["ports", "-i", str(_inventory(tmp_path, 22)), "--switch", "nope"],
                          env={"HL_PORTS_TEST_PW": "x"})
    assert code == 2 and "no switch named 'nope'" in err and "edge1" in err


def test_online_unreachable_switch_is_one_line_exit_1(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                                                        # nothing listens there now
    code, out, err = run(["ports", "-i", str(_inventory(tmp_path, port)), "--json"], env={"HL_PORTS_TEST_PW": "x"})
    assert code == 1 and out == ""
    assert f"cannot reach edge1 at 127.0.0.1:{port}" in err and len(err.strip().splitlines()) == 1


def test_offline_with_the_inventory_takes_the_os_from_its_switch(tmp_path):
    """--config SWITCH=FILE with -i: the driver of the inventory's switch SWITCH (docs/cli.md); a bare FILE is the
    config of a one-switch inventory's switch; an unknown SWITCH is refused with the closest name."""
    inv = str(_inventory(tmp_path, 22))                              # edge1, a procurve
    cfg = str(CORPUS / "procurve" / "2920_voice_dot1x.cfg")
    golden = json.loads((CORPUS / "procurve" / "2920_voice_dot1x.json").read_text())
    for config in (f"edge1={cfg}", cfg):
        code, out, err = run(["ports", "-i", inv, "--config", config, "--json"])
        assert code == 0, err
        assert json.loads(out) == golden
    code, _out, err = run(["ports", "-i", inv, "--config", f"edge2={cfg}"])
    assert code == 2 and "no switch named 'edge2' (did you mean 'edge1'?)" in err


def test_two_saved_configs_print_one_object_per_switch():
    code, out, err = run(["ports", "--driver", "junos", "--config", f"sw1={CORPUS / 'junos' / 'ex2300_els_access.cfg'}",
                          "--config", f"sw2={CORPUS / 'junos' / 'ex4300_vc_els.cfg'}", "--json"])
    assert code == 0, err
    assert set(json.loads(out)) == {"sw1", "sw2"}


def test_help_explains_online_and_offline():
    code, out, _err = run(["ports", "--help"])
    assert code == 0
    for word in ("-i inv.yaml", "--driver junos --config", "--json", "unparsed", "docs/ports.md"):
        assert word in out
