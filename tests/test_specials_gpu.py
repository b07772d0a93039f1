"""NaN and Inf in A and B through every GPU row (rungs, their mma.sync fallbacks, cuBLAS): each must put NaN and
infinities of the right signs where the float64 reference of its inputs has them, and nothing non-finite
elsewhere. Shapes that take each rung's paths: tiles with ragged edges, K splits, one-launch paths for few rows
or columns, a long K."""

import pytest

from gemmbench.backend import Shape
from gemmbench.rungs import GPU_LADDER

pytestmark = [pytest.mark.gpu, pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")]

ROWS = list(GPU_LADDER) + [s.fallback for s in GPU_LADDER if s.fallback]
SHAPES = [Shape(7, 13, 5), Shape(127, 255, 511), Shape(1000, 1000, 1000), Shape(129, 96, 4097),
          Shape(3, 4099, 2), Shape(4099, 3, 37), Shape(200, 136, 20000)]


def _id(spec):
    return f"rung{spec.id}-{spec.precision}" + ("-fallback" if "fallback" in (spec.summary or "") else "")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("spec", ROWS, ids=_id)
def test_row_carries_nan_and_inf_as_the_reference_does(gpu, specials_check, spec, shape):
    # 3xTF32 (rungs 15, 18) splits each operand into a big and a small TF32 half: an Inf's small half is
    # Inf - Inf = NaN, and its big half times the other operand's small half is an infinity of that half's sign,
    # so the row or column of an Inf comes out NaN where the reference has +-Inf (README, "NaN and Inf in the
    # inputs"). NaN, and all else, as the others.
    assert specials_check(gpu, spec, shape, seed=29, inf_may_be_nan=spec.precision == "3xtf32") == []
