"""cuBLAS loading: clear messages when scikit-cuda or libcublas is missing."""

import importlib.util

import pytest

from gemmbench.gpu import cublas


def test_versioned_library_is_found_under_cuda_home(tmp_path, monkeypatch):
    lib = tmp_path / "lib64"
    lib.mkdir()
    (lib / "libcublas.so.13").write_bytes(b"")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert cublas._find_library("cublas") == str(lib / "libcublas.so.13")


@pytest.mark.skipif(importlib.util.find_spec("skcuda") is not None, reason="scikit-cuda is installed")
def test_missing_scikit_cuda_says_what_to_install():
    cublas.skcuda_cublas.cache_clear()
    with pytest.raises(cublas.CublasUnavailable, match=r"pip install 'gemmbench\[cuda\]'"):
        cublas.skcuda_cublas()


def test_missing_libcublas_says_what_to_set(monkeypatch):
    """scikit-cuda raises OSError when no libcublas loads: the message names the fixes."""
    import builtins
    real_import = builtins.__import__

    def failing_import(name, *args, **kwargs):
        if name == "skcuda":
            raise OSError("cublas library not found")
        return real_import(name, *args, **kwargs)

    cublas.skcuda_cublas.cache_clear()
    monkeypatch.setattr(builtins, "__import__", failing_import)
    with pytest.raises(cublas.CublasUnavailable, match="LD_LIBRARY_PATH"):
        cublas.skcuda_cublas()
    cublas.skcuda_cublas.cache_clear()
