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
@click.option("--rounds", type=int, default=None, help="Alternating rounds per system (medians) [quick: 5, paper: 2].")
@click.option("--hugepages/--no-hugepages", default=False, show_default=True,
              help="2 MiB hugepages for OVS and testpmd (default: --no-huge, memfd-backed).")
@click.option("--baseline/--no-baseline", default=None,
              help="Also measure (c), the DPDK io-forwarding baseline (default: on for paper, off for quick).")
@click.option("--parts", default=None, metavar="LIST",
              help="paper: comma-separated subset of loop,experiments,frames,l2,l3,lb,gateway,control,baseline "
                   "(default: all, ~20-25 min on 2 vCPUs).")
@click.option("--trial-seconds", type=float, default=1.0, show_default=True,
              help="paper: length of one RFC 2544 trial, up to 60 s (RFC 2544 §24 asks for at least 60 s; "
                   "longer = slower suite).")
@click.option("--max-trials", type=int, default=6, show_default=True,
              help="paper: search steps per NDR/PDR search and system.")
@click.option("--retries", type=int, default=1, show_default=True,
              help="paper: repeat a lossy trial this often before the rate counts as lossy (0 = strict RFC 2544).")
@click.option("--frame-sizes", default="64,128,256,512,1024,1280,1518", show_default=True,
              help="paper: frame sizes (bytes, with FCS).")
@click.option("--trunk", type=click.Choice(["system", "afxdp", "dpdk", "all"]), default=None,
              help="Measure HARMLESS vs plain per trunk type: system (AF_PACKET) and afxdp (AF_XDP, native XDP on "
                   "veth) with the generator behind veth pairs, dpdk (vhost-user); all = the three in one run.")
@click.option("--bidirectional", is_flag=True,
              help="--trunk/--sizing: traffic both ways (A->B and B->A); default one way (A->B).")
@click.option("--frames", type=click.Choice(["64", "imix"]), default="64", show_default=True,
              help="--trunk: 64-byte frames or the simple IMIX 7:4:1 (64/570/1518 B).")
@click.option("--repeat", type=click.IntRange(1, 20), default=1, show_default=True,
              help="Run the measurement N times (fresh OVS each time); results give the median and the spread.")
@click.option("--sizing", is_flag=True,
              help="How many access ports at what load this server carries, per trunk type (IMIX, Mpps and "
                   "Gbit/s per core); measures --trunk (default all) first.")
@click.option("--cores", type=click.IntRange(1, 256), default=1, show_default=True,
              help="--sizing: OVS cores to size for (the one-core figure scaled linearly; an assumption).")
@click.option("-q", "--quiet", is_flag=True, help="no progress lines on stderr (errors and the result still print)")
def bench(quick, suite, out_dir, as_json, duration, rounds, hugepages, baseline, parts, trial_seconds, max_trials,
          retries, frame_sizes, trunk, bidirectional, frames, repeat, sizing, cores, quiet):
    """Benchmark the HARMLESS server path against the same pipeline on plain OVS-DPDK, in one run.

    Mpps figures of --quick are RFC 2889 maximum forwarding rates in a closed testpmd loop (labelled so in
    the output); OVS cycles/packet (pmd-stats-show) are recorded next to them. --suite paper adds the frame-size
    sweep, the use-case workloads (L2, L3, load balancer + ACL, access gateway) with growing rule/flow counts measured
    with a paced DPDK generator (RFC 2544 NDR/PDR throughput, RFC 2889 MFR, latency), the control-plane timings
    (reactive flow setup, rule installation with/without bundles) and the translator/OVS-settings experiments.
    The paced generator (bench/gen/hlbgen.c) is compiled on first use (needs gcc, pkg-config, dpdk-dev).
    """
    if suite is None:
        suite = "quick" if quick or out_dir is None else "paper"
    from harmless.bench.paper import ALL_PARTS
    chosen = tuple(p.strip() for p in parts.split(",")) if parts else ALL_PARTS
    bad = [p for p in chosen if p not in ALL_PARTS]
    if bad:
        raise click.BadParameter(f"unknown part(s) {', '.join(bad)}; choose from {','.join(ALL_PARTS)}",
                                 param_hint="--parts")
    if baseline is False:
        chosen = tuple(p for p in chosen if p != "baseline")
    try:
        sizes = tuple(int(x) for x in frame_sizes.split(","))
    except ValueError:
        raise click.BadParameter("comma-separated integers, e.g. 64,512,1518", param_hint="--frame-sizes")
    if any(x < 64 or x > 1518 for x in sizes):
        raise click.BadParameter("frame sizes must be within 64..1518", param_hint="--frame-sizes")
    if not 0 < trial_seconds <= 60 or max_trials < 1 or retries < 0:
        raise click.BadParameter("need 0 < --trial-seconds <= 60, --max-trials >= 1, --retries >= 0")
    if (trunk or sizing) and suite == "paper" and not quick:
        suite = "quick"
    _preflight()
    progress = _progress(quiet)
    try:
        if trunk or sizing:
            _trunk_bench(trunk or "all", sizing, bidirectional, "imix" if sizing else frames, repeat, cores,
                         duration, rounds, hugepages, out_dir, as_json, progress)
        elif suite == "quick" and repeat > 1:
            from harmless.bench.quick import machine_info, run_quick
            from harmless.bench.trunkbench import combine_repeats
            runs = [run_quick(duration=duration or 3.0, rounds=rounds or 5, hugepages=hugepages, progress=progress)
                    for _ in range(repeat)]
            res = combine_repeats(runs)
            res.update(machine=machine_info(), versions=machine_info()["versions"])
            _write(out_dir, "quick.json", res)
            _print_repeat(res)
            if as_json:
                click.echo(json.dumps(res, sort_keys=True))
        elif suite == "quick":
            from harmless.bench.quick import run_quick
            res = run_quick(duration=duration or 3.0, rounds=rounds or 5, hugepages=hugepages,
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
                slim["versions"] = res["machine"]["versions"]
                click.echo(json.dumps(slim, sort_keys=True))
        else:
            from harmless.bench.hlbgen import build
            from harmless.bench.paper import run_paper
            from harmless.bench.rfc2544 import SearchSettings
            out_dir = out_dir or Path("bench-results")
            progress(f"paced generator: {build()}")
            res = run_paper(out_dir, duration=duration or 2.0, rounds=rounds or 2,
                            hugepages=hugepages, parts=chosen, frame_sizes=sizes,
                            settings=SearchSettings(trial_s=trial_seconds, max_trials=max_trials, retries=retries),
                            progress=progress)
            click.echo(f"results, plots and summary in {out_dir}/ (summary.md)")
            if as_json:
                click.echo(json.dumps({"out": str(out_dir), "parts": list(chosen),
                                       "results": str(out_dir / "results.json"),
                                       **res.get("headline", {})}, sort_keys=True))
    except KeyboardInterrupt:
        click.echo("interrupted: everything the benchmark started was stopped", err=True)
        sys.exit(130)
    except HarmlessError as e:
        raise click.ClickException(str(e))


def _write(out_dir: Path | None, name: str, doc: dict) -> None:
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / name).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def _print_repeat(res: dict) -> None:
    sp = res["spread"]
    click.echo(f"  {res['repeat']} runs: ratio median {sp['ratio']['median']:.2f} (min {sp['ratio']['min']:.2f}, "
               f"max {sp['ratio']['max']:.2f}), cycles ratio median {sp['cycles_ratio']['median']:.2f} "
               f"(spread {sp['cycles_ratio']['spread_pct']:.0f} %)")


def _trunk_line(t: str, r: dict) -> str:
    return (f"  {t:7s} HARMLESS {r['harmless_mpps']:6.3f} Mpps {r['harmless_gbps']:6.3f} Gbit/s "
            f"{r['harmless_cycles_per_packet']:7.0f} cyc/pkt | plain {r['plain_mpps']:6.3f} Mpps "
            f"{r['plain_gbps']:6.3f} Gbit/s {r['plain_cycles_per_packet']:7.0f} cyc/pkt | ratio {r['ratio']:.2f} "
            f"(cycles {r['cycles_ratio']:.2f})")


def _trunk_bench(trunk, sizing, bidirectional, frames, repeat, cores, duration, rounds, hugepages, out_dir,
                 as_json, progress) -> None:
    """``--trunk`` / ``--sizing``: measure, print a table per trunk type, optionally the sizing; JSON last."""
    from harmless.bench.quick import cpu_hz
    from harmless.bench.sizing import sizing as size
    from harmless.bench.trunkbench import TRUNK_TYPES, run_trunks
    types = list(TRUNK_TYPES) if trunk == "all" else [trunk]
    doc = run_trunks(types, repeat=repeat, progress=progress, duration=duration or 3.0, rounds=rounds or 3,
                     imix=frames == "imix", bidirectional=bidirectional, hugepages=hugepages)
    hz = cpu_hz()
    for r in doc["trunks"].values():
        r.setdefault("versions", doc["versions"])
    direction = "both ways" if bidirectional else "one way"
    click.echo(f"HARMLESS vs plain per trunk type, {frames} frames, {direction}, {repeat} run(s), load average at "
               f"start {doc['machine'].get('loadavg')} on {doc['machine'].get('cpus')} CPUs "
               f"({doc['machine'].get('cpu_model')}, virtual: {doc['machine']['virtualization']['virtual']})")
    for t, r in doc["trunks"].items():
        click.echo(_trunk_line(t, r))
        if r.get("xdp_modes"):
            click.echo(f"          XDP modes: {', '.join(sorted(set(r['xdp_modes'].values())))}")
    for t, e in doc["errors"].items():
        click.echo(f"  {t:7s} failed: {e}")
    if sizing:
        sz = size(doc["trunks"], hz, cores)
        doc["sizing"] = sz
        doc["cpu_hz"] = hz
        click.echo(f"sizing ({cores} OVS core(s), IMIX, capacity from HARMLESS cycles per packet):")
        for t, z in sz["trunks"].items():
            ports = ", ".join(f"{k} {v}" for k, v in z["access_ports"]["1G"].items())
            click.echo(f"  {t:7s} {z['server_mpps']:6.2f} Mpps {z['server_gbps']:6.2f} Gbit/s -> 1G access ports "
                       f"at load {ports}")
        if sz.get("best"):
            click.echo(f"  best trunk type here: {sz['best']}")
    _write(out_dir, "sizing.json" if sizing else "trunks.json", doc)
    if as_json:
        if len(types) == 1 and not sizing and types[0] in doc["trunks"]:
            one = dict(doc["trunks"][types[0]])
            if repeat == 1:
                one.pop("runs", None)
            one["machine"] = doc["machine"]
            click.echo(json.dumps(one, sort_keys=True))
        else:
            click.echo(json.dumps(doc, sort_keys=True))
    if doc["errors"]:
        sys.exit(1)


if __name__ == "__main__":    # pragma: no cover
    bench()
