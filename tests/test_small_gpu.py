"""Rungs 17 and 18 at small products on a GPU: their small path
(cuda_src/small_gemm.cu) against the FP64 reference, both verification
passes, at shapes with every dimension odd, K of one, and partial tiles;
and the kernel forced at shapes past the limits (many K steps, many tiles)."""

import pytest

from gemmbench.backend import Shape
from gemmbench.execute.local import verify_kernel
from gemmbench.rungs import get_spec
from conftest import skip_unless_sm90a

pytestmark = pytest.mark.gpu

CHOSEN = [Shape(3, 5, 7), Shape(2, 3, 1), Shape(33, 65, 47), Shape(100, 100, 101), Shape(200, 200, 201),
          Shape(512, 512, 32), Shape(1000, 8, 16)]
FORCED = [Shape(130, 70, 600), Shape(257, 31, 1025)]


@pytest.fixture(scope="module", params=CHOSEN + FORCED, ids=str)
def loaded(request, gpu, load_problem):
    return load_problem(gpu, request.param, seed=37)


@pytest.mark.parametrize("rung", [17, 18])
def test_the_small_path_matches_fp64_reference(gpu, loaded, rung):
    problem, passes = loaded
    spec = get_spec("gpu", rung)
    skip_unless_sm90a(gpu, "rung %d's small path" % rung)
    shape = problem.shape
    params = None
    if shape not in CHOSEN:
        params = {**spec.params_for(shape.M, shape.N, shape.K, gpu.info.sm_count), "SMALL": 1}
    prepared = gpu.prepare(spec, shape, params)
    assert prepared.params.get("SMALL") == 1
    v = verify_kernel(gpu, prepared.gemm, passes, spec.precision)
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"
