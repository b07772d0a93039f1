"""The command contract, run through the real entry point (no GPU needed)."""

import dataclasses
import json

import pytest

from gemmbench import cli
from gemmbench.rungs import GPU_LADDER
from gemmbench.cpu.backend import CpuBackend
from gemmbench.gpu.device import GpuUnavailable

FAST = ["--warmup", "0", "--min-samples", "1", "--max-samples", "2", "--budget", "0"]
SMALL = ["-m", "33", "-n", "17", "-k", "29"]


def run(capsys, *args):
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def no_gpu(monkeypatch):
    """Make every GPU lookup fail the way a machine without CUDA does."""
    def unavailable(*a, **k):
        raise GpuUnavailable("no CUDA device found")
    import gemmbench.gpu.backend as gpu_backend
    monkeypatch.setattr(gpu_backend, "open_device", unavailable)


def assert_one_line_error(code, err, fragment):
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("gemmbench: error: ")
    assert "Traceback" not in err and fragment in err


@pytest.mark.parametrize("args, fragment", [
    (["run", "-i", "99", "--device", "cpu"], "no CPU rung 99"),
    (["run", "-i", "x"], "not an integer"),
    (["run", "-i", "1", "-m", "0", "--device", "cpu"], "out of range"),
    (["run", "-i", "1", "-n", "-5", "--device", "cpu"], "out of range"),
    (["run", "-i", "1", "-k", "1.5", "--device", "cpu"], "not an integer"),
    (["run", "--device", "cpu"], "give -i or --kernel-file"),
    (["run", "-i", "1", "--device", "tpu"], "tpu"),
    (["compare", "--device", "cpu"], "nothing to compare"),
    (["compare", "--all", "-i", "2", "--device", "cpu"], "not both"),
    (["sizes", "--sweep", "8..4", "--device", "cpu"], "start <= stop"),
    (["sizes", "--sweep", "a,b", "--device", "cpu"], "positive integer"),
    (["sizes", "--sweep", "8,16", "-m", "1", "-n", "2", "-k", "3", "--device", "cpu"], "no dimension left"),
    (["run", "-i", "1", "--device", "cpu", "--min-samples", "9", "--max-samples", "3"], "--min-samples"),
    (["run", "-i", "1", "--device", "cpu", "--threads", "0"], "out of range"),
    (["run", "-i", "1", "--device", "cpu", "--bogus"], "No such option"),
    (["frobnicate"], "No such command"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, fragment):
    code, out, err = run(capsys, *args)
    assert_one_line_error(code, err, fragment)


def test_explicit_gpu_without_gpu_is_exit_2(capsys, no_gpu):
    code, out, err = run(capsys, "run", "-i", "10", "--device", "gpu", "--no-save")
    assert_one_line_error(code, err, "no usable GPU")


def test_auto_without_gpu_falls_back_to_cpu_once(capsys, no_gpu, tmp_path):
    code, out, err = run(capsys, "compare", "-i", "2", *SMALL, *FAST, "--results-dir", str(tmp_path))
    assert code == 0
    assert err.count("No GPU") == 1
    assert "OpenBLAS" in out and "loop reorder" in out


def test_missing_compiler_is_exit_2(capsys, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    code, out, err = run(capsys, "run", "-i", "3", "--device", "cpu", *SMALL, *FAST, "--no-save")
    assert_one_line_error(code, err, "install gcc")


def test_list_shows_every_rung(capsys):
    code, out, _ = run(capsys, "list", "--device", "gpu", "--format", "csv")
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].startswith("rung,name") and len(lines) == 1 + len(GPU_LADDER)
    assert "warptiling" in out and "double buffering" in out and "cuBLAS TF32" in out
    code, out, _ = run(capsys, "list", "--device", "cpu", "--format", "markdown")
    assert code == 0 and "packed micro-kernel" in out and out.count("\n| ") >= 7


def test_compare_all_cpu_json_and_saved_record(capsys, tmp_path):
    code, out, err = run(capsys, "compare", "--all", "--device", "cpu", *SMALL, *FAST, "--json",
                         "--results-dir", str(tmp_path))
    assert code == 0
    data = json.loads(out)
    rows = {(r["kernel_id"], r["threads"]) for r in data["results"]}
    ids = {r["kernel_id"] for r in data["results"]}
    assert ids == set(range(7))
    assert all(r["status"] == "pass" for r in data["results"]), [r["reason"] for r in data["results"]]
    assert all(r["samples_s"] and r["verification"]["passed"] for r in data["results"])
    assert data["device"] == "cpu" and data["options"]["m"] == 33 and data["options"]["all"] is True
    assert len(rows) == len(data["results"])
    saved = list(tmp_path.glob("compare-cpu-*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["results"] == data["results"]


def test_no_save_writes_nothing(capsys, tmp_path):
    code, _, _ = run(capsys, "run", "-i", "2", "--device", "cpu", *SMALL, *FAST, "--no-save",
                     "--results-dir", str(tmp_path / "r"))
    assert code == 0 and not (tmp_path / "r").exists()


def test_failing_kernel_exits_1_and_shows_fail(capsys, monkeypatch, tmp_path):
    real_prepare = CpuBackend.prepare

    def broken(self, spec, shape, params=None):
        prepared = real_prepare(self, spec, shape, params)
        if spec.id != 2:
            return prepared

        def wrong(alpha, beta):
            prepared.gemm(alpha, beta)
            self.C[0, 0] += 1.0  # one wrong element
        return dataclasses.replace(prepared, gemm=wrong)

    monkeypatch.setattr(CpuBackend, "prepare", broken)
    code, out, _ = run(capsys, "run", "-i", "2", "--device", "cpu", *SMALL, *FAST, "--no-save")
    assert code == 1 and "FAIL" in out


def test_sizes_sweep_table_and_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sweep.png"
    code, out, err = run(capsys, "sizes", "--device", "cpu", "--sweep", "8,24", "-i", "2", *FAST,
                         "--plot", str(png), "--results-dir", str(tmp_path))
    assert code == 0, err
    assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"
    record = json.loads(next(tmp_path.glob("sizes-cpu-*.json")).read_text())
    assert [(r["kernel_id"], r["shape"]["M"]) for r in record["results"]] == [(0, 8), (2, 8), (0, 24), (2, 24)]


def test_python_dash_m_entry_point():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "gemmbench", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and "gemmbench" in done.stdout


def test_each_cpu_thread_count_brings_only_its_own_baseline(capsys):
    code, out, _ = run(capsys, "run", "-i", "6", "--device", "cpu", *SMALL, *FAST, "--no-save", "--json")
    rows = [(r["kernel_id"], r["threads"]) for r in json.loads(out)["results"]]
    from gemmbench.cpu.backend import core_count
    assert code == 0 and rows == [(0, core_count()), (6, core_count())]
    code, out, _ = run(capsys, "run", "-i", "0", "--device", "cpu", *SMALL, *FAST, "--no-save", "--json")
    assert [(r["kernel_id"], r["threads"]) for r in json.loads(out)["results"]] == [(0, 1)]


def test_tune_needs_a_gpu(capsys, no_gpu):
    code, out, err = run(capsys, "tune", "-i", "9", "--device", "cpu", "--no-save")
    assert_one_line_error(code, err, "tune needs a GPU")
    code, out, err = run(capsys, "tune", "-i", "9", "--device", "gpu", "--no-save")
    assert_one_line_error(code, err, "no usable GPU")
    code, out, err = run(capsys, "tune", "--device", "gpu")
    assert_one_line_error(code, err, "give -i or one --kernel-file")


def test_max_noise_records_why_each_row_stopped_and_v_shows_it(capsys, tmp_path):
    code, out, err = run(capsys, "compare", "-i", "1", "--device", "cpu", "--warmup", "0", "-m", "8", "-n", "8",
                         "-k", "8", "--max-noise", "50%", "--min-time", "0", "--results-dir", str(tmp_path), "-v")
    assert code == 0 and "stopped on noise (median +-" in err and "target 50%)" in err
    assert "Sampling stopped once the median's 95% confidence interval was within +-50%" in out
    saved = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert [r["notes"]["stopped"] for r in saved["results"]] == ["noise", "noise"]
    assert saved["options"]["max_noise"] == 50.0 and saved["options"]["budget"] is None
