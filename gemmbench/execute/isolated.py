"""A user's kernel runs in a child process, so a fault or a hang costs one row.

An illegal memory access poisons a CUDA context for good, a segfault ends a
process, and a kernel that never returns holds it forever. So each user
kernel gets a worker process of its own (multiprocessing "spawn": a fresh
interpreter with its own CUDA context, never a fork of the parent's). For
each row the worker rebuilds the same seeded Problem and the FP64
reference, then runs ``bench.run_entry`` — the very verification and timing
every rung gets — and sends the KernelResult back through a pipe.

Before each step the worker tells the parent how long that step may take:
one kernel call during verification (``--kernel-timeout``, 10 s by
default), the timing phase (its budget plus that limit per sample), set-up
and loading (generous fixed allowances). When a step overruns, the parent
kills the worker and the row FAILs "timed out"; when the worker dies (a
segfault, a CUDA fault that aborts) the row FAILs with how it died. Either
way the parent's own CUDA context never saw the kernel, and the next row
runs. A worker is reused for the next row (shape or parameters) of the same
kernel, and replaced after any failure.
"""

from __future__ import annotations

import dataclasses
import hashlib
import multiprocessing
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from ..backend import Budget, Problem, Shape
from .local import Entry, Plan, expectations, run_entry
from ..precision import precision as precision_class
from ..records.results import KernelResult
from ..kernelfile import UserKernel

DEFAULT_CALL_SECONDS = 10.0
START_SECONDS = 120.0  # spawn, imports, CUDA context, the FP64 reference
LOAD_SECONDS = 120.0   # loading (or, on a cache miss, compiling) the kernel
CHECK_SECONDS = 60.0   # comparing a result with the reference on the host
STOP_SECONDS = 5.0


@dataclass(frozen=True)
class WorkerConfig:
    """What the worker needs to build the backend the parent would use."""

    device: str  # "gpu" or "cpu"
    call_seconds: float = DEFAULT_CALL_SECONDS  # the limit for one kernel call
    threads: int | None = None  # CPU: the thread count of the row
    use_tuning: bool = True  # GPU: read tuned parameters from the tuning cache


def start_seconds(shape: Shape) -> float:
    """The set-up allowance: fixed, plus the FP64 reference at a slow 10 GFLOP/s."""
    return START_SECONDS + 2 * shape.flops / 1e10


def timing_seconds(budget: Budget, call_seconds: float) -> float:
    """The timing phase: warm-up and the sample budget, plus every sample the
    budget may insist on (and the GPU timer's 8 calibration calls) at the call limit."""
    return budget.warmup_seconds + budget.max_seconds + (budget.min_samples + 10) * call_seconds + CHECK_SECONDS


class Isolated:
    """Runs the rows of one user kernel in a worker process (see the module doc)."""

    def __init__(self, kernel: UserKernel, config: WorkerConfig):
        self.kernel = kernel
        self.config = config
        self._process = None
        self._conn = None

    # -- the parent side -------------------------------------------------------
    def run(self, entry: Entry, shape: Shape, plan: Plan) -> KernelResult:
        """The row of ``entry`` at ``shape``, measured in the worker; a FAIL row
        when the worker overruns a step or dies."""
        if self._process is None:
            self._start()
        self._conn.send(("run", shape, entry.params, plan.seed, plan.budget, plan.flush_l2))
        outcome = self._wait(START_SECONDS, "the worker did not start")
        if isinstance(outcome, KernelResult):
            result = outcome
            if result.status == "fail":
                self.close()  # its context may be poisoned: the next row gets a fresh worker
        else:
            self.close()
            spec = self.kernel.spec
            result = KernelResult(self.config.device, spec.id, spec.name, spec.precision, shape, "fail", outcome,
                                  dict(entry.params if entry.params is not None else spec.params),
                                  "given" if entry.params is not None else "default", self.config.threads)
        result.notes = {**result.notes, "kernel_file": str(self.kernel.path), "kernel_sha256": self.kernel.digest}
        return result

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child_end = context.Pipe()
        self._process = context.Process(target=serve, args=(child_end, self.kernel, self.config), daemon=True,
                                        name=f"gemmbench {self.kernel.spec.name}")
        self._process.start()
        child_end.close()

    def _wait(self, seconds: float, what: str) -> KernelResult | str:
        """The worker's result, or why there is none ("timed out: ...", "crashed ...")."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return f"timed out: {what}"
            try:
                if not self._conn.poll(left):
                    continue
                message = self._conn.recv()
            except (EOFError, OSError):
                return self._how_it_died()
            if message[0] == "expect":
                _, seconds, what = message
                deadline = time.monotonic() + seconds
            else:
                return message[1]

    def _how_it_died(self) -> str:
        self._process.join(STOP_SECONDS)
        code = self._process.exitcode
        if code is None:
            return "crashed: the worker closed its pipe"
        if code < 0:
            try:
                return f"crashed: killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"crashed: killed by signal {-code}"
        return f"crashed: exit code {code}"

    def close(self) -> None:
        """Stop the worker (kill it if it does not stop at once)."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is None:
            return
        try:
            if process.is_alive():
                conn.send(("stop",))
                process.join(STOP_SECONDS)
        except (OSError, ValueError):
            pass
        if process.is_alive():
            process.kill()
            process.join(STOP_SECONDS)
        conn.close()


# -- the worker side ---------------------------------------------------------------

class _Watched:
    """The worker's backend: before each step, tells the parent how long it may take."""

    def __init__(self, backend, expect, call_seconds: float):
        self.backend, self.expect, self.call_seconds = backend, expect, call_seconds
        self.device = backend.device

    def prepare(self, spec, shape, params=None):
        self.expect(LOAD_SECONDS + self.call_seconds, f"loading the kernel took over {LOAD_SECONDS + self.call_seconds:g} s")
        prepared = self.backend.prepare(spec, shape, params)
        return dataclasses.replace(prepared, gemm=_LimitedCall(prepared.gemm, self.expect, self.call_seconds))

    def set_c(self, c, output: str = "fp32") -> None:
        self.backend.set_c(c, output)

    def get_c(self, output: str = "fp32"):
        c = self.backend.get_c(output)  # on the GPU the call's wait ends here
        self.expect(CHECK_SECONDS, f"checking the result took over {CHECK_SECONDS:g} s")
        return c

    def measure(self, gemm, alpha, beta, budget, flush_l2=False):
        seconds = timing_seconds(budget, self.call_seconds)
        self.expect(seconds, f"timing took over {seconds:g} s ({self.call_seconds:g} s per call, --kernel-timeout)")
        return self.backend.measure(gemm.call, alpha, beta, budget, flush_l2)  # untouched: no reporting while timed


class _LimitedCall:
    """A verification call, announced with the per-call limit."""

    def __init__(self, call, expect, seconds: float):
        self.call, self.expect, self.seconds = call, expect, seconds

    def __call__(self, alpha: float, beta: float) -> None:
        self.expect(self.seconds, f"a call ran over {self.seconds:g} s (--kernel-timeout)")
        self.call(alpha, beta)


def _backend(config: WorkerConfig):
    if config.device == "gpu":
        from ..gpu.backend import GpuBackend
        from ..tuning import TuningCache
        return GpuBackend(tuning=TuningCache() if config.use_tuning else None)
    from ..cpu.backend import CpuBackend
    return CpuBackend(threads=config.threads, max_call_seconds=config.call_seconds)


def serve(conn, kernel: UserKernel, config: WorkerConfig) -> None:
    """The worker: one request per row until told to stop or a row fails."""
    os.dup2(2, 1)  # a kernel's printf must not land in the parent's --json output

    def expect(seconds: float, what: str) -> None:
        conn.send(("expect", seconds, what))

    backend = None
    spec = kernel.spec
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        if message[0] != "run":
            break
        _, shape, params, seed, budget, flush_l2 = message
        try:
            expect(start_seconds(shape), "setting up (CUDA context, FP64 reference) took too long")
            if hashlib.sha256(Path(kernel.path).read_text().encode()).hexdigest() != kernel.digest:
                raise RuntimeError(f"{kernel.given} changed during the run")
            backend = backend or _backend(config)
            problem = Problem.random(shape, seed)
            backend.load(problem)
            passes = expectations(problem, *backend.reference(problem, precision_class(spec.precision).inputs))
            plan = Plan([], [shape], seed, budget, flush_l2)
            result = run_entry(Entry(_Watched(backend, expect, config.call_seconds), spec, params),
                               problem, passes, plan)
        except Exception as exc:  # anything the row raises is that row's failure
            result = KernelResult(config.device, spec.id, spec.name, spec.precision, shape, "fail",
                                  f"{type(exc).__name__}: {exc}".splitlines()[0])
        conn.send(("result", result))
        if result.status == "fail":
            break
    conn.close()
    os._exit(0)  # skip interpreter clean-up: a poisoned CUDA context only complains there
