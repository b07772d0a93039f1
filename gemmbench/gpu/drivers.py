"""What one GEMM call launches, per ``KernelSpec.driver``.

Every launch of a call is enqueued by the returned ``gemm(alpha, beta)``, so
the timer measures the whole call, as it does for cuBLAS (which itself runs a
split-K kernel and a reduction for small shapes):

- "single":     sgemm(M, N, K, alpha, A, B, beta, C)
- "split_k":    sgemm(M, N, K, alpha, A, B, beta, C, partials) over SPLITS
                slices of K (grid z), then reduce_splits(M, N, splits, alpha,
                partials, beta, C); with SPLITS == 1 sgemm writes C itself.
- "presplit_a": split_tf32(n, A, A_big, A_small), then
                sgemm(M, N, K, alpha, A_big, A_small, B, beta, C).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..backend import Gemm, Shape, SkipKernel
from ..rungs.limits import SMEM_DEFAULT_PER_BLOCK
from ..spec import KernelSpec, Params, ceil_div

# Elementwise helpers are grid-stride loops: this many blocks per SM is plenty.
_BLOCKS_PER_SM = 8
_ELEMENTWISE_BLOCK = (256, 1, 1)


@dataclass
class LaunchContext:
    """What a driver needs: the compiled module, the shape and the buffers."""

    spec: KernelSpec  # the record that runs on this device (fallback resolved)
    params: Params
    module: object  # pycuda module
    shape: Shape
    A: object  # device pointers
    B: object
    C: object
    stream: object
    sm_count: int
    max_shared_bytes: int  # per block, after opting in
    workspace: Callable[[int], object]  # floats -> device allocation (kept alive by the closure)
    allow_shared: Callable[[object, int], None]  # (function, bytes): opt in beyond the default 48 KiB

    def kernel(self, name: str, arg_format: str, shared_bytes: int = 0):
        function = self.module.get_function(name)
        function.prepare(arg_format)
        if shared_bytes > self.max_shared_bytes:
            raise SkipKernel(f"{shared_bytes} bytes of shared memory per block; the GPU allows "
                             f"{self.max_shared_bytes}")
        if shared_bytes > SMEM_DEFAULT_PER_BLOCK:  # beyond the default limit a kernel must opt in
            self.allow_shared(function, shared_bytes)
        return function

    def geometry(self) -> tuple[tuple, tuple, int]:
        M, N, K = self.shape.M, self.shape.N, self.shape.K
        grid, block = self.spec.grid(M, N, K, self.params), self.spec.block(self.params)
        if grid[1] > 65535 or grid[2] > 65535:
            raise SkipKernel(f"grid {grid} exceeds CUDA's 65535 limit in y/z")
        return grid, block, self.spec.shared_bytes(self.params)

    def elementwise_grid(self, n: int) -> tuple:
        return (max(1, min(ceil_div(n, 4 * _ELEMENTWISE_BLOCK[0]), _BLOCKS_PER_SM * self.sm_count)), 1, 1)


def single(ctx: LaunchContext) -> Gemm:
    grid, block, smem = ctx.geometry()
    sgemm = ctx.kernel("sgemm", "iiifPPfP", smem)
    M, N, K, A, B, C, stream = *_mnk(ctx), ctx.A, ctx.B, ctx.C, ctx.stream
    return lambda alpha, beta: sgemm.prepared_async_call(grid, block, stream, M, N, K, alpha, A, B, beta, C,
                                                         shared_size=smem)


def split_k(ctx: LaunchContext) -> Gemm:
    grid, block, smem = ctx.geometry()
    splits = int(ctx.params["SPLITS"])
    if grid[2] != splits:
        raise SkipKernel(f"grid z {grid[2]} is not SPLITS={splits}")
    sgemm = ctx.kernel("sgemm", "iiifPPfPP", smem)
    M, N, K, A, B, C, stream = *_mnk(ctx), ctx.A, ctx.B, ctx.C, ctx.stream
    if splits == 1:
        return lambda alpha, beta: sgemm.prepared_async_call(grid, block, stream, M, N, K, alpha, A, B, beta, C,
                                                             0, shared_size=smem)
    partials = ctx.workspace(splits * M * N)
    reduce = ctx.kernel("reduce_splits", "iiifPfP")
    reduce_grid = ctx.elementwise_grid(M * N)

    def gemm(alpha: float, beta: float) -> None:
        sgemm.prepared_async_call(grid, block, stream, M, N, K, alpha, A, B, beta, C, partials, shared_size=smem)
        reduce.prepared_async_call(reduce_grid, _ELEMENTWISE_BLOCK, stream, M, N, splits, alpha, partials, beta, C)
    return gemm


def presplit_a(ctx: LaunchContext) -> Gemm:
    grid, block, smem = ctx.geometry()
    sgemm = ctx.kernel("sgemm", "iiifPPPfP", smem)
    split = ctx.kernel("split_tf32", "qPPP")
    M, N, K, A, B, C, stream = *_mnk(ctx), ctx.A, ctx.B, ctx.C, ctx.stream
    big, small = ctx.workspace(M * K), ctx.workspace(M * K)
    split_grid = ctx.elementwise_grid(M * K)

    def gemm(alpha: float, beta: float) -> None:
        split.prepared_async_call(split_grid, _ELEMENTWISE_BLOCK, stream, M * K, A, big, small)
        sgemm.prepared_async_call(grid, block, stream, M, N, K, alpha, big, small, B, beta, C, shared_size=smem)
    return gemm


DRIVERS: dict[str, Callable[[LaunchContext], Gemm]] = {
    "single": single, "split_k": split_k, "presplit_a": presplit_a}


def _mnk(ctx: LaunchContext) -> tuple[int, int, int]:
    return ctx.shape.M, ctx.shape.N, ctx.shape.K


def build(ctx: LaunchContext) -> Gemm:
    return DRIVERS[ctx.spec.driver](ctx)
