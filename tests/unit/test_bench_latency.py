"""Latency histogram decoding (harmless.bench.latency) and hlbgen result parsing (harmless.bench.hlbgen)."""
import random

import pytest

from harmless.bench.hlbgen import GeneratorError, parse_result
from harmless.bench.latency import Latency, bucket_bounds, bucket_of


@pytest.mark.parametrize("v", [0, 1, 127, 128, 129, 1000, 4095, 4096, 123_456, 9_999_999, 2 ** 33 + 5])
def test_bucket_contains_value(v):
    lo, hi = bucket_bounds(bucket_of(v))
    assert lo <= v < hi
    assert hi - lo <= max(1, lo / 64)                          # relative width <= 1/64


def test_buckets_are_contiguous_and_ordered():
    prev_hi = 0
    for idx in range(0, 128 + 64 * 20):
        lo, hi = bucket_bounds(idx)
        assert lo == prev_hi and hi > lo
        prev_hi = hi


def _latency(values):
    bins = {}
    for v in values:
        bins[bucket_of(v)] = bins.get(bucket_of(v), 0) + 1
    return Latency.from_result({"n": len(values), "min_ns": min(values), "max_ns": max(values),
                                "avg_ns": sum(values) / len(values), "bins": [[k, c] for k, c in bins.items()]})


def test_percentiles_within_one_bucket_of_exact():
    rnd = random.Random(3)
    vals = sorted(int(rnd.lognormvariate(8, 1)) + 1 for _ in range(20000))
    lat = _latency(vals)
    for p in (50, 90, 99, 99.9):
        exact = vals[min(int(p / 100 * len(vals)), len(vals) - 1)]
        got = lat.percentile(p)
        assert exact * 0.97 <= got <= exact * 1.04 + 1, (p, exact, got)
    assert lat.percentile(100) == max(vals)
    cdf = lat.cdf()
    assert cdf[-1][1] == 1.0 and all(a[0] < b[0] and a[1] <= b[1] for a, b in zip(cdf, cdf[1:]))
    s = lat.summary_us()
    assert s["min_us"] <= s["p50_us"] <= s["p99_us"] <= s["max_us"]


def test_empty_and_bad_percentile():
    lat = Latency.from_result({})
    assert lat.percentile(99) == 0.0 and lat.cdf() == []
    with pytest.raises(ValueError):
        lat.percentile(101)


def test_parse_result_counts_refused_frames_as_lost():
    line = ('result {"tx":900,"tx_fail":100,"tx_expected":700,"rx":650,"rx_other":0,"nombuf":0,'
            '"tx_seconds":0.5,"last_rx_after_tx_s":0.001,"interrupted":0,'
            '"lat":{"n":650,"unmatched":0,"min_ns":500,"max_ns":9000,"avg_ns":700.0,"bins":[[130,650]]}}')
    d = parse_result(line)
    assert d["offered"] == 1000 and d["expected"] == 700 and d["lost"] == 50
    assert d["offered_pps"] == 2000.0
    assert Latency.from_result(d["lat"]).n == 650


def test_parse_result_errors():
    with pytest.raises(GeneratorError):
        parse_result("error run: bad ports/rate/duration")
    with pytest.raises(GeneratorError):
        parse_result("links 1 1")
