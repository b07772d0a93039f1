"""Rung 2 keeps its index math 32-bit while every offset fits in an int; this
checks the 64-bit path, which only a matrix past 2^31 elements takes.

Marked ``gpu``; needs about 40 GB of GPU memory (B alone is 8.6 GB, the FP64
reference copies twice that), so it skips on smaller boards.
"""

import pytest

from gemmbench.backend import Problem, Shape
from gemmbench.execute.local import expectations, verify_kernel
from gemmbench.rungs import get_spec

pytestmark = pytest.mark.gpu

SHAPE = Shape(3, 65537, 32768)  # K x N = 2,147,516,416 elements > 2^31 - 1


def test_rung_2_is_right_past_int_offsets():
    from gemmbench.gpu.backend import GpuBackend
    from gemmbench.gpu.device import free_memory
    assert SHAPE.K * SHAPE.N > 2 ** 31 - 1
    gpu = GpuBackend()
    if free_memory() < 40 * 2 ** 30:
        pytest.skip("needs about 40 GB of free GPU memory")
    problem = Problem.random(SHAPE, seed=3)
    gpu.load(problem)
    passes = expectations(problem, *gpu.reference(problem))
    v = verify_kernel(gpu, gpu.prepare(get_spec("gpu", 2), SHAPE).gemm, passes, "fp32")
    assert v.nonfinite == 0 and v.passed, f"max rel error {v.max_rel_error:.2e}"
