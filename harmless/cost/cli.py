"""``harmless capex``: CAPEX/OPEX planning from the command line.

    harmless capex --ports 48 --speed 1G [--scenario switch|clos|gateway] [--catalog FILE] [--json]
    harmless capex report --out report.html [--pdf report.pdf] [--scenario ...] [--ports 48]

Every bad input is an :class:`~harmless.errors.InputError`: one line ``error: ...`` on stderr,
exit code 2, nothing written.
"""
from __future__ import annotations

import json
import sys
from typing import Any

import click

from harmless.cost import models as m
from harmless.cost import opex as ox
from harmless.cost.catalog import Catalog, load_catalog
from harmless.errors import HarmlessError, InputError


def _fail(err: HarmlessError) -> None:
    click.echo(f"error: {err}", err=True)
    sys.exit(err.exit_code)


def _int_opt(value: str | None, name: str, minimum: int, what: str) -> int | None:
    if value is None:
        return None
    try:
        n = int(str(value).strip())
    except ValueError:
        raise InputError(name, f"{value!r} is not a whole number", f"give {what}") from None
    if n < minimum:
        raise InputError(name, f"must be >= {minimum}, got {n}", f"give {what}")
    return n


def _speed(value: str) -> str:
    v = str(value).strip().upper()
    if v not in m.SPEEDS:
        raise InputError("--speed", f"unknown access speed {value!r}", "use --speed 1G or --speed 10G")
    return v


def _scenario(value: str) -> str:
    v = str(value).strip().lower()
    if v not in m.SCENARIOS:
        raise InputError("--scenario", f"unknown scenario {value!r}", f"use one of: {', '.join(m.SCENARIOS)}")
    return v


def _owned(spare_servers: str | None, legacy_owned: str | None) -> m.Owned:
    spare = _int_opt(spare_servers, "--spare-servers", 0, "the number of spare servers you own, e.g. 2") or 0
    legacy = None
    if legacy_owned is not None and str(legacy_owned).strip().lower() != "all":
        legacy = _int_opt(legacy_owned, "--legacy-owned", 0, "a number of legacy switches, or 'all'")
    return m.Owned(spare_servers=spare, legacy_switches=legacy)


def _catalog(path: str | None) -> Catalog:
    return load_catalog(path)


def _ports_error(err: InputError) -> InputError:
    """Models name the field ``ports``; on the command line it is ``--ports``."""
    if err.where in ("ports", "speed", "scenario"):
        return InputError(f"--{err.where}", err.problem, err.fix)
    return err


def capex_result(cat: Catalog, scenario: str, ports: int, speed: str, owned: m.Owned) -> dict[str, Any]:
    """The JSON-able result of ``harmless capex`` (one object)."""
    items = m.scenario_items(scenario, ports, speed, cat, owned)
    totals = {o: m.total(items[o]) for o in ("hardware", "software", "harmless")}

    def ratio(a: str, b: str) -> float | None:
        ta, tb = totals[a], totals[b]
        return None if ta is None or not tb else round(ta / tb, 4)

    avail = {o: t for o, t in totals.items() if t is not None}
    res: dict[str, Any] = {
        "ports": ports, "speed": speed, "currency": cat.currency, "scenario": scenario,
        "capex": totals,
        "ratios": {"hardware_over_harmless": ratio("hardware", "harmless"),
                   "software_over_harmless": ratio("software", "harmless"),
                   "software_over_hardware": ratio("software", "hardware")},
        "cheapest": min(avail, key=avail.get) if avail else None,
        "per_port": {o: (None if t is None else round(t / ports, 2)) for o, t in totals.items()},
        "catalog": {"name": cat.name, "path": cat.path, "source": cat.source},
        "owned": {"spare_servers": owned.spare_servers,
                  "legacy_switches": "all" if owned.legacy_switches is None else owned.legacy_switches},
        "items": {o: (None if v is None else [{"item": i.item, "qty": i.qty, "price_key": i.price_key,
                                               "unit": i.unit, "total": i.total} for i in v])
                  for o, v in items.items()},
    }
    if scenario == "switch":
        op = {o: ox.opex(o, ports, cat) for o in ("hardware", "software", "harmless")}
        res["opex_per_year"] = {o: round(f.usd_per_year, 2) for o, f in op.items()}
        res["power_w"] = {o: {"min": f.power_min_w, "max": f.power_max_w, "avg": f.power_avg_w} for o, f in op.items()}
        res["rack_units"] = {o: f.rack_units for o, f in op.items()}
        res["tco_years"] = cat.opex.years
        res["tco"] = {o: round(ox.tco(totals[o], op[o].usd_per_year, cat.opex.years), 2) for o in op}
    return res


def _print_table(res: dict[str, Any]) -> None:
    """The CAPEX table (:func:`harmless.clikit.print_table`: whole in a terminal, tab-separated in a pipe)."""
    from harmless.clikit import Col, print_table
    from harmless.clikit import out as con

    cur = res["currency"]
    cols = [Col("option"), Col(f"CAPEX [{cur}]", "right"), Col(f"per port [{cur}]", "right"),
            Col("× HARMLESS", "right")]
    if "tco" in res:
        cols.append(Col(f"TCO {res['tco_years']:g} y [{cur}]", "right"))
    hl = res["capex"]["harmless"]
    names = {"hardware": "hardware OF switch", "software": "software switch",
             "harmless": "HARMLESS"}
    rows = []
    for o in ("hardware", "software", "harmless"):
        v = res["capex"][o]
        row = [names[o] + (" *" if o == res["cheapest"] else "")]
        if v is None:
            row += ["n/a", "", ""]
        else:
            row += [f"{v:,.0f}", f"{v / res['ports']:,.2f}", f"{v / hl:.2f}" if hl else "–"]
        if "tco" in res:
            row.append("" if v is None else f"{res['tco'][o]:,.0f}")
        rows.append(row)
    print_table(f"CAPEX, {res['scenario']} scenario: {res['ports']} access ports at {res['speed']}", cols, rows)
    r = res["ratios"]
    parts = [f"hardware/HARMLESS = {r['hardware_over_harmless']:.2f}" if r["hardware_over_harmless"] else None,
             f"software/HARMLESS = {r['software_over_harmless']:.2f}" if r["software_over_harmless"] else None,
             f"software/hardware = {r['software_over_hardware']:.2f}" if r["software_over_hardware"] else None]
    con.print("ratios: " + ", ".join(p for p in parts if p), highlight=False, markup=False)
    con.print(f"* cheapest. Catalog: {res['catalog']['name']} ({res['catalog']['path']}). "
              f"Legacy switches owned: {res['owned']['legacy_switches']}, spare servers: {res['owned']['spare_servers']}.",
              highlight=False, markup=False)
    if res["scenario"] == "switch" and res["speed"] == "10G":
        con.print("OPEX/TCO use Table I's 1G figures (the paper has none for 10G).", highlight=False, markup=False)


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--ports", metavar="N", help="Number of access ports (>= 1).")
@click.option("--speed", default="1G", show_default=True, metavar="1G|10G", help="Access port speed.")
@click.option("--scenario", default="switch", show_default=True, metavar="switch|clos|gateway",
              help="switch: one x-port SDN switch (Sec. III, Fig. 3); clos: CLOS DC (Fig. 5c); gateway: access tree (Fig. 5f).")
@click.option("--catalog", "catalog_path", metavar="FILE", help="Price catalog YAML (default: the paper's 2017 prices).")
@click.option("--spare-servers", metavar="N", help="Servers you already own (count as zero CAPEX).")
@click.option("--legacy-owned", metavar="N|all", help="Legacy switches you already own (default: all, as in the paper).")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option("--server-gbps", metavar="X", help="Measured HARMLESS capacity of one server in Gbit/s (IMIX): adds a "
              "HARMLESS row sized by it instead of the paper's assumption (switch scenario).")
@click.option("--bench-result", metavar="FILE", help="Take --server-gbps from a 'harmless bench --sizing --json' "
              "result file (best trunk type).")
@click.option("--load", "load_pct", default="100", show_default=True, metavar="PCT",
              help="With --server-gbps: average load of an access port in % of its speed.")
@click.pass_context
def capex(ctx: click.Context, ports: str | None, speed: str, scenario: str, catalog_path: str | None,
          spare_servers: str | None, legacy_owned: str | None, as_json: bool, server_gbps: str | None,
          bench_result: str | None, load_pct: str) -> None:
    """CAPEX of an SDN deployment as hardware OpenFlow switches, software switches or HARMLESS.

    Models and 2017 prices from Csikor et al., IFIP Networking 2018 (Sec. III, IV.B.3, Table I).
    """
    ctx.ensure_object(dict)
    ctx.obj.update(catalog=catalog_path, spare_servers=spare_servers, legacy_owned=legacy_owned)
    if ctx.invoked_subcommand is not None:
        return
    try:
        if ports is None:
            raise InputError("--ports", "missing", "give the number of access ports, e.g. --ports 48")
        n = _int_opt(ports, "--ports", 1, "a whole number of access ports >= 1, e.g. --ports 48")
        sp, sc = _speed(speed), _scenario(scenario)
        owned = _owned(spare_servers, legacy_owned)
        cat = _catalog(catalog_path)
        try:
            res = capex_result(cat, sc, n, sp, owned)
        except InputError as err:
            raise _ports_error(err) from None
        if server_gbps is not None or bench_result is not None:
            res["harmless_measured"] = _measured(n, sp, sc, cat, owned, server_gbps, bench_result, load_pct)
    except HarmlessError as err:
        _fail(err)
        return
    if as_json:
        click.echo(json.dumps(res))
    else:
        _print_table(res)
        hm = res.get("harmless_measured")
        if hm:
            click.echo(f"HARMLESS with this server's measured capacity ({hm['server_gbps']:g} Gbit/s, "
                       f"{hm['source']}; access ports at {hm['load'] * 100:g} % load): {hm['capex']:,.0f} "
                       f"{res['currency']}, {hm['per_port']:,.2f} per port, {hm['servers']} server(s) of "
                       f"{hm['ports_per_server']} ports (limited by {hm['limited_by']})")


def _float_opt(value: str, name: str, what: str) -> float:
    try:
        return float(str(value).strip())
    except ValueError:
        raise InputError(name, f"{value!r} is not a number", f"give {what}") from None


def _measured(n: int, sp: str, sc: str, cat: Catalog, owned: m.Owned, server_gbps: str | None,
              bench_result: str | None, load_pct: str) -> dict[str, Any]:
    """The ``harmless_measured`` part of the result (:func:`harmless.cost.capacity.measured_harmless`)."""
    from harmless.bench.sizing import server_gbps_from
    from harmless.cost.capacity import measured_harmless
    if sc != "switch":
        raise InputError("--server-gbps", f"a measured capacity applies to the switch scenario, not {sc}",
                         "drop --scenario or --server-gbps/--bench-result")
    if server_gbps is not None and bench_result is not None:
        raise InputError("--bench-result", "given together with --server-gbps", "give one of them")
    load = _float_opt(load_pct, "--load", "a percentage, e.g. 30") / 100
    if bench_result is not None:
        try:
            text = open(bench_result).read()
            try:
                doc = json.loads(text)
            except ValueError:            # captured output of harmless bench --sizing --json: JSON is the last line
                doc = json.loads(text.strip().splitlines()[-1] if text.strip() else "{}")
            gbps, what = server_gbps_from(doc)
        except OSError as e:
            raise InputError("--bench-result", f"cannot read {bench_result}: {e.strerror}",
                             "give the JSON file harmless bench --sizing --json --out DIR wrote (sizing.json)") from None
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise InputError("--bench-result", f"{bench_result}: {e}",
                             "give the sizing.json of harmless bench --sizing --out DIR") from None
        source = f"{bench_result}: {what}"
    else:
        gbps = _float_opt(server_gbps, "--server-gbps", "the measured Gbit/s, e.g. 4.5")
        source = "--server-gbps"
    return measured_harmless(n, sp, cat, gbps, load, owned, source)


@capex.command("report")
@click.option("--out", "out", metavar="FILE", help="HTML report to write (self-contained).")
@click.option("--pdf", "pdf", metavar="FILE", help="Also write a PDF.")
@click.option("--scenario", "scenarios", multiple=True, metavar="switch|clos|gateway|all",
              help="Scenarios to include (repeatable; default all).")
@click.option("--ports", default="48", show_default=True, metavar="N", help="Port count of the tables and sensitivity.")
@click.option("--speed", default="1G", show_default=True, metavar="1G|10G", help="Speed of the single-switch table.")
@click.option("--max-ports", metavar="N", help="Upper end of the plotted port range (default per figure).")
@click.option("--catalog", "catalog_path", metavar="FILE", help="Price catalog YAML (default: the paper's 2017 prices).")
@click.option("--spare-servers", metavar="N", help="Servers you already own.")
@click.option("--legacy-owned", metavar="N|all", help="Legacy switches you already own (default: all).")
@click.option("--json", "as_json", is_flag=True, help='print {"written": [files], "catalog": {"name", "path"}}')
@click.pass_context
def report(ctx: click.Context, out: str | None, pdf: str | None, scenarios: tuple[str, ...], ports: str, speed: str,
           max_ports: str | None, catalog_path: str | None, spare_servers: str | None, legacy_owned: str | None,
           as_json: bool) -> None:
    """Write an HTML (and PDF) cost report with the paper's Fig. 3a/3b/5c/5f, OPEX/TCO and sensitivity."""
    from harmless.cost.report import compute, write_report

    parent = ctx.obj or {}
    try:
        if not out:
            raise InputError("--out", "missing", "give the HTML file to write, e.g. --out report.html")
        n = _int_opt(ports, "--ports", 1, "a whole number of access ports >= 1")
        mx = _int_opt(max_ports, "--max-ports", 2, "a port count >= 2")
        sp = _speed(speed)
        wanted: list[str] = []
        for s in scenarios or ("all",):
            for part in s.split(","):
                part = part.strip().lower()
                names = list(m.SCENARIOS) if part == "all" else [_scenario(part)]
                wanted += [x for x in names if x not in wanted]
        owned = _owned(spare_servers if spare_servers is not None else parent.get("spare_servers"),
                       legacy_owned if legacy_owned is not None else parent.get("legacy_owned"))
        cat = _catalog(catalog_path or parent.get("catalog"))
        try:
            data = compute(cat, n, sp, wanted, owned, mx)
        except InputError as err:
            raise _ports_error(err) from None
        written = write_report(data, out, pdf)
    except HarmlessError as err:
        _fail(err)
        return
    except OSError as err:
        _fail(InputError(getattr(err, "filename", None) or "report", f"cannot write the report ({err.strerror or err})",
                         "choose a writable path"))
        return
    if as_json:
        click.echo(json.dumps({"written": [str(p) for p in written], "catalog": {"name": cat.name,
                                                                                  "path": str(cat.path)}}))
    else:
        click.echo("wrote " + ", ".join(str(p) for p in written) + f" (catalog: {cat.name}, {cat.path})")


if __name__ == "__main__":  # pragma: no cover
    capex()
