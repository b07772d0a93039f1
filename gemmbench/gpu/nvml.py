"""NVML: which physical GPU this is, its clocks, throttling and state.

The monitor of the timed window (ClockMonitor) and the readings a record
keeps (sm_clock_now, gpu_state, the driver version, the GPU's UUID), for the
CUDA device this process opened (gemmbench.gpu.device). NVML is optional
(nvidia-ml-py): without it every reading here is empty or None.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache

from .device import open_device, selected_ordinal


def device_handle(ordinal: int | None = None):
    """(pynvml, NVML's handle) of the CUDA device ``ordinal`` (default: this
    process's), or None without NVML. NVML numbers GPUs in PCI order and
    ignores CUDA_VISIBLE_DEVICES, so the device is found by its PCI bus id,
    not by index."""
    return _handle_of(selected_ordinal() if ordinal is None else ordinal)


@lru_cache(maxsize=None)
def _handle_of(ordinal: int):
    try:
        import pynvml  # here, not at the top: NVML is optional
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


def driver_version() -> str | None:
    """The NVIDIA driver's version ("550.54.15"), None without NVML."""
    nvml = device_handle()
    if nvml is None:
        return None
    version = nvml[0].nvmlSystemGetDriverVersion()
    return version.decode() if isinstance(version, bytes) else version


def gpu_uuid() -> str | None:
    """This process's GPU's UUID, None without NVML."""
    nvml = device_handle()
    if nvml is None:
        return None
    try:
        uuid = nvml[0].nvmlDeviceGetUUID(nvml[1])
    except Exception:
        return None
    return uuid.decode() if isinstance(uuid, bytes) else uuid


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
    nvml = nvml or device_handle()
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
        self.nvml = nvml or device_handle()
        self.interval = interval
        self.readings: list[tuple[int, int | None]] = []  # (SM clock MHz, clock-event mask)
        self.counters: tuple[dict, dict] = ({}, {})  # violation counters at the start and the end
        self.temperatures: list[int] = []  # the GPU's temperature (C) when the window opened and closed
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "ClockMonitor":
        if self.nvml is not None:
            self.counters = (self._violation_counters(), {})
            self._read_temperature()
            self._thread = threading.Thread(target=self._poll, name="gemmbench-clock-monitor", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self.counters = (self.counters[0], self._violation_counters())
        self._read_temperature()

    def _read_temperature(self) -> None:
        pynvml, handle = self.nvml
        try:
            self.temperatures.append(int(pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)))
        except Exception:  # not supported, or NVML stopped answering
            pass

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
        return clock_notes(self.readings, violation_shares(*self.counters), self.temperatures)


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


def clock_notes(readings: list[tuple[int, int | None]], violation_share: dict[str, float],
                temperatures: Sequence[int] = ()) -> dict:
    """A result's clock notes from a window's readings; keys present only when measured:

    sm_clock_mhz        mean SM clock over the readings (MHz)
    sm_clock_range_mhz  [lowest, highest] reading
    clock_readings      how many readings were taken
    throttled_share     0..1: the largest violation share where NVML has the
                        counters, else the share of readings with a throttling reason
    throttle            the throttling reasons seen, sorted (CLOCK_EVENT_REASONS names)
    violation_share     {"power": x, "thermal": y}, 0..1: share of the window in
                        which NVML's power / thermal violation counters ran
    gpu_temp_range_c    [lowest, highest] of the GPU's temperature when the window
                        opened and when it closed (C): at a power cap a hotter chip
                        leaks more of the power, so it tells a clock gap between two
                        kernels that is heat from one that is their own power

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
    if temperatures:
        out["gpu_temp_range_c"] = [min(temperatures), max(temperatures)]
    return out




def gpu_state() -> dict:
    """Temperature and power draw of this process's GPU right now (empty
    without NVML): with the SM clock, what tells a hot or capped GPU apart."""
    nvml = device_handle()
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
