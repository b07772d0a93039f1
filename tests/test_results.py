import json
import math

import pytest

from gemmbench.backend import Shape
from gemmbench.records.writer import RecordWriter
from gemmbench.records.store import RecordError, load as load_record
from gemmbench.records.results import KernelResult, RunRecord, percent_of_baseline, percent_of_peak, to_json
from gemmbench.verify import Verification

SHAPE = Shape(64, 32, 16)


def result(kid, seconds, device="gpu", status="pass", threads=None, err=1e-7):
    return KernelResult(device, kid, f"k{kid}", "fp32", SHAPE, status, threads=threads,
                        verification=Verification(err, 1e-4, 0), samples=list(seconds))


def record(results, device="gpu"):
    gpu = {"name": "Test GPU", "compute_capability": "9.0", "sm_count": 1, "max_sm_clock_mhz": 1000.0,
           "peak_fp32_tflops": 1.0, "driver_version": "0", "cuda_driver_api": "13.0"}
    env = {"gpu": gpu} if device == "gpu" else {}
    return RunRecord("compare", device, {"seed": 0}, env, results)


def test_percent_of_baseline_and_peak():
    base, rung = result(0, [2e-6, 2e-6]), result(5, [4e-6, 4e-6, 4e-6])
    rec = record([base, rung])
    assert percent_of_baseline(rung, rec.results, "gpu") == pytest.approx(50.0)
    # 2*64*32*16 flops in 2 us = 32.768 GFLOP/s of a 1 TFLOP/s peak
    assert percent_of_peak(base, rec.environment) == pytest.approx(3.2768)


def test_cpu_rows_compare_with_the_baseline_of_their_thread_count():
    rows = [result(0, [1.0], "cpu", threads=1), result(0, [0.5], "cpu", threads=2),
            result(5, [1.0], "cpu", threads=1), result(6, [1.0], "cpu", threads=2)]
    assert percent_of_baseline(rows[2], rows, "cpu") == pytest.approx(100.0)
    assert percent_of_baseline(rows[3], rows, "cpu") == pytest.approx(50.0)


def test_no_baseline_no_percent():
    rung = result(3, [1e-6])
    assert percent_of_baseline(rung, [result(0, [], status="skip"), rung], "gpu") is None


def test_json_roundtrip_keeps_raw_samples(tmp_path):
    rec = record([])
    writer = RecordWriter(rec, tmp_path)
    for r in [result(0, [1e-6, 2e-6, 3e-6]), result(1, [], status="fail", err=math.inf)]:
        rec.results.append(r)
        writer.add(r)
    writer.finish()
    path = writer.path
    data = json.loads(path.read_text())  # strict JSON: no Infinity/NaN tokens
    assert data["results"][0]["samples_s"] == [1e-6, 2e-6, 3e-6]
    assert data["results"][0]["stats"]["median"] == 2e-6
    assert data["results"][1]["verification"]["max_rel_error"] is None
    assert data["results"][1]["verification"]["passed"] is False
    assert data["results"][1]["percent_of_baseline"] is None
    again = load_record(path).record
    assert again.results[0].samples == [1e-6, 2e-6, 3e-6]
    assert math.isinf(again.results[1].verification.max_rel_error)
    assert again.failed and not record([result(0, [1.0])]).failed


def test_strict_json_has_no_nan_tokens():
    text = to_json(record([result(0, [1e-6], err=math.nan)]))
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text)


def test_unknown_schema_is_refused(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"schema": 99}))
    with pytest.raises(RecordError, match="schema"):
        load_record(p)


def test_git_commit_says_when_the_code_is_not_the_commit(tmp_path, monkeypatch):
    import subprocess
    import gemmbench.records.results as results
    repo = tmp_path / "repo"
    (repo / "gemmbench" / "records").mkdir(parents=True)
    run = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)
    run("init", "-q")
    (repo / "x.py").write_text("1")
    run("add", "x.py")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    monkeypatch.setattr(results, "__file__", str(repo / "gemmbench" / "records" / "results.py"))
    clean = results.git_commit()
    assert len(clean) == 40 and "+" not in clean
    (repo / "x.py").write_text("2")
    assert results.git_commit() == clean + "+dirty"
