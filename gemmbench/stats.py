"""Pure statistics over raw timing samples (seconds per call)."""

from __future__ import annotations

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
