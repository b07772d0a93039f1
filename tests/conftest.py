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
