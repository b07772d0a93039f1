from gemmbench.backend import Budget
from gemmbench.timing import SLOW_KERNEL_SAMPLES, sample, warm_up


def fixed(seconds):
    """take(n) for a kernel that always takes ``seconds``; records chunk sizes."""
    chunks = []

    def take(n):
        chunks.append(n)
        return [seconds] * n
    return take, chunks


def test_stops_at_max_samples():
    take, _ = fixed(1e-6)
    assert len(sample(take, Budget(0, 5, 50, 10.0), 1e-6)) == 50


def test_stops_on_time_budget_after_min_samples():
    take, _ = fixed(0.1)
    samples = sample(take, Budget(0, 5, 1000, 1.0), 0.1)
    assert 10 <= len(samples) <= 11 and sum(samples) >= 1.0


def test_min_samples_win_over_an_exhausted_budget():
    take, _ = fixed(0.2)  # the budget is spent after 3 samples
    assert len(sample(take, Budget(0, 8, 100, 0.5), 0.2)) == 8


def test_slow_kernels_stop_at_three_samples():
    take, _ = fixed(10.0)
    assert len(sample(take, Budget(0, 10, 100, 1.0), 10.0)) == SLOW_KERNEL_SAMPLES


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
    assert len(sample(take, Budget(0, 5, 100, 0.0), 1.0)) == 5
