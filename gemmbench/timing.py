"""The sampling loop both devices share: warm up, then take samples until the
budget says stop. Devices supply ``take(n)``, which returns up to n raw
samples (seconds per call); the GPU queues them behind a blocking kernel, the
CPU times calls one by one. Sampling stops on time (--budget) or, with a
noise target (--max-noise), once the median is known well enough; either way
the result says why it stopped."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

from .backend import Budget
from .stats import median_noise


# A kernel so slow that min_samples calls would take this many times the
# budget stops at SLOW_KERNEL_SAMPLES: three give a median, and a sweep stays
# bounded in time.
SLOW_KERNEL_FACTOR = 10
SLOW_KERNEL_SAMPLES = 3
# With a noise target, its check (a sort of the samples) runs each time the
# samples have grown by this factor: a fixed share of overhead, however many.
NOISE_CHECK_GROWTH = 1.25

# Why sampling stopped (a result's notes["stopped"]).
STOPPED_NOISE = "noise"  # the median's noise fell to --max-noise
STOPPED_BUDGET = "budget"  # --budget seconds of samples were in
STOPPED_SAMPLES = "samples"  # --max-samples were taken
STOPPED_TIMEOUT = "timeout"  # --noise-timeout seconds of samples, and the noise target not reached
STOP_REASONS = (STOPPED_NOISE, STOPPED_BUDGET, STOPPED_SAMPLES, STOPPED_TIMEOUT)


# Under a power cap, the clock a kernel gets in its first tenths of a second
# depends on what ran before it. On an H200 at 4096^3, cuBLAS BF16 ran its
# first 0.1 s after SGEMM at 176 us a call and settled at 206 us within 0.3 s
# (after a second of idling: 183 -> 204). A warm-up that ends inside that
# window flatters whichever row follows a cooler one, so a GPU warm-up whose
# clock was held down goes on until the kernel has had this long.
SETTLE_SECONDS = 0.3


def warm_up(call: Callable[[], None], sync: Callable[[], None], seconds: float) -> float:
    """Run ``call`` for about ``seconds`` (at least once: the first call may load
    code or fill caches); return the estimated seconds per call."""
    start = time.perf_counter()
    call()
    sync()
    first = time.perf_counter() - start
    if first >= seconds:
        return first
    calls, start = 0, time.perf_counter()
    while True:
        call()
        calls += 1
        if calls in (1, 2, 4, 8, 16, 32, 64) or calls % 64 == 0:
            sync()
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                return elapsed / calls


@dataclass(frozen=True)
class Sampled:
    """What sampling returned: the raw samples, why it stopped (one of
    STOP_REASONS), the noise target it had (a fraction; None when it stopped
    on time) and how well the samples pin their median down (stats.median_noise;
    None below the samples a confidence interval needs)."""

    samples: list[float]
    stopped: str
    max_noise: float | None = None
    noise: float | None = None

    def notes(self) -> dict:
        """The result notes that say how sampling ended."""
        out = {"stopped": self.stopped, "median_noise": self.noise}
        return out if self.max_noise is None else {**out, "max_noise": self.max_noise}


def stop_text(n: int, notes: dict) -> str:
    """How sampling ended, for -v: "48 samples, stopped on noise (median +-0.31%, target 0.5%)"."""
    stopped, noise, target = notes.get("stopped"), notes.get("median_noise"), notes.get("max_noise")
    text = f"{n} samples" + (f", stopped on {stopped}" if stopped else "")
    spread = [f"median +-{100 * noise:.2g}%" if noise is not None else "too few samples for the median's noise"]
    if target is not None:
        spread.append(f"target {100 * target:.2g}%")
    return text + f" ({', '.join(spread)})" if stopped else text


def sample(take: Callable[[int], list[float]], budget: Budget, per_call: float,
           max_chunk: int = 64, calls_per_sample: int = 1) -> Sampled:
    """Collect samples in chunks of at most max_chunk (``take`` may return
    fewer than it is asked for) until the budget says stop. Each sample is
    the mean seconds of ``calls_per_sample`` calls. Time is what the timed
    calls took (each sample times its calls), never the wall clock."""
    per_sample = per_call * calls_per_sample
    min_samples = budget.min_samples
    if 0 < budget.max_seconds < per_sample * min_samples / SLOW_KERNEL_FACTOR:
        min_samples = min(min_samples, SLOW_KERNEL_SAMPLES)
    loop = _until_time if budget.max_noise is None else _until_settled
    samples, stopped = loop(take, budget, min_samples, per_sample, max_chunk, calls_per_sample)
    noise = median_noise(samples)
    return Sampled(samples, stopped, budget.max_noise, noise if math.isfinite(noise) else None)


def _samples_for(seconds: float, per_sample: float) -> int:
    return math.ceil(max(seconds, 0.0) / max(per_sample, 1e-9))


def _until_time(take, budget: Budget, min_samples: int, per_sample: float, max_chunk: int,
                calls_per_sample: int) -> tuple[list[float], str]:
    """Until max_samples, or until max_seconds of samples are in and at least
    min_samples were taken."""
    samples: list[float] = []
    spent = 0.0
    while len(samples) < budget.max_samples:
        if len(samples) >= min_samples and spent >= budget.max_seconds:
            return samples, STOPPED_BUDGET
        room = budget.max_samples - len(samples)
        need = max(min_samples - len(samples), _samples_for(budget.max_seconds - spent, per_sample), 1)
        chunk = take(min(room, need, max_chunk))
        samples.extend(chunk)
        spent += sum(chunk) * calls_per_sample
    return samples, STOPPED_SAMPLES


def _until_settled(take, budget: Budget, min_samples: int, per_sample: float, max_chunk: int,
                   calls_per_sample: int) -> tuple[list[float], str]:
    """Until the median's noise is at most max_noise with min_seconds of samples
    and min_samples in; or, giving up on that, until max_samples or max_seconds.

    The noise is checked each time the samples have grown by NOISE_CHECK_GROWTH
    (and once more before giving up), so a kernel whose chunks are small (a
    GPU's launch queue holds few calls of a fast kernel) pays for one sort per
    quarter more samples, not one per chunk."""
    samples: list[float] = []
    spent = 0.0
    next_check = 0
    while True:
        n = len(samples)
        full = n >= budget.max_samples
        out_of_time = n >= min_samples and spent >= budget.max_seconds
        ready = n >= min_samples and spent >= budget.min_seconds
        if ready and (n >= next_check or full or out_of_time):
            if median_noise(samples) <= budget.max_noise:
                return samples, STOPPED_NOISE
            next_check = max(n + 1, math.ceil(n * NOISE_CHECK_GROWTH))
        if full:
            return samples, STOPPED_SAMPLES
        if out_of_time:
            return samples, STOPPED_TIMEOUT
        want = max(min_samples - n, _samples_for(budget.min_seconds - spent, per_sample), next_check - n, 1)
        left = max(_samples_for(budget.max_seconds - spent, per_sample), 1)
        chunk = take(min(budget.max_samples - n, want, left, max_chunk))
        samples.extend(chunk)
        spent += sum(chunk) * calls_per_sample
