"""Sizing: how many access ports at what load one HARMLESS server carries, per trunk type (issue #17). Pure.

Input: per trunk type, a ``harmless bench --trunk`` result measured with IMIX frames (``harmless_cycles_per_packet``,
``harmless_mpps``, ``mean_frame_bytes``) and the CPU clock. Two capacities per core are derived:

* **from cycles** (the headline): ``clock / HARMLESS cycles per packet`` = the packets one OVS core can process per
  second on the HARMLESS path. It does not depend on how fast the generator on the other core could send, which on
  2 shared vCPUs is usually the limit of the loop.
* **measured**: the loop's forwarded rate (a lower bound; on this machine the generator's limit).

Gbit/s = Mpps x mean frame bits (Ethernet frames with FCS, no preamble/IFG). Access ports at a load L (fraction of
the port speed, averaged over time, traffic entering the legacy ports) = ``floor(Gbit/s per core x cores /
(port speed x L))``; every frame from one migrated port to another is processed once by the server (it enters on
the trunk, leaves on the trunk), so the server's load is the sum of what the access ports receive from their hosts.
``cores`` scales the one-core figure linearly (OVS spreads ports/queues over PMD cores; an assumption, not measured
here: the benchmark machine has one core for OVS). The trunk link limits separately: the traffic of the access ports
sharing a trunk must fit its speed (the paper, Sec. III.B, puts 12 1G ports on one 10G trunk).
"""
from __future__ import annotations

from harmless.cost.capacity import PORT_SPEEDS, access_ports  # the formula the CAPEX model prices with

#: access-port loads the sizing table answers for (fraction of line rate)
LOADS = (0.05, 0.1, 0.25, 0.5, 1.0)


def per_core(result: dict, hz: float) -> dict:
    """Capacity of one OVS core on the HARMLESS path from one trunk result.

    Args:
        result: ``harmless bench --trunk T`` result (IMIX): ``harmless_cycles_per_packet``, ``harmless_mpps``,
            ``mean_frame_bytes``.
        hz: CPU clock (Hz) the cycles were counted in.

    Returns:
        ``{"mpps_per_core", "gbps_per_core"}`` (from cycles) and ``{"measured_mpps", "measured_gbps"}``.
    """
    cyc = float(result.get("harmless_cycles_per_packet") or 0)
    bits = float(result.get("mean_frame_bytes") or 64) * 8
    mpps = hz / cyc / 1e6 if cyc > 0 and hz > 0 else 0.0
    meas = float(result.get("harmless_mpps") or 0)
    return {"mpps_per_core": round(mpps, 3), "gbps_per_core": round(mpps * bits / 1e3, 3),
            "measured_mpps": round(meas, 3), "measured_gbps": round(meas * bits / 1e3, 3),
            "mean_frame_bytes": round(bits / 8, 1), "cycles_per_packet": round(cyc, 1)}


def sizing(results: dict[str, dict], hz: float, cores: int = 1, loads: tuple[float, ...] = LOADS) -> dict:
    """The sizing answer per trunk type.

    Args:
        results: ``{trunk type: bench result (IMIX)}``.
        hz: CPU clock in Hz.
        cores: OVS cores to size for (linear scaling of the one-core figure).

    Returns:
        ``{"cores": n, "trunks": {type: {per_core figures, "server_gbps", "server_mpps", "access_ports":
        {"1G": {"5%": n, ...}, "10G": {...}}}}, "best": type}``.
    """
    out: dict = {"cores": cores, "loads": [f"{round(x * 100):g}%" for x in loads], "trunks": {}}
    for t, r in results.items():
        pc = per_core(r, hz)
        gbps = pc["gbps_per_core"] * cores
        out["trunks"][t] = {**pc, "server_gbps": round(gbps, 3), "server_mpps": round(pc["mpps_per_core"] * cores, 3),
                            "access_ports": {name: {f"{round(load * 100):g}%": access_ports(gbps, sp, load)
                                                    for load in loads}
                                             for name, sp in PORT_SPEEDS.items()}}
    if out["trunks"]:
        out["best"] = max(out["trunks"], key=lambda t: out["trunks"][t]["server_gbps"])
    return out


def server_gbps_from(doc: dict, trunk: str | None = None) -> tuple[float, str]:
    """The server capacity (Gbit/s) a ``harmless capex --bench-result FILE`` takes from a bench result. Pure.

    Accepts the JSON of ``harmless bench --sizing --json`` (``sizing.trunks.T.server_gbps``; ``trunk`` or the best
    type) or of ``harmless bench --trunk T --json`` with IMIX frames (derived via :func:`per_core`, one core).

    Returns:
        ``(gbps, what)``; ``what`` names the figure for the output.

    Raises:
        ValueError: nothing usable in the document (message says what is missing).
    """
    sz = doc.get("sizing")
    if isinstance(sz, dict) and sz.get("trunks"):
        t = trunk or sz.get("best")
        if t not in sz["trunks"]:
            raise ValueError(f"no trunk type {t!r} in the sizing (have: {', '.join(sz['trunks'])})")
        g = float(sz["trunks"][t]["server_gbps"])
        return g, f"{t} trunk, {sz.get('cores', 1)} core(s), IMIX, from cycles per packet"
    per = doc.get("trunks") if isinstance(doc.get("trunks"), dict) else ({doc["trunk"]: doc} if "trunk" in doc else {})
    hz = float((doc.get("machine") or {}).get("mhz") or 0) * 1e6
    cand = {t: r for t, r in per.items() if r.get("frames") == "imix" and (trunk is None or t == trunk)}
    if not cand or not hz:
        raise ValueError("no IMIX trunk result with the machine's clock (run harmless bench --sizing --json)")
    best = max(cand, key=lambda t: per_core(cand[t], hz)["gbps_per_core"])
    return per_core(cand[best], hz)["gbps_per_core"], f"{best} trunk, 1 core, IMIX, from cycles per packet"
