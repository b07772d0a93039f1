"""GPU timing with CUDA events, launches queued behind a blocking kernel.

A Python launch costs 15-30 us on the host, more than a 128^3 GEMM takes on
the GPU, so timing launch by launch would measure Python. Instead a one-thread
kernel spins on a host-mapped flag; while it holds the stream, the start
event, the launches and the stop events are enqueued; then the flag is
released and the GPU runs them back to back. The events see GPU time only.

Each sample is one event pair around ``repeats`` back-to-back calls, divided
by repeats. An event record costs about 2 us of GPU time on an H200, so a
sample spans about 200 us of calls (measured in GPU time by a calibration
chunk), keeping that cost near 1% even for a 5 us kernel.
With ``flush_l2`` every sample is one call preceded, outside the events, by a
write of twice the L2 size, so each call starts with a cold cache.

A ClockMonitor watches the SM clock through NVML while the samples run, so
each result says how throttled its samples were. The clock the kernels ran at
comes from the SMs themselves: a probe kernel before and after each batch of
samples reads every SM's cycle counter and the GPU's nanosecond timer. NVML's
20 ms readings miss how far the clock dips under tensor-core load (on an H200
it read 1980 MHz through TF32 runs whose cycle counters ran at 1.8 GHz).
"""

from __future__ import annotations

import math

import numpy as np

from ..backend import Budget, Gemm
from ..timing import SETTLE_SECONDS, sample, warm_up
from .compile import load_source
from .device import open_device
from .nvml import ClockMonitor

_BLOCKER_SOURCE = r"""
extern "C" __global__ void block_stream(volatile int* flag, unsigned long long timeout_ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (flag[0] == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) { flag[1] = 1; break; }  // host never released us
    }
}
"""

_PROBE_SOURCE = r"""
// Each block writes its SM's cycle counter and the global nanosecond timer
// into its SM's slot; blocks that share an SM overwrite each other with
// readings microseconds apart.
extern "C" __global__ void clock_probe(unsigned long long* out) {
    if (threadIdx.x != 0) return;
    unsigned smid;
    unsigned long long ns;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    out[2 * smid] = clock64();
    out[2 * smid + 1] = ns;
}
"""
_PROBE_SLOTS = 1024  # more than any GPU's SM ids

# The driver's launch queue is finite (on an H200, 512 queued cuBLAS calls of
# two kernels each overflowed it). If it fills while the blocker holds the
# stream, the host waits on the GPU and the GPU on the host: the blocker's
# timeout breaks that, and the chunk is retried smaller.
_MAX_QUEUED = 256
_BLOCK_TIMEOUT_NS = 1_000_000_000
_TARGET_SAMPLE_SECONDS = 200e-6
_MAX_REPEATS = 64
# A warm-up whose SMs ran below this share of the maximum clock was held down
# (power or heat): it goes on to SETTLE_SECONDS. A kernel at the full clock
# (SGEMM on an H200: 1,976 of 1,980 MHz) keeps its short warm-up.
_HELD_DOWN = 0.97


def probe_clock(before: np.ndarray, after: np.ndarray) -> tuple[float, float] | None:
    """(SM cycles per ns, ns) between two probe readings, or None.

    ``before``/``after`` are (slots, 2) arrays of (cycle counter, globaltimer ns),
    zero where no probe block ran. SMs share one clock, but their counters
    start apart, so each SM's rate comes from its own two readings; the
    median over the SMs read both times is the window's clock.
    """
    seen = (before[:, 1] > 0) & (after[:, 1] > before[:, 1]) & (after[:, 0] > before[:, 0])
    if not seen.any():
        return None
    cycles = (after[seen, 0] - before[seen, 0]).astype(np.float64)
    ns = (after[seen, 1] - before[seen, 1]).astype(np.float64)
    return float(np.median(cycles / ns)), float(np.median(ns))


class CycleClock:
    """The mean SM clock over the windows it marks, from the SMs' cycle counters."""

    def __init__(self, cuda, stream, compute_capability: tuple[int, int], sm_count: int):
        self.cuda, self.stream = cuda, stream
        self.kernel = load_source(_PROBE_SOURCE, "clock_probe", compute_capability)
        self.kernel.prepare("P")
        self.grid = (4 * sm_count, 1, 1)  # enough blocks that every SM gets one
        self.buffers = [cuda.mem_alloc(_PROBE_SLOTS * 16) for _ in range(2)]
        self.host = [cuda.pagelocked_zeros((_PROBE_SLOTS, 2), np.uint64) for _ in range(2)]
        self.reset()

    def reset(self) -> None:
        self.cycles = self.ns = 0.0

    def mark(self, which: int) -> None:
        """Enqueue a reading (0: the window opens, 1: it closes)."""
        self.cuda.memset_d32_async(self.buffers[which], 0, _PROBE_SLOTS * 4, self.stream)
        self.kernel.prepared_async_call(self.grid, (32, 1, 1), self.stream, self.buffers[which])
        self.cuda.memcpy_dtoh_async(self.host[which], self.buffers[which], self.stream)

    def add_window(self) -> None:
        """After the stream synchronised: add the window between the two marks."""
        window = probe_clock(*self.host)
        if window is not None:
            rate, ns = window
            self.cycles += rate * ns
            self.ns += ns

    def mhz(self) -> float | None:
        return round(1e3 * self.cycles / self.ns, 1) if self.ns else None


class EventTimer:
    """Times callables on one stream; owns the blocker, events, clock probe and flush buffer."""

    def __init__(self, stream, compute_capability: tuple[int, int], l2_bytes: int, sm_count: int,
                 max_clock_mhz: float | None = None):
        cuda, _ = open_device()
        self.cuda = cuda
        self.stream = stream
        self.max_clock_mhz = max_clock_mhz
        self.clock = CycleClock(cuda, stream, compute_capability, sm_count)
        self.blocker = load_source(_BLOCKER_SOURCE, "block_stream", compute_capability)
        self.blocker.prepare("PQ")
        self.flag = cuda.pagelocked_zeros(2, np.int32, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
        self.flag_device = np.intp(self.flag.base.get_device_pointer())
        self.flush_words = max(2 * l2_bytes // 4, 1)
        self._flush_buffer = None
        self._events = []

    def _event_pairs(self, n: int):
        while len(self._events) < n:
            self._events.append((self.cuda.Event(), self.cuda.Event()))
        return self._events[:n]

    def flush_l2(self) -> None:
        if self._flush_buffer is None:
            self._flush_buffer = self.cuda.mem_alloc(self.flush_words * 4)
        self.cuda.memset_d32_async(self._flush_buffer, 0, self.flush_words, self.stream)

    def _take(self, gemm: Gemm, alpha: float, beta: float, n: int, repeats: int, flush: bool) -> list[float]:
        """Enqueue n samples behind the blocker, release it, return seconds per call."""
        pairs = self._event_pairs(n)
        self.flag[:] = 0
        self.blocker.prepared_async_call((1, 1, 1), (1, 1, 1), self.stream, self.flag_device,
                                         np.uint64(_BLOCK_TIMEOUT_NS))
        self.clock.mark(0)
        for start, stop in pairs:
            if flush:
                self.flush_l2()
            start.record(self.stream)
            for _ in range(repeats):
                gemm(alpha, beta)
            stop.record(self.stream)
        self.clock.mark(1)
        self.flag[0] = 1
        self.stream.synchronize()
        if self.flag[1]:
            raise TimeoutError("launches were not queued before the blocking kernel timed out")
        self.clock.add_window()
        return [stop.time_since(start) / 1e3 / repeats for start, stop in pairs]

    def measure(self, gemm: Gemm, alpha: float, beta: float, budget: Budget, flush_l2: bool = False):
        """Warm up (settling a held-down clock: _warm_up), then sample. Returns
        (samples in seconds, notes): the notes hold calls_per_sample, why
        sampling stopped (timing.Sampled.notes), the clock during the samples
        (clock_notes) and, where the warm-up was extended, warmup_settled_s."""
        per_call, settled = self._warm_up(gemm, alpha, beta, budget.warmup_seconds)
        self.clock.reset()
        with ClockMonitor() as clocks:
            sampled, repeats = self._sample(gemm, alpha, beta, budget, flush_l2, per_call)
        return sampled.samples, {"calls_per_sample": repeats, **sampled.notes(),
                                 **with_cycle_clock(clocks.notes(), self.clock.mhz()),
                                 **({"warmup_settled_s": SETTLE_SECONDS} if settled else {})}

    def _warm_up(self, gemm: Gemm, alpha: float, beta: float, seconds: float) -> tuple[float, bool]:
        """(seconds per call, whether the warm-up was extended): warm up for
        ``seconds``; if the SMs' cycle counters show the clock held down
        meanwhile, go on until SETTLE_SECONDS (timing.SETTLE_SECONDS says why)."""
        call = lambda: gemm(alpha, beta)  # noqa: E731
        self.clock.reset()
        self.clock.mark(0)
        per_call = warm_up(call, self.stream.synchronize, seconds)
        self.clock.mark(1)
        self.stream.synchronize()
        self.clock.add_window()
        if seconds >= SETTLE_SECONDS or not held_down(self.clock.mhz(), self.max_clock_mhz):
            return per_call, False
        return warm_up(call, self.stream.synchronize, SETTLE_SECONDS - seconds), True

    def _sample(self, gemm: Gemm, alpha: float, beta: float, budget: Budget, flush_l2: bool, per_call: float):
        state = {"repeats": 1, "chunk": _MAX_QUEUED // 3}

        def take(n: int) -> list[float]:
            while True:
                try:
                    return self._take(gemm, alpha, beta, min(n, state["chunk"]), state["repeats"], flush_l2)
                except TimeoutError:
                    if state["chunk"] == 1:
                        raise
                    state["chunk"] = max(1, state["chunk"] // 2)

        if not flush_l2:
            # the host-side estimate is launch-bound for small kernels: ask the GPU
            per_call = sorted(take(8))[4]
            state["repeats"] = max(1, min(_MAX_REPEATS, math.ceil(_TARGET_SAMPLE_SECONDS / per_call)))
            state["chunk"] = max(1, _MAX_QUEUED // (state["repeats"] + 2))
        return sample(take, budget, per_call, max_chunk=state["chunk"], calls_per_sample=state["repeats"]), \
            state["repeats"]


def held_down(clock_mhz: float | None, max_clock_mhz: float | None) -> bool:
    """Whether a measured SM clock ran below _HELD_DOWN of the maximum (False when either is unknown)."""
    return bool(clock_mhz and max_clock_mhz) and clock_mhz < _HELD_DOWN * max_clock_mhz


def with_cycle_clock(notes: dict, cycle_mhz: float | None) -> dict:
    """The clock notes with sm_clock_mhz from the cycle counters where they were read
    (NVML's mean kept as nvml_sm_clock_mhz), NVML's alone otherwise."""
    if cycle_mhz is None:
        return notes
    out = dict(notes)
    if "sm_clock_mhz" in out:
        out["nvml_sm_clock_mhz"] = out.pop("sm_clock_mhz")
    out["sm_clock_mhz"] = cycle_mhz
    out["sm_clock_source"] = "cycle counters"
    return out
