"""Faucet's hardware-switch integration tests against HARMLESS and a plain OVS bridge, in one run.

    python -m tests.interop.faucethw install            # Debian packages + the suite's own virtualenv (idempotent)
    python -m tests.interop.faucethw run --list ci      # the CI subset; --list long, or --tests A,B.c
    python -m tests.interop.faucethw lists              # the named lists and the known differences
    python -m tests.interop.faucethw render REPORT.json # a saved report again (current known differences)

Run as root from the repository root with HARMLESS's virtualenv (``.venv/bin/python -m ...``). ``run`` exits 1 when a
test passes on plain OVS and fails on HARMLESS, 2 on bad arguments, 0 otherwise. See docs/faucet.md.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from rich.console import Console

from harmless.errors import HarmlessError

err = Console(stderr=True)


def _progress(msg: str) -> None:
    err.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] {msg}", highlight=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main():
    """Faucet's own integration tests (hardware-switch mode) against br-of of the built-in lab and a plain OVS
    bridge; a per-test comparison table."""


@main.command()
@click.option("--suite-dir", type=click.Path(path_type=Path), help="suite folder (default: $HARMLESS_FAUCET_SUITE "
              "or <repo>/.faucet-suite)")
def install(suite_dir):
    """Install mininet and the tools the suite calls (apt) and a virtualenv with Faucet's sdist and its pinned test
    requirements. Skipped when already installed."""
    from tests.interop.faucethw.install import Suite, install as do_install
    try:
        do_install(Suite(suite_dir.resolve()) if suite_dir else None, _progress)
    except HarmlessError as e:
        err.print(f"error: {e}", highlight=False)
        sys.exit(e.exit_code)


@main.command("lists")
def lists_cmd():
    """Print the named test lists and the known differences (tests/interop/faucethw/lists.yaml)."""
    from tests.interop.faucethw.run import load_lists
    data = load_lists()
    for name, tests in data["lists"].items():
        click.echo(f"{name}: {len(tests)}")
        for t in tests:
            click.echo(f"  {t}")
    click.echo("known differences:")
    for t, k in (data.get("known") or {}).items():
        click.echo(f"  {t}: {k['why']}")


def _tests(list_name: str | None, tests: str | None) -> tuple[str, list[str]]:
    from tests.interop.faucethw.run import load_lists
    if tests:
        return "custom", [t.strip() for t in tests.split(",") if t.strip()]
    lists = load_lists()["lists"]
    if list_name not in lists:
        raise click.BadParameter(f"{list_name!r} is not one of {', '.join(lists)}", param_hint="--list")
    return list_name, list(lists[list_name])


@main.command()
@click.option("--list", "list_name", default="ci", show_default=True, help="named test list (lists.yaml)")
@click.option("--tests", help="comma-separated Class or Class.method instead of --list")
@click.option("--side", type=click.Choice(["both", "plain", "harmless"]), default="both", show_default=True,
              help="which switches to test")
@click.option("--serial", is_flag=True, help="test the switches one after the other (default: at the same time)")
@click.option("--no-retry", is_flag=True, help="do not run a failed test once more on the side where it failed")
@click.option("--out", type=click.Path(path_type=Path), help="also write <out>/<stem>.json and .md")
@click.option("--stem", help="file name stem for --out (default: faucet-hw-<list>)")
@click.option("--work", type=click.Path(path_type=Path), help="run folder (logs of failed tests are kept there); "
              "default: a new temporary folder")
@click.option("--platform", type=click.Choice(["2960", "3750", "me3750"]), default="me3750", show_default=True,
              help="the lab's emulated Catalyst (me3750 tunnels LLDP and CDP; 2960 tunnels nothing)")
@click.option("--l2pt", default="lldp,cdp", show_default=True, metavar="PROTOCOLS",
              help="link-local protocols the lab switch tunnels for every port (inventory l2pt; '' for none)")
@click.option("--dry-run", is_flag=True, help="print the tests and what would be built; build nothing")
@click.option("--json", "as_json", is_flag=True, help="print the report as one JSON object")
def run(list_name, tests, side, serial, no_retry, out, stem, work, platform, l2pt, dry_run, as_json):
    """Build the lab with br-of (harmless up) and a plain OVS bridge, run the tests in Faucet's hardware-switch
    mode against each, print the per-test table. Exit 1 when a test passes on plain OVS and fails on HARMLESS."""
    from tests.interop.faucethw.compare import compare
    from tests.interop.faucethw.report import print_table, write
    name, chosen = _tests(list_name, tests)
    sides = ("plain", "harmless") if side == "both" else (side,)
    protocols = tuple(x.strip() for x in l2pt.split(",") if x.strip())
    if dry_run:
        click.echo(f"would build: {' and '.join(sides)} (lab Catalyst {platform}, l2pt {','.join(protocols) or 'none'}); "
                   f"run {len(chosen)} test(s) of list {name}: {', '.join(chosen)}")
        return
    try:
        rep = compare(name, chosen, sides, not serial, not no_retry, work, _progress, platform, protocols)
    except HarmlessError as e:
        err.print(f"error: {e}", highlight=False)
        sys.exit(e.exit_code)
    if out:
        for p in write(rep, out, stem or f"faucet-hw-{name}"):
            _progress(f"wrote {p}")
    if as_json:
        click.echo(rep.model_dump_json())
    else:
        print_table(rep, Console())
    sys.exit(1 if rep.regressions else 0)


@main.command()
@click.argument("report_json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), help="write <out>/<stem>.json and .md instead of printing")
@click.option("--stem", help="file name stem for --out (default: the JSON file's)")
def render(report_json, out, stem):
    """Print (or write) a saved report again, with the known differences of the current lists.yaml."""
    from tests.interop.faucethw.report import Report, print_table, write
    from tests.interop.faucethw.run import load_lists, relabel
    rep = Report.model_validate_json(report_json.read_text())
    relabel(rep.rows, load_lists().get("known") or {})
    if out:
        for p in write(rep, out, stem or report_json.stem):
            _progress(f"wrote {p}")
    else:
        print_table(rep, Console())


if __name__ == "__main__":
    main()
