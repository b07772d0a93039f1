"""The small-product path of rungs 17 and 18 (the TF32 and 3xTF32 tops).

Where M x N x K is tiny, a call's time is its launches: rung 18 at 3x5x7
runs four (row-pad copies of A and B for TMA, the split of A, the tiles),
rung 17 three, where cuBLAS runs one. So at those shapes their per-shape
choice (gemmbench.rungs.tma_choice) adds ``SMALL = 1``: the driver launches
``small_gemm`` of ``cuda_src/small_gemm.cu`` once, on A and B as they are,
FP32 FMAs (as accurate as SGEMM: never less accurate than the rung's own
precision). Where it applies was measured (the limits below); a shipped
table's entry at such a shape is not read. Pure Python.
"""

from __future__ import annotations

SOURCE = "small_gemm.cu"
KERNEL = "small_gemm"
TILE = 32  # small_gemm.cu's kSmallTile: a block per 32 x 32 tile of C
RUNTIME = ("SMALL",)  # read by the driver only: the rung's own build is unchanged

# Where the path pays, measured on an H100 (rungs 17 and 18 at 24 shapes from 3x5x7 to 512x512x32, the path
# against the rung's own choice, each against cuBLAS in the same rounds; README: "Rungs 17 and 18 compute
# small products in one launch"):
# it won wherever the rung runs a pre-pass, the product is at most 2^23 multiply-adds and K at most 256 (rung
# 18 at 200x200x201: 82% of SGEMM against 46%; 256x256x64: 109% against 51%); with a longer K its few blocks
# wait on memory step after step (64x64x512: 51% against 71%; 32x32x1024: 28% against 93%), and past 2^23
# the tensor cores win (256^3: 88% against 92%). Without a pre-pass the rung is one launch too, and the path
# paid only where K is at most 64 (rung 17 at 256x256x64: 100% of cuBLAS TF32 against 90%; 128^3: 78%
# against 106%).
MAX_PRODUCT = 1 << 23
MAX_K = 256
MAX_K_WITHOUT_PREPASS = 64


def applies(M: int, N: int, K: int, prepasses: bool) -> bool:
    """Whether one launch of small_gemm beats the rung at this shape; ``prepasses``: whether the rung's
    own call launches a pre-pass (a row-pad copy, a split or a transpose) before its tiles."""
    return M * N * K <= MAX_PRODUCT and K <= (MAX_K if prepasses else MAX_K_WITHOUT_PREPASS)


def explain(M: int, N: int, K: int) -> str:
    """The footer's and ``info``'s line where the small path runs."""
    return (f"a small product ({M * N * K} multiply-adds, K = {K}): {KERNEL} of cuda_src/{SOURCE}, one launch "
            "of 32x32 tiles with FP32 FMAs (as accurate as SGEMM) in place of the rung's pre-passes and tiles")
