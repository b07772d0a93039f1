import math

import pytest

from gemmbench.stats import NOISY_RELATIVE_IQR, gflops, summarize


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
