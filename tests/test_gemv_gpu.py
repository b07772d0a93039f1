"""Rungs 17, 18 and 28 at GEMV shapes (M == 1 or N == 1) on a GPU: their GEMV
path (cuda_src/gemv.cu) against the FP64 reference, both verification
passes, with and without float4 loads (K or N a multiple of 4 or not); and
rungs 30-33 on theirs (gemv_bf16.cu, gemv_fp16.cu), with and without 16-byte
loads (K or N a multiple of 8 or not)."""

import pytest

from gemmbench.backend import Shape
from gemmbench.execute.local import verify_kernel
from gemmbench.rungs import get_spec
from conftest import skip_unless_sm90a

pytestmark = pytest.mark.gpu

SHAPES = [Shape(1, 1, 1), Shape(1, 7, 5), Shape(9, 1, 13), Shape(1, 1030, 257), Shape(1, 1032, 257),
          Shape(1031, 1, 258), Shape(1031, 1, 260), Shape(1, 1, 4099), Shape(4096, 1, 4096), Shape(1, 4096, 4096)]


@pytest.fixture(scope="module", params=SHAPES, ids=str)
def loaded(request, gpu, load_problem):
    return load_problem(gpu, request.param, seed=31)


@pytest.mark.parametrize("rung", [17, 18, 28])
def test_the_gemv_path_matches_fp64_reference(gpu, loaded, rung):
    problem, passes = loaded
    spec = get_spec("gpu", rung)
    if rung != 28:
        skip_unless_sm90a(gpu, "rung %d's GEMV path" % rung)
    prepared = gpu.prepare(spec, problem.shape)
    assert prepared.params.get("GEMV") == 1
    v = verify_kernel(gpu, prepared.gemm, passes, spec.precision)
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"


SHAPES_16 = [Shape(1, 1, 1), Shape(1, 7, 5), Shape(9, 1, 13), Shape(1, 1028, 257), Shape(1, 1032, 257),
             Shape(1031, 1, 260), Shape(1031, 1, 264), Shape(1, 1, 4099), Shape(4096, 1, 4096), Shape(1, 4096, 4096),
             Shape(1, 4100, 3000)]


@pytest.fixture(scope="module", params=SHAPES_16, ids=str)
def loaded16(request, gpu, load_problem):
    return load_problem(gpu, request.param, seed=37, elements=("bf16", "fp16"))


@pytest.mark.parametrize("rung", [30, 31, 32, 33])
def test_the_16_bit_gemv_path_matches_fp64_reference(gpu, loaded16, rung):
    problem, passes = loaded16
    spec = get_spec("gpu", rung)
    skip_unless_sm90a(gpu, "rung %d's GEMV path" % rung)
    prepared = gpu.prepare(spec, problem.shape)
    assert prepared.params.get("GEMV") == 1
    v = verify_kernel(gpu, prepared.gemm, passes[spec.precision], spec.precision)
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"
