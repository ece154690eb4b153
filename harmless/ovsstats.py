"""Parse OVS-DPDK PMD statistics (``ovs-appctl dpif-netdev/pmd-stats-show``). Pure.

Used by the exporter (``harmless_pmd_cycles``, ``harmless_pmd_busy_percent``) and by the benchmarks
(:mod:`harmless.bench.ovsstats` sums them per measurement window).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_HDR = re.compile(r"^(pmd thread numa_id (\d+) core_id (\d+)|main thread):\s*$")
_LINE = re.compile(r"^\s+([a-zA-Z][a-zA-Z .\-_]*?):\s+([0-9.]+)(?:\s+\(([0-9.]+)%\))?")


@dataclass
class PmdStats:
    """One thread's block of ``pmd-stats-show``.

    Attributes:
        thread: ``pmd<core>`` or ``main``.
        values: every ``key: number`` line, keys lower-case with spaces (``emc hits``, ``idle cycles`` ...).
    """

    thread: str
    core: int | None = None
    values: dict[str, float] = field(default_factory=dict)

    def get(self, key: str, default: float = 0.0) -> float:
        return self.values.get(key, default)

    @property
    def packets(self) -> int:
        return int(self.get("packets received"))

    @property
    def processing_cycles(self) -> int:
        return int(self.get("processing cycles"))

    @property
    def idle_cycles(self) -> int:
        return int(self.get("idle cycles"))


def parse_pmd_stats(text: str) -> list[PmdStats]:
    """Parse ``dpif-netdev/pmd-stats-show`` output into one :class:`PmdStats` per thread."""
    out: list[PmdStats] = []
    cur: PmdStats | None = None
    for line in text.splitlines():
        m = _HDR.match(line)
        if m:
            cur = PmdStats("main") if m.group(1) == "main thread" else PmdStats(f"pmd{m.group(3)}", int(m.group(3)))
            out.append(cur)
            continue
        if cur is None:
            continue
        m = _LINE.match(line)
        if m:
            cur.values[m.group(1).strip().lower()] = float(m.group(2))
    return out
