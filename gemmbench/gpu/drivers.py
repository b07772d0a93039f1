"""What one GEMM call launches, per ``KernelSpec.driver``.

Every launch of a call is enqueued by the returned ``gemm(alpha, beta)``, so
the timer measures the whole call, as it does for cuBLAS (which itself runs a
split-K kernel and a reduction for small shapes):

- "single":     sgemm(M, N, K, alpha, A, B, beta, C)
- "split_k":    sgemm(M, N, K, alpha, A, B, beta, C, partials) over SPLITS
                slices of K (grid z), then reduce_splits(M, N, ldp = N, splits,
                alpha, partials, beta, C); with SPLITS == 1 sgemm writes C itself.
- "presplit_a": split_tf32(n, A, A_big, A_small), then
                sgemm(M, N, K, alpha, A_big, A_small, B, beta, C, A): A itself
                last, for the sums 3xTF32 turns into NaN (recomputed in FP32).
- "transpose_a": transpose_pad(M, K, Mp, Kp, A, At) writes At = A^T
                (K x M, zero-padded to Kp x Mp: K rounded up to BK, M to
                BM), then sgemm(M, N, K, alpha, At, B, beta, C).
- "tma":        sgemm(map_A, map_B, M, N, K, alpha, beta, C) with A and B as
                TMA tensor maps passed by value (gemmbench.gpu.tensormap),
                one block per SM when PERSISTENT is set; an operand whose
                rows are not a multiple of 16 bytes is first copied into
                padded rows by copy_rows(rows, cols, src, pitch, dst), both A and B
                by one launch of copy_rows_pair (helper file cuda_src/pad_pair.cu). 3xTF32
                rungs first split A (split_tf32) and take
                sgemm(map_A_big, map_A_small, map_B, M, N, K, alpha, beta, C, ...).
                A rung with SPLITS (17, 18) takes partials, splits after C and,
                split, is followed by reduce_splits as for "split_k"; a 3xTF32
                rung then takes A and B as passed (unpadded), for the sums the
                split turns into NaN (recomputed in FP32).
- "tma16":      the same for the 16-bit rungs (BF16, FP16; element type from
                the record's precision): sgemm(map_A, map_B, M, N, K, alpha,
                beta, C), A in boxes of BM rows x 64 elements and B in boxes
                of 64 x 64, both in the 128-byte swizzle; rows that are not a
                multiple of 8 elements are first copied into padded rows by
                copy_rows16 (both A and B: copy_rows16_pair). With CLUSTER
                (blocks per cluster, set by the kernel's __cluster_dims__ where
                CLUSTER > 1) the grid is whole clusters, and a persistent
                grid no more than the GPU holds at once (gemmbench.gpu.clusters).
                With B3D (rungs 32-33) B's map is 3-D and its box the
                neighbouring 64-column boxes a block loads in one instruction
                (b_box_chunks); N must then be a multiple of 64.
- "any_shape":  rung 28: the pre-passes its parameters and the shape need
                (gemmbench.rungs.any_shape.passes: transpose_pad writes At
                as for "transpose_a", or copy_rows pads A's rows; copy_rows
                pads B's; both: copy_rows_pair, as for "tma"), then
                sgemm(M, N, K, alpha, A or At, lda, B, ldb,
                beta, C, partials, ldp) over SPLITS slices of K (grid z),
                then, when split or when C's rows are padded (ldp > N),
                reduce_splits(M, N, ldp, splits, alpha, partials, beta, C).
- GEMV = 1 (rungs 17, 18, 28 and 30-33 where M == 1 or N == 1, whatever the driver; gemmbench.rungs.gemv): one
                launch of gemv_rows or gemv_cols from the helper file cuda_src/gemv.cu (LaunchContext.helper),
                for 16-bit inputs gemv16_rows or gemv16_cols(_wide) from gemv_bf16.cu or gemv_fp16.cu.
- SMALL = 1 (rungs 17 and 18 at tiny products; gemmbench.rungs.small): one launch of small_gemm(M, N, K,
                alpha, A, B, beta, C) from the helper file cuda_src/small_gemm.cu, a block per 32 x 32 of C.
- "tma16_store": "tma16" plus a map of C (boxes of 64 x 64, the 128-byte
                swizzle) for a TMA-store epilogue: sgemm(map_A, map_B,
                map_C, M, N, K, alpha, beta, C, store_c); store_c = 0 (and
                map_A in map_C's place) where C's rows are not 16-byte
                multiples or C is not 16-byte aligned. With KSPLIT = S > 2
                and CLUSTER 1 (rungs 30-33), a last argument: S FP32 slices of M x N
                (partials), and after it reduce_splits16(M, N, S, parts,
                alpha, partials, beta, C), parts threads to an item of C
                (rungs.half.reduce16_parts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..backend import Gemm, Shape, SkipKernel
from ..precision import precision as precision_class
from ..rungs import any_shape as rung_any_shape
from ..rungs import gemv as rung_gemv
from ..rungs import small as rung_small
from ..rungs.half import b_box_chunks, b_box_rows, reduce16_items, reduce16_parts, split_through_partials
from ..rungs.limits import SMEM_DEFAULT_PER_BLOCK
from ..spec import KernelSpec, Params, ceil_div
from . import tensormap

# Elementwise helpers are grid-stride loops: this many blocks per SM is plenty.
_BLOCKS_PER_SM = 8
ELEMENTWISE_BLOCK = (256, 1, 1)


@dataclass
class LaunchContext:
    """What a driver needs: the compiled module, the shape and the buffers."""

    spec: KernelSpec  # the record that runs on this device (fallback resolved)
    params: Params
    module: object  # the rung's pycuda module (or anything with get_function: built on first use)
    shape: Shape
    A: object  # device pointers
    B: object
    C: object
    stream: object
    sm_count: int
    max_shared_bytes: int  # per block, after opting in
    workspace: Callable[[int], object]  # floats -> device allocation (kept alive by the closure)
    allow_shared: Callable[[object, int], None]  # (function, bytes): opt in beyond the default 48 KiB
    # entry -> where the driver puts each of its parameters (TMA rungs pack their parameter block themselves)
    param_layout: Callable[[str, int], tensormap.ParamLayout] | None = None  # (entry, count)
    # (entry, cluster size, threads, dynamic shared bytes) -> clusters resident at once (clustered rungs)
    max_clusters: Callable[[str, int, int, int], int] | None = None
    # (helper file in cuda_src, entry) -> its kernel, built for this GPU (GEMV, small products, padding pairs)
    helper: Callable[[str, str], object] | None = None

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

    def elementwise_grid(self, n: int, per_block: int = 4 * ELEMENTWISE_BLOCK[0],
                         blocks_per_sm: int = _BLOCKS_PER_SM) -> tuple:
        """``elementwise_grid`` on this GPU."""
        return elementwise_grid(n, self.sm_count, per_block, blocks_per_sm)


def elementwise_grid(n: int, sm_count: int, per_block: int = 4 * ELEMENTWISE_BLOCK[0],
                     blocks_per_sm: int = _BLOCKS_PER_SM) -> tuple:
    """A grid-stride kernel's grid (blocks of ELEMENTWISE_BLOCK): a block per ``per_block`` of the n
    elements (four a thread), at most ``blocks_per_sm`` blocks an SM."""
    return (max(1, min(ceil_div(n, per_block), blocks_per_sm * sm_count)), 1, 1)


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
    reduce = ctx.kernel("reduce_splits", "iiiifPfP")
    reduce_grid = _reduce_grid(ctx, splits)

    def gemm(alpha: float, beta: float) -> None:
        sgemm.prepared_async_call(grid, block, stream, M, N, K, alpha, A, B, beta, C, partials, shared_size=smem)
        reduce.prepared_async_call(reduce_grid, ELEMENTWISE_BLOCK, stream, M, N, N, splits, alpha, partials, beta,
                                   C)
    return gemm


def presplit_a(ctx: LaunchContext) -> Gemm:
    grid, block, smem = ctx.geometry()
    sgemm = ctx.kernel("sgemm", "iiifPPPfPP", smem)
    split = ctx.kernel("split_tf32", "qPPP")
    M, N, K, A, B, C, stream = *_mnk(ctx), ctx.A, ctx.B, ctx.C, ctx.stream
    big, small = ctx.workspace(M * K), ctx.workspace(M * K)
    split_grid = ctx.elementwise_grid(M * K)

    def gemm(alpha: float, beta: float) -> None:
        split.prepared_async_call(split_grid, ELEMENTWISE_BLOCK, stream, M * K, A, big, small)
        sgemm.prepared_async_call(grid, block, stream, M, N, K, alpha, big, small, B, beta, C, A,
                                  shared_size=smem)
    return gemm


def transpose_a(ctx: LaunchContext) -> Gemm:
    grid, block, smem = ctx.geometry()
    sgemm = ctx.kernel("sgemm", "iiifPPfP", smem)
    M, N, K, B, C, stream = *_mnk(ctx), ctx.B, ctx.C, ctx.stream
    launches: list = []
    at, _ = _transposed_a(ctx, launches)

    def gemm(alpha: float, beta: float) -> None:
        for launch in launches:
            launch()
        sgemm.prepared_async_call(grid, block, stream, M, N, K, alpha, at, B, beta, C, shared_size=smem)
    return gemm


def _transposed_a(ctx: LaunchContext, launches: list) -> tuple[object, int]:
    """(At, its row pitch Mp): A^T zero-padded to Kp x Mp (K rounded up to BK,
    M to BM), written by a launch appended to ``launches``."""
    M, K = ctx.shape.M, ctx.shape.K
    Mp, Kp = ceil_div(M, ctx.params["BM"]) * ctx.params["BM"], ceil_div(K, ctx.params["BK"]) * ctx.params["BK"]
    return _transpose_pad(ctx, launches, ctx.A, M, K, Mp, Kp, "M"), Mp


def _transposed_b(ctx: LaunchContext, launches: list) -> tuple[object, int]:
    """(Bt, its row pitch): B^T (N x K, rows padded to 16 bytes with zeros),
    written by a launch appended to ``launches``."""
    N, K = ctx.shape.N, ctx.shape.K
    pitch = tensormap.pitch_for_tma(K)
    return _transpose_pad(ctx, launches, ctx.B, K, N, pitch, N, "K"), pitch


def _transpose_pad(ctx: LaunchContext, launches: list, src, rows: int, cols: int, rows_p: int, cols_p: int,
                   rows_name: str):
    """The transpose of the rows x cols matrix ``src``, zero-padded to cols_p x
    rows_p (a workspace), by transpose_pad in a launch appended to ``launches``:
    64 x 64 tiles, the source's columns along x (no 65535 limit), its rows along y."""
    transpose = ctx.kernel("transpose_pad", "iiiiPP")
    dst = ctx.workspace(cols_p * rows_p)
    grid = (ceil_div(cols_p, 64), ceil_div(rows_p, 64), 1)
    if grid[1] > 65535:
        raise SkipKernel(f"{rows_name} = {rows}: the transpose grid {grid} exceeds CUDA's 65535 limit in y")
    launches.append(lambda: transpose.prepared_async_call(grid, ELEMENTWISE_BLOCK, ctx.stream,
                                                          rows, cols, rows_p, cols_p, src, dst))
    return dst


def any_shape(ctx: LaunchContext) -> Gemm:
    M, N, K, C, stream = *_mnk(ctx), ctx.C, ctx.stream
    reason = rung_any_shape.shape_reason(M, N, ctx.params)
    if reason:
        raise SkipKernel(reason)
    grid, block, smem = ctx.geometry()
    splits = int(ctx.params["SPLITS"])
    if grid[2] != splits:
        raise SkipKernel(f"grid z {grid[2]} is not SPLITS={splits}")
    sgemm = ctx.kernel("sgemm", "iiifPiPifPPi", smem)
    done = rung_any_shape.passes(M, N, K, ctx.params)
    launches: list = []
    if done.transpose_a:
        a, lda = _transposed_a(ctx, launches)
        b, ldb = _padded_operand(ctx, ctx.B, K, N, launches) if done.pad_b else (ctx.B, N)
    else:
        (a, lda), (b, ldb) = _padded_operands(ctx, launches, (ctx.A, M, K), (ctx.B, K, N),
                                              wanted=(done.pad_a, done.pad_b))
    ldp = tensormap.pitch_for_tma(N, 4) if done.pad_c else N
    partials = ctx.workspace(splits * M * ldp) if done.reduce else 0
    reduce = ctx.kernel("reduce_splits", "iiiifPfP") if done.reduce else None
    reduce_grid = _reduce_grid(ctx, splits, ldp)

    def gemm(alpha: float, beta: float) -> None:
        for launch in launches:
            launch()
        sgemm.prepared_async_call(grid, block, stream, M, N, K, alpha, a, lda, b, ldb, beta, C, partials, ldp,
                                  shared_size=smem)
        if reduce is not None:
            reduce.prepared_async_call(reduce_grid, ELEMENTWISE_BLOCK, stream, M, N, ldp, splits, alpha,
                                       partials, beta, C)
    return gemm


_DEEP_SPLITS = 32  # split_k.cuh's kDeepSplits: from here on a reduce_splits block takes 32 elements at a time


_SCALAR_REDUCE_PER_THREAD = 2  # elements per thread where reduce_splits goes one element at a time
_SCALAR_REDUCE_BLOCKS_PER_SM = 32


def _reduce_grid(ctx: LaunchContext, splits: int, ldp: int | None = None) -> tuple:
    """reduce_splits' grid: grid-stride over the elements, or, for many
    splits, a block per 32 elements (at most 8 blocks per SM's worth). Where
    its loop takes four floats a thread (C as a flat float4 array, or padded
    rows, ldp % 4 == 0: M*ldp floats), the usual grid; where it goes one
    element at a time (ldp == N, M*N not a multiple of 4), two elements per
    thread: each thread's chain of split loads waits on memory, so more
    threads in flight pay (H100, rung 28 at 333x555x777 in 8 splits, when its
    padded rows went that way: 57.8% of SGEMM against 54.7% with the grid of
    the float4 loop)."""
    M, N = ctx.shape.M, ctx.shape.N
    if splits >= _DEEP_SPLITS:
        return ctx.elementwise_grid(M * N, per_block=32)
    if ldp is not None and ldp != N and ldp % 4 == 0:
        return ctx.elementwise_grid(M * ldp)
    if (M * N) % 4:
        return ctx.elementwise_grid(M * N, _SCALAR_REDUCE_PER_THREAD * ELEMENTWISE_BLOCK[0],
                                    _SCALAR_REDUCE_BLOCKS_PER_SM)
    return ctx.elementwise_grid(M * N)


def launched_grid(grid: tuple[int, int, int], params: Params, sm_count: int) -> tuple[int, int, int]:
    """The grid a call really launches: a persistent rung (PERSISTENT=1) runs
    at most one block per SM, each looping over the tiles of ``grid``."""
    return (min(grid[0], sm_count), 1, 1) if params.get("PERSISTENT") else grid


def tma_b_map(M: int, N: int, K: int, p: Params, pitch: int) -> tensormap.MatrixMap:
    """The map of the TMA rungs' B: boxes of BK rows x 32 columns (128 bytes, the swizzle span), with B3D
    (rung 17) viewed as 32-column chunks so that one load takes a K tile's BN / 32 boxes; swapped (SWAP_AB,
    rung 18), the register operand A in boxes of 32 rows x BK = 32 columns (128 bytes, the same size)."""
    if p.get("SWAP_AB"):
        return tensormap.matrix_map(M, K, 32, p["BK"], swizzle=128, pitch=pitch)
    return tensormap.matrix_map(K, N, p["BK"], 32, swizzle=128, pitch=pitch,
                                box_chunks=p["BN"] // 32 if p.get("B3D") else 1)


def tma(ctx: LaunchContext) -> Gemm:
    grid, block, smem = ctx.geometry()
    grid = launched_grid(grid, ctx.params, ctx.sm_count)
    M, N, K = _mnk(ctx)
    p = ctx.params
    stream, launches, C = ctx.stream, [], ctx.C
    swap = bool(p.get("SWAP_AB"))
    if swap:  # C^T = B^T A^T: B^T (a pre-pass) is the shared-memory operand, A the register operand
        a, a_pitch = _transposed_b(ctx, launches)
        b, b_pitch = _padded_operand(ctx, ctx.A, M, K, launches)
        rows, cols = N, M  # the swapped problem's C
    else:
        (a, a_pitch), (b, b_pitch) = _padded_operands(ctx, launches, (ctx.A, M, K), (ctx.B, K, N))
        rows, cols = M, N
    a_sources = [a]
    if ctx.spec.precision == "3xtf32":  # A (or B^T) = big + small, split once per call, both loaded by TMA
        a_sources = [ctx.workspace(rows * a_pitch), ctx.workspace(rows * a_pitch)]
        split = ctx.kernel("split_tf32", "qPPP")
        split_grid = ctx.elementwise_grid(rows * a_pitch)
        launches.append(lambda: split.prepared_async_call(split_grid, ELEMENTWISE_BLOCK, stream, rows * a_pitch,
                                                          a, *a_sources))
    # A: BM rows x BK columns per box, swizzled as wgmma reads it
    a_map = tensormap.matrix_map(rows, K, p["BM"], p["BK"], swizzle=4 * p["BK"], pitch=a_pitch)
    b_map = tma_b_map(M, N, K, p, b_pitch)
    formats = "T" * (len(a_sources) + 1) + "iiiffP"  # the maps, then M, N, K, alpha, beta, C
    values = [rows, cols, K, 1.0, 0.0, int(ctx.C)]
    splits = int(p.get("SPLITS", 1))
    partials = ctx.workspace(splits * M * N) if splits > 1 else 0
    if "SPLITS" in p:  # rungs 17 and 18: then partials, splits
        formats += "Pi"
        values += [int(partials), splits]
    if ctx.spec.precision == "3xtf32":  # then A and B as passed, for the sums the split turns into NaN
        formats += "PP"
        values += [int(ctx.A), int(ctx.B)]
    try:
        maps = [tensormap.encode(a_map, int(x)) for x in a_sources]
        maps.append(tensormap.encode(b_map, int(b)))
        layout = ctx.param_layout("sgemm", len(formats))
    except tensormap.TensorMapError as exc:
        raise SkipKernel(str(exc)) from None
    params = tensormap.pack_params(layout, formats, (*maps, *values))
    alpha_index = len(maps) + 3
    sgemm = ctx.kernel("sgemm", f"{layout.size}s", smem)
    reduce = ctx.kernel("reduce_splits", "iiiifPfP") if splits > 1 else None
    reduce_grid = _reduce_grid(ctx, splits)

    def gemm(alpha: float, beta: float) -> None:
        for launch in launches:
            launch()
        tensormap.set_scalar(params, layout, alpha_index, "f", alpha)
        tensormap.set_scalar(params, layout, alpha_index + 1, "f", beta)
        sgemm.prepared_async_call(grid, block, stream, bytes(params), shared_size=smem)
        if reduce is not None:
            reduce.prepared_async_call(reduce_grid, ELEMENTWISE_BLOCK, stream, M, N, N, splits, alpha, partials,
                                       beta, C)
    return gemm


def tma16(ctx: LaunchContext, store_c: bool = False) -> Gemm:
    grid, block, smem = ctx.geometry()
    grid = launched_grid(grid, ctx.params, ctx.sm_count)
    cluster = ctx.params.get("CLUSTER", 1)
    if cluster > 1:  # whole clusters, and for a persistent grid no more than are resident at once
        fit = grid[0] // cluster
        if ctx.params.get("PERSISTENT") and ctx.max_clusters is not None:
            try:
                fit = min(fit, ctx.max_clusters("sgemm", cluster, block[0], smem))
            except tensormap.TensorMapError as exc:
                raise SkipKernel(str(exc)) from None
        if fit < 1:
            raise SkipKernel(f"no cluster of {cluster} blocks of {block[0]} threads and {smem} bytes fits")
        grid = (fit * cluster, 1, 1)
    M, N, K = _mnk(ctx)
    element = precision_class(ctx.spec.precision).inputs
    launches = []
    (a, a_pitch), (b, b_pitch) = _padded_operands(ctx, launches, (ctx.A, M, K), (ctx.B, K, N), element_bytes=2)
    splits = ctx.params.get("KSPLIT", 1)  # K in that many parts; without clusters, their sums through FP32 partials
    partials = ctx.workspace(splits * M * N) if split_through_partials(ctx.params) else None
    try:
        # A's box: the tile's rows, or M where C's rows fit one tile (the kernel's half_a_rows: no zero rows to fill)
        a_rows = min(M, ctx.params["BM"])
        maps = [tensormap.encode(tensormap.matrix_map(M, K, a_rows, 64, 128, a_pitch, element), int(a)),
                tensormap.encode(tensormap.matrix_map(K, N, b_box_rows(ctx.params), 64, 128, b_pitch, element,
                                                      box_chunks=b_box_chunks(ctx.params)), int(b))]
        if store_c:  # C in boxes of 64 x 64 when TMA can write it (16-byte rows); else the kernel stores it itself
            c_ok = tensormap.pitch_for_tma(N, 2) == N and int(ctx.C) % 16 == 0
            maps.append(tensormap.encode(tensormap.matrix_map(M, N, 64, 64, 128, N, element), int(ctx.C))
                        if c_ok else maps[0])
        # the maps, M, N, K, alpha, beta, C[, store_c][, partials]
        formats = "T" * len(maps) + "iiiffP" + ("i" if store_c else "") + ("P" if partials is not None else "")
        layout = ctx.param_layout("sgemm", len(formats))
    except tensormap.TensorMapError as exc:
        raise SkipKernel(str(exc)) from None
    values = (*maps, M, N, K, 1.0, 0.0, int(ctx.C)) + ((int(c_ok),) if store_c else ()) \
        + ((int(partials),) if partials is not None else ())
    reduce = parts = reduce_grid = None  # the second kernel, only where the sums go through partials
    if partials is not None:
        reduce = ctx.kernel("reduce_splits16", "iiiifPfP")
        items = reduce16_items(M, N)
        parts = reduce16_parts(items, splits, ctx.sm_count)  # threads per item
        reduce_grid = ctx.elementwise_grid(items * parts, ELEMENTWISE_BLOCK[0])
    params = tensormap.pack_params(layout, formats, values)
    sgemm, stream = ctx.kernel("sgemm", f"{layout.size}s", smem), ctx.stream
    alpha_index = len(maps) + 3

    def gemm(alpha: float, beta: float) -> None:
        for launch in launches:
            launch()
        tensormap.set_scalar(params, layout, alpha_index, "f", alpha)
        tensormap.set_scalar(params, layout, alpha_index + 1, "f", beta)
        sgemm.prepared_async_call(grid, block, stream, bytes(params), shared_size=smem)
        if reduce is not None:
            reduce.prepared_async_call(reduce_grid, ELEMENTWISE_BLOCK, stream, M, N, splits, parts, alpha, partials,
                                       beta, ctx.C)
    return gemm


PAD_PAIR_SOURCE = "pad_pair.cu"  # the helper file of copy_rows_pair and copy_rows16_pair


def _padding(ctx: LaunchContext, rows: int, cols: int, element_bytes: int) -> tuple[object, int, tuple] | None:
    """(padded workspace, its row pitch, the copy's grid) for a rows x cols matrix whose rows are not a
    multiple of 16 bytes; None where they are."""
    pitch = tensormap.pitch_for_tma(cols, element_bytes)
    if pitch == cols:
        return None
    padded = ctx.workspace(-(-rows * pitch * element_bytes // 4))  # the workspace counts 4-byte words
    return padded, pitch, ctx.elementwise_grid(ceil_div(rows * cols * element_bytes, 4))  # a thread per 16 bytes


def _padded_operands(ctx: LaunchContext, launches: list, a: tuple, b: tuple, element_bytes: int = 4,
                     wanted: tuple[bool, bool] = (True, True)) -> list[tuple[object, int]]:
    """``_padded_operand`` of A and of B, each given as (matrix, rows, cols), for those ``wanted`` (the others
    as they are); where both need a copy, one launch of copy_rows_pair (copy_rows16_pair for 16-bit elements;
    cuda_src/pad_pair.cu) makes the two: the copies are small, so a second launch costs more than their bytes."""
    both = all(wanted) and all(tensormap.pitch_for_tma(cols, element_bytes) != cols for _, _, cols in (a, b))
    if not both or ctx.helper is None:
        return [_padded_operand(ctx, matrix, rows, cols, launches, element_bytes) if want else (matrix, cols)
                for (matrix, rows, cols), want in zip((a, b), wanted)]
    plans = [_padding(ctx, rows, cols, element_bytes) for _, rows, cols in (a, b)]
    pair = ctx.helper(PAD_PAIR_SOURCE, "copy_rows_pair" if element_bytes == 4 else "copy_rows16_pair")
    pair.prepare("iiPiPiiPiP")
    grid = (max(copy_grid[0] for _, _, copy_grid in plans), 2, 1)  # y: 0 copies A, 1 copies B
    args = [value for (matrix, rows, cols), (padded, pitch, _) in zip((a, b), plans)
            for value in (rows, cols, matrix, pitch, padded)]
    launches.append(lambda: pair.prepared_async_call(grid, ELEMENTWISE_BLOCK, ctx.stream, *args))
    return [(padded, pitch) for padded, pitch, _ in plans]


def _padded_operand(ctx: LaunchContext, matrix, rows: int, cols: int, launches: list,
                    element_bytes: int = 4) -> tuple[object, int]:
    """(device matrix, row pitch) whose rows are a multiple of 16 bytes (what a
    tensor map and a 16-byte cp.async need): the matrix itself, or a padded
    copy made by a launch appended to ``launches`` (so each call pays for it)."""
    plan = _padding(ctx, rows, cols, element_bytes)
    if plan is None:
        return matrix, cols
    padded, pitch, copy_grid = plan
    copy = ctx.kernel("copy_rows" if element_bytes == 4 else "copy_rows16", "iiPiP")
    launches.append(lambda: copy.prepared_async_call(copy_grid, ELEMENTWISE_BLOCK, ctx.stream,
                                                     rows, cols, matrix, pitch, padded))
    return padded, pitch


DRIVERS: dict[str, Callable[[LaunchContext], Gemm]] = {
    "single": single, "split_k": split_k, "presplit_a": presplit_a, "transpose_a": transpose_a,
    "any_shape": any_shape, "tma": tma,
    "tma16": tma16, "tma16_store": lambda ctx: tma16(ctx, store_c=True)}


def _mnk(ctx: LaunchContext) -> tuple[int, int, int]:
    return ctx.shape.M, ctx.shape.N, ctx.shape.K


def helper_source(params: Params, precision: str = "fp32") -> str | None:
    """The cuda_src helper file whose kernel a call runs in place of the rung's own (the one-launch GEMV and
    small-product paths: ``build`` then never loads the rung's module), or None."""
    if params.get("GEMV"):
        return rung_gemv.source(precision)
    if params.get("SMALL"):
        return rung_small.SOURCE
    return None


def build(ctx: LaunchContext) -> Gemm:
    helper = helper_source(ctx.params, ctx.spec.precision)  # which path runs (the --verbose line reads it too)
    if helper is not None:
        return small(ctx) if helper == rung_small.SOURCE else gemv(ctx)
    return DRIVERS[ctx.spec.driver](ctx)


def gemv(ctx: LaunchContext) -> Gemm:
    """GEMV = 1 (rungs 17, 18, 28 and 30-33 where M == 1 or N == 1: gemmbench.rungs.gemv): one launch of gemv_rows
    (N == 1: a block of 256 per row of A) or gemv_cols / gemv_cols_wide (M == 1: a block of 512 or 1024 per
    32 columns of B, 8 where B's rows are not 16-byte multiples), float4 loads where the matrix allows them; for
    16-bit inputs gemv16_rows (a warp per row, 8 rows a block) or gemv16_cols / gemv16_cols_wide (32 columns a
    block either way), 16-byte loads of 8 values where the matrix allows them."""
    M, N, K = _mnk(ctx)
    if not rung_gemv.applies(M, N):
        raise SkipKernel(f"GEMV = 1 needs M == 1 or N == 1, not {M}x{N}x{K}")
    precision = ctx.spec.precision
    per_load = 8 if precision in rung_gemv.SOURCES_16 else 4  # elements in a 16-byte load
    aligned = (int(ctx.A) | int(ctx.B)) % 16 == 0
    if N == 1:  # C = A x, x = B's one column: gemv_rows(M, K, alpha, A, x, beta, C, vec)
        length, vec = M, int(K % per_load == 0 and aligned)
        rows = rung_gemv.ROWS_16 if per_load == 8 else 1  # rows of A a block takes at a time
        grid = (min(ceil_div(M, rows), 32 * ctx.sm_count), 1, 1)
    else:  # C = x B, x = A's one row: gemv_cols(N, K, alpha, x, B, beta, C, vec)
        length, vec = N, int(N % per_load == 0 and aligned)
        grid = (rung_gemv.column_blocks(N, bool(vec), precision), 1, 1)
    name = rung_gemv.kernel_name(M, N, ctx.sm_count, bool(vec), precision)
    kernel = ctx.helper(rung_gemv.source(precision), name)
    kernel.prepare("iifPPfPi")
    block = (rung_gemv.BLOCK[name], 1, 1)

    def call(alpha: float, beta: float) -> None:
        kernel.prepared_async_call(grid, block, ctx.stream, length, K, alpha, ctx.A, ctx.B, beta, ctx.C, vec)
    return call


def small(ctx: LaunchContext) -> Gemm:
    """SMALL = 1 (rungs 17 and 18 at tiny products: gemmbench.rungs.small): one launch of small_gemm, a
    block of 256 per 32 x 32 tile of C, on A and B as they are (any shape, any alignment)."""
    M, N, K = _mnk(ctx)
    kernel = ctx.helper(rung_small.SOURCE, rung_small.KERNEL)
    kernel.prepare("iiifPPfP")
    grid = (ceil_div(N, rung_small.TILE), ceil_div(M, rung_small.TILE), 1)

    def call(alpha: float, beta: float) -> None:
        kernel.prepared_async_call(grid, ELEMENTWISE_BLOCK, ctx.stream, M, N, K, alpha, ctx.A, ctx.B, beta, ctx.C)
    return call
