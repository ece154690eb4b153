"""``harmless bench --suite paper``: the part of the matrix that runs today, with raw results, plots and a summary.

Implemented: frame-size sweep (64..1518 B, L2 workload), L2 rule-count sweep (2..100k destination MACs), the
translator/OVS-setting experiments (:mod:`harmless.bench.experiments`) and (c) the io-forwarding baseline, all as
closed-loop maximum forwarding rates (RFC 2889 style; see :data:`harmless.bench.quick.METHOD_LOOP`) with OVS
cycles/packet. Not yet: RFC 2544 zero-loss throughput on OVS (needs a paced generator: virtio_user has no queue
rate limit; :mod:`harmless.bench.search` is ready for one), latency, L3/LB/gateway traffic, control-plane timing.
"""
from __future__ import annotations

import csv
import json
import shutil
import time
from pathlib import Path

from harmless.bench.experiments import run_variants, simd_capabilities
from harmless.bench.quick import (METHOD_LOOP, Progress, Session, _noop, clean_stop, compare, machine_info,
                                  make_workdir, run_baseline)
from harmless.bench.workloads import l2_workload

FRAME_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
L2_SIZES = (2, 100, 10_000, 100_000)


def run_paper(out: Path, duration: float = 3.0, rounds: int = 2, hugepages: bool = False, baseline: bool = True,
              frame_sizes=FRAME_SIZES, l2_sizes=L2_SIZES, experiments: bool = True,
              progress: Progress = _noop) -> dict:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    workdir = make_workdir()
    res: dict = {"method": METHOD_LOOP, "duration_s": duration, "rounds": rounds, "hugepages": hugepages,
                 "machine": machine_info(), "frame_sizes": [], "l2_sizes": [], "experiments": []}
    sess = Session(workdir, hugepages=hugepages, progress=progress)
    try:
        with clean_stop():
            sess.open(l2_workload(2))
            res["simd"] = simd_capabilities(sess.appctl)
            for sysname in ("harmless", "plain"):
                sess.measure(sysname, 1.0, warmup=0.5)
            for fs in frame_sizes:
                progress(f"frame size {fs} B")
                sess.set_frame_size(fs)
                r = compare(sess, duration, rounds, progress)
                res["frame_sizes"].append({"frame_size": fs, **r})
            sess.set_frame_size(64)
            for n in l2_sizes:
                progress(f"L2 workload with {n} destination MACs")
                sess.systems.install_pipeline(l2_workload(n))
                r = compare(sess, duration, rounds, progress)
                res["l2_sizes"].append({"n_flows": n, **r})
            sess.systems.install_pipeline(l2_workload(2))
            if experiments:
                res["experiments"] = run_variants(sess, duration, rounds, progress)
            sess.close()
            if baseline:
                b = run_baseline(workdir, duration, hugepages, progress=progress)
                res["baseline_mpps"] = round(b.mpps, 3)
    finally:
        sess.close()
        shutil.rmtree(workdir, ignore_errors=True)
    res["elapsed_s"] = round(time.monotonic() - t0, 1)
    first = (res["frame_sizes"] or res["l2_sizes"] or [{}])[0]
    res["headline"] = {k: first.get(k) for k in ("harmless_mpps", "plain_mpps", "ratio", "harmless_cycles_per_packet",
                                                 "plain_cycles_per_packet", "cycles_ratio")}
    write_results(out, res)
    return res


def _rows(res: dict):
    for key, param in (("frame_sizes", "frame_size"), ("l2_sizes", "n_flows"), ("experiments", "variant")):
        for r in res.get(key, []):
            for system, samples in r.get("samples", {}).items():
                for i, s in enumerate(samples):
                    yield {"series": key, "param": r[param], "system": system, "round": i + 1, "mpps": s["mpps"],
                           "cycles_per_packet": s["cycles_per_packet"], "idle_fraction": s["idle_fraction"],
                           "emc_hits": s["datapath"].get("emc_hits"), "upcalls": s["datapath"].get("upcalls")}


def write_results(out: Path, res: dict) -> None:
    """results.json (everything), results.csv (one row per window), plots, summary.md."""
    (out / "results.json").write_text(json.dumps(res, indent=2) + "\n")
    rows = list(_rows(res))
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["series", "param", "system", "round", "mpps", "cycles_per_packet",
                                          "idle_fraction", "emc_hits", "upcalls"])
        w.writeheader()
        w.writerows(rows)
    plots = _plots(out, res)
    (out / "summary.md").write_text(summary_markdown(res, plots))


def _plots(out: Path, res: dict) -> list[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    if res["frame_sizes"]:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        xs = [r["frame_size"] for r in res["frame_sizes"]]
        ax.plot(xs, [r["ratio"] for r in res["frame_sizes"]], "o-", label="Mpps ratio")
        ax.plot(xs, [r["cycles_ratio"] for r in res["frame_sizes"]], "s--", label="cycles ratio (plain/HARMLESS)")
        ax.axhline(0.95, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("frame size (B)"), ax.set_ylabel("HARMLESS / plain"), ax.set_ylim(0, 1.3), ax.legend()
        ax.set_title("HARMLESS vs plain OVS-DPDK, L2 workload")
        fig.tight_layout(), fig.savefig(out / "ratio_vs_frame_size.png", dpi=120), plt.close(fig)
        made.append("ratio_vs_frame_size.png")
    if res["l2_sizes"]:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        xs = [r["n_flows"] for r in res["l2_sizes"]]
        ax.plot(xs, [r["harmless_mpps"] for r in res["l2_sizes"]], "o-", label="HARMLESS")
        ax.plot(xs, [r["plain_mpps"] for r in res["l2_sizes"]], "s-", label="plain OVS-DPDK")
        ax.set_xscale("log"), ax.set_xlabel("destination MAC rules"), ax.set_ylabel("Mpps (64 B, loop MFR)")
        ax.legend(), ax.set_title("L2 switching")
        fig.tight_layout(), fig.savefig(out / "mpps_vs_flows_l2.png", dpi=120), plt.close(fig)
        made.append("mpps_vs_flows_l2.png")
    return made


def summary_markdown(res: dict, plots: list[str]) -> str:
    m = res["machine"]
    lines = ["# HARMLESS benchmark summary", "",
             f"Machine: {m.get('cpu_model')} x {m.get('cpus')} vCPU, kernel {m.get('kernel')}; {m.get('ovs')}; "
             f"{m.get('ovs_dpdk_pkg')}; {m.get('testpmd_pkg')}. OVS: 1 PMD on CPU1; testpmd on CPU0.", "",
             f"Method: {res['method']}. {res['rounds']} alternating rounds of {res['duration_s']} s per point; "
             "ratios are medians of per-round ratios. Cycles/packet = OVS PMD processing cycles / packets "
             "(pmd-stats-show).", "", "## Frame sizes (L2 workload, 2 MACs)", "",
             "| frame B | HARMLESS Mpps | plain Mpps | ratio | HARMLESS cyc/pkt | plain cyc/pkt | cycles ratio |",
             "|---|---|---|---|---|---|---|"]
    for r in res["frame_sizes"]:
        lines.append(f"| {r['frame_size']} | {r['harmless_mpps']:.2f} | {r['plain_mpps']:.2f} | {r['ratio']:.2f} | "
                     f"{r['harmless_cycles_per_packet']:.0f} | {r['plain_cycles_per_packet']:.0f} | "
                     f"{r['cycles_ratio']:.2f} |")
    lines += ["", "## L2 rule count (64 B)", "", "| MAC rules | HARMLESS Mpps | plain Mpps | ratio | cycles ratio |",
              "|---|---|---|---|---|"]
    for r in res["l2_sizes"]:
        lines.append(f"| {r['n_flows']} | {r['harmless_mpps']:.2f} | {r['plain_mpps']:.2f} | {r['ratio']:.2f} | "
                     f"{r['cycles_ratio']:.2f} |")
    if res["experiments"]:
        lines += ["", "## Where the cycles go (translator encodings, OVS settings)", "",
                  "| variant | ratio | cycles ratio | HARMLESS cyc/pkt | plain cyc/pkt | HARMLESS datapath actions |",
                  "|---|---|---|---|---|---|"]
        for r in res["experiments"]:
            acts = "; ".join(a for v in r.get("datapath_actions", {}).values() for a in v if "trunk" in a)
            lines.append(f"| {r['variant']} | {r['ratio']:.2f} | {r['cycles_ratio']:.2f} | "
                         f"{r['harmless_cycles_per_packet']:.0f} | {r['plain_cycles_per_packet']:.0f} | `{acts}` |")
    if "baseline_mpps" in res:
        lines += ["", f"Baseline (c), testpmd io forwarder instead of OVS: {res['baseline_mpps']:.2f} Mpps (64 B)."]
    lines += ["", "SIMD implementations offered by this OVS build:", "", "```",
              *[f"{k}: {v}" for k, v in res.get("simd", {}).items()], "```", ""]
    lines += [f"![{p}]({p})" for p in plots]
    lines += ["", "See bench/FINDINGS.md for the analysis.", ""]
    return "\n".join(lines)
