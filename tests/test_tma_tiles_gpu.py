"""Rungs 17 and 18 on a GPU: every tile their shape-set tunes try (the thin
16- and 32-row tiles, 64-row tiles, on 4 and 8 slots), unsplit and in 3
and 40 K splits (rung 18's split build is a build of its own), rung 18
with partial sums of 32 and 64 terms (FLUSH 1 and 2) and also with A and B
swapped (SWAP_AB: C^T = B^T A^T), against the FP64 reference at odd shapes
(both verification passes; rung 18 to the FP32 bound); rung 17 with B in one
load (B3D) where N allows it. Their per-shape choices are
covered by test_gpu.py, which runs every rung as chosen."""

import pytest

from gemmbench.backend import Shape
from gemmbench.execute.local import verify_kernel
from gemmbench.rungs import get_spec
from gemmbench.rungs.tma_choice import b_one_load
from conftest import skip_unless_sm90a

pytestmark = pytest.mark.gpu

RUNG17, RUNG18 = get_spec("gpu", 17), get_spec("gpu", 18)
# 127 x 320 x 511: N a multiple of 32 (rung 17 loads B's boxes in one 3-D load, B3D) but not of the 128-column
# tiles, so the last column of tiles takes chunks past N, which must read zeros
SHAPES = [Shape(1, 1, 1), Shape(7, 13, 5), Shape(17, 255, 511), Shape(33, 130, 2051), Shape(64, 1025, 1283),
          Shape(127, 320, 511), Shape(1031, 3, 517)]
TILES = [(16, 64, 8), (16, 128, 4), (32, 64, 4), (32, 128, 8), (64, 64, 8), (64, 128, 4), (128, 64, 4)]
SWAPPED_18 = [(16, 64, 8), (16, 128, 8), (32, 128, 8), (64, 64, 8), (64, 128, 4), (128, 128, 4)]  # tiles of C^T
TILES_18 = [(16, 64, 8), (16, 128, 8), (32, 64, 4), (32, 128, 8), (64, 64, 8), (64, 128, 4), (128, 128, 4)]


@pytest.fixture(scope="module", params=SHAPES, ids=str)
def loaded(request, gpu, load_problem):
    return load_problem(gpu, request.param, seed=29)


def _verify(gpu, loaded, spec, params):
    problem, passes = loaded
    assert spec.invalid_reason(params) is None
    skip_unless_sm90a(gpu, "the wgmma tiles")
    v = verify_kernel(gpu, gpu.prepare(spec, problem.shape, params).gemm, passes, spec.precision)
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"


@pytest.mark.parametrize("splits", [1, 3, 40])
@pytest.mark.parametrize("tile", TILES, ids=lambda t: "%dx%d-s%d" % t)
def test_every_rung_17_tile_matches_fp64_reference(gpu, loaded, tile, splits):
    bm, bn, stages = tile
    N = loaded[0].shape.N  # B3D as the rung runs it there (tma_choice.b_one_load)
    _verify(gpu, loaded, RUNG17, {**RUNG17.params, **b_one_load(N), "BM": bm, "BN": bn, "STAGES": stages,
                                  "SPLITS": splits})


@pytest.mark.parametrize("flush", [1, 2])  # tensor-core partial sums of 32 or 64 terms (FLUSH2_MIN_K)
@pytest.mark.parametrize("splits", [1, 3, 40])
@pytest.mark.parametrize("tile", TILES_18, ids=lambda t: "%dx%d-s%d" % t)
def test_every_rung_18_tile_matches_fp64_reference_to_the_fp32_bound(gpu, loaded, tile, splits, flush):
    bm, bn, stages = tile
    _verify(gpu, loaded, RUNG18, {**RUNG18.params, "BM": bm, "BN": bn, "STAGES": stages, "SPLITS": splits,
                                  "FLUSH": flush})


@pytest.mark.parametrize("flush", [1, 2])
@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("tile", SWAPPED_18, ids=lambda t: "%dx%d-s%d" % t)
def test_rung_18_with_a_and_b_swapped_matches_fp64_reference_to_the_fp32_bound(gpu, loaded, tile, splits, flush):
    bm, bn, stages = tile
    _verify(gpu, loaded, RUNG18, {**RUNG18.params, "BM": bm, "BN": bn, "STAGES": stages, "SPLITS": splits,
                                  "SWAP_AB": 1, "FLUSH": flush})
