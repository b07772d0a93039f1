"""Clock and throttling capture during the timed window, with a fake NVML (no GPU needed)."""

import importlib.util
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from gemmbench.gpu import device
from gemmbench.gpu import nvml as gpu_nvml
from gemmbench.gpu.nvml import ClockMonitor, clock_notes, sm_clock_now, throttle_reasons, violation_shares
from gemmbench.gpu import timing as gpu_timing
from gemmbench.gpu.timing import EventTimer, held_down, probe_clock, with_cycle_clock
from gemmbench.timing import SETTLE_SECONDS

POWER_CAP, APP_CLOCKS, IDLE, HW_THERMAL = 0x4, 0x2, 0x1, 0x40


class FakeNvml:
    """The pynvml calls gemmbench makes, answering from a settable GPU state."""

    NVML_CLOCK_SM = 1
    # nvidia-ml-py's deprecated alias of ApplicationsClocksSetting: a name scan finds it
    nvmlClocksThrottleReasonUserDefinedClocks = APP_CLOCKS
    nvmlClocksEventReasonUserDefinedClocks = APP_CLOCKS

    def __init__(self, clock=1980, mask=0):
        self.clock, self.mask = clock, mask
        self.violation_ns = {0: 0, 1: 0}  # by nvmlPerfPolicyType_t: power, thermal
        self.reference_us = 1_000_000  # when NVML last refreshed the counters
        self.clock_calls = 0
        self.fail_after = None  # raise from the clock call after this many calls

    def nvmlDeviceGetClockInfo(self, handle, kind):
        assert kind == self.NVML_CLOCK_SM
        self.clock_calls += 1
        if self.fail_after is not None and self.clock_calls > self.fail_after:
            raise RuntimeError("NVML_ERROR_GPU_IS_LOST")
        return self.clock

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        return self.mask

    def nvmlDeviceGetViolationStatus(self, handle, policy):
        return SimpleNamespace(referenceTime=self.reference_us, violationTime=self.violation_ns[policy])

    NVML_TEMPERATURE_GPU = 0
    temperature = None  # C; None: a board that does not report it

    def nvmlDeviceGetTemperature(self, handle, sensor):
        assert sensor == self.NVML_TEMPERATURE_GPU
        if self.temperature is None:
            raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")
        return self.temperature


def wait_for(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the monitor thread took no reading"
        time.sleep(0.002)


# -- reasons ------------------------------------------------------------------

@pytest.mark.parametrize("mask, names", [
    (0, []),
    (IDLE, []),
    (APP_CLOCKS, []),  # the bit behind UserDefinedClocks: a clock the user chose
    (POWER_CAP, ["SwPowerCap"]),
    (POWER_CAP | HW_THERMAL | APP_CLOCKS, ["SwPowerCap", "HwThermalSlowdown"]),
    (0x1000, ["0x1000"]),  # a reason newer than the table is still shown
])
def test_throttle_reasons_come_from_the_explicit_table(mask, names):
    assert throttle_reasons(mask) == names


def test_clock_now_ignores_the_deprecated_alias():
    assert sm_clock_now((FakeNvml(1980, APP_CLOCKS), "h")) == {"sm_clock_mhz": 1980, "throttle": []}


def test_clock_now_uses_the_older_throttle_call_when_that_is_all_there_is():
    old = SimpleNamespace(NVML_CLOCK_SM=1, nvmlDeviceGetClockInfo=lambda h, k: 1410,
                          nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: POWER_CAP)
    assert sm_clock_now((old, "h")) == {"sm_clock_mhz": 1410, "throttle": ["SwPowerCap"]}


# -- summary of a window ---------------------------------------------------------

def test_notes_summarise_the_readings():
    readings = [(1980, 0), (1500, POWER_CAP), (1600, POWER_CAP | IDLE), (1980, APP_CLOCKS)]
    assert clock_notes(readings, {}) == {"sm_clock_mhz": 1765.0, "sm_clock_range_mhz": [1500, 1980],
                                         "clock_readings": 4, "throttled_share": 0.5, "throttle": ["SwPowerCap"]}


def test_violation_counters_give_the_share_where_nvml_has_them():
    """The reasons lag the clock: the counters say how long the clock was held down."""
    notes = clock_notes([(1740, 0), (1755, POWER_CAP)], {"power": 0.9, "thermal": 0.1})
    assert notes["throttled_share"] == 0.9 and notes["violation_share"] == {"power": 0.9, "thermal": 0.1}
    assert notes["throttle"] == ["SwPowerCap"]


def test_without_reason_masks_the_counters_still_give_the_share():
    notes = clock_notes([(1700, None), (1700, None)], {"power": 0.3, "thermal": 0.1})
    assert notes["throttled_share"] == 0.3 and "throttle" not in notes


def test_violation_share_is_taken_over_nvml_own_timestamps():
    start = {"power": (1_000_000, 0), "thermal": (1_000_000, 5)}
    end = {"power": (1_100_000, 25_000_000), "thermal": (1_100_000, 5)}  # 100 ms apart, 25 ms violated
    assert violation_shares(start, end) == {"power": 0.25, "thermal": 0.0}


def test_a_counter_nvml_did_not_refresh_gives_no_share():
    start = {"power": (1_000_000, 0), "thermal": (1_000_000, 0)}
    assert violation_shares(start, {"power": (1_000_000, 0)}) == {}


def test_violation_share_stays_within_0_and_1():
    start = {"power": (0, 0), "thermal": (0, 10)}
    assert violation_shares(start, {"power": (1000, 5_000_000), "thermal": (1000, 0)}) == \
        {"power": 1.0, "thermal": 0.0}


def test_nothing_measured_gives_no_notes():
    assert clock_notes([], {}) == {}


# -- the monitor thread ------------------------------------------------------------

def test_monitor_sees_throttling_the_gpu_recovered_from_before_the_window_closed():
    nvml = FakeNvml(1980, 0)
    with ClockMonitor(interval=0.005, nvml=(nvml, "h")) as monitor:
        wait_for(lambda: len(monitor.readings) >= 1)
        nvml.clock, nvml.mask = 1425, POWER_CAP
        nvml.violation_ns[0] += 40_000_000
        nvml.reference_us += 100_000
        wait_for(lambda: (1425, POWER_CAP) in monitor.readings)
        nvml.clock, nvml.mask = 1980, 0
        n = len(monitor.readings)
        wait_for(lambda: len(monitor.readings) > n + 1)
    assert sm_clock_now((nvml, "h")) == {"sm_clock_mhz": 1980, "throttle": []}  # what a read afterwards sees
    notes = monitor.notes()
    assert notes["throttle"] == ["SwPowerCap"] and notes["throttled_share"] == 0.4
    assert notes["sm_clock_range_mhz"] == [1425, 1980] and 1425 < notes["sm_clock_mhz"] < 1980
    assert notes["violation_share"] == {"power": 0.4, "thermal": 0.0}
    assert not monitor._thread.is_alive()


def test_monitor_notes_the_temperature_as_the_window_opened_and_closed():
    nvml = FakeNvml(1500, POWER_CAP)
    nvml.temperature = 58
    with ClockMonitor(interval=0.001, nvml=(nvml, "h")) as monitor:
        wait_for(lambda: len(monitor.readings) >= 1)
        nvml.temperature = 63  # the chip heats under the samples
    assert monitor.notes()["gpu_temp_range_c"] == [58, 63]
    nvml.temperature = None  # a board without the sensor: no key, not a guess
    with ClockMonitor(interval=0.001, nvml=(nvml, "h")) as monitor:
        wait_for(lambda: len(monitor.readings) >= 1)
    assert "gpu_temp_range_c" not in monitor.notes()
    assert clock_notes([(1500, 0)], {}, [61, 57])["gpu_temp_range_c"] == [57, 61]  # cooled: still [low, high]


def test_monitor_stops_reading_when_the_window_closes():
    nvml = FakeNvml()
    with ClockMonitor(interval=0.001, nvml=(nvml, "h")) as monitor:
        wait_for(lambda: len(monitor.readings) >= 3)
    calls = nvml.clock_calls
    time.sleep(0.02)
    assert nvml.clock_calls == calls == len(monitor.readings)


def test_monitor_keeps_what_it_read_when_nvml_fails():
    nvml = FakeNvml(1800, 0)
    nvml.fail_after = 2
    with ClockMonitor(interval=0.001, nvml=(nvml, "h")) as monitor:
        wait_for(lambda: nvml.clock_calls > 2)
    assert monitor.notes()["clock_readings"] == 2


def test_monitor_without_nvml_records_nothing(monkeypatch):
    monkeypatch.setattr(gpu_nvml, "device_handle", lambda ordinal=None: None)
    before = threading.active_count()
    with ClockMonitor() as monitor:
        assert threading.active_count() == before
    assert monitor.notes() == {}


# -- peak at the clock the kernel ran at ----------------------------------------------

def test_percent_of_peak_uses_the_clock_the_kernel_ran_at():
    from gemmbench.backend import Shape
    from gemmbench.records.results import KernelResult, percent_of_peak
    env = {"gpu": {"peak_fp32_tflops": 66.9, "max_sm_clock_mhz": 1980.0}}
    half_peak = 2e9 / (66.9e12 / 2)  # seconds for 2*1000^3 flops at half the peak
    ran_slow = KernelResult("gpu", 5, "x", "fp32", Shape(1000, 1000, 1000), "pass", samples=[half_peak],
                            notes={"sm_clock_mhz": 990.0})
    assert percent_of_peak(ran_slow, env) == pytest.approx(50.0)
    assert percent_of_peak(ran_slow, env, at_clock=True) == pytest.approx(100.0)
    unknown = KernelResult("gpu", 5, "x", "fp32", Shape(1000, 1000, 1000), "pass", samples=[half_peak])
    assert percent_of_peak(unknown, env, at_clock=True) == pytest.approx(50.0)  # no clock read: the maximum's


# -- why there is no GPU ---------------------------------------------------------------

def missing(name):
    return ImportError(f"No module named {name!r}", name=name)


def test_no_driver_is_the_cause_and_no_install_is_suggested(monkeypatch):
    monkeypatch.setattr(device, "_nvidia_driver_loads", lambda: False)
    message = device._why_pycuda_is_missing(missing("pycuda"))
    assert message == "no NVIDIA driver: libcuda.so.1 cannot be loaded"


def test_without_the_toolkit_no_pycuda_install_is_suggested(monkeypatch):
    monkeypatch.setattr(device, "_nvidia_driver_loads", lambda: True)
    monkeypatch.setattr(device.shutil, "which", lambda name: None)
    message = device._why_pycuda_is_missing(missing("pycuda"))
    assert "CUDA toolkit" in message and "pip install" not in message


def test_with_driver_and_toolkit_the_install_is_suggested(monkeypatch):
    monkeypatch.setattr(device, "_nvidia_driver_loads", lambda: True)
    monkeypatch.setattr(device.shutil, "which", lambda name: "/usr/local/cuda/bin/nvcc")
    message = device._why_pycuda_is_missing(missing("pycuda"))
    assert message.count("pycuda") == 1 and "pip install -e '.[cuda]'" in message


def test_a_broken_pycuda_is_not_called_missing(monkeypatch):
    monkeypatch.setattr(device, "_nvidia_driver_loads", lambda: True)
    message = device._why_pycuda_is_missing(ImportError("undefined symbol: cuMemAlloc_v2"))
    assert "undefined symbol" in message and "not installed" not in message


@pytest.mark.skipif(importlib.util.find_spec("pycuda") is not None, reason="pycuda is installed")
def test_open_device_without_pycuda_gives_one_reason():
    with pytest.raises(device.GpuUnavailable) as info:
        device.open_device()
    assert str(info.value) == device._why_pycuda_is_missing(missing("pycuda"))


# -- on a GPU with NVML ---------------------------------------------------------------

@pytest.mark.gpu
def test_measure_notes_carry_the_clock_during_the_samples():
    if gpu_nvml.device_handle() is None:
        pytest.skip("NVML (nvidia-ml-py) is not available")
    from gemmbench.backend import Budget, Problem, Shape
    from gemmbench.gpu.backend import GpuBackend
    from gemmbench.rungs import get_spec
    gpu = GpuBackend()
    shape = Shape(1024, 1024, 1024)
    gpu.load(Problem.random(shape, seed=0))
    _, notes = gpu.measure(gpu.prepare(get_spec("gpu", 5), shape).gemm, 1.0, 0.0, Budget(0.05, 10, 10_000, 0.3))
    assert notes["clock_readings"] >= 3  # 0.3 s of samples, a reading every 20 ms
    low, high = notes["sm_clock_range_mhz"]
    assert 0 < low <= notes["nvml_sm_clock_mhz"] <= high <= gpu.info.max_sm_clock_mhz * 1.01
    # the clock the kernel ran at, from the SMs' cycle counters
    assert notes["sm_clock_source"] == "cycle counters"
    assert 0.3 * gpu.info.max_sm_clock_mhz < notes["sm_clock_mhz"] <= gpu.info.max_sm_clock_mhz * 1.01
    assert 0.0 <= notes["throttled_share"] <= 1.0 and isinstance(notes["throttle"], list)
    low, high = notes.get("gpu_temp_range_c", (20, 20))  # an NVIDIA board without the sensor has no key
    assert 0 < low <= high < 120  # degrees C, as the samples began and ended


def _probe(slots, readings):
    """A probe's buffer: (cycles, ns) at the given SM slots, zeros elsewhere."""
    out = np.zeros((slots, 2), np.uint64)
    for sm, (cycles, ns) in readings.items():
        out[sm] = (cycles, ns)
    return out


def test_probe_clock_takes_each_sm_rate_from_its_own_counter():
    # counters start far apart, but every SM ticks 1.8 cycles per ns over 500 us
    before = _probe(8, {0: (10_000, 1_000), 1: (7_000_000, 1_020), 3: (123, 990)})
    after = _probe(8, {0: (10_000 + 900_000, 501_000), 1: (7_900_000, 501_020), 3: (900_123, 500_990)})
    rate, ns = probe_clock(before, after)
    assert rate == pytest.approx(1.8) and ns == pytest.approx(500_000)


def test_probe_clock_skips_sms_read_only_once_or_not_at_all():
    before = _probe(8, {0: (1_000, 1_000), 2: (5, 1_000)})
    after = _probe(8, {0: (1_000 + 1_500_000, 1_001_000), 5: (50, 2_000)})  # SM 2 missed, SM 5 new
    assert probe_clock(before, after) == pytest.approx((1.5, 1_000_000))
    assert probe_clock(_probe(4, {}), _probe(4, {1: (9, 9)})) is None


def test_cycle_clock_replaces_nvml_mean_and_keeps_it_apart():
    nvml = {"sm_clock_mhz": 1980.0, "sm_clock_range_mhz": [1980, 1980], "throttle": []}
    notes = with_cycle_clock(nvml, 1801.5)
    assert notes["sm_clock_mhz"] == 1801.5 and notes["nvml_sm_clock_mhz"] == 1980.0
    assert notes["sm_clock_source"] == "cycle counters" and notes["sm_clock_range_mhz"] == [1980, 1980]
    assert with_cycle_clock(nvml, None) == nvml  # no probe reading: NVML's alone


def test_monitor_on_a_board_without_violation_counters_counts_readings():
    nvml = FakeNvml(1600, POWER_CAP)

    def unsupported(handle, policy):
        raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")

    nvml.nvmlDeviceGetViolationStatus = unsupported
    with ClockMonitor(interval=0.001, nvml=(nvml, "h")) as monitor:
        wait_for(lambda: len(monitor.readings) >= 2)
    notes = monitor.notes()
    assert "violation_share" not in notes and notes["throttled_share"] == 1.0 and notes["throttle"] == ["SwPowerCap"]


# -- a warm-up under a held-down clock settles ----------------------------------

@pytest.mark.parametrize("mhz, max_mhz, held", [
    (1500.0, 1980.0, True),  # BF16 under the H200's power cap
    (1976.0, 1980.0, False),  # SGEMM at the full clock
    (1920.0, 1980.0, True), (1921.0, 1980.0, False),  # the edge: 97% of the maximum
    (None, 1980.0, False), (1500.0, None, False),  # no probe reading, or no maximum: nothing to go on
])
def test_held_down_is_a_clock_below_97_percent_of_the_maximum(mhz, max_mhz, held):
    assert held_down(mhz, max_mhz) is held


class _FakeClock:
    def __init__(self, mhz):
        self.mhz_value, self.marks = mhz, []

    def reset(self):
        self.marks.clear()

    def mark(self, which):
        self.marks.append(which)

    def add_window(self):
        assert self.marks == [0, 1], "the warm-up's window is read after both marks"

    def mhz(self):
        return self.mhz_value


def _timer(mhz, max_mhz=1980.0):
    timer = object.__new__(EventTimer)  # no CUDA: only what _warm_up touches
    timer.clock, timer.max_clock_mhz = _FakeClock(mhz), max_mhz
    timer.stream = SimpleNamespace(synchronize=lambda: None)
    return timer


@pytest.mark.parametrize("mhz, warmup, asked, settled", [
    (1450.0, 0.05, [0.05, SETTLE_SECONDS - 0.05], True),  # held down: settles to SETTLE_SECONDS in all
    (1976.0, 0.05, [0.05], False),  # the full clock: the short warm-up stands
    (1450.0, 0.0, [0.0, SETTLE_SECONDS], True),  # --warmup 0 still settles a held-down clock
    (1450.0, 0.5, [0.5], False),  # a warm-up at least that long needs no more
    (None, 0.05, [0.05], False),  # no cycle-counter reading: nothing to go on
])
def test_warm_up_goes_on_while_the_clock_is_held_down(monkeypatch, mhz, warmup, asked, settled):
    seconds = []

    def fake_warm_up(call, sync, s):
        call()
        seconds.append(s)
        return 2e-4 * len(seconds)  # the estimate of the last warm-up is the one kept

    monkeypatch.setattr(gpu_timing, "warm_up", fake_warm_up)
    calls = []
    per_call, extended = _timer(mhz)._warm_up(lambda a, b: calls.append((a, b)), 1.0, 0.0, warmup)
    assert seconds == pytest.approx(asked) and extended is settled
    assert per_call == pytest.approx(2e-4 * len(asked)) and calls == [(1.0, 0.0)] * len(asked)
