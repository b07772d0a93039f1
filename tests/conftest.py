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
