"""cuBLAS loading: scikit-cuda imports without pkg_resources, and every way it
can fail to load gives a message naming the real cause."""

import importlib.metadata
import importlib.util
import sys

import pytest

from gemmbench.gpu import cublas

# The two pkg_resources uses of scikit-cuda 0.5.3, in a package of the same shape.
_INIT = """\
try:
    __import__('pkg_resources').declare_namespace(__name__)
except ImportError:
    pass
from .version import __version__
"""
_VERSION = "import pkg_resources\n__version__ = pkg_resources.require('scikit-cuda')[0].version\n"


@pytest.fixture
def fake_skcuda(tmp_path, monkeypatch):
    """Write a package 'skcuda' (with metadata) first on sys.path; pkg_resources
    cannot be imported, as in a Python 3.12 venv or with setuptools >= 82."""
    def write(cublas_source: str = "LOADED = True\n"):
        package = tmp_path / "skcuda"
        package.mkdir()
        (package / "__init__.py").write_text(_INIT)
        (package / "version.py").write_text(_VERSION)
        (package / "cublas.py").write_text(cublas_source)
        meta = tmp_path / "scikit_cuda-0.5.3.dist-info"
        meta.mkdir()
        (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: scikit-cuda\nVersion: 0.5.3\n")
        return package

    for name in [n for n in sys.modules if n == "skcuda" or n.startswith("skcuda.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "pkg_resources", None)  # import pkg_resources -> ImportError
    cublas.skcuda_cublas.cache_clear()
    yield write
    cublas.skcuda_cublas.cache_clear()
    for name in [n for n in sys.modules if n == "skcuda" or n.startswith("skcuda.")]:
        del sys.modules[name]


def test_stand_in_answers_require_from_package_metadata():
    stand_in = cublas._pkg_resources_stand_in()
    assert stand_in.require("numpy")[0].version == importlib.metadata.version("numpy")
    assert stand_in.require("no-such-distribution-xyz")[0].version == "unknown"
    assert stand_in.declare_namespace("skcuda") is None


def test_scikit_cuda_imports_without_pkg_resources(fake_skcuda):
    fake_skcuda()
    module = cublas.skcuda_cublas()
    assert module.LOADED
    assert sys.modules["skcuda"].__version__ == "0.5.3"
    assert sys.modules["pkg_resources"] is None  # the stand-in was only there during the import


def test_a_real_pkg_resources_is_left_alone(monkeypatch):
    real = type(sys)("pkg_resources")
    monkeypatch.setitem(sys.modules, "pkg_resources", real)
    with cublas._pkg_resources_for_skcuda():
        assert sys.modules["pkg_resources"] is real
    assert sys.modules["pkg_resources"] is real


def test_stand_in_is_removed_when_there_was_none(monkeypatch):
    monkeypatch.delitem(sys.modules, "pkg_resources", raising=False)
    with cublas._pkg_resources_for_skcuda():
        assert hasattr(sys.modules["pkg_resources"], "require")
    assert "pkg_resources" not in sys.modules


def test_a_missing_dependency_is_named_not_scikit_cuda(fake_skcuda):
    fake_skcuda("import gemmbench_absent_module_xyz\n")
    with pytest.raises(cublas.CublasUnavailable) as info:
        cublas.skcuda_cublas()
    message = str(info.value)
    assert "gemmbench_absent_module_xyz" in message and "not installed" not in message


def test_an_incompatible_scikit_cuda_names_the_error(fake_skcuda):
    fake_skcuda("import numpy\nnumpy.typeDict\n")  # what a newer numpy does to old code
    with pytest.raises(cublas.CublasUnavailable, match="AttributeError.*typeDict"):
        cublas.skcuda_cublas()


@pytest.mark.skipif(importlib.util.find_spec("skcuda") is not None, reason="scikit-cuda is installed")
def test_missing_scikit_cuda_says_what_to_install():
    cublas.skcuda_cublas.cache_clear()
    with pytest.raises(cublas.CublasUnavailable, match=r"not installed: pip install scikit-cuda"):
        cublas.skcuda_cublas()


@pytest.mark.skipif(importlib.util.find_spec("skcuda") is None, reason="scikit-cuda is not installed")
def test_installed_scikit_cuda_package_imports_without_pkg_resources(monkeypatch):
    """The real skcuda/__init__ and version.py (no CUDA library needed for these)."""
    for name in [n for n in sys.modules if n == "skcuda" or n.startswith("skcuda.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pkg_resources", None)
    with cublas._pkg_resources_for_skcuda():
        import skcuda
    assert skcuda.__version__ == importlib.metadata.version("scikit-cuda")


def test_versioned_library_is_found_under_cuda_home(tmp_path, monkeypatch):
    lib = tmp_path / "lib64"
    lib.mkdir()
    (lib / "libcublas.so.13").write_bytes(b"")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert cublas._find_library("cublas") == str(lib / "libcublas.so.13")


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


def test_unversioned_driver_name_falls_back_to_its_soname(monkeypatch):
    """Without development files only libcuda.so.1 exists; scikit-cuda asks for libcuda.so."""
    import ctypes
    asked = []

    def load(name, *args, **kwargs):
        asked.append(name)
        if name != "libcuda.so.1":
            raise OSError(f"{name}: cannot open shared object file")
        return "driver"

    monkeypatch.setattr(ctypes.cdll, "LoadLibrary", load)
    with cublas._resolved_cuda_libraries():
        assert ctypes.cdll.LoadLibrary("libcuda.so") == "driver"
    assert asked == ["libcuda.so", "libcuda.so.1"]
