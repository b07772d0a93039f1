"""Run a plan: for each shape, each kernel is verified, then timed (with
--rounds, the kernels of a shape are timed in turns: measured_rows).

Verification runs twice before any timing: with beta = 0 over a C filled with
NaN (every element must be written, C must not be read), and with alpha =
0.75, beta = -1.5 over a random C (the epilogue). Timing uses alpha = 1,
beta = 0, the common case, for every kernel and baseline alike.

Contention is looked for twice. While a CPU kernel is timed, the time its
threads spent ready to run but waiting for a core (another process had it) is
measured; a row that waited is flagged ``disturbed``. And after the rungs of a
shape, each baseline they were compared with is measured again, briefly: a
median that moved beyond the spreads flags the baseline ``shifted`` and the
rows compared with it ``baseline-shifted`` (the machine changed between the
baseline's samples and theirs, so their "% of" figures are suspect).
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from ..backend import Backend, Budget, Problem, Shape, SkipKernel
from ..errors import UserError
from ..precision import precision as precision_class
from ..spec import KernelSpec, Params
from ..records.results import BASELINE_SHIFTED, DISTURBED, SHIFTED, KernelResult, baseline_for, measurement_flags
from ..stats import relative_shift, shifted, summarize
from ..timing import stop_text
from ..verify import Expectation, Verification, combine
from .interrupts import Interrupted
from .rounds import merge_rounds, turns

if TYPE_CHECKING:
    from .isolated import Isolated

VERIFY_ALPHA, VERIFY_BETA = 0.75, -1.5
TIMED_ALPHA, TIMED_BETA = 1.0, 0.0
# A CPU row is disturbed when its threads together waited for a core this
# share of the wall time it was measured over (quiet machines: well under 1%).
DISTURBED_WAIT_FRACTION = 0.05
# The second look at a baseline: a quarter of the sampling budget, at most
# this many samples, a short warm-up (its first call refills the caches).
RECHECK_SAMPLES = 20
RECHECK_WARMUP_SECONDS = 0.05


@dataclass(frozen=True)
class Entry:
    """One row of a plan, ready in this process: a kernel on the backend that runs it.

    ``isolated`` runs the row in a worker process instead (the strategy for
    a user's kernel, whose fault or hang must not take the other rows
    down); the worker measures it with the same ``run_entry``. ``shape``:
    the one shape the row runs at (a tune candidate), None for every shape.
    """

    backend: Backend
    spec: KernelSpec
    params: Params | None = None
    isolated: "Isolated | None" = None
    shape: Shape | None = None

    def runs_at(self, shape: Shape) -> bool:
        return self.shape is None or self.shape == shape


@dataclass
class Batch:
    """Entries at shapes, with what measuring them needs, run in this process."""

    entries: list[Entry]
    shapes: list[Shape]
    seed: int = 0
    budget: Budget = field(default_factory=Budget)
    flush_l2: bool = False
    log: Callable[[str], None] = lambda message: None
    device: str | None = None  # the command's ladder (default: the first entry's device)

    @property
    def ladder_device(self) -> str:
        return self.device or self.entries[0].backend.device

    @property
    def steps(self) -> int:
        return sum(1 for shape in self.shapes for entry in self.entries if entry.runs_at(shape))


def expectations(problem: Problem, ref: np.ndarray, absref: np.ndarray) -> tuple[Expectation, Expectation]:
    """The two verification passes, built once per shape."""
    K = problem.shape.K
    return (Expectation.of(ref, absref, K),
            Expectation.of(ref, absref, K, VERIFY_ALPHA, VERIFY_BETA, problem.C0))


def verify_kernel(backend: Backend, gemm, passes: tuple[Expectation, ...], precision: str) -> Verification:
    """Run the kernel once per pass (C reset first, in the class's output
    type); return the worst outcome."""
    output = precision_class(precision).output
    outcomes = []
    for expect in passes:
        shape = expect.want.shape
        backend.set_c(np.full(shape, np.nan, np.float32) if expect.C0 is None else expect.C0, output)
        gemm(expect.alpha, expect.beta)
        outcomes.append(expect.check(backend.get_c(output), precision))
    return combine(*outcomes)


def run_entry(entry: Entry, problem: Problem, passes: tuple[Expectation, ...], plan: Batch) -> KernelResult:
    spec, backend = entry.spec, entry.backend
    result = KernelResult(backend.device, spec.id, spec.name, spec.precision, problem.shape, "skip")
    try:
        prepared = backend.prepare(spec, problem.shape, entry.params)
    except SkipKernel as exc:
        result.reason = str(exc)
        return result
    except UserError:
        raise
    except Exception as exc:  # a rung that does not build or load is a failed kernel
        return _failed(result, exc)
    result.params, result.params_source, result.threads = prepared.params, prepared.params_source, prepared.threads
    gemm = prepared.gemm
    try:
        plan.log(f"{spec.name} {problem.shape}: verify")
        result.verification = verify_kernel(backend, gemm, passes, spec.precision)
        if not result.verification.passed:
            result.status = "fail"
            result.reason = "wrong result" if not result.verification.nonfinite else \
                f"{result.verification.nonfinite} non-finite or unwritten elements"
            return result
        plan.log(f"{spec.name} {problem.shape}: time")
        result.samples, result.notes, disturbed = measure_watched(backend, gemm, plan.budget, plan.flush_l2,
                                                                  result.threads)
        if prepared.choice:
            result.notes["choice"] = prepared.choice
        plan.log(f"{spec.name} {problem.shape}: {stop_text(len(result.samples), result.notes)}")
        result.flags = measurement_flags(result) + ([DISTURBED] if disturbed else [])
        result.status = "pass"
    except Exception as exc:  # a crashing kernel is a failed kernel, not a crashed tool
        return _failed(result, exc)
    return result


def _failed(result: KernelResult, exc: Exception) -> KernelResult:
    result.status = "fail"
    result.reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return result


def measure_watched(backend: Backend, gemm, budget: Budget, flush_l2: bool, threads: int | None):
    """backend.measure, watched for CPU contention on the CPU: returns
    (samples, notes, disturbed); the notes gain ``cpu_wait_fraction``."""
    if backend.device != "cpu":
        samples, notes = backend.measure(gemm, TIMED_ALPHA, TIMED_BETA, budget, flush_l2)
        return samples, notes, False
    watch = CpuWait(threads)
    samples, notes = backend.measure(gemm, TIMED_ALPHA, TIMED_BETA, budget, flush_l2)
    waited = watch.fraction()
    if waited is None:
        return samples, notes, False
    return samples, {**notes, "cpu_wait_fraction": round(waited, 4)}, waited > DISTURBED_WAIT_FRACTION


def measure_again(entry: Entry, shape: Shape, budget: Budget, flush_l2: bool):
    """A row verified earlier, its kernel prepared again (the same parameters) and
    timed without verifying: (samples, notes, disturbed), as measure_watched."""
    prepared = entry.backend.prepare(entry.spec, shape, entry.params)
    return measure_watched(entry.backend, prepared.gemm, budget, flush_l2, prepared.threads)


class CpuWait:
    """How long this process's threads were ready to run but had no core, as a
    share of the wall time since this object was made.

    Linux keeps the figure per thread (run_delay, /proc/self/task/*/schedstat):
    it counts exactly the time another process (or too many threads of ours)
    held the cores. Python threads other than this one (a progress bar) are
    left out: they are not the kernel. Without schedstat, a single-threaded
    kernel is judged by this thread's CPU time against the wall time; a
    multi-threaded one is not judged (None).
    """

    TASKS = "/proc/self/task"

    def __init__(self, threads: int | None = 1):
        self.threads = threads
        self.wall = time.perf_counter()
        self.cpu = time.thread_time()
        self.delays = self._run_delays()

    def _run_delays(self) -> dict[str, int] | None:
        others = {str(t.native_id) for t in threading.enumerate() if t is not threading.current_thread()}
        delays = {}
        try:
            for tid in os.listdir(self.TASKS):
                if tid in others:
                    continue
                try:
                    with open(f"{self.TASKS}/{tid}/schedstat") as f:
                        delays[tid] = int(f.read().split()[1])
                except FileNotFoundError:
                    continue  # the thread ended while we looked
        except (OSError, ValueError, IndexError):
            return None
        return delays or None

    def fraction(self) -> float | None:
        wall = time.perf_counter() - self.wall
        if wall <= 0:
            return 0.0
        now = self._run_delays()
        if self.delays is not None and now is not None:
            waited_ns = sum(ns - self.delays.get(tid, 0) for tid, ns in now.items())
            return max(waited_ns, 0) / 1e9 / wall
        if self.threads == 1:
            return max(wall - (time.thread_time() - self.cpu), 0.0) / wall
        return None


def recheck_baselines(rows: list[tuple[Entry, KernelResult]], plan: Batch,
                      on_update: Callable[[KernelResult], None]) -> None:
    """Measure each baseline of one shape again after the rows compared with
    it, and flag a shift (see the module's docstring)."""
    results = [r for _, r in rows]
    entry_of = {id(r): e for e, r in rows}
    compared: dict[int, list[KernelResult]] = {}
    for r in results:
        base = baseline_for(r, results, plan.ladder_device)
        if base is not None and base is not r and r.status == "pass":
            compared.setdefault(id(base), [base]).append(r)
    b = plan.budget
    brief = dataclasses.replace(b, warmup_seconds=min(b.warmup_seconds, RECHECK_WARMUP_SECONDS),
                                min_samples=min(b.min_samples, RECHECK_SAMPLES // 4),
                                max_samples=min(b.max_samples, RECHECK_SAMPLES),
                                max_seconds=b.max_seconds / 4, min_seconds=b.min_seconds / 4)
    for base, *others in compared.values():
        entry = entry_of[id(base)]
        plan.log(f"{base.name} {base.shape}: measured again")
        try:
            samples, notes, disturbed = measure_again(entry, base.shape, brief, plan.flush_l2)
        except Exception:  # the first look stands; a second that fails says nothing new
            continue
        again = summarize(samples)
        base.notes["recheck"] = {"samples_s": samples, "median_s": again.median, "relative_iqr": again.relative_iqr,
                                 "shift": relative_shift(base.stats, again), "disturbed": disturbed,
                                 "cpu_wait_fraction": notes.get("cpu_wait_fraction")}
        if shifted(base.stats, again):
            base.flags.append(SHIFTED)
            for r in others:
                r.flags.append(BASELINE_SHIFTED)
                on_update(r)
        on_update(base)


def measured_rows(entries: list[Entry], problem: Problem, passes_for: Callable[[KernelSpec], tuple],
                  plan: Batch) -> Iterator[tuple[Entry, KernelResult]]:
    """Each entry's row at the problem's shape, as it becomes final: verified
    and timed in one visit, or with ``--rounds`` timed in the visits of
    ``turns``, the rows taking turns, each on its share of the budget
    (Budget.visit). An in-process row is verified in its first visit only; a
    kernel file's worker verifies it in each. A row that fails is not visited
    again. Interrupted, the rows keep the visits every row of the shape had
    (their ``notes["rounds"]`` say how many), then the signal goes on."""
    rounds = plan.budget.rounds
    if rounds <= 1:
        for entry in entries:
            yield entry, _visit(entry, problem, passes_for, plan)
        return
    visits: list[list[KernelResult]] = [[] for _ in entries]
    finished = 0  # visits every row has had (a row that failed is not visited again)
    try:
        for reverse, share, name in turns(rounds):
            visit_plan = dataclasses.replace(plan, budget=dataclasses.replace(plan.budget, rounds=share).visit())
            for i in (reversed(range(len(entries))) if reverse else range(len(entries))):
                entry, done = entries[i], visits[i]
                if done and done[-1].status != "pass":
                    continue
                plan.log(f"{entry.spec.name} {problem.shape}: {name}")
                if done and entry.isolated is None:
                    done.append(_time_again(entry, done[0], visit_plan))
                else:
                    done.append(_visit(entry, problem, passes_for, visit_plan))
            finished += 1
    except Interrupted as stop:
        # The session saves what finished (stop.rows: saving them here, a row at a time, the signal would
        # stop again after the first). Each row keeps the visits every row had, so the rows of the shape
        # stay measured alike; in the first round, the rows it reached, as without rounds.
        stop.rows = [merge_rounds(done[:finished] if finished else done) for done in visits if done]
        raise
    for entry, done in zip(entries, visits):
        yield entry, merge_rounds(done)


def _visit(entry: Entry, problem: Problem, passes_for: Callable[[KernelSpec], tuple], plan: Batch) -> KernelResult:
    """One row verified and timed: here, or in the entry's worker process."""
    if entry.isolated is not None:
        plan.log(f"{entry.spec.name} {problem.shape}: in a worker process")
        return entry.isolated.run(entry, problem.shape, plan)
    return run_entry(entry, problem, passes_for(entry.spec), plan)


def _time_again(entry: Entry, first: KernelResult, plan: Batch) -> KernelResult:
    """A later round of a row verified in its first: the kernel prepared again (the same
    parameters) and timed."""
    again = dataclasses.replace(first, samples=[], notes={}, flags=[])
    try:
        again.samples, again.notes, disturbed = measure_again(entry, first.shape, plan.budget, plan.flush_l2)
    except Exception as exc:  # as in run_entry: a kernel that crashes now FAILs its row
        return _failed(again, exc)
    again.flags = [DISTURBED] if disturbed else []
    return again


def run_plan(plan: Batch, on_result: Callable[[KernelResult], None],
             on_update: Callable[[KernelResult], None] = lambda result: None) -> list[KernelResult]:
    """Run every entry at every shape; ``on_result`` sees each result as it
    lands (the session saves there, so an interrupted sweep keeps what it
    finished), ``on_update`` a result whose flags or notes changed later (a
    baseline measured again)."""
    results = []
    here = [e for e in plan.entries if e.isolated is None]
    backends = list({id(e.backend): e.backend for e in here}.values())
    try:
        for shape in plan.shapes:
            problem = Problem.random(shape, plan.seed)
            for backend in backends:
                backend.load(problem)
            passes = {}  # per element type of A and B: the reference of the inputs as the kernels see them

            def passes_for(spec):
                inputs = precision_class(spec.precision).inputs
                if inputs not in passes:
                    plan.log(f"reference {shape} ({inputs} inputs)")
                    passes[inputs] = expectations(problem, *backends[0].reference(problem, inputs))
                return passes[inputs]
            rows = []
            for entry, result in measured_rows([e for e in plan.entries if e.runs_at(shape)], problem, passes_for,
                                               plan):
                results.append(result)
                rows.append((entry, result))
                on_result(result)
            recheck_baselines(rows, plan, on_update)
    finally:
        for worker in {id(e.isolated): e.isolated for e in plan.entries if e.isolated is not None}.values():
            worker.close()
    return results
