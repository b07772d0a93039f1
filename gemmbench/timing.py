"""The sampling loop both devices share: warm up, then take samples until the
budget says stop. Devices supply ``take(n)``, which returns n raw samples
(seconds per call); the GPU queues them behind a blocking kernel, the CPU
times calls one by one."""

from __future__ import annotations

import math
import time
from typing import Callable

from .backend import Budget


# A kernel so slow that min_samples calls would take this many times the
# budget stops at SLOW_KERNEL_SAMPLES: three give a median, and a sweep stays
# bounded in time.
SLOW_KERNEL_FACTOR = 10
SLOW_KERNEL_SAMPLES = 3


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


def sample(take: Callable[[int], list[float]], budget: Budget, per_call: float,
           max_chunk: int = 64) -> list[float]:
    """Collect samples in chunks until max_samples, or until max_seconds of
    measured time are in and at least min_samples were taken."""
    min_samples = budget.min_samples
    if 0 < budget.max_seconds < per_call * min_samples / SLOW_KERNEL_FACTOR:
        min_samples = min(min_samples, SLOW_KERNEL_SAMPLES)
    samples: list[float] = []
    spent = 0.0
    while len(samples) < budget.max_samples:
        if len(samples) >= min_samples and spent >= budget.max_seconds:
            break
        room = budget.max_samples - len(samples)
        by_time = math.ceil(max(budget.max_seconds - spent, 0.0) / max(per_call, 1e-9))
        need = max(min_samples - len(samples), by_time, 1)
        chunk = take(min(room, need, max_chunk))
        samples.extend(chunk)
        spent += sum(chunk)
    return samples
