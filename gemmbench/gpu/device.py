"""The CUDA device: context, properties, peak FP32 rate and clocks.

Everything here imports pycuda and pynvml lazily so that the CPU ladder, the
CLI and the tests work on machines without CUDA.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import threading
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
        import pycuda.driver as cuda
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
        import pycuda.driver as cuda
    except ImportError as exc:
        raise GpuUnavailable(_why_pycuda_is_missing(exc)) from None
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


# Clock-event reasons (nvml.h, nvmlClocksEventReason*), written out: scanning
# pynvml's names also finds the deprecated alias UserDefinedClocks, the same
# bit as ApplicationsClocksSetting.
CLOCK_EVENT_REASONS = {
    0x001: "GpuIdle",
    0x002: "ApplicationsClocksSetting",
    0x004: "SwPowerCap",
    0x008: "HwSlowdown",
    0x010: "SyncBoost",
    0x020: "SwThermalSlowdown",
    0x040: "HwThermalSlowdown",
    0x080: "HwPowerBrakeSlowdown",
    0x100: "DisplayClockSetting",
    0x200: "BoardLimit",
    0x400: "Reliability",
}
# An idle GPU or a clock the user chose is not throttling; every other reason
# holds the clock below what the load asks for.
_NOT_THROTTLING = 0x001 | 0x002


def throttle_reasons(mask: int) -> list[str]:
    """The throttling reasons in an NVML clock-event mask; bits NVML adds
    later appear as hex."""
    names = [name for bit, name in CLOCK_EVENT_REASONS.items() if mask & bit and not bit & _NOT_THROTTLING]
    unknown = mask & ~sum(CLOCK_EVENT_REASONS)
    return names + ([hex(unknown)] if unknown else [])


def _clock_event_mask(pynvml, handle) -> int | None:
    getter = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) \
        or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons  # nvidia-ml-py before 12.535
    try:
        return getter(handle)
    except Exception:  # NVML_ERROR_NOT_SUPPORTED on some boards
        return None


def sm_clock_now(nvml=None) -> dict:
    """The SM clock and any throttle reasons right now (empty without NVML)."""
    nvml = nvml or _nvml_handle()
    if nvml is None:
        return {}
    pynvml, handle = nvml
    out = {"sm_clock_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)}
    mask = _clock_event_mask(pynvml, handle)
    if mask is not None:
        out["throttle"] = throttle_reasons(mask)
    return out


# nvmlPerfPolicyType_t: NVML counts the nanoseconds the clock was held down for each.
_VIOLATION_POLICIES = {"power": 0, "thermal": 1}


class ClockMonitor:
    """What the SM clock did during a timed window (a context manager).

    Read once after the samples, the clock shows a GPU that has already
    recovered. Instead a background thread reads the SM clock and the
    clock-event reasons every ``interval`` seconds while the window is open,
    and NVML's power and thermal violation counters are read at both ends.
    Without NVML it records nothing. ``notes()`` summarises (see clock_notes).
    """

    def __init__(self, interval: float = 0.02, nvml=None):
        self.nvml = nvml or _nvml_handle()
        self.interval = interval
        self.readings: list[tuple[int, int | None]] = []  # (SM clock MHz, clock-event mask)
        self.counters: tuple[dict, dict] = ({}, {})  # violation counters at the start and the end
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "ClockMonitor":
        if self.nvml is not None:
            self.counters = (self._violation_counters(), {})
            self._thread = threading.Thread(target=self._poll, name="gemmbench-clock-monitor", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self.counters = (self.counters[0], self._violation_counters())

    def _poll(self) -> None:
        pynvml, handle = self.nvml
        while True:
            try:
                clock = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
            except Exception:  # NVML stopped answering: keep what was read
                return
            self.readings.append((clock, _clock_event_mask(pynvml, handle)))
            if self._stop.wait(self.interval):
                return

    def _violation_counters(self) -> dict[str, tuple[int, int]]:
        """{policy: (referenceTime in us, violationTime in ns)} where NVML supports it."""
        pynvml, handle = self.nvml
        out = {}
        for name, policy in _VIOLATION_POLICIES.items():
            try:
                status = pynvml.nvmlDeviceGetViolationStatus(handle, policy)
                out[name] = (status.referenceTime, status.violationTime)
            except Exception:  # not supported on this board
                pass
        return out

    def notes(self) -> dict:
        return clock_notes(self.readings, violation_shares(*self.counters))


def violation_shares(start: dict[str, tuple[int, int]], end: dict[str, tuple[int, int]]) -> dict[str, float]:
    """Share of time each violation counter ran, 0..1, between two readings.

    NVML stamps each counter reading with the time it refers to, and may
    refresh it less often than it is read: the share is taken over those
    stamps (a window shorter than one refresh gives none), not over the
    host's clock, which would count a whole refresh into a short window.
    """
    shares = {}
    for name, (ref0, ns0) in start.items():
        if name in end and end[name][0] > ref0:
            ref1, ns1 = end[name]
            shares[name] = round(min(1.0, max(0.0, (ns1 - ns0) / ((ref1 - ref0) * 1e3))), 4)
    return shares


def clock_notes(readings: list[tuple[int, int | None]], violation_share: dict[str, float]) -> dict:
    """A result's clock notes from a window's readings; keys present only when measured:

    sm_clock_mhz        mean SM clock over the readings (MHz)
    sm_clock_range_mhz  [lowest, highest] reading
    clock_readings      how many readings were taken
    throttled_share     0..1: the largest violation share where NVML has the
                        counters, else the share of readings with a throttling reason
    throttle            the throttling reasons seen, sorted (CLOCK_EVENT_REASONS names)
    violation_share     {"power": x, "thermal": y}, 0..1: share of the window in
                        which NVML's power / thermal violation counters ran

    The counters come first: on an H200 under cuBLAS TF32 the power counter
    ran for the whole window while the clock-event reasons showed SwPowerCap
    only about 100 ms after the clock had dropped.
    """
    out: dict = {}
    if readings:
        clocks = [clock for clock, _ in readings]
        out["sm_clock_mhz"] = round(sum(clocks) / len(clocks), 1)
        out["sm_clock_range_mhz"] = [min(clocks), max(clocks)]
        out["clock_readings"] = len(readings)
    if violation_share:
        out["violation_share"] = dict(violation_share)
    reasons = [throttle_reasons(mask) for _, mask in readings if mask is not None]
    if reasons:
        out["throttle"] = sorted({name for r in reasons for name in r})
    if violation_share:
        out["throttled_share"] = max(violation_share.values())
    elif reasons:
        out["throttled_share"] = round(sum(1 for r in reasons if r) / len(reasons), 4)
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
