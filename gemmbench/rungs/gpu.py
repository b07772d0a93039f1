"""The GPU ladder: one KernelSpec record per rung (sources in ``cuda_src/``),
with the parameter constraints of each rung family."""

from __future__ import annotations

from ..spec import Dim3, KernelSpec, Params, ceil_div
from . import any_shape, multistage, tma_choice
from .half import HALF_BASELINES, HALF_RUNGS
from .limits import SMEM_DEFAULT_PER_BLOCK, SMEM_PER_BLOCK_MAX, register_budget, spill_reason


def _tile_grid(bm: str, bn: str):
    """Grid for kernels whose block computes a BM x BN tile of C: x over N, y over M."""
    return lambda M, N, K, p: (ceil_div(N, p[bn]), ceil_div(M, p[bm]), 1)


def _threads(p: Params) -> Dim3:
    return (p["NUM_THREADS"], 1, 1)


def _blocktile_threads(p: Params) -> Dim3:
    return (p["BM"] * p["BN"] // (p["TM"] * p["TN"]), 1, 1)


def _check_blocktile(p: Params) -> str | None:
    """Constraints of the 2-D blocktiling family (rungs 5-9)."""
    threads = p["BM"] * p["BN"] // (p["TM"] * p["TN"])
    if p["BM"] % p["TM"] or p["BN"] % p["TN"]:
        return "BM must be a multiple of TM and BN of TN"
    if threads % 32 or not 64 <= threads <= 1024:
        return f"{threads} threads: need a multiple of 32 between 64 and 1024"
    if (p["BM"] * p["BK"]) % (4 * threads) or (p["BN"] * p["BK"]) % (4 * threads):
        return "each thread must load a whole number of float4s of the A and B tiles"
    if p["BK"] % 4 or p["TN"] % 4:
        return "BK and TN must be multiples of 4 (float4 access)"
    smem = 4 * p["BK"] * (p["BM"] + p["BN"])
    if smem > SMEM_DEFAULT_PER_BLOCK:
        return f"{smem} bytes of static shared memory exceed 48 KiB"
    return None


def _register_budget_reason(threads: int, accumulators: int, fragments: int, staged: int,
                            staged_during_fma: bool) -> str | None:
    """A rough register count, so a tuner skips shapes that would spill.

    Per thread: the accumulators, the A and B fragments of one k-slice, and the
    float4s of a tile on their way from global to shared memory, which cost
    about 1.5 registers per float (the value plus its address). The staged
    values are live during the FMA loop only when the next tile is prefetched
    (double buffering); otherwise they are live only next to the accumulators.
    """
    staging = 3 * staged // 2
    need = accumulators + 16 + (fragments + staging if staged_during_fma else max(fragments, staging))
    return spill_reason(need, register_budget(threads))


def _check_autotuned(p: Params) -> str | None:
    """Rung 9: the blocktiling constraints plus a register budget (a tuner explores it)."""
    reason = _check_blocktile(p)
    if reason:
        return reason
    threads = p["BM"] * p["BN"] // (p["TM"] * p["TN"])
    return _register_budget_reason(threads, p["TM"] * p["TN"], p["TM"] + p["TN"],
                                   p["BK"] * (p["BM"] + p["BN"]) // threads, staged_during_fma=False)


def _check_warptile(p: Params) -> str | None:
    """Constraints of the warptiling family (rungs 10-11)."""
    warps = p["NUM_THREADS"] // 32
    if p["NUM_THREADS"] % 32:
        return "NUM_THREADS must be a multiple of 32"
    if p["BM"] % p["WM"] or p["BN"] % p["WN"]:
        return "BM must be a multiple of WM and BN of WN"
    if (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) != warps:
        return "the warptiles must cover the blocktile exactly, one per warp"
    wsub_n = p["WN"] // p["WNITER"]
    if p["WN"] % p["WNITER"] or wsub_n % p["TN"]:
        return "WN/WNITER must be a multiple of TN"
    wmiter = (p["WM"] * p["WN"]) // (32 * p["TM"] * p["TN"] * p["WNITER"])
    if wmiter < 1 or p["WM"] % wmiter or (p["WM"] // wmiter) % p["TM"]:
        return "a warp's 32 threads must tile its warptile in TM x TN pieces"
    if (wsub_n // p["TN"]) * ((p["WM"] // wmiter) // p["TM"]) != 32:
        return "a warp subtile must hold exactly 32 thread tiles"
    if (p["BM"] * p["BK"]) % (4 * p["NUM_THREADS"]) or (p["BN"] * p["BK"]) % (4 * p["NUM_THREADS"]):
        return "each thread must load a whole number of float4s of the A and B tiles"
    if p["TM"] % 4 or p["TN"] % 4 or p["BK"] % 4:
        return "TM, TN and BK must be multiples of 4 (float4 access)"
    return _warptile_resources_reason(p, buffers=1)


def _warptile_resources_reason(p: Params, buffers: int) -> str | None:
    """Shared memory (per buffer set) and registers of a valid warptile shape."""
    smem = buffers * 4 * p["BK"] * (p["BM"] + p["BN"])
    if smem > SMEM_DEFAULT_PER_BLOCK:
        return f"{smem} bytes of static shared memory exceed 48 KiB"
    wmiter = (p["WM"] * p["WN"]) // (32 * p["TM"] * p["TN"] * p["WNITER"])
    fragments = buffers * (wmiter * p["TM"] + p["WNITER"] * p["TN"])  # double buffering doubles them too
    return _register_budget_reason(p["NUM_THREADS"], p["WM"] * p["WN"] // 32, fragments,
                                   p["BK"] * (p["BM"] + p["BN"]) // p["NUM_THREADS"],
                                   staged_during_fma=buffers == 2)


def _check_double_buffered(p: Params) -> str | None:
    """Rung 11: the warptiling constraints with two shared buffers and a prefetched tile in registers."""
    return _check_warptile(p) or _warptile_resources_reason(p, buffers=2)


# --- tensor cores (rungs 14-18; the TMA rungs 16-18 add their rules below) ---
# On Hopper (sm_90a): wgmma, one warpgroup per 64 columns of C, the C tile
# computed transposed (B is the register operand, A the shared-memory one),
# a 1-D grid over BM x BN tiles. Elsewhere: the mma.sync fallback of
# tf32_mma_sync.cuh with its own TC_ parameters and a 2-D grid.

def _wgmma_block(p: Params) -> Dim3:
    return (128 * (p["BN"] // 64), 1, 1)


def _wgmma_grid(M: int, N: int, K: int, p: Params) -> Dim3:
    return (ceil_div(M, p["BM"]) * ceil_div(N, p["BN"]), 1, 1)


def _wgmma_smem(p: Params, a_tiles: int = 1) -> int:
    """STAGES ring slots of the A tile(s) (BM x BK) and the padded B tile
    (BK x (BN + 8)), plus 1 KiB to align the ring to 1024 bytes (swizzle)."""
    return p["STAGES"] * (a_tiles * p["BM"] * p["BK"] + p["BK"] * (p["BN"] + 8)) * 4 + 1024


_WGMMA_BMS = (64, 128, 192, 256)
_THIN_WGMMA_BMS = (16, 32) + _WGMMA_BMS  # rungs 17 and 18's thin tiles (M <= 32)


def _check_wgmma(p: Params, bms=_WGMMA_BMS) -> str | None:
    if p["BN"] % 64 or not 1 <= p["BN"] // 64 <= 4:
        return "BN must be 64..256 in steps of 64 (one warpgroup per 64 columns)"
    if p["BM"] not in bms:
        return f"BM (the wgmma N) must be {', '.join(map(str, bms[:-1]))} or {bms[-1]}"
    if p["BK"] not in (16, 32):
        return "BK must be 16 (64-byte swizzle) or 32 (128-byte swizzle)"
    if p["STAGES"] < 3:
        return "STAGES must be at least 3"
    if p["BN"] > 128 and p["BM"] > 128:
        return "more than 2 warpgroups leave too few registers for BM/2 accumulators"
    if _wgmma_smem(p) > SMEM_PER_BLOCK_MAX:
        return f"{_wgmma_smem(p)} bytes of shared memory exceed 227 KiB"
    return None


def _check_3xtf32_wgmma(p: Params) -> str | None:
    reason = _check_wgmma(dict(p, STAGES=3))
    if reason:
        return reason
    if p["STAGES"] < 3:
        return "STAGES must be at least 3"
    if p["FLUSH"] < 1 or p["FLUSH"] * p["BK"] > 64:
        return "FLUSH*BK must be 1..64: tensor-core partial sums of at most 64 terms keep FP32 accuracy"
    if p["BN"] != 128:
        return "BN must be 128 (the second accumulator set needs the 255-register cap)"
    if p["BM"] > 192 or (p["BM"] == 192 and p["BK"] == 32):
        return "BM <= 192 (BK=16 at 192): accumulators and partial sums must fit in registers"
    if _wgmma_smem(p, 2) > SMEM_PER_BLOCK_MAX:
        return f"{_wgmma_smem(p, 2)} bytes of shared memory exceed 227 KiB"
    return None


def _tc_threads(p: Params) -> int:
    return (p["TC_BM"] // p["TC_WM"]) * (p["TC_BN"] // p["TC_WN"]) * 32


def _tc_smem_bytes(p: Params, three: bool) -> int:
    """Static shared memory: TC_STAGES x (A tile [twice for 3xTF32: big and small] + B tile)."""
    return 4 * p["TC_STAGES"] * p["TC_BK"] * ((2 if three else 1) * p["TC_BM"] + p["TC_BN"])


def _check_tc(p: Params, three: bool) -> str | None:
    """The mma.sync fallback's constraints, with a register estimate fitted to ptxas 13.0."""
    bm, bn, bk, wm, wn = p["TC_BM"], p["TC_BN"], p["TC_BK"], p["TC_WM"], p["TC_WN"]
    if bm % wm or bn % wn:
        return "TC_BM must be a multiple of TC_WM and TC_BN of TC_WN"
    if wm % 16 or wn not in (32, 64):
        return "TC_WM must be a multiple of 16 and TC_WN 32 or 64"
    if bk % 16 or bn % 32:
        return "TC_BK must be a multiple of 16 and TC_BN of 32"
    if p["TC_STAGES"] < 2:
        return "TC_STAGES must be at least 2"
    threads = _tc_threads(p)
    if not 128 <= threads <= 1024:
        return f"{threads} threads: need 4 to 32 warps (ptxas spills the 2-warp shapes)"
    a_chunks, b_chunks = bm * bk // 4, bk * bn // 4
    if a_chunks % threads or b_chunks % threads:
        return "each thread must copy a whole number of 16-byte chunks of the A and B tiles"
    smem = _tc_smem_bytes(p, three)
    if smem > SMEM_DEFAULT_PER_BLOCK:
        return f"{smem} bytes of static shared memory exceed 48 KiB"
    # accumulators (twice with 3xTF32's per-tile flush), one k-group of fragments, ~5 per 16-byte copy of a stage
    flush = three and p.get("TC_FLUSH", 1) != 0
    need = (wm * wn // 32 * (2 if flush else 1) + (wm // 16) * (16 if three else 8) + (wn // 8) * 4
            + 5 * ((2 if three else 1) * a_chunks + b_chunks) // threads + 16)
    return spill_reason(need, register_budget(threads))


_TC_SPACE = {"TC_BM": [64, 128, 256], "TC_BN": [64, 128, 256], "TC_BK": [16, 32],
             "TC_WM": [32, 64], "TC_WN": [32, 64], "TC_STAGES": [2, 3, 4], "TC_GROUP": [1, 8]}
_TC_CONSTRAINTS = ("threads = (TC_BM/TC_WM)*(TC_BN/TC_WN)*32 in 128..1024; TC_WM % 16 == 0, TC_WN in {32, 64}; "
                   "TC_BK % 16 == 0; whole 16-byte chunks per thread; static smem <= 48 KiB; registers fit")


def _mma_sync_fallback(id: int, name: str, source: str, precision: str, driver: str, three: bool,
                       params: Params) -> "KernelSpec":
    """The record a wgmma rung runs as without sm_90a: same source, its mma.sync branch."""
    return KernelSpec(id, name, "gpu", "mma.sync fallback (no wgmma on this GPU)", source=source, params=params,
                      search_space=_TC_SPACE,
                      check=lambda p: _check_tc(p, three), constraints=_TC_CONSTRAINTS,
                      block=lambda p: (_tc_threads(p), 1, 1),
                      grid=lambda M, N, K, p: (ceil_div(N, p["TC_BN"]), ceil_div(M, p["TC_BM"]), 1),
                      driver=driver, precision=precision, min_cc=(8, 0))


# --- TMA rungs (16-18): tensor maps, an mbarrier ring, warp specialization --------
_TC_TF32_FALLBACK = {"TC_BM": 128, "TC_BN": 128, "TC_BK": 16, "TC_WM": 64, "TC_WN": 64, "TC_STAGES": 3, "TC_GROUP": 8}
_TMA_CONSTRAINTS = "as rung 14; smem = STAGES*(BM+BN)*BK*4 + 1 KiB <= 227 KiB"
def _split_grid(M: int, N: int, K: int, p: Params) -> Dim3:
    """Rungs 17 and 18: one unit per C tile and K split (a persistent grid walks them); with A and B
    swapped (SWAP_AB) the tiles are those of C^T."""
    if p.get("SWAP_AB"):
        M, N = N, M
    return (ceil_div(M, p["BM"]) * ceil_div(N, p["BN"]) * p.get("SPLITS", 1), 1, 1)


def _check_17(p: Params) -> str | None:
    if p.get("SPLITS", 1) < 1:
        return "SPLITS must be at least 1"
    if p.get("B3D", 0) not in (0, 1):
        return "B3D must be 0 or 1"
    return _check_tma(p, bms=_THIN_WGMMA_BMS)


# Rungs 17 and 18's per-shape choices: their measured tables (gemmbench tune --shapes), else their rules.
# A tune of rung 17 tries 192-row tiles too (not in the rule's TILES): where 128-row tiles leave a short last
# wave and 256-row ones too few tiles (H200, 2048 x 3072 x 1024: 264 tiles, two whole waves; 87.2% of cuBLAS
# TF32 with 128 x 128 tiles, 103-105% with 192 x 128). At the large squares they lost (4096^3 81.7% against 90.4).
R17_CHOICE = tma_choice.per_shape("17_tf32_tma_ws.cu", "tf32_tma_ws_h200.json",
                                  {"BK": 32, "STAGES": 4, "GROUP_M": 8, "PERSISTENT": 1, "PAIR_COLS": 1}, _check_17,
                                  tma_choice.TILES, split=True, bms=(16, 32, 64, 128, 192, 256), b3d=True)


def _tma_smem(p: Params, a_sources: int = 1) -> int:
    """STAGES ring slots of the A box(es) (BM x BK) and the B boxes (BK x BN, unpadded), 1 KiB to align
    the ring to 1024 bytes (swizzle), two 8-byte mbarriers per slot."""
    return p["STAGES"] * (a_sources * p["BM"] + p["BN"]) * p["BK"] * 4 + 1024 + 16 * p["STAGES"]


def _check_tma(p: Params, a_sources: int = 1, bms=_WGMMA_BMS) -> str | None:
    reason = _check_wgmma(dict(p, STAGES=3), bms)  # rung 14's tile rules (its padded-B shared memory is checked at 3 stages)
    if reason:
        return reason
    if p["STAGES"] < 3:
        return "STAGES must be at least 3"
    if _tma_smem(p, a_sources) > SMEM_PER_BLOCK_MAX:
        return f"{_tma_smem(p, a_sources)} bytes of shared memory exceed 227 KiB"
    return None


def _check_3xtf32_tma(p: Params) -> str | None:
    if p.get("SPLITS", 1) < 1:
        return "SPLITS must be at least 1"
    if p.get("SWAP_AB", 0) not in (0, 1):
        return "SWAP_AB must be 0 or 1"
    if p.get("SWAP_AB") and p["BK"] != 32:
        return "SWAP_AB = 1 needs BK = 32 (A's boxes are 32 rows of 128 bytes)"
    reason = _check_tma(p, a_sources=2, bms=_THIN_WGMMA_BMS)
    if reason:
        return reason
    if p["BM"] > 128:
        return "BM <= 128: accumulators and partial sums (BM registers per thread) must fit in 232"
    if p["FLUSH"] < 1 or p["FLUSH"] * p["BK"] > 64:
        return "FLUSH*BK must be 1..64: tensor-core partial sums of at most 64 terms keep FP32 accuracy"
    return None


# Rung 18's tensor-core partial sums: 64 terms (FLUSH = 2 K tiles of 32) from K = 2048, else 32. The FP32 adds
# that fold a partial sum in wait on its wgmmas, so each flush stalls the tensor cores (H200: FLUSH = 2 ran 5-7%
# faster at 2048^3, 4096^3, 8192^3 and 4096x4096x16384); 64 terms kept the error 4-7x under cuBLAS SGEMM's at
# K = 4096, 8192 and 16384, but at 512^3 it was 1.36e-7 against SGEMM's 9.0e-8 (32 terms: 7.9e-8).
FLUSH2_MIN_K = 2048
R18_FLUSH = tma_choice.ByK("FLUSH", 1, 2, FLUSH2_MIN_K,
                           "tensor-core partial sums folded into FP32 every {} K tile(s)")


R18_CHOICE = tma_choice.per_shape("18_3xtf32_tma_ws.cu", "3xtf32_tma_ws_h200.json",
                                  {"BK": 32, "STAGES": 4, "GROUP_M": 8, "PERSISTENT": 1, "FLUSH": 1, "SWAP_AB": 0},
                                  _check_3xtf32_tma, tma_choice.TILES_3XTF32, split=True, bms=(16, 32, 64, 128),
                                  splits_a=True, by_k=R18_FLUSH)


def _split_k_build(p: Params) -> Params:
    """Rung 18 compiles its split loop only into builds that split (SPLIT_K = 1); SWAP_AB is its own define."""
    return {"SPLIT_K": int(p.get("SPLITS", 1) > 1)}


_BLOCKTILE_SPACE = {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [8, 16, 32],
                    "TM": [4, 8, 16], "TN": [4, 8, 16]}
_WARPTILE_SPACE = {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [8, 16, 32],
                   "WM": [32, 64, 128], "WN": [32, 64, 128], "WNITER": [1, 2, 4],
                   "TM": [4, 8], "TN": [4, 8], "NUM_THREADS": [128, 256]}

_BLOCKTILE = dict(block=_blocktile_threads, grid=_tile_grid("BM", "BN"), check=_check_blocktile,
                  constraints="threads=BM*BN/(TM*TN) in 64..1024; float4 tile loads; smem <= 48 KiB")
_WARPTILE = dict(block=_threads, grid=_tile_grid("BM", "BN"), check=_check_warptile,
                 constraints="warps tile BMxBN in WMxWN warptiles; 32 TMxTN thread tiles per warp subtile; "
                             "smem <= 48 KiB; registers fit without spilling")

# In id order (a stable sort: the library rows first, as listed), as list, info and the tables show them.
GPU_LADDER: tuple[KernelSpec, ...] = tuple(sorted((
    KernelSpec(0, "cuBLAS", "gpu", "the library baseline: cublasSgemm through scikit-cuda"),
    KernelSpec(0, "cuBLAS TF32", "gpu", "the tensor-core baseline: cublasSgemm with CUBLAS_TF32_TENSOR_OP_MATH set on its handle",
               precision="tf32"),
    *HALF_BASELINES,
    KernelSpec(1, "naive", "gpu", "one thread per element of C; neighbouring threads walk down a column",
               source="01_naive.cu", params={"BLOCK": 32},
               block=lambda p: (p["BLOCK"], p["BLOCK"], 1),
               grid=lambda M, N, K, p: (ceil_div(M, p["BLOCK"]), ceil_div(N, p["BLOCK"]), 1)),
    KernelSpec(2, "gmem coalescing", "gpu", "neighbouring threads take neighbouring columns, so warps read B and write C coalesced",
               source="02_coalesced.cu", params={"BLOCK": 32},
               block=lambda p: (p["BLOCK"] * p["BLOCK"], 1, 1),
               grid=lambda M, N, K, p: (ceil_div(M, p["BLOCK"]), ceil_div(N, p["BLOCK"]), 1)),
    KernelSpec(3, "smem blocking", "gpu", "32x32 tiles of A and B staged in shared memory and reused 32 times",
               source="03_smem_blocking.cu", params={"BLOCK": 32},
               block=lambda p: (p["BLOCK"] * p["BLOCK"], 1, 1), grid=_tile_grid("BLOCK", "BLOCK")),
    KernelSpec(4, "1D blocktiling", "gpu", "each thread computes a column of TM results, reusing each B value TM times",
               source="04_blocktiling_1d.cu", params={"BM": 64, "BN": 64, "BK": 8, "TM": 8},
               block=lambda p: (p["BM"] * p["BN"] // p["TM"], 1, 1), grid=_tile_grid("BM", "BN"),
               constraints="BM*BK == BN*BK == threads (one element per thread per load)"),
    KernelSpec(5, "2D blocktiling", "gpu", "each thread computes a TMxTN tile from register-cached A and B fragments",
               source="05_blocktiling_2d.cu", params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
               **_BLOCKTILE),
    KernelSpec(6, "vectorized", "gpu", "float4 global loads and stores; A stored transposed in shared memory",
               source="06_vectorized.cu", params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
               **_BLOCKTILE),
    KernelSpec(7, "bank conflicts (linearize)", "gpu", "B tile re-laid out in shared memory so a warp's loads hit distinct banks",
               source="07_bank_linearize.cu", params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
               **_BLOCKTILE),
    KernelSpec(8, "bank conflicts (padding)", "gpu", "shared-memory rows padded so transposed stores spread over banks",
               source="08_bank_padding.cu", params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
               **_BLOCKTILE),
    KernelSpec(9, "autotuned", "gpu", "rung 6's kernel with its -D tile sizes picked by a search (constraints and a register budget keep every candidate valid)",
               source="09_autotuned.cu", params={"BM": 128, "BN": 128, "BK": 16, "TM": 8, "TN": 8},
               search_space=_BLOCKTILE_SPACE,
               **{**_BLOCKTILE, "check": _check_autotuned,
                  "constraints": _BLOCKTILE["constraints"] + "; registers fit without spilling"}),
    KernelSpec(10, "warptiling", "gpu", "a warp owns a WMxWN subtile, so its shared-memory reads stay in one bank pattern and registers are reused",
               source="10_warptiling.cu",
               params={"BM": 128, "BN": 128, "BK": 16, "WM": 64, "WN": 64, "WNITER": 4, "TM": 8, "TN": 4, "NUM_THREADS": 128},
               search_space=_WARPTILE_SPACE, **_WARPTILE),
    KernelSpec(11, "double buffering", "gpu", "two shared-memory buffers and two register fragments: the next tile loads while this one computes",
               source="11_double_buffering.cu",
               params={"BM": 128, "BN": 128, "BK": 16, "WM": 64, "WN": 64, "WNITER": 4, "TM": 8, "TN": 4, "NUM_THREADS": 128},
               search_space=_WARPTILE_SPACE,
               **{**_WARPTILE, "check": _check_double_buffered,
                  "constraints": _WARPTILE["constraints"] + "; two shared buffers within 48 KiB"}),
    KernelSpec(12, "multistage cp.async", "gpu", "a 3-stage cp.async ring straight into XOR-swizzled shared memory (no bank conflicts), 256x128 tiles of 8x16 per thread",
               source="12_multistage.cu", params=dict(multistage.R12_DEFAULT),
               search_space=multistage.SEARCH_SPACE, check=multistage.check, constraints=multistage.CONSTRAINTS,
               block=multistage.block, grid=multistage.grid, smem=multistage.smem, min_cc=(8, 0)),
    KernelSpec(13, "shape adaptive", "gpu", "rung 12's loop with tiles and split-K chosen per shape, so small shapes fill the SMs",
               source="13_shape_adaptive.cu", params={**multistage.CONFIGS["large"], "SPLITS": 1},
               search_space=multistage.SEARCH_SPACE_13, check=multistage.check,
               constraints=multistage.CONSTRAINTS + "; SPLITS >= 1", block=multistage.block, grid=multistage.grid,
               smem=multistage.smem, driver="split_k", select=multistage.select, min_cc=(8, 0)),
    KernelSpec(14, "TF32 wgmma", "gpu", "tensor cores: wgmma on TF32-rounded inputs, fed by a cp.async ring into swizzled shared memory (mma.sync off Hopper)",
               source="14_tf32_wgmma.cu", params={"BM": 256, "BN": 128, "BK": 32, "STAGES": 4, "GROUP_M": 8},
               search_space={"BM": [128, 192, 256], "BN": [128], "BK": [16, 32], "STAGES": [3, 4, 6, 8],
                             "GROUP_M": [4, 8, 16]},
               check=_check_wgmma, constraints="BM in {64,128,192,256}; BN = 64 per warpgroup; BK in {16,32}; "
                                               "STAGES >= 3; smem <= 227 KiB",
               block=_wgmma_block, grid=_wgmma_grid, smem=_wgmma_smem, arch_specific=True, precision="tf32",
               min_cc=(8, 0),
               fallback=_mma_sync_fallback(14, "TF32 wgmma", "14_tf32_wgmma.cu", "tf32", "single", False,
                                           {"TC_BM": 128, "TC_BN": 128, "TC_BK": 16, "TC_WM": 64, "TC_WN": 64,
                                            "TC_STAGES": 3, "TC_GROUP": 8})),
    KernelSpec(15, "3xTF32 wgmma", "gpu", "FP32 accuracy from TF32 tensor cores: x = big + small, three wgmmas per step, partial sums flushed into FP32",
               source="15_3xtf32_wgmma.cu", params={"BM": 192, "BN": 128, "BK": 16, "STAGES": 6, "FLUSH": 2, "GROUP_M": 8},
               search_space={"BM": [128, 192], "BN": [128], "BK": [16, 32], "STAGES": [3, 4, 5, 6, 8],
                             "FLUSH": [1, 2, 4], "GROUP_M": [8]},
               check=_check_3xtf32_wgmma,
               constraints="as rung 14, with BN = 128, BM <= 192 and FLUSH*BK <= 64",
               block=_wgmma_block, grid=_wgmma_grid, smem=lambda p: _wgmma_smem(p, 2), driver="presplit_a",
               arch_specific=True, precision="3xtf32", min_cc=(8, 0),
               fallback=_mma_sync_fallback(15, "3xTF32 wgmma", "15_3xtf32_wgmma.cu", "3xtf32", "presplit_a", True,
                                           {"TC_BM": 128, "TC_BN": 128, "TC_BK": 16, "TC_WM": 64, "TC_WN": 32,
                                            "TC_STAGES": 2, "TC_GROUP": 8, "TC_FLUSH": 1})),
    KernelSpec(16, "TF32 TMA", "gpu", "rung 14 with its tiles loaded by TMA (tensor maps passed by value) into an "
                                      "mbarrier ring: one thread moves a whole tile, no block-wide barrier",
               source="16_tf32_tma.cu", params={"BM": 256, "BN": 128, "BK": 32, "STAGES": 4, "GROUP_M": 8},
               search_space={"BM": [128, 192, 256], "BN": [64, 128], "BK": [16, 32], "STAGES": [3, 4, 6, 8],
                             "GROUP_M": [4, 8, 16]},
               check=_check_tma, constraints=_TMA_CONSTRAINTS,
               block=_wgmma_block, grid=_wgmma_grid, smem=_tma_smem, driver="tma",
               select=lambda M, N, K, sms: tma_choice.tile_rule(M, N, sms, {"BK": 32, "STAGES": 4, "GROUP_M": 8}),
               arch_specific=True, precision="tf32", min_cc=(8, 0),
               fallback=_mma_sync_fallback(16, "TF32 TMA", "16_tf32_tma.cu", "tf32", "single", False,
                                           dict(_TC_TF32_FALLBACK))),
    KernelSpec(17, "TF32 TMA warp-specialized", "gpu", "rung 16 with a producer warpgroup that only issues TMA "
                                                       "(setmaxnreg gives its registers to the consumers), a "
                                                       "persistent grid, each thread's two columns paired "
                                                       "(64-bit B fragment loads and C stores), and each K "
                                                       "tile of B in one load",
               source=R17_CHOICE.source,
               params={**dict(R17_CHOICE.rest), "BM": 256, "BN": 128, "SPLITS": 1, "B3D": 1},
               search_space={"BM": [16, 32, 64, 128, 192, 256], "BN": [64, 128], "BK": [16, 32],
                             "STAGES": [3, 4, 6, 8], "GROUP_M": [4, 8, 16], "PERSISTENT": [0, 1],
                             "PAIR_COLS": [0, 1], "B3D": [0, 1]},
               check=_check_17,
               constraints=_TMA_CONSTRAINTS + "; BM may also be 16 or 32 (thin tiles); PERSISTENT: one block per "
                                              "SM; PAIR_COLS: neighbouring columns per thread; SPLITS >= 1 (K "
                                              "slices, then reduce_splits); B3D: B's boxes in one load, N a "
                                              "multiple of 32",
               block=lambda p: (_wgmma_block(p)[0] + 128, 1, 1), grid=_split_grid, smem=_tma_smem,
               driver="tma", runtime_params=tma_choice.RUNTIME,
               select=R17_CHOICE.select, explain=R17_CHOICE.explain, shape_candidates=R17_CHOICE.shape_candidates,
               arch_specific=True, precision="tf32", min_cc=(8, 0),
               fallback=_mma_sync_fallback(17, "TF32 TMA warp-specialized", "17_tf32_tma_ws.cu", "tf32", "single",
                                           False, dict(_TC_TF32_FALLBACK))),
    KernelSpec(18, "3xTF32 TMA warp-specialized", "gpu", "rung 15's FP32-accurate 3xTF32 (A split per call, B split "
                                                         "in registers, partial sums flushed into FP32) on rung 17's "
                                                         "pipeline",
               source=R18_CHOICE.source,
               params={**dict(R18_CHOICE.rest), "BM": 128, "BN": 128, "SPLITS": 1},
               search_space={"BM": [16, 32, 64, 128], "BN": [64, 128], "BK": [16, 32], "STAGES": [3, 4, 6, 8],
                             "GROUP_M": [8, 16], "PERSISTENT": [0, 1], "FLUSH": [1, 2, 4], "SWAP_AB": [0, 1]},
               check=_check_3xtf32_tma,
               constraints=_TMA_CONSTRAINTS + " with two A boxes per slot; BM 16 to 128; FLUSH*BK <= 64; "
                                              "SPLITS >= 1 (K slices, then reduce_splits; a build of its own); "
                                              "SWAP_AB: C^T = B^T A^T (BM, BN tile C^T; needs BK = 32)",
               block=lambda p: (_wgmma_block(p)[0] + 128, 1, 1), grid=_split_grid,
               smem=lambda p: _tma_smem(p, a_sources=2), driver="tma", runtime_params=tma_choice.RUNTIME,
               derived_defines=_split_k_build,
               select=R18_CHOICE.select, explain=R18_CHOICE.explain, shape_candidates=R18_CHOICE.shape_candidates,
               arch_specific=True, precision="3xtf32", min_cc=(8, 0),
               fallback=_mma_sync_fallback(18, "3xTF32 TMA warp-specialized", "18_3xtf32_tma_ws.cu", "3xtf32",
                                           "presplit_a", True,
                                           {"TC_BM": 128, "TC_BN": 128, "TC_BK": 16, "TC_WM": 64, "TC_WN": 32,
                                            "TC_STAGES": 2, "TC_GROUP": 8, "TC_FLUSH": 1})),
    KernelSpec(19, "k-major A", "gpu", "rung 12 with A transposed once per call by a pre-pass, so both tiles are k-major and a k-slice's "
                                     "fragments take TM+TN registers instead of 4*TM+TN; 128x128 or 64x128 tiles per shape",
               source="19_kmajor_a.cu", params=dict(multistage.R19_DEFAULT),
               search_space=multistage.SEARCH_SPACE_19, check=multistage.check_19,
               constraints=multistage.CONSTRAINTS_19, block=multistage.block, grid=multistage.grid,
               smem=multistage.smem, driver="transpose_a", select=multistage.select_19, min_cc=(8, 0)),
    *HALF_RUNGS,  # the BF16 and FP16 ladder (rungs/half.py)
    KernelSpec(28, "any shape", "gpu", "the FP32 top for every shape: rung 19's k-major loop or rung 12's, the tile "
                                       "(thin ones too), split-K and padded copies of rows that are not 16-byte "
                                       "multiples, all chosen per shape (footer and info say which and why)",
               source=any_shape.SOURCE, params=dict(any_shape.DEFAULT), search_space=any_shape.SEARCH_SPACE,
               check=any_shape.check, constraints=any_shape.CONSTRAINTS, block=any_shape.block,
               grid=any_shape.grid, smem=any_shape.smem, driver="any_shape", select=any_shape.select,
               explain=any_shape.explain, runtime_params=any_shape.RUNTIME,
               shape_candidates=any_shape.shape_candidates, min_cc=(8, 0)),
), key=lambda s: s.id))

