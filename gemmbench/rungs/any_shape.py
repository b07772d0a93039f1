"""Rung 28, the FP32 top rung for every shape: its compiled configurations,
constraints and per-shape choice (``cuda_src/28_any_shape.cu``).

A choice is one of CONFIGS (the loop and the tile) plus SPLITS (K slices,
grid z) and PACK (1: the "any_shape" driver pads the rows of an operand that
are not a multiple of 16 bytes, so the loop copies 16 bytes at a time; 0: the
loop copies such rows 4 bytes at a time, which saves a launch at tiny shapes).
Both are read by the driver, not compiled in. ``select`` picks the
choice measured fastest at that shape when the shipped table holds it
(``any_shape_h200.json``, made by ``benchmarks/any_shape_table.py`` on a GPU
with the same SM count), else the one with the least estimated time
(``estimate``); ``explain`` says which and why in one line. Pure Python:
nothing here touches the GPU.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..spec import Params
from . import multistage

# The loops: KMAJOR_A=1 is rung 19's (A transposed by a pre-pass), 0 rung 12's (A read in place).
CONFIGS: dict[str, Params] = {
    "k-major 128x128": dict(multistage.R19_CONFIGS["large"], KMAJOR_A=1),
    "k-major 64x128": dict(multistage.R19_CONFIGS["small"], KMAJOR_A=1),
    "row-major 128x128": dict(multistage.CONFIGS["medium"], KMAJOR_A=0),
    "row-major 64x64": dict(multistage.CONFIGS["small"], KMAJOR_A=0),
    # thin tiles: a shape with M (or N) <= 16 computes 16 rows (columns) per tile, not 64-128
    "row-major 16x128": dict(BM=16, BN=128, BK=16, TM=2, TN=8, NUM_THREADS=128, STAGES=4, MIN_BLOCKS=4,
                             KMAJOR_A=0),
    "row-major 128x16": dict(BM=128, BN=16, BK=16, TM=4, TN=4, NUM_THREADS=128, STAGES=4, MIN_BLOCKS=4,
                             KMAJOR_A=0),
}
SPLIT_CHOICES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
DEFAULT: Params = {**CONFIGS["k-major 128x128"], "SPLITS": 1, "PACK": 1}
SEARCH_SPACE = {**multistage.SEARCH_SPACE_19, "KMAJOR_A": [0, 1], "SPLITS": list(SPLIT_CHOICES), "PACK": [0, 1]}
CONSTRAINTS = ("KMAJOR_A=1: rung 19's constraints; KMAJOR_A=0: rung 12's; SPLITS >= 1 (K slices, grid z); "
               "PACK: rows that are not 16-byte multiples are first copied into padded rows")
RUNTIME = ("SPLITS", "PACK")  # read by the driver (grid z, pre-passes), not compiled in


def check(p: Params) -> str | None:
    """Why a parameter combination of rung 28 is invalid, or None."""
    if p.get("KMAJOR_A") not in (0, 1):
        return "KMAJOR_A must be 0 (A read in place) or 1 (A transposed by a pre-pass)"
    if p.get("SPLITS", 1) < 1:
        return "SPLITS must be at least 1"
    if p.get("PACK", 1) not in (0, 1):
        return "PACK must be 0 or 1"
    return (multistage.check_19 if p["KMAJOR_A"] else multistage.check)(p)


def config_name(p: Params) -> str:
    """The CONFIGS name of a parameter set (its tile and loop), or a description."""
    for name, c in CONFIGS.items():
        if all(p.get(k) == v for k, v in c.items()):
            return name
    return f"{'k-major' if p.get('KMAJOR_A') else 'row-major'} {p.get('BM')}x{p.get('BN')}"


# --- the time model ----------------------------------------------------------
# Fraction of an SM's FP32 peak each configuration's loop reaches with 8 or
# more warps resident (H200: rung 19's tiles 51 TFLOP/s at 4096^3, rung 13's
# 42 at 2048^3; the thin tiles read 2.5 shared float4s per 16 FMAs a k-step).
_EFFICIENCY = {"k-major 128x128": 0.86, "k-major 64x128": 0.83, "row-major 128x128": 0.71,
               "row-major 64x64": 0.62, "row-major 16x128": 0.40, "row-major 128x16": 0.40}
_WARPS_FOR_FULL_RATE = 8
_PEAK_PER_SM = 2 * 128 * 1.755e9     # FP32 flop/s of one SM at the H200's sustained clock
_BLOCK_OVERHEAD = 2.0e-6             # prologue (STAGES-1 tiles of latency) + epilogue of a block, s
_LAUNCH = 2.5e-6                     # each extra kernel of a call (pre-pass, reduction), s
_DRAM_BANDWIDTH = 3.5e12             # bytes/s reached by a streaming read (H200: 4.8 TB/s peak)
_L2_BANDWIDTH = 3.0e12               # bytes/s for the split partials (L2-resident at these sizes)
_UNALIGNED_SLOWDOWN = 0.75           # 4-byte copies of unaligned rows (H200: 1024x1023x1024 0.72x, 1024^3 0.96x)


def _tiles(M: int, N: int, K: int, p: Params, splits: int) -> tuple[int, int, int]:
    """(output tiles, K tiles per split, splits that do work)."""
    k_tiles = math.ceil(K / p["BK"])
    per = math.ceil(k_tiles / splits)
    return math.ceil(M / p["BM"]) * math.ceil(N / p["BN"]), per, math.ceil(k_tiles / per)


def _unaligned(M: int, N: int, K: int, p: Params) -> tuple[bool, bool]:
    """(A's rows, B's rows) that the loop would read unaligned without a pre-pass."""
    return not p["KMAJOR_A"] and K % 4 != 0, N % 4 != 0


def pack_bytes(M: int, N: int, K: int, p: Params) -> tuple[int, int]:
    """(bytes the pre-passes read and write, how many pre-pass launches)."""
    a_rows, b_rows = _unaligned(M, N, K, p)
    pack = p.get("PACK", 1)
    a = p["KMAJOR_A"] or (a_rows and pack)  # the transpose, or the padded copy of A
    b = b_rows and pack
    return 8 * (M * K * a + K * N * b), int(a) + int(b)


def estimate(M: int, N: int, K: int, sm_count: int, name: str, splits: int, pack: int = 1) -> float:
    """Model of one call's GPU time (seconds) for a configuration, split count and PACK."""
    p = {**CONFIGS[name], "PACK": pack}
    tiles, per, splits = _tiles(M, N, K, p, splits)
    blocks = tiles * splits
    waves = math.ceil(blocks / (sm_count * p["MIN_BLOCKS"]))
    per_sm = min(p["MIN_BLOCKS"], math.ceil(blocks / sm_count))  # blocks sharing an SM
    warps = per_sm * p["NUM_THREADS"] // 32
    slow = _UNALIGNED_SLOWDOWN if not pack and any(_unaligned(M, N, K, p)) else 1.0
    sm_rate = _PEAK_PER_SM * _EFFICIENCY[name] * slow * min(1.0, warps / _WARPS_FOR_FULL_RATE)
    block_time = 2.0 * p["BM"] * p["BN"] * per * p["BK"] / (sm_rate / per_sm) + _BLOCK_OVERHEAD
    streamed = 4 * (M * K + K * N + M * N)  # each operand read once from DRAM, C written once
    t = max(waves * block_time, streamed / _DRAM_BANDWIDTH)
    nbytes, launches = pack_bytes(M, N, K, p)
    t += launches * _LAUNCH + nbytes / _DRAM_BANDWIDTH
    if splits > 1:  # beta == 0: the partials are written and read once, C written once
        t += _LAUNCH + (2 * splits + 1) * M * N * 4 / _L2_BANDWIDTH
    return t


def candidates(M: int, N: int, K: int, sm_count: int) -> list[tuple[str, int, int]]:
    """The (configuration, splits, PACK) choices worth considering at a shape:
    every configuration unsplit, and split while each split keeps at least
    two K tiles and the blocks stay within four waves; PACK 0 as well as 1
    where rows are unaligned."""
    out = []
    for name, p in CONFIGS.items():
        tiles, _, _ = _tiles(M, N, K, p, 1)
        packs = (1, 0) if any(_unaligned(M, N, K, p)) else (1,)
        for s in SPLIT_CHOICES:
            if s > 1 and (math.ceil(K / p["BK"]) < 2 * s or tiles * s > 4 * sm_count * p["MIN_BLOCKS"]):
                continue
            out += [(name, s, pack) for pack in packs]
    return out


def model_choice(M: int, N: int, K: int, sm_count: int) -> tuple[str, int, int]:
    """The (configuration, splits, PACK) with the least estimated time."""
    best = None
    for name, s, pack in candidates(M, N, K, sm_count):
        t = estimate(M, N, K, sm_count, name, s, pack)
        if best is None or t < best[0] * 0.999:  # ties: the earlier (bigger tiles, fewer splits, packed)
            best = (t, name, s, pack)
    return best[1:]


TABLE_PATH = Path(__file__).with_name("any_shape_h200.json")


def _load_table(path: Path) -> dict:
    """The measured choices shipped with the rung ({} without the file)."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}


TABLE = _load_table(TABLE_PATH)


def measured_choice(M: int, N: int, K: int, sm_count: int, table: dict | None = None) -> dict | None:
    """The table's entry for the shape, on a GPU with the table's SM count, or None."""
    table = TABLE if table is None else table
    if table.get("sm_count") != sm_count:
        return None
    entry = table.get("choices", {}).get(f"{M}x{N}x{K}")
    return entry if entry and entry["config"] in CONFIGS else None


def select(M: int, N: int, K: int, sm_count: int) -> Params:
    """Rung 28's parameters for a shape: the measured fastest where the table
    holds the shape, else the configuration, split count and PACK with the
    least estimated time."""
    entry = measured_choice(M, N, K, sm_count)
    name, s, pack = (entry["config"], entry["SPLITS"], entry["PACK"]) if entry else \
        model_choice(M, N, K, sm_count)
    return {**CONFIGS[name], "SPLITS": s, "PACK": pack}


def explain(M: int, N: int, K: int, sm_count: int, p: Params) -> str:
    """One line: what rung 28 does at this shape with these parameters, and why."""
    name = config_name(p)
    tiles, per, splits = _tiles(M, N, K, p, p.get("SPLITS", 1))
    blocks = tiles * splits
    parts = [f"{name} tiles: {tiles} tile{'s' * (tiles != 1)}"
             + (f" x {splits} K splits of {per * p['BK']}" if splits > 1 else "")
             + f" = {blocks} blocks for {sm_count * p['MIN_BLOCKS']} block slots ({sm_count} SMs)"]
    a_rows, b_rows = _unaligned(M, N, K, p)
    pack = p.get("PACK", 1)
    done = [what for what, needed in (("A transposed", p["KMAJOR_A"]), ("A's rows padded", a_rows and pack),
                                      ("B's rows padded", b_rows and pack)) if needed]
    if done:
        parts.append(" and ".join(done) + " by a pre-pass")
    if not pack and (a_rows or b_rows):
        parts.append("unaligned rows copied 4 bytes at a time (no pre-pass)")
    choice = (name, p.get("SPLITS", 1), pack)
    entry = measured_choice(M, N, K, sm_count)
    if entry and (entry["config"], entry["SPLITS"], entry["PACK"]) == choice:
        parts.append(f"measured the fastest of {entry['candidates']} choices on the {TABLE['gpu']} "
                     f"({entry['us']:.1f} us; benchmarks/any_shape_table.py)")
    elif choice in candidates(M, N, K, sm_count):
        t = estimate(M, N, K, sm_count, *choice)
        least = choice == model_choice(M, N, K, sm_count)
        parts.append(f"model: {t * 1e6:.0f} us ({2 * M * N * K / t / 1e12:.1f} TFLOP/s)"
                     + (f", the least of {len(candidates(M, N, K, sm_count))} choices" if least else ""))
    return "; ".join(parts)
