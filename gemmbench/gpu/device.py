"""The CUDA device: context, properties and peak FP32 rate.

pycuda is imported inside the functions that need it, so that the CPU
ladder, the CLI and the tests work on machines without CUDA. NVML (clocks,
throttling, the driver version, the GPU's UUID) is gemmbench.gpu.nvml.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
from dataclasses import dataclass
from functools import lru_cache

from .. import procs


class GpuUnavailable(Exception):
    """No usable CUDA GPU (pycuda missing, no driver, no device); message says why."""


# FP32 lanes per SM by compute capability (CUDA C Programming Guide,
# "Arithmetic Instructions" throughput table).
_FP32_LANES = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
               (9, 0): 128, (10, 0): 128, (12, 0): 128}


def fp32_lanes_per_sm(cc: tuple[int, int]) -> int:
    return _FP32_LANES.get(cc, 128)


def fp32_peak_flops(sm_count: int, cc: tuple[int, int], clock_mhz: float) -> float:
    """SMs x FP32 lanes x 2 (an FMA is two flops) x SM clock."""
    return sm_count * fp32_lanes_per_sm(cc) * 2 * clock_mhz * 1e6


@dataclass(frozen=True)
class GpuInfo:
    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    max_sm_clock_mhz: float
    l2_bytes: int
    memory_bytes: int
    driver_version: str
    cuda_driver_api: str  # CUDA version the driver supports
    cuda_toolkit: str  # CUDA version pycuda was built with

    @property
    def peak_fp32_flops(self) -> float:
        """At the maximum SM clock."""
        return fp32_peak_flops(self.sm_count, self.compute_capability, self.max_sm_clock_mhz)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "compute_capability": "%d.%d" % self.compute_capability,
            "sm_count": self.sm_count,
            "max_sm_clock_mhz": self.max_sm_clock_mhz,
            "l2_bytes": self.l2_bytes,
            "memory_bytes": self.memory_bytes,
            "driver_version": self.driver_version,
            "cuda_driver_api": self.cuda_driver_api,
            "cuda_toolkit": self.cuda_toolkit,
            "peak_fp32_tflops": self.peak_fp32_flops / 1e12,
        }


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


# One CUDA device per process (a multi-GPU run has one worker process per
# GPU): the first ordinal opened is the one every later call means.
_opened: list[int] = []


def selected_ordinal() -> int:
    """The ordinal this process opened (0 before any)."""
    return _opened[0] if _opened else 0


def open_device(ordinal: int | None = None):
    """Retain and push the device's primary context (the one the CUDA runtime,
    and so cuBLAS, uses too); return (pycuda.driver, device). Ordinals count
    the GPUs CUDA_VISIBLE_DEVICES leaves visible; None means the one this
    process already opened. Cached: one context per process."""
    if ordinal is None:
        ordinal = selected_ordinal()
    if _opened and ordinal != _opened[0]:
        raise GpuUnavailable(f"GPU {_opened[0]} is already open in this process; GPU {ordinal} needs its own")
    return _open_device(ordinal)


@lru_cache(maxsize=None)
def _open_device(ordinal: int):
    try:
        import pycuda.driver as cuda  # here, not at the top: pycuda is optional
    except ImportError as exc:
        raise GpuUnavailable(_why_pycuda_is_missing(exc)) from None
    try:
        cuda.init()
        count = cuda.Device.count()
        if count == 0:
            raise GpuUnavailable("no CUDA device found")
        if not 0 <= ordinal < count:
            raise GpuUnavailable(f"no GPU {ordinal}: {_visible(count)}")
        device = cuda.Device(ordinal)
        context = device.retain_primary_context()
        context.push()
    except cuda.Error as exc:
        raise GpuUnavailable(f"CUDA driver: {exc}") from None
    _opened.append(ordinal)
    atexit.register(context.pop)
    return cuda, device


def _nvidia_driver_loads() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def _why_pycuda_is_missing(exc: ImportError) -> str:
    """The real cause, and an install hint only where that install can work
    (building pycuda needs the CUDA toolkit, running it needs the driver)."""
    if not _nvidia_driver_loads():
        return "no NVIDIA driver: libcuda.so.1 cannot be loaded"
    if exc.name != "pycuda":
        return f"pycuda cannot be imported: {exc}"
    if shutil.which("nvcc") is None:
        return "pycuda is not installed; building it needs the CUDA toolkit (nvcc is not on PATH)"
    return "pycuda is not installed: pip install -e '.[cuda]' in gemmbench's folder"


def _visible(count: int) -> str:
    mask = os.environ.get("CUDA_VISIBLE_DEVICES")
    where = f" (CUDA_VISIBLE_DEVICES={mask})" if mask is not None else ""
    return f"{count} GPU{'s' if count != 1 else ''} visible{where}, numbered 0-{count - 1}"


def device_count() -> int:
    """How many GPUs CUDA sees (after CUDA_VISIBLE_DEVICES), without creating
    a context (a parent process that only plans should not hold one)."""
    try:
        import pycuda.driver as cuda  # here, not at the top: pycuda is optional
    except ImportError as exc:
        raise GpuUnavailable(_why_pycuda_is_missing(exc)) from None
    try:
        cuda.init()
        return cuda.Device.count()
    except cuda.Error as exc:
        raise GpuUnavailable(f"CUDA driver: {exc}") from None


def gpu_identity(uuid: str | None, ordinal: int | None = None) -> dict:
    """Which physical GPU an ordinal is: index (as CUDA numbers it here), UUID
    (NVML's, given: None without NVML) and PCI bus id, and the visibility mask."""
    _, device = open_device(ordinal)
    return {"index": selected_ordinal(), "uuid": uuid, "pci_bus_id": device.pci_bus_id(),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def gpu_info(driver_version: str | None, ordinal: int | None = None) -> GpuInfo:
    """The device's properties; ``driver_version`` is NVML's ("550.54.15"),
    None for the CUDA version the driver supports instead."""
    cuda, device = open_device(ordinal)
    attr = cuda.device_attribute
    return GpuInfo(
        name=device.name(),
        compute_capability=device.compute_capability(),
        sm_count=device.get_attribute(attr.MULTIPROCESSOR_COUNT),
        max_sm_clock_mhz=device.get_attribute(attr.CLOCK_RATE) / 1000.0,
        l2_bytes=device.get_attribute(attr.L2_CACHE_SIZE),
        memory_bytes=device.total_memory(),
        driver_version=driver_version or _version(cuda.get_driver_version()),
        cuda_driver_api=_version(cuda.get_driver_version()),
        cuda_toolkit=".".join(map(str, cuda.get_version()[:2])),
    )


def free_memory() -> int:
    cuda, _ = open_device()
    return cuda.mem_get_info()[0]


@lru_cache(maxsize=1)
def nvcc_version() -> str | None:
    """nvcc's version line for the record, once per process (under the
    subprocess policy, like every nvcc run); None when it cannot be asked."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    try:
        done = procs.run([nvcc, "--version"], tool="nvcc", limit=procs.limit("nvcc", 60.0), hint="")
    except procs.ToolError:
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1] if done.returncode == 0 and lines else None
