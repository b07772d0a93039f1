"""The 16-bit ladder (BF16 and FP16): the cuBLAS rows it is compared with
and one record per rung and element type (sources ``cuda_src/2x_half_*.cu``, ``30_half_split_k.cu`` and
``32_half_b_one_load.cu``, built for bfloat16 with ``BF16=1`` and for half with ``BF16=0``).

A rung id names one idea in one type, so each source has two ids: even for
BF16, odd for FP16 (20/21: mma.sync, 22/23: wgmma + TMA, warp-specialized,
24/25: 22/23 in clusters sharing B by TMA multicast, 26/27: 24/25 with a
TMA-store epilogue, 30/31: 26/27 with schedules for shapes of few tiles, 32/33: 30/31 with each K
tile of B in one TMA load).
"""

from __future__ import annotations

from ..spec import KernelSpec, Params, ceil_div
from . import gemv
from .limits import SMEM_PER_BLOCK_MAX, register_budget, spill_reason

_TYPES = (("bf16", "BF16", 1), ("fp16", "FP16", 0))

HALF_BASELINES: tuple[KernelSpec, ...] = tuple(
    KernelSpec(0, f"cuBLAS {label}", "gpu", f"the {label} baseline: cublasGemmEx, {label} A, B and C, "
                                            "CUBLAS_COMPUTE_32F", precision=name)
    for name, label, _ in _TYPES)


# --- rung 20/21: mma.sync m16n8k16, ldmatrix, a cp.async ring (half_mma_sync.cuh) ----------
_HM_BK = 64


def _hm_threads(p: Params) -> int:
    return 32 * (p["HM_BM"] // p["HM_WM"]) * (p["HM_BN"] // p["HM_WN"])


def _hm_smem(p: Params) -> int:
    """HM_STAGES slots of the A tile (HM_BM x 64) and the B tile (64 x HM_BN), 2 bytes an element."""
    return p["HM_STAGES"] * (p["HM_BM"] + p["HM_BN"]) * _HM_BK * 2


def _check_hm(p: Params) -> str | None:
    bm, bn, wm, wn = p["HM_BM"], p["HM_BN"], p["HM_WM"], p["HM_WN"]
    if wm % 16 or wn % 16:
        return "HM_WM and HM_WN must be multiples of 16"
    if bm % wm or bn % wn:
        return "HM_BM must be a multiple of HM_WM and HM_BN of HM_WN"
    if bn % 64:
        return "HM_BN must be a multiple of 64 (a B row holds whole 8-chunk swizzle periods)"
    if p["HM_STAGES"] < 2:
        return "HM_STAGES must be at least 2"
    threads = _hm_threads(p)
    if not 64 <= threads <= 1024:
        return f"{threads} threads: need 2 to 32 warps"
    if (bm * _HM_BK // 8) % threads or (_HM_BK * bn // 8) % threads:
        return "each thread must copy a whole number of 16-byte chunks of the A and B tiles"
    if _hm_smem(p) > SMEM_PER_BLOCK_MAX:
        return f"{_hm_smem(p)} bytes of shared memory exceed 227 KiB"
    # accumulators, one k16 step of A and B fragments, addresses and loop state (fitted to ptxas 13.0)
    need = wm * wn // 32 + (wm // 16) * 4 + (wn // 8) * 2 + 56
    return spill_reason(need, register_budget(threads))


_HM_PARAMS = {"HM_BM": 128, "HM_BN": 256, "HM_WM": 64, "HM_WN": 64, "HM_STAGES": 3, "HM_GROUP": 8}
_HM_SPACE = {"HM_BM": [64, 128, 256], "HM_BN": [64, 128, 256], "HM_WM": [32, 64], "HM_WN": [32, 64],
             "HM_STAGES": [2, 3, 4], "HM_GROUP": [4, 8, 16]}
_HM_CONSTRAINTS = ("warps tile HM_BM x HM_BN in HM_WM x HM_WN (multiples of 16); HM_BN % 64 == 0; 2..32 warps; "
                   "whole 16-byte chunks per thread; smem = HM_STAGES*(HM_BM+HM_BN)*128 bytes <= 227 KiB; "
                   "registers fit")


def _hm_record(id: int, name: str, summary: str, source: str, precision: str, bf16: int) -> KernelSpec:
    return KernelSpec(id, name, "gpu", summary, source=source, params={**_HM_PARAMS, "BF16": bf16},
                      search_space=_HM_SPACE, check=_check_hm, constraints=_HM_CONSTRAINTS,
                      block=lambda p: (_hm_threads(p), 1, 1),
                      grid=lambda M, N, K, p: (ceil_div(M, p["HM_BM"]) * ceil_div(N, p["HM_BN"]), 1, 1),
                      smem=_hm_smem, precision=precision, min_cc=(8, 0))


# --- rung 22/23: wgmma + TMA ring, producer/consumer warpgroups, persistent (half_tma.cuh) ------
def _ws_smem(p: Params) -> int:
    """STAGES slots of the A box (BM x 64) and BN/64 B boxes (64 x 64), 2 bytes an element, 1 KiB to align
    the ring to 1024 bytes (swizzle), two 8-byte mbarriers per slot."""
    return p["STAGES"] * (p["BM"] + p["BN"]) * 64 * 2 + 1024 + 16 * p["STAGES"]


def _check_ws(p: Params, smem=_ws_smem) -> str | None:
    if p["BM"] not in (64, 128, 192):
        return "BM must be 64, 128 or 192 (one consumer warpgroup per 64 rows)"
    if p["BN"] not in (64, 128, 256):
        return "BN (the wgmma N) must be 64, 128 or 256"
    if p["STAGES"] < 2:
        return "STAGES must be at least 2"
    if p["GROUP_M"] < 1:
        return "GROUP_M must be at least 1"
    if p["BM"] == 192 and p["BN"] == 256:
        return "three consumer warpgroups of 128 accumulators leave too few registers (setmaxnreg 232 x 384)"
    if smem(p) > SMEM_PER_BLOCK_MAX:
        return f"{smem(p)} bytes of shared memory exceed 227 KiB"
    return None


def _ws_grid(M: int, N: int, K: int, p: Params):
    """One block per C tile (a persistent launch caps it at the SM count); with clusters, whole
    groups of CLUSTER tile rows (blocks past M compute zeros and store nothing)."""
    cluster = p.get("CLUSTER", 1)
    return (cluster * ceil_div(ceil_div(M, p["BM"]), cluster) * ceil_div(N, p["BN"]), 1, 1)


# The C tiles a wgmma rung picks from, each with its throughput relative to 128 x 256 (the one
# with the most reuse per byte of shared memory) and the ring depth it affords. Rates per tile where
# every tile runs many waves, measured with the lean consumer loop (H200, rung 32, one run, three
# rounds; each tile's waves on 132 SMs over its time): 6144 x 6144 x 4096 BF16 192 x 128 0.97, 128 x
# 128 0.96, 64 x 128 0.71 (FP16 0.98, 0.95, 0.70); 8192 x 8192 x 4096 BF16 0.94, 0.96, 0.69. 64 x 128
# is taken at 0.6: at 0.7 it replaced 192 x 128 at 384 x 11008 x K (4 waves against 2) and lost 2-3.5
# points there. (Before the lean loop, on an H100, 128 x 128 was taken as 0.75 and 64 x 128 as 0.5.)
# 128 x 128 takes 6 slots, the most that fit beside the staged C.
_WS_TILES = ((128, 256, 1.0, 4), (192, 128, 0.95, 4), (128, 128, 0.95, 6), (64, 128, 0.6, 8))
# A tile further down the list is taken only where its estimate is this much below that of the one
# chosen before it: near a tie the estimate cannot tell the tiles apart (H200, rung 32, BF16, one
# run: at 4097^3 192 x 128 was estimated 5.3% faster than 128 x 256 and ran 7% slower; at 5888^3 128
# x 128, 0.6% faster, ran 3.5% slower). Where 128 x 128 is estimated 8-21% faster it won in one run
# against 128 x 256 (% of cuBLAS BF16): 2048 x 3072 x 1024 80.1 -> 96.1, 512 x 11008 x 4096 79.2 ->
# 93.7, 2048 x 3072 x 4096 81.2 -> 91.3, 3840^3 92.2 -> 94.1 (FP16 alike).
_WS_NEAR_TIE = 0.06


def _ws_select(M: int, N: int, K: int, sm_count: int, rest: Params) -> dict:
    """The tile with the least estimated time: its waves (a persistent block takes tile after
    tile, so the busiest SM's count of tiles, rounded up) times its tile's work over its rate; a tile
    further down _WS_TILES only where that is _WS_NEAR_TIE below the one chosen so far. The tiles are
    the grid's (_ws_grid): in clusters, whole groups of CLUSTER tile rows, those past M too."""
    best = _WS_TILES[0]
    for tile in _WS_TILES[1:]:
        if _ws_cost(M, N, K, sm_count, rest, tile) < (1 - _WS_NEAR_TIE) * _ws_cost(M, N, K, sm_count, rest, best):
            best = tile
    bm, bn, _, stages = best
    return {**rest, "BM": bm, "BN": bn, "STAGES": stages}


def _ws_waves(M: int, N: int, K: int, sm_count: int, p: Params) -> int:
    """The tiles of the busiest SM (a persistent block takes tile after tile)."""
    return ceil_div(_ws_grid(M, N, K, p)[0], sm_count)


def _ws_cost(M: int, N: int, K: int, sm_count: int, rest: Params, tile) -> float:
    """_ws_select's estimate for one tile of _WS_TILES: its waves times a tile's work over its rate."""
    bm, bn, rate, _ = tile
    return _ws_waves(M, N, K, sm_count, {**rest, "BM": bm, "BN": bn}) * bm * bn / rate


def _ws_estimate(M: int, N: int, K: int, sm_count: int, p: Params) -> float:
    """_ws_cost of the tile that p names."""
    return _ws_cost(M, N, K, sm_count, p, next(t for t in _WS_TILES if t[:2] == (p["BM"], p["BN"])))


def _check_cluster(p: Params, smem=_ws_smem, multicast: bool = True) -> str | None:
    reason = _check_ws(p, smem)
    if reason:
        return reason
    if multicast and p["CLUSTER"] not in (1, 2, 4):
        return "CLUSTER must be 1, 2 or 4 blocks"
    if multicast and (p["BN"] // 64) % p["CLUSTER"] and not (p["BN"] == 64 and p["CLUSTER"] == 2):
        return ("the BN/64 B boxes must split evenly over the CLUSTER blocks that multicast them (or one box "
                "in halves over a pair)")
    return None


_WS_CONSTRAINTS = ("BM in {64,128,192} (64 rows per consumer warpgroup); BN in {64,128,256}; not 192 x 256; "
                   "STAGES >= 2; smem = STAGES*(BM+BN)*128 + 1 KiB <= 227 KiB; PERSISTENT: one block per SM")


def _store_smem(p: Params) -> int:
    """Rung 24's shared memory, its barriers padded to 1 KiB, and two staged 64 x 64 boxes of C per consumer
    warpgroup (8 KiB each, 1 KiB-aligned for the swizzle)."""
    return _ws_smem(p) - 16 * p["STAGES"] + 1024 * ceil_div(16 * p["STAGES"], 1024) + (p["BM"] // 64) * 2 * 8192


# --- rung 30/31: rung 26 with K split across a cluster's blocks (half_split.cuh) -----------
_MAX_CLUSTER_SPLIT = 8  # the portable cluster size


def split_in_cluster(p: Params) -> bool:
    """K split across the KSPLIT = CLUSTER blocks of a cluster (2 to 8), summed in distributed shared memory
    (half_split.cuh)."""
    return 2 <= p.get("KSPLIT", 1) <= _MAX_CLUSTER_SPLIT and p["KSPLIT"] == p.get("CLUSTER", 1)


def split_through_partials(p: Params) -> bool:
    """K split KSPLIT > 2 ways without clusters, through FP32 partial sums in global memory that
    reduce_splits16 adds up (half_partials.cuh)."""
    return p.get("KSPLIT", 1) > 2 and p.get("CLUSTER", 1) == 1


def _split_smem(p: Params) -> int:
    """Rung 26's shared memory and, with K split in a cluster of S blocks, the incoming and outgoing buffers
    of the exchange: S - 1 each, of the widest slice of the C tile's FP32 sums (its BN/8 column groups in S
    near-equal parts, the first the widest: split_first in half_split.cuh)."""
    if not split_in_cluster(p):
        return _store_smem(p)
    ways = p["KSPLIT"]
    widest = ceil_div(p["BN"] // 8, ways) * 8  # columns
    return _store_smem(p) + 2 * (ways - 1) * p["BM"] * widest * 4


def _split_grid(M: int, N: int, K: int, p: Params):
    """Rung 26's grid, with KSPLIT = CLUSTER = S the S blocks of a cluster per C tile, with KSPLIT S > 2 and no
    clusters a unit per C tile and S-th of K (a persistent launch caps it at the SM count)."""
    if p.get("KSPLIT", 1) == 1:
        return _ws_grid(M, N, K, p)
    return (p["KSPLIT"] * ceil_div(M, p["BM"]) * ceil_div(N, p["BN"]), 1, 1)


def _check_split(p: Params, smem=_split_smem) -> str | None:
    # a K split in a cluster shares no B boxes: the multicast's rule (BN/64 boxes over the blocks) is not its
    reason = _check_cluster(p, smem, multicast=not split_in_cluster(p))
    if reason:
        return reason
    if not 1 <= p["KSPLIT"] <= MAX_KSPLIT:
        return f"KSPLIT must be 1 to {MAX_KSPLIT}"
    if p["KSPLIT"] == 2 and p["CLUSTER"] != 2:
        return "KSPLIT 2 takes clusters of 2 blocks (K split in pairs)"
    if split_in_cluster(p) and (p["PERSISTENT"] or p["BN"] != 128):
        return (f"KSPLIT {p['KSPLIT']} in clusters of {p['CLUSTER']} takes BN 128 (the slices of sums a warpgroup "
                "sends) and a grid that is not persistent (one C tile per cluster)")
    if p["KSPLIT"] > 2 and not split_in_cluster(p) and p["CLUSTER"] != 1:
        return ("KSPLIT above 2 takes CLUSTER 1 (sums through global memory: each block loads its own B) or "
                "CLUSTER = KSPLIT (summed in the cluster)")
    return None


# Rung 30's schedules where rung 26 would run one wave of its smallest tile (64 x 128): measured on the H200
# against cuBLAS BF16 in one run (% of cuBLAS; rung 26, no clusters, K split in pairs of 128 x 128 tiles):
# 1024^3 78.1 / 84.5 / 75.6, 768^3 74.7 / 83.3 / 69.7, 512x1024x1024 66.2 / 74.2 / 67.6, 1024x1024x2048
# 69.3 / 76.8 / 77.1, 512x512x2048 56.9 / 64.2 / 72.3, 2048x512x2048 69.3 / 77.7 / 84.1, 1024x1024x4096
# 63.2 / 70.7 / 81.4, 512x512x4096 43.3 / 49.1 / 65.3, 256x256x8192 19.0 / 21.8 / 32.9. Multicast only pays
# where the tiles run more than one wave; the pairs pay from 32 K tiles up, where their fewer bytes per
# multiply-add outweigh the exchange of partial sums (about 2,300 cycles at 1024^3).
_SPLIT_TILE = {"BM": 128, "BN": 128, "STAGES": 4, "KSPLIT": 2, "PERSISTENT": 0}
_SPLIT_MIN_K_TILES = 32
# Pairs of 64 x 128 tiles (6 slots; 7 fit beside the partial sums sent, not tried), where they are twice the
# blocks of the 128 x 128 pairs in one wave: measured on the H200 against cuBLAS in one run, three rounds (% of
# cuBLAS, 128 x 128 pairs -> 64 x 128 pairs): 4096x128x4096 BF16 68.9 -> 93.2, FP16 64.3 -> 91.6; 128x4096x4096
# BF16 91.3 -> 103.4 (4 slots: 85.0, 101.6); 127x4096x4096 69.4 -> 80.4, FP16 70.0 -> 80.8; 4096x127x4096 (both
# types' cuBLAS slow there) 209.6 -> 270.5; 4096x96x4096 75.1 -> 92.8, FP16 82.1 -> 102.6; 128x4096x11008 76.0 ->
# 89.1; 128x4096x14336 73.8 -> 87.5; 512x768x3072 68.3 -> 90.1; 512x1024x4096 68.3 -> 75.2, FP16 73.0 -> 79.8;
# 1024x512x4096 69.6 -> 93.3; 2048x256x4096 68.8 -> 95.1; 256x2048x4096 76.4 -> 79.8. Not where N <= 64, whose
# tiles are half empty (4096x64x4096 73.5, 4096x16x4096 60.6 against 81.5 and 72.5 for 128 x 128 tiles in 4 parts,
# the choice below). Where the last row of 64-row tiles was less than half full they lost (65x4096x4096 59.6 ->
# 49.9) until that row's tile moved up to end at M (half_tail_origin: no rows of zeros), since when they won there
# too, in one run each, three rounds (% of cuBLAS BF16, 128 x 128 pairs -> 64 x 128 pairs): 65x4096x4096 75.7 ->
# 77.8, 72x4096x4096 71.9 -> 72.6, 80x4096x4096 97.5 -> 100.1, 90x4096x4096 74.4 -> 75.8, 96x4096x4096 102.9 ->
# 104.4, 65x4096x8192 86.2 -> 89.0, 80x3072x4096 74.0 -> 88.2, 80x2048x8192 54.3 -> 70.8 (FP16 65, 80, 90 x 4096 x
# 4096: 75.7, 98.9, 73.6 -> 76.0, 100.4, 74.2).
_SPLIT_TILE_64 = {**_SPLIT_TILE, "BM": 64, "STAGES": 6}
# Where C is one row of 64-row tiles (M <= 64) and too few of them stream B: those pairs, measured on the H200
# against cuBLAS in one run, three rounds, once A's box holds only M rows (half_a_rows; % of cuBLAS BF16, FP16,
# the tiles alone -> in pairs): 16x6144x4096 (48 tiles) 83.7, 85.3 -> 109.8, 107.2; at 64 tiles a tie
# (16x8192x8192 98.7, 113.6 -> 97.8, 112.5; 64x8192x8192 100.6 -> 99.7). A split through partials, where it
# gives 4x the blocks, stays first (16x4096x4096: 93.3% in 4 parts, 83.3% in pairs).
_FEW_ROW_PAIRS = 0.45  # pairs where the tiles alone are fewer than this per SM
# Rungs 30-33 run their many tiles in clusters of two that share B (rung 24's multicast) only from this many
# waves of the tiles alone up, and where the pairs cost no wave that those tiles do not. Measured on the H200,
# rung 32 / 33 against cuBLAS of the same type in one run, three rounds, the same tile in pairs -> alone: one
# wave, BF16 1280^3 100.2 -> 102.0, 2048^3 98.4 -> 99.2, 512x4096x4096 91.5 -> 95.8, 2048x1024x4096 96.7 -> 98.0,
# 4096x1024x4096 90.4 -> 95.6; FP16 2048^3 93.9 -> 96.4, 512x4096x4096 86.3 -> 93.5, 4096x1024x4096 95.6 -> 93.0.
# From 2 waves up the types disagreed (BF16 2048x4096x4096 91.2 -> 96.7, 3072^3 93.9 -> 96.1; FP16 96.4 -> 91.8,
# 91.1 -> 89.2) or tied (4096x4096x1024, 2048x11008x4096, 6144^3, 8192^3 BF16), and at 4096^3 went either way
# (BF16 95.1 -> 97.9, FP16 96.7 -> 91.5): pairs, as before. Where pairs of tile rows round an odd count up and
# the tiles alone need fewer waves, alone won at every shape tried, e.g. 384x11008x4096 (one wave of 128 x 256
# against two of 192 x 128 in pairs) 70.2 -> 91.1, FP16 72.4 -> 90.7; 896x28672x4096 (6 waves against 7) 93.7 ->
# 104.8, FP16 91.6 -> 103.6; 640x12288x4096 78.6 -> 96.7.
_PAIRS_MIN_WAVES = 2
# Where C is two rows of 64-row tiles (65 <= M <= 128) and its 64 x 64 tiles fill one wave (90% of the SMs or
# more): those tiles in pairs stacked along M that share each K tile of B (each block loads half of the one
# 64-column box's k rows, multicast), K not split, 12 slots, the last row of tiles moved up to end at M
# (half_tail_origin), in place of the K split in pairs of 64 x 128 tiles: cuBLAS's own schedule at 128 x 4096 x
# 4096. It lost (127 x 4096 x 4096: 14.1 us against the split's 13.7) until the consumer loop lost its
# bookkeeping (half_consume). Measured on the H200 in one run, three rounds (% of cuBLAS BF16, K split in pairs
# -> these pairs): 65x4096x4096 81.2 -> 85.9, 72x 74.6 -> 78.7, 80x 104.9 -> 111.1, 90x 76.8 -> 81.4, 96x 109.7 ->
# 118.1, 100x 87.2 -> 93.7, 110x 78.5 -> 84.6, 127x 79.6 -> 88.7, 128x 101.0 -> 109.9 (x 4096 x 4096), 127x4096x8192
# 83.5 -> 94.2, 80x4096x14336 87.3 -> 92.9, 128x4096x2048 93.5 -> 108.5, 90x4001x2100 120.2 -> 122.0 (FP16 at 65,
# 80, 100, 110, 127 x 4096 x 4096: 81.7, 104.4, 86.7, 71.8, 81.8 -> 86.5, 110.7, 93.2, 77.8, 89.8). Not at 96 tiles
# (73% of the SMs): 100x3072x4096 89.8 -> 82.4, 127x3072x4096 90.4 -> 85.9.
_PAIRS64 = {"BM": 64, "BN": 64, "CLUSTER": 2, "KSPLIT": 1, "PERSISTENT": 0, "STAGES": 12}
_PAIRS64_MIN_FILL = 0.9  # of the SMs
# KSPLIT above 2: that many FP32 slices of C in global memory, added by reduce_splits16. 128, not 64: one tile
# (64x64x131072) in 128 parts ran at 91.4% of cuBLAS BF16 against 84.2% in 64 (the reduction's threads shared).
MAX_KSPLIT = 128
# K split S > 2 ways through FP32 sums in global memory (half_partials.cuh), 64 x 128 tiles: measured on the H200
# against cuBLAS BF16 in one run, three rounds (% of cuBLAS; the schedule above -> 64 x 128 tiles in S parts):
# 256x256x65536 15.6 -> 93.4 (S 16), 128x128x65536 7.8 -> 61.8 (S 16), 512x512x32768 35.9 -> 86.0 (S 4),
# 16x4096x4096 55.6 -> 76.8 (S 4), 64x4096x4096 58.3 -> 78.2 (S 4). One wave of units beat two (16x4096x4096 S 8:
# 72.9). It lost where it only doubled the blocks: 128x4096x4096 87.3 in pairs against 83.2 (128 x 128 tiles,
# S 4), and where the tiles already fill the GPU (1024x1024x16384 93.2 in pairs against 80.6 at best). So S is the
# most parts that keep one wave, each at least 8 K tiles long, taken where that gives 4x the blocks or more.
# Where N is at most 64 (one column of tiles), 128 x 128 tiles in parts at 2x the blocks of the pairs, in two
# runs (pairs -> 4 parts): 4096x16x4096 66.2, 64.5 -> 75.5, 75.0; 4096x64x4096 62.9, 62.6 -> 75.4, 79.7. Not
# taken elsewhere: at N = 128 a tie (4096x128x4096 61.7 -> 62.1), across N a loss (128x4096x4096 88.4 -> 83.8).
# Where N <= 64 the tiles are 64 columns wide since the twenty-seventh session (_narrow_select below).
_PARTIALS_TILE = {"BM": 64, "BN": 128, "STAGES": 8, "CLUSTER": 1, "PERSISTENT": 1}
_NARROW_PARTIALS_TILE = {**_PARTIALS_TILE, "BM": 128, "BN": 64}
_PARTIALS_MIN_K_TILES = 8
_PARTIALS_MIN_GAIN = 4
_NARROW_PARTIALS_MAX_N, _NARROW_PARTIALS_MIN_GAIN = 64, 2


def _partials_split(M: int, N: int, K: int, sm_count: int, blocks: int, tile: Params = _PARTIALS_TILE,
                    gain: int = _PARTIALS_MIN_GAIN) -> int | None:
    """The K parts for the split through partials in ``tile``s where it gives ``gain`` times the blocks of a
    schedule of ``blocks`` blocks in one wave, else None."""
    tiles = ceil_div(M, tile["BM"]) * ceil_div(N, tile["BN"])
    splits = min(sm_count // tiles, ceil_div(K, 64) // _PARTIALS_MIN_K_TILES, MAX_KSPLIT)
    return splits if splits > 2 and tiles * splits >= gain * blocks else None


def _partials_choice(M: int, N: int, K: int, sm_count: int, blocks: int) -> Params | None:
    """The tiles and parts of the split through partials where it pays (the measurements above), else None;
    where N <= 64 the tiles are 64 x 64 or 128 x 64 (_narrow_select)."""
    tile = {**_PARTIALS_TILE, "BN": 64} if N <= _NARROW_PARTIALS_MAX_N else _PARTIALS_TILE
    splits = _partials_split(M, N, K, sm_count, blocks, tile)
    if splits:
        return {**tile, "KSPLIT": splits}
    if N <= _NARROW_PARTIALS_MAX_N:
        splits = _partials_split(M, N, K, sm_count, blocks, _NARROW_PARTIALS_TILE, _NARROW_PARTIALS_MIN_GAIN)
        if splits:
            return {**_NARROW_PARTIALS_TILE, "KSPLIT": splits}
    return None


# K split in clusters of S = 4 or 3 blocks, summed in distributed shared memory (half_split.cuh), in place of the
# split through partials: no FP32 slices through global memory and no second kernel. Measured on the H200 against
# cuBLAS in one run each, three rounds (% of cuBLAS BF16; partials -> clusters): 16 tiles in clusters of 4:
# 1024x128x4096 84.5 -> 97.6 (84.9 -> 94.0 in a second run), 128x1024x4096 86.2 -> 99.7, 32x2048x4096 88.7 -> 96.5,
# 256x512x4096 84.5 -> 92.2, 64x2048x8192 99.7 -> 101.5 (FP16 95.6 -> 104.0); 24 tiles: 64x3072x4096 87.8 -> 99.7
# (FP16 86.7 -> 99.6), 32x3072x4096 96.3 -> 99.7. 32 tiles in clusters of 3 (96 blocks), where M <= 64:
# 64x4096x4096 77.6 -> 85.0 (FP16 78.0 -> 85.9), 16x4096x14336 95.4 -> 99.9, 32x4096x11008 95.0 -> 101.6,
# 16x4096x4096 93.6 -> 94.1. They lost where the split through partials has more blocks to give a longer or a taller
# product (in clusters of 3: 512x512x4096 91.5 -> 89.3, 2048x128x8192 94.7 -> 91.4, 512x512x32768 82.8 -> 65.0; of 4:
# 256x256x8192, 8 tiles, 82.9 -> 71.5) and where the clusters do not all fit at once: a cluster's blocks share a
# GPC, and the H200 holds only 30 clusters of 4 and 39 of 3 of these ~210 KiB blocks (cuOccupancyMaxActiveClusters),
# so 32 tiles in clusters of 4 ran in two waves (64x4096x4096 79.2 -> 61.1) and 40 in clusters of 3 too
# (16x5120x4096 80.7 -> 54.4).
_CLUSTER_SPLIT_FIT = {4: 30 / 132, 3: 39 / 132}  # clusters of S resident at once, per SM (H200: 30 and 39 of 132)
_CLUSTER_SPLIT_MIN_TILES = 16
_CLUSTER_SPLIT_MAX_K_TILES = {4: 128, 3: 224}  # the longest K measured to win (8192 and 14336)


def _cluster_split(M: int, N: int, K: int, sm_count: int) -> int | None:
    """The blocks of a cluster that split K in place of the split through partials, where the measurements
    above say it pays, else None: 4 where every cluster of 4 fits at once, else 3 where those fit and C is one
    row of tiles; in either, K no longer than measured."""
    tiles, k_tiles = ceil_div(M, 64) * ceil_div(N, 128), ceil_div(K, 64)
    if tiles < _CLUSTER_SPLIT_MIN_TILES:
        return None
    for ways in (4, 3):
        if tiles <= int(sm_count * _CLUSTER_SPLIT_FIT[ways]):
            wins = k_tiles <= _CLUSTER_SPLIT_MAX_K_TILES[ways] and (ways == 4 or M <= 64)
            return ways if wins else None
    return None


# reduce_splits16's threads per item of C (half_partials.cuh), measured on the H200 against cuBLAS in one run each,
# three rounds (% of cuBLAS; a thread per item -> P threads): 64x64x131072 in 64 parts 70.5 -> 84.2 (P 32), in 128
# parts 62.3 -> 91.4 (P 32); 128x128x65536 in 64 parts 80.9 -> 97.9 (P 16; 96.4 at P 8, 94.5 at P 32). Where a
# thread alone adds fewer parts it did not pay: 256x256x65536 in 16 parts 93.8, 94.7 -> 94.2, 94.6 (P 4, two runs;
# 91.9 at P 8), 128x1024x4096 in 8 parts 86.5, 86.4 -> 83.4, 82.8 (P 2); in 4 parts a thread per item stayed
# fastest (512x512x32768, 16x4096x4096, 4096x64x4096). So from 32 parts on (as reduce_splits in split_k.cuh), P
# doubles while the items' threads fill less than half of the GPU's thread slots (1024 of an SM's 2048) and each
# thread still adds at least 4 parts, up to 32.
_REDUCE_DEEP_SPLITS, _REDUCE_THREADS_PER_SM = 32, 1024
_REDUCE_MIN_PARTS_A_THREAD, _REDUCE_MAX_THREADS_AN_ITEM = 4, 32


def reduce16_items(M: int, N: int) -> int:
    """reduce_splits16's items of C: pairs of elements where M * N is even (one 32-bit store each), else elements."""
    return M * N // 2 if M * N % 2 == 0 else M * N


def reduce16_parts(items: int, splits: int, sm_count: int) -> int:
    """How many threads of reduce_splits16 share an item of C (one or two elements) in a K split of ``splits``
    parts: 1, 2, 4, ... 32 (the measurements above)."""
    parts = 1
    while (splits >= _REDUCE_DEEP_SPLITS and parts < _REDUCE_MAX_THREADS_AN_ITEM
           and 2 * parts * _REDUCE_MIN_PARTS_A_THREAD <= splits and items * parts < sm_count * _REDUCE_THREADS_PER_SM):
        parts *= 2
    return parts


# Where N <= 64, tiles of 64 columns (wgmma n64): a 128-column tile spends half or more of its tensor-core work
# past N. Measured on the H200 against cuBLAS in one run each, three rounds (% of cuBLAS BF16, FP16; the
# twenty-sixth session's choice -> the same schedule in 64-column tiles): 4096x16x4096 (128 x 128 -> 128 x 64
# tiles in 4 parts) 76.1, 62.8 -> 100.1, 80.9; 4096x32x4096 60.5, 59.5 -> 80.1, 80.5; 4096x48x4096 65.9, 66.0
# -> 89.3, 87.2; 4096x64x4096 81.1, 81.3 -> 95.8, 96.1; 4096x60x4096 102.5, 98.5 -> 127.4, 121.7; 2048x64x8192
# (64 x 128 -> 64 x 64 tiles in 4 parts) 75.3, 69.5 -> 95.1, 92.8; 2048x32x8192 50.9, 51.4 -> 70.6, 70.8;
# 1000x17x3001 (5 parts) 83.0, 69.6 -> 91.6, 76.5; 300x40x5000 (9 parts) 105.5, 104.5 -> 112.4, 109.5;
# 16384x64x4096 (128 x 128 in clusters of 2 -> 128 x 64 alone) 81.6, 80.8 -> 99.6, 97.4; 8192x64x8192 (pairs
# of 128 x 128 -> 128 x 64 tiles unsplit) 87.5, 86.7 -> 94.6, 93.3. One 64-column box of B has no share to
# multicast, so no clusters and no pairs (their exchange is of 128-column tiles). 8 ring slots where they fit.
_NARROW_STAGES = 8


def _narrow_select(M: int, N: int, K: int, sm_count: int, chosen: Params) -> dict:
    """Rung 30's schedule where N <= 64: rung 26's tile 64 columns wide, without clusters; where that is one
    wave of 64-row tiles, K split through partials where it pays (_partials_choice)."""
    narrow = {**chosen, "BN": 64, "CLUSTER": 1, "KSPLIT": 1}
    if narrow["BM"] <= 128:
        narrow["STAGES"] = _NARROW_STAGES
    if chosen["BM"] != 64 or ceil_div(M, 64) > sm_count:
        return narrow
    partials = _partials_choice(M, N, K, sm_count, ceil_div(M, 64))
    return {**narrow, **partials} if partials else narrow


def _split_select(M: int, N: int, K: int, sm_count: int, rest: Params) -> dict:
    """Rung 26's choice; where that is one wave of 64 x 128 tiles, K split in pairs of 128 x 128 tiles
    when K is long, M more than 64 rows (else half of each pair's rows are empty: 16 x 8192 x 8192 51%
    against 70% of cuBLAS) and the pairs fit in one wave (pairs of 64 x 128 tiles where those fit too, N >
    64); else the same tiles without clusters, or, where M <= 64
    and they are too few to stream B, in pairs (_FEW_ROW_PAIRS). A split through partials goes first where it
    gives 4x the blocks (_partials_choice). Where
    the tiles chosen without clusters are one row of them, no clusters either (H200, BF16, rung 32 at
    128 x 14336 x 4096: 128 x 128 tiles alone 92.0% of cuBLAS, 128 x 256 in pairs 73.1%). Where N <= 64,
    _narrow_select."""
    chosen = _ws_select(M, N, K, sm_count, rest)
    if N <= _NARROW_PARTIALS_MAX_N:
        return _narrow_select(M, N, K, sm_count, chosen)
    if chosen["BM"] * chosen["BN"] != 64 * 128 or ceil_div(M, 64) * ceil_div(N, 128) > sm_count:
        alone = _ws_select(M, N, K, sm_count, {**rest, "CLUSTER": 1})
        # one row of tiles (a pair's second block would only compute past M), or too few waves for pairs to pay
        if ceil_div(M, alone["BM"]) == 1 or _ws_waves(M, N, K, sm_count, alone) < _PAIRS_MIN_WAVES:
            return alone
        # pairs that cost a wave (their rows past M)
        if _ws_estimate(M, N, K, sm_count, alone) < (1 - _WS_NEAR_TIE) * _ws_estimate(M, N, K, sm_count, chosen):
            return alone
        return chosen
    pairs = 2 * ceil_div(M, 128) * ceil_div(N, 128)  # blocks of the K split in pairs
    if M > 64 and ceil_div(K, 64) >= _SPLIT_MIN_K_TILES and pairs <= sm_count:
        few, blocks = {**chosen, **_SPLIT_TILE}, pairs
        if 2 * ceil_div(M, 64) * ceil_div(N, 128) <= sm_count:  # (N > 64 here)
            few = {**chosen, **_SPLIT_TILE_64}
        if ceil_div(M, 64) == 2 and _PAIRS64_MIN_FILL * sm_count <= 2 * ceil_div(N, 64) <= sm_count:
            few = {**chosen, **_PAIRS64}
    else:
        few, blocks = {**chosen, "CLUSTER": 1}, ceil_div(M, 64) * ceil_div(N, 128)
    partials = _partials_choice(M, N, K, sm_count, blocks)
    if partials:
        ways = _cluster_split(M, N, K, sm_count)
        return {**chosen, **_SPLIT_TILE_64, "KSPLIT": ways, "CLUSTER": ways} if ways else {**chosen, **partials}
    if M <= 64 and ceil_div(K, 64) >= _SPLIT_MIN_K_TILES and blocks < _FEW_ROW_PAIRS * sm_count:
        return {**chosen, **_SPLIT_TILE_64}
    return few


def _split_explain(M: int, N: int, K: int, sm_count: int, p: Params) -> str:
    """Rung 30's schedule at a shape, and why (the table footer and ``info``)."""
    tiles = ceil_div(M, p["BM"]) * ceil_div(N, p["BN"])
    tile = f"{p['BM']} x {p['BN']} tiles"
    if split_through_partials(p):
        threads = reduce16_parts(reduce16_items(M, N), p["KSPLIT"], sm_count)
        item = "pair of elements" if M * N % 2 == 0 else "element"
        shared = f" ({threads} threads to each {item})" if threads > 1 else ""
        return (f"{tile}, K split {p['KSPLIT']} ways through FP32 sums in global memory: {tiles} tiles x "
                f"{p['KSPLIT']} parts of the {ceil_div(K, 64)} K tiles = {tiles * p['KSPLIT']} blocks for {sm_count} "
                f"SMs, then a second kernel adds the parts{shared} and rounds C")
    if p.get("KSPLIT", 1) == 2:
        return (f"{tile}, K split in pairs: a cluster of two blocks per tile, each over half of the "
                f"{ceil_div(K, 64)} K tiles, summed in distributed shared memory ({2 * tiles} blocks for "
                f"{sm_count} SMs)")
    if split_in_cluster(p):
        ways = p["KSPLIT"]
        return (f"{tile}, K split {ways} ways in clusters: a cluster of {ways} blocks per tile, each over 1/{ways} "
                f"of the {ceil_div(K, 64)} K tiles, summed in distributed shared memory, each block storing its "
                f"share of the tile's columns, no second kernel ({ways * tiles} blocks for {sm_count} SMs)")
    if p.get("CLUSTER", 2) == 1 and p["BN"] == 64 and N <= _NARROW_PARTIALS_MAX_N:
        return (f"{tile}, no clusters: N = {N} fits one 64-column tile (a 128-column one would spend half or more "
                f"of its work past N), whose one box of B has nothing to share: {tiles} tiles, "
                f"{ceil_div(tiles, sm_count)} wave(s)")
    if p.get("CLUSTER", 2) == 1 and ceil_div(M, p["BM"]) == 1:
        return f"{tile}, no clusters: one row of {tiles} tiles, where a pair's second block would only compute past M"
    if p.get("CLUSTER", 2) == 1:
        waves = _ws_waves(M, N, K, sm_count, p)
        if waves < _PAIRS_MIN_WAVES:
            return (f"{tile}, no clusters: {tiles} tiles, {'one wave' if waves == 1 else f'{waves} waves'} on "
                    f"{sm_count} SMs, where pairs sharing B by multicast only couple their blocks")
        paired = _ws_waves(M, N, K, sm_count, {**p, "CLUSTER": 2})
        if paired > waves:
            return (f"{tile}, no clusters: {tiles} tiles, {waves} waves on {sm_count} SMs, where pairs of tile rows "
                    f"would take {paired} (their rows past M included)")
        return f"{tile}, no clusters: {tiles} tiles, {waves} waves on {sm_count} SMs"  # given, not chosen
    waves = ceil_div(tiles, sm_count)
    if _multicasts_part_box(p):
        moved = " (the last row of tiles moved up to end at M)" if tail_moves(M, p["BM"]) else ""
        return (f"{tile} in pairs stacked along M, each block loading half of the K tile of B both share{moved}, "
                f"K not split: {tiles} tiles, {waves} wave(s)")
    return f"{tile} in clusters of {p['CLUSTER']} sharing B by multicast: {tiles} tiles, {waves} wave(s)"


# --- rung 32/33: rung 30 with each K tile of B in one TMA load (B3D) --------------------------
def b_box_chunks(p: Params) -> int:
    """The 64-column boxes of B that one TMA load takes (kHalfBBoxes in half_tma.cuh): 1 without B3D; with
    it, the BN/64 of a K tile, or in clusters that multicast B (CLUSTER > 1, K not split) each block's
    1/CLUSTER of them (kClusterShare in half_cluster.cuh). The tma16 driver encodes B's map to match."""
    if not p.get("B3D"):
        return 1
    boxes = p["BN"] // 64
    return max(1, boxes // p["CLUSTER"]) if _multicasts_b(p) else boxes


def b_box_rows(p: Params) -> int:
    """The k rows of B's box: 64 (a K tile), or where a pair multicasts one 64-column box, each block's half
    of them (kClusterPartRows in half_cluster.cuh)."""
    return 64 // p["CLUSTER"] if _multicasts_part_box(p) else 64


def _multicasts_b(p: Params) -> bool:
    """The blocks of a cluster share B by multicast: clusters, K not split in them (half_cluster.cuh)."""
    return p.get("CLUSTER", 1) > 1 and p.get("KSPLIT", 1) == 1


def _multicasts_part_box(p: Params) -> bool:
    """A pair shares one 64-column box of B, each block loading part of its k rows (kClusterPartBox in
    half_cluster.cuh): fewer B boxes than blocks in a cluster that multicasts B."""
    return _multicasts_b(p) and p["BN"] // 64 < p["CLUSTER"]


def tail_moves(M: int, bm: int) -> bool:
    """Whether the last row of bm-row tiles moves up to end at M: the kernel's half_tail_origin (more than one
    row of tiles, and a quarter or more of the last one past M)."""
    return M > bm and 4 * (-M % bm) >= bm


def _check_b3d(p: Params) -> str | None:
    return None if p["B3D"] in (0, 1) else "B3D must be 0 or 1"


def _b3d_select(M: int, N: int, K: int, sm_count: int, rest: Params) -> dict:
    """Rung 30's schedule, with B in one load per K tile where N is a multiple of 64 (past N a 3-D box
    would read the next row of B, where a 2-D box reads zeros)."""
    return {**_split_select(M, N, K, sm_count, rest), "B3D": int(N % 64 == 0)}


def _b3d_explain(M: int, N: int, K: int, sm_count: int, p: Params) -> str:
    chunks = b_box_chunks(p)
    if chunks > 1:
        loads = f"B in one TMA load of {chunks} 64-column boxes a K tile"
    elif b_box_rows(p) < 64:
        loads = f"B's 64-column box in {64 // b_box_rows(p)} loads of {b_box_rows(p)} k rows a K tile"
    elif p.get("B3D"):
        loads = "B in one load of its one 64-column box a K tile"
    else:
        loads = "B in one load per 64-column box" + (f" (N = {N} is not a multiple of 64)" if N % 64 else "")
    return f"{_split_explain(M, N, K, sm_count, p)}; {loads}"


def _with_gemv_select(select):
    """A few-tile rung's selection (rungs 30-33) with GEMV = 1 where M or N is 1: the driver then runs
    gemv16_rows or gemv16_cols (cuda_src/gemv16.cuh) in place of the tiles, which stay chosen, so the rung's
    grid and shared memory stay defined. A decision by the shape (gemmbench.rungs.gemv)."""
    def chosen(M: int, N: int, K: int, sm_count: int, rest: Params) -> dict:
        return {**select(M, N, K, sm_count, rest), **({"GEMV": 1} if gemv.applies(M, N) else {})}
    return chosen


def _with_gemv(explain, precision: str):
    def line(M: int, N: int, K: int, sm_count: int, p: Params) -> str:
        return gemv.explain(M, N, sm_count, precision) if p.get("GEMV") else explain(M, N, K, sm_count, p)
    return line


def _ws_record(id: int, name: str, summary: str, source: str, precision: str, bf16: int, cluster: int = 0,
               smem=_ws_smem, driver: str = "tma16", split: bool = False, b3d: bool = False,
               **extra) -> KernelSpec:
    """A wgmma + TMA rung (22-33); ``cluster``: blocks per cluster sharing B (0: no clusters); ``split``:
    K split across a cluster's two blocks where the shape has few tiles (KSPLIT, rungs 30-33); ``b3d``: each
    K tile of B in one TMA load where N allows it (B3D, rungs 32-33)."""
    rest = {"STAGES": 4, "GROUP_M": 8, "PERSISTENT": 1, **({"CLUSTER": cluster} if cluster else {}),
            **({"KSPLIT": 1} if split else {}), **({"B3D": 1} if b3d else {}), "BF16": bf16}
    space = {"BM": [64, 128, 192], "BN": [64, 128, 256], "STAGES": [3, 4, 5, 6, 8], "GROUP_M": [4, 8, 16],
             "PERSISTENT": [0, 1], **({"CLUSTER": [1, 2, 4] if split else [2, 4]} if cluster else {}),
             **({"KSPLIT": [1, 2, 4, 8, 16]} if split else {}), **({"B3D": [0, 1]} if b3d else {})}
    base_check = _check_split if split else _check_cluster if cluster else _check_ws

    def check(p: Params) -> str | None:
        return base_check(p, smem) or (_check_b3d(p) if b3d else None)
    select = _b3d_select if b3d else _split_select if split else _ws_select
    if split:  # rungs 30-33: the GEMV path where M or N is 1 (gemmbench.rungs.gemv), read by the driver
        extra = {**extra, "runtime_params": gemv.RUNTIME, "explain": _with_gemv(extra["explain"], precision)}
        select = _with_gemv_select(select)
    return KernelSpec(
        id, name, "gpu", summary, source=source, params={"BM": 128, "BN": 256, **rest}, search_space=space,
        check=check,
        constraints=_WS_CONSTRAINTS + (f"; CLUSTER in {{{'1,' if split else ''}2,4}} divides BN/64" if cluster else "")
        + ("; the smem also holds 1 KiB of barriers and 16 KiB of staged C per consumer warpgroup"
           if smem in (_store_smem, _split_smem) else "")
        + ("; KSPLIT = CLUSTER = S in 2..8 (K split in a cluster): BN 128, PERSISTENT 0, and smem for the sums sent "
           "and received (2 (S-1) x BM x the widest slice of ceil(BN/8/S) 8-column groups x 4 bytes); KSPLIT > 2 "
           "with CLUSTER 1: through partials" if split else "")
        + ("; B3D 1 (B's boxes in one load) needs N a multiple of 64" if b3d else ""),
        block=lambda p: (128 * (p["BM"] // 64) + 128, 1, 1), grid=_split_grid if split else _ws_grid, smem=smem,
        driver=driver, select=lambda M, N, K, sms: select(M, N, K, sms, rest),
        arch_specific=True, precision=precision, min_cc=(8, 0),
        fallback=_hm_record(id, name, "mma.sync fallback (no wgmma on this GPU)", source, precision, bf16), **extra)


HALF_RUNGS: tuple[KernelSpec, ...] = (
    *(_hm_record(20 + (1 - bf16), f"{label} mma.sync", "16-bit tensor cores: mma.sync m16n8k16 on ldmatrix "
                 "fragments, FP32 accumulators, a cp.async ring into XOR-swizzled shared memory",
                 "20_half_mma_sync.cu", name, bf16) for name, label, bf16 in _TYPES),
    *(_ws_record(22 + (1 - bf16), f"{label} TMA warp-specialized",
                 "wgmma with both operands in shared memory (B through the transpose mode), fed by TMA into an "
                 "mbarrier ring; a producer warpgroup issues the loads, BM/64 consumer warpgroups (setmaxnreg) the "
                 "wgmmas; a persistent grid; tiles per shape (mma.sync off Hopper)",
                 "22_half_tma_ws.cu", name, bf16) for name, label, bf16 in _TYPES),
    *(_ws_record(24 + (1 - bf16), f"{label} TMA multicast",
                 "rung 22 in clusters of CLUSTER blocks stacked along M that share each B tile: every block loads "
                 "its A and 1/CLUSTER of B, multicast into all, so L2 serves a quarter fewer bytes "
                 "(mma.sync off Hopper)",
                 "24_half_tma_multicast.cu", name, bf16, cluster=2) for name, label, bf16 in _TYPES),
    *(_ws_record(26 + (1 - bf16), f"{label} TMA store", "rung 24 with a TMA-store epilogue: each consumer "
                 "warpgroup rounds its results into swizzled shared memory, 64 columns at a time, and TMA writes "
                 "them to C while the warpgroup starts its next tile (mma.sync off Hopper)",
                 "26_half_tma_store.cu", name, bf16, cluster=2, smem=_store_smem, driver="tma16_store")
      for name, label, bf16 in _TYPES),
    *(_ws_record(30 + (1 - bf16), f"{label} few-tile schedules", "rung 26 where a shape has too few C tiles "
                 "for a second wave: no clusters, or for long K the two to four blocks of a cluster compute one "
                 "tile over their parts of K and add their sums in distributed shared memory, or more parts add "
                 "theirs through global memory (mma.sync off Hopper)",
                 "30_half_split_k.cu", name, bf16, cluster=2, smem=_split_smem, driver="tma16_store", split=True,
                 explain=_split_explain)
      for name, label, bf16 in _TYPES),
    *(_ws_record(32 + (1 - bf16), f"{label} one-load B", "rung 30 with each K tile of B in one TMA load: a 3-D "
                 "view of B, 64-column chunks side by side, lets one instruction fetch the BN/64 boxes that rung 30 "
                 "issues one by one, where N is a multiple of 64 (mma.sync off Hopper)",
                 "32_half_b_one_load.cu", name, bf16, cluster=2, smem=_split_smem, driver="tma16_store", split=True,
                 b3d=True, explain=_b3d_explain)
      for name, label, bf16 in _TYPES),
)
