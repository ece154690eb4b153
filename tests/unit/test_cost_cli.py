"""``harmless capex`` CLI and report: output shape, error paths (exit 2, one line, no file)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harmless.cost.catalog import DEFAULT_CATALOG_PATH, load_catalog
from harmless.cost.cli import capex
from harmless.errors import InputError


def run(*args: str):
    return CliRunner().invoke(capex, list(args))


def _catalog(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load(DEFAULT_CATALOG_PATH.read_text())
    edit(data)
    p = tmp_path / "mycat.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def _one_line_error(res, *needles: str) -> None:
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in res.stderr
    for n in needles:
        assert n in lines[0]


# ---- capex ----------------------------------------------------------------------------------

def test_json_1g_is_exactly_one_object():
    res = run("--ports", "48", "--speed", "1G", "--json")
    assert res.exit_code == 0, res.stderr
    obj = json.loads(res.stdout)           # the whole of stdout is one JSON document
    assert isinstance(obj, dict)
    assert res.stdout.count("\n") == 1
    assert obj["ports"] == 48 and obj["speed"] == "1G" and obj["currency"] == "USD"
    # Sec. III at x = 48: HW 2700; SW 3*1400 + 9*160 + 3*400 = 6840; HL 1400 + 480 = 1880
    assert obj["capex"] == {"hardware": 2700, "software": 6840, "harmless": 1880}
    assert obj["cheapest"] == "harmless"
    assert obj["ratios"]["software_over_harmless"] == pytest.approx(6840 / 1880, abs=1e-4)
    assert obj["catalog"]["name"] == "HARMLESS paper, 2017 prices"


def test_json_10g():
    res = run("--ports", "48", "--speed", "10G", "--json")
    obj = json.loads(res.stdout)
    # HW 11200; SW 4*1400 + 12*480 + 4*400 = 12960; HL 1400 + 2*500 = 2400
    assert obj["capex"] == {"hardware": 11200, "software": 12960, "harmless": 2400}


def test_json_scenarios_and_owned():
    obj = json.loads(run("--ports", "145", "--scenario", "clos", "--json").stdout)
    assert obj["capex"] == {"hardware": 55600, "software": None, "harmless": 25800}
    obj = json.loads(run("--ports", "48", "--spare-servers", "1", "--legacy-owned", "0", "--json").stdout)
    assert obj["capex"]["harmless"] == 1880 - 1400 + 200
    assert obj["owned"] == {"spare_servers": 1, "legacy_switches": 0}


def test_table_output():
    res = run("--ports", "48", "--speed", "1G")
    assert res.exit_code == 0
    for s in ("2,700", "6,840", "1,880", "HARMLESS", "ratios:", "HARMLESS paper, 2017 prices"):
        assert s in res.stdout


def test_user_catalog_is_used(tmp_path):
    p = _catalog(tmp_path, lambda d: d["prices"].update(server_usd=1000))
    obj = json.loads(run("--ports", "48", "--catalog", str(p), "--json").stdout)
    assert obj["capex"]["harmless"] == 1480    # 1000 + 480
    assert obj["catalog"]["path"] == str(p)


@pytest.mark.parametrize("ports", ["0", "-5", "abc", "4.5"])
def test_bad_ports(ports):
    _one_line_error(run("--ports", ports, "--speed", "1G"), "--ports")


def test_missing_ports():
    _one_line_error(run("--speed", "1G"), "--ports", "missing")


@pytest.mark.parametrize("speed", ["40G", "1g0", ""])
def test_unknown_speed(speed):
    _one_line_error(run("--ports", "48", "--speed", speed), "--speed")


def test_unknown_scenario_and_limits():
    _one_line_error(run("--ports", "48", "--scenario", "ring"), "--scenario")
    _one_line_error(run("--ports", "2305", "--scenario", "clos"), "--ports", "2304")
    _one_line_error(run("--ports", "48", "--scenario", "gateway", "--speed", "10G"), "--speed")


def test_catalog_missing_price(tmp_path):
    p = _catalog(tmp_path, lambda d: d["prices"].pop("server_usd"))
    _one_line_error(run("--ports", "48", "--catalog", str(p)), "mycat.yaml: prices.server_usd", "missing")


def test_catalog_non_numeric_price(tmp_path):
    p = _catalog(tmp_path, lambda d: d["prices"].update(nic_4x10g_usd="$480"))
    _one_line_error(run("--ports", "48", "--catalog", str(p), "--json"), "mycat.yaml: prices.nic_4x10g_usd",
                    "not a number")


def test_catalog_not_found(tmp_path):
    _one_line_error(run("--ports", "48", "--catalog", str(tmp_path / "nope.yaml")), "nope.yaml")


# ---- catalog loader ---------------------------------------------------------------------------

def test_default_catalog_is_the_paper():
    c = load_catalog()
    p = c.prices
    assert (p.server_usd, p.cpu_usd, p.nic_4x1g_usd, p.nic_4x10g_usd, p.nic_2x40g_usd) == (1400, 400, 160, 480, 500)
    assert (p.of_switch_48x1g_usd, p.of_switch_48x10g_usd, p.nic_2x100g_usd, p.of_core_40g_usd) == (2700, 11200, 1300, 21500)
    assert (p.hl_spine_server_usd, p.hl_leaf_server_usd) == (4100, 2350)
    assert c.harmless.access_ports_per_trunk == 12
    assert c.opex.power_w.harmless.min == 164 and c.opex.rack_units_per_48_ports.harmless == 1.3
    assert "(default)" in c.path


@pytest.mark.parametrize("edit,where,what", [
    (lambda d: d["prices"].update(cpu_usd=-1), "prices.cpu_usd", ">="),
    (lambda d: d["prices"].update(cpu_usd=True), "prices.cpu_usd", "not a number"),
    (lambda d: d["prices"].update(cpu_usd="400"), "prices.cpu_usd", "not a number"),
    (lambda d: d["prices"].update(srever_usd=1), "prices.srever_usd", "unknown key"),
    (lambda d: d["opex"]["power_w"]["harmless"].pop("max"), "opex.power_w.harmless.max", "missing"),
    (lambda d: d["harmless"].update(access_ports_per_trunk=0), "harmless.access_ports_per_trunk", ">="),
    (lambda d: d.pop("prices"), "prices", "missing"),
])
def test_catalog_validation(tmp_path, edit, where, what):
    p = _catalog(tmp_path, edit)
    with pytest.raises(InputError) as ei:
        load_catalog(p)
    assert ei.value.where == f"{p}: {where}"
    assert what in ei.value.problem
    assert ei.value.exit_code == 2


def test_catalog_bad_yaml(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("prices: [1, 2\n")
    with pytest.raises(InputError, match="not valid YAML"):
        load_catalog(p)


# ---- report -----------------------------------------------------------------------------------

def test_report_html_and_pdf(tmp_path):
    html, pdf = tmp_path / "r.html", tmp_path / "r.pdf"
    res = run("report", "--out", str(html), "--pdf", str(pdf))
    assert res.exit_code == 0, res.stderr
    text = html.read_text()
    for needle in ("Fig. 3a", "Fig. 3b", "Fig. 5c", "Fig. 5f", "HARMLESS paper, 2017 prices", "Break-even",
                   "OPEX", "Inputs used", "server_usd"):
        assert needle in text
    assert text.count("data:image/png;base64,") >= 6      # 4 figures + TCO + at least one sensitivity plot
    assert "http://" not in text and "https://" not in text  # self-contained
    assert pdf.read_bytes()[:5] == b"%PDF-"


def test_report_scenario_subset_uses_group_catalog(tmp_path):
    p = _catalog(tmp_path, lambda d: d.update(name="my prices"))
    html = tmp_path / "r.html"
    res = run("--catalog", str(p), "report", "--out", str(html), "--scenario", "switch", "--max-ports", "60")
    assert res.exit_code == 0, res.stderr
    text = html.read_text()
    assert "my prices" in text and "<h3>Fig. 3a" in text and "<h3>Fig. 5c" not in text


@pytest.mark.parametrize("args,needle", [
    (["--ports", "0"], "--ports"),
    (["--ports", "-3"], "--ports"),
    (["--speed", "5G"], "--speed"),
    (["--scenario", "ring"], "--scenario"),
    (["--ports", "5000"], "--ports"),     # above the CLOS / tree limits
])
def test_report_bad_input_writes_nothing(tmp_path, args, needle):
    html, pdf = tmp_path / "r.html", tmp_path / "r.pdf"
    _one_line_error(run("report", "--out", str(html), "--pdf", str(pdf), *args), needle)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("edit,needle", [
    (lambda d: d["prices"].pop("nic_2x40g_usd"), "prices.nic_2x40g_usd"),
    (lambda d: d["prices"].update(server_usd="lots"), "prices.server_usd"),
])
def test_report_bad_catalog_writes_nothing(tmp_path, edit, needle):
    p = _catalog(tmp_path, edit)
    out = tmp_path / "out"
    res = run("report", "--out", str(out / "r.html"), "--pdf", str(out / "r.pdf"), "--catalog", str(p))
    _one_line_error(res, needle)
    assert not out.exists()


def test_report_missing_out():
    _one_line_error(run("report"), "--out")


def test_standby_adds_the_second_server_set():
    res = json.loads(run("--ports", "48", "--standby", "--json").output)
    hs = res["harmless_standby"]
    assert hs["capex"] == res["capex"]["harmless"] + hs["standby_capex"] and hs["standby_capex"] > 0
    assert hs["opex_per_year"] > res["opex_per_year"]["harmless"] and hs["tco"] > res["tco"]["harmless"]
    assert "standby" in hs["items"][0]["item"]
    bad = run("--ports", "300", "--scenario", "clos", "--standby")
    assert bad.exit_code == 2 and "--standby" in bad.output
