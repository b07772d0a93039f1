"""`gemmbench diff`: verdicts from raw samples with known shifts, exit codes
as a CI gate, rows on one side, the header of what differs."""

import json

import numpy as np
import pytest

from gemmbench import cli
from gemmbench.backend import Shape
from gemmbench.records.diff import NothingCompared, bootstrap_ratio, diff_records, parse_threshold, verdict
from gemmbench.fsutil import write_atomic
from gemmbench.records.results import KernelResult, RunRecord, to_json
from gemmbench.verify import Verification

SHAPE = Shape(512, 512, 512)
GPU = {"name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132, "max_sm_clock_mhz": 1980.0,
       "peak_fp32_tflops": 66.9, "driver_version": "580.159.04", "cuda_driver_api": "13.0", "uuid": "GPU-a"}


def samples(median: float, spread: float, n: int, seed: int) -> list[float]:
    """n times around ``median`` with lognormal noise of relative size ``spread``."""
    rng = np.random.default_rng(seed)
    return list(median * np.exp(rng.normal(0.0, spread, n)))


def result(kid, times, name=None, status="pass", gpu=None, params=None):
    return KernelResult("gpu", kid, name or f"rung{kid}", "fp32", SHAPE, status, params=params or {},
                        params_source="given" if params else "default",
                        verification=Verification(1e-7, 1e-5, 0), samples=times, gpu=gpu)


def record(results, gpu=GPU, clock=1980):
    return RunRecord("compare", "gpu", {"seed": 0}, {"gpu": dict(gpu), "sm_clock_mhz": clock}, results)


# slower_by: the new median time is this fraction longer
SHIFTS = [  # (name, slower_by, noise, samples, threshold, verdict)
    ("no shift", 0.00, 0.005, 100, "3%", "same"),
    ("2% slower within a 3% threshold", 0.02, 0.005, 100, "3%", "same"),
    ("2% slower beyond a 1% threshold", 0.02, 0.005, 100, "1%", "slower"),
    ("10% slower", 0.10, 0.005, 100, "3%", "slower"),
    ("10% faster", -1 / 11, 0.005, 100, "3%", "faster"),
    ("noise only", 0.00, 0.20, 8, "3%", "noisy"),
    ("10% slower hidden in noise", 0.10, 0.30, 6, "3%", "noisy"),
]


@pytest.mark.parametrize("name, slower_by, noise, n, threshold, expected", SHIFTS, ids=[s[0] for s in SHIFTS])
def test_known_shifts_get_the_right_verdict_and_exit_code(capsys, tmp_path, name, slower_by, noise, n,
                                                          threshold, expected):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    write_atomic(old, to_json(record([result(5, samples(1e-3, noise, n, 1))])))
    write_atomic(new, to_json(record([result(5, samples(1e-3 * (1 + slower_by), noise, n, 2))])))
    code = cli.main(["diff", str(old), str(new), "--threshold", threshold, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["rows"][0]["verdict"] == expected
    assert code == data["exit_code"] == (1 if expected == "slower" else 0)
    assert data["rows"][0]["ci_low"] <= data["rows"][0]["change"] + 1 <= data["rows"][0]["ci_high"]


def test_the_table_names_the_verdicts(capsys, tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    write_atomic(old, to_json(record([result(0, samples(1e-3, 0.005, 50, 1)), result(12, samples(2e-3, 0.005, 50, 3))])))
    write_atomic(new, to_json(record([result(0, samples(1e-3, 0.005, 50, 2)), result(12, samples(2.4e-3, 0.005, 50, 4))])))
    code = cli.main(["diff", str(old), str(new)])
    out = capsys.readouterr().out
    assert code == 1
    line12 = next(l for l in out.splitlines() if "rung12" in l)
    line0 = next(l for l in out.splitlines() if "rung0" in l)
    assert "slower" in line12 and "-16.7%" in line12 and "same" in line0
    assert "1 slower, 1 same" in out and "REGRESSION" in out


def test_bootstrap_is_seeded_and_brackets_the_ratio():
    a, b = samples(1.0, 0.05, 40, 1), samples(1.1, 0.05, 40, 2)
    first = bootstrap_ratio(a, b)
    assert first == bootstrap_ratio(a, b)
    ratio, low, high = first
    assert low < ratio < high and ratio == pytest.approx(np.median(a) / np.median(b))
    assert high < 1  # 10% slower with 5% noise and 40 samples is clear


def test_verdict_rules():
    assert verdict(0.90, 0.88, 0.92, 0.03) == "slower"
    assert verdict(0.98, 0.96, 0.995, 0.03) == "noisy"  # significant, but not clearly beyond 3%
    assert verdict(0.96, 0.90, 1.02, 0.03) == "noisy"  # beyond 3%, but not significant
    assert verdict(1.00, 0.99, 1.01, 0.03) == "same"
    assert verdict(1.10, 1.08, 1.12, 0.03) == "faster"


@pytest.mark.parametrize("text, value", [("3%", 0.03), ("3", 0.03), (" 0.5 % ", 0.005), ("0", 0.0)])
def test_threshold_parsing(text, value):
    assert parse_threshold(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["abc", "-1%", "100%", "3%%"])
def test_bad_threshold_is_one_line(capsys, tmp_path, text):
    path = tmp_path / "r.json"
    write_atomic(path, to_json(record([result(0, [1e-3] * 5)])))
    code = cli.main(["diff", str(path), str(path), "--threshold", text])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--threshold" in err


def test_rows_on_one_side_and_environment_differences():
    old = record([result(0, [1e-3] * 5), result(7, [2e-3] * 5)])
    new = record([result(0, [1e-3] * 5), result(9, [2e-3] * 5)],
                 gpu={**GPU, "name": "NVIDIA H100", "driver_version": "590.1", "uuid": "GPU-b"}, clock=1755)
    d = diff_records(old, new, versions=("0.4.0", "0.5.0"))
    assert [r.kernel_id for r in d.only_old] == [7] and [r.kernel_id for r in d.only_new] == [9]
    assert len(d.rows) == 1 and d.rows[0].verdict == "same"
    assert "GPU: NVIDIA H200 -> NVIDIA H100" in d.differences
    assert "driver: 580.159.04 -> 590.1" in d.differences
    assert "SM clock (MHz): 1980 -> 1755" in d.differences and "gemmbench: 0.4.0 -> 0.5.0" in d.differences
    assert not diff_records(old, old).differences


def test_a_kernel_that_fails_now_fails_the_gate():
    old = record([result(3, [1e-3] * 5)])
    new = record([result(3, [], status="fail")])
    d = diff_records(old, new)
    assert d.rows[0].verdict == "failed" and d.exit_code == 1
    # a row skipped on one side beside a compared row: reported, not a regression
    skipped = diff_records(record([result(3, [], status="skip"), result(4, [1e-3] * 5)]),
                           record([result(3, [1e-3] * 5), result(4, [1e-3] * 5)]))
    assert skipped.rows[0].verdict == "skipped" and skipped.exit_code == 0
    # skipped rows alone compare nothing: issue 16 wants that said, not "no regression"
    with pytest.raises(NothingCompared, match="not timed on both sides"):
        diff_records(record([result(3, [], status="skip")]), old)


def test_too_few_samples_is_noisy_not_a_verdict():
    d = diff_records(record([result(1, [1e-3, 1e-3])]), record([result(1, [2e-3, 2e-3])]))
    assert d.rows[0].verdict == "noisy" and d.exit_code == 0


def test_tuning_candidates_pair_by_their_parameters():
    old = record([result(12, [1e-3] * 5, params={"BM": 64}), result(12, [1e-3] * 5, params={"BM": 128})])
    new = record([result(12, [1e-3] * 5, params={"BM": 128}), result(12, [2e-3] * 5, params={"BM": 64})])
    d = diff_records(old, new)
    assert {(r.new.params["BM"], r.verdict) for r in d.rows} == {(64, "slower"), (128, "same")}


def test_a_one_gpu_record_against_each_gpu_of_a_multi_gpu_record():
    old = record([result(0, samples(1e-3, 0.005, 30, 1))])
    new = record([result(0, samples(1e-3, 0.005, 30, 2), gpu=0), result(0, samples(1.2e-3, 0.005, 30, 3), gpu=1)])
    d = diff_records(old, new)
    assert [(r.new.gpu, r.verdict) for r in d.rows] == [(0, "same"), (1, "slower")]
    both = diff_records(new, new)
    assert [(r.old.gpu, r.new.gpu) for r in both.rows] == [(0, 0), (1, 1)]


def test_reference_record_against_itself_is_all_same(capsys):
    from pathlib import Path
    ref = Path(__file__).resolve().parent.parent / "results" / "reference" / "h200-compare-4096.json"
    code = cli.main(["diff", str(ref), str(ref), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and not data["differences"]
    # a row can only be "noisy" against itself when its own spread is wide (the ratio's interval then
    # passes the threshold); every steady row is "same"
    from gemmbench.records.store import load
    spread = {(r.kernel_id, r.name): r.stats.relative_iqr for r in load(ref).record.results if r.stats}
    for row in data["rows"]:
        wide = spread[(row["kernel_id"], row["name"])] > 0.02
        assert row["verdict"] == "same" or (row["verdict"] == "noisy" and wide), row
