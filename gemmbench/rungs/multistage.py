"""Parameters of the multistage FP32 rungs (12, 13 and 19) and the per-shape
choices of rungs 13 and 19.

Rung 12 (``cuda_src/12_multistage.cu``), rung 13 (``13_shape_adaptive.cu``,
the same main loop, shared through ``multistage_loop.cuh``, plus split-K) and
rung 19 (``19_kmajor_a.cu``, rung 12's pipeline with A transposed by a
pre-pass) take the same -D parameters:

    BM, BN, BK    block tile (C tile BM x BN, K tile depth BK)
    TM, TN        thread tile; a warp covers WM x WN = 8*TM x 4*TN
    NUM_THREADS   32 * (BM / WM) * (BN / WN)
    STAGES        shared-memory stages of the cp.async pipeline
    MIN_BLOCKS    blocks per SM promised to __launch_bounds__ (register cap)
    SPLITS        rung 13 only: K slices (grid z); not used by the kernel text

``check``/``SEARCH_SPACE``/``smem``/``block``/``grid`` are what the KernelSpec
records of rungs 12 and 13 use (``select`` is rung 13's per-shape chooser);
rung 19's record takes ``smem``/``block``/``grid`` too, with its own
``check_19``/``SEARCH_SPACE_19``/``select_19`` (the last section). The three
share the warptile, ring and register rules. Pure Python: nothing here
touches the GPU.
"""

from __future__ import annotations

import math

from ..spec import Params
from .limits import (REGISTERS_PER_THREAD_MAX, SMEM_PER_BLOCK_MAX, SMEM_PER_SM, SMEM_RESERVED_PER_BLOCK,
                     THREADS_PER_SM, register_budget, spill_reason)

# Rung 12's defaults: 256 x 128 tiles, 256 threads of 8 x 16, 3 stages of 32.
R12_DEFAULT: Params = dict(BM=256, BN=128, BK=32, TM=8, TN=16, NUM_THREADS=256, STAGES=3, MIN_BLOCKS=1)

SEARCH_SPACE = {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [8, 16, 32],
                "TM": [4, 8], "TN": [4, 8, 16], "NUM_THREADS": [64, 128, 256],
                "STAGES": [3, 4, 5], "MIN_BLOCKS": [1, 2, 3, 4]}

# Rung 13: the few compiled tile configurations select() chooses from.
CONFIGS: dict[str, Params] = {
    "small": dict(BM=64, BN=64, BK=16, TM=4, TN=8, NUM_THREADS=128, STAGES=4, MIN_BLOCKS=4),
    "medium": dict(BM=128, BN=128, BK=16, TM=8, TN=8, NUM_THREADS=256, STAGES=4, MIN_BLOCKS=1),
    "large": dict(R12_DEFAULT),
}
SPLIT_CHOICES = (1, 2, 3, 4, 6, 8, 12, 16)
SEARCH_SPACE_13 = {**SEARCH_SPACE, "SPLITS": list(SPLIT_CHOICES)}


def smem(p: Params) -> int:
    """Dynamic shared memory: STAGES copies of the A (BM x BK) and B (BK x BN) tiles."""
    return 4 * p["STAGES"] * p["BK"] * (p["BM"] + p["BN"])


def block(p: Params) -> tuple[int, int, int]:
    return (p["NUM_THREADS"], 1, 1)


def grid(M: int, N: int, K: int, p: Params) -> tuple[int, int, int]:
    """x over N, y over M, z over the K splits (1 for rung 12)."""
    return (math.ceil(N / p["BN"]), math.ceil(M / p["BM"]), p.get("SPLITS", 1))


def registers_needed(p: Params) -> int:
    """Rough live registers per thread in the FMA loop: TM*TN accumulators,
    A fragments (4 k-values per row: the next group's 4*TM while the current
    group is still being used; counted as 6*TM), two B fragments of TN, about
    24 for addresses, loop state and the copy bookkeeping, plus BK/2 for the
    unrolled K tile. Calibrated against ptxas (CUDA 13, sm_80 and sm_90):
    8 x 16 at BK=32 -> 248 (no spill at the 255 cap), at BK=64 -> 264 (ptxas
    spills); 16 x 8 -> 268 (ptxas spills); 8 x 8 on 256 threads with 2
    blocks/SM -> 160 > 128 (ptxas spills 112 bytes); 4 x 8 -> 104 (ptxas: 113-127)."""
    return p["TM"] * p["TN"] + 6 * p["TM"] + 2 * p["TN"] + 24 + p["BK"] // 2


def _warptile_reason(BM: int, BN: int, TM: int, TN: int, threads: int) -> str | None:
    """Why warps of 8 x 4 lanes, each lane TM x TN results, do not tile a BM x BN block of NUM_THREADS."""
    wm, wn = 8 * TM, 4 * TN
    if BM % wm or BN % wn:
        return f"BM must be a multiple of 8*TM={wm} and BN of 4*TN={wn} (warptile)"
    if 32 * (BM // wm) * (BN // wn) != threads:
        return f"NUM_THREADS must be 32 * (BM/(8*TM)) * (BN/(4*TN)) = {32 * (BM // wm) * (BN // wn)}"
    if threads > 1024:
        return "more than 1024 threads"
    return None


def _ring_fit_reason(smem_bytes: int, threads: int, stages: int, min_blocks: int) -> str | None:
    """Why a cp.async ring of STAGES tiles, MIN_BLOCKS blocks per SM, does not fit an SM (rungs 12, 13, 19)."""
    if stages < 3:
        return "STAGES must be at least 3 (the barrier before a tile's last slice waits with STAGES-3 pending)"
    if smem_bytes > SMEM_PER_BLOCK_MAX:
        return f"{smem_bytes} bytes of shared memory exceed 227 KiB"
    if min_blocks * (smem_bytes + SMEM_RESERVED_PER_BLOCK) > SMEM_PER_SM:
        return f"{min_blocks} blocks of {smem_bytes} bytes of shared memory do not fit in an SM"
    if min_blocks * threads > THREADS_PER_SM:
        return f"{min_blocks} blocks of {threads} threads exceed {THREADS_PER_SM} threads per SM"
    return None


def _register_reason(needed: int, threads: int, min_blocks: int) -> str | None:
    """Why a thread needing about `needed` registers would spill under the cap
    __launch_bounds__(threads, min_blocks) gives ptxas (in steps of 8); below the
    cap of 255 keep a little slack (64x128 8x8 at 168 spills 8 bytes)."""
    cap = register_budget(threads, min_blocks)
    return spill_reason(needed, cap if cap == REGISTERS_PER_THREAD_MAX else cap // 8 * 8 - 4)


def check(p: Params) -> str | None:
    """Why a parameter combination of rungs 12/13 is invalid, or None."""
    BM, BN, BK, TM, TN = p["BM"], p["BN"], p["BK"], p["TM"], p["TN"]
    threads, stages, min_blocks = p["NUM_THREADS"], p["STAGES"], p["MIN_BLOCKS"]
    if min(BM, BN, BK, TM, TN, threads, stages, min_blocks) < 1:
        return "all parameters must be positive"
    if TN % 4:
        return "TN must be a multiple of 4 (float4 B fragments)"
    if BK % 8 or (BK // 4) & (BK // 4 - 1):
        return "BK must be 8 times a power of two (an even number of 16-byte chunks a row; XOR swizzle)"
    reason = _warptile_reason(BM, BN, TM, TN, threads)
    if reason:
        return reason
    chunks_a, chunks_b = BK // 4, BN // 4
    if threads % chunks_a or threads % chunks_b:
        return "NUM_THREADS must be a multiple of BK/4 and of BN/4 (fixed copy column per thread)"
    copies_a = -(-BM * chunks_a // threads)
    if copies_a > 1 and (threads // chunks_a) % 8:
        return "a thread's A rows must be a multiple of 8 apart (one swizzle per thread)"
    if copies_a > 32:
        return "more than 32 A chunks per thread"
    reason = _ring_fit_reason(smem(p), threads, stages, min_blocks)
    if reason:
        return reason
    reason = _register_reason(registers_needed(p), threads, min_blocks)
    if reason:
        return reason
    if p.get("SPLITS", 1) < 1:
        return "SPLITS must be at least 1"
    return None


CONSTRAINTS = ("warps tile BMxBN in 8*TM x 4*TN warptiles; TN % 4 == 0, BK = 8 * 2^n, STAGES >= 3; "
               "STAGES*4*BK*(BM+BN) <= 227 KiB and MIN_BLOCKS blocks fit an SM; registers fit without spilling")

# --- rung 13's chooser -------------------------------------------------------
# Fraction of an SM's FP32 peak each configuration's main loop reaches with
# 8 or more warps resident (fitted to rung 13 on an H200: small 40.9, medium
# 41.6, large 42.3 TFLOP/s at 2048^3 with no split, and the split-K sweeps
# at 256..1024^3; the model's TFLOP/s land within ~7% of the measured ones).
_EFFICIENCY = {"small": 0.62, "medium": 0.72, "large": 0.74}
_WARPS_FOR_FULL_RATE = 8
_PEAK_PER_SM = 2 * 128 * 1.755e9     # FP32 flop/s of one SM at the H200's sustained clock
_BLOCK_OVERHEAD = 2.0e-6             # prologue (STAGES-1 tiles of latency) + epilogue of a block, s
_REDUCE_LAUNCH = 2.5e-6              # the second kernel of a split call, s
_REDUCE_BANDWIDTH = 3.0e12           # bytes/s for the partials (L2-resident at these sizes)


def estimate(M: int, N: int, K: int, sm_count: int, name: str, splits: int) -> float:
    """Model of one call's GPU time (seconds) for a configuration and split count."""
    p = CONFIGS[name]
    tiles = math.ceil(K / p["BK"])
    per = math.ceil(tiles / splits)
    splits = math.ceil(tiles / per)  # splits that do work
    blocks = math.ceil(M / p["BM"]) * math.ceil(N / p["BN"]) * splits
    waves = math.ceil(blocks / (sm_count * p["MIN_BLOCKS"]))
    per_sm = min(p["MIN_BLOCKS"], math.ceil(blocks / sm_count))  # blocks sharing an SM
    warps = per_sm * p["NUM_THREADS"] // 32
    sm_rate = _PEAK_PER_SM * _EFFICIENCY[name] * min(1.0, warps / _WARPS_FOR_FULL_RATE)
    block_time = 2.0 * p["BM"] * p["BN"] * per * p["BK"] / (sm_rate / per_sm) + _BLOCK_OVERHEAD
    t = waves * block_time
    if splits > 1:  # beta == 0: the partials are read once, C written once
        t += _REDUCE_LAUNCH + (splits + 1) * M * N * 4 / _REDUCE_BANDWIDTH
    return t


def select(M: int, N: int, K: int, sm_count: int) -> Params:
    """Rung 13's parameters for a shape: one of CONFIGS plus SPLITS.

    Rule: for every configuration (small: 64x64 tiles of 4x8 per thread,
    4 warps, 4 blocks/SM; medium: 128x128 of 8x8, 8 warps; large: 256x128 of
    8x16, 8 warps) and every split count in SPLIT_CHOICES, estimate the
    call's time as
        waves * (one block's flops / its share of the SM's rate
                 + a fixed prologue/epilogue cost)
        + (if SPLITS > 1) a second launch + the partials' traffic,
    where waves = ceil(blocks / (sm_count * blocks per SM)), blocks =
    tiles * SPLITS, and an SM's rate is the configuration's measured
    efficiency, scaled down when fewer than 8 warps share the SM; pick the
    cheapest (see estimate()). On an H200 (132 SMs) this gives: 256^3
    small/8 splits, 512^3 small/4, 1024^3 medium/2, 2048^3 and 4096^3
    large/1 — in each case the fastest of the 3 x 8 combinations measured. Big tiles win when they fill the SMs (their loop is the most
    efficient); small shapes get small tiles and split K until the blocks
    cover the SMs, as long as the reduction does not cost more than it saves.
    Ties go to fewer splits (deterministic, less workspace).
    """
    best = None
    for name in CONFIGS:
        for s in SPLIT_CHOICES:
            if s > 1 and math.ceil(K / CONFIGS[name]["BK"]) < 2 * s:
                continue  # at least two K tiles per split
            t = estimate(M, N, K, sm_count, name, s)
            if best is None or t < best[0] * 0.999:
                best = (t, name, s)
    _, name, s = best
    return {**CONFIGS[name], "SPLITS": s}


# --- rung 19: rung 12's pipeline with A transposed by a pre-pass (k-major A tiles) ---
# Rung 19's two tile configurations (select_19 picks one per shape): "large", 128 x 128 tiles of 16 x 8
# per thread, 4 warps, 2 blocks per SM; "small", 64 x 128 of 8 x 8, 4 warps, 3 blocks per SM. Both
# 4 stages of BK = 16 (on the H200 at 2048^3, BK = 32 ran 8% slower at the same tile).
R19_CONFIGS: dict[str, Params] = {
    "large": dict(BM=128, BN=128, BK=16, TM=16, TN=8, NUM_THREADS=128, STAGES=4, MIN_BLOCKS=2),
    "small": dict(BM=64, BN=128, BK=16, TM=8, TN=8, NUM_THREADS=128, STAGES=4, MIN_BLOCKS=3),
}
R19_DEFAULT: Params = dict(R19_CONFIGS["large"])
# The large tiles' loop is ~6% faster than the small ones' when every SM is busy (H200: 51.4 TFLOP/s at
# 4096^3, 3.88 waves, against ~49.7 for the small tiles at 3072^3 and 4096^3), so they win unless their
# last wave leaves more SM time idle than that.
_R19_LARGE_MIN_WAVE_FILL = 0.94


def select_19(M: int, N: int, K: int, sm_count: int) -> Params:
    """Rung 19's parameters for a shape: the large tiles when their blocks fill
    the SMs' block slots (2 per SM) to at least 94% over the whole number of
    waves they need, the small tiles (3 per SM, 4x more blocks) otherwise.
    H200 (132 SMs): 1024^3 .. 1536^3 small (64 .. 144 large blocks for 264
    slots), 2048^3 large (256 of 264: 97%), 2560^3 and 3072^3 small (1.52 and
    2.18 waves), 4096^3 and 8192^3 large (3.88 and 15.5 waves: 97%)."""
    large = R19_CONFIGS["large"]
    blocks = math.ceil(M / large["BM"]) * math.ceil(N / large["BN"])
    waves = blocks / (sm_count * large["MIN_BLOCKS"])
    fill = waves / math.ceil(waves)
    return dict(large if fill >= _R19_LARGE_MIN_WAVE_FILL else R19_CONFIGS["small"])


SEARCH_SPACE_19 = {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [8, 16, 32],
                   "TM": [4, 8, 16], "TN": [4, 8, 16], "NUM_THREADS": [64, 128, 256],
                   "STAGES": [3, 4, 5], "MIN_BLOCKS": [1, 2, 3, 4]}


def registers_needed_19(p: Params) -> int:
    """Rough live registers per thread of rung 19's FMA loop: TM*TN
    accumulators, two buffers of TM + TN fragments and about 51 for
    addresses, loop state and the copies. Calibrated against ptxas (CUDA 13,
    sm_90): 16 x 8 -> 227, 8 x 16 -> 221 or 222, 8 x 8 -> 135 or 141."""
    return p["TM"] * p["TN"] + 2 * (p["TM"] + p["TN"]) + 51


def check_19(p: Params) -> str | None:
    """Why a parameter combination of rung 19 is invalid, or None."""
    BM, BN, BK, TM, TN = p["BM"], p["BN"], p["BK"], p["TM"], p["TN"]
    threads, stages, min_blocks = p["NUM_THREADS"], p["STAGES"], p["MIN_BLOCKS"]
    if min(BM, BN, BK, TM, TN, threads, stages, min_blocks) < 1:
        return "all parameters must be positive"
    if TM % 4 or TN % 4:
        return "TM and TN must be multiples of 4 (float4 A and B fragments)"
    if BK % 2:
        return "BK must be even (every K tile starts on fragment buffer 0)"
    reason = _warptile_reason(BM, BN, TM, TN, threads)
    if reason:
        return reason
    if threads % (BM // 4) or threads % (BN // 4):
        return "NUM_THREADS must be a multiple of BM/4 and of BN/4 (fixed copy column per thread)"
    reason = _ring_fit_reason(smem(p), threads, stages, min_blocks)
    if reason:
        return reason
    return _register_reason(registers_needed_19(p), threads, min_blocks)


CONSTRAINTS_19 = ("warps tile BMxBN in 8*TM x 4*TN warptiles; TM, TN % 4 == 0, BK even, STAGES >= 3; "
                  "NUM_THREADS a multiple of BM/4 and BN/4; STAGES*4*BK*(BM+BN) <= 227 KiB and MIN_BLOCKS "
                  "blocks fit an SM; registers fit without spilling")
