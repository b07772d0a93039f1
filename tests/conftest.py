import dataclasses

import numpy as np
import pytest


def _gpu_available() -> bool:
    try:
        import pycuda.driver as cuda
        cuda.init()
        return cuda.Device.count() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU and pycuda")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def private_caches(tmp_path_factory, monkeypatch):
    """Tests never write into the user's real caches. One private cache for
    the whole test session, so each C rung compiles once; XDG_CACHE_HOME too,
    for whatever asks platformdirs (pycuda's cubins, gemmbench's defaults)."""
    root = tmp_path_factory.getbasetemp() / "caches"
    monkeypatch.setenv("GEMMBENCH_CACHE_DIR", str(root / "gemmbench"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "xdg"))


@pytest.fixture(scope="module")
def gpu():
    """The GPU tests' backend: one per test module."""
    from gemmbench.gpu.backend import GpuBackend
    return GpuBackend()


def skip_unless_sm90a(gpu, what: str) -> None:
    """Skip the calling test unless ``gpu`` runs the sm_90a builds (wgmma, TMA: compute capability 9.0).
    ``what`` names the path under test; elsewhere it is not built, and a rung runs its mma.sync fallback."""
    from gemmbench.spec import runs_sm90a
    cc = tuple(gpu.info.compute_capability)
    if not runs_sm90a(cc):
        pytest.skip(f"{what}: sm_90a only (this GPU is sm_{cc[0]}{cc[1]}; its rungs run the mma.sync fallback)")


@pytest.fixture(scope="session")
def load_problem():
    """load_problem(gpu, shape, seed[, elements]) -> (problem, expectations):
    seeded random inputs loaded on the GPU, and what the FP64 reference
    expects of them (per 16-bit element type, where ``elements`` names some)."""
    from gemmbench.backend import Problem
    from gemmbench.execute.local import expectations

    def load(gpu, shape, seed, elements=None):
        problem = Problem.random(shape, seed=seed)
        gpu.load(problem)
        if elements:
            return problem, {e: expectations(problem, *gpu.reference(problem, e)) for e in elements}
        return problem, expectations(problem, *gpu.reference(problem))
    return load


# NaN and Inf planted in A and B. The NaNs are the bit patterns a rounding by integer arithmetic can carry into
# the exponent and the sign, turning them into finite values: the GPU's own NaN (0x7fffffff, what Inf - Inf gave
# on the H200) and all ones (memory set to 0xff). Each special sits alone in its row of A or column of B, at the
# first, middle and last indices of K (a K tail, the first and last of K splits).
_NAN_GPU = np.uint32(0x7FFFFFFF).view(np.float32)
_NAN_ONES = np.uint32(0xFFFFFFFF).view(np.float32)


def plant_specials(problem):
    """The problem with NaN at A[M/3, K/2] (a row of NaN in C) and B[K/3, N/3] (a column), +Inf at A[2M/3, K-1]
    and -Inf at B[0, 2N/3] (a row and a column of infinities of both signs; NaN where they cross the others
    or meet a zero), and in C0 (read where beta != 0) NaN at [M/2, N/2] and +Inf at [M-1, 0]."""
    M, N, K = problem.shape.M, problem.shape.N, problem.shape.K
    A, B = problem.A.copy(), problem.B.copy()
    A[M // 3, K // 2] = _NAN_GPU
    B[K // 3, N // 3] = _NAN_ONES
    A[2 * M // 3, K - 1] = np.inf
    B[0, 2 * N // 3] = -np.inf
    C0 = problem.C0.copy()  # what beta != 0 reads: one NaN and one Inf of its own
    C0[M // 2, N // 2] = _NAN_GPU
    C0[M - 1, 0] = np.inf
    return dataclasses.replace(problem, A=A, B=B, C0=C0)


def specials_reference(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A @ B, |A| @ |B|) in float64 with IEEE semantics for the non-finite terms: the K indices that hold a
    special are summed term by term (NaN * x, Inf * 0, Inf - Inf give NaN), the rest by BLAS."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    ks = np.flatnonzero(~np.isfinite(a).all(axis=0) | ~np.isfinite(b).all(axis=1))
    a0, b0 = a.copy(), b.copy()
    a0[:, ks] = 0.0
    b0[ks, :] = 0.0
    ref, scale = a0 @ b0, np.abs(a0) @ np.abs(b0)
    with np.errstate(invalid="ignore"):
        for p in ks:
            term = np.multiply.outer(a[:, p], b[p, :])
            ref += term
            scale += np.abs(term)
    return ref, scale


def specials_mismatches(got: np.ndarray, expect, precision: str) -> list[str]:
    """Where C's NaN, +Inf and -Inf are not where the pass's expectation (verify.Expectation) has them, and a
    finite element past the class's tolerance: one line each (empty: C is right)."""
    want = expect.want
    wrong = []
    for name, where in (("NaN", np.isnan), ("+Inf", np.isposinf), ("-Inf", np.isneginf)):
        w, g = where(want), where(got)
        if (w != g).any():
            i, j = np.argwhere(w != g)[0]
            wrong.append(f"{name} at {int(w.sum())} elements, C has {int(g.sum())}; first differing at "
                         f"({i}, {j}): C {got[i, j]!r}, reference {want[i, j]!r}")
    # the finite elements through the tool's own check (verify.Expectation.check), the others left out as exact
    finite = np.isfinite(want) & np.isfinite(got)
    v = dataclasses.replace(expect, want=np.where(finite, want, 0.0), scale=np.where(finite, expect.scale, 1.0)) \
        .check(np.where(finite, got.astype(np.float64), 0.0), precision)
    if not v.passed:
        wrong.append(f"finite elements: max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}")
    return wrong


@pytest.fixture(scope="session")
def specials_check():
    """specials_check(backend, spec, shape, seed[, params]) -> mismatches: loads seeded inputs with NaN
    and Inf planted (plant_specials), runs the kernel in the two verification passes (execute.local.expectations,
    as verify_kernel runs them) and lists where C differs from the float64 reference of the inputs as the
    kernel's class sees them."""
    from gemmbench.backend import Problem
    from gemmbench.execute.local import expectations
    from gemmbench.precision import precision as precision_class
    from gemmbench.precision import round_to
    passes = {}

    def check(backend, spec, shape, seed, params=None):
        cls = precision_class(spec.precision)
        problem = plant_specials(Problem.random(shape, seed=seed))
        key = (shape, seed, cls.inputs)
        if key not in passes:
            a, b = problem.A, problem.B
            if cls.inputs != "fp32":
                a, b = round_to(a, cls.inputs), round_to(b, cls.inputs)
            passes[key] = expectations(problem, *specials_reference(a, b))
        backend.load(problem)
        gemm = backend.prepare(spec, shape, params).gemm
        wrong = []
        for expect in passes[key]:
            backend.set_c(np.full_like(problem.C0, np.nan) if expect.C0 is None else expect.C0, cls.output)
            gemm(expect.alpha, expect.beta)
            wrong += [f"alpha={expect.alpha} beta={expect.beta}: {w}" for w in
                      specials_mismatches(backend.get_c(cls.output), expect, spec.precision)]
        return wrong
    return check
