import numpy as np
import pytest

from gemmbench.backend import Problem, Shape
from gemmbench.verify import Expectation, combine, tolerance


def check(C, ref, absref, K, alpha=1.0, beta=0.0, C0=None):
    return Expectation.of(ref, absref, K, alpha, beta, C0).check(C)


def _reference(p):
    a, b = p.A.astype(np.float64), p.B.astype(np.float64)
    return a @ b, np.abs(a) @ np.abs(b)


@pytest.fixture(scope="module")
def problem():
    return Problem.random(Shape(37, 29, 513), seed=3)


def test_float32_matmul_passes(problem):
    ref, absref = _reference(problem)
    v = check(problem.A @ problem.B, ref, absref, problem.shape.K)
    assert v.passed and v.nonfinite == 0
    assert v.max_rel_error < 1e-6


def test_tolerance_grows_with_k():
    assert tolerance(4096) == pytest.approx(4 * tolerance(256))
    assert 0 < tolerance(1) < 1e-5


def test_dropping_one_term_of_k_fails(problem):
    """The bug verification exists for: a tile edge that loses one k."""
    ref, absref = _reference(problem)
    K = problem.shape.K
    wrong = problem.A[:, : K - 1] @ problem.B[: K - 1, :]
    assert not check(wrong, ref, absref, K).passed


def test_one_wrong_element_fails(problem):
    ref, absref = _reference(problem)
    c = (problem.A @ problem.B).copy()
    c[5, 7] += 1e-3 * absref[5, 7]
    v = check(c, ref, absref, problem.shape.K)
    assert not v.passed and v.max_rel_error == pytest.approx(1e-3, rel=0.05)


@pytest.mark.parametrize("poison", [np.nan, np.inf])
def test_non_finite_output_fails(problem, poison):
    ref, absref = _reference(problem)
    c = (problem.A @ problem.B).copy()
    c[0, 0] = poison
    v = check(c, ref, absref, problem.shape.K)
    assert not v.passed and v.nonfinite == 1


def test_alpha_beta_epilogue(problem):
    ref, absref = _reference(problem)
    alpha, beta = 0.75, -1.5
    c = alpha * (problem.A @ problem.B) + beta * problem.C0
    assert check(c, ref, absref, problem.shape.K, alpha=alpha, beta=beta, C0=problem.C0).passed
    # forgetting beta*C is caught
    assert not check(alpha * (problem.A @ problem.B), ref, absref, problem.shape.K,
                     alpha=alpha, beta=beta, C0=problem.C0).passed


def test_exact_zero_reference_needs_exact_zero():
    z = np.zeros((2, 2))
    assert check(np.zeros((2, 2), np.float32), z, z, 4).passed
    assert not check(np.full((2, 2), 1e-30, np.float32), z, z, 4).passed


def test_combine_keeps_the_worst():
    a = check(np.ones((1, 1), np.float32), np.ones((1, 1)), np.ones((1, 1)), 1)
    b = check(np.full((1, 1), np.nan, np.float32), np.ones((1, 1)), np.ones((1, 1)), 1)
    worst = combine(a, b)
    assert not worst.passed and worst.nonfinite == 1 and combine(a, a).passed


def test_problem_is_seeded():
    p1, p2 = Problem.random(Shape(3, 4, 5), 7), Problem.random(Shape(3, 4, 5), 7)
    assert np.array_equal(p1.A, p2.A) and np.array_equal(p1.B, p2.B) and p1.A.dtype == np.float32
    assert not np.array_equal(p1.A, Problem.random(Shape(3, 4, 5), 8).A)


def test_blocked_check_matches_whole_array_maths():
    """The row-blocked, threaded check finds the worst element wherever it is."""
    p = Problem.random(Shape(1100, 40, 64), seed=9)
    ref, absref = _reference(p)
    c = p.A @ p.B
    for row in (0, 555, 1099):
        bad = c.copy()
        bad[row, 3] += 1e-2 * absref[row, 3]
        v = check(bad, ref, absref, 64)
        assert v.max_rel_error == pytest.approx(1e-2, rel=1e-3) and not v.passed
    bad = c.copy()
    bad[1099, 39] = np.nan
    v = check(bad, ref, absref, 64)
    assert v.nonfinite == 1 and v.max_rel_error == np.inf


def _tf32(x: np.ndarray) -> np.ndarray:
    """Round float32 to TF32 (10 mantissa bits), nearest, ties away: as cvt.rna.tf32.f32."""
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def test_tf32_results_pass_only_the_tf32_bound(problem):
    ref, absref = _reference(problem)
    C = _tf32(problem.A) @ _tf32(problem.B)
    expect = Expectation.of(ref, absref, problem.shape.K)
    assert expect.check(C, "tf32").passed
    assert not expect.check(C, "fp32").passed  # TF32 is not FP32-accurate


def test_tf32_bound_still_catches_a_dropped_term(problem):
    """The TF32 bound is looser than FP32's, but not loose enough to hide an indexing bug."""
    ref, absref = _reference(problem)
    a, b = _tf32(problem.A), _tf32(problem.B)
    C = a[:, 1:] @ b[1:, :]  # k = 0 lost, as a tile edge bug would
    assert not Expectation.of(ref, absref, problem.shape.K).check(C, "tf32").passed
    assert tolerance(4096, "tf32") < 4.0 / 4096  # a typical term's share at K = 4096 still shows


def test_unknown_precision_is_refused():
    with pytest.raises(ValueError, match="precision"):
        tolerance(16, "fp8")


def test_3xtf32_split_is_judged_as_fp32_and_passes(problem):
    """a = big + small, both TF32; big*big + big*small + small*big recovers FP32 accuracy."""
    ref, absref = _reference(problem)
    a_big, b_big = _tf32(problem.A), _tf32(problem.B)
    a_small, b_small = _tf32(problem.A - a_big), _tf32(problem.B - b_big)
    C = a_small @ b_big + a_big @ b_small + a_big @ b_big
    expect = Expectation.of(ref, absref, problem.shape.K)
    assert tolerance(513, "3xtf32") == tolerance(513, "fp32")
    assert expect.check(C, "3xtf32").passed
