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
