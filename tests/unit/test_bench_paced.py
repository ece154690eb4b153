"""RFC 2544 NDR/PDR logic of harmless.bench.rfc2544 on a simulated device, and the paper suite's pure output
functions (matrix, rows, summary) on a synthetic result."""
import pytest

from harmless.bench import paper
from harmless.bench.latency import bucket_of
from harmless.bench.rfc2544 import PDR_LOSS, SearchSettings, measure_point, measure_system


class SimulatedSession:
    """Stands in for PacedSession (our own search logic under test, not a product part): a device forwarding up to
    ``capacity`` pps; ``stalls`` lists trial numbers that lose 1 % extra (a preempted PMD)."""

    def __init__(self, capacity, stall_loss=0.0, stalls=(), drop_share=0.0):
        self.capacity, self.stall_loss, self.stalls, self.drop_share = capacity, stall_loss, set(stalls), drop_share
        self.n = 0

    def warm(self, system):
        return 1

    def trial(self, system, rate, duration, count=0, drain_ms=100, pmd=False):
        self.n += 1
        offered = int(min(rate, 20e6) * duration)
        expected = int(offered * (1 - self.drop_share))
        cap = self.capacity * duration * (1 - self.drop_share)
        rx = int(min(expected, cap))
        if self.n in self.stalls:
            rx = int(rx * (1 - self.stall_loss))
        lat_ns = 2000
        r = {"tx": offered, "tx_fail": 0, "tx_expected": expected, "rx": rx, "offered": offered,
             "expected": expected, "lost": expected - rx, "tx_seconds": duration, "offered_pps": offered / duration,
             "lat": {"n": rx, "min_ns": lat_ns, "max_ns": lat_ns, "avg_ns": lat_ns, "bins": [[bucket_of(lat_ns), rx]]}}
        if pmd:
            r["datapath"] = {"cycles_per_packet": 2.6e9 / max(rx / duration, 1)}
        return r


def test_ndr_and_pdr_converge_on_capacity():
    st = SearchSettings(trial_s=1.0, max_trials=12, resolution=0.01, retries=0)
    out = measure_system(SimulatedSession(3e6), "plain", st)
    assert out["mfr_mpps"] == pytest.approx(3.0)
    assert 3.0 * 0.97 <= out["ndr_mpps"] <= 3.0
    assert out["pdr_mpps"] >= out["ndr_mpps"]
    assert out["pdr_mpps"] <= 3.0 / (1 - PDR_LOSS) + 1e-9          # never more than 0.5 % loss
    assert out["latency"]["p50_us"] == pytest.approx(2.0, rel=0.02) and out["latency_at"] == "ndr"
    assert out["ndr_search"]["n_trials"] <= 12


def test_retry_filters_a_single_stall():
    st = SearchSettings(trial_s=1.0, max_trials=12, resolution=0.01, retries=1, pdr=False)
    # trials 3..4 of the NDR search stall with 1 % loss; the retry of each passes
    strict = measure_system(SimulatedSession(3e6, 0.01, stalls=(3,)), "plain", SearchSettings(
        trial_s=1.0, max_trials=12, resolution=0.01, retries=0, pdr=False))
    tolerant = measure_system(SimulatedSession(3e6, 0.01, stalls=(3,)), "plain", st)
    assert tolerant["ndr_mpps"] >= 3.0 * 0.97
    assert strict["ndr_mpps"] < tolerant["ndr_mpps"]                # without retry the stall lowers the NDR
    rows = tolerant["ndr_search"]["trial_rows"]
    assert any(r["lost"] > 0 for r in rows) and len(rows) > tolerant["ndr_search"]["n_trials"]


def test_intended_drops_are_not_loss():
    st = SearchSettings(trial_s=1.0, max_trials=12, resolution=0.01, retries=0)
    out = measure_system(SimulatedSession(2e6, drop_share=0.3), "plain", st)
    assert out["mfr_mpps"] == pytest.approx(1.4)                     # forwarded = 70 % web share
    assert 2.0 * 0.97 <= out["ndr_mpps"] <= 2.0                      # offered rate at zero loss


def test_point_ratios():
    class Two(SimulatedSession):
        def trial(self, system, rate, duration, **kw):
            self.capacity = 2.7e6 if system == "harmless" else 3e6
            return super().trial(system, rate, duration, **kw)
    r = measure_point(Two(0), SearchSettings(max_trials=12, resolution=0.01, retries=0))
    assert r["mfr_ratio"] == pytest.approx(0.9)
    assert r["ndr_ratio"] == pytest.approx(0.9, abs=0.03)
    assert r["cycles_ratio"] == pytest.approx(0.9, abs=0.01)


def test_matrix_and_outputs(tmp_path):
    m = paper.matrix(l2_sizes=(2, 1000), l3_sizes=(10,), lb_backends=(1, 10, 100))
    assert [p for p, _, _ in m["lb"]] == [1, 10, 100]
    assert [nf for _, _, nf in m["l2"]] == [1, 999]
    assert m["gateway"][0][1].n_rules == 200
    st = SearchSettings(max_trials=12, resolution=0.01, retries=0)
    point = measure_point(SimulatedSession(3e6), st)
    point.update(series="lb", param=10, workload="lb-acl", n_rules=10, n_flows=1000, frame_size=64, pipeline="x")
    res = {"machine": {"cpus": 2}, "settings": {"paced": st.as_dict(), "loop": {"method": "loop", "rounds": 2,
                                                                                 "duration_s": 2}},
           "paced": {"lb": [point]}, "loop_frames": [], "experiments": [],
           "control": {"rule_install": [{"n_rules": 1000, "plain_s": 0.1, "bundle_s": 0.05,
                                         "plain_rules_per_s": 10000, "bundle_rules_per_s": 20000}]}}
    res["headline"] = paper.headline(res)
    paper.write_results(tmp_path, res)
    rows = (tmp_path / "results.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("series,param")
    assert (tmp_path / "trials.csv").exists() and (tmp_path / "rule_install.csv").exists()
    md = (tmp_path / "summary.md").read_text()
    assert "load balancer + ACL" in md and "| 10 | 1000 |" in md and "bundle" in md
    assert (tmp_path / "mpps_vs_flows.png").stat().st_size > 1000
