"""The CPU backend: the C ladder through ctypes, OpenBLAS through numpy.

Thread policy: with ``threads=None`` the single-core rungs (1-5) and the
OpenBLAS baseline they are compared with run on one thread, and rung 6 on all
cores; ``threads=N`` applies to everything. The count is applied through
threadpoolctl, which sets OpenBLAS's pool and, once a rung that links libgomp
is loaded, OpenMP's (omp_set_num_threads).
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController, threadpool_info

from ..backend import Budget, Gemm, Prepared, Problem, Shape, SkipKernel
from ..spec import KernelSpec, Params
from ..timing import sample, warm_up
from . import build

# A kernel whose single call is predicted to take longer than this is skipped.
MAX_CALL_SECONDS = 10.0
# Below this many FLOPs every rung finishes within seconds: no need to predict.
_PREDICT_ABOVE_FLOPS = 2e9


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def core_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def default_threads(spec: KernelSpec, threads: int | None = None) -> int:
    """The thread policy: ``threads`` when given, else all cores for a
    multithreaded rung and one for the rest (and for the baseline)."""
    if threads is not None:
        return threads
    return core_count() if spec.multithreaded else 1


def _last_level_cache_bytes() -> int:
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        sizes.append(int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text))
    return max(sizes, default=32 << 20)


class _ThreadPools:
    """The process's BLAS and OpenMP thread pools, through threadpoolctl.

    Pools are process-wide, so this is one object shared by every backend.
    Setting a limit costs tens of microseconds of ctypes calls, so it is only
    done when the count changes.
    """

    def __init__(self):
        self._controller = None
        self._applied: int | None = None

    def rescan(self) -> None:
        """Find the loaded pools again (a new library may have brought libgomp)."""
        self._controller = ThreadpoolController()
        self._applied = None

    def use(self, n: int) -> None:
        if n != self._applied:
            if self._controller is None:
                self.rescan()
            self._controller.limit(limits=n)
            self._applied = n


_POOLS = _ThreadPools()


class CpuBackend:
    """Runs the CPU ladder on this machine (see gemmbench.backend.Backend)."""

    device = "cpu"

    def __init__(self, threads: int | None = None, log=None,
                 max_call_seconds: float = MAX_CALL_SECONDS):
        if threads is not None and threads < 1:
            raise ValueError("threads must be >= 1")
        self.threads = threads
        self.log = log
        self.max_call_seconds = max_call_seconds
        self._flush_buffer: np.ndarray | None = None
        self.A = self.B = self.C = None

    # ---- threads ---------------------------------------------------------

    def threads_for(self, spec: KernelSpec) -> int:
        """How many threads this rung runs on (shown in the table)."""
        return default_threads(spec, self.threads)

    # ---- Backend ---------------------------------------------------------

    def environment(self) -> dict:
        blas = [p for p in threadpool_info() if p.get("user_api") == "blas"]
        env = {
            "device": "cpu",
            "cpu": _cpu_model(),
            "cores": core_count(),
            "threads": self.threads,  # None: 1 for rungs 0-5, all cores for rung 6
            "numpy": np.__version__,
            "blas": [{k: p.get(k) for k in ("internal_api", "version", "architecture",
                                            "num_threads", "threading_layer", "filepath")}
                     for p in blas],
        }
        try:
            env["compiler"] = build.compiler_version()
            env["simd"] = build.simd_level()
        except build.CompilerNotFound as exc:
            env["compiler"] = None
            env["compiler_error"] = str(exc)
        return env

    def load(self, problem: Problem) -> None:
        self.A = np.ascontiguousarray(problem.A, dtype=np.float32)
        self.B = np.ascontiguousarray(problem.B, dtype=np.float32)
        self.C = np.zeros((problem.shape.M, problem.shape.N), dtype=np.float32)

    def chosen(self, spec: KernelSpec, shape: Shape, params: Params | None = None) -> tuple[KernelSpec, dict, str]:
        """``spec``, the parameters it runs with (``params`` when given, else its own) and where they come from
        (as GpuBackend.chosen; a C kernel's parameters do not depend on the shape)."""
        return (spec, dict(params), "given") if params is not None else (spec, dict(spec.params), "default")

    def prepare(self, spec: KernelSpec, shape: Shape, params: Params | None = None) -> Prepared:
        if self.A is None or (shape.M, shape.K, shape.N) != (*self.A.shape, self.B.shape[1]):
            raise RuntimeError(f"prepare({shape}) before load(problem) of that shape")
        threads = self.threads_for(spec)
        if spec.is_baseline:
            kernel = self._numpy_gemm
        else:
            fn = build.load(spec, self.log)
            if "-fopenmp" in spec.cflags:
                _POOLS.rescan()  # libgomp is loaded now, so it can be limited
            _POOLS.use(threads)
            predicted = self._predict_seconds(fn)
            if predicted > self.max_call_seconds:
                raise SkipKernel(f"one call predicted to take {predicted:.0f} s "
                                 f"(limit {self.max_call_seconds:g} s)")
            kernel = self._c_gemm(fn)

        def gemm(alpha: float, beta: float) -> None:
            _POOLS.use(threads)
            kernel(alpha, beta)

        _, chosen, source = self.chosen(spec, shape, params)
        return Prepared(gemm, spec, chosen, source, threads)

    def set_c(self, c: np.ndarray, output: str = "fp32") -> None:
        _fp32_only(output)
        np.copyto(self.C, c, casting="same_kind")

    def get_c(self, output: str = "fp32") -> np.ndarray:
        _fp32_only(output)
        return self.C.copy()

    def measure(self, gemm: Gemm, alpha: float, beta: float, budget: Budget,
                flush_l2: bool = False) -> tuple[list[float], dict]:
        """Per-call wall times (time.perf_counter) after a warm-up. With
        flush_l2, a buffer twice the last-level cache is written (untimed)
        before each call, so every call starts with cold caches."""
        per_call = warm_up(lambda: gemm(alpha, beta), lambda: None, budget.warmup_seconds)

        def take(n: int) -> list[float]:
            times = []
            for _ in range(n):
                if flush_l2:
                    self._flush_caches()
                t0 = time.perf_counter()
                gemm(alpha, beta)
                times.append(time.perf_counter() - t0)
            return times

        sampled = sample(take, budget, per_call)
        return sampled.samples, {"calls_per_sample": 1, **sampled.notes()}

    def reference(self, problem: Problem, inputs: str = "fp32") -> tuple[np.ndarray, np.ndarray]:
        _fp32_only(inputs)
        _POOLS.use(core_count())  # float64 BLAS on every core: not timed
        a = problem.A.astype(np.float64)
        b = problem.B.astype(np.float64)
        return a @ b, np.abs(a) @ np.abs(b)

    # ---- internals -------------------------------------------------------

    def _numpy_gemm(self, alpha: float, beta: float) -> None:
        if alpha == 1.0 and beta == 0.0:
            np.matmul(self.A, self.B, out=self.C)
        elif beta == 0.0:
            np.matmul(self.A, self.B, out=self.C)
            self.C *= np.float32(alpha)
        else:
            self.C[...] = np.float32(alpha) * (self.A @ self.B) + np.float32(beta) * self.C

    def _c_gemm(self, fn):
        M, K = self.A.shape
        N = self.B.shape[1]
        a, b, c = self.A.ctypes.data, self.B.ctypes.data, self.C.ctypes.data

        def kernel(alpha: float, beta: float) -> None:
            fn(M, N, K, alpha, a, b, beta, c)
        return kernel

    def _predict_seconds(self, fn) -> float:
        """One call's time, extrapolated from the first rows of A.

        Every rung's cost grows linearly in M for fixed N and K, so the rung
        runs on its first m = 1, 2, 4, ... rows (the real N, K and memory
        layout) and predicts M rows as M/m times that. Fixed per-call work
        (packing B) makes this an overestimate at small m, so m keeps doubling
        until the prediction is within the limit, or the rung has run long
        enough (0.5 s) for its prediction to be trusted. Small problems are not
        timed at all. Overwrites C.
        """
        M, K = self.A.shape
        N = self.B.shape[1]
        if 2.0 * M * N * K < _PREDICT_ABOVE_FLOPS:
            return 0.0
        a, b, c = self.A.ctypes.data, self.B.ctypes.data, self.C.ctypes.data
        m = 1
        while True:
            t0 = time.perf_counter()
            fn(m, N, K, 1.0, a, b, 0.0, c)
            t = time.perf_counter() - t0
            predicted = t * M / m
            if m >= M or predicted <= self.max_call_seconds or t > 0.5:
                return predicted
            m = min(2 * m, M)

    def _flush_caches(self) -> None:
        if self._flush_buffer is None:
            self._flush_buffer = np.zeros(2 * _last_level_cache_bytes() // 8)
        self._flush_buffer += 1.0


def _fp32_only(element: str) -> None:
    """This backend holds FP32 matrices only (16-bit element types come with their ladder)."""
    if element != "fp32":
        raise SkipKernel(f"{element} matrices are not supported on this backend")
