import math

from rich.console import Console

from gemmbench.backend import Shape
from gemmbench.rungs import CPU_LADDER, GPU_LADDER
from gemmbench.report import (footer_lines, format_rate, format_time, ladder_rows, result_columns, result_rows,
                              results_table, sweep_rows, to_csv, to_markdown, tuning_rows)
from gemmbench.results import KernelResult, RunRecord
from gemmbench.verify import Verification


def kr(kid, median, shape=Shape(128, 128, 128), status="pass", reason=None, err=2e-7, device="gpu",
       precision="fp32", **fields):
    name = ("cuBLAS" if precision == "fp32" else f"cuBLAS {precision.upper()}") if kid == 0 else f"rung{kid}"
    return KernelResult(device, kid, name, precision, shape, status, reason,
                        verification=Verification(err, 1e-5, 0) if status != "skip" else None,
                        samples=[median] * 3 if status == "pass" else [], **fields)


def gpu_record(results, command="compare"):
    env = {"gpu": {"name": "Test GPU", "compute_capability": "9.0", "sm_count": 132, "peak_fp32_tflops": 66.9,
                   "max_sm_clock_mhz": 1980.0, "driver_version": "580", "cuda_driver_api": "13.0"},
           "cublas": "13.0.0", "sm_clock_mhz": 1980}
    return RunRecord(command, "gpu", {"seed": 0}, env, results)


def render(table) -> str:
    console = Console(width=200, record=True)
    console.print(table)
    return console.export_text()


def test_format_time():
    assert format_time(2.5e-6) == "2.5 us"
    assert format_time(0.0123) == "12.3 ms"
    assert format_time(None) == "-" and format_time(math.nan) == "-"


def test_result_rows_show_percent_and_status():
    rec = gpu_record([kr(0, 1e-5), kr(10, 2e-5), kr(11, 0, status="fail", reason="wrong result", err=0.5),
                      kr(3, 0, status="skip", reason="needs sm_90")])
    cols = [c.name for c in result_columns(rec)]
    rows = {r[0]: dict(zip(cols, r)) for r in result_rows(rec)}
    assert rows["10"]["% cuBLAS"] == "50.0"
    assert rows["0"]["GFLOP/s"] == f"{2 * 128 ** 3 / 1e-5 / 1e9:,.1f}"
    assert rows["11"]["check"] == "FAIL (wrong result)" and rows["11"]["max rel err"] == "5.0e-01"
    assert rows["3"]["check"] == "SKIP (needs sm_90)"
    text = render(results_table(rec)[0])
    assert "rung10" in text and "FAIL" in text and "% FP32 peak" in text


def test_sweep_rows_kernels_down_sizes_across():
    s1, s2 = Shape(128, 128, 128), Shape(256, 256, 256)
    rec = gpu_record([kr(0, 1e-5, s1), kr(5, 2e-5, s1), kr(0, 4e-5, s2), kr(5, 0, s2, status="fail")], "sizes")
    header, rows, notes = sweep_rows(rec)
    assert header == ["kernel", "precision", "128", "256", "max rel err"]
    assert rows[1][:2] == ["5 rung5", "FP32"] and rows[1][2].endswith("(50%)") and rows[1][3] == "FAIL [1]"
    assert notes == ["[1] FAIL: no reason given (5 rung5 at 256)"]
    assert rows[1][4] == "2.0e-07"  # the worst error over the sweep, every row


def test_tf32_rows_are_labelled_and_compared_with_cublas_tf32():
    rec = gpu_record([kr(0, 1e-5), kr(0, 1e-6, precision="tf32", err=3e-4), kr(14, 2e-6, precision="tf32", err=4e-4),
                      kr(15, 5e-6, precision="3xtf32"), kr(12, 1e-5)])
    cols = [c.name for c in result_columns(rec)]
    rows = {(r[0], r[2]): dict(zip(cols, r)) for r in result_rows(rec)}
    assert rows[("14", "TF32")]["% cuBLAS"] == "50.0"  # of cuBLAS TF32, not of SGEMM
    assert rows[("15", "3XTF32")]["% cuBLAS"] == "200.0"  # FP32-accurate: of SGEMM
    assert rows[("0", "TF32")]["% cuBLAS"] == "1,000.0"  # the TF32 library row against SGEMM
    assert rows[("14", "TF32")]["% FP32 peak"] == "-" and rows[("14", "TF32")]["max rel err"] == "4.0e-04"
    assert any("TF32 rows round inputs" in line for line in footer_lines(rec))


def test_tuned_and_selected_parameters_are_shown():
    rec = gpu_record([kr(0, 1e-5), kr(12, 1e-5, params={"BM": 128}, params_source="tuned"),
                      kr(13, 1e-5, params={"SPLITS": 4}, params_source="selected")])
    rows = {r[0]: r for r in result_rows(rec)}
    assert rows["12"][1] == "rung12 (tuned)" and rows["13"][1] == "rung13"
    footer = "\n".join(footer_lines(rec))
    assert "tuned (gemmbench tune): BM=128" in footer and "chosen for the shape: SPLITS=4" in footer


def test_tuning_rows_rank_verified_candidates():
    rec = gpu_record([kr(0, 1e-5), kr(9, 2e-5, params={"BK": 8}), kr(9, 1e-5, params={"BK": 16}),
                      kr(9, 0, status="fail", reason="wrong result", params={"BK": 32})], "tune")
    header, rows, summary = tuning_rows(rec, top=5)
    assert [r[0] for r in rows] == ["-", "1", "2"] and rows[1][2] == "BK=16" and rows[2][2] == "BK=8"
    assert summary[0].startswith("3 candidates ran: 2 verified and timed, 1 failed")
    assert any("BK=32" in line for line in summary)
    assert rec.best_result(9).params == {"BK": 16}


def test_markdown_and_csv():
    header, rows = ["a", "b"], [["1", "x|y"], ["2", "z"]]
    md = to_markdown(header, rows)
    assert md.splitlines()[0] == "| a | b |" and "x\\|y" in md
    assert to_csv(header, rows).splitlines() == ["a,b", "1,x|y", "2,z"]


def test_ladder_rows_cover_every_rung():
    for specs in (GPU_LADDER, CPU_LADDER):
        header, rows = ladder_rows(specs)
        assert [r[0] for r in rows] == [str(s.id) for s in specs]
        assert all(r[2] for r in rows)  # every rung says what changed


def test_format_rate_keeps_small_numbers_readable():
    assert format_rate(0.412) == "0.412" and format_rate(47.3) == "47.3" and format_rate(51234.5) == "51,234"
