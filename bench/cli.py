"""``harmless bench``: DPDK benchmarks of the HARMLESS server path against plain OVS-DPDK (DESIGN.md §7).

Register with ``from harmless.bench.cli import bench; main.add_command(bench)``.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from harmless.errors import HarmlessError


def _progress(quiet: bool):
    def p(msg: str) -> None:
        if not quiet:
            click.echo(msg, err=True)
    return p


def _preflight() -> None:
    from harmless.bench.testpmd import testpmd_installed
    from harmless.ovs import VSWITCHD_DPDK
    if os.geteuid() != 0:
        raise click.ClickException("harmless bench needs root (OVS-DPDK, vhost-user sockets)")
    if not VSWITCHD_DPDK.exists():
        raise click.ClickException("OVS-DPDK is missing: apt-get install openvswitch-switch-dpdk")
    if not testpmd_installed():
        raise click.ClickException("dpdk-testpmd is missing: apt-get install dpdk-dev")


@click.command("bench")
@click.option("--quick", is_flag=True, help="HARMLESS/plain ratio for the L2 bridge workload at 64 B (< 2 min).")
@click.option("--suite", type=click.Choice(["quick", "paper"]), default=None,
              help="quick = same as --quick; paper = the full matrix (long).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for raw results (JSON/CSV), plots and the Markdown summary.")
@click.option("--json", "as_json", is_flag=True, help="Last line of output is one JSON object.")
@click.option("--duration", type=float, default=None, help="Seconds per measurement window.")
@click.option("--rounds", type=int, default=5, show_default=True, help="Alternating rounds per system (medians).")
@click.option("--hugepages/--no-hugepages", default=False, show_default=True,
              help="2 MiB hugepages for OVS and testpmd (default: --no-huge, memfd-backed).")
@click.option("--baseline/--no-baseline", default=None,
              help="Also measure (c), the DPDK io-forwarding baseline (default: on for paper, off for quick).")
def bench(quick, suite, out_dir, as_json, duration, rounds, hugepages, baseline):
    """Benchmark the HARMLESS server path against the same pipeline on plain OVS-DPDK, in one run.

    Mpps figures of --quick are RFC 2889 maximum forwarding rates in a closed testpmd loop (labelled so in
    the output); OVS cycles/packet (pmd-stats-show) are recorded next to them. --suite paper adds the frame-size
    sweep, the use-case workloads with growing rule counts, the translator/OVS-settings experiments and the
    RFC 2544 zero-loss search where the generator can pace traffic.
    """
    if suite is None:
        suite = "quick" if quick or out_dir is None else "paper"
    _preflight()
    progress = _progress(False)
    try:
        if suite == "quick":
            from harmless.bench.quick import run_quick
            res = run_quick(duration=duration or 3.0, rounds=rounds, hugepages=hugepages,
                            baseline=bool(baseline), progress=progress)
            if out_dir:
                out_dir.mkdir(parents=True, exist_ok=True)
                (out_dir / "quick.json").write_text(json.dumps(res, indent=2) + "\n")
            click.echo(f"L2 bridge workload, 64 B, {res['method']}")
            click.echo(f"  HARMLESS {res['harmless_mpps']:.2f} Mpps  {res['harmless_cycles_per_packet']:.0f} cycles/pkt")
            click.echo(f"  plain    {res['plain_mpps']:.2f} Mpps  {res['plain_cycles_per_packet']:.0f} cycles/pkt")
            if "baseline_mpps" in res:
                click.echo(f"  baseline {res['baseline_mpps']:.2f} Mpps (testpmd io forwarder, no OVS)")
            click.echo(f"  ratio HARMLESS/plain: {res['ratio']:.2f} (Mpps), {res['cycles_ratio']:.2f} "
                       f"(plain/HARMLESS cycles per packet)")
            if as_json:
                slim = {k: v for k, v in res.items() if k != "samples"}
                click.echo(json.dumps(slim, sort_keys=True))
        else:
            from harmless.bench.paper import run_paper
            out_dir = out_dir or Path("bench-results")
            res = run_paper(out_dir, duration=duration or 3.0, hugepages=hugepages,
                            baseline=True if baseline is None else baseline, progress=progress)
            click.echo(f"results, plots and summary in {out_dir}/ (summary.md)")
            if as_json:
                click.echo(json.dumps(res.get("headline", {}), sort_keys=True))
    except KeyboardInterrupt:
        click.echo("interrupted: everything the benchmark started was stopped", err=True)
        sys.exit(130)
    except HarmlessError as e:
        raise click.ClickException(str(e))


if __name__ == "__main__":    # pragma: no cover
    bench()
