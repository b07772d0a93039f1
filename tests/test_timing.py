import numpy as np
import pytest

from gemmbench.backend import Budget, Shape
from gemmbench.records.results import UNSETTLED, KernelResult, measurement_flags
from gemmbench.timing import (SLOW_KERNEL_SAMPLES, STOPPED_BUDGET, STOPPED_NOISE, STOPPED_SAMPLES, STOPPED_TIMEOUT,
                              sample, stop_text, warm_up)


def fixed(seconds):
    """take(n) for a kernel that always takes ``seconds``; records chunk sizes."""
    chunks = []

    def take(n):
        chunks.append(n)
        return [seconds] * n
    return take, chunks


def test_stops_at_max_samples():
    take, _ = fixed(1e-6)
    assert len(sample(take, Budget(0, 5, 50, 10.0), 1e-6).samples) == 50


def test_stops_on_time_budget_after_min_samples():
    take, _ = fixed(0.1)
    samples = sample(take, Budget(0, 5, 1000, 1.0), 0.1).samples
    assert 10 <= len(samples) <= 11 and sum(samples) >= 1.0


def test_min_samples_win_over_an_exhausted_budget():
    take, _ = fixed(0.2)  # the budget is spent after 3 samples
    assert len(sample(take, Budget(0, 8, 100, 0.5), 0.2).samples) == 8


def test_slow_kernels_stop_at_three_samples():
    take, _ = fixed(10.0)
    assert len(sample(take, Budget(0, 10, 100, 1.0), 10.0).samples) == SLOW_KERNEL_SAMPLES


def test_chunks_never_exceed_max_chunk():
    take, chunks = fixed(1e-9)
    sample(take, Budget(0, 10, 500, 1.0), 1e-9, max_chunk=64)
    assert max(chunks) <= 64 and sum(chunks) == 500


def test_warm_up_runs_at_least_once_and_estimates():
    calls = []
    per_call = warm_up(lambda: calls.append(1), lambda: None, 0.0)
    assert len(calls) == 1 and per_call >= 0
    calls.clear()
    warm_up(lambda: calls.append(1), lambda: None, 0.01)
    assert len(calls) > 2


def test_zero_budget_takes_exactly_min_samples():
    take, _ = fixed(1.0)
    assert len(sample(take, Budget(0, 5, 100, 0.0), 1.0).samples) == 5


# -- why sampling stopped, and stopping on the median's noise -------------------------------------------

def drawn(seed, median, spread, most=None):
    """take(n) of synthetic samples: uniform within median * (1 +- spread),
    from a seeded generator, so a run is the same every time; returns
    instantly, whatever time the samples claim. ``most``: fewer than asked
    per call, as a GPU's launch queue returns. Records the chunk sizes."""
    rng = np.random.default_rng(seed)
    chunks = []

    def take(n):
        n = min(n, most or n)
        chunks.append(n)
        return list(median * (1 + rng.uniform(-spread, spread, n)))
    return take, chunks


def noise_budget(max_noise=0.005, min_seconds=0.0, timeout=5.0, min_samples=10, max_samples=100_000):
    return Budget(0, min_samples, max_samples, timeout, max_noise, min_seconds)


def test_time_budget_says_it_stopped_on_budget_or_samples():
    take, _ = fixed(0.1)
    assert sample(take, Budget(0, 5, 1000, 1.0), 0.1).stopped == STOPPED_BUDGET
    take, _ = fixed(1e-6)
    assert sample(take, Budget(0, 5, 50, 10.0), 1e-6).stopped == STOPPED_SAMPLES


def test_quiet_samples_stop_on_noise_early():
    take, _ = drawn(1, 1e-3, 0.001)  # +-0.1%: the median is known to 0.5% from the first samples
    got = sample(take, noise_budget(timeout=5.0), 1e-3)
    assert got.stopped == STOPPED_NOISE and len(got.samples) == 10  # the first check, at min_samples
    assert got.noise <= 0.005 and got.notes() == {"stopped": "noise", "median_noise": got.noise, "max_noise": 0.005}


def test_noisy_samples_run_to_the_timeout_and_are_flagged_unsettled():
    take, _ = drawn(2, 1e-3, 0.5)  # +-50%: 0.1% needs far more than 2 s of 1 ms samples
    got = sample(take, noise_budget(max_noise=0.001, timeout=2.0), 1e-3)
    assert got.stopped == STOPPED_TIMEOUT and got.noise > 0.001
    assert 2.0 <= sum(got.samples) < 2.0 + 0.1  # stops at the time-out, not long after
    result = KernelResult("cpu", 1, "naive", "fp32", Shape(8, 8, 8), "pass", samples=got.samples, notes=got.notes())
    assert UNSETTLED in measurement_flags(result)


def test_a_settled_row_is_not_flagged():
    take, _ = drawn(1, 1e-3, 0.001)
    got = sample(take, noise_budget(), 1e-3)
    result = KernelResult("cpu", 1, "naive", "fp32", Shape(8, 8, 8), "pass", samples=got.samples, notes=got.notes())
    assert UNSETTLED not in measurement_flags(result)


def test_noise_stops_later_for_noisier_samples():
    """The criterion adapts: the same target takes more samples where the spread is wider."""
    counts = [len(sample(drawn(3, 1e-3, spread)[0], noise_budget(), 1e-3).samples) for spread in (0.01, 0.05, 0.2)]
    assert counts[0] < counts[1] < counts[2]


def test_max_samples_caps_a_noise_target():
    take, _ = drawn(4, 1e-3, 0.5)
    got = sample(take, noise_budget(max_noise=0.001, max_samples=50), 1e-3)
    assert len(got.samples) == 50 and got.stopped == STOPPED_SAMPLES and got.noise > 0.001


def test_min_time_is_honoured_before_stopping_on_noise():
    take, _ = drawn(5, 1e-3, 0.001)  # settled at once, but 0.2 s of samples are asked for first
    got = sample(take, noise_budget(min_seconds=0.2), 1e-3)
    assert got.stopped == STOPPED_NOISE and 0.2 <= sum(got.samples) < 0.2 + 0.01


def test_a_long_min_time_given_by_the_user_is_not_cut_short_by_the_sample_cap():
    """4096^3 BF16 on an H200: about 200 us a sample, so the default cap of
    5000 samples would stop --min-time 3 after about a second."""
    from gemmbench.options import RunOptions
    take, _ = drawn(6, 200e-6, 0.001)
    got = sample(take, RunOptions(min_time=3).budget_for("gpu"), 200e-6)
    assert got.stopped == STOPPED_NOISE and 3 <= sum(got.samples) < 3.01 and len(got.samples) > 5000


def test_time_is_the_samples_sum_not_the_wall_clock():
    """Samples that claim a second each, returned instantly: a 30 s time-out
    ends after 30 of them (a loop watching the wall clock would take 30 s and
    thousands of samples)."""
    rng = np.random.default_rng(6)
    got = sample(lambda n: list(1.0 + rng.uniform(-0.5, 0.5, n)), noise_budget(max_noise=0.0001, timeout=30.0), 1.0)
    assert got.stopped == STOPPED_TIMEOUT and 30.0 <= sum(got.samples) < 32.0


def test_slow_kernels_time_out_after_three_samples():
    take, _ = fixed(10.0)
    got = sample(take, noise_budget(timeout=1.0), 10.0)
    assert len(got.samples) == SLOW_KERNEL_SAMPLES and got.stopped == STOPPED_TIMEOUT and got.noise is None


def test_chunks_and_checks_grow_with_the_samples(monkeypatch):
    """A target never reached: the samples grow by a quarter between noise
    checks (each a sort), so 100,000 samples cost a few dozen checks, not
    one per chunk; take is asked for as many as the next check needs."""
    import gemmbench.timing as timing
    checks = []
    monkeypatch.setattr(timing, "median_noise", lambda s: checks.append(len(s)) or 1.0)
    take, chunks = drawn(7, 1e-6, 0.01)
    got = sample(take, noise_budget(max_noise=0.001, timeout=10.0, max_samples=100_000), 1e-6, max_chunk=1_000_000)
    assert got.stopped == STOPPED_SAMPLES and len(got.samples) == 100_000
    assert len(checks) < 50 and all(b >= 1.25 * a for a, b in zip(checks, checks[1:-2]))
    assert len(chunks) < 50


def test_chunks_smaller_than_asked_still_reach_the_target():
    """A GPU's queue returns at most a few samples per take: the loop keeps
    asking until its next check, and stops where a large-chunk run would."""
    small, chunks = drawn(8, 1e-3, 0.05, most=3)
    large, _ = drawn(8, 1e-3, 0.05)
    got, want = sample(small, noise_budget(), 1e-3, max_chunk=3), sample(large, noise_budget(), 1e-3)
    assert max(chunks) <= 3 and got.stopped == STOPPED_NOISE == want.stopped
    assert got.samples == want.samples


def test_the_same_samples_stop_at_the_same_place():
    runs = [sample(drawn(9, 1e-3, 0.1)[0], noise_budget(), 1e-3) for _ in range(2)]
    assert runs[0] == runs[1]


def test_stop_text_says_why_for_minus_v():
    assert stop_text(48, {"stopped": "noise", "median_noise": 0.0031, "max_noise": 0.005}) == \
        "48 samples, stopped on noise (median +-0.31%, target 0.5%)"
    assert stop_text(3, {"stopped": "timeout", "median_noise": None, "max_noise": 0.005}).startswith(
        "3 samples, stopped on timeout (too few samples")
    assert stop_text(5, {}) == "5 samples"


@pytest.mark.parametrize("max_noise", [None, 0.0001])
def test_time_counts_every_call_a_sample_covers(max_noise):
    """A GPU sample is the mean of several back-to-back calls: 10 calls of
    10 ms are 0.1 s, so one second is 10 samples, not 100 (on time and, as
    the time-out, on noise alike)."""
    rng = np.random.default_rng(10)
    take = lambda n: list(0.01 * (1 + rng.uniform(-0.5, 0.5, n)))
    budget = Budget(0, 3, 1000, 1.0, max_noise)
    got = sample(take, budget, 0.01, calls_per_sample=10)
    assert got.stopped == (STOPPED_BUDGET if max_noise is None else STOPPED_TIMEOUT)
    assert 1.0 <= 10 * sum(got.samples) < 1.0 + 0.2 and 8 <= len(got.samples) <= 13
