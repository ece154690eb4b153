"""``harmless bench --suite paper``: the full matrix, raw results (JSON/CSV), plots and a Markdown summary.

Parts (``parts``; all by default, each can be left out to bound the time):

* ``loop``: closed-loop maximum forwarding rate and OVS cycles/packet vs frame size (testpmd 5tswap, L2 workload,
  alternating rounds; :mod:`harmless.bench.quick`) — the steadiest HARMLESS/plain figure on a shared machine;
* ``experiments``: translator encodings and OVS settings, same method (:mod:`harmless.bench.experiments`);
* ``frames``: RFC 2544 throughput (NDR/PDR), MFR and latency vs frame size 64..1518 B, L2 workload;
* ``l2``, ``l3``, ``lb``, ``gateway``: the use cases with growing numbers of rules/flows (paced generator,
  :mod:`harmless.bench.rfc2544`);
* ``control``: reactive flow-setup latency and rule installation with/without bundles (:mod:`harmless.bench.control`);
* ``baseline``: (c) the DPDK io-forwarding baseline (no OVS).

Every result carries the machine, versions, cores and settings. On Ctrl-C the part in progress stops, everything
started is torn down and what was measured so far is written (``"interrupted": true``).
"""
from __future__ import annotations

import csv
import json
import shutil
import time
from pathlib import Path

from harmless.bench.control import flow_setup, rule_install
from harmless.bench.experiments import run_variants, simd_capabilities
from harmless.bench.quick import METHOD_LOOP, Session, clean_stop, compare, machine_info, make_workdir, run_baseline
from harmless.bench.rfc2544 import PacedSession, SearchSettings, measure_point, short_summary
from harmless.bench.sut import Progress, _noop
from harmless.bench.workloads import gateway_workload, l2_workload, l3_workload, lb_acl_workload

FRAME_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
ALL_PARTS = ("loop", "experiments", "frames", "l2", "l3", "lb", "gateway", "control", "baseline")


def matrix(l2_sizes=(2, 100, 10_000, 100_000), l3_sizes=(10, 1_000, 10_000), lb_backends=(1, 10, 100),
           flows: int = 1000) -> dict[str, list[tuple]]:
    """The paced points per use case: ``[(param, workload, n_flows), ...]`` (pure).

    L2: param = MAC rules, traffic to every MAC behind port B (n - 1 flows). L3: param = routes, ``flows``
    flows spread over the routes to port B. LB: param = backends, ``flows`` flows (70 % web). Gateway: 10 CEs x
    20 users, 400 flows (two source ports per user).
    """
    return {
        "l2": [(n, l2_workload(n), max(n - 1, 1)) for n in l2_sizes],
        "l3": [(n, l3_workload(n), flows) for n in l3_sizes],
        "lb": [(n, lb_acl_workload(n), flows) for n in lb_backends],
        "gateway": [(200, gateway_workload(10, 20), 400)],
    }


def run_paper(out: Path, duration: float = 2.0, rounds: int = 2, hugepages: bool = False, parts=ALL_PARTS,
              frame_sizes=FRAME_SIZES, settings: SearchSettings | None = None, points: dict | None = None,
              progress: Progress = _noop) -> dict:
    """Run the suite into ``out``; returns the result dict (also written as results.json).

    Raises:
        KeyboardInterrupt: after tearing down and writing the partial results.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    st = settings or SearchSettings()
    pts = points or matrix()
    t0 = time.monotonic()
    workdir = make_workdir()
    res: dict = {"suite": "paper", "parts": list(parts), "machine": machine_info(),
                 "settings": {"loop": {"method": METHOD_LOOP, "duration_s": duration, "rounds": rounds},
                              "paced": st.as_dict(), "hugepages": hugepages,
                              "cores": {"ovs_pmd_cpu": 1, "ovs_main_cpu": 0, "generator_cpu": 0},
                              "trunks": "2 x dpdkvhostuserclient (VID 107 / 110); plain: 2 vhost ports",
                              "translator": "pop_vlan / push_vlan:0x8100,set_field:vid (harmless.otc.flows)"},
                 "loop_frames": [], "experiments": [], "paced": {}, "control": {}, "interrupted": False}
    n_paced = (len(frame_sizes) if "frames" in parts else 0) + sum(len(v) for k, v in pts.items() if k in parts)
    done = [0]

    def step(msg: str) -> None:
        progress(f"[{time.monotonic() - t0:6.0f} s] {msg}")

    try:
        with clean_stop():
            if "loop" in parts or "experiments" in parts:
                _loop_parts(res, workdir, duration, rounds, hugepages, parts, frame_sizes, step)
            if n_paced or "control" in parts:
                _paced_parts(res, workdir, hugepages, parts, frame_sizes, st, pts, n_paced, done, step)
            if "baseline" in parts:
                b = run_baseline(workdir, duration, hugepages, progress=step)
                res["baseline_mpps"] = round(b.mpps, 3)
    except KeyboardInterrupt:
        res["interrupted"] = True
        raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        res["elapsed_s"] = round(time.monotonic() - t0, 1)
        res["headline"] = headline(res)
        write_results(out, res)
    return res


def _loop_parts(res, workdir, duration, rounds, hugepages, parts, frame_sizes, step) -> None:
    sess = Session(workdir, hugepages=hugepages, progress=step)
    try:
        sess.open(l2_workload(2))
        res["simd"] = simd_capabilities(sess.appctl)
        for sysname in ("harmless", "plain"):
            sess.measure(sysname, 1.0, warmup=0.5)
        if "loop" in parts:
            for fs in frame_sizes:
                step(f"loop MFR + cycles, L2, {fs} B")
                sess.set_frame_size(fs)
                r = compare(sess, duration, rounds, step)
                res["loop_frames"].append({"frame_size": fs, **r})
            sess.set_frame_size(64)
        if "experiments" in parts:
            res["experiments"] = run_variants(sess, duration, rounds, step)
    finally:
        sess.close()


def _paced_parts(res, workdir, hugepages, parts, frame_sizes, st, pts, n_paced, done, step) -> None:
    sess = PacedSession(workdir, hugepages=hugepages, progress=step)
    order = [("harmless", "plain"), ("plain", "harmless")]

    def point(series: str, param, wl, n_flows: int, frame_size: int) -> None:
        done[0] += 1
        step(f"[{done[0]}/{n_paced}] {series} {param} ({wl.name}, {n_flows} flows, {frame_size} B)")
        sess.load(wl, n_flows, frame_size)
        r = measure_point(sess, st, order[done[0] % 2], progress=step)
        r.update(series=series, param=param, workload=wl.name, n_rules=wl.n_rules, n_flows=n_flows,
                 frame_size=frame_size, pipeline=wl.note)
        res["paced"].setdefault(series, []).append(r)
        step(f"  => {short_summary(r)}")

    try:
        sess.open(l2_workload(2))
        if "frames" in parts:
            for fs in frame_sizes:
                point("frames", fs, l2_workload(2), 64, fs)
        for key in ("l2", "l3", "lb", "gateway"):
            if key in parts:
                for param, wl, nf in pts.get(key, []):
                    point(key, param, wl, nf, 64)
        if "control" in parts:
            step("control plane: reactive flow setup (os-ken), rule installation with/without bundles")
            res["control"]["flow_setup"] = flow_setup(sess, progress=step)
            res["control"]["rule_install"] = rule_install(sess.systems.ovs, progress=step)
    finally:
        sess.close()


def headline(res: dict) -> dict:
    """The figures of the summary's first lines: loop 64 B ratio, paced 64 B L2 ratios."""
    h: dict = {}
    lf = next((r for r in res.get("loop_frames", []) if r["frame_size"] == 64), None)
    if lf:
        h.update({k: lf.get(k) for k in ("harmless_mpps", "plain_mpps", "ratio", "harmless_cycles_per_packet",
                                         "plain_cycles_per_packet", "cycles_ratio")})
    fr = next((r for r in res.get("paced", {}).get("frames", []) if r["frame_size"] == 64), None)
    if fr:
        for k in ("mfr_ratio", "pdr_ratio", "ndr_ratio"):
            if k in fr:
                h[f"paced_{k}"] = fr[k]
        for s in ("harmless", "plain"):
            h[f"paced_{s}_pdr_mpps"] = fr[s].get("pdr_mpps")
            h[f"paced_{s}_ndr_mpps"] = fr[s].get("ndr_mpps")
    return h


# ---------------------------------------------------------------------------------------------- output

PACED_FIELDS = ["series", "param", "workload", "n_rules", "n_flows", "frame_size", "system", "mfr_mpps",
                "pdr_mpps", "ndr_mpps", "cycles_per_packet", "emc_hits", "megaflow_hits", "passes_per_packet",
                "lat_rate_mpps", "lat_min_us", "lat_avg_us", "lat_p50_us", "lat_p99_us", "lat_p99.9_us",
                "lat_max_us", "pdr_trials", "ndr_trials"]


def paced_rows(res: dict):
    for series, rows in res.get("paced", {}).items():
        for r in rows:
            for system in ("harmless", "plain"):
                s = r[system]
                lat = s.get("latency", {})
                dp = s.get("datapath", {})
                yield {"series": series, "param": r["param"], "workload": r["workload"], "n_rules": r["n_rules"],
                       "n_flows": r["n_flows"], "frame_size": r["frame_size"], "system": system,
                       "mfr_mpps": s.get("mfr_mpps"), "pdr_mpps": s.get("pdr_mpps"), "ndr_mpps": s.get("ndr_mpps"),
                       "cycles_per_packet": s.get("cycles_per_packet"), "emc_hits": dp.get("emc_hits"),
                       "megaflow_hits": dp.get("megaflow_hits"), "passes_per_packet": dp.get("passes_per_packet"),
                       "lat_rate_mpps": lat.get("rate_mpps"), "lat_min_us": lat.get("min_us"),
                       "lat_avg_us": lat.get("avg_us"), "lat_p50_us": lat.get("p50_us"),
                       "lat_p99_us": lat.get("p99_us"), "lat_p99.9_us": lat.get("p99.9_us"),
                       "lat_max_us": lat.get("max_us"),
                       "pdr_trials": len(s.get("pdr_search", {}).get("trial_rows", [])),
                       "ndr_trials": len(s.get("ndr_search", {}).get("trial_rows", []))}


def trial_rows(res: dict):
    for series, rows in res.get("paced", {}).items():
        for r in rows:
            for system in ("harmless", "plain"):
                for kind in ("pdr", "ndr"):
                    for i, t in enumerate(r[system].get(f"{kind}_search", {}).get("trial_rows", [])):
                        yield {"series": series, "param": r["param"], "system": system, "search": kind,
                               "trial": i + 1, **t}


def loop_rows(res: dict):
    for key, param in (("loop_frames", "frame_size"), ("experiments", "variant")):
        for r in res.get(key, []):
            for system, samples in r.get("samples", {}).items():
                for i, s in enumerate(samples):
                    yield {"series": key, "param": r[param], "system": system, "round": i + 1, "mpps": s["mpps"],
                           "cycles_per_packet": s["cycles_per_packet"], "idle_fraction": s["idle_fraction"],
                           "emc_hits": s["datapath"].get("emc_hits"), "upcalls": s["datapath"].get("upcalls")}


def _csv(path: Path, rows: list[dict]) -> None:
    if not rows:
        return
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def write_results(out: Path, res: dict) -> None:
    """results.json (everything), results.csv (paced points), trials.csv, loop.csv, plots, summary.md."""
    (out / "results.json").write_text(json.dumps(res, indent=2, default=str) + "\n")
    _csv(out / "results.csv", list(paced_rows(res)))
    _csv(out / "trials.csv", list(trial_rows(res)))
    _csv(out / "loop.csv", list(loop_rows(res)))
    if res.get("control", {}).get("rule_install"):
        _csv(out / "rule_install.csv", res["control"]["rule_install"])
    plots = _plots(out, res)
    (out / "summary.md").write_text(summary_markdown(res, plots))


USE_CASES = (("l2", "L2 switching", "destination MAC rules"), ("l3", "L3 routing", "LPM routes"),
             ("lb", "load balancer + ACL", "backends"), ("gateway", "access gateway", "users (10 CEs x 20)"))


def _plots(out: Path, res: dict) -> list[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    paced = res.get("paced", {})
    cases = [c for c in USE_CASES if paced.get(c[0])]
    if cases:
        fig, axes = plt.subplots(1, len(cases), figsize=(4 * len(cases), 3.4), squeeze=False)
        for ax, (key, title, xlabel) in zip(axes[0], cases):
            rows = paced[key]
            xs = [r["param"] for r in rows]
            for system, color in (("harmless", "tab:red"), ("plain", "tab:blue")):
                ax.plot(xs, [r[system].get("mfr_mpps", 0) for r in rows], "o-", color=color, label=f"{system} MFR")
                ax.plot(xs, [r[system].get("pdr_mpps", 0) for r in rows], "s--", color=color, label=f"{system} PDR")
                ax.plot(xs, [r[system].get("ndr_mpps", 0) for r in rows], "^:", color=color, label=f"{system} NDR")
            if len(set(xs)) > 1 and max(xs) / max(min(xs), 1) > 50:
                ax.set_xscale("log")
            ax.set_title(title), ax.set_xlabel(xlabel), ax.set_ylabel("Mpps (64 B)")
        axes[0][0].legend(fontsize=6)
        fig.tight_layout(), fig.savefig(out / "mpps_vs_flows.png", dpi=120), plt.close(fig)
        made.append("mpps_vs_flows.png")
    fr, lf = paced.get("frames", []), res.get("loop_frames", [])
    if fr or lf:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        if lf:
            ax.plot([r["frame_size"] for r in lf], [r["cycles_ratio"] for r in lf], "s-", label="cycles ratio (loop)")
            ax.plot([r["frame_size"] for r in lf], [r["ratio"] for r in lf], "o-", label="loop MFR ratio")
        for k, mk in (("mfr_ratio", "v--"), ("pdr_ratio", "d--"), ("ndr_ratio", "^:")):
            pts = [(r["frame_size"], r[k]) for r in fr if k in r]
            if pts:
                ax.plot(*zip(*pts), mk, label=f"paced {k.split('_')[0].upper()} ratio")
        ax.axhline(0.95, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("frame size (B)"), ax.set_ylabel("HARMLESS / plain"), ax.set_ylim(0, 1.6)
        ax.legend(fontsize=7), ax.set_title("HARMLESS vs plain OVS-DPDK, L2 workload")
        fig.tight_layout(), fig.savefig(out / "ratio_vs_frame_size.png", dpi=120), plt.close(fig)
        made.append("ratio_vs_frame_size.png")
    lat_src = [(f"{r['series']} {r['param']}", r) for r in (fr[:1] or paced.get("l2", [])[:1])]
    fs = res.get("control", {}).get("flow_setup", {})
    if lat_src or fs:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for label, r in lat_src:
            for system, color in (("harmless", "tab:red"), ("plain", "tab:blue")):
                cdf = r[system].get("latency_cdf")
                if cdf:
                    at = r[system].get("latency_at", "ndr").upper()
                    ax.step([x for x, _ in cdf], [y for _, y in cdf], where="post", color=color,
                            label=f"{system}, {label} B at {at} {r[system]['latency']['rate_mpps']:.2f} Mpps")
        ax.set_xscale("log"), ax.set_xlabel("latency (µs)"), ax.set_ylabel("CDF"), ax.legend(fontsize=7)
        ax.set_title("Latency at the throughput rate (every frame)")
        fig.tight_layout(), fig.savefig(out / "latency_cdf.png", dpi=120), plt.close(fig)
        made.append("latency_cdf.png")
    return made


def _f(v, fmt=".2f") -> str:
    return format(v, fmt) if isinstance(v, (int, float)) else "–"


def summary_markdown(res: dict, plots: list[str]) -> str:
    m = res["machine"]
    st = res["settings"]["paced"]
    lp = res["settings"]["loop"]
    lines = ["# HARMLESS benchmark summary", "",
             f"Machine: {m.get('cpu_model')} × {m.get('cpus')} vCPU (shared), kernel {m.get('kernel')}; "
             f"{m.get('ovs')}; {m.get('ovs_dpdk_pkg')}; {m.get('testpmd_pkg')}. OVS: 1 PMD on CPU1, main thread "
             "and generator on CPU0. Elapsed: " f"{res.get('elapsed_s', 0):.0f} s"
             + (" — **interrupted, partial results**" if res.get("interrupted") else "") + ".", "",
             "Systems: (a) HARMLESS = trunk → br-otc (pop VID) → br-of pipeline → br-otc (push VID) → trunk, built by "
             "harmless.otc.bridges; (b) plain = the same pipeline on a plain OVS-DPDK bridge; same OVS, same run.", "",
             "Methods:",
             f"* **NDR** = RFC 2544 §26.1 throughput (zero loss), binary search, trials of {st['trial_s']} s, at most "
             f"{st['max_trials']} search steps, resolution {st['resolution']:.0%} of the MFR, a lossy step repeated "
             f"{st['retries']}× (passes if any attempt passes). **PDR** = the same with ≤ {st['pdr_loss']:.1%} loss "
             "(FD.io CSIT). **MFR** = RFC 2889 maximum forwarding rate, open loop, offered at the generator's "
             "maximum (paced generator hlbgen). Latency: every frame timestamped, trial of "
             f"{st['latency_s']} s at the NDR (PDR if NDR = 0).",
             f"* **loop**: {lp['method']}; {lp['rounds']} alternating rounds × {lp['duration_s']} s; ratios are "
             "medians of per-round ratios. Cycles/packet = OVS PMD processing cycles / packets (pmd-stats-show).",
             "* Ratio = HARMLESS / plain; cycles ratio = plain cycles / HARMLESS cycles (1.0 = no overhead).", ""]
    h = res.get("headline", {})
    if h:
        lines += ["## Headline (L2 workload, 64 B)", "",
                  f"* loop: HARMLESS {_f(h.get('harmless_mpps'))} vs plain {_f(h.get('plain_mpps'))} Mpps, ratio "
                  f"**{_f(h.get('ratio'))}**; {_f(h.get('harmless_cycles_per_packet'), '.0f')} vs "
                  f"{_f(h.get('plain_cycles_per_packet'), '.0f')} cycles/packet, cycles ratio "
                  f"**{_f(h.get('cycles_ratio'))}**",
                  f"* paced: PDR {_f(h.get('paced_harmless_pdr_mpps'))} vs {_f(h.get('paced_plain_pdr_mpps'))} "
                  f"Mpps (ratio {_f(h.get('paced_pdr_ratio'))}), NDR {_f(h.get('paced_harmless_ndr_mpps'))} vs "
                  f"{_f(h.get('paced_plain_ndr_mpps'))} Mpps (ratio {_f(h.get('paced_ndr_ratio'))}), MFR ratio "
                  f"{_f(h.get('paced_mfr_ratio'))}", ""]
    if res.get("loop_frames"):
        lines += ["## Frame size, closed loop (MFR and cycles)", "",
                  "| frame B | HARMLESS Mpps | plain Mpps | ratio | HARMLESS cyc/pkt | plain cyc/pkt | cycles ratio |",
                  "|---|---|---|---|---|---|---|"]
        for r in res["loop_frames"]:
            lines.append(f"| {r['frame_size']} | {r['harmless_mpps']:.2f} | {r['plain_mpps']:.2f} | "
                         f"{r['ratio']:.2f} | {r['harmless_cycles_per_packet']:.0f} | "
                         f"{r['plain_cycles_per_packet']:.0f} | {r['cycles_ratio']:.2f} |")
        lines.append("")
    paced = res.get("paced", {})
    titles = {"frames": "Frame size (L2, 2 MACs), paced"} | {k: f"{t} ({x}), 64 B, paced" for k, t, x in USE_CASES}
    for key in ("frames", "l2", "l3", "lb", "gateway"):
        if not paced.get(key):
            continue
        lines += [f"## {titles[key]}", "",
                  "| param | flows | MFR H / P | PDR H / P | NDR H / P | PDR ratio | NDR ratio | cyc/pkt H / P | "
                  "p50 / p99 µs H | p50 / p99 µs P |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in paced[key]:
            hh, pp = r["harmless"], r["plain"]
            hl, pl = hh.get("latency", {}), pp.get("latency", {})
            lines.append(
                f"| {r['param']} | {r['n_flows']} | {_f(hh.get('mfr_mpps'))} / {_f(pp.get('mfr_mpps'))} | "
                f"{_f(hh.get('pdr_mpps'))} / {_f(pp.get('pdr_mpps'))} | {_f(hh.get('ndr_mpps'))} / "
                f"{_f(pp.get('ndr_mpps'))} | {_f(r.get('pdr_ratio'))} | {_f(r.get('ndr_ratio'))} | "
                f"{_f(hh.get('cycles_per_packet'), '.0f')} / {_f(pp.get('cycles_per_packet'), '.0f')} | "
                f"{_f(hl.get('p50_us'), '.1f')} / {_f(hl.get('p99_us'), '.0f')} | "
                f"{_f(pl.get('p50_us'), '.1f')} / {_f(pl.get('p99_us'), '.0f')} |")
        lines.append("")
    ctl = res.get("control", {})
    if ctl.get("flow_setup"):
        fs = ctl["flow_setup"]
        lines += ["## Control plane", "",
                  f"Reactive flow setup ({fs['app']}, {fs['n_flows']} new flows at {fs['rate_pps']:.0f} frames/s): "
                  "latency of the first frame of a flow (PACKET_IN → FLOW_MOD + PACKET_OUT) vs the same frames "
                  "once the flow is installed.", "",
                  "| system | first p50 µs | first p99 µs | first max µs | subsequent p50 µs | subsequent p99 µs |",
                  "|---|---|---|---|---|---|"]
        for s in ("harmless", "plain"):
            if s in fs:
                a, b = fs[s]["first"], fs[s]["subsequent"]
                lines.append(f"| {s} | {a['p50_us']:.0f} | {a['p99_us']:.0f} | {a['max_us']:.0f} | "
                             f"{b['p50_us']:.1f} | {b['p99_us']:.1f} |")
        lines.append("")
    if ctl.get("rule_install"):
        lines += ["Rule installation (`ovs-ofctl add-flows` vs `ovs-ofctl --bundle add-flows`, L2 rules):", "",
                  "| rules | plain s | bundle s | plain rules/s | bundle rules/s |", "|---|---|---|---|---|"]
        for r in ctl["rule_install"]:
            lines.append(f"| {r['n_rules']} | {r['plain_s']:.2f} | {r['bundle_s']:.2f} | "
                         f"{r['plain_rules_per_s']} | {r['bundle_rules_per_s']} |")
        lines.append("")
    if res.get("experiments"):
        lines += ["## Where the cycles go (translator encodings, OVS settings; loop method, same run)", "",
                  "| variant | ratio | cycles ratio | HARMLESS cyc/pkt | plain cyc/pkt | HARMLESS datapath actions |",
                  "|---|---|---|---|---|---|"]
        for r in res["experiments"]:
            acts = "; ".join(a for v in r.get("datapath_actions", {}).values() for a in v if "trunk" in a)
            lines.append(f"| {r['variant']} | {r['ratio']:.2f} | {r['cycles_ratio']:.2f} | "
                         f"{r['harmless_cycles_per_packet']:.0f} | {r['plain_cycles_per_packet']:.0f} | `{acts}` |")
        lines += ["", "The same-VID control row isolates the VLAN pop+push: without a VID change HARMLESS costs "
                  "what plain costs; OVS compiles any VID change into `pop_vlan,push_vlan` whatever the OpenFlow "
                  "encoding (see bench/FINDINGS.md).", ""]
    if "baseline_mpps" in res:
        lines += [f"Baseline (c), testpmd io forwarder instead of OVS (loop): {res['baseline_mpps']:.2f} Mpps (64 B).",
                  ""]
    if res.get("simd"):
        lines += ["SIMD implementations offered by this OVS build:", "", "```",
                  *[f"{k}: {v}" for k, v in res["simd"].items()], "```", ""]
    lines += [f"![{p}]({p})" for p in plots]
    lines += ["", "Raw data: results.json (everything), results.csv (paced points), trials.csv (every search trial), "
              "loop.csv (every loop window), rule_install.csv. Analysis: bench/FINDINGS.md.", ""]
    return "\n".join(lines)
