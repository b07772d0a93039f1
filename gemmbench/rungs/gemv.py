"""The GEMV path of rungs 17 and 18 (the TF32 and 3xTF32 tops).

Where M == 1 or N == 1 the product is a matrix-vector product: every
element of the matrix is used once, so its time is the time to read the
matrix once. A tiled kernel there spends most of each tile on rows or
columns that are not there (15/16 of rung 17's thinnest, 16-row tile), and
rungs 17 and 18 first run pre-passes (row-pad copies, the split of A).
So at those shapes the rungs take ``GEMV = 1``: the driver launches
``gemv_rows`` (N == 1) or ``gemv_cols`` (M == 1) of ``cuda_src/gemv.cu``,
one launch, FP32 FMAs (as accurate as SGEMM: never less accurate than the
rung's own precision), the matrix streamed once. It is a decision by the
shape, not by measurement: no tile is tried there, and a shipped table's
entry at such a shape is not read. Pure Python.
"""

from __future__ import annotations

from typing import Callable

from ..spec import Params

SOURCE = "gemv.cu"
RUNTIME = ("GEMV",)  # read by the driver only: the rung's own build is unchanged


def applies(M: int, N: int) -> bool:
    """Whether the shape is a GEMV: one row or one column of C."""
    return M == 1 or N == 1


def kernel_name(M: int, N: int) -> str:
    """The kernel of cuda_src/gemv.cu that computes C at this shape."""
    return "gemv_rows" if N == 1 else "gemv_cols"


def with_gemv(select: Callable[[int, int, int, int], Params]) -> Callable[[int, int, int, int], dict]:
    """A rung's per-shape ``select`` (or shape-set candidates' source), with GEMV = 1 where the shape is a GEMV.
    The other parameters stay the rung's choice, so its grid and shared memory stay defined."""
    def chosen(M: int, N: int, K: int, sm_count: int) -> dict:
        p = dict(select(M, N, K, sm_count))
        return {**p, "GEMV": 1} if applies(M, N) else p
    return chosen


def gemv_candidates(candidates: Callable[[int, int, int, int], list], select) -> Callable[[int, int, int, int], list]:
    """What a shape-set tune tries: at a GEMV shape only the GEMV path (``select``'s choice), else ``candidates``."""
    def tried(M: int, N: int, K: int, sm_count: int) -> list:
        return [with_gemv(select)(M, N, K, sm_count)] if applies(M, N) else candidates(M, N, K, sm_count)
    return tried


def with_gemv_explain(explain: Callable[[int, int, int, int, Params], str]):
    """A rung's ``explain``, saying so where the GEMV path runs."""
    def line(M: int, N: int, K: int, sm_count: int, p: Params) -> str:
        if p.get("GEMV"):
            return (f"a GEMV ({'N' if N == 1 else 'M'} = 1): {kernel_name(M, N)} of cuda_src/{SOURCE}, one launch "
                    "that reads the matrix once with FP32 FMAs (as accurate as SGEMM), no tiles and no pre-pass")
        return explain(M, N, K, sm_count, p)
    return line
