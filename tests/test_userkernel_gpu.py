"""User kernels on the GPU: a faulting and a hanging kernel each FAIL while the
rows around them (and the next shape's) are measured and saved; the CUDA
example verifies; compile errors and tuning go through the real CLI."""

import json
import shutil
from pathlib import Path

import pytest

from gemmbench import cli

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parent.parent
CUDA_EXAMPLE = ROOT / "examples" / "tiled_sgemm.cu"
FAST = ["--warmup", "0.01", "--min-samples", "3", "--max-samples", "10", "--budget", "0.02"]
HEADER = "/* gemmbench kernel\n * name: {name}\n * block: 32\n * grid: 1\n */\n"
SIGNATURE = ('extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B,'
             ' float beta, float* C)')
FAULTS = HEADER.format(name="faults") + SIGNATURE + " { C[(size_t)1 << 40] = alpha; }\n"
HANGS = HEADER.format(name="hangs") + SIGNATURE + " { while (M > 0) { __nanosleep(1000); } }\n"


# right at every shape but one: a fault there, on whichever GPU that shape is given to
FAULTS_AT_96 = ("/* gemmbench kernel\n * name: faults at 96\n * block: 256\n * grid: ceil_div(N, 256), M\n */\n"
                + SIGNATURE + """ {
    if (M == 96) { C[(size_t)1 << 40] = alpha; return; }
    int row = blockIdx.y, col = blockIdx.x * 256 + threadIdx.x;
    if (col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = alpha * sum + (beta == 0.0f ? 0.0f : beta * C[(size_t)row * N + col]);
}
""")


def _gpu_count() -> int:
    from gemmbench.gpu.device import device_count
    return device_count()


def run(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_fault_and_hang_fail_while_every_other_row_is_measured_and_saved(tmp_path, capfd):
    faults, hangs = tmp_path / "faults.cu", tmp_path / "hangs.cu"
    faults.write_text(FAULTS)
    hangs.write_text(HANGS)
    after = tmp_path / "after_the_hang.cu"
    shutil.copy(CUDA_EXAMPLE, after)
    after.write_text(after.read_text().replace("name:        tiled (example)", "name:        after the hang"))
    code, out, err = run(capfd, "sizes", "--sweep", "64,257", "-i", "3", "--kernel-file", faults,
                         "--kernel-file", CUDA_EXAMPLE, "--kernel-file", hangs, "--kernel-file", after,
                         "--kernel-timeout", "2", *FAST, "--results-dir", tmp_path / "results")
    assert code == 1, err
    assert "PyCUDA WARNING" not in err  # the faulted worker goes without freeing into its dead context
    saved = json.loads(next((tmp_path / "results").glob("*.json")).read_text())["results"]
    by = {(r["name"], r["shape"]["M"]): r for r in saved}
    for size in (64, 257):  # the second shape runs after the fault and the hang: the parent's context is fine
        assert by[("faults", size)]["status"] == "fail"
        assert "illegal memory access" in by[("faults", size)]["reason"], by[("faults", size)]["reason"]
        assert by[("hangs", size)]["status"] == "fail"
        assert by[("hangs", size)]["reason"].startswith("timed out: a call ran over 2 s")
        for name in ("cuBLAS", "smem blocking", "tiled (example)", "after the hang"):
            row = by[(name, size)]
            assert row["status"] == "pass" and row["samples_s"] and row["verification"]["passed"], row


def test_cuda_example_verifies_at_odd_shapes(capsys):
    code, out, err = run(capsys, "sizes", "--sweep", "1,17,127,1000", "-k", "33", "--kernel-file", CUDA_EXAMPLE,
                         *FAST, "--json", "--no-save")
    assert code == 0, err
    results = json.loads(out)["results"]
    mine = [r for r in results if r["kernel_id"] == -1]
    assert len(mine) == 4 and all(r["status"] == "pass" and r["verification"]["passed"] for r in mine), mine


def test_compile_error_and_missing_entry_are_exit_2(tmp_path, capsys):
    broken = tmp_path / "broken.cu"
    broken.write_text(HEADER.format(name="broken") + SIGNATURE + " {\n    C[0] = undefined_thing;\n}\n")
    code, out, err = run(capsys, "run", "--kernel-file", broken, "-m", "64", "-n", "64", "-k", "64", "--no-save")
    assert code == 2 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"gemmbench: error: {broken} does not compile: {broken.resolve()}(7): error"), err

    mangled = tmp_path / "mangled.cu"
    mangled.write_text(HEADER.format(name="mangled") + SIGNATURE.replace('extern "C" ', "") + " {}\n")
    code, out, err = run(capsys, "run", "--kernel-file", mangled, "-m", "64", "-n", "64", "-k", "64", "--no-save")
    assert code == 2 and err.count("\n") == 1 and "no kernel 'sgemm'" in err, err


def test_tune_a_kernel_file_then_run_uses_the_tuned_parameters(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GEMMBENCH_CACHE_DIR", str(tmp_path))
    shape = ["-m", "512", "-n", "512", "-k", "512"]
    code, out, err = run(capsys, "tune", "--kernel-file", CUDA_EXAMPLE, "--limit", "4", *shape, *FAST, "--no-save")
    assert code == 0, err
    entries = json.loads((tmp_path / "tuning.json").read_text())["entries"]
    assert len(entries) == 1 and f"file {CUDA_EXAMPLE}" in next(iter(entries))
    code, out, err = run(capsys, "run", "--kernel-file", CUDA_EXAMPLE, *shape, *FAST, "--json", "--no-save")
    assert code == 0, err
    mine = json.loads(out)["results"][-1]
    assert mine["params_source"] == "tuned" and mine["params"] == next(iter(entries.values()))["params"]


def test_a_kernel_faulting_on_one_gpus_share_fails_there_and_every_other_row_is_saved(tmp_path, capfd):
    """--gpus all shares the shapes out; the GPU given M = 96 gets the fault as
    a FAIL row and goes on, the other GPUs' rows are measured, all in one record."""
    count = _gpu_count()
    if count < 2:
        pytest.skip("needs two GPUs")
    kernel = tmp_path / "faults_at_96.cu"
    kernel.write_text(FAULTS_AT_96)
    code, out, err = run(capfd, "sizes", "--gpus", "all", "--sweep", "64,96,128,160", "-i", "3",
                         "--kernel-file", kernel, *FAST, "--results-dir", tmp_path / "results")
    assert code == 1, err
    assert "PyCUDA WARNING" not in err
    saved = json.loads(next((tmp_path / "results").glob("*.json")).read_text())
    rows = [r for r in saved["results"] if r["device"] == "gpu"]
    fault = next(r for r in rows if r["name"] == "faults at 96" and r["shape"]["M"] == 96)
    assert fault["status"] == "fail" and "illegal memory access" in fault["reason"], fault
    assert {r["gpu"] for r in rows} == set(range(min(count, 4))) and set(saved["environment"]["gpus"]) >= {"0", "1"}
    others = [r for r in rows if r is not fault]
    names = {(r["name"], r["shape"]["M"]) for r in rows}
    assert {(n, m) for n in ("cuBLAS", "smem blocking", "faults at 96") for m in (64, 96, 128, 160)} <= names
    assert all(r["status"] == "pass" and r["samples_s"] and r["verification"]["passed"] for r in others), others
    assert any(r["gpu"] != fault["gpu"] for r in others)
