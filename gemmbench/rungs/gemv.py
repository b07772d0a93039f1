"""The GEMV path of the tops: rungs 17 and 18 (TF32, 3xTF32), 28 (FP32) and 30-33 (BF16, FP16).

Where M == 1 or N == 1 the product is a matrix-vector product: every
element of the matrix is used once, so its time is the time to read the
matrix once. A tiled kernel there spends most of each tile on rows or
columns that are not there (15/16 of rung 17's thinnest, 16-row tile), and
rungs 17 and 18 first run pre-passes (row-pad copies, the split of A).
So at those shapes their per-shape choice (gemmbench.rungs.tma_choice, and
rung 28's, gemmbench.rungs.any_shape) adds ``GEMV = 1``: the driver launches
``gemv_rows`` (N == 1) or ``gemv_cols``/``gemv_cols_wide`` (M == 1) of ``cuda_src/gemv.cu``,
one launch, FP32 FMAs (as accurate as SGEMM: never less accurate than the
rung's own precision), the matrix streamed once. It is a decision by the
shape, not by measurement: no tile is tried there, and a shipped table's
entry at such a shape is not read. Rungs 30-33 run ``gemv16_rows``,
``gemv16_cols`` or ``gemv16_cols_wide`` of ``cuda_src/gemv_bf16.cu`` or
``gemv_fp16.cu`` (gemv16.cuh: FP32 FMAs on the 16-bit values, C rounded once).
Pure Python.
"""

from __future__ import annotations

from ..spec import ceil_div

SOURCE = "gemv.cu"
SOURCES_16 = {"bf16": "gemv_bf16.cu", "fp16": "gemv_fp16.cu"}  # gemv16.cuh built for each 16-bit type
RUNTIME = ("GEMV",)  # read by the driver only: the rung's own build is unchanged
COLUMNS_16 = 32  # gemv16_cols: columns a block (4 column threads x 8 16-bit values)


def source(precision: str) -> str:
    """The helper file of a rung's GEMV path: gemv.cu for the 32-bit inputs, gemv_bf16.cu or gemv_fp16.cu."""
    return SOURCES_16.get(precision, SOURCE)


def applies(M: int, N: int) -> bool:
    """Whether the shape is a GEMV: one row or one column of C."""
    return M == 1 or N == 1


def kernel_name(M: int, N: int, sm_count: int, vec: bool = True, precision: str = "fp32") -> str:
    """The kernel of cuda_src/gemv.cu that computes C at this shape: gemv_rows for a column of C; for a
    row, gemv_cols_wide (1024 threads a block) while its blocks (one per 32 columns, or 8 when ``vec``
    is off: rows that are not 16-byte multiples) all fit at once, two to an SM (2048 threads), else
    gemv_cols (512 threads, four to an SM). For 16-bit inputs gemv16_rows, gemv16_cols_wide or
    gemv16_cols by the same rule (32 columns a block)."""
    if precision in SOURCES_16:
        if N == 1:
            return "gemv16_rows"
        return "gemv16_cols_wide" if column_blocks(N, vec, precision) <= 2 * sm_count else "gemv16_cols"
    if N == 1:
        return "gemv_rows"
    return "gemv_cols_wide" if column_blocks(N, vec) <= 2 * sm_count else "gemv_cols"


def column_blocks(N: int, vec: bool, precision: str = "fp32") -> int:
    """The blocks of gemv_cols / gemv_cols_wide for N columns: 32 columns each (8 column threads x a float4),
    8 without ``vec``; of gemv16_cols / gemv16_cols_wide: 32 (4 column threads x 8 values), ``vec`` or not."""
    if precision in SOURCES_16:
        return ceil_div(N, COLUMNS_16)
    return ceil_div(N, 32 if vec else 8)


# threads per block of each kernel (gemv16_rows: a warp per row of A, 8 rows a block)
BLOCK = {"gemv_rows": 256, "gemv_cols": 512, "gemv_cols_wide": 1024, "gemv16_rows": 256, "gemv16_cols": 512,
         "gemv16_cols_wide": 1024}
ROWS_16 = BLOCK["gemv16_rows"] // 32  # rows of A a block of gemv16_rows takes at a time


def explain(M: int, N: int, sm_count: int, precision: str = "fp32") -> str:
    """The footer's and ``info``'s line where the GEMV path runs."""
    if precision in SOURCES_16:
        name = kernel_name(M, N, sm_count, precision=precision)
        return (f"a GEMV ({'N' if N == 1 else 'M'} = 1): {name} of "
                f"cuda_src/{source(precision)}, one launch that reads the matrix once, FP32 FMAs on the 16-bit "
                "values and C rounded once, no tiles (a 64 x 64 tile would spend 63/64 of its work past the one "
                "row or column)")
    name = kernel_name(M, N, sm_count, vec=N % 4 == 0)  # vec: B's rows 16-byte multiples (M == 1 only)
    return (f"a GEMV ({'N' if N == 1 else 'M'} = 1): {name} of cuda_src/{SOURCE}, one launch "
            "that reads the matrix once with FP32 FMAs (as accurate as SGEMM), no tiles and no pre-pass")
