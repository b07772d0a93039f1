"""What the benchmark needs from a device: the contract GPU and CPU both keep.

Every GEMM here is row-major ``C = alpha * A @ B + beta * C`` with A of shape
M x K, B of shape K x N and C of shape M x N, all float32. With ``beta == 0``
C is never read (BLAS semantics), so it may hold anything, NaN included.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from .spec import KernelSpec, Params

# gemm(alpha, beta): run the kernel once on the backend's buffers. On the GPU
# this only enqueues the launch; measure() and get_c() synchronise.
Gemm = Callable[[float, float], None]


class SkipKernel(Exception):
    """A kernel that cannot run here (missing tool, shape it cannot take...).

    Raised by Backend.prepare; the message is shown in the table as the reason.
    """


@dataclass(frozen=True)
class Shape:
    M: int
    N: int
    K: int

    @property
    def flops(self) -> int:
        return 2 * self.M * self.N * self.K

    def __str__(self) -> str:
        return f"{self.M}x{self.N}x{self.K}"


@dataclass(frozen=True)
class Prepared:
    """A kernel ready to run at one shape: what ``Backend.prepare`` returns.

    ``spec`` is the record that actually runs (a rung's fallback where its
    architecture-specific path is missing); ``params`` the compile-time
    parameters it was built with and ``params_source`` where they came from:
    "default", "selected" (the rung's per-shape choice), "tuned" (the tuning
    cache) or "given" (by the caller). ``threads``: CPU threads (None on the GPU).
    ``choice``: KernelSpec.explain's line for these parameters, if the rung has one.
    """

    gemm: Gemm
    spec: KernelSpec
    params: dict = field(default_factory=dict)
    params_source: str = "default"
    threads: int | None = None
    choice: str = ""  # the rung's own account of what it does at this shape (KernelSpec.explain)


@dataclass(frozen=True)
class Budget:
    """When to stop sampling: at max_samples, or once max_seconds of samples
    are in and at least min_samples were taken. Warm-up runs for warmup_seconds
    (at least one call) before any sample.

    With ``max_noise`` (a fraction: 0.005 is 0.5%) sampling stops instead once
    the median is known that well (stats.median_noise) and min_seconds of
    samples are in; max_seconds is then the time-out that gives up on it.

    With ``rounds`` > 1 each row is timed in that many visits, taking turns
    with the other rows of its shape (gemmbench.execute.rounds.turns; an odd
    count's last round in two half visits); each visit warms up again and
    samples on ``visit()``'s share of the budget."""

    warmup_seconds: float = 0.05
    min_samples: int = 10
    max_samples: int = 200
    max_seconds: float = 1.0
    max_noise: float | None = None
    min_seconds: float = 0.0
    rounds: int = 1

    def visit(self) -> "Budget":
        """The budget of one of ``rounds`` visits: its share of the seconds and
        samples (at least one sample, and the whole warm-up: the GPU's clock
        settles again under each kernel)."""
        n = self.rounds
        if n <= 1:
            return self
        fewest = max(1, -(-self.min_samples // n))
        return dataclasses.replace(self, min_samples=fewest, max_samples=max(fewest, self.max_samples // n),
                                   max_seconds=self.max_seconds / n,
                                   min_seconds=self.min_seconds / n, rounds=1)


@dataclass
class Problem:
    """Seeded random inputs for one shape, kept on the host."""

    shape: Shape
    seed: int
    A: np.ndarray
    B: np.ndarray
    C0: np.ndarray  # the C that the beta != 0 verification starts from

    @classmethod
    def random(cls, shape: Shape, seed: int = 0) -> "Problem":
        rng = np.random.default_rng(seed)
        # uniform(-1, 1): both signs, so cancellation happens as in real data
        def draw(rows, cols):
            return rng.uniform(-1.0, 1.0, size=(rows, cols)).astype(np.float32)
        return cls(shape, seed, draw(shape.M, shape.K), draw(shape.K, shape.N), draw(shape.M, shape.N))


class Backend(Protocol):
    """A device that runs one ladder.

    Lifecycle per shape: load(problem) once, then for each kernel
    prepare(spec, shape) -> Prepared, verification through set_c/gemm/get_c,
    then measure(gemm, ...) -> (samples, notes). The shape and parameters are
    passed to each phase, never read back from an earlier call.
    """

    device: str  # "gpu" or "cpu"

    def environment(self) -> dict:
        """Machine facts for the table header and the saved record (JSON-safe)."""

    def load(self, problem: Problem) -> None:
        """Copy the problem's A and B into this backend's buffers and allocate C."""

    def prepare(self, spec: KernelSpec, shape: Shape, params: Params | None = None) -> Prepared:
        """Compile/build (cached) the kernel for the loaded buffers of ``shape``;
        without ``params``, the rung's own for this shape (tuned, selected or
        default). Raise SkipKernel if it cannot run here."""

    def set_c(self, c: np.ndarray, output: str = "fp32") -> None:
        """Overwrite C on the device with this host array, stored as the
        element type ``output`` (a precision class's output type)."""

    def get_c(self, output: str = "fp32") -> np.ndarray:
        """Wait for queued work and return C (held as ``output``) as a host float32 array."""

    def measure(self, gemm: Gemm, alpha: float, beta: float, budget: Budget,
                flush_l2: bool = False) -> tuple[list[float], dict]:
        """Warm up, then return raw per-call times in seconds and notes on the
        timing (calls per sample, the clock during the samples...)."""

    def reference(self, problem: Problem, inputs: str = "fp32") -> tuple[np.ndarray, np.ndarray]:
        """(A @ B, |A| @ |B|) in float64, for verification, of A and B as a
        kernel with ``inputs`` elements sees them (rounded to that type first)."""
