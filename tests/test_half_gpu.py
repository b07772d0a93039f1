"""The BF16 and FP16 rows on a GPU: cuBLAS GemmEx and every 16-bit rung
(and its mma.sync fallback) against the FP64 reference of the rounded
inputs, both verification passes, at odd shapes; the backend's 16-bit
buffers and reference."""

import numpy as np
import pytest

from gemmbench.backend import Problem, Shape
from gemmbench.execute.local import expectations, verify_kernel
from gemmbench.precision import round_to
from gemmbench.rungs import GPU_LADDER
from conftest import skip_unless_sm90a

pytestmark = pytest.mark.gpu

HALF_ROWS = [s for s in GPU_LADDER if s.precision in ("bf16", "fp16")]
HALF_FALLBACKS = [s.fallback for s in HALF_ROWS if s.fallback]
SHAPES = [Shape(1, 1, 1), Shape(7, 13, 5), Shape(127, 255, 511), Shape(1000, 1001, 129), Shape(3, 4099, 2),
          Shape(4099, 3, 37), Shape(513, 1025, 257), Shape(2048, 2048, 2048), Shape(127, 255, 2051)]


def _id(spec):
    return f"rung{spec.id}-{spec.precision}" + ("-fallback" if spec.name and "fallback" in spec.summary else "")


@pytest.fixture(scope="module", params=SHAPES, ids=str)
def loaded(request, gpu, load_problem):
    return load_problem(gpu, request.param, seed=17, elements=("bf16", "fp16"))


@pytest.mark.parametrize("spec", HALF_ROWS + HALF_FALLBACKS, ids=_id)
def test_half_row_matches_fp64_reference(gpu, loaded, spec):
    problem, passes = loaded
    v = verify_kernel(gpu, gpu.prepare(spec, problem.shape).gemm, passes[spec.precision], spec.precision)
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"


def _verify_sm90_schedule(gpu, load_problem, rung, shape, seed, what, overrides, check=True):
    """Rung ``rung`` at ``shape`` with its choice there overridden by ``overrides`` (a sm_90a path: skipped
    elsewhere, ``what`` says which), against the FP64 reference, both passes."""
    from gemmbench.rungs import get_spec
    spec = get_spec("gpu", rung)
    skip_unless_sm90a(gpu, what)
    problem, passes = load_problem(gpu, shape, seed=seed, elements=(spec.precision,))
    params = {**spec.params_for(shape.M, shape.N, shape.K, gpu.info.sm_count), **overrides}
    if check:
        assert spec.invalid_reason(params) is None
    v = verify_kernel(gpu, gpu.prepare(spec, shape, params).gemm, passes[spec.precision], spec.precision)
    assert v.nonfinite == 0 and v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"


# Rung 30/31's K split in pairs at shapes its selection would not split: rank 1 with no K tile (K <= 64), one
# K tile each, odd K (padded rows), ragged edges, both passes (beta != 0 reads C, N % 8 != 0 stores directly);
# in 128 x 128 tiles and in 64 x 128 (one consumer warpgroup a block), rungs 30-33.
PAIR = {"BM": 128, "BN": 128, "STAGES": 4, "KSPLIT": 2, "PERSISTENT": 0, "CLUSTER": 2}
PAIR_64 = {**PAIR, "BM": 64, "STAGES": 6}


@pytest.mark.parametrize("rung,pair", [(30, PAIR), (31, PAIR), (30, PAIR_64), (31, PAIR_64), (32, PAIR_64),
                                       (33, PAIR_64)], ids=["30", "31", "30-64", "31-64", "32-64", "33-64"])
@pytest.mark.parametrize("shape", [Shape(7, 13, 5), Shape(129, 136, 65), Shape(1000, 1001, 999), Shape(300, 264, 4097)],
                         ids=str)
def test_k_split_pairs_match_fp64_reference(gpu, load_problem, rung, pair, shape):
    _verify_sm90_schedule(gpu, load_problem, rung, shape, 23, "the K split in pairs", pair)


# Pairs of 64 x 64 tiles stacked along M sharing B (each block loads half of the one box's k rows; the
# selection's where C is two rows of 64-row tiles): the last row of tiles moved up to end at M (100, 65 rows:
# the moved tile stores directly from the first row the tile above does not), not moved (127 rows), one row of
# tiles (the pair's second block computes past M), 5 rows (a cluster wholly past M), K of 1, 2 and 65 K tiles,
# N odd or ragged, both passes; persistent too; rungs 24 and 26 (cluster_gemm's other epilogues) alike.
PAIRS64 = {"BM": 64, "BN": 64, "CLUSTER": 2, "KSPLIT": 1, "PERSISTENT": 0, "STAGES": 12}


@pytest.mark.parametrize("rung,pairs", [(32, PAIRS64), (33, PAIRS64), (30, PAIRS64),
                                        (32, {**PAIRS64, "PERSISTENT": 1, "STAGES": 8}), (26, PAIRS64), (24, PAIRS64)],
                         ids=["32", "33", "30", "32-persistent", "26", "24"])
@pytest.mark.parametrize("shape", [Shape(100, 136, 65), Shape(127, 1001, 999), Shape(65, 264, 4097),
                                   Shape(7, 13, 5), Shape(300, 200, 129)], ids=str)
def test_pairs_of_64_column_tiles_sharing_b_match_fp64_reference(gpu, load_problem, rung, pairs, shape):
    _verify_sm90_schedule(gpu, load_problem, rung, shape, 37, "pairs of 64 x 64 tiles sharing B", pairs)


# Rungs 30-33's K split in clusters of 3, 4 and 8 (KSPLIT = CLUSTER): each block stores its slice of 40-48, 32 or 16
# columns directly; ranks with no K tile (K = 5, 257), one K tile each, odd K, ragged edges, N odd
# (guarded 16-bit stores) or a multiple of 64 (rungs 32-33 load B in one 3-D box), both passes.
@pytest.mark.parametrize("rung", [30, 31, 32, 33])
@pytest.mark.parametrize("ways", [3, 4, 8])
@pytest.mark.parametrize("shape", [Shape(7, 13, 5), Shape(129, 192, 257), Shape(33, 1001, 999), Shape(64, 264, 4097)],
                         ids=str)
def test_k_split_in_clusters_matches_fp64_reference(gpu, load_problem, rung, ways, shape):
    _verify_sm90_schedule(gpu, load_problem, rung, shape, 31, f"the K split in clusters of {ways}",
                          {**PAIR_64, "KSPLIT": ways, "CLUSTER": ways})


# Rungs 30-33's K split through FP32 partial sums (KSPLIT > 2): parts of K with no K tile (7 x 13 x 5 in 3 and
# 8 parts: they write zeros), M * N odd (the reduction one element at a time), N odd (4-byte partial stores),
# 128 x 128 tiles and a grid that is not persistent, both passes (the reduction reads C where beta != 0). In
# 37 parts the reduction shares an item among 8 threads (some add 5 parts, some 4), in 128 parts among 32
# (127 x 255: 8), and at 1000 x 1001, whose items fill the GPU, takes a thread an item (reduce16_parts).
PARTIALS = {"BM": 64, "BN": 128, "STAGES": 8, "CLUSTER": 1, "PERSISTENT": 1}


@pytest.mark.parametrize("rung", [30, 31, 32, 33])
@pytest.mark.parametrize("shape", [Shape(7, 13, 5), Shape(127, 255, 2051), Shape(1000, 1001, 999), Shape(33, 256, 4097)],
                         ids=str)
@pytest.mark.parametrize("split", [{"KSPLIT": 3}, {"KSPLIT": 8}, {"KSPLIT": 37}, {"KSPLIT": 128},
                                   {"KSPLIT": 5, "BM": 128, "STAGES": 4, "PERSISTENT": 0}],
                         ids=["3", "8", "37", "128", "5-128-flat"])
def test_k_split_through_partials_matches_fp64_reference(gpu, load_problem, rung, shape, split):
    _verify_sm90_schedule(gpu, load_problem, rung, shape, 29, "the K split through partials",
                          {**PARTIALS, **split})


# Rungs 30-33's 64-column tiles (wgmma n64; the selection's where N <= 64): 64, 128 and 192 rows, alone, in a
# persistent grid, and in parts of K through partials; N below one tile (odd, 1 and 17 columns), exactly one, and
# several tiles of 64 with a ragged last one (N = 200: B's rows padded); rungs 32-33 with B3D = 1 where N is a
# multiple of 64 (one box: a 2-D load, as the driver's map), both passes.
NARROW = {"64": {"BM": 64, "BN": 64, "STAGES": 8, "CLUSTER": 1, "KSPLIT": 1, "PERSISTENT": 1},
          "128-flat": {"BM": 128, "BN": 64, "STAGES": 8, "CLUSTER": 1, "KSPLIT": 1, "PERSISTENT": 0},
          "192": {"BM": 192, "BN": 64, "STAGES": 4, "CLUSTER": 1, "KSPLIT": 1, "PERSISTENT": 1},
          "64-parts": {"BM": 64, "BN": 64, "STAGES": 8, "CLUSTER": 1, "KSPLIT": 5, "PERSISTENT": 1},
          "128-parts": {"BM": 128, "BN": 64, "STAGES": 8, "CLUSTER": 1, "KSPLIT": 4, "PERSISTENT": 1}}


@pytest.mark.parametrize("rung", [30, 31, 32, 33])
@pytest.mark.parametrize("tile", NARROW)
@pytest.mark.parametrize("shape", [Shape(7, 1, 5), Shape(1000, 17, 3001), Shape(129, 64, 999), Shape(300, 200, 4097)],
                         ids=str)
def test_64_column_tiles_match_fp64_reference(gpu, load_problem, rung, tile, shape):
    b3d = {"B3D": int(shape.N % 64 == 0)} if rung in (32, 33) else {}
    _verify_sm90_schedule(gpu, load_problem, rung, shape, 31, "wgmma n64", {**NARROW[tile], **b3d})


# Rung 32/33's one-load B in each of the kernel's paths: clusters of one (every box in one load), multicast with
# two boxes per block (one 3-D multicast load) and with one (2-D, also with 192-row tiles: three consumer
# warpgroups), and the K split in pairs; N a multiple of 64
# with partial tiles whose last chunks lie past N (TMA reads them as zeros), odd M and K, both passes.
B3D_PATHS = {"one": {"BM": 64, "BN": 128, "STAGES": 8, "CLUSTER": 1, "KSPLIT": 1, "PERSISTENT": 1},
             "multicast-3d": {"BM": 128, "BN": 256, "STAGES": 4, "CLUSTER": 2, "KSPLIT": 1, "PERSISTENT": 1},
             "multicast-2d": {"BM": 64, "BN": 256, "STAGES": 4, "CLUSTER": 4, "KSPLIT": 1, "PERSISTENT": 1},
             "three-warpgroups": {"BM": 192, "BN": 128, "STAGES": 4, "CLUSTER": 2, "KSPLIT": 1, "PERSISTENT": 1},
             "pairs": PAIR}


@pytest.mark.parametrize("rung", [32, 33])
@pytest.mark.parametrize("path", B3D_PATHS)
@pytest.mark.parametrize("shape", [Shape(7, 64, 5), Shape(127, 192, 511), Shape(300, 320, 4097),
                                   Shape(1000, 1024, 999)], ids=str)
def test_one_load_b_matches_fp64_reference(gpu, load_problem, rung, path, shape):
    _verify_sm90_schedule(gpu, load_problem, rung, shape, 29, "the 3-D B map", {**B3D_PATHS[path], "B3D": 1},
                          check=False)


def test_one_load_b_is_refused_where_n_is_not_a_multiple_of_64(gpu):
    from gemmbench.backend import SkipKernel
    from gemmbench.rungs import get_spec
    spec = get_spec("gpu", 32)
    skip_unless_sm90a(gpu, "the 3-D B map")
    shape = Shape(64, 1000, 64)
    gpu.load(Problem.random(shape, seed=5))
    with pytest.raises(SkipKernel, match="multiple of 64"):
        gpu.prepare(spec, shape, {**spec.params_for(64, 1000, 64, gpu.info.sm_count), "B3D": 1})


@pytest.mark.parametrize("element", ["bf16", "fp16"])
def test_reference_is_of_the_rounded_inputs(gpu, element):
    problem = Problem.random(Shape(65, 33, 129), seed=2)
    gpu.load(problem)
    ref, absref = gpu.reference(problem, element)
    a, b = (round_to(x, element).astype(np.float64) for x in (problem.A, problem.B))
    np.testing.assert_allclose(ref, a @ b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(absref, np.abs(a) @ np.abs(b), rtol=1e-12)


@pytest.mark.parametrize("element", ["bf16", "fp16"])
def test_c_is_held_in_the_16_bit_type(gpu, element):
    problem = Problem.random(Shape(9, 11, 3), seed=3)
    gpu.load(problem)
    c = problem.C0.copy()
    c[0, 0] = np.nan
    gpu.set_c(c, element)
    back = gpu.get_c(element)
    assert back.dtype == np.float32 and np.isnan(back[0, 0])
    np.testing.assert_array_equal(back[1:], round_to(c[1:], element))
    np.testing.assert_array_equal(gpu.get_c("fp32").shape, (9, 11))  # the FP32 C stays beside it


@pytest.mark.parametrize("shape", [Shape(1, 1, 1), Shape(127, 255, 511)], ids=str)
def test_the_bf16_example_kernel_file_verifies(gpu, shape):
    from pathlib import Path

    from gemmbench import kernelfile
    spec = kernelfile.load(Path(__file__).resolve().parent.parent / "examples" / "tiled_bf16.cu", 0).spec
    problem = Problem.random(shape, seed=5)
    gpu.load(problem)
    passes = expectations(problem, *gpu.reference(problem, "bf16"))
    v = verify_kernel(gpu, gpu.prepare(spec, shape).gemm, passes, "bf16")
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"
