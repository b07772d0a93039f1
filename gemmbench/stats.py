"""Pure statistics over raw timing samples (seconds per call)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

# A result whose interquartile range exceeds this fraction of its median is
# flagged as noisy: the machine was busy, clocks moved, or too few samples.
NOISY_RELATIVE_IQR = 0.05
# A baseline measured again after the rungs of its shape has shifted when its
# median moved by more than the two spreads together, and by at least this
# much: small drifts (turbo, cache state) are normal between two looks.
SHIFT_FLOOR = 0.10


@dataclass(frozen=True)
class Stats:
    n: int
    median: float
    mean: float
    min: float
    max: float
    q1: float
    q3: float

    @property
    def relative_iqr(self) -> float:
        return (self.q3 - self.q1) / self.median if self.median > 0 else 0.0

    @property
    def noisy(self) -> bool:
        return self.relative_iqr > NOISY_RELATIVE_IQR

    def to_dict(self) -> dict:
        return {**asdict(self), "relative_iqr": self.relative_iqr, "noisy": self.noisy}


def summarize(samples) -> Stats:
    """Median, quartiles and extremes of the samples; raises on an empty list."""
    x = np.asarray(samples, dtype=np.float64)
    if x.size == 0:
        raise ValueError("no samples to summarize")
    q1, median, q3 = np.percentile(x, [25, 50, 75])
    return Stats(int(x.size), float(median), float(x.mean()), float(x.min()), float(x.max()),
                 float(q1), float(q3))


def relative_shift(first: Stats, again: Stats) -> float:
    """How far the second look's median moved from the first, as a fraction."""
    return abs(again.median - first.median) / first.median if first.median > 0 else 0.0


def shifted(first: Stats, again: Stats) -> bool:
    """True when two looks at one kernel disagree beyond their spreads: the
    machine changed between them (load, clocks), so figures computed against
    the first look are suspect."""
    return relative_shift(first, again) > max(SHIFT_FLOOR, first.relative_iqr + again.relative_iqr)


def gflops(flops: int, seconds: float) -> float:
    return flops / seconds / 1e9 if seconds > 0 else float("nan")


# How sure the median's confidence interval is (--max-noise measures its width).
MEDIAN_CONFIDENCE = 0.95


def median_ranks(n: int, confidence: float = MEDIAN_CONFIDENCE) -> tuple[int, int] | None:
    """The 1-based ranks (lower, upper) of the sorted samples that bound a
    distribution-free confidence interval of the median, or None when n
    samples are too few for one (n < 6 at 95%).

    The number of samples below the true median is Binomial(n, 1/2) whatever
    the distribution, so [x(lower), x(upper)] with upper = n + 1 - lower
    covers it with probability 1 - 2 P(B < lower); lower is the largest rank
    that keeps that at least ``confidence``. The binomial CDF is summed in
    log space, so it holds for any n without overflow or underflow."""
    if n < 1:
        return None
    k = np.arange(n + 1, dtype=np.float64)
    # log C(n, k) - n log 2, built up from C(n, k+1) / C(n, k) = (n - k) / (k + 1)
    log_pmf = np.concatenate(([0.0], np.cumsum(np.log((n - k[:-1]) / (k[:-1] + 1))))) - n * np.log(2.0)
    cdf = np.cumsum(np.exp(log_pmf))
    tail = (1.0 - confidence) / 2
    # lower = the count of k with P(B <= k) <= tail, i.e. the largest l with P(B <= l - 1) <= tail
    lower = int(np.searchsorted(cdf, tail * (1 + 1e-12), side="right"))
    if lower < 1:
        return None
    return lower, n + 1 - lower


def median_noise(samples, confidence: float = MEDIAN_CONFIDENCE) -> float:
    """How well the samples pin their median down: half the width of the
    median's distribution-free confidence interval (median_ranks), as a
    fraction of the median; infinite when there are too few samples.

    Order statistics rather than the standard error of the mean: GPU and CPU
    timings have one-sided outliers (a preempted call, a clock dip) that
    widen a standard deviation but barely move ranks; no distribution is
    assumed, and nothing is random (a bootstrap would be), so the same
    samples always stop at the same place. Cost: one sort."""
    x = np.sort(np.asarray(samples, dtype=np.float64))
    ranks = median_ranks(x.size, confidence)
    median = float(np.median(x)) if x.size else 0.0
    if ranks is None or median <= 0:
        return math.inf
    lower, upper = ranks
    return float(x[upper - 1] - x[lower - 1]) / 2 / median
