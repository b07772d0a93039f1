"""The GEMV path of the tops: rungs 17 and 18 (TF32, 3xTF32) and 28 (FP32).

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
entry at such a shape is not read. Pure Python.
"""

from __future__ import annotations

from ..spec import ceil_div

SOURCE = "gemv.cu"
RUNTIME = ("GEMV",)  # read by the driver only: the rung's own build is unchanged


def applies(M: int, N: int) -> bool:
    """Whether the shape is a GEMV: one row or one column of C."""
    return M == 1 or N == 1


def kernel_name(M: int, N: int, sm_count: int, vec: bool = True) -> str:
    """The kernel of cuda_src/gemv.cu that computes C at this shape: gemv_rows for a column of C; for a
    row, gemv_cols_wide (1024 threads a block) while its blocks (one per 32 columns, or 8 when ``vec``
    is off: rows that are not 16-byte multiples) all fit at once, two to an SM (2048 threads), else
    gemv_cols (512 threads, four to an SM)."""
    if N == 1:
        return "gemv_rows"
    return "gemv_cols_wide" if column_blocks(N, vec) <= 2 * sm_count else "gemv_cols"


def column_blocks(N: int, vec: bool) -> int:
    """The blocks of gemv_cols / gemv_cols_wide for N columns: 32 columns each (8 column threads x a float4),
    8 without ``vec``."""
    return ceil_div(N, 32 if vec else 8)


BLOCK = {"gemv_rows": 256, "gemv_cols": 512, "gemv_cols_wide": 1024}  # threads per block of each kernel


def explain(M: int, N: int, sm_count: int) -> str:
    """The footer's and ``info``'s line where the GEMV path runs."""
    name = kernel_name(M, N, sm_count, vec=N % 4 == 0)  # vec: B's rows 16-byte multiples (M == 1 only)
    return (f"a GEMV ({'N' if N == 1 else 'M'} = 1): {name} of cuda_src/{SOURCE}, one launch "
            "that reads the matrix once with FP32 FMAs (as accurate as SGEMM), no tiles and no pre-pass")
