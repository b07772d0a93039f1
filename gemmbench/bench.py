"""Run a plan: for each shape, each kernel is verified, then timed.

Verification runs twice before any timing: with beta = 0 over a C filled with
NaN (every element must be written, C must not be read), and with alpha =
0.75, beta = -1.5 over a random C (the epilogue). Timing uses alpha = 1,
beta = 0, the common case, for every kernel and baseline alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .backend import Backend, Budget, Problem, Shape, SkipKernel
from .errors import UserError
from .spec import KernelSpec, Params
from .results import KernelResult
from .verify import Expectation, Verification, combine

VERIFY_ALPHA, VERIFY_BETA = 0.75, -1.5
TIMED_ALPHA, TIMED_BETA = 1.0, 0.0


@dataclass(frozen=True)
class Entry:
    """One row of a plan: a kernel on the backend that runs it.

    ``isolated`` (a gemmbench.isolate.Isolated) runs the row in a worker
    process instead, through the same ``run_entry``: a user's kernel, whose
    fault or hang must not take the other rows down.
    """

    backend: Backend
    spec: KernelSpec
    params: Params | None = None
    isolated: object | None = None


@dataclass
class Plan:
    entries: list[Entry]
    shapes: list[Shape]
    seed: int = 0
    budget: Budget = field(default_factory=Budget)
    flush_l2: bool = False
    log: Callable[[str], None] = lambda message: None

    @property
    def steps(self) -> int:
        return len(self.entries) * len(self.shapes)


def expectations(problem: Problem, ref: np.ndarray, absref: np.ndarray) -> tuple[Expectation, Expectation]:
    """The two verification passes, built once per shape."""
    K = problem.shape.K
    return (Expectation.of(ref, absref, K),
            Expectation.of(ref, absref, K, VERIFY_ALPHA, VERIFY_BETA, problem.C0))


def verify_kernel(backend: Backend, gemm, passes: tuple[Expectation, ...], precision: str) -> Verification:
    """Run the kernel once per pass (C reset first); return the worst outcome."""
    outcomes = []
    for expect in passes:
        shape = expect.want.shape
        backend.set_c(np.full(shape, np.nan, np.float32) if expect.C0 is None else expect.C0)
        gemm(expect.alpha, expect.beta)
        outcomes.append(expect.check(backend.get_c(), precision))
    return combine(*outcomes)


def run_entry(entry: Entry, problem: Problem, passes: tuple[Expectation, ...], plan: Plan) -> KernelResult:
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
        result.samples, result.notes = backend.measure(gemm, TIMED_ALPHA, TIMED_BETA, plan.budget, plan.flush_l2)
        result.status = "pass"
    except Exception as exc:  # a crashing kernel is a failed kernel, not a crashed tool
        return _failed(result, exc)
    return result


def _failed(result: KernelResult, exc: Exception) -> KernelResult:
    result.status = "fail"
    result.reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return result


def run_plan(plan: Plan, on_result: Callable[[KernelResult], None]) -> list[KernelResult]:
    """Run every entry at every shape; ``on_result`` sees each result as it lands
    (the CLI saves there, so an interrupted sweep keeps what it finished)."""
    results = []
    here = [e for e in plan.entries if e.isolated is None]
    backends = list({id(e.backend): e.backend for e in here}.values())
    try:
        for shape in plan.shapes:
            problem = Problem.random(shape, plan.seed)
            for backend in backends:
                backend.load(problem)
            if backends:
                plan.log(f"reference {shape}")
                passes = expectations(problem, *backends[0].reference(problem))
            for entry in plan.entries:
                if entry.isolated is not None:
                    plan.log(f"{entry.spec.name} {shape}: in a worker process")
                    result = entry.isolated.run(entry, shape, plan)
                else:
                    result = run_entry(entry, problem, passes, plan)
                results.append(result)
                on_result(result)
    finally:
        for worker in {id(e.isolated): e.isolated for e in plan.entries if e.isolated is not None}.values():
            worker.close()
    return results
