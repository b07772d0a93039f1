"""The TMA rungs' per-shape choice (rungs 16-18): the C tile, for rungs 17
and 18 the K splits, and the tiles and splits ``gemmbench tune`` tries at a shape.

Rungs 17 and 18 compute C transposed (wgmma's N is the tile's BM rows of A),
so a tile can be as thin as 16 rows: where M is small, a 128-row tile would
spend most of its tensor-core work on rows that are not there. Where N is
small instead, rung 18 swaps A and B (SWAP_AB: C^T = B^T A^T), so N is the
thin side. Each takes
the measured fastest choice where the table shipped beside it holds the
shape (a gemmbench.rungs.choice_table made by ``gemmbench tune -i N --shapes
... --table``, the command in the file; used on a GPU with the same SM
count, while the rung's source is the one it was measured on), else its
rule (``PerShape.rule``); where M or N is 1, the GEMV path as well
(gemmbench.rungs.gemv), and at tiny products the small path
(gemmbench.rungs.small). Pure Python: nothing here touches the GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..spec import Params, ceil_div
from . import gemv, small

# C tiles from large to small: each TMA rung takes the largest that still gives about one tile per SM
TILES = ((256, 128), (128, 128), (128, 64))
TILES_3XTF32 = ((128, 128), (128, 64))  # rung 18: accumulators and partial sums hold BM <= 128
THIN_BMS = (16, 32, 64)  # tiles for M <= 64: wgmma n16 / n32 / n64
THIN_STAGES = 8          # their slots are small (BM + BN rows of BK floats): a deeper ring in the same memory
# Where C is one row of 128 x 128 tiles, a tune tries them on 6 slots too (197,728 bytes for rung 17; rung 18's
# two A boxes do not fit): each tile streams its own B panel from DRAM, and more loads in flight keep it busier
# (H200, rung 17 at 128 x 11008 / 12288 / 14336 x 4096: 86.0 / 90.3 / 98.3% of cuBLAS TF32 on 4 slots, 89.4 / 92.7 /
# 101.6% on 6). Elsewhere 6 slots were no faster (2048 x 3072 x 1024 87.0% against 87.2).
ONE_ROW_STAGES = 6

# Read by the driver of rungs 17 and 18, not compiled in: the K splits and the one-launch paths
RUNTIME = ("SPLITS", *gemv.RUNTIME, *small.RUNTIME)

MAX_SPLITS = 128
MIN_K_TILES_PER_SPLIT = 4  # a split shorter than the ring (STAGES = 4) never fills it
# Splitting pays only past this many K tiles (H200, rung 17 split against unsplit: 256^3, 384^3 and 512^3,
# 8-16 K tiles, lost 9-22%; 128x768x768, 333x555x777 and 128x1024x1024, 24-32 K tiles, gained 8-37%).
MIN_K_TILES_TO_SPLIT = 20
SPLIT_CHOICES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)
SWAP_MAX_N = 256  # rung 18 swaps A and B (C^T = B^T A^T) where N is at most this and M is larger
B_CHUNK = 32  # columns of one box of B (128 bytes of floats, the swizzle span)


def b_one_load(N: int) -> Params:
    """Rung 17's B3D at a shape: each K tile of B in one TMA load where N is a multiple of the 32-column
    boxes (a 3-D box past N would read the next row of B, where a 2-D box reads zeros), else one per box."""
    return {"B3D": int(N % B_CHUNK == 0)}


def tile_rule(M: int, N: int, sm_count: int, rest: Params, tiles=TILES) -> dict:
    """The largest tile of ``tiles`` that still gives about one tile per SM (else the smallest)."""
    for bm, bn in tiles:
        if ceil_div(M, bm) * ceil_div(N, bn) >= 0.9 * sm_count:
            break
    return {**rest, "BM": bm, "BN": bn}


def _thin_bm(M: int) -> int | None:
    return next((bm for bm in THIN_BMS if M <= bm), None)


@dataclass(frozen=True)
class ByK:
    """A compile-time parameter that follows K: ``low`` below ``min_k``, ``high`` from it; ``what`` says
    what it sets, with {} for the value."""

    name: str
    low: int
    high: int
    min_k: int
    what: str

    def params(self, K: int) -> Params:
        return {self.name: self.high if K >= self.min_k else self.low}

    def explain(self, p: Params) -> str:
        return (f"{self.name}={p[self.name]}: {self.what.format(p[self.name])} "
                f"({self.name}={self.high} from K = {self.min_k}, {self.low} below)")


@dataclass(frozen=True)
class PerShape:
    """A warp-specialized TMA rung's per-shape choice: ``rest`` holds the
    parameters that neither the rule nor the table sets, ``check`` the rung's
    rules, ``tiles`` its tiles for M > 64, ``split`` whether K may be split
    (rungs 17 and 18: SPLITS), ``bms`` the tile heights a tune tries,
    ``splits_a`` whether every call runs a split of A first, ``by_k`` the
    parameters that follow K (rung 18's FLUSH), ``b3d`` whether B3D follows N
    (rung 17: ``b_one_load``), for the rule and a tune alike."""

    source: str
    table_path: Path
    rest: tuple[tuple[str, int], ...]
    check: Callable[[Params], str | None]
    tiles: tuple[tuple[int, int], ...]
    split: bool
    bms: tuple[int, ...]
    splits_a: bool = False  # rung 18: every call first splits A (a pre-pass launch)
    by_k: ByK | None = None  # a parameter that follows K (rung 18: FLUSH)
    b3d: bool = False  # B3D follows N (rung 17)

    def _follows(self, N: int, K: int) -> Params:
        """The parameters that follow the shape rather than a choice."""
        return {**(self.by_k.params(K) if self.by_k else {}), **(b_one_load(N) if self.b3d else {})}

    def _with(self, N: int, K: int, SPLITS: int = 1, **chosen) -> dict:
        return {**dict(self.rest), **self._follows(N, K), **chosen, **({"SPLITS": SPLITS} if self.split else {})}

    @property
    def swaps(self) -> bool:
        """Whether the rung can swap A and B (rung 18: SWAP_AB, C^T = B^T A^T)."""
        return "SWAP_AB" in dict(self.rest)

    def _swapped(self, M: int, N: int) -> bool:
        """Where N, not M, is small (N <= 256 < M; H100, rung 18 at 4096 x N x 4096 and 8192x64x8192: swapped
        1.15-2.07x SGEMM for N = 16..256 against 0.35-1.13x unswapped, the same call; the column GEMV
        4096x1x4096 0.79x against 0.21x). A shape-set tune tries both there."""
        return self.swaps and N <= SWAP_MAX_N < M

    def rule(self, M: int, N: int, K: int, sm_count: int) -> dict:
        """Without a measured choice: ``_rule`` on the shape, or, where the
        rung swaps A and B (skinny-n), on C^T's shape with SWAP_AB = 1."""
        if self._swapped(M, N):
            return {**self._rule(N, M, K, sm_count), "SWAP_AB": 1}
        return self._rule(M, N, K, sm_count)

    def _rule(self, M: int, N: int, K: int, sm_count: int) -> dict:
        """Without a measured choice: rung 16's tile (for M <= 64 the thinnest
        tile that holds M, 128 or 64 wide, on a deeper ring); for a rung that
        splits, where those tiles leave SMs idle (fewer than 0.9 per SM) and K
        spans at least 20 K tiles, K split so that the units (tiles x SPLITS)
        about fill the SMs, each split keeping at least 4 K tiles."""
        thin = _thin_bm(M)
        if thin is None:
            p = tile_rule(M, N, sm_count, self._with(N, K), self.tiles)
        else:
            p = tile_rule(M, N, sm_count, self._with(N, K, STAGES=THIN_STAGES), ((thin, 128), (thin, 64)))
        if self.check(p):  # the deeper ring does not fit (rung 18's two A boxes per slot)
            p["STAGES"] = dict(self.rest)["STAGES"]
        if not self.split:
            return p
        count, k_tiles = ceil_div(M, p["BM"]) * ceil_div(N, p["BN"]), ceil_div(K, p["BK"])
        splits = 1
        if count < 0.9 * sm_count and k_tiles >= MIN_K_TILES_TO_SPLIT:
            splits = max(1, min(sm_count // count, k_tiles // MIN_K_TILES_PER_SPLIT, MAX_SPLITS))
        return {**p, "SPLITS": splits}

    def prepasses(self, M: int, N: int, K: int) -> bool:
        """Whether a call at this shape launches a pre-pass before its tiles: rung 18's split of A, or a
        row-pad copy of an operand whose rows are not 16-byte multiples (K or N not a multiple of 4 floats),
        or, swapped, the transpose of B."""
        return self.splits_a or K % 4 != 0 or N % 4 != 0 or self._swapped(M, N)

    def one_launch(self, M: int, N: int, K: int) -> Params:
        """The runtime parameter of the one-launch path this shape takes, read by the driver: GEMV = 1
        where M or N is 1 (gemmbench.rungs.gemv), SMALL = 1 at a small product (gemmbench.rungs.small),
        else none."""
        if gemv.applies(M, N):
            return {"GEMV": 1}
        if small.applies(M, N, K, self.prepasses(M, N, K)):
            return {"SMALL": 1}
        return {}

    def shape_candidates(self, M: int, N: int, K: int, sm_count: int) -> list[Params]:
        """What ``gemmbench tune --shapes`` tries: where a one-launch path runs only it (``select``'s
        choice: there is no tile to choose), else ``candidates``."""
        if self.one_launch(M, N, K):
            return [self.select(M, N, K, sm_count)]
        return self.candidates(M, N, K, sm_count)

    def candidates(self, M: int, N: int, K: int, sm_count: int) -> list[Params]:
        """``_candidates`` at the shape, and where the rung swaps A and B and N
        is at most 256 (M above), at C^T's shape with SWAP_AB = 1 too."""
        out = self._candidates(M, N, K, sm_count)
        if self._swapped(M, N):
            out += [p for p in ({**q, "SWAP_AB": 1} for q in self._candidates(N, M, K, sm_count))
                    if self.check(p) is None]
        return out

    def _candidates(self, M: int, N: int, K: int, sm_count: int) -> list[Params]:
        """What ``gemmbench tune --shapes`` tries at a shape: every tile the
        rung takes that wastes less than half of itself on rows or columns
        that are not there (16 and 32 rows only where M <= 64; 192 and 256
        rows only 128 wide; tiles under 128 rows on 4 and 8 slots, 128 x 128
        on 4 and, where C is one row of them, 6), unsplit, and, where the
        rung splits, split while each split keeps at least 4 K tiles and the
        units stay within four per SM; where 128x128 tiles alone give four
        per SM, only the rung's two largest tiles, unsplit."""
        if ceil_div(M, 128) * ceil_div(N, 128) >= 4 * sm_count:
            return [self._with(N, K, BM=bm, BN=bn) for bm, bn in self.tiles[:2]]
        out = []
        for bm in self.bms:
            if bm > 16 and 2 * M <= bm or bm < 64 and M > 64:
                continue
            for bn in (64, 128):
                if bm in (192, 256) and bn == 64 or bn == 128 and 2 * N <= bn:
                    continue
                tiles, k_tiles = ceil_div(M, bm) * ceil_div(N, bn), ceil_div(K, dict(self.rest)["BK"])
                one_row = (bm, bn) == (128, 128) and M <= bm
                for stages in (4, THIN_STAGES) if bm < 128 else (4, ONE_ROW_STAGES) if one_row else (4,):
                    for s in SPLIT_CHOICES if self.split else (1,):
                        if s > 1 and (k_tiles < MIN_K_TILES_PER_SPLIT * s or tiles * s > 4 * sm_count):
                            break
                        p = self._with(N, K, BM=bm, BN=bn, STAGES=stages, SPLITS=s)
                        if self.check(p) is None:
                            out.append(p)
        return out

    def shipped_table(self):
        """(the measured choices shipped with the rung, None), or (None, why they are not used)."""
        from . import choice_table  # deferred: reading the ladder (shell completion) needs no table
        return choice_table.shipped(self.table_path, self.source)

    def measured(self, M: int, N: int, K: int, sm_count: int):
        from . import choice_table
        follows = self._follows(N, K)
        names = {*dict(self.rest), *follows, "BM", "BN", *(("SPLITS",) if self.split else ())}

        def problem(M: int, N: int, p: Params) -> str | None:
            if self.b3d and p["B3D"] != follows["B3D"]:
                return f"B3D={p['B3D']}, where N = {N} gives {follows['B3D']}"
            return self.check(p)
        return choice_table.usable_choice(self.shipped_table()[0], M, N, K, sm_count, names, problem)

    def select(self, M: int, N: int, K: int, sm_count: int) -> dict:
        """The table's choice where it holds the shape and the rung takes it, else the rule's; at a GEMV
        shape (M or N is 1) with GEMV = 1 as well, so the driver runs gemv.cu (gemmbench.rungs.gemv), and
        at a small product with SMALL = 1, so it runs small_gemm.cu (gemmbench.rungs.small); the tile
        parameters stay, so the rung's grid and shared memory stay defined."""
        entry = self.measured(M, N, K, sm_count)
        p = dict(entry.params) if entry is not None else self.rule(M, N, K, sm_count)
        return {**p, **self.one_launch(M, N, K)}

    def explain(self, M: int, N: int, K: int, sm_count: int, p: Params) -> str:
        """One line: the tiles (and splits) at this shape, and where they came from."""
        if p.get("GEMV"):
            return gemv.explain(M, N, sm_count)
        if p.get("SMALL"):
            return small.explain(M, N, K)
        swap = bool(p.get("SWAP_AB"))
        rows, cols = (N, M) if swap else (M, N)
        tiles, k_tiles, splits = ceil_div(rows, p["BM"]) * ceil_div(cols, p["BN"]), ceil_div(K, p["BK"]), p.get("SPLITS", 1)
        per = ceil_div(k_tiles, splits)
        parts = [("A and B swapped (C^T = B^T A^T: A read once, N on wgmma's flexible side), " if swap else "")
                 + f"{p['BM']}x{p['BN']} tiles{' of C^T' * swap} on {p['STAGES']} slots: {tiles} tile{'s' * (tiles != 1)}"
                 + (f" x {splits} K splits of {per * p['BK']}" if splits > 1 else "")
                 + f" for {sm_count} SMs (persistent: one block per SM)"]
        table, unused = self.shipped_table()
        entry = self.measured(M, N, K, sm_count)
        if entry is not None and entry.params == dict(p):
            from . import choice_table
            parts.append(choice_table.measured_line(table, entry, self.table_path))
        elif dict(p) == self.rule(M, N, K, sm_count):
            parts.append("the rule: the largest tile giving about one per SM"
                         + (", A and B swapped for N <= 256" if swap else ", thin for M <= 64" if _thin_bm(M) else "")
                         + (", K split to fill the SMs" if splits > 1 else ""))
        if self.by_k and self.by_k.name in p:
            parts.append(self.by_k.explain(p))
        if "B3D" in p:
            boxes = p["BN"] // B_CHUNK
            parts.append(f"B3D=1: each K tile of B in one TMA load of {boxes} {B_CHUNK}-column boxes" if p["B3D"] else
                         f"B3D=0: B in {boxes} loads of {B_CHUNK} columns a K tile"
                         + (f" (N = {N} is not a multiple of {B_CHUNK})" if N % B_CHUNK else ""))
        if unused:
            parts.append(f"the measured table is not used: {unused}")
        return "; ".join(parts)


HERE = Path(__file__).parent


def per_shape(source: str, table_name: str, rest: Params, check, tiles, split: bool, bms,
              splits_a: bool = False, by_k: ByK | None = None, b3d: bool = False) -> PerShape:
    return PerShape(source, HERE / table_name, tuple(rest.items()), check, tuple(tiles), split, tuple(bms), splits_a,
                    by_k, b3d)
