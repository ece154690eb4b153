"""RFC 2544 zero-loss search (harmless.bench.search) on simulated devices with a known capacity."""
import pytest

from harmless.bench.search import SimulatedDevice, Trial, passes, zero_loss_search


@pytest.mark.parametrize("capacity", [0.37, 1.0, 4.2, 7.77, 9.99])
def test_converges_on_known_capacity(capacity):
    dev = SimulatedDevice(capacity)
    r = zero_loss_search(dev, lo=0.01, hi=10.0, resolution=0.01, max_trials=30)
    assert r.converged
    assert capacity - 0.01 <= r.throughput <= capacity          # never above the capacity, within resolution
    assert passes(next(t for t in r.trials if t.rate == r.throughput))
    assert len(r.trials) <= 12                                   # log2(10/0.01) + 1 trials
    assert dev.calls == len(r.trials)


def test_generator_is_the_limit():
    r = zero_loss_search(SimulatedDevice(50.0), lo=0.1, hi=10.0, resolution=0.1)
    assert r.at_max and r.throughput == 10.0 and len(r.trials) == 1


def test_device_below_floor_reports_zero():
    r = zero_loss_search(SimulatedDevice(0.05), lo=0.1, hi=10.0, resolution=0.1)
    assert r.throughput == 0.0 and r.converged
    assert any(t.rate == 0.1 for t in r.trials)                  # the floor itself was tried


def test_max_trials_caps_and_reports_not_converged():
    r = zero_loss_search(SimulatedDevice(3.3), lo=0.001, hi=10.0, resolution=1e-6, max_trials=5)
    assert len(r.trials) == 5 and not r.converged
    assert r.throughput <= 3.3 and r.bracket[0] == r.throughput


def test_noisy_device_result_is_a_passing_rate():
    dev = SimulatedDevice(5.0, jitter=0.1, seed=7)
    r = zero_loss_search(dev, lo=0.1, hi=10.0, resolution=0.05, max_trials=20)
    assert 4.0 <= r.throughput <= 5.0
    assert passes(next(t for t in r.trials if t.rate == r.throughput))


def test_loss_tolerance():
    t = Trial(1.0, 1_000_000, 999_990)
    assert not passes(t) and passes(t, loss_tolerance=1e-4)
    assert not passes(Trial(1.0, 0, 0))


def test_bad_arguments():
    with pytest.raises(ValueError):
        zero_loss_search(SimulatedDevice(1), lo=0, hi=1, resolution=0.1)
    with pytest.raises(ValueError):
        zero_loss_search(SimulatedDevice(1), lo=2, hi=1, resolution=0.1)
