"""cuBLAS through scikit-cuda, quietly, with row-major wrappers.

scikit-cuda 0.5.3 looks only for the unversioned ``libcuda.so``, ``libcublas.so``
and ``libcudart.so`` (or sonames up to CUDA 10.1), and warns while it imports. Here
the import is silenced, and when its own search fails the libraries are looked
up where CUDA installs put them (CUDA_HOME, /usr/local/cuda, the nvidia-*
wheels) and handed to it. It also imports ``pkg_resources``, which recent
setuptools no longer has; a stand-in answers its calls (see
_pkg_resources_stand_in).
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import importlib.metadata
import io
import os
import sys
import types
import warnings
from functools import lru_cache


class CublasUnavailable(Exception):
    """scikit-cuda or libcublas could not be loaded; message says what to do."""


def _candidate_dirs() -> list[str]:
    dirs = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs.append(os.path.join(os.environ[var], "lib64"))
    dirs += ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu"]
    for entry in sys.path:  # the nvidia-cublas / nvidia-cuda-runtime wheels
        dirs += glob.glob(os.path.join(entry, "nvidia", "*", "lib"))
    return dirs


def _find_library(stem: str) -> str | None:
    """Newest-looking lib<stem>.so* in the usual CUDA places."""
    for folder in _candidate_dirs():
        hits = sorted(glob.glob(os.path.join(folder, f"lib{stem}.so*")), key=len)
        if hits:
            return hits[0]
    return None


@contextlib.contextmanager
def _resolved_cuda_libraries():
    """Let scikit-cuda's LoadLibrary('libcublas.so') find a versioned library."""
    found = {f"lib{stem}.so": _find_library(stem) for stem in ("cublas", "cudart")}
    # the driver's unversioned name comes only with development files; its soname is always there
    found["libcuda.so"] = "libcuda.so.1"
    original = ctypes.cdll.LoadLibrary

    def load(name, *args, **kwargs):
        try:
            return original(name, *args, **kwargs)
        except OSError:
            if found.get(name):
                return original(found[name], *args, **kwargs)
            raise

    ctypes.cdll.LoadLibrary = load
    try:
        yield
    finally:
        ctypes.cdll.LoadLibrary = original


def _pkg_resources_stand_in() -> types.ModuleType:
    """The two pkg_resources calls scikit-cuda 0.5.3 makes, from the standard library.

    ``skcuda/version.py`` runs ``pkg_resources.require('scikit-cuda')[0].version``;
    ``skcuda/__init__.py`` runs ``declare_namespace(__name__)``, falling back to
    pkgutil only on ImportError. setuptools 82 removed pkg_resources and a
    Python 3.12 venv has no setuptools, so without this the import fails.
    """
    def require(name: str) -> list:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:  # files without metadata: only a label is lost
            version = "unknown"
        return [types.SimpleNamespace(project_name=name, version=version)]

    module = types.ModuleType("pkg_resources", "gemmbench's stand-in while scikit-cuda imports")
    module.require = require
    module.declare_namespace = lambda name: None  # skcuda is a regular package: nothing to declare
    return module


@contextlib.contextmanager
def _pkg_resources_for_skcuda():
    """pkg_resources is the stand-in while skcuda imports, unless a real one is
    already loaded; afterwards sys.modules is as it was."""
    if isinstance(sys.modules.get("pkg_resources"), types.ModuleType):
        yield
        return
    missing = object()
    saved = sys.modules.get("pkg_resources", missing)
    sys.modules["pkg_resources"] = _pkg_resources_stand_in()
    try:
        yield
    finally:
        if saved is missing:
            del sys.modules["pkg_resources"]
        else:
            sys.modules["pkg_resources"] = saved


@lru_cache(maxsize=None)
def skcuda_cublas():
    """The skcuda.cublas module, imported without its warnings and chatter."""
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()), _resolved_cuda_libraries(), _pkg_resources_for_skcuda():
            warnings.simplefilter("ignore")
            from skcuda import cublas  # here, not at the top: scikit-cuda is optional
    except ImportError as exc:
        if exc.name == "skcuda":
            raise CublasUnavailable("scikit-cuda is not installed: pip install scikit-cuda==0.5.3") from None
        raise CublasUnavailable(f"scikit-cuda cannot be imported: {exc}"
                                + (f" (install the module {exc.name!r})" if exc.name else "")) from None
    except OSError as exc:
        raise CublasUnavailable(
            f"scikit-cuda could not load a CUDA library ({exc}): install the CUDA toolkit or "
            "'pip install nvidia-cublas nvidia-cuda-runtime', or add the folder holding "
            "libcublas.so to LD_LIBRARY_PATH") from None
    except Exception as exc:  # e.g. an API its code predates
        raise CublasUnavailable(f"scikit-cuda cannot be imported: {type(exc).__name__}: {exc}") from None
    return cublas


CUBLAS_TF32_TENSOR_OP_MATH = 3  # cublasMath_t in cublas_api.h
# cudaDataType_t (library_types.h) of the 16-bit element types, and the compute type and algorithm of GemmEx
CUDA_DATA_TYPE = {"fp16": 2, "bf16": 14}  # CUDA_R_16F, CUDA_R_16BF
CUBLAS_COMPUTE_32F = 68
CUBLAS_GEMM_DEFAULT = -1
CUBLAS_OP_N = 0


class Cublas:
    """A cuBLAS handle bound to a stream, with row-major GEMM calls.

    Row-major C = A @ B is column-major C^T = B^T @ A^T, so the operands swap
    and no transpose is needed. With ``tf32`` the handle's math mode lets
    cublasSgemm round its inputs to TF32 and run on tensor cores.
    """

    def __init__(self, stream=None, tf32: bool = False):
        self.lib = skcuda_cublas()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.handle = self.lib.cublasCreate()
        if stream is not None:
            self.lib.cublasSetStream(self.handle, stream.handle)
        if tf32:
            self._set_math_mode(CUBLAS_TF32_TENSOR_OP_MATH)

    def _set_math_mode(self, mode: int) -> None:
        # scikit-cuda 0.5.3 predates cublasSetMathMode: call it on the library it loaded
        status = self.lib._libcublas.cublasSetMathMode(ctypes.c_void_p(self.handle), ctypes.c_int(mode))
        if status != 0:
            raise CublasUnavailable(f"cublasSetMathMode({mode}) failed with status {status}")

    @property
    def version(self) -> str:
        v = self.lib.cublasGetVersion(self.handle)  # major * 10000 + minor * 100 + patch
        return f"{v // 10000}.{(v % 10000) // 100}.{v % 100}"

    def sgemm(self, M: int, N: int, K: int, alpha: float, A, B, beta: float, C) -> None:
        self.lib.cublasSgemm(self.handle, "n", "n", N, M, K, alpha, int(B), N, int(A), K, beta, int(C), N)

    def dgemm(self, M: int, N: int, K: int, alpha: float, A, B, beta: float, C) -> None:
        self.lib.cublasDgemm(self.handle, "n", "n", N, M, K, alpha, int(B), N, int(A), K, beta, int(C), N)

    def gemm_ex(self, element: str, M: int, N: int, K: int, alpha: float, A, B, beta: float, C) -> None:
        """A, B and C of a 16-bit ``element`` type ("bf16", "fp16"), FP32
        accumulation and float alpha/beta (CUBLAS_COMPUTE_32F): cublasGemmEx,
        which scikit-cuda lacks, called on the library it loaded, operands
        swapped for row-major as in sgemm."""
        kind = ctypes.c_int(CUDA_DATA_TYPE[element])
        a, b = ctypes.c_float(alpha), ctypes.c_float(beta)
        status = self._gemm_ex(ctypes.c_void_p(self.handle), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, ctypes.byref(a),
                               ctypes.c_void_p(int(B)), kind, N, ctypes.c_void_p(int(A)), kind, K, ctypes.byref(b),
                               ctypes.c_void_p(int(C)), kind, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
        if status != 0:
            raise RuntimeError(f"cublasGemmEx({element}, {M}x{N}x{K}) failed with status {status}")

    @property
    def _gemm_ex(self):
        function = self.lib._libcublas.cublasGemmEx
        if function.argtypes is None:
            i, p = ctypes.c_int, ctypes.c_void_p
            function.argtypes = [p, i, i, i, i, i, p, p, i, i, p, i, i, p, p, i, i, i, i]
            function.restype = i
        return function

    def close(self) -> None:
        self.lib.cublasDestroy(self.handle)
