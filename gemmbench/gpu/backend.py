"""The GPU ladder's backend: device buffers, compiled rungs, cuBLAS, timing."""

from __future__ import annotations

import numpy as np

from ..backend import Budget, Gemm, Prepared, Problem, Shape, SkipKernel
from ..precision import element_dtype, precision as precision_class, round_to
from ..spec import KernelSpec, Params
from . import compile as kernels
from . import clusters, drivers, elements, tensormap
from .cublas import Cublas, CublasUnavailable
from .device import free_memory, gpu_identity, gpu_info, nvcc_version, open_device
from .nvml import driver_version, gpu_uuid, sm_clock_now
from .timing import EventTimer


class ShapeTooLarge(Exception):
    """The shape's matrices do not fit in the GPU's free memory."""


def bytes_needed(shape: Shape, itemsize: int = 4) -> int:
    return itemsize * (shape.M * shape.K + shape.K * shape.N + shape.M * shape.N)


def compile_line(run_spec: KernelSpec, params: Params, cc: tuple[int, int]) -> str:
    """The --verbose line naming what nvcc builds for a call: the rung's file with its -D parameters, or, on
    the GEMV and small-product paths, the helper file that runs instead (the rung itself is not built)."""
    helper = drivers.helper_source(params, run_spec.precision)
    if helper:
        return (f"nvcc -cubin {helper} {' '.join(kernels.BASE_OPTIONS)} -arch {kernels.arch_for(cc)} "
                f"(in place of {run_spec.source} at this shape; nvcc runs only on a cache miss)")
    return (f"nvcc -cubin {run_spec.source} {' '.join(kernels.nvcc_options(run_spec, params))} "
            f"{kernels.describe_target(kernels.target_for(run_spec, cc))} (nvcc runs only on a cache miss)")


class _OnFirstUse:
    """The rung's module, loaded when a driver first asks it for a kernel: the one-launch paths of rungs 17
    and 18 (GEMV, SMALL) run a helper file's kernel and never build the rung itself."""

    def __init__(self, load):
        self._load, self._module = load, None

    def get_function(self, name: str):
        if self._module is None:
            self._module = self._load()
        return self._module.get_function(name)


class GpuBackend:
    """Runs the GPU ladder on one device, CUDA's ``ordinal`` (see
    gemmbench.backend.Backend). One per process: CUDA contexts are per process."""

    device = "gpu"

    def __init__(self, log=None, tuning=None, ordinal: int = 0):
        self.cuda, device = open_device(ordinal)
        self.ordinal = ordinal
        self.max_shared_bytes = device.get_attribute(self.cuda.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        self.tuning = tuning  # a gemmbench.tuning.TuningCache, or None to ignore tuned parameters
        self.info = gpu_info(driver_version())
        self.stream = self.cuda.Stream()
        self.timer = EventTimer(self.stream, self.info.compute_capability, self.info.l2_bytes,
                                self.info.sm_count, self.info.max_sm_clock_mhz)
        self._widen = kernels.load_source(_WIDEN_SOURCE, "widen", self.info.compute_capability)
        self._widen.prepare("PPqi")
        self._log = log or (lambda message: None)
        self._cublas: dict[str, Cublas] = {}
        self._cublas_error: str | None = None
        self.loaded: Shape | None = None  # the shape whose buffers A, B, C hold
        self._converters: dict[str, tuple] = {}  # element type -> (narrow, widen) kernels
        self._half: dict[str, tuple] = {}  # element type -> (A, B, C) of the loaded shape in that type

    # -- cuBLAS is optional: without it the hand-written rungs still run ----
    @property
    def cublas(self) -> Cublas:
        return self._cublas_handle("fp32")

    def _cublas_handle(self, precision: str) -> Cublas:
        """One handle per math mode (FP32, TF32), so neither call changes the other's."""
        if precision not in self._cublas and self._cublas_error is None:
            try:
                self._cublas[precision] = Cublas(self.stream, tf32=precision == "tf32")
            except CublasUnavailable as exc:
                self._cublas_error = str(exc)
        if precision not in self._cublas:
            raise SkipKernel(self._cublas_error)
        return self._cublas[precision]

    def environment(self) -> dict:
        env = {"gpu": {**self.info.to_dict(), **gpu_identity(gpu_uuid())}, "nvcc": nvcc_version(),  # nvcc: memoized
               **sm_clock_now()}
        try:
            env["cublas"] = self.cublas.version
        except SkipKernel as exc:
            env["cublas"] = f"unavailable: {exc}"
        return env

    def check_fits(self, shape: Shape) -> None:
        """Raise ShapeTooLarge before allocating anything that cannot fit."""
        need = bytes_needed(shape) + 2 * self.info.l2_bytes
        free = free_memory()
        if need > free:
            raise ShapeTooLarge(f"shape {shape} needs {need / 2**30:.1f} GiB of GPU memory; "
                                f"{free / 2**30:.1f} GiB are free")

    def load(self, problem: Problem) -> None:
        self.check_fits(problem.shape)
        self.loaded = problem.shape
        # free the previous shape's buffers before allocating the next
        self.A = self.B = self.C = None
        self._half = {}
        gpuarray = _gpuarray()
        self.A = gpuarray.to_gpu(problem.A)
        self.B = gpuarray.to_gpu(problem.B)
        self.C = gpuarray.empty((problem.shape.M, problem.shape.N), np.float32)

    def resolved_params(self, run_spec: KernelSpec, shape: Shape) -> tuple[dict, str]:
        """The parameters a rung runs with at a shape when none are given, and
        where they come from: "tuned" (the tuning cache), "selected" (the
        rung's per-shape choice) or "default"."""
        if self.tuning is not None:
            tuned = self.tuning.lookup(self.info.name, run_spec, shape)
            if tuned is not None:
                return tuned, "tuned"
        params = run_spec.params_for(shape.M, shape.N, shape.K, self.info.sm_count)
        return params, "selected" if run_spec.select else "default"

    def chosen(self, spec: KernelSpec, shape: Shape, params: Params | None = None) -> tuple[KernelSpec, dict, str]:
        """The record of ``spec`` that runs on this GPU (its fallback without
        sm_90a), the parameters it runs with at ``shape`` and where they come
        from: ``params`` when given, else ``resolved_params``. SkipKernel where
        this GPU is too old for the rung."""
        cc = self.info.compute_capability
        if cc < spec.min_cc:
            raise SkipKernel("needs compute capability %d.%d" % spec.min_cc)
        run_spec = spec.for_device(cc)
        if params is not None:
            return run_spec, dict(params), "given"
        return (run_spec, *self.resolved_params(run_spec, shape))

    def prepare(self, spec: KernelSpec, shape: Shape, params: Params | None = None) -> Prepared:
        if shape != self.loaded:
            raise RuntimeError(f"prepare({shape}) while the buffers hold {self.loaded}: load the problem first")
        M, N, K = shape.M, shape.N, shape.K
        element = precision_class(spec.precision).inputs
        A, B, C = (x.gpudata for x in self._operands(element))
        if spec.is_baseline:
            blas = self._cublas_handle(spec.precision)
            if element != "fp32":
                return Prepared(lambda alpha, beta: blas.gemm_ex(element, M, N, K, alpha, A, B, beta, C), spec)
            return Prepared(lambda alpha, beta: blas.sgemm(M, N, K, alpha, A, B, beta, C), spec)
        cc = self.info.compute_capability
        run_spec, p, source = self.chosen(spec, shape, params)
        reason = run_spec.invalid_reason(p)
        if reason:
            raise SkipKernel(f"invalid parameters: {reason}")
        self._log(compile_line(run_spec, p, cc))
        gemm = drivers.build(drivers.LaunchContext(
            run_spec, p, _OnFirstUse(lambda: kernels.load_module(run_spec, cc, p)), shape, A, B, C, self.stream,
            self.info.sm_count, self.max_shared_bytes, self._workspace, self._allow_shared,
            lambda entry, count: tensormap.param_layout(kernels.cubin(run_spec, cc, p), entry, count),
            lambda entry, cluster, threads, smem: clusters.max_active_clusters(kernels.cubin(run_spec, cc, p), entry,
                                                                               cluster, threads, smem),
            lambda source, entry: kernels.load_helper(source, entry, cc)))
        choice = run_spec.explain(M, N, K, self.info.sm_count, p) if run_spec.explain else ""
        return Prepared(gemm, run_spec, p, source, choice=choice)

    def _allow_shared(self, function, shared_bytes: int) -> None:
        function.set_attribute(self.cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes)

    def _workspace(self, floats: int):
        """Scratch memory for a call (split-K partial sums, split operands)."""
        try:
            return self.cuda.mem_alloc(4 * max(1, floats))
        except self.cuda.MemoryError:
            raise SkipKernel(f"no GPU memory for a {4 * floats / 2**20:.0f} MiB workspace") from None

    # -- 16-bit element types: copies of A and B rounded on the device, C of its own ----
    def _converter(self, element: str) -> tuple:
        if element not in self._converters:
            cc = self.info.compute_capability
            narrow = kernels.load_source(elements.source(element), "narrow", cc)
            widen = kernels.load_source(elements.source(element), "widen", cc)
            narrow.prepare("PPq")
            widen.prepare("PPqi")
            self._converters[element] = (narrow, widen)
        return self._converters[element]

    def _operands(self, element: str) -> tuple:
        """(A, B, C) of the loaded shape as gpuarrays of ``element``: the FP32
        buffers, or 16-bit ones made (A and B rounded from the FP32 inputs)
        the first time a row of that type asks, beside the FP32 buffers."""
        if element == "fp32":
            return self.A, self.B, self.C
        if element not in self._half:
            element_dtype(element)  # ValueError for an unknown type
            shape = self.loaded
            need = bytes_needed(shape, 2) + self.info.l2_bytes
            if need > free_memory():
                raise SkipKernel(f"no GPU memory for the {element} copies of {shape} ({need / 2**30:.1f} GiB)")
            gpuarray = _gpuarray()
            narrow = self._converter(element)[0]
            copies = []
            for src in (self.A, self.B):
                dst = gpuarray.empty(src.shape, np.uint16)
                grid = drivers.elementwise_grid(src.size, self.info.sm_count)
                narrow.prepared_async_call(grid, drivers.ELEMENTWISE_BLOCK, self.stream,
                                           src.gpudata, dst.gpudata, np.int64(src.size))
                copies.append(dst)
            self.stream.synchronize()
            self._half[element] = (*copies, gpuarray.empty((shape.M, shape.N), np.uint16))
        return self._half[element]

    def set_c(self, c: np.ndarray, output: str = "fp32") -> None:
        self.stream.synchronize()
        if output == "fp32":
            self.C.set(np.ascontiguousarray(c, dtype=np.float32))
            return
        bits = np.ascontiguousarray(c, dtype=np.float32).astype(element_dtype(output)).view(np.uint16)
        self._operands(output)[2].set(bits)

    def get_c(self, output: str = "fp32") -> np.ndarray:
        self.stream.synchronize()
        if output == "fp32":
            return self.C.get()
        return self._operands(output)[2].get().view(element_dtype(output)).astype(np.float32)

    def measure(self, gemm: Gemm, alpha: float, beta: float, budget: Budget, flush_l2: bool = False):
        # the notes hold the clock and throttling seen DURING the samples
        return self.timer.measure(gemm, alpha, beta, budget, flush_l2)

    def reference(self, problem: Problem, inputs: str = "fp32") -> tuple[np.ndarray, np.ndarray]:
        """(A @ B, |A| @ |B|) in float64 by cuBLAS DGEMM, of A and B as the
        kernels of ``inputs`` see them (16-bit: the rounded device copies);
        numpy when cuBLAS or the memory for float64 copies is missing."""
        shape = problem.shape
        try:
            blas = self.cublas
            if bytes_needed(shape, 8) + bytes_needed(shape) > free_memory():
                raise SkipKernel("not enough GPU memory for float64 copies")
            sources = self._operands(inputs)[:2]
        except SkipKernel:
            if inputs == "fp32":
                a, b = problem.A.astype(np.float64), problem.B.astype(np.float64)
            else:
                a, b = (round_to(x, inputs).astype(np.float64) for x in (problem.A, problem.B))
            return a @ b, np.abs(a) @ np.abs(b)
        widen = self._widen if inputs == "fp32" else self._converter(inputs)[1]
        # float64 copies made on the device from the inputs already there (FP32, or the 16-bit copies)
        gpuarray = _gpuarray()
        a64 = gpuarray.empty((shape.M, shape.K), np.float64)
        b64 = gpuarray.empty((shape.K, shape.N), np.float64)
        c64 = gpuarray.empty((shape.M, shape.N), np.float64)
        out = []
        for absolute in (0, 1):
            for src, dst in zip(sources, (a64, b64)):
                grid = drivers.elementwise_grid(src.size, self.info.sm_count)
                widen.prepared_async_call(grid, drivers.ELEMENTWISE_BLOCK, self.stream,
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
    import pycuda.gpuarray as gpuarray  # here, not at the top: pycuda is optional
    return gpuarray
