"""The GPU ladder's backend: device buffers, compiled rungs, cuBLAS, timing."""

from __future__ import annotations

import numpy as np

from ..backend import Budget, Gemm, Problem, Shape, SkipKernel
from ..ladder import KernelSpec, Params
from . import compile as kernels
from .cublas import Cublas, CublasUnavailable
from .device import free_memory, gpu_info, nvcc_version, open_device, sm_clock_now
from .timing import EventTimer


class ShapeTooLarge(Exception):
    """The shape's matrices do not fit in the GPU's free memory."""


def bytes_needed(shape: Shape, itemsize: int = 4) -> int:
    return itemsize * (shape.M * shape.K + shape.K * shape.N + shape.M * shape.N)


class GpuBackend:
    """Runs the GPU ladder on device 0 (see gemmbench.backend.Backend)."""

    device = "gpu"

    def __init__(self, log=None):
        self.cuda, _ = open_device()
        self.info = gpu_info()
        self.stream = self.cuda.Stream()
        self.timer = EventTimer(self.stream, self.info.compute_capability, self.info.l2_bytes)
        self._widen = kernels.load_source(_WIDEN_SOURCE, "widen", self.info.compute_capability)
        self._widen.prepare("PPqi")
        self._log = log or (lambda message: None)
        self._cublas: Cublas | None = None
        self._cublas_error: str | None = None
        self.shape: Shape | None = None
        self.last_measure_notes: dict = {}

    # -- cuBLAS is optional: without it the hand-written rungs still run ----
    @property
    def cublas(self) -> Cublas:
        if self._cublas is None and self._cublas_error is None:
            try:
                self._cublas = Cublas(self.stream)
            except CublasUnavailable as exc:
                self._cublas_error = str(exc)
        if self._cublas is None:
            raise SkipKernel(self._cublas_error)
        return self._cublas

    def environment(self) -> dict:
        env = {"gpu": self.info.to_dict(), "nvcc": nvcc_version(), **sm_clock_now()}  # nvcc: memoized
        try:
            env["cublas"] = self.cublas.version
        except SkipKernel as exc:
            env["cublas"] = f"unavailable: {exc}"
        return env

    def threads_for(self, spec: KernelSpec) -> None:
        return None

    def check_fits(self, shape: Shape) -> None:
        """Raise ShapeTooLarge before allocating anything that cannot fit."""
        need = bytes_needed(shape) + 2 * self.info.l2_bytes
        free = free_memory()
        if need > free:
            raise ShapeTooLarge(f"shape {shape} needs {need / 2**30:.1f} GiB of GPU memory; "
                                f"{free / 2**30:.1f} GiB are free")

    def load(self, problem: Problem) -> None:
        self.check_fits(problem.shape)
        self.shape = problem.shape
        # free the previous shape's buffers before allocating the next
        self.A = self.B = self.C = None
        gpuarray = _gpuarray()
        self.A = gpuarray.to_gpu(problem.A)
        self.B = gpuarray.to_gpu(problem.B)
        self.C = gpuarray.empty((problem.shape.M, problem.shape.N), np.float32)

    def prepare(self, spec: KernelSpec, params: Params | None = None) -> Gemm:
        M, N, K = self.shape.M, self.shape.N, self.shape.K
        A, B, C = self.A.gpudata, self.B.gpudata, self.C.gpudata
        if spec.is_baseline:
            blas = self.cublas
            return lambda alpha, beta: blas.sgemm(M, N, K, alpha, A, B, beta, C)
        if self.info.compute_capability < spec.min_cc:
            raise SkipKernel("needs compute capability %d.%d" % spec.min_cc)
        p = dict(spec.params if params is None else params)
        reason = spec.invalid_reason(p)
        if reason:
            raise SkipKernel(f"invalid parameters: {reason}")
        self._log(f"SourceModule {spec.source} {' '.join(kernels.nvcc_options(spec, p))} "
                  f"-arch {kernels.arch_for(self.info.compute_capability)} (nvcc runs only on a cache miss)")
        function = kernels.load_function(spec, self.info.compute_capability, p)
        function.prepare("iiifPPfP")
        grid, block, stream = spec.grid(M, N, K, p), spec.block(p), self.stream
        if grid[1] > 65535 or grid[2] > 65535:
            raise SkipKernel(f"grid {grid} exceeds CUDA's 65535 limit in y/z")
        return lambda alpha, beta: function.prepared_async_call(grid, block, stream, M, N, K, alpha,
                                                                A, B, beta, C)

    def set_c(self, c: np.ndarray) -> None:
        self.stream.synchronize()
        self.C.set(np.ascontiguousarray(c, dtype=np.float32))

    def get_c(self) -> np.ndarray:
        self.stream.synchronize()
        return self.C.get()

    def measure(self, gemm: Gemm, alpha: float, beta: float, budget: Budget, flush_l2: bool = False):
        samples, repeats = self.timer.measure(gemm, alpha, beta, budget, flush_l2)
        # read right after the last sample: the clock the kernel ran at
        self.last_measure_notes = {"calls_per_sample": repeats, **sm_clock_now()}
        return samples

    def reference(self, problem: Problem) -> tuple[np.ndarray, np.ndarray]:
        """(A @ B, |A| @ |B|) in float64 by cuBLAS DGEMM; numpy when cuBLAS or
        the memory for float64 copies is missing."""
        shape = problem.shape
        try:
            blas = self.cublas
            if bytes_needed(shape, 8) + bytes_needed(shape) > free_memory():
                raise SkipKernel("not enough GPU memory for float64 copies")
        except SkipKernel:
            a, b = problem.A.astype(np.float64), problem.B.astype(np.float64)
            return a @ b, np.abs(a) @ np.abs(b)
        # float64 copies made on the device from the float32 inputs already there
        gpuarray = _gpuarray()
        a64 = gpuarray.empty((shape.M, shape.K), np.float64)
        b64 = gpuarray.empty((shape.K, shape.N), np.float64)
        c64 = gpuarray.empty((shape.M, shape.N), np.float64)
        out = []
        for absolute in (0, 1):
            for src, dst in ((self.A, a64), (self.B, b64)):
                self._widen.prepared_async_call((min(4096, -(-src.size // 256)), 1, 1), (256, 1, 1), self.stream,
                                                src.gpudata, dst.gpudata, np.int64(src.size), np.int32(absolute))
            blas.dgemm(shape.M, shape.N, shape.K, 1.0, a64.gpudata, b64.gpudata, 0.0, c64.gpudata)
            self.stream.synchronize()
            out.append(c64.get())
        return out[0], out[1]


_WIDEN_SOURCE = r"""
extern "C" __global__ void widen(const float* x, double* y, long long n, int absolute) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = absolute ? fabs((double)x[i]) : (double)x[i];
}
"""


def _gpuarray():
    import pycuda.gpuarray as gpuarray
    return gpuarray
