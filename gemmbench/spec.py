"""KernelSpec: the public record of one kernel, a shipped rung or a user's file.

A record holds everything a ``switch`` over rung ids would otherwise scatter:
where the source lives, its compile-time parameters and the constraints that
make them valid, the launch geometry, the precision class and a one-line
summary of what changed from the previous rung. Adding a rung is one source
file plus one record in ``gemmbench.rungs``; a user's kernel file becomes one
record through its header.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence


Params = Mapping[str, int]
Dim3 = tuple[int, int, int]


def params_key(params: Params) -> tuple[tuple[str, int], ...]:
    """Parameters as a plan's Row and a record's row identity hold them: sorted (name, value) pairs, hashable
    and the same in any order given."""
    return tuple(sorted(params.items()))


def runs_sm90a(compute_capability: tuple[int, int]) -> bool:
    """Whether a GPU of this compute capability runs the architecture-specific builds (sm_90a: wgmma, TMA,
    setmaxnreg). Only 9.0 does: code built for sm_90a runs on no other architecture, so an ``arch_specific``
    rung runs its fallback elsewhere."""
    return tuple(compute_capability) == (9, 0)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _no_constraint(p: Params) -> str | None:
    return None


@dataclass(frozen=True)
class KernelSpec:
    """One rung of a ladder.

    ``source`` is a file name in ``cuda_src/`` (GPU) or ``cpu_src/`` (CPU),
    or an absolute path (a user's kernel file);
    ``None`` marks the library baseline (cuBLAS / OpenBLAS), which is rung 0;
    on the GPU it comes in two precisions (cuBLAS SGEMM and cuBLAS TF32).
    ``block`` and ``grid`` give the CUDA launch geometry as functions of
    (params) and (M, N, K, params), ``smem`` the dynamic shared memory in
    bytes. ``check`` returns the reason a parameter combination is invalid, or
    None; ``search_space`` lists the values ``gemmbench tune`` may try.

    ``driver`` says what one GEMM call launches (gemmbench.gpu.drivers):
    "single" (one ``sgemm``), "split_k" (``sgemm`` over K slices, then
    ``reduce_splits``), "presplit_a" (``split_tf32`` of A, then ``sgemm``),
    "transpose_a" (``transpose_pad`` writes A^T, then ``sgemm`` reads it),
    "any_shape" (rung 28: the pre-passes its choice needs, ``sgemm`` over K
    slices, ``reduce_splits``) or
    "tma" (``sgemm`` taking CUtensorMaps of A and B by value; rows whose pitch
    TMA cannot take are first copied into padded rows).
    ``select`` picks the parameters per shape (shape-adaptive rungs);
    ``explain`` says in one line what a parameter set does at a shape and why
    (the table footer and ``info`` print it); ``runtime_params`` are read by
    the driver only, so changing them compiles nothing (``derived_defines``
    may still compile a define that follows from one). ``shape_candidates``
    lists what ``gemmbench tune`` tries at a shape, for a rung whose worth-
    trying choices depend on it (else tune tries ``search_space``).
    ``arch_specific`` rungs are built for sm_90a on compute capability 9.0
    (wgmma); elsewhere the same source is built with ``fallback``'s parameters
    and launch geometry.
    """

    id: int
    name: str
    device: str  # "gpu" or "cpu"
    summary: str
    source: str | None = None
    entry: str = "sgemm"
    params: Params = field(default_factory=dict)
    search_space: Mapping[str, Sequence[int]] = field(default_factory=dict)
    check: Callable[[Params], str | None] = _no_constraint
    constraints: str = ""
    block: Callable[[Params], Dim3] | None = None
    grid: Callable[[int, int, int, Params], Dim3] | None = None
    smem: Callable[[Params], int] | None = None
    driver: str = "single"  # single | split_k | presplit_a | transpose_a | any_shape | tma | tma16 | tma16_store
    select: Callable[[int, int, int, int], Params] | None = None  # (M, N, K, sm_count) -> params
    # (M, N, K, sm_count, params) -> one line: what the rung does at the shape with them, and why
    explain: Callable[[int, int, int, int, Params], str] | None = None
    runtime_params: tuple[str, ...] = ()  # read by the driver only (e.g. SPLITS, grid z): not compiled in
    # compile-time defines that follow from the parameters (rung 18: SPLIT_K = 1 where SPLITS > 1: its own build)
    derived_defines: Callable[[Params], Params] | None = None
    # (M, N, K, sm_count) -> the parameter sets tune tries at the shape (None: the search space, at every shape)
    shape_candidates: Callable[[int, int, int, int], Sequence[Params]] | None = None
    arch_specific: bool = False
    fallback: "KernelSpec | None" = None
    precision: str = "fp32"  # fp32 | tf32 | 3xtf32
    min_cc: tuple[int, int] = (7, 0)
    multithreaded: bool = False  # CPU rungs: uses all cores by default
    cflags: tuple[str, ...] = ()  # CPU rungs: extra compiler flags

    @property
    def is_baseline(self) -> bool:
        return self.source is None

    def for_device(self, compute_capability: tuple[int, int]) -> "KernelSpec":
        """The record that runs on this device: the fallback where the
        architecture-specific path (sm_90a) is missing."""
        if self.arch_specific and not runs_sm90a(compute_capability) and self.fallback is not None:
            return self.fallback
        return self

    def params_for(self, M: int, N: int, K: int, sm_count: int) -> dict:
        """Default parameters at a shape: ``select``'s choice, else ``params``."""
        return dict(self.select(M, N, K, sm_count) if self.select else self.params)

    def shared_bytes(self, params: Params | None = None) -> int:
        return self.smem(self.params if params is None else params) if self.smem else 0

    def defines(self, params: Params | None = None) -> list[str]:
        """The ``-D`` options that carry compile-time parameters."""
        p = self.params if params is None else params
        compiled = {k: v for k, v in p.items() if k not in self.runtime_params}
        if self.derived_defines is not None:
            compiled.update(self.derived_defines(p))
        return [f"-D{k}={v}" for k, v in sorted(compiled.items())]

    def invalid_reason(self, params: Params | None = None) -> str | None:
        return self.check(self.params if params is None else params)
