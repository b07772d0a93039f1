import math

import pytest

import numpy as np

from gemmbench.stats import NOISY_RELATIVE_IQR, gflops, median_noise, median_ranks, summarize


def test_summary_of_known_samples():
    s = summarize([4.0, 1.0, 3.0, 2.0, 5.0])
    assert (s.n, s.median, s.min, s.max, s.mean) == (5, 3.0, 1.0, 5.0, 3.0)
    assert (s.q1, s.q3) == (2.0, 4.0)
    assert s.relative_iqr == pytest.approx(2.0 / 3.0)
    assert s.noisy


def test_tight_samples_are_not_noisy():
    s = summarize([1.0, 1.001, 0.999, 1.0, 1.0005])
    assert s.relative_iqr < NOISY_RELATIVE_IQR and not s.noisy


def test_median_resists_outliers():
    assert summarize([1.0] * 9 + [1000.0]).median == 1.0


def test_empty_samples_raise():
    with pytest.raises(ValueError):
        summarize([])


def test_gflops():
    assert gflops(2 * 1024 ** 3, 1e-3) == pytest.approx(2147.483648)
    assert math.isnan(gflops(10, 0.0))


def test_stats_dict_is_complete():
    d = summarize([1.0, 2.0]).to_dict()
    assert set(d) >= {"n", "median", "q1", "q3", "min", "max", "mean", "relative_iqr", "noisy"}


# -- the median's confidence interval (the --max-noise criterion) -----------------------------------------

def _coverage(n: int, lower: int) -> float:
    """P(x(lower) <= median <= x(n+1-lower)) = 1 - 2 P(B <= lower - 1), B ~ Binomial(n, 1/2), exactly."""
    return 1 - 2 * sum(math.comb(n, k) for k in range(lower)) / 2 ** n


@pytest.mark.parametrize("n, ranks", [(5, None), (6, (1, 6)), (10, (2, 9)), (20, (6, 15)), (50, (18, 33)),
                                      (100, (40, 61))])
def test_median_ranks_match_the_published_table(n, ranks):
    assert median_ranks(n) == ranks


@pytest.mark.parametrize("n", [6, 7, 11, 29, 64, 201, 1000])
def test_median_ranks_are_the_narrowest_with_95_percent_coverage(n):
    """Against exact binomial sums (math.comb): the interval covers the median
    at least 95% of the time, and one rank narrower would not."""
    lower, upper = median_ranks(n)
    assert upper == n + 1 - lower
    assert _coverage(n, lower) >= 0.95 > _coverage(n, lower + 1)


def test_median_ranks_hold_for_many_samples():
    lower, upper = median_ranks(100_000)  # 2**-100000 underflows: the sums run in log space
    assert 50_000 - 320 < lower < 50_000 - 300 and upper == 100_001 - lower


def test_median_noise_of_known_samples():
    # 1..10: the 95% interval is [x(2), x(9)] = [2, 9]; half its width over the median 5.5
    assert median_noise([float(v) for v in range(10, 0, -1)]) == pytest.approx(3.5 / 5.5)
    assert median_noise([1.0] * 6) == 0.0
    assert median_noise([1.0] * 5) == math.inf  # too few for any interval


def test_median_noise_of_a_simulated_normal_matches_theory():
    """For n normal samples the median's standard error is sqrt(pi/2) sigma / sqrt(n),
    so the 95% half-width is about 1.96 times that: on average over 50
    seeded draws (one draw's width varies by about 10%; fixed seeds: no flake)."""
    n, sigma = 2000, 0.01
    widths = [median_noise(np.random.default_rng(seed).normal(1.0, sigma, n)) for seed in range(50)]
    assert np.mean(widths) == pytest.approx(1.96 * math.sqrt(math.pi / 2) * sigma / math.sqrt(n), rel=0.05)


def test_median_interval_covers_the_true_median_as_promised():
    """2,000 seeded trials of 30 samples from a skewed (lognormal) timing-like
    distribution: the interval holds its true median (exp(0) = 1) as often as
    the exact coverage says, within a few standard errors."""
    rng = np.random.default_rng(12)
    lower, upper = median_ranks(30)
    trials = np.sort(rng.lognormal(0.0, 0.3, size=(2000, 30)), axis=1)
    covered = np.mean((trials[:, lower - 1] <= 1.0) & (trials[:, upper - 1] >= 1.0))
    assert covered == pytest.approx(_coverage(30, lower), abs=0.02)


def test_median_noise_shrugs_off_outliers_that_a_mean_does_not():
    quiet = [1.0 + 0.001 * (i % 5) for i in range(200)]
    spiky = quiet[:-4] + [50.0] * 4  # four preempted calls
    assert median_noise(spiky) < 2 * median_noise(quiet) + 1e-3
    sem = np.std(spiky, ddof=1) / math.sqrt(len(spiky)) / np.mean(spiky)
    assert sem > 0.2  # the standard error of the mean would never settle on these
