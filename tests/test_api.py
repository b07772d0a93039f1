"""The Python API on the CPU: the same rows, verification and timing as the CLI."""

import json
from pathlib import Path

import pytest

from gemmbench import api
from gemmbench.errors import UserError
from gemmbench.records.results import RunRecord

ROOT = Path(__file__).resolve().parent.parent
C_EXAMPLE = ROOT / "examples" / "blocked_sgemm.c"
FAST = dict(warmup=0.0, min_samples=2, max_samples=4, budget=0.0)


def test_run_returns_the_record_with_raw_samples_and_flat_rows(tmp_path):
    record = api.run(kernels=[2, str(C_EXAMPLE)], shapes=[(17, 33, 9), 20], device="cpu", params={"KB": 8},
                     save=True, results_dir=tmp_path, **FAST)
    assert isinstance(record, RunRecord) and record.device == "cpu" and not record.failed
    ids = [(r.kernel_id, r.shape.M) for r in record.results]
    assert ids == [(0, 17), (2, 17), (-1, 17), (0, 20), (2, 20), (-1, 20)]
    assert all(r.status == "pass" and 2 <= len(r.samples) <= 4 and r.verification.passed for r in record.results)
    mine = record.results[2]
    assert mine.params == {"KB": 8} and mine.notes["kernel_file"] == str(C_EXAMPLE)

    rows = api.rows(record)
    assert len(rows) == 6 and rows[2]["name"] == "blocked (example)" and rows[2]["params"] == "KB=8"
    assert all(isinstance(v, (str, int, float, bool, type(None))) for row in rows for v in row.values())
    assert rows[0]["percent_of_baseline"] == pytest.approx(100.0)
    assert rows[2]["median_s"] == mine.stats.median and rows[2]["samples"] == len(mine.samples)
    assert rows[2]["gflops"] == pytest.approx(2 * 17 * 33 * 9 / mine.stats.median / 1e9)
    assert rows[2]["kernel_sha256"] == mine.notes["kernel_sha256"] and rows[1]["kernel_file"] is None

    saved = list(tmp_path.glob("api-cpu-*.json"))
    assert len(saved) == 1 and len(json.loads(saved[0].read_text())["results"]) == 6


def test_a_failing_kernel_is_a_row_not_an_exception(tmp_path):
    wrong = tmp_path / "wrong.c"
    wrong.write_text("void sgemm(int M, int N, int K, float alpha, const float *A, const float *B, float beta,"
                     " float *C) { for (long i = 0; i < (long)M * N; i++) C[i] = 0; }\n")
    record = api.run(kernels=[wrong], shapes=[(8, 8, 8)], device="cpu", **FAST)
    assert record.failed
    assert [r.status for r in record.results] == ["pass", "fail"]
    assert api.rows(record)[1]["reason"] == "wrong result"


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(kernels=[99]), "no CPU rung 99"),
    (dict(kernels=[1.5]), "rung ids (int) and kernel file paths"),
    (dict(shapes=[(1, 2)]), "expected (M, N, K)"),
    (dict(shapes=[(0, 2, 3)]), ">= 1"),
    (dict(shapes=[]), "no shapes"),
    (dict(bogus=1), "unknown option 'bogus'"),
    (dict(kernels=["missing.c"]), "not found"),
])
def test_bad_input_raises_user_error(kwargs, fragment):
    with pytest.raises(UserError, match=None) as caught:
        api.run(device="cpu", **{**FAST, **kwargs})
    assert fragment in str(caught.value)


def test_a_noise_target_from_python_stops_each_row_on_noise_and_says_so():
    """max_noise (percent) as on the command line: a loose 50% target is met
    within the first samples (a median known to +-50%), so each row says it
    stopped on noise, not on time."""
    record = api.run(kernels=[1], shapes=[8], device="cpu", warmup=0.0, max_noise=50, min_time=0.0,
                     noise_timeout=5.0)
    rows = api.rows(record)
    assert [r["stopped"] for r in rows] == ["noise", "noise"]
    assert all(r["median_noise"] <= 0.5 for r in rows)
    assert all(r.notes["max_noise"] == 0.5 and "unsettled" not in r.flags for r in record.results)
    with pytest.raises(UserError, match="--max-noise 0.5 and --budget 1 conflict"):
        api.run(kernels=[1], device="cpu", max_noise=0.5, budget=1.0)
