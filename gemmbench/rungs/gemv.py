"""The GEMV path of the tops: rungs 17 and 18 (TF32, 3xTF32) and 28 (FP32).

Where M == 1 or N == 1 the product is a matrix-vector product: every
element of the matrix is used once, so its time is the time to read the
matrix once. A tiled kernel there spends most of each tile on rows or
columns that are not there (15/16 of rung 17's thinnest, 16-row tile), and
rungs 17 and 18 first run pre-passes (row-pad copies, the split of A).
So at those shapes their per-shape choice (gemmbench.rungs.tma_choice, and
rung 28's, gemmbench.rungs.any_shape) adds ``GEMV = 1``: the driver launches
``gemv_rows`` (N == 1) or ``gemv_cols`` (M == 1) of ``cuda_src/gemv.cu``,
one launch, FP32 FMAs (as accurate as SGEMM: never less accurate than the
rung's own precision), the matrix streamed once. It is a decision by the
shape, not by measurement: no tile is tried there, and a shipped table's
entry at such a shape is not read. Pure Python.
"""

from __future__ import annotations

SOURCE = "gemv.cu"
RUNTIME = ("GEMV",)  # read by the driver only: the rung's own build is unchanged


def applies(M: int, N: int) -> bool:
    """Whether the shape is a GEMV: one row or one column of C."""
    return M == 1 or N == 1


def kernel_name(M: int, N: int) -> str:
    """The kernel of cuda_src/gemv.cu that computes C at this shape."""
    return "gemv_rows" if N == 1 else "gemv_cols"


def explain(M: int, N: int) -> str:
    """The footer's and ``info``'s line where the GEMV path runs."""
    return (f"a GEMV ({'N' if N == 1 else 'M'} = 1): {kernel_name(M, N)} of cuda_src/{SOURCE}, one launch "
            "that reads the matrix once with FP32 FMAs (as accurate as SGEMM), no tiles and no pre-pass")
