"""NaN and Inf in A and B through every GPU row (rungs, their mma.sync fallbacks, cuBLAS): each must put NaN and
infinities of the right signs where the float64 reference of its inputs has them, and nothing non-finite
elsewhere. Shapes that take each rung's paths: tiles with ragged edges, K splits, one-launch paths for few rows
or columns, a long K; and rungs 15 and 18 at each of their builds (tiles, K splits, A and B swapped), whose
3xTF32 split needs an FP32 recomputation to give an Inf back (as their mma.sync fallbacks do too)."""

import pytest

from gemmbench.backend import Shape
from gemmbench.rungs import GPU_LADDER, get_spec
from conftest import skip_unless_sm90a

pytestmark = [pytest.mark.gpu, pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")]

ROWS = list(GPU_LADDER) + [s.fallback for s in GPU_LADDER if s.fallback]
SHAPES = [Shape(7, 13, 5), Shape(127, 255, 511), Shape(1000, 1000, 1000), Shape(129, 96, 4097),
          Shape(3, 4099, 2), Shape(4099, 3, 37), Shape(200, 136, 20000)]


def _is_fallback(spec):
    return "fallback" in (spec.summary or "")


def _id(spec):
    return f"rung{spec.id}-{spec.precision}" + ("-fallback" if _is_fallback(spec) else "")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("spec", ROWS, ids=_id)
def test_row_carries_nan_and_inf_as_the_reference_does(gpu, specials_check, spec, shape):
    # 3xTF32 splits each operand into a big and a small TF32 half: an Inf's small half is Inf - Inf = NaN, and
    # its big half times the other operand's small half is an infinity of that half's sign, so the row or column
    # of an Inf comes out NaN. Rungs 15 and 18, and their mma.sync fallbacks, sum such an element again in FP32
    # (nan_recompute.cuh), so they are held to the reference like every other row.
    assert specials_check(gpu, spec, shape, seed=29) == []


RUNG15, RUNG18 = get_spec("gpu", 15), get_spec("gpu", 18)
# (BM, BN, STAGES[, SWAP_AB]); each unsplit and in 3 K splits: every build of rung 18's epilogue
BUILDS_18 = [(16, 64, 8, 0), (32, 128, 8, 0), (64, 128, 4, 0), (128, 128, 4, 0), (16, 128, 8, 1), (64, 64, 8, 1),
             (128, 128, 4, 1)]


@pytest.fixture
def sm90a(gpu):
    skip_unless_sm90a(gpu, "the wgmma builds")


@pytest.mark.parametrize("shape", [Shape(127, 320, 511), Shape(1031, 3, 517), Shape(64, 1025, 1283)], ids=str)
@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("build", BUILDS_18, ids=lambda b: "%dx%d-s%d-swap%d" % b)
def test_every_rung_18_build_gives_an_inf_back(gpu, sm90a, specials_check, build, splits, shape):
    bm, bn, stages, swap = build
    params = {**RUNG18.params, "BM": bm, "BN": bn, "STAGES": stages, "SPLITS": splits, "SWAP_AB": swap}
    params.update({"BK": 32} if swap else {})  # a swapped A is read in boxes of 32 columns
    assert RUNG18.invalid_reason(params) is None
    assert specials_check(gpu, RUNG18, shape, seed=31, params=params) == []


@pytest.mark.parametrize("shape", [Shape(127, 320, 511), Shape(200, 136, 2000)], ids=str)
@pytest.mark.parametrize("tile", [(128, 16, 6, 1), (192, 16, 6, 2), (128, 32, 4, 2)],
                         ids=lambda t: "BM%d-BK%d-s%d-flush%d" % t)
def test_every_rung_15_tile_gives_an_inf_back(gpu, sm90a, specials_check, tile, shape):
    bm, bk, stages, flush = tile
    params = {**RUNG15.params, "BM": bm, "BK": bk, "STAGES": stages, "FLUSH": flush}
    assert RUNG15.invalid_reason(params) is None
    assert specials_check(gpu, RUNG15, shape, seed=31, params=params) == []


@pytest.mark.parametrize("shape", [Shape(127, 320, 511), Shape(200, 136, 2000)], ids=str)
@pytest.mark.parametrize("warptile", [(64, 64, 16, 32), (64, 64, 32, 32), (128, 128, 32, 64)],
                         ids=lambda w: "BM%d-BN%d-WM%d-WN%d" % w)
@pytest.mark.parametrize("rung", [RUNG15, RUNG18], ids=lambda s: f"rung{s.id}")
def test_every_fallback_warptile_gives_an_inf_back(gpu, specials_check, rung, warptile, shape):
    # the fallback's element mapping depends on the warptile: pieces down (TC_WM/16) and across (TC_WN/8)
    bm, bn, wm, wn = warptile
    fallback = rung.fallback
    params = {**fallback.params, "TC_BM": bm, "TC_BN": bn, "TC_WM": wm, "TC_WN": wn}
    assert fallback.invalid_reason(params) is None
    assert specials_check(gpu, fallback, shape, seed=37, params=params) == []
