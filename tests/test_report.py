import math

from rich.console import Console

from gemmbench.backend import Shape
from gemmbench.rungs import CPU_LADDER, GPU_LADDER
from gemmbench.output.report import (footer_lines, format_rate, format_time, ladder_rows, result_columns, result_rows,
                              results_table, sweep_rows, to_csv, to_markdown, tuning_rows)
from gemmbench.records.results import KernelResult, RunRecord
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


def test_rows_at_another_clock_than_their_baseline_are_also_compared_per_cycle():
    clock = lambda mhz: {"notes": {"sm_clock_mhz": mhz}}  # noqa: E731
    rec = gpu_record([kr(0, 1e-5, precision="bf16", **clock(1600.0)), kr(26, 1.1e-5, precision="bf16", **clock(1500.0)),
                      kr(22, 1.2e-5, precision="bf16", **clock(1590.0)), kr(24, 1.2e-5, precision="bf16"),
                      kr(27, 1.1e-5, precision="bf16", flags=["throttled"], **clock(1400.0))])
    footer = footer_lines(rec)
    start = footer.index("Per SM cycle (time x the SM clock it ran at), where a row and its baseline ran at clocks "
                         "2% or more apart:")
    # 1e-5 / 1.1e-5 of the time at 1600 / 1500 of the clock; 22's clock is 0.6% off, 24's unknown: no line
    assert footer[start + 1:start + 3] == [
        "rung 26 at 128x128x128: 97.0% of cuBLAS BF16 per SM cycle, 90.9% in time (1,500 MHz against 1,600)",
        "rung 27 at 128x128x128: (103.9)?% of cuBLAS BF16 per SM cycle, (90.9)?% in time (1,400 MHz against 1,600)"]
    assert not any(line.startswith(("rung 22", "rung 24", "rung 0")) for line in footer)
    assert "temperature" not in footer[start]  # no temperatures read: none mentioned
    assert not any("Per SM cycle" in line for line in footer_lines(gpu_record([kr(0, 1e-5), kr(10, 2e-5)])))
    assert not any("per SM cycle" in line for line in footer_lines(rec, per_cycle=False))  # a sweep's footer


def test_the_per_cycle_lines_give_each_row_s_temperature_where_it_was_read():
    def at(mhz, temps=None):
        return {"notes": {"sm_clock_mhz": mhz, **({"gpu_temp_range_c": temps} if temps else {})}}
    rec = gpu_record([kr(0, 1e-5, precision="bf16", **at(1600.0, [49, 57])),
                      kr(26, 1.1e-5, precision="bf16", **at(1500.0, [58, 63])),
                      kr(27, 1.1e-5, precision="bf16", **at(1500.0, [60, 60])),
                      kr(0, 1e-5, precision="fp16", **at(1600.0)), kr(31, 1.1e-5, precision="fp16", **at(1500.0))])
    footer = footer_lines(rec)
    head = next(i for i, line in enumerate(footer) if line.startswith("Per SM cycle"))
    assert "temperature as its samples began and ended" in footer[head]
    assert footer[head + 1:head + 4] == [
        "rung 26 at 128x128x128: 97.0% of cuBLAS BF16 per SM cycle, 90.9% in time (1,500 MHz at 58-63 °C against "
        "1,600 MHz at 49-57 °C)",
        "rung 27 at 128x128x128: 97.0% of cuBLAS BF16 per SM cycle, 90.9% in time (1,500 MHz at 60 °C against "
        "1,600 MHz at 49-57 °C)",
        "rung 31 at 128x128x128: 97.0% of cuBLAS FP16 per SM cycle, 90.9% in time (1,500 MHz against 1,600)"]


def test_the_per_cycle_figure_is_in_every_csv_row_and_saved_row_that_has_one():
    clock = lambda mhz: {"notes": {"sm_clock_mhz": mhz}}  # noqa: E731
    rec = gpu_record([kr(0, 1e-5, precision="bf16", **clock(1600.0)), kr(26, 1.1e-5, precision="bf16", **clock(1500.0)),
                      kr(22, 1.2e-5, precision="bf16", **clock(1590.0)), kr(24, 1.2e-5, precision="bf16")])
    rows = {r["kernel_id"]: r for r in _csv.DictReader(io.StringIO(to_csv(*result_csv_rows(rec))))}
    # of the row's own baseline (cuBLAS BF16 here), at any clock gap (22's is 0.6%, which the footer leaves
    # out); not for the baseline itself nor a row without a clock
    assert float(rows["26"]["pct_cublas_per_cycle"]) == pytest.approx(100 / 1.1 * 1600 / 1500, rel=1e-4)
    assert float(rows["22"]["pct_cublas_per_cycle"]) == pytest.approx(100 / 1.2 * 1600 / 1590, rel=1e-4)
    assert rows["0"]["pct_cublas_per_cycle"] == rows["24"]["pct_cublas_per_cycle"] == ""
    saved = {r.kernel_id: rec.row_dict(r)["percent_of_baseline_per_cycle"] for r in rec.results}
    assert saved[26] == pytest.approx(100 / 1.1 * 1600 / 1500)
    assert saved[0] is saved[24] is None
    cpu = RunRecord("compare", "cpu", {"seed": 0}, {}, [kr(0, 1e-5, device="cpu"), kr(1, 2e-5, device="cpu")])
    assert "pct_openblas_per_cycle" not in result_csv_rows(cpu)[0]
    assert cpu.row_dict(cpu.results[1])["percent_of_baseline_per_cycle"] is None


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


# ---- conventions: width, CSV, colour, throttling ---------------------------

import csv as _csv
import io
import re

import pytest

from gemmbench import cli
from gemmbench.output.report import Reporter, result_csv_rows, sweep_tables
from gemmbench.output.report import format_number
from gemmbench.records.results import THROTTLED, UNSETTLED, measurement_flags, percent_of_peak
from gemmbench.output.format import flag_lines


def wide_record():
    rows = [kr(0, 2.7e-3, Shape(4096, 4096, 4096)),
            kr(0, 1.1e-3, Shape(4096, 4096, 4096), precision="tf32", err=3e-4),
            kr(12, 2.9e-3, Shape(4096, 4096, 4096), params={"BM": 128, "BN": 128}, params_source="tuned"),
            kr(13, 0, Shape(4096, 4096, 4096), status="fail", reason="wrong result", err=0.5),
            kr(14, 0, Shape(4096, 4096, 4096), status="skip", reason="needs compute capability 9.0",
               precision="tf32"),
            kr(15, 3.1e-3, Shape(4096, 4096, 4096), precision="3xtf32",
               notes={"sm_clock_mhz": 1425.0, "throttled_share": 0.6, "throttle": ["SwPowerCap"]})]
    for r in rows:
        r.flags = measurement_flags(r)
    return gpu_record(rows)


def lines_of(renderables, width) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    for r in renderables:
        console.print(r)
    return console.export_text().splitlines()


@pytest.mark.parametrize("width", [80, 200])
def test_results_table_fits_the_width_and_never_cuts_a_number(width):
    rec = wide_record()
    table, dropped = results_table(rec, Console(width=width))
    text = lines_of([table], width)
    assert all(len(line) <= width for line in text) and "…" not in "\n".join(text)
    shown = " ".join(text)
    for r in rec.results:
        if r.gflops:
            assert format_number(r.gflops) in shown  # e.g. 50,903.7: whole
    assert "FAIL" in shown and "throttled" in shown
    if width == 200:
        assert dropped == []
    else:
        assert dropped and all(c.keep < 8 for c in dropped)  # what goes first is the least needed


def test_sweep_splits_its_sizes_rather_than_cut_numbers():
    shapes = [Shape(s, s, s) for s in range(1000, 13000, 1000)]
    rec = gpu_record([kr(k, 1e-3 * (k + 1), s) for s in shapes for k in (0, 5, 9)], "sizes")
    for width in (80, 200):
        tables = sweep_tables(rec, Console(width=width))
        text = lines_of(tables, width)
        assert all(len(line) <= width for line in text) and "…" not in "\n".join(text)
        header, rows, _ = sweep_rows(rec)
        joined = "\n".join(text)
        assert all(cell in joined for row in rows for cell in row[2:])
    assert len(sweep_tables(rec, Console(width=80))) > len(sweep_tables(rec, Console(width=200)))


def test_sweep_shows_why_a_size_was_skipped():
    rec = gpu_record([kr(0, 1e-5), kr(6, 0, status="skip", reason="one call predicted to take 40 s"),
                      kr(0, 1e-4, Shape(256, 256, 256)),
                      kr(6, 0, Shape(256, 256, 256), status="skip", reason="one call predicted to take 40 s")],
                     "sizes")
    header, rows, notes = sweep_rows(rec)
    assert rows[1][2:4] == ["SKIP [1]", "SKIP [1]"]
    assert notes == ["[1] SKIP: one call predicted to take 40 s (6 rung6 at 128, 6 rung6 at 256)"]


def test_throttled_rows_are_flagged_and_their_peak_uses_the_clock_they_ran_at():
    rec = wide_record()
    throttled = rec.results[-1]
    assert THROTTLED in throttled.flags and rec.results[0].flags == []
    cols = [c.name for c in result_columns(rec)]
    row = dict(zip(cols, result_rows(rec)[-1]))
    at_max = percent_of_peak(throttled, rec.environment)
    assert row["SM MHz"] == "1,425" and "throttled" in row["flags"]
    # a throttled row's figures are marked not for quoting (issue 16): "(92.1)?"
    assert row["% FP32 peak"].startswith("(") and row["% FP32 peak"].endswith(")?")
    assert float(row["% FP32 peak"][1:-2].replace(",", "")) == pytest.approx(at_max * 1980 / 1425, abs=0.06)
    assert not THROTTLED in measurement_flags(kr(0, 1e-3, notes={"throttled_share": 0.01,
                                                                 "throttle": ["SwPowerCap"]}))


def test_csv_is_plain_numbers_one_value_per_column():
    header, rows = result_csv_rows(wide_record())
    parsed = list(_csv.DictReader(io.StringIO(to_csv(header, rows))))
    assert {"time_us", "gflops", "pct_cublas", "pct_fp32_peak", "sm_clock_mhz", "threads", "flags"} <= set(header)
    for row in parsed:
        for col in ("time_us", "q1_us", "q3_us", "spread_pct", "gflops", "pct_cublas", "pct_fp32_peak",
                    "sm_clock_mhz", "max_rel_err", "M", "samples"):
            if row[col]:
                float(row[col])  # no units, no thousands separators, no words
    by_id = {(row["kernel_id"], row["precision"]): row for row in parsed}
    assert float(by_id["0", "fp32"]["time_us"]) == pytest.approx(2700.0)
    assert by_id["15", "3xtf32"]["flags"] == "throttled"
    assert by_id["13", "fp32"]["status"] == "fail" and by_id["13", "fp32"]["gflops"] == ""


FAST = ["--warmup", "0", "--min-samples", "1", "--max-samples", "2", "--budget", "0"]


def test_cli_csv_reads_as_numbers(capsys):
    code = cli.main(["compare", "-i", "2", "--device", "cpu", "-m", "9", "-n", "7", "-k", "5", *FAST,
                     "--no-save", "--format", "csv"])
    out, err = capsys.readouterr()
    rows = list(_csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 2
    assert all(float(r["gflops"]) > 0 and float(r["time_us"]) > 0 and float(r["threads"]) == 1 for r in rows)
    assert float(rows[1]["pct_openblas"]) > 0


def test_piped_output_honours_columns_without_trailing_spaces_or_stray_lines(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code = cli.main(["compare", "--all", "--device", "cpu", "-m", "9", "-n", "7", "-k", "5", *FAST, "--no-save"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""  # no progress bar residue (not a terminal), nothing saved
    table = out.split("\n\n")[0].splitlines()
    assert all(len(line) <= 80 for line in out.splitlines() if "━" in line or line.startswith("  "))
    assert not any(line != line.rstrip() for line in out.splitlines())
    footer = [line for line in out.splitlines() if line.startswith("Timed with")]
    assert len(footer) == 1 and len(footer[0]) > 200  # a long line is one line, not hard-wrapped
    assert "multithreaded" in out and table


@pytest.mark.parametrize("no_color", ["1", None])
def test_no_color_means_no_escape_codes_at_all(capsys, monkeypatch, no_color):
    monkeypatch.setenv("FORCE_COLOR", "1")  # as a terminal would get
    if no_color:
        monkeypatch.setenv("NO_COLOR", no_color)
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    rec = wide_record()
    Reporter().show_results(rec)
    out, _ = capsys.readouterr()
    assert ("\x1b[" in out) is (no_color is None)  # bold and dim are escape codes too
    assert re.search(r"50,9\d\d\.\d", out)


def test_tuning_table_fits_80_columns_and_shows_flags(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    rows = [kr(0, 1e-5), kr(9, 2e-5, params={"BM": 128, "BN": 64, "BK": 8, "TM": 8, "TN": 8}),
            kr(9, 1e-5, params={"BM": 64, "BN": 128, "BK": 16, "TM": 4, "TN": 8})]
    rows[1].flags = ["noisy", "disturbed"]
    Reporter().show_tuning(gpu_record(rows, "tune"), top=5)
    out, _ = capsys.readouterr()
    table = [line for line in out.splitlines() if "━" in line or line.startswith("  ")]
    assert table and all(len(line) <= 80 for line in table) and "…" not in out
    assert "disturbed" in out and "209.7" in out and "100.0" in out


def test_sizes_csv_is_one_row_per_kernel_and_size(capsys):
    code = cli.main(["sizes", "--sweep", "4,8,12", "-i", "1", "--device", "cpu", *FAST, "--no-save",
                     "--format", "csv"])
    out, _ = capsys.readouterr()
    rows = list(_csv.DictReader(io.StringIO(out)))
    assert code == 0 and [(r["kernel_id"], r["M"]) for r in rows] == [
        (k, m) for m in ("4", "8", "12") for k in ("0", "1")]
    assert all(float(r["gflops"]) > 0 for r in rows)


def test_unsettled_rows_are_flagged_in_every_format_and_the_footer_counts_the_stops():
    target = {"max_noise": 0.005}
    rows = [kr(0, 1e-3, notes={"stopped": "noise", "median_noise": 0.002, **target}),
            kr(1, 2e-3, notes={"stopped": "timeout", "median_noise": 0.02, **target}),
            kr(2, 3e-3, notes={"stopped": "samples", "median_noise": 0.004, **target})]
    for r in rows:
        r.flags = measurement_flags(r)
    assert [r.flags for r in rows] == [[], ["unsettled"], []]  # reached the target at the cap: settled
    rec = gpu_record(rows)
    cols = [c.name for c in result_columns(rec)]
    table = dict(zip(cols, result_rows(rec)[1]))
    assert table["flags"] == "unsettled" and table["GFLOP/s"].endswith(")?")
    assert "unsettled" in to_markdown(cols, result_rows(rec))
    header, csv_rows = result_csv_rows(rec)
    assert dict(zip(header, csv_rows[1]))["flags"] == "unsettled"
    footer = footer_lines(rec)
    assert any("1 on noise, 1 on samples, 1 on timeout of 3 timed rows; 1 short of it (unsettled)" in line
               and "+-0.5%" in line for line in footer)
    assert any("unsettled:" in line for line in flag_lines(rec))
    assert not any("Sampling stopped" in line for line in footer_lines(gpu_record([kr(0, 1e-3)])))


def test_budget_rows_are_never_unsettled():
    row = kr(1, 1e-3, notes={"stopped": "budget", "median_noise": 0.3})
    assert UNSETTLED not in measurement_flags(row)
