"""Issue 19, many hosts: ``gemmbench show --summary`` over a fleet's records.

A fleet of 64 hosts x 8 GPUs (48 hosts of H200, 16 of H100) is written once,
through the project's own record classes, with per-GPU and per-row jitter of
about 1% each from a fixed seed, and a few planted problems: two GPUs 15%
slow, one throttled in every row, one with a failing rung, one that saw a
thermal slowdown. The summary must find exactly those.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from gemmbench import cli
from gemmbench.backend import Shape
from gemmbench.records import fleet
from gemmbench.records.results import THROTTLED, KernelResult, RunRecord, to_json
from gemmbench.records.store import load
from gemmbench.verify import Verification

ROOT = Path(__file__).resolve().parent.parent
SHAPE = Shape(4096, 4096, 4096)
H200, H100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"
# kernel id, name, precision, GFLOP/s on an H200, throttled on a healthy H200 (the TF32/BF16 power cap)
ROWS = [(0, "cuBLAS", "fp32", 51_200, False), (0, "cuBLAS TF32", "tf32", 360_000, True),
        (0, "cuBLAS BF16", "bf16", 690_000, True), (5, "2D blocktiling", "fp32", 29_500, False),
        (12, "multistage cp.async", "fp32", 45_000, False), (14, "TF32 wgmma", "tf32", 233_000, True),
        (15, "3xTF32 wgmma", "3xtf32", 83_000, True), (17, "TF32 TMA warp-specialized", "tf32", 351_000, True),
        (19, "k-major A", "fp32", 51_400, False), (23, "BF16 wgmma", "bf16", 610_000, True)]
SLOW = {("h200-07", 3), ("h100-12", 5)}  # 15% below their model
THROTTLED_GPU = ("h200-20", 0)  # throttled in every row, 3% slow with it
FAILING = ("h100-04", 1)  # rung 12 fails verification
HOT = ("h200-33", 6)  # a thermal slowdown seen in one row
PLANTED = SLOW | {THROTTLED_GPU, FAILING, HOT}
WRITER = {"version": "0.19.0", "git_commit": None}  # given: software() would ask git once per record


def environment(host: str, index: int, model: str, gpu_uuid: str | None, driver: str = "580.159.04") -> dict:
    gpu = {"name": model, "compute_capability": "9.0", "sm_count": 132, "max_sm_clock_mhz": 1980.0,
           "peak_fp32_tflops": 66.9, "driver_version": driver, "cuda_driver_api": "13.0", "index": index,
           "uuid": gpu_uuid, "pci_bus_id": f"0000:{0x18 + 0x10 * index:02x}:00.0", "cuda_visible_devices": None}
    return {"host": host, "gpu": gpu, "cublas": "13.1.0", "sm_clock_mhz": 1980, "throttle": []}


def result(kernel_id: int, name: str, precision: str, gflops: float, *, throttled: bool = False,
           clock: float = 1978.0, status: str = "pass", throttle=None, thermal: float = 0.0,
           shape: Shape = SHAPE, samples: int = 20) -> KernelResult:
    """A row as the bench saves it: raw samples around the median time that
    gives ``gflops`` (spread well under the noisy threshold), clock notes."""
    seconds = shape.flops / (gflops * 1e9)
    share = 1.0 if throttled else 0.0
    notes = {"calls_per_sample": 1, "sm_clock_mhz": clock if not throttled else clock - 300,
             "throttled_share": share, "throttle": throttle if throttle is not None else
             (["SwPowerCap"] if throttled else []), "violation_share": {"power": share, "thermal": thermal}}
    passed = status == "pass"
    return KernelResult("gpu", kernel_id, name, precision, shape, status,
                        None if passed else "wrong result: max rel err 3.1e-02 over 6.2e-05",
                        verification=Verification(2e-7 if passed else 3.1e-2, 6.2e-5, 0),
                        samples=[seconds * (1 + 0.002 * (i - samples // 2) / samples) for i in range(samples)]
                        if passed else [], notes=notes,
                        flags=[THROTTLED] if throttled and passed else [])


def gpu_record(host: str, index: int, model: str, gpu_uuid: str | None, factor: float, rng: random.Random, *,
               created: str, jitter: float = 0.01, shape: Shape = SHAPE, plant=None) -> RunRecord:
    """One GPU's compare record: every row at ``factor`` of the H200 figure,
    each with its own jitter; ``plant`` changes what a planted GPU shows."""
    results = []
    for kernel_id, name, precision, gflops, throttled in ROWS:
        speed = gflops * factor * rng.uniform(1 - jitter, 1 + jitter)
        kwargs = {"throttled": throttled and model == H200, "shape": shape}
        if plant == "throttled":
            kwargs["throttled"] = True
        if plant == "failing" and kernel_id == 12:
            kwargs["status"] = "fail"
        if plant == "hot" and kernel_id == 12:
            kwargs.update(throttle=["HwThermalSlowdown"], thermal=0.1)
        results.append(result(kernel_id, name, precision, speed, **kwargs))
    return RunRecord("compare", "gpu", {"seed": 0, "flush_l2": False}, environment(host, index, model, gpu_uuid),
                     results, created=created, planned=len(results), gemmbench=WRITER)


def write(directory: Path, name: str, record: RunRecord) -> Path:
    path = directory / name
    path.write_text(to_json(record))
    return path


def make_fleet(directory: Path, seed: int = 19) -> dict[tuple, Path]:
    """64 hosts x 8 GPUs, one record each: (host, index) -> path."""
    rng = random.Random(seed)
    paths = {}
    for n in range(64):
        model = H200 if n < 48 else H100
        host = f"h200-{n + 1:02d}" if n < 48 else f"h100-{n - 47:02d}"
        for index in range(8):
            key = (host, index)
            factor = (1.0 if model == H200 else 0.8) * rng.uniform(0.99, 1.01)  # the GPU's own silicon
            plant = None
            if key in SLOW:
                factor *= 0.85
            elif key == THROTTLED_GPU:
                factor, plant = factor * 0.97, "throttled"
            elif key == FAILING:
                plant = "failing"
            elif key == HOT:
                plant = "hot"
            record = gpu_record(host, index, model, f"GPU-{uuid.UUID(int=rng.getrandbits(128))}", factor, rng,
                                created=f"2026-11-24T10:{n % 60:02d}:{index:02d}+00:00", plant=plant)
            paths[key] = write(directory, f"{host}-gpu{index}.json", record)
    return paths


@pytest.fixture(scope="module")
def fleet_paths(tmp_path_factory) -> dict[tuple, Path]:
    return make_fleet(tmp_path_factory.mktemp("fleet"))


@pytest.fixture(scope="module")
def fleet_summary(fleet_paths) -> fleet.FleetSummary:
    return fleet.summarize([load(p) for p in fleet_paths.values()])


def by_place(summary: fleet.FleetSummary) -> dict[tuple, fleet.GpuLine]:
    return {(line.gpu.host, line.gpu.index): line for line in summary.lines}


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = cli.main(list(map(str, args)))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------
# the arithmetic
# --------------------------------------------------------------------------

def test_the_summary_finds_exactly_the_planted_gpus(fleet_summary):
    assert fleet_summary.records == 512 and len(fleet_summary.gpus) == 512 and fleet_summary.hosts == 64
    flagged = {(line.gpu.host, line.gpu.index) for line in fleet_summary.outliers}
    assert flagged == PLANTED


def test_each_planted_gpu_is_flagged_for_its_reason(fleet_summary):
    lines = by_place(fleet_summary)
    for key in SLOW:
        assert any(r.startswith("slow: 0.8") for r in lines[key].reasons), lines[key].reasons
    assert any(r.startswith("throttled in 100% of its rows (the median NVIDIA H200: 60%)")
               for r in lines[THROTTLED_GPU].reasons), lines[THROTTLED_GPU].reasons
    assert lines[FAILING].reasons == ["1 failed row: 12 multistage cp.async (fp32): wrong result: max rel err "
                                      "3.1e-02 over 6.2e-05"]
    assert lines[HOT].reasons == ["hardware slowdown: HwThermalSlowdown, thermal violation"]


def test_the_ratio_is_to_the_median_gpu_of_the_same_model(fleet_summary):
    lines = by_place(fleet_summary)
    for key in SLOW:  # 0.85 of its model, within the GPU's own +-1% and the median's shift
        assert lines[key].ratio == pytest.approx(0.85, abs=0.015)
    healthy = [line for key, line in lines.items() if key not in PLANTED]
    assert all(abs(line.ratio - 1) < 0.02 for line in healthy)
    # the H100s are 20% slower than the H200s, yet each is near 1 among its own model: never compared across
    assert {g.model for g in fleet_summary.groups} == {H200, H100}
    assert {g.model: len(g.lines) for g in fleet_summary.groups} == {H200: 384, H100: 128}
    assert all(g.judged and g.median_ratio == pytest.approx(1, abs=0.005) for g in fleet_summary.groups)


def test_best_rung_is_compared_with_the_library_row_of_its_precision(fleet_summary):
    line = by_place(fleet_summary)[("h200-01", 0)]
    assert set(line.library) == {"fp32", "tf32", "bf16"} and set(line.best) == {"fp32", "tf32", "3xtf32", "bf16"}
    assert line.best["tf32"].kernel_id == 17 and line.best["fp32"].kernel_id == 19
    assert line.percent_of_library("tf32") == pytest.approx(
        100 * line.best["tf32"].gflops / line.library["tf32"].gflops)
    # 3xTF32 is held to FP32's bound and compared with SGEMM
    assert line.percent_of_library("3xtf32") == pytest.approx(
        100 * line.best["3xtf32"].gflops / line.library["fp32"].gflops)
    # the median of its rows' SM clocks: 6 of its 10 rows ran under the power cap, at 1678 MHz
    assert line.clock == pytest.approx(1678.0) and line.throttled_share == pytest.approx(0.6)


def _exact_fleet(tmp_path: Path, factors: list[float]) -> fleet.FleetSummary:
    """GPUs of one model whose rows are exactly ``factors`` times the same figures (no jitter)."""
    rng = random.Random(0)
    paths = [write(tmp_path, f"g{i}.json", gpu_record(f"node{i}", 0, H200, f"GPU-{i}", factor, rng, jitter=0,
                                                      created="2026-11-24T10:00:00+00:00"))
             for i, factor in enumerate(factors)]
    return fleet.summarize([load(p) for p in paths])


def test_ratio_and_robust_z_by_hand(tmp_path):
    factors = [1.00, 1.01, 0.99, 1.02, 0.98, 0.80]
    summary = _exact_fleet(tmp_path, factors)
    lines = {line.gpu.host: line for line in summary.lines}
    median = statistics.median(factors)  # every row's median over the six GPUs
    ratios = [f / median for f in factors]
    for i, f in enumerate(factors):
        assert lines[f"node{i}"].ratio == pytest.approx(ratios[i], rel=1e-9)
    mad = statistics.median(abs(r - statistics.median(ratios)) for r in ratios)
    z = (ratios[5] - statistics.median(ratios)) / (1.4826 * mad)
    assert lines["node5"].robust_z == pytest.approx(z, rel=1e-9) and z < -3.5
    assert [h for h, line in lines.items() if line.outlier] == ["node5"]


def test_identical_gpus_are_not_told_apart_by_a_tenth_of_a_percent(tmp_path):
    """MAD 0 would make any difference infinite: the scale has a floor."""
    summary = _exact_fleet(tmp_path, [1.0, 1.0, 1.0, 1.0, 1.0, 0.999])
    assert not summary.outliers
    assert summary.groups[0].sigma == pytest.approx(fleet.SIGMA_FLOOR)


def test_too_few_gpus_of_a_model_are_not_judged_on_speed(tmp_path):
    summary = _exact_fleet(tmp_path, [1.0, 1.0, 0.5])
    assert not summary.outliers and not summary.groups[0].judged
    assert any("too few to judge" in note for note in summary.notes())


def test_several_records_of_a_gpu_merge_newest_wins(tmp_path):
    rng = random.Random(1)
    old = gpu_record("node1", 0, H200, "GPU-same", 0.5, rng, jitter=0, created="2026-11-20T10:00:00+00:00")
    old.results.append(result(30, "old only", "fp32", 1_000))
    new = gpu_record("node1", 0, H200, "GPU-same", 1.0, rng, jitter=0, created="2026-11-24T10:00:00+00:00")
    paths = [write(tmp_path, "b-new.json", new), write(tmp_path, "a-old.json", old)]
    summary = fleet.summarize([load(p) for p in paths])
    assert len(summary.gpus) == 1 and len(summary.lines) == 1
    line = summary.lines[0]
    assert line.gpu.paths == [paths[1], paths[0]]  # oldest first, whatever the order given
    assert line.library["fp32"].gflops == pytest.approx(51_200, rel=1e-3)  # the newer record's row, not 25,600
    assert (30, "old only", "fp32", SHAPE) in line.fastest  # a row only the old record has stays


def test_records_of_several_shapes_are_grouped_by_shape(tmp_path):
    rng = random.Random(2)
    small = Shape(1024, 1024, 1024)
    paths = [write(tmp_path, f"{shape.M}-{i}.json",
                   gpu_record(f"node{i}", 0, H200, f"GPU-{i}", 1.0, rng, shape=shape,
                              created=f"2026-11-24T10:00:0{i}+00:00"))
             for i in range(6) for shape in ([SHAPE, small] if i < 4 else [small])]
    summary = fleet.summarize([load(p) for p in paths])
    assert summary.shapes == [small, SHAPE]  # the shape most GPUs ran first
    assert [(g.shape, len(g.lines)) for g in summary.groups] == [(small, 6), (SHAPE, 4)]


def test_a_multi_gpu_record_gives_each_gpu_its_line_and_a_failed_worker_is_flagged(tmp_path):
    rng = random.Random(3)
    results = []
    subs = {}
    for index in range(3):
        one = gpu_record("node1", index, H200, f"GPU-{index}", 1.0, rng, created="2026-11-24T10:00:00+00:00")
        for r in one.results:
            r.gpu = index
        results += one.results
        subs[str(index)] = {k: v for k, v in one.environment.items() if k != "host"}
    # a failed worker's facts are not checked on loading: whatever it left is taken as found
    subs["3"] = {"error": "RuntimeError: CUDA driver: out of memory", "gpu": "not facts"}
    record = RunRecord("compare", "gpu", {"seed": 0}, {"host": "node1", "gpus": subs}, results,
                       gemmbench=WRITER)
    summary = fleet.summarize([load(write(tmp_path, "multi.json", record))])
    assert [(line.gpu.index, line.gpu.uuid) for line in summary.lines] == \
        [(0, "GPU-0"), (1, "GPU-1"), (2, "GPU-2"), (3, None)]
    assert [line.reasons for line in summary.lines if line.outlier] == \
        [["worker failed: RuntimeError: CUDA driver: out of memory"]]


def test_cpu_records_are_left_out_with_a_note(tmp_path, fleet_paths):
    cpu = RunRecord("compare", "cpu", {"seed": 0}, {"host": "x", "cpu": {"cpu": "EPYC", "cores": 2}},
                    [KernelResult("cpu", 0, "OpenBLAS", "fp32", SHAPE, "pass", samples=[1.0], threads=2)],
                    gemmbench=WRITER)
    path = write(tmp_path, "cpu.json", cpu)
    summary = fleet.summarize([load(path), load(fleet_paths[("h200-01", 0)])])
    assert len(summary.lines) == 1 and f"{path}: left out (a CPU record)" in summary.notes()


# --------------------------------------------------------------------------
# the command
# --------------------------------------------------------------------------

def test_show_summary_marks_outliers_and_fail_on_outlier_exits_1(capsys, fleet_paths, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    code, out, err = run_cli(capsys, "show", "--summary", "--fail-on-outlier", *fleet_paths.values())
    assert code == 1 and err == ""
    assert "512 records: 512 GPUs on 64 hosts (384 NVIDIA H200, 128 NVIDIA H100 80GB HBM3)" in out
    assert sum("580.159.04" in line for line in out.splitlines()) == 512  # a table row per GPU, with its driver
    assert "5 outliers of 512 GPU lines:" in out
    assert "h200-07 GPU 3 (" in out and "slow: 0.8" in out


def test_without_fail_on_outlier_exit_0_with_the_outlier_marked_and_0_without_outliers(capsys, fleet_paths):
    healthy = [p for (host, i), p in fleet_paths.items() if host in {f"h200-0{n}" for n in range(1, 7)}]
    code, out, _ = run_cli(capsys, "show", "--summary", "--format", "csv", *healthy, fleet_paths[("h200-07", 3)])
    assert code == 0
    assert [row["host"] for row in csv.DictReader(io.StringIO(out)) if row["outlier"] == "1"] == ["h200-07"]
    code, out, _ = run_cli(capsys, "show", "--summary", "--fail-on-outlier", *healthy)
    assert code == 0 and "0 outliers of 48 GPU lines." in out


def test_csv_and_json_parse_and_hold_the_same_numbers(capsys, fleet_paths):
    paths = list(fleet_paths.values())
    code, text, _ = run_cli(capsys, "show", "--summary", "--format", "csv", *paths)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(text)))
    code, text, _ = run_cli(capsys, "show", "--summary", "--json", *paths)
    assert code == 0
    data = json.loads(text)
    assert data["records"] == 512 and data["gpus"] == 512 and data["hosts"] == 64 and data["outliers"] == 5
    assert len(rows) == len(data["lines"]) == 512
    numeric = ["cublas_gflops_fp32", "cublas_gflops_tf32", "best_gflops_tf32", "best_pct_cublas_3xtf32",
               "sm_clock_mhz", "throttled_share", "ratio_to_model_median", "robust_z", "timed_rows", "M"]
    for row, line in zip(rows, data["lines"]):
        assert row["uuid"] == line["uuid"] and row["host"] == line["host"]
        for key in numeric:
            assert float(row[key]) == pytest.approx(line[key], rel=1e-5), key
        assert row["best_gflops_fp16"] == "" and line["best_gflops_fp16"] is None
        assert row["outlier"] == ("1" if line["outlier"] else "0")
        assert row["reasons"] == "; ".join(line["reasons"])
    flagged = {(line["host"], line["gpu_index"]) for line in data["lines"] if line["outlier"]}
    assert flagged == PLANTED


def test_markdown_has_one_row_per_gpu(capsys, fleet_paths):
    paths = [fleet_paths[(f"h200-{n:02d}", i)] for n in range(1, 7) for i in range(8)]
    code, out, _ = run_cli(capsys, "show", "--summary", "--format", "markdown", *paths)
    assert code == 0
    table = [line for line in out.splitlines() if line.startswith("| NVIDIA H200 | h200-")]
    assert len(table) == 48 and "cuBLAS FP32" in out and "best TF32 (% cuBLAS)" in out


def test_one_bad_record_among_many_is_one_line_naming_it_exit_2(capsys, fleet_paths, tmp_path):
    bad = tmp_path / "h200-99-gpu0.json"
    bad.write_text(fleet_paths[("h200-01", 0)].read_text()[:500])
    code, out, err = run_cli(capsys, "show", "--summary", *fleet_paths.values(), bad)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(bad) in err and "truncated" in err


@pytest.mark.parametrize("args, fragment", [
    (["--json"], "go with --summary"), (["--fail-on-outlier"], "go with --summary"),
    (["--summary", "--json", "--format", "csv"], "conflicts with --format csv"),
    (["--summary", "--plot", "x.png"], "drop --plot")])
def test_summary_options_misused_are_one_line(capsys, fleet_paths, args, fragment):
    code, out, err = run_cli(capsys, "show", *args, fleet_paths[("h200-01", 0)])
    assert code == 2 and out == "" and err.count("\n") == 1 and fragment in err


def test_strings_from_records_are_data(capsys, tmp_path, monkeypatch):
    """A host name is a record's string: printed escaped, never as markup or escape codes."""
    monkeypatch.setenv("COLUMNS", "400")  # wide enough that the host is not cut
    rng = random.Random(4)
    hostile = "[bold]evil[/bold]\x1b[2J"
    paths = [write(tmp_path, f"{i}.json", gpu_record(hostile if i == 0 else f"n{i}", 0, H200, f"GPU-{i}", 1.0, rng,
                                                     created="2026-11-24T10:00:00+00:00")) for i in range(3)]
    for fmt in ("table", "markdown", "csv"):
        code, out, _ = run_cli(capsys, "show", "--summary", "--format", fmt, *paths)
        assert code == 0 and "\x1b" not in out and "\\x1b" in out
    code, out, _ = run_cli(capsys, "show", "--summary", "--json", *paths)
    hosts = {line["uuid"]: line["host"] for line in json.loads(out)["lines"]}
    assert hosts["GPU-0"] == hostile  # JSON escapes it and keeps it whole


def test_notes_the_loader_does_not_check_are_read_with_care(tmp_path):
    rng = random.Random(7)
    record = gpu_record("node1", 0, H200, "GPU-1", 1.0, rng, created="2026-11-24T10:00:00+00:00")
    record.results[0].notes["violation_share"] = ["thermal", 1.0]
    record.results[1].notes["violation_share"] = {"thermal": True}
    record.results[2].notes["violation_share"] = {"thermal": 0.5}
    line = fleet.summarize([load(write(tmp_path, "r.json", record))]).lines[0]
    assert line.slowdowns == ["thermal violation"]  # from the one row whose share is a number


# --------------------------------------------------------------------------
# the host in the record
# --------------------------------------------------------------------------

def test_records_without_a_host_still_load_and_a_bad_host_is_refused(capsys, tmp_path):
    rng = random.Random(5)
    record = gpu_record("node1", 0, H200, "GPU-1", 1.0, rng, created="2026-11-24T10:00:00+00:00")
    del record.environment["host"]
    summary = fleet.summarize([load(write(tmp_path, "old.json", record))])
    assert summary.lines[0].gpu.host is None
    record.environment["host"] = 7
    path = write(tmp_path, "bad.json", record)
    code, _, err = run_cli(capsys, "show", path)
    assert code == 2 and "environment.host should be a string, not 7" in err


def test_a_run_records_its_host(monkeypatch):
    from gemmbench.execute.devices import Devices, host_name
    from gemmbench.options import RunOptions
    from gemmbench.plan import build_plan
    monkeypatch.setenv("GEMMBENCH_HOST", "node-17")
    plan = build_plan(RunOptions(command="run", kernels=(1,), device="cpu"))
    assert Devices(plan).environment()["host"] == "node-17" == host_name()
    monkeypatch.delenv("GEMMBENCH_HOST")
    import socket
    assert host_name() == socket.gethostname()


# --------------------------------------------------------------------------
# examples/cluster
# --------------------------------------------------------------------------

SBATCH = ROOT / "examples" / "cluster" / "gemmbench.sbatch"
FAKE_SRUN = """#!/bin/bash
# srun's options, then the task's command: run it as six tasks of one node
while [[ $1 == --* ]]; do shift; done
status=0
for i in 0 1 2 3 4 5; do SLURMD_NODENAME=node1 SLURM_LOCALID=$i "$@" || status=1; done
exit $status
"""
# gemmbench compare --all --gpu N --results-dir DIR: the record made for GPU N; anything else: the real one
FAKE_GEMMBENCH = """#!/bin/bash
if [ "$1" = compare ]; then mkdir -p "$6" && cp "$STASH/gpu$4.json" "$6/compare-gpu-20261124-100000.json"
else exec "$PYTHON" -m gemmbench "$@"; fi
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_slurm_script_runs_a_task_per_gpu_and_summarises(tmp_path):
    """The batch script under a stand-in srun (six tasks on this machine) and
    a stand-in benchmark (records made here; one GPU 15% slow): one folder
    per task, a summary CSV, and the exit status of --fail-on-outlier."""
    subprocess.run(["bash", "-n", str(SBATCH)], check=True, timeout=30)
    stash, bin_dir = tmp_path / "stash", tmp_path / "bin"
    stash.mkdir()
    bin_dir.mkdir()
    rng = random.Random(6)
    for i in range(6):
        write(stash, f"gpu{i}.json", gpu_record("node1", i, H200, f"GPU-{i}", 0.85 if i == 4 else 1.0, rng,
                                                created="2026-11-24T10:00:00+00:00"))
    for name, text in (("srun", FAKE_SRUN), ("gemmbench", FAKE_GEMMBENCH)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    # the caller's environment (PYTHONPATH may be how this Python finds gemmbench), the stand-ins first on PATH
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}", "HOME": str(tmp_path),
           "SLURM_JOB_ID": "77", "STASH": str(stash),
           "PYTHON": sys.executable, "GEMMBENCH": str(bin_dir / "gemmbench"), "TMPDIR": str(tmp_path),
           "USER": "me", "COLUMNS": "300"}
    done = subprocess.run(["bash", str(SBATCH)], env=env, capture_output=True, text=True, timeout=300,
                          cwd=ROOT, stdin=subprocess.DEVNULL)
    fleet_dir = tmp_path / "gemmbench-fleet" / "77"
    assert len(list(fleet_dir.glob("*-gpu[0-5]/*.json"))) == 6, done.stdout + done.stderr
    rows = list(csv.DictReader((fleet_dir / "summary.csv").open()))
    assert [(row["gpu_index"], row["outlier"]) for row in rows] == [(str(i), str(int(i == 4))) for i in range(6)]
    assert done.returncode == 1 and "1 outlier of 6 GPU lines:" in done.stdout, done.stdout + done.stderr


def test_the_kubernetes_job_is_an_indexed_job_of_one_gpu_per_pod():
    yaml = pytest.importorskip("yaml")
    job = yaml.safe_load((ROOT / "examples" / "cluster" / "gemmbench-job.yaml").read_text())
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    env = {e["name"]: e for e in container["env"]}
    assert env["GEMMBENCH_HOST"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    assert any(m["mountPath"] == "/results" for m in container["volumeMounts"])
    assert container["command"] == ["sh", "-c"]
    script = container["args"][0]
    assert "--results-dir \"/results/${GEMMBENCH_HOST}-${JOB_COMPLETION_INDEX}\"" in script


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs sh")
@pytest.mark.parametrize("code, pod_fails", [(0, False), (1, False), (2, True)])
def test_the_job_pod_succeeds_on_a_failed_kernel_and_fails_on_bad_input(tmp_path, code, pod_fails):
    """Exit 1 (a FAIL row, saved in the record) is a result; exit 2 is not."""
    yaml = pytest.importorskip("yaml")
    job = yaml.safe_load((ROOT / "examples" / "cluster" / "gemmbench-job.yaml").read_text())
    script = job["spec"]["template"]["spec"]["containers"][0]["args"][0]
    (tmp_path / "gemmbench").write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path}/args\nexit {code}\n")
    (tmp_path / "gemmbench").chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "GEMMBENCH_HOST": "node9", "JOB_COMPLETION_INDEX": "17"}
    done = subprocess.run(["sh", "-c", script], env=env, timeout=30, stdin=subprocess.DEVNULL)
    assert (done.returncode != 0) == pod_fails
    assert (tmp_path / "args").read_text() == "compare --all --results-dir /results/node9-17\n"
