"""The CUDA device: context, properties, peak FP32 rate and clocks.

Everything here imports pycuda lazily so that the CPU ladder, the CLI and the
tests work on machines without CUDA.
"""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass
from functools import lru_cache


class GpuUnavailable(Exception):
    """No usable CUDA GPU (pycuda missing, no driver, no device); message says why."""


# FP32 lanes per SM by compute capability (CUDA C Programming Guide,
# "Arithmetic Instructions" throughput table).
_FP32_LANES = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
               (9, 0): 128, (10, 0): 128, (12, 0): 128}


def fp32_lanes_per_sm(cc: tuple[int, int]) -> int:
    return _FP32_LANES.get(cc, 128)


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
        """SMs x FP32 lanes x 2 (an FMA is two flops) x max SM clock."""
        return self.sm_count * fp32_lanes_per_sm(self.compute_capability) * 2 * self.max_sm_clock_mhz * 1e6

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
        import pycuda.driver as cuda
    except ImportError as exc:
        raise GpuUnavailable(f"pycuda is not installed ({exc.name}): pip install 'gemmbench[cuda]'") from None
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


def _visible(count: int) -> str:
    mask = os.environ.get("CUDA_VISIBLE_DEVICES")
    where = f" (CUDA_VISIBLE_DEVICES={mask})" if mask is not None else ""
    return f"{count} GPU{'s' if count != 1 else ''} visible{where}, numbered 0-{count - 1}"


def device_count() -> int:
    """How many GPUs CUDA sees (after CUDA_VISIBLE_DEVICES), without creating
    a context (a parent process that only plans should not hold one)."""
    try:
        import pycuda.driver as cuda
    except ImportError as exc:
        raise GpuUnavailable(f"pycuda is not installed ({exc.name}): pip install 'gemmbench[cuda]'") from None
    try:
        cuda.init()
        return cuda.Device.count()
    except cuda.Error as exc:
        raise GpuUnavailable(f"CUDA driver: {exc}") from None


def gpu_identity(ordinal: int | None = None) -> dict:
    """Which physical GPU an ordinal is: index (as CUDA numbers it here), UUID
    (from NVML, None without it) and PCI bus id, and the visibility mask."""
    _, device = open_device(ordinal)
    nvml = _nvml_handle()
    uuid = None
    if nvml is not None:
        try:
            uuid = nvml[0].nvmlDeviceGetUUID(nvml[1])
            uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
        except Exception:
            uuid = None
    return {"index": selected_ordinal(), "uuid": uuid, "pci_bus_id": device.pci_bus_id(),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def gpu_info(ordinal: int | None = None) -> GpuInfo:
    cuda, device = open_device(ordinal)
    attr = cuda.device_attribute
    return GpuInfo(
        name=device.name(),
        compute_capability=device.compute_capability(),
        sm_count=device.get_attribute(attr.MULTIPROCESSOR_COUNT),
        max_sm_clock_mhz=device.get_attribute(attr.CLOCK_RATE) / 1000.0,
        l2_bytes=device.get_attribute(attr.L2_CACHE_SIZE),
        memory_bytes=device.total_memory(),
        driver_version=_nvml_driver() or _version(cuda.get_driver_version()),
        cuda_driver_api=_version(cuda.get_driver_version()),
        cuda_toolkit=".".join(map(str, cuda.get_version()[:2])),
    )


def free_memory() -> int:
    cuda, _ = open_device()
    return cuda.mem_get_info()[0]


# --- NVML: clocks and throttling. Optional (nvidia-ml-py). -------------------

def _nvml_handle(ordinal: int | None = None):
    """NVML's handle of the CUDA device ``ordinal`` (default: this process's).
    NVML numbers GPUs in PCI order and ignores CUDA_VISIBLE_DEVICES, so the
    device is found by its PCI bus id, not by index."""
    return _nvml_handle_of(selected_ordinal() if ordinal is None else ordinal)


@lru_cache(maxsize=None)
def _nvml_handle_of(ordinal: int):
    try:
        import pynvml
        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        _, device = open_device(ordinal)
        return pynvml, pynvml.nvmlDeviceGetHandleByPciBusId(device.pci_bus_id().encode())
    except Exception:
        try:
            return pynvml, pynvml.nvmlDeviceGetHandleByIndex(ordinal)
        except Exception:
            return None


def _nvml_driver() -> str | None:
    nvml = _nvml_handle()
    if nvml is None:
        return None
    version = nvml[0].nvmlSystemGetDriverVersion()
    return version.decode() if isinstance(version, bytes) else version


def sm_clock_now() -> dict:
    """The SM clock and any throttle reasons right now (empty without NVML).

    Reasons that merely say the GPU is idle or obeying the application clock
    setting are left out; what remains (power, thermal...) depresses numbers.
    """
    nvml = _nvml_handle()
    if nvml is None:
        return {}
    pynvml, handle = nvml
    out = {"sm_clock_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)}
    try:
        reasons = pynvml.nvmlDeviceGetCurrentClocksEventReasons(handle)
    except AttributeError:
        reasons = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)
    except Exception:
        return out
    harmless = {"GpuIdle", "ApplicationsClocksSetting", "None"}
    names = [name[len("nvmlClocksThrottleReason"):] for name in dir(pynvml)
             if name.startswith("nvmlClocksThrottleReason") and isinstance(getattr(pynvml, name), int)]
    out["throttle"] = sorted(n for n in names if n not in harmless and n != "All"
                             and getattr(pynvml, "nvmlClocksThrottleReason" + n) & reasons)
    return out


def nvcc_version() -> str | None:
    """nvcc's version line, through pycuda's memoized query (its compile cache
    asks too, so this costs no extra nvcc run)."""
    try:
        from pycuda.compiler import get_nvcc_version
        text = get_nvcc_version("nvcc")
    except Exception:
        return None
    lines = text.strip().splitlines()
    return lines[-1] if lines and "unknown" not in text else None


def gpu_state() -> dict:
    """Temperature and power draw of this process's GPU right now (empty
    without NVML): with the SM clock, what tells a hot or capped GPU apart."""
    nvml = _nvml_handle()
    if nvml is None:
        return {}
    pynvml, handle = nvml
    out = {}
    try:
        out["temperature_c"] = pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)
    except Exception:
        pass
    try:
        out["power_w"] = pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0
    except Exception:
        pass
    return out
