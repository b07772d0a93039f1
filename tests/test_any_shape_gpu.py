"""Rung 28 on a GPU: every compiled configuration (the vector kernels where
the shape has a short side), unsplit and in 3 and 40 K splits (the two ways
reduce_splits works), with and without the padded copies, against the FP64
reference at odd shapes (both verification passes). Its per-shape choice at
the shape set is covered by test_gpu.py, which runs every rung as chosen."""

import pytest

from gemmbench.backend import Shape
from gemmbench.execute.local import verify_kernel
from gemmbench.rungs import any_shape, get_spec

pytestmark = pytest.mark.gpu

SHAPES = [Shape(1, 1, 1), Shape(7, 13, 5), Shape(127, 255, 511), Shape(513, 1025, 257), Shape(3, 4099, 37),
          Shape(4099, 3, 37), Shape(33, 130, 2051), Shape(8, 1030, 1027), Shape(1001, 8, 515)]


@pytest.fixture(scope="module", params=SHAPES, ids=str)
def loaded(request, gpu, load_problem):
    return load_problem(gpu, request.param, seed=23)


@pytest.mark.parametrize("pack", [0, 1])
@pytest.mark.parametrize("splits", [1, 3, 40])
@pytest.mark.parametrize("config", list(any_shape.CONFIGS))
def test_every_configuration_matches_fp64_reference(gpu, loaded, config, splits, pack):
    problem, passes = loaded
    params = {**any_shape.CONFIGS[config], "SPLITS": splits, "PACK": pack}
    if any_shape.shape_reason(problem.shape.M, problem.shape.N, params):
        pytest.skip(any_shape.shape_reason(problem.shape.M, problem.shape.N, params))
    v = verify_kernel(gpu, gpu.prepare(get_spec("gpu", 28), problem.shape, params).gemm, passes, "fp32")
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"
