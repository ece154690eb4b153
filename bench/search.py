"""RFC 2544 §26.1 throughput: the highest offered rate at which the device forwards every frame (pure).

The search is a binary search over the offered rate between ``lo`` and ``hi`` (usually the generator's maximum):

1. one trial at ``hi``: no loss -> throughput = ``hi`` (the device is not the bottleneck: say so);
2. otherwise bisect: a lossless trial raises the lower bound, a lossy one lowers the upper bound;
3. stop when ``hi - lo <= resolution`` (absolute, in the rate's unit) or after ``max_trials`` trials.

The reported throughput is the highest rate that passed (never an untested or lossy rate). ``trial(rate)`` returns
``(tx, rx)`` frame counts of one trial of fixed duration; "loss" is ``tx - rx > loss_tolerance * tx``
(RFC 2544 requires 0; a tolerance exists for generators that cannot drain exactly).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Trial:
    """One trial of the search."""

    rate: float
    tx: int
    rx: int

    @property
    def lost(self) -> int:
        return max(self.tx - self.rx, 0)

    @property
    def loss_ratio(self) -> float:
        return self.lost / self.tx if self.tx else 1.0


@dataclass
class SearchResult:
    """Outcome of :func:`zero_loss_search`.

    Attributes:
        throughput: highest offered rate with (tolerated) zero loss; 0.0 if even ``lo`` lost frames.
        trials: every trial in order.
        converged: the bracket shrank to ``resolution`` (False = stopped by ``max_trials``).
        at_max: the first trial at ``hi`` was lossless (the generator, not the device, is the limit).
        bracket: final (lossless, lossy) bounds.
    """

    throughput: float
    trials: list[Trial] = field(default_factory=list)
    converged: bool = False
    at_max: bool = False
    bracket: tuple[float, float] = (0.0, 0.0)

    def as_dict(self) -> dict:
        return {"throughput": self.throughput, "converged": self.converged, "at_max": self.at_max,
                "bracket": list(self.bracket), "n_trials": len(self.trials),
                "trials": [{"rate": t.rate, "tx": t.tx, "rx": t.rx, "loss_ratio": t.loss_ratio}
                           for t in self.trials]}


def passes(t: Trial, loss_tolerance: float = 0.0) -> bool:
    """True when a trial counts as lossless."""
    return t.tx > 0 and t.lost <= loss_tolerance * t.tx


def zero_loss_search(trial: Callable[[float], tuple[int, int]], lo: float, hi: float, resolution: float,
                     max_trials: int = 20, loss_tolerance: float = 0.0,
                     on_trial: Callable[[Trial, int], None] | None = None) -> SearchResult:
    """Binary search for the RFC 2544 throughput.

    Args:
        trial: runs one trial at an offered rate, returns ``(tx, rx)`` frames.
        lo: lowest rate worth testing (> 0); the search assumes nothing about it until it is tried.
        hi: highest offered rate (the generator's maximum).
        resolution: stop when the bracket is this narrow (same unit as the rates).
        max_trials: hard cap on trials (each trial costs its duration; say how many were used).
        loss_tolerance: accepted loss ratio (0 = RFC 2544).
        on_trial: progress callback ``(trial, index)``.

    Returns:
        SearchResult; ``throughput`` is always a rate that was tried and passed (or 0.0).
    """
    if not 0 < lo <= hi:
        raise ValueError(f"need 0 < lo <= hi, got lo={lo} hi={hi}")
    if resolution <= 0 or max_trials < 1:
        raise ValueError("resolution must be > 0 and max_trials >= 1")
    res = SearchResult(0.0)
    good, bad = 0.0, None    # highest passing rate, lowest failing rate

    def run(rate: float) -> bool:
        tx, rx = trial(rate)
        t = Trial(rate, int(tx), int(rx))
        res.trials.append(t)
        if on_trial:
            on_trial(t, len(res.trials))
        return passes(t, loss_tolerance)

    if run(hi):
        res.throughput, res.at_max, res.converged, res.bracket = hi, True, True, (hi, hi)
        return res
    bad = hi
    floor_tested = False
    while len(res.trials) < max_trials:
        lower = good if good > 0 else lo
        if bad - lower <= resolution:
            if good > 0 or floor_tested:
                res.converged = True
                break
            rate = lo                       # bracket closed above lo without a pass: try lo itself once
        else:
            rate = (lower + bad) / 2
        floor_tested = floor_tested or rate == lo
        if run(rate):
            good = rate
        else:
            bad = rate
            if rate == lo:                  # even the floor loses frames
                res.converged = True
                break
    else:
        res.converged = bad - (good if good > 0 else lo) <= resolution
    res.throughput = good
    res.bracket = (good, bad)
    return res


class SimulatedDevice:
    """A device with a known forwarding capacity, for tests and dry runs.

    Frames offered above ``capacity`` (rate unit, Mpps by default: ``frames_per_unit`` frames per unit and second)
    are dropped; ``jitter`` (0..1) lowers the capacity of a trial
    by a deterministic pseudo-random fraction to mimic a noisy machine.
    """

    def __init__(self, capacity: float, duration: float = 1.0, jitter: float = 0.0, seed: int = 1,
                 frames_per_unit: float = 1e6):
        self.capacity, self.duration, self.jitter = capacity, duration, jitter
        self.scale = frames_per_unit * duration      # rates in Mpps by default
        self._state = seed
        self.calls = 0

    def _rand(self) -> float:
        self._state = (1103515245 * self._state + 12345) % (2 ** 31)
        return self._state / 2 ** 31

    def __call__(self, rate: float) -> tuple[int, int]:
        self.calls += 1
        cap = self.capacity * (1 - self.jitter * self._rand())
        tx = int(rate * self.scale)
        rx = min(tx, int(cap * self.scale))
        return tx, rx
