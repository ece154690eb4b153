"""Latency histograms of the paced generator (pure): bucket decoding, percentiles, CDF.

``bench/gen/hlbgen.c`` counts every received frame's latency (ns, rx TSC - tx TSC of the same frame) in
log-linear buckets: exact below 128 ns, then 64 sub-buckets per power of two (relative width <= 1/64 = 1.6 %):
``idx = v`` for ``v < 128``, else ``128 + (e - 7) * 64 + ((v >> (e - 6)) & 63)`` with ``e = floor(log2 v)``.
Percentiles are reported as the upper edge of the bucket that holds them (conservative by at most one bucket).
"""
from __future__ import annotations

from dataclasses import dataclass, field

PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)


def bucket_of(v: int) -> int:
    """Bucket index of a latency ``v`` in ns (mirror of ``bin_of`` in hlbgen.c, for tests)."""
    if v < 128:
        return int(v)
    e = v.bit_length() - 1
    return 128 + (e - 7) * 64 + ((v >> (e - 6)) & 63)


def bucket_bounds(idx: int) -> tuple[int, int]:
    """``[low, high)`` in ns of bucket ``idx``."""
    if idx < 128:
        return idx, idx + 1
    e = 7 + (idx - 128) // 64
    mant = (idx - 128) % 64
    low = (64 + mant) << (e - 6)
    return low, low + (1 << (e - 6))


@dataclass
class Latency:
    """Latency of one trial (ns).

    Attributes:
        n: frames with a latency sample (all matched received frames).
        min_ns, avg_ns, max_ns: exact (not bucketed).
        bins: ``[(bucket index, count), ...]`` ascending.
    """

    n: int
    min_ns: float
    avg_ns: float
    max_ns: float
    bins: list[tuple[int, int]] = field(default_factory=list)
    unmatched: int = 0

    @classmethod
    def from_result(cls, lat: dict) -> "Latency":
        return cls(int(lat.get("n", 0)), float(lat.get("min_ns", 0)), float(lat.get("avg_ns", 0)),
                   float(lat.get("max_ns", 0)), sorted((int(i), int(c)) for i, c in lat.get("bins", [])),
                   int(lat.get("unmatched", 0)))

    def percentile(self, p: float) -> float:
        """Upper bucket edge (ns) below which ``p`` % of the samples lie, clipped to ``max_ns``; 0 if no samples.

        Raises:
            ValueError: p outside 0..100.
        """
        if not 0 <= p <= 100:
            raise ValueError("percentile must be in 0..100")
        if not self.n:
            return 0.0
        need = p / 100 * self.n
        acc = 0
        for idx, c in self.bins:
            acc += c
            if acc >= need:
                return float(min(bucket_bounds(idx)[1], self.max_ns)) if self.max_ns else float(bucket_bounds(idx)[1])
        return float(self.max_ns)

    def cdf(self) -> list[tuple[float, float]]:
        """``[(upper edge ns, cumulative fraction), ...]`` for plotting."""
        out, acc = [], 0
        for idx, c in self.bins:
            acc += c
            out.append((float(bucket_bounds(idx)[1]), acc / self.n if self.n else 0.0))
        return out

    def summary_us(self) -> dict:
        """min/avg/max and :data:`PERCENTILES` in µs (rounded to 0.01 µs)."""
        d = {"n": self.n, "min_us": round(self.min_ns / 1e3, 2), "avg_us": round(self.avg_ns / 1e3, 2),
             "max_us": round(self.max_ns / 1e3, 2)}
        for p in PERCENTILES:
            d[f"p{p:g}_us"] = round(self.percentile(p) / 1e3, 2)
        return d
