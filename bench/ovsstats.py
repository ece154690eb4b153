"""Sum OVS-DPDK PMD statistics per measurement window and parse ``pmd-perf-show``. Pure.

The ``pmd-stats-show`` parser lives in the product (:mod:`harmless.ovsstats`, the exporter uses it too).

Cycles per packet is the benchmark's steady figure on two shared vCPUs: it does not depend on how fast the
generator (which shares CPU0 with everything else) feeds the PMD, only on what OVS does per packet. It is
``processing cycles / packets received`` of the PMD thread(s); idle polling is excluded.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from harmless.ovsstats import PmdStats


@dataclass(frozen=True)
class DatapathSummary:
    """PMD-thread totals for one measurement window (sum over PMD threads, main thread excluded).

    Attributes:
        packets: packets received by the PMDs.
        processing_cycles, idle_cycles: TSC cycles.
        cycles_per_packet: processing cycles / packet (0 when no packets).
        idle_fraction: idle / (idle + processing).
        passes_per_packet: datapath passes (1.00 = no recirculation; patch ports do not add passes).
        emc_hits, smc_hits, megaflow_hits, simple_match_hits, upcalls: lookup counters (fraction of packets
            in the ``*_rate`` properties).
    """

    packets: int
    processing_cycles: int
    idle_cycles: int
    cycles_per_packet: float
    idle_fraction: float
    passes_per_packet: float
    emc_hits: int
    smc_hits: int
    megaflow_hits: int
    simple_match_hits: int
    upcalls: int

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def summarize(stats: list[PmdStats]) -> DatapathSummary:
    """Sum the PMD threads of a ``pmd-stats-show`` parse (main thread excluded)."""
    pmds = [s for s in stats if s.thread != "main"] or stats
    pk = sum(s.packets for s in pmds)
    proc = sum(s.processing_cycles for s in pmds)
    idle = sum(s.idle_cycles for s in pmds)
    passes = (sum(s.get("avg. datapath passes per packet") * s.packets for s in pmds) / pk) if pk else 0.0

    def tot(key: str) -> int:
        return int(sum(s.get(key) for s in pmds))

    return DatapathSummary(
        packets=pk, processing_cycles=proc, idle_cycles=idle,
        cycles_per_packet=(proc / pk) if pk else 0.0,
        idle_fraction=(idle / (idle + proc)) if (idle + proc) else 0.0,
        passes_per_packet=round(passes, 3), emc_hits=tot("emc hits"), smc_hits=tot("smc hits"),
        megaflow_hits=tot("megaflow hits"), simple_match_hits=tot("simple match hits"),
        upcalls=tot("miss with success upcall") + tot("miss with failed upcall"))


_PERF_KV = re.compile(r"^\s+-?\s*([A-Za-z][A-Za-z /()\-.]*?):\s+([0-9.]+)\s*(%|\w+/\w+|\w+)?", re.M)


def parse_pmd_perf(text: str) -> dict[str, float]:
    """Key figures of ``dpif-netdev/pmd-perf-show`` (first PMD): ``key -> number`` (keys lower-case).

    Only the summary section is read (``Iterations``, ``- Used TSC cycles``, ``- idle iterations``,
    ``Rx packets``, ``Datapath passes``, ``- EMC hits``, ``Tx packets``, ``Tx batches`` ...).
    """
    out: dict[str, float] = {}
    body = text.split("Histograms", 1)[0]
    for m in _PERF_KV.finditer(body):
        k = m.group(1).strip().lower()
        if k not in out:
            out[k] = float(m.group(2))
    return out
