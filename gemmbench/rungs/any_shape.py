"""Rung 28, the FP32 top rung for every shape: its compiled configurations,
constraints and per-shape choice (``cuda_src/28_any_shape.cu``).

A choice is one of CONFIGS (the loop and the tile) plus SPLITS (K slices,
grid z) and PACK (1: the "any_shape" driver pads the rows of an operand that
are not a multiple of 16 bytes, so the loop copies 16 bytes at a time; 0: the
loop copies such rows 4 bytes at a time (copy4.cuh), which saves the copy's
launch and wins at small shapes).
Both are read by the driver, not compiled in. ``select`` picks the
choice measured fastest at that shape when the shipped table holds it
(``any_shape_h200.json``, a gemmbench.rungs.choice_table made by ``gemmbench
tune -i 28 --shapes ... --table``, the command in the file; used on a GPU
with the same SM count, while the rung's source is the one it was measured
on), else the one with the least estimated time (``estimate``); ``explain``
says which and why in one line. Pure Python: nothing here touches the GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..spec import Params
from . import gemv, multistage

# The loops: KMAJOR_A=1 is rung 19's (A transposed by a pre-pass), 2 the same with A transposed by the
# kernel's threads (kmajor_loop.cuh's kAInPlace), 0 rung 12's (A read in place, row-major tiles).
# VECTOR=1 (M <= 8) replaces the tiles by one pass over B; its tile parameters are unused (kept so
# every configuration has the same names). (A VECTOR=2 for N <= 8, a warp per row of A, ran slower
# than the 128x16 tiles at 4096x1x4096 on the H200, 48 against 33 us, and was dropped.)
CONFIGS: dict[str, Params] = {
    "k-major 128x128": dict(multistage.R19_CONFIGS["large"], KMAJOR_A=1, VECTOR=0),
    "k-major 64x128": dict(multistage.R19_CONFIGS["small"], KMAJOR_A=1, VECTOR=0),
    # the same loop with A read in place and transposed by the threads on its way into shared memory: no
    # pre-pass (two passes over A, which cost most where N is small or K long), but a loop ~9% slower (H100,
    # 4096^3). Its 128x128 tiles were no faster than these at 4096^3 and slower at the skinny and long-K
    # shapes where the loop pays (4096x256x4096, 4096x128x4096, 512x512x32768), so only these are compiled.
    "in-kernel k-major 64x128": dict(multistage.R19_CONFIGS["small"], KMAJOR_A=2, VECTOR=0),
    # ... and 128x64 tiles for narrow N (tried where N <= 128: NARROW_ONLY), built for 3 blocks an SM (164
    # registers; for 4 it spills). H200, 8192x64x8192 in 6 splits: 206 us against 221 for the 64x64 row-major
    # tiles (the tune of the twenty-fourth session), 0.98 of SGEMM against 0.92
    "in-kernel k-major 128x64": dict(BM=128, BN=64, BK=16, TM=8, TN=8, NUM_THREADS=128, STAGES=4, MIN_BLOCKS=3,
                                     KMAJOR_A=2, VECTOR=0),
    "row-major 128x128": dict(multistage.CONFIGS["medium"], KMAJOR_A=0, VECTOR=0),
    "row-major 64x64": dict(multistage.CONFIGS["small"], KMAJOR_A=0, VECTOR=0),
    # thin tiles: a shape with M (or N) <= 16 computes 16 rows (columns) per tile, not 64-128
    "row-major 16x128": dict(BM=16, BN=128, BK=16, TM=2, TN=8, NUM_THREADS=128, STAGES=4, MIN_BLOCKS=4,
                             KMAJOR_A=0, VECTOR=0),
    "row-major 128x16": dict(BM=128, BN=16, BK=16, TM=4, TN=4, NUM_THREADS=128, STAGES=4, MIN_BLOCKS=4,
                             KMAJOR_A=0, VECTOR=0),
    "vector rows": dict(multistage.CONFIGS["small"], KMAJOR_A=0, VECTOR=1),
}
VECTOR_THREADS = 256   # per block of the VECTOR kernel (28_any_shape.cu: kVectorThreads)
VECTOR_MAX = 8         # the most rows (M) it takes (kMaxVector)
# configurations tried only where N is at most this (elsewhere wider tiles were faster: H200, the 128x64
# in-kernel tiles at 1000^3 84.0% of SGEMM against 91.4%, 256x256x65536 84.3% against 92.9%)
NARROW_ONLY = {"in-kernel k-major 128x64": 128}
SPLIT_CHOICES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
DEFAULT: Params = {**CONFIGS["k-major 128x128"], "SPLITS": 1, "PACK": 1}
SEARCH_SPACE = {**multistage.SEARCH_SPACE_19, "KMAJOR_A": [0, 1, 2], "SPLITS": list(SPLIT_CHOICES), "PACK": [0, 1]}
CONSTRAINTS = ("KMAJOR_A=1: rung 19's constraints; KMAJOR_A=2: the same, and each thread moves 1, 2 or 4 "
               "rows of A's 16-byte k quads; KMAJOR_A=0: rung 12's; SPLITS >= 1 (K slices, grid z); "
               "PACK: rows that are not 16-byte multiples are first copied into padded rows; VECTOR=1 needs "
               "M <= 8 (and KMAJOR_A=0)")
# read by the driver (grid z, pre-passes, the GEMV path), not compiled in
RUNTIME = ("SPLITS", "PACK", *gemv.RUNTIME)


def block(p: Params) -> tuple[int, int, int]:
    return (VECTOR_THREADS, 1, 1) if p.get("VECTOR") else multistage.block(p)


def grid(M: int, N: int, K: int, p: Params) -> tuple[int, int, int]:
    """Tiles: x over N, y over M, z over the K splits. VECTOR=1: a thread per 4
    columns, z over the K splits."""
    if p.get("VECTOR"):
        return (math.ceil(N / (4 * VECTOR_THREADS)), 1, p.get("SPLITS", 1))
    return multistage.grid(M, N, K, p)


def smem(p: Params) -> int:
    return 0 if p.get("VECTOR") else multistage.smem(p)


def shape_reason(M: int, N: int, p: Params) -> str | None:
    """Why the VECTOR kernel cannot take the shape, or None."""
    if p.get("VECTOR") and M > VECTOR_MAX:
        return f"VECTOR=1 takes M <= {VECTOR_MAX}, not {M}"
    return None


def check(p: Params) -> str | None:
    """Why a parameter combination of rung 28 is invalid, or None."""
    if p.get("VECTOR", 0) not in (0, 1):
        return "VECTOR must be 0 (tiles) or 1 (M <= 8, no tiles)"
    if p.get("KMAJOR_A") not in (0, 1, 2):
        return ("KMAJOR_A must be 0 (A read in place, row-major tiles), 1 (A transposed by a pre-pass) or 2 "
                "(A transposed into the k-major tiles by the threads)")
    if p.get("VECTOR") and p["KMAJOR_A"]:
        return "the VECTOR kernel reads A in place: KMAJOR_A must be 0"
    if p.get("SPLITS", 1) < 1:
        return "SPLITS must be at least 1"
    if p.get("PACK", 1) not in (0, 1):
        return "PACK must be 0 or 1"
    if p.get("VECTOR"):
        return None  # the tile parameters are not used
    if p["KMAJOR_A"] == 2:
        quads = p["BM"] * (p["BK"] // 4)  # A's 16-byte k quads in a tile, shared out evenly by whole rows
        if p["BK"] % 4 or quads % p["NUM_THREADS"] or quads // p["NUM_THREADS"] not in (1, 2, 4):
            return ("KMAJOR_A=2: BK must be a multiple of 4 and each thread must move 1, 2 or 4 rows of A "
                    "(BM*BK/4/NUM_THREADS)")
    return (multistage.check_19 if p["KMAJOR_A"] else multistage.check)(p)


def config_name(p: Params) -> str:
    """The CONFIGS name of a parameter set (its tile and loop), or a description."""
    for name, c in CONFIGS.items():
        if all(p.get(k) == v for k, v in c.items()):
            return name
    loop = {0: "row-major", 1: "k-major", 2: "in-kernel k-major"}.get(p.get("KMAJOR_A"), "row-major")
    return f"{loop} {p.get('BM')}x{p.get('BN')}"


# --- the time model ----------------------------------------------------------
# Fraction of an SM's FP32 peak each configuration's loop reaches with 8 or
# more warps resident (H200: rung 19's tiles 51 TFLOP/s at 4096^3, rung 13's
# 42 at 2048^3; the thin tiles read 2.5 shared float4s per 16 FMAs a k-step;
# H100, 4096^3: the in-kernel k-major tiles at 91-93% of the pre-pass loop's
# rate; 0.76-0.82 tried against the H100 table's choices, 0.78 agreed best; for the 128x64 tiles, 0.70-0.78
# pick alike against the H200 table of the twenty-fourth session, 0.80 and up worse).
_EFFICIENCY = {"k-major 128x128": 0.86, "k-major 64x128": 0.83, "in-kernel k-major 64x128": 0.78,
               "in-kernel k-major 128x64": 0.76,
               "row-major 128x128": 0.71, "row-major 64x64": 0.62, "row-major 16x128": 0.40,
               "row-major 128x16": 0.40}  # VECTOR: memory
_WARPS_FOR_FULL_RATE = 8
# A loop built for MIN_BLOCKS blocks an SM runs a little slower with fewer (less latency hidden): its rate
# times (blocks per SM / MIN_BLOCKS) ** this. Of 0 to 1, 0.1 agrees best with the H100 table's measured
# choices (the same configuration, splits and PACK at 69 of its 100 non-GEMV shapes, against 60 without;
# with the table remade on 2026-11-28, 66 against 58, tied with 0.3; with the H200 table of 2026-11-29, 77 of 100
# against 65 without, 75 at 0.2 and 72 at 0.3; with its remake of the twenty-second session, 71 against 61, 68 and 66;
# with the twenty-fourth's, 70 against 60, 69 and 72, and within 5% of the best at 92 against 89, 91 and 92).
_OCCUPANCY_EXPONENT = 0.1
_PEAK_PER_SM = 2 * 128 * 1.755e9     # FP32 flop/s of one SM at the H200's sustained clock
_BLOCK_OVERHEAD = 2.0e-6             # prologue (STAGES-1 tiles of latency) + epilogue of a block, s
_LAUNCH = 2.5e-6                     # each extra kernel of a call (pre-pass, reduction), s
_DRAM_BANDWIDTH = 3.5e12             # bytes/s reached by a streaming read (H200: 4.8 TB/s peak)
_L2_BANDWIDTH = 3.0e12               # bytes/s for the split partials (L2-resident at these sizes)
_VECTOR_BANDWIDTH = 2.4e12           # bytes/s the VECTOR kernel streams B at
_UNALIGNED_SLOWDOWN = 0.9            # 4-byte copies of unaligned rows (copy4.cuh; H200, ncu, the product alone:
                                     # 333x555x777 row-major 0.95x the padded rows', 1024x1023x1024 k-major 0.86x)


@dataclass(frozen=True)
class Passes:
    """What one call does besides the main kernel, per shape and parameters
    (the "any_shape" driver, the model and ``explain`` all read it here)."""

    transpose_a: bool  # KMAJOR_A=1: transpose_pad writes At
    pad_a: bool        # copy_rows pads A's rows (K % 4, PACK, the tiles: they read A in float4s)
    pad_b: bool        # copy_rows pads B's rows (N % 4, PACK)
    pad_c: bool        # split: the splits' sums go to rows padded to 16 bytes (N % 4; PACK or not)
    unaligned: bool    # some rows are read 4 bytes at a time (not padded)
    reduce: bool       # reduce_splits runs (SPLITS > 1)


def passes(M: int, N: int, K: int, p: Params) -> Passes:
    pack, vector = p.get("PACK", 1), p.get("VECTOR", 0)
    a_odd = p["KMAJOR_A"] == 0 and K % 4 != 0 and not vector  # VECTOR, KMAJOR_A=2 read A through registers
    b_odd = N % 4 != 0
    # split, C's rows unaligned: each split's sums go to rows padded to 16 bytes (16-byte tile stores) and
    # reduce_splits writes C; unsplit, the tiles store into C directly, 4 bytes at a time (a copy through a
    # padded buffer cost more: H100, 2047^3 84.9-85.3% of SGEMM against 85.3-86.7%, 4095^3 98.7 against 99.6).
    # The partials are the driver's own buffer, so PACK=0 pads them too (H200, 333x555x777, ncu:
    # reduce_splits took 6.7 us on rows of N floats, 5.4 on padded rows)
    pad_c = N % 4 != 0 and vector == 0 and p.get("SPLITS", 1) > 1
    return Passes(p["KMAJOR_A"] == 1, a_odd and bool(pack), b_odd and bool(pack), pad_c,
                  (a_odd or b_odd) and not pack, p.get("SPLITS", 1) > 1)


def pre_pass_launches(done: Passes) -> int:
    """Launches before the product: A's transpose and B's padded copy are two; A's and B's padded copies
    are one (the driver's copy_rows_pair, cuda_src/pad_pair.cu)."""
    if done.pad_a and done.pad_b:
        return 1
    return int(done.transpose_a or done.pad_a) + int(done.pad_b)


def _tiles(M: int, N: int, K: int, p: Params, splits: int) -> tuple[int, int, int]:
    """(output tiles, K tiles per split, splits that do work)."""
    k_tiles = math.ceil(K / p["BK"])
    per = math.ceil(k_tiles / splits)
    return math.ceil(M / p["BM"]) * math.ceil(N / p["BN"]), per, math.ceil(k_tiles / per)


def _vector_time(M: int, N: int, K: int, sm_count: int, splits: int) -> float:
    """The VECTOR kernel streams B once: its bytes at the share of the DRAM
    bandwidth it reached (H200: 64 MB in 27.7 us at 1x4096x4096), full from 1024
    threads per SM."""
    threads = math.ceil(N / 4) * splits
    streamed = 4 * (M * K + K * N)
    return streamed / (_VECTOR_BANDWIDTH * min(1.0, threads / (1024 * sm_count))) + _BLOCK_OVERHEAD


def estimate(M: int, N: int, K: int, sm_count: int, name: str, splits: int, pack: int = 1) -> float:
    """Model of one call's GPU time (seconds) for a configuration, split count and PACK."""
    p = {**CONFIGS[name], "PACK": pack, "SPLITS": splits}
    done = passes(M, N, K, p)
    if p["VECTOR"]:
        t = _vector_time(M, N, K, sm_count, splits)
    else:
        tiles, per, splits = _tiles(M, N, K, p, splits)
        blocks = tiles * splits
        waves = math.ceil(blocks / (sm_count * p["MIN_BLOCKS"]))
        per_sm = min(p["MIN_BLOCKS"], math.ceil(blocks / sm_count))  # blocks sharing an SM
        warps = per_sm * p["NUM_THREADS"] // 32
        slow = _UNALIGNED_SLOWDOWN if done.unaligned else 1.0
        occupancy = (per_sm / p["MIN_BLOCKS"]) ** _OCCUPANCY_EXPONENT
        sm_rate = _PEAK_PER_SM * _EFFICIENCY[name] * slow * min(1.0, warps / _WARPS_FOR_FULL_RATE) * occupancy
        block_time = 2.0 * p["BM"] * p["BN"] * per * p["BK"] / (sm_rate / per_sm) + _BLOCK_OVERHEAD
        streamed = 4 * (M * K + K * N + M * N)  # each operand read once from DRAM, C written once
        t = max(waves * block_time, streamed / _DRAM_BANDWIDTH)
    pre = pre_pass_launches(done)
    t += pre * _LAUNCH + 8 * (M * K * (done.transpose_a or done.pad_a) + K * N * done.pad_b) / _DRAM_BANDWIDTH
    if done.reduce:  # beta == 0: the partials are written and read once, C written once
        t += _LAUNCH + (2 * splits + 1) * M * N * 4 / _L2_BANDWIDTH
    return t


def candidates(M: int, N: int, K: int, sm_count: int) -> list[tuple[str, int, int]]:
    """The (configuration, splits, PACK) choices worth considering at a shape:
    every configuration that takes the shape (and, of NARROW_ONLY, is narrow enough), unsplit, and split while each
    split keeps at least two K tiles (eight values of K for VECTOR) and the
    blocks stay within four waves; PACK 0 as well as 1 where rows are unaligned."""
    out = []
    for name, p in CONFIGS.items():
        if shape_reason(M, N, p) or N > NARROW_ONLY.get(name, N):
            continue
        tiles = 1 if p["VECTOR"] else _tiles(M, N, K, p, 1)[0]
        k_steps = math.ceil(K / (4 if p["VECTOR"] else p["BK"]))
        unpacked = passes(M, N, K, {**p, "PACK": 0})
        packs = (1, 0) if unpacked.unaligned or N % 4 and not p["VECTOR"] else (1,)
        for s in SPLIT_CHOICES:
            if s > 1 and (k_steps < 2 * s or tiles * s > 4 * sm_count * p["MIN_BLOCKS"]):
                continue
            out += [(name, s, pack) for pack in packs]
    return out


def shape_candidates(M: int, N: int, K: int, sm_count: int) -> list[Params]:
    """What ``gemmbench tune`` tries at a shape: the parameters of every choice of ``candidates``; at a
    GEMV only the GEMV path (``select``'s choice)."""
    if gemv.applies(M, N):
        return [select(M, N, K, sm_count)]
    return [{**CONFIGS[name], "SPLITS": s, "PACK": pack} for name, s, pack in candidates(M, N, K, sm_count)]


def model_choice(M: int, N: int, K: int, sm_count: int) -> tuple[str, int, int]:
    """The (configuration, splits, PACK) with the least estimated time."""
    best = None
    for name, s, pack in candidates(M, N, K, sm_count):
        t = estimate(M, N, K, sm_count, name, s, pack)
        if best is None or t < best[0] * 0.999:  # ties: the earlier (bigger tiles, fewer splits, packed)
            best = (t, name, s, pack)
    return best[1:]


SOURCE = "28_any_shape.cu"
TABLE_PATH = Path(__file__).with_name("any_shape_h200.json")


def shipped_table():
    """(the measured choices shipped with the rung, None), or (None, why they
    are not used): read once, through gemmbench.rungs.choice_table."""
    from . import choice_table  # deferred: reading the ladder (shell completion) needs no table
    return choice_table.shipped(TABLE_PATH, SOURCE)


def measured_choice(M: int, N: int, K: int, sm_count: int, table=None):
    """The table's choice (a choice_table.Choice) for the shape, on a GPU with
    the table's SM count, if the rung takes its parameters; else None.
    ``table``: a ChoiceTable (default: the shipped one)."""
    from . import choice_table
    table = shipped_table()[0] if table is None else table
    return choice_table.usable_choice(table, M, N, K, sm_count, DEFAULT,
                                      lambda M, N, p: check(p) or shape_reason(M, N, p))


def select(M: int, N: int, K: int, sm_count: int) -> Params:
    """Rung 28's parameters for a shape: the measured fastest where the table
    holds the shape, else the configuration, split count and PACK with the
    least estimated time; at a GEMV (M or N is 1) with GEMV = 1 as well, so
    the driver runs gemv.cu (gemmbench.rungs.gemv) and the tiles are unused."""
    entry = measured_choice(M, N, K, sm_count)
    if entry is not None:
        p = dict(entry.params)
    else:
        name, s, pack = model_choice(M, N, K, sm_count)
        p = {**CONFIGS[name], "SPLITS": s, "PACK": pack}
    return {**p, "GEMV": 1} if gemv.applies(M, N) else p


def explain(M: int, N: int, K: int, sm_count: int, p: Params) -> str:
    """One line: what rung 28 does at this shape with these parameters, and why."""
    if p.get("GEMV"):
        return gemv.explain(M, N, sm_count)
    name = config_name(p)
    splits = p.get("SPLITS", 1)
    if p.get("VECTOR"):
        parts = [f"{name}: M = {M}, so no tiles: a thread per 4 columns of every row, B read once"
                 + (f", K in {splits} splits" if splits > 1 else "")]
    else:
        tiles, per, splits = _tiles(M, N, K, p, splits)
        parts = [f"{name} tiles: {tiles} tile{'s' * (tiles != 1)}"
                 + (f" x {splits} K splits of {per * p['BK']}" if splits > 1 else "")
                 + f" = {tiles * splits} blocks for {sm_count * p['MIN_BLOCKS']} block slots ({sm_count} SMs)"]
    done = passes(M, N, K, p)
    if p.get("KMAJOR_A") == 2:
        parts.append("A transposed by the threads on its way into shared memory (no pre-pass)")
    pre = [what for what, needed in (("A transposed", done.transpose_a), ("A's rows padded", done.pad_a),
                                      ("B's rows padded", done.pad_b)) if needed]
    if pre:
        parts.append(" and ".join(pre) + " by a pre-pass")
    if done.pad_c:
        parts.append("C's rows are not 16-byte multiples: the splits' sums stored in padded rows")
    if done.unaligned:
        parts.append("unaligned rows copied 4 bytes at a time (no pre-pass)")
    choice = (name, p.get("SPLITS", 1), p.get("PACK", 1))
    entry = measured_choice(M, N, K, sm_count)
    table, unused = shipped_table()
    if entry is not None and entry.params == dict(p):
        from . import choice_table
        parts.append(choice_table.measured_line(table, entry, TABLE_PATH))
    elif choice in candidates(M, N, K, sm_count):
        t = estimate(M, N, K, sm_count, *choice)
        least = choice == model_choice(M, N, K, sm_count)
        parts.append(f"model: {t * 1e6:.0f} us ({2 * M * N * K / t / 1e12:.1f} TFLOP/s)"
                     + (f", the least of {len(candidates(M, N, K, sm_count))} choices" if least else ""))
    if unused:
        parts.append(f"the measured table is not used: {unused}")
    return "; ".join(parts)
