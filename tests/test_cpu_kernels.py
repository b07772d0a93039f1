"""Every CPU rung, OpenBLAS included, against the float64 reference."""

from types import SimpleNamespace

import numpy as np
import pytest

from gemmbench.backend import Budget, Problem, Shape, SkipKernel
from gemmbench.cpu import backend as cpu_backend
from gemmbench.cpu.backend import CpuBackend
from gemmbench.rungs import CPU_LADDER
from gemmbench.verify import Expectation

# the shapes, plus shapes that are multiples of no micro-tile or block
SHAPES = [(1, 1, 1), (7, 13, 5), (63, 65, 67), (257, 129, 511), (13, 37, 300), (29, 33, 17)]
# (alpha, beta); beta == 0 runs on a NaN-filled C, which must not leak
SCALARS = [(1.0, 0.0), (-2.5, 0.0), (0.75, -1.5)]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One private library cache for the module: each rung compiles once."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GEMMBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("so")))
        yield


def run(backend, spec, problem, alpha, beta):
    gemm = backend.prepare(spec, problem.shape).gemm
    backend.set_c(problem.C0 if beta else np.full_like(problem.C0, np.nan))
    gemm(alpha, beta)
    return backend.get_c()


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("spec", CPU_LADDER, ids=lambda s: f"rung{s.id}")
def test_rung_matches_reference(cache, spec, shape):
    backend = CpuBackend()
    problem = Problem.random(Shape(*shape), seed=sum(shape))
    backend.load(problem)
    ref, abs_ref = backend.reference(problem)
    for alpha, beta in SCALARS:
        c = run(backend, spec, problem, alpha, beta)
        assert c.shape == shape[:2] and c.dtype == np.float32
        v = Expectation.of(ref, abs_ref, shape[2], alpha, beta, problem.C0).check(c)
        assert v.nonfinite == 0, f"alpha={alpha} beta={beta}: NaN/inf in C"
        assert v.passed, f"alpha={alpha} beta={beta}: error {v.max_rel_error:.3g} > {v.tolerance:.3g}"


@pytest.mark.parametrize("threads", [1, 3])
def test_multithreaded_rung_at_other_thread_counts(cache, threads):
    """Rung 6 splits rows between threads: an odd count must split them correctly too."""
    spec = CPU_LADDER[6]
    backend = CpuBackend(threads=threads)
    problem = Problem.random(Shape(45, 70, 300), seed=3)
    backend.load(problem)
    ref, abs_ref = backend.reference(problem)
    c = run(backend, spec, problem, 1.0, 0.0)
    assert Expectation.of(ref, abs_ref, 300).check(c).passed


def test_thread_policy():
    default, pinned = CpuBackend(), CpuBackend(threads=3)
    for spec in CPU_LADDER:
        assert pinned.threads_for(spec) == 3
        assert default.threads_for(spec) == (cpu_backend.core_count() if spec.id == 6 else 1)


def test_measure_returns_raw_samples(cache):
    backend = CpuBackend()
    backend.load(Problem.random(Shape(32, 32, 32)))
    gemm = backend.prepare(CPU_LADDER[5], Shape(32, 32, 32)).gemm
    budget = Budget(warmup_seconds=0.0, min_samples=5, max_samples=7, max_seconds=1e-3)
    samples, notes = backend.measure(gemm, 1.0, 0.0, budget)
    assert notes["calls_per_sample"] == 1 and notes["stopped"] in ("budget", "samples")
    assert set(notes) == {"calls_per_sample", "stopped", "median_noise"}  # no noise target asked
    assert 5 <= len(samples) <= 7 and all(t > 0 for t in samples)


def test_too_slow_rung_is_skipped_with_predicted_time(cache, monkeypatch):
    monkeypatch.setattr(cpu_backend, "_PREDICT_ABOVE_FLOPS", 0)
    backend = CpuBackend(max_call_seconds=1e-12)
    backend.load(Problem.random(Shape(16, 16, 16)))
    with pytest.raises(SkipKernel, match=r"predicted to take .* s"):
        backend.prepare(CPU_LADDER[1], Shape(16, 16, 16))


def test_environment_is_json_safe(cache):
    import json
    env = CpuBackend().environment()
    json.dumps(env)
    assert env["cores"] >= 1 and env["simd"] in ("avx512", "avx2", "portable")


X86 = __import__("platform").machine() in ("x86_64", "AMD64")


@pytest.mark.skipif(not X86, reason="x86 target flags")
@pytest.mark.parametrize("flags", [("-mno-avx512f",), ("-mno-avx2", "-mno-avx512f", "-mno-fma")],
                         ids=["avx2-kernel", "portable-kernel"])
@pytest.mark.parametrize("rung", [5, 6])
def test_other_micro_kernels(cache, rung, flags):
    """The AVX2 and plain-C micro-kernels, which other machines compile to."""
    import dataclasses
    spec = dataclasses.replace(CPU_LADDER[rung], cflags=CPU_LADDER[rung].cflags + flags)
    backend = CpuBackend()
    for shape in [(7, 13, 5), (61, 70, 300)]:
        problem = Problem.random(Shape(*shape), seed=5)
        backend.load(problem)
        ref, abs_ref = backend.reference(problem)
        for alpha, beta in SCALARS:
            c = run(backend, spec, problem, alpha, beta)
            assert Expectation.of(ref, abs_ref, shape[2], alpha, beta, problem.C0).check(c).passed


@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 13, 5), (63, 65, 67), (257, 129, 511)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("spec", CPU_LADDER, ids=lambda s: f"rung{s.id}")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # numpy's matmul (rung 0) on NaN
def test_rung_carries_nan_and_inf_as_the_reference_does(cache, specials_check, spec, shape):
    """A NaN in A or B (the GPU's own 0x7fffffff, and all ones) makes its row or column of C NaN; an Inf makes
    infinities of the right signs (NaN where they meet a zero, a NaN or the other sign); the rest is as without
    them. A kernel that skips zeros or rounds by integer arithmetic can lose them."""
    assert specials_check(CpuBackend(), spec, Shape(*shape), seed=sum(shape)) == []


def _round_tf32_by_integers(x):
    """TF32 rounding as (bits + 0x1000) & ~0x1fff: cvt.rna's bits for finite x, but the carry turns NaNs whose
    top mantissa bits are all ones (0x7fffffff becomes -0.0) into zeros."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


class _HostGemm:
    """A stand-in backend whose kernel is numpy on inputs passed through ``operand`` and an output passed
    through ``result``: what the specials check must catch in a kernel."""

    def __init__(self, operand=lambda x: x, result=lambda c: c):
        self.operand, self.result = operand, result

    def load(self, problem):
        self.A, self.B = self.operand(problem.A), self.operand(problem.B)

    def prepare(self, spec, shape, params=None):
        def gemm(alpha, beta):
            with np.errstate(all="ignore"):
                product = self.A.astype(np.float64) @ self.B.astype(np.float64)
                c = alpha * product + (beta * self.C if beta else 0.0)
            self.C = self.result(c.astype(np.float32))
        return SimpleNamespace(gemm=gemm)

    def set_c(self, c, output="fp32"):
        self.C = c.copy()

    def get_c(self, output="fp32"):
        return self.C


@pytest.mark.parametrize("shape", [Shape(7, 13, 5), Shape(63, 65, 67)], ids=str)
def test_the_specials_check_catches_lost_nans_and_infs(specials_check, shape):
    tf32 = SimpleNamespace(precision="tf32")
    assert specials_check(_HostGemm(), tf32, shape, seed=5) == []
    dropped = specials_check(_HostGemm(result=np.nan_to_num), tf32, shape, seed=5)
    assert any(w.startswith("alpha=1.0 beta=0.0: NaN at") for w in dropped)
    assert any("+Inf at" in w for w in dropped) and any("-Inf at" in w for w in dropped)
    by_integers = specials_check(_HostGemm(operand=_round_tf32_by_integers), tf32, shape, seed=5)
    assert any("NaN at" in w for w in by_integers), by_integers
    assert not any("finite elements" in w for w in by_integers)  # the finite values are cvt.rna's


def test_the_3xtf32_check_fails_an_inf_that_comes_out_nan(specials_check):
    """3xTF32's three products can turn an Inf into NaN (an Inf's small half is Inf - Inf); every 3xTF32 row
    sums such an element again in FP32, so the check holds it to the reference's infinities like any other."""
    split, shape = SimpleNamespace(precision="3xtf32"), Shape(63, 65, 67)
    assert specials_check(_HostGemm(), split, shape, seed=5) == []
    inf_to_nan = _HostGemm(result=lambda c: np.where(np.isinf(c), np.float32(np.nan), c))
    wrong = specials_check(inf_to_nan, split, shape, seed=5)
    assert any("NaN at" in w for w in wrong) and any("Inf at" in w for w in wrong), wrong
