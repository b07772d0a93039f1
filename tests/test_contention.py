"""Rows measured while the machine was busy are flagged: a CPU kernel whose
threads waited for a core, and a baseline whose timing moved during the run."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from gemmbench.backend import Budget, Prepared, Problem, Shape
from gemmbench.execute.local import CpuWait, Entry, Batch, measure_watched, run_plan
from gemmbench.cpu.backend import CpuBackend
from gemmbench.records.results import BASELINE_SHIFTED, SHIFTED, RunRecord
from gemmbench.output.report import result_rows, sweep_rows
from gemmbench.rungs import get_spec


def fake_tasks(tmp_path, waits_ns: dict[str, int]):
    for tid, ns in waits_ns.items():
        (tmp_path / tid).mkdir(exist_ok=True)
        (tmp_path / tid / "schedstat").write_text(f"123456 {ns} 7\n")


def test_run_queue_wait_is_summed_over_threads(tmp_path, monkeypatch):
    monkeypatch.setattr(CpuWait, "TASKS", str(tmp_path))
    fake_tasks(tmp_path, {"101": 1_000_000, "102": 0})
    watch = CpuWait(threads=2)
    time.sleep(0.2)
    fake_tasks(tmp_path, {"101": 61_000_000, "102": 40_000_000, "103": 20_000_000})  # 103: a new thread
    waited = watch.fraction()
    assert 0.4 < waited <= 0.6  # 120 ms of waiting over ~0.2 s


def test_without_schedstat_a_single_thread_is_judged_by_its_cpu_time(tmp_path, monkeypatch):
    monkeypatch.setattr(CpuWait, "TASKS", str(tmp_path / "missing"))
    watch = CpuWait(threads=1)
    time.sleep(0.1)  # asleep: no CPU time, as if another process had the core
    assert watch.fraction() > 0.8
    assert CpuWait(threads=2).fraction() is None  # several threads: cannot tell


def test_measure_watched_flags_and_notes(monkeypatch):
    backend = CpuBackend(threads=1)
    problem = Problem.random(Shape(16, 16, 16))
    backend.load(problem)
    gemm = backend.prepare(get_spec("cpu", 0), problem.shape).gemm
    budget = Budget(0, 3, 3, 0)
    for waited, flagged in ((0.5, True), (0.001, False), (None, False)):
        monkeypatch.setattr(CpuWait, "fraction", lambda self, w=waited: w)
        samples, notes, disturbed = measure_watched(backend, gemm, budget, False, 1)
        assert len(samples) == 3 and disturbed is flagged
        assert notes.get("cpu_wait_fraction") == (None if waited is None else round(waited, 4))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_a_busy_process_on_the_same_core_flags_the_row():
    """A real, known disturbance: a child that spins, pinned to the core this
    test is pinned to, and a measurement long enough (300 calls of a 192^3
    GEMM, a few hundred ms of CPU) that the scheduler must share the core:
    OpenBLAS timed there comes out disturbed, however busy the machine is."""
    core = min(os.sched_getaffinity(0))
    saved = os.sched_getaffinity(0)
    hog = subprocess.Popen([sys.executable, "-c", "import sys; print('spinning', flush=True)\nwhile True: pass"],
                           stdout=subprocess.PIPE, text=True)
    try:
        os.sched_setaffinity(hog.pid, {core})
        os.sched_setaffinity(0, {core})
        assert hog.stdout.readline().strip() == "spinning"  # it is running now, on our core
        backend = CpuBackend(threads=1)
        problem = Problem.random(Shape(192, 192, 192))
        backend.load(problem)
        gemm = backend.prepare(get_spec("cpu", 0), problem.shape).gemm
        samples, notes, disturbed = measure_watched(backend, gemm, Budget(0, 300, 300, 0), False, 1)
    finally:
        os.sched_setaffinity(0, saved)
        hog.kill()
        hog.wait()
    assert len(samples) == 300
    assert disturbed and notes["cpu_wait_fraction"] > 0.2, notes


class FakeBackend:
    """Exact GEMMs on the host; measure() returns scripted times per rung,
    one list entry per call (the baseline's second entry is its second look)."""

    device = "gpu"  # no CPU wait watching: the scripted times are the whole story

    def __init__(self, times: dict[int, list[float]]):
        self.times = {k: list(v) for k, v in times.items()}
        self.remeasured = []

    def environment(self):
        return {}

    def load(self, problem):
        self.A, self.B = problem.A, problem.B
        self.C = np.zeros((problem.shape.M, problem.shape.N), np.float32)

    def prepare(self, spec, shape, params=None):
        def gemm(alpha, beta):
            product = alpha * (self.A.astype(np.float64) @ self.B)
            self.C = (product + beta * self.C if beta else product).astype(np.float32)  # beta = 0: C not read
        self.current = spec.id
        return Prepared(gemm, spec)

    def set_c(self, c, output="fp32"):
        self.C = c.copy()

    def get_c(self, output="fp32"):
        return self.C.copy()

    def measure(self, gemm, alpha, beta, budget, flush_l2=False):
        seconds = self.times[self.current].pop(0)
        return [seconds] * 5, {}

    def reference(self, problem, inputs="fp32"):
        a, b = problem.A.astype(np.float64), problem.B.astype(np.float64)
        return a @ b, np.abs(a) @ np.abs(b)


def run_fake(times):
    backend = FakeBackend(times)
    entries = [Entry(backend, get_spec("gpu", 0)), Entry(backend, get_spec("gpu", 1))]
    plan = Batch(entries, [Shape(8, 8, 8)], budget=Budget(0, 5, 5, 0), device="gpu")
    record = RunRecord("run", "gpu", {}, {})
    updated = []
    run_plan(plan, record.results.append, updated.append)
    return record, updated


def test_a_baseline_that_moved_flags_itself_and_the_percentages_against_it():
    record, updated = run_fake({0: [1e-3, 2e-3], 1: [4e-3]})
    base, rung = record.results
    assert SHIFTED in base.flags and BASELINE_SHIFTED in rung.flags
    assert base.notes["recheck"]["median_s"] == 2e-3 and base.notes["recheck"]["shift"] == pytest.approx(1.0)
    assert updated == [rung, base]  # both saved again
    assert record.percent_of_baseline(rung) == pytest.approx(25.0)  # the first look stays the figure
    rows = {r[0]: r for r in result_rows(record)}
    assert "baseline-shifted" in rows["1"][-2] and "shifted" in rows["0"][-2]
    _, cells, _ = sweep_rows(record)
    assert cells[0][2].endswith(" S") and cells[1][2].endswith(" B")


def test_a_steady_baseline_is_not_flagged():
    record, updated = run_fake({0: [1e-3, 1.02e-3], 1: [4e-3]})
    assert [r.flags for r in record.results] == [[], []]
    assert updated == [record.results[0]]  # the second look is kept in its notes


def test_a_baseline_alone_is_not_measured_twice():
    backend = FakeBackend({0: [1e-3]})
    plan = Batch([Entry(backend, get_spec("gpu", 0))], [Shape(8, 8, 8)], budget=Budget(0, 5, 5, 0))
    results = run_plan(plan, lambda r: None)
    assert results[0].status == "pass" and "recheck" not in results[0].notes
