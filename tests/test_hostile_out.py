"""Issue 16, the output classes: one text path, flagged figures that look
unquotable everywhere, diffs that compare nothing, and 80-column tables.

Every string of a record (and a kernel file's header) is data: it must print
as typed (markup literally, no emoji), with control and format characters
escaped, in every format; no escape codes at all reach a pipe. Flagged rows
are marked in every view. A diff that compares nothing is exit 2 and one
line. At 80 columns names and reasons are cut, numbers never.
"""

from __future__ import annotations

import copy
import csv
import io
import re
from pathlib import Path

import pytest

from gemmbench import cli
from gemmbench.backend import Shape
from gemmbench.output.format import format_number, format_rate
from gemmbench.output.report import Reporter
from gemmbench.output.runrows import distinct_labels
from gemmbench.output.runs import show_diff, show_record, show_side_by_side
from gemmbench.output.text import make_console, markdown_cell, printable
from gemmbench.records.diff import DuplicateRows, NothingCompared, diff_records
from gemmbench.records.results import DISTURBED, KernelResult, RunRecord, to_json
from gemmbench.verify import Verification

ROOT = Path(__file__).resolve().parent.parent
C_EXAMPLE = ROOT / "examples" / "blocked_sgemm.c"
FAST = ["--warmup", "0", "--min-samples", "1", "--max-samples", "2", "--budget", "0"]

MARKUP = "[blink]boo[/blink][link=http://e.x]x[/link]"  # no spaces: a table may wrap there
# what may never reach the output raw: ESC (CSI, OSC 8 hyperlinks), BEL, C1 CSI and NEL,
# bidi overrides and isolates, a carriage return
RAW_FORBIDDEN = ["\x1b", "\x07", "\x9b", "\x85", "\u202e", "\u2066", "\r"]
# under a table's cell limit (100 characters) once escaped, so a table shows it whole
HOSTILE = MARKUP + " \x1b[2J\x1b]8;;\x07\x9b\x85\u202e\u2066 :smile:\r"

GPU_ENV = {"gpu": {"name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132, "max_sm_clock_mhz": 1980.0,
                   "peak_fp32_tflops": 66.9, "driver_version": "580", "cuda_driver_api": "13.0"},
           "cublas": "13.0.0", "sm_clock_mhz": 1980}
CPU_ENV = {"cpu": {"cpu": "AMD EPYC", "cores": 2, "simd": "avx2", "compiler": "cc 12",
                   "blas": [{"internal_api": "openblas", "version": "0.3", "architecture": "Haswell"}]}}


def kr(kid, median, *, name=None, device="gpu", shape=Shape(128, 128, 128), status="pass", reason=None,
       threads=None, flags=(), n=5, **fields):
    name = name or ("cuBLAS" if kid == 0 and device == "gpu" else "OpenBLAS" if kid == 0 else f"rung{kid}")
    return KernelResult(device, kid, name, "fp32", shape, status, reason, threads=threads,
                        verification=Verification(2e-7, 1e-5, 0) if status != "skip" else None,
                        samples=[median * (1 + 0.001 * i) for i in range(n)] if status == "pass" else [],
                        flags=list(flags), **fields)


def gpu_record(results, command="compare", env=None, **fields):
    return RunRecord(command, "gpu", {"seed": 0, "top": 5}, copy.deepcopy(env or GPU_ENV), results, **fields)


def cpu_record(results, command="compare"):
    return RunRecord(command, "cpu", {"seed": 0}, copy.deepcopy(CPU_ENV), results)


def save(tmp_path: Path, name: str, record: RunRecord) -> Path:
    path = tmp_path / name
    path.write_text(to_json(record))
    return path


def render(capsys, fmt: str, draw) -> str:
    """What ``draw(reporter)`` prints on stdout and stderr, through the real consoles."""
    draw(Reporter(fmt))
    out, err = capsys.readouterr()
    return out + err


def assert_no_raw_controls(text: str) -> None:
    for char in RAW_FORBIDDEN:
        assert char not in text, (repr(char), text[:2000])
    assert "😄" not in text  # :smile: stays words


def assert_literal(text: str, fmt: str) -> None:
    """The hostile string shows as typed: its markup literally, its controls as escapes."""
    if fmt == "markdown":
        assert markdown_cell("[blink]boo") in text
        assert "x1b\\[2J" in text and "\\\\u202e" in text
    else:
        assert MARKUP in text
        assert "\\x1b[2J" in text and "\\u202e" in text and "\\r" in text


@pytest.fixture(autouse=True)
def plain_stdout(monkeypatch):
    """A pipe as CI has it: no FORCE_COLOR, no NO_COLOR, a wide COLUMNS."""
    for name in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("TERM", "xterm-256color")


# --------------------------------------------------------------------------
# one text path: every string field of a record, in every format
# --------------------------------------------------------------------------

def _name(r):
    r.results[1].name = HOSTILE


def _fail_reason(r):
    r.results[1].status, r.results[1].reason, r.results[1].samples = "fail", HOSTILE, []


def _skip_reason(r):
    r.results[1].status, r.results[1].reason, r.results[1].samples = "skip", HOSTILE, []
    r.results[1].verification = None


def _tuned_params(r):
    r.results[1].params, r.results[1].params_source = {"BM": HOSTILE}, "tuned"


def _gpu_name(r):
    r.environment["gpu"]["name"] = HOSTILE


def _driver(r):
    r.environment["gpu"]["driver_version"] = HOSTILE


def _cublas(r):
    r.environment["cublas"] = HOSTILE


def _env_note(r):
    r.environment["notes"] = [HOSTILE]


def _cpu_name(r):
    r.environment["cpu"] = {"cpu": HOSTILE, "cores": 2, "simd": HOSTILE, "compiler": HOSTILE, "blas": []}


def _incomplete(r):
    r.complete, r.incomplete_reason = False, HOSTILE


def _unknown_flag(r):
    r.results[1].flags = [HOSTILE]


def _command(r):
    r.command = HOSTILE


# (field, how to plant it, the formats that print that field)
FIELDS = [("name", _name, "table markdown csv"), ("fail reason", _fail_reason, "table markdown csv"),
          ("skip reason", _skip_reason, "table markdown csv"), ("tuned params", _tuned_params, "table markdown csv"),
          ("gpu name", _gpu_name, "table markdown"), ("driver", _driver, "table markdown"),
          ("cublas", _cublas, "table markdown"), ("environment note", _env_note, "table markdown"),
          ("cpu facts", _cpu_name, "table markdown"), ("incomplete reason", _incomplete, "table markdown"),
          ("unknown flag", _unknown_flag, "table markdown csv"), ("command", _command, "table")]


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
@pytest.mark.parametrize("field, plant, shown", FIELDS, ids=[f[0] for f in FIELDS])
def test_every_string_of_a_record_is_text_in_every_format(capsys, fmt, field, plant, shown):
    record = gpu_record([kr(0, 1e-5), kr(12, 2e-5)])
    plant(record)
    text = render(capsys, fmt, lambda rep: show_record(rep, record))
    assert_no_raw_controls(text)
    if fmt in shown.split():
        assert_literal(text, fmt)


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_show_command_reads_a_hostile_record_as_text(capsys, tmp_path, monkeypatch, fmt):
    monkeypatch.setenv("COLUMNS", "400")  # room for the name and the reason whole
    record = gpu_record([kr(0, 1e-5), kr(12, 2e-5, name=HOSTILE), kr(13, 0, status="fail", reason=HOSTILE)])
    path = save(tmp_path, "hostile.json", record)
    code = cli.main(["show", str(path), "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_no_raw_controls(out + err)
    assert_literal(out, fmt)


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_diff_of_hostile_records_is_text(capsys, tmp_path, fmt):
    old = save(tmp_path, "old.json", gpu_record([kr(0, 1e-5), kr(12, 2e-5, name=HOSTILE)]))
    new = save(tmp_path, "new.json", gpu_record([kr(0, 1e-5), kr(12, 2e-5, name=HOSTILE)], env={
        **GPU_ENV, "gpu": {**GPU_ENV["gpu"], "name": HOSTILE}}))
    code = cli.main(["diff", str(old), str(new), "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_no_raw_controls(out + err)
    assert_literal(out, fmt)


def test_a_path_with_control_characters_is_escaped_in_the_diff_header(capsys, tmp_path):
    old = save(tmp_path, "old\x1b[2J\u202e.json", gpu_record([kr(0, 1e-5)]))
    new = save(tmp_path, "new.json", gpu_record([kr(0, 1e-5)]))
    code = cli.main(["diff", str(old), str(new)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_no_raw_controls(out + err)
    assert "old\\x1b[2J\\u202e.json" in out


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_several_records_side_by_side_are_text(capsys, fmt):
    a = gpu_record([kr(0, 1e-5), kr(12, 2e-5, name=HOSTILE)])
    b = gpu_record([kr(0, 1e-5), kr(12, 3e-5, name=HOSTILE)])
    text = render(capsys, fmt, lambda rep: show_side_by_side(rep, [a, b], [HOSTILE, "plain"]))
    assert_no_raw_controls(text)
    assert_literal(text, fmt)


@pytest.mark.parametrize("command", ["sizes", "tune"])
def test_sizes_and_tune_views_are_text(capsys, command):
    results = [kr(0, 1e-5), kr(12, 2e-5, name=HOSTILE, params={"BM": HOSTILE}, params_source="given"),
               kr(12, 0, name=HOSTILE, status="fail", reason=HOSTILE, params={"BM": 1}, params_source="given")]
    record = gpu_record(results, command)
    text = render(capsys, "table", lambda rep: show_record(rep, record))
    assert_no_raw_controls(text)
    assert_literal(text, "table")


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_a_shape_set_tune_view_is_text(capsys, fmt):
    shape = Shape(128, 128, 128)
    results = [kr(0, 1e-5, shape=shape), kr(12, 2e-5, name=HOSTILE, params={"BM": HOSTILE}, params_source="given"),
               kr(12, 0, status="fail", reason=HOSTILE, params={"BM": 1}, params_source="given")]
    record = gpu_record(results, "tune")
    record.options["shapes"] = [{"M": 128, "N": 128, "K": 128, "name": HOSTILE, "group": HOSTILE}]
    text = render(capsys, fmt, lambda rep: show_record(rep, record))
    assert_no_raw_controls(text)
    assert_literal(text, fmt)
    assert "1/2" in text and "1 failed verification" in text


def test_the_per_gpu_summary_is_text(capsys):
    env = {"gpus": {"0": {**copy.deepcopy(GPU_ENV), "gpu": {**GPU_ENV["gpu"], "name": HOSTILE, "pci_bus_id": HOSTILE},
                          "after": {"throttle": [HOSTILE]}},
                    "1": {"error": HOSTILE}}}
    results = [kr(0, 1e-5, gpu=0), kr(12, 2e-5, gpu=0, name=HOSTILE)]
    record = RunRecord("compare", "gpu", {"seed": 0}, env, results)
    text = render(capsys, "table", lambda rep: show_record(rep, record))
    assert_no_raw_controls(text)
    assert "[blink]boo" in text


def test_notes_and_alerts_are_text(capsys):
    def draw(rep):
        rep.note(HOSTILE)
        rep.alert(HOSTILE)
    text = render(capsys, "table", draw)
    assert_no_raw_controls(text)
    assert text.count("[blink]boo") == 2


def test_instrument_tables_are_text(capsys):
    from gemmbench.inspect.report import note, print_table
    print_table(HOSTILE, ["kernel", "regs"], [[HOSTILE, "128"]], [HOSTILE])
    note(HOSTILE)
    out, err = capsys.readouterr()
    assert_no_raw_controls(out + err)
    assert "[blink]boo" in out and "128" in out


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_a_kernel_files_header_name_is_text(capsys, tmp_path, fmt):
    body = C_EXAMPLE.read_text()
    # the header's own rules (helper io) split lines at \r and \x85: the rest of the string goes in
    name = HOSTILE.replace("\r", "").replace("\x85", "")
    header = (f"/* gemmbench kernel\n * name:        {name}\n"
              f" * summary:     [blink]summary[/blink]\n * params:      KB=4\n * threads:     1\n */\n")
    path = tmp_path / "hostile.c"
    path.write_text(header + body[body.index("void sgemm"):])
    code = cli.main(["compare", "--device", "cpu", "--kernel-file", str(path), "-m", "9", "-n", "7", "-k", "5",
                     *FAST, "--no-save", "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_no_raw_controls(out + err)
    expected = markdown_cell("[blink]boo") if fmt == "markdown" else MARKUP
    assert expected in out


# --------------------------------------------------------------------------
# consoles: no escape codes in a pipe, none with NO_COLOR or TERM=dumb
# --------------------------------------------------------------------------

@pytest.mark.parametrize("env", [{}, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, {"TERM": "dumb", "FORCE_COLOR": "1"}],
                         ids=["pipe", "no-color", "dumb-terminal"])
def test_no_escape_codes_at_all(capsys, monkeypatch, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    record = gpu_record([kr(0, 1e-5), kr(12, 2e-5, name=HOSTILE, flags=[DISTURBED]),
                         kr(13, 0, status="fail", reason="wrong result")])
    text = render(capsys, "table", lambda rep: show_record(rep, record))
    assert "\x1b" not in text and "rung13" in text


def test_on_a_terminal_only_gemmbench_styles_are_escape_codes(capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich takes the pipe for a terminal, as a real one
    record = gpu_record([kr(0, 1e-5), kr(12, 2e-5, name=HOSTILE), kr(13, 0, status="fail", reason=HOSTILE)])
    text = render(capsys, "table", lambda rep: show_record(rep, record))
    assert "\x1b[" in text  # bold header lines, red FAIL rows
    assert "\x1b[2J" not in text and "\x1b]8;" not in text and "\x1b[5m" not in text  # no clear, link, blink
    assert "[blink]boo" in text


def test_consoles_parse_no_markup_or_emoji():
    console = make_console()
    assert console._markup is False and console._emoji is False and console._highlight is False


CHARACTERS = {"ESC": "\x1b", "BEL": "\x07", "backspace": "\x08", "CR": "\r", "LF": "\n", "tab": "\t", "DEL": "\x7f",
              "C1 CSI": "\x9b", "NEL": "\x85", "RLO": "\u202e", "LRI": "\u2066", "zero-width space": "\u200b",
              "line separator": "\u2028", "BOM": "\ufeff", "lone surrogate": "\udcff"}


@pytest.mark.parametrize("char", CHARACTERS.values(), ids=CHARACTERS.keys())
def test_printable_escapes_every_control_and_format_character(char):
    text = printable(f"a{char}b")
    assert text.startswith("a\\") and text.endswith("b") and char not in text
    assert text.isprintable() and printable(text) == text


# --------------------------------------------------------------------------
# flagged figures look unquotable in every format
# --------------------------------------------------------------------------

def disturbed_cpu_record(command="compare"):
    """The issue's case: under load OpenBLAS [2T] and rung 6 both read 40 ms, both flagged disturbed."""
    shape = Shape(512, 512, 512)
    return cpu_record([kr(0, 0.04, device="cpu", threads=2, shape=shape, flags=[DISTURBED], n=3),
                       kr(6, 0.04, device="cpu", threads=2, shape=shape, name="rung6", flags=[DISTURBED], n=3)],
                      command)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_a_disturbed_row_reads_as_not_for_quoting(capsys, fmt):
    text = render(capsys, fmt, lambda rep: show_record(rep, disturbed_cpu_record()))
    line = next(l for l in text.splitlines() if "rung6" in l)
    assert "(100.0)?" in line and "(40 ms)?" in line and "disturbed" in line
    assert not re.search(r"(?<![(\d,.])100\.0(?!\)\?)", line)  # never a bare 100.0
    assert "not for quoting" in text


def test_a_disturbed_row_is_flagged_in_csv():
    from gemmbench.output.rows import result_csv_rows
    header, rows = result_csv_rows(disturbed_cpu_record())
    flags = {row[header.index("kernel")]: row[header.index("flags")] for row in rows}
    assert flags == {"OpenBLAS": "disturbed", "rung6": "disturbed;baseline:disturbed"}


def test_a_percent_against_a_flagged_baseline_is_marked():
    from gemmbench.output.rows import result_columns, result_rows
    record = gpu_record([kr(0, 1e-5, flags=["noisy"]), kr(12, 2e-5)])
    columns = [c.name for c in result_columns(record)]
    row = dict(zip(columns, result_rows(record)[1]))
    assert row["% cuBLAS"] == "(50.0)?" and not row["GFLOP/s"].startswith("(")


def test_sizes_cells_of_flagged_rows_are_marked(capsys):
    record = disturbed_cpu_record("sizes")
    text = render(capsys, "table", lambda rep: show_record(rep, record))
    assert re.search(r"\(\S+ \(100%\)\)\? D", text) and "D = disturbed" in text


def test_tune_rows_that_are_flagged_are_marked(capsys):
    record = gpu_record([kr(0, 1e-5), kr(9, 2e-5, params={"BK": 8}, flags=["throttled"])], "tune")
    text = render(capsys, "table", lambda rep: show_record(rep, record))
    assert "(50.0)?" in text and "throttled" in text


def flagged_pair():
    old = disturbed_cpu_record()
    new = disturbed_cpu_record()
    old.results = [kr(r.kernel_id, 0.04, device="cpu", threads=2, shape=r.shape, name=r.name, n=5)
                   for r in old.results]
    new.results = [kr(r.kernel_id, 0.04, device="cpu", threads=2, shape=r.shape, name=r.name, n=5,
                      flags=[DISTURBED]) for r in new.results]
    return old, new


def test_the_diff_table_shows_each_rows_flags(capsys):
    old, new = flagged_pair()
    text = render(capsys, "table", lambda rep: show_diff(rep, diff_records(old, new), "a", "b"))
    line = next(l for l in text.splitlines() if "rung6" in l)
    assert line.endswith("new:D") and "(6.7)?" in line and "(+0.0%)?" in line
    assert "D = disturbed" in text and "not for quoting" in text


def test_the_diff_csv_and_json_carry_both_sides_flags(capsys):
    from gemmbench.output.runrows import diff_csv
    old, new = flagged_pair()
    diff = diff_records(old, new)
    header, rows = diff_csv(diff)
    parsed = list(csv.DictReader(io.StringIO("\n".join(",".join(r) for r in [header, *rows]))))
    assert {(r["old_flags"], r["new_flags"]) for r in parsed} == {("", "disturbed")}
    assert {tuple(r["new_flags"]) for r in diff.to_dict()["rows"]} == {("disturbed",)}


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_side_by_side_marks_flagged_figures(capsys, fmt):
    old, new = flagged_pair()
    text = render(capsys, fmt, lambda rep: show_side_by_side(rep, [old, new], ["one", "two"]))
    if fmt == "table":
        assert re.search(r"\([\d,.]+\)\? D", text) and "D = disturbed" in text
    else:
        header = next(csv.reader(io.StringIO(text)))
        assert "two flags" in header and "disturbed" in text


def test_the_per_gpu_summary_marks_flagged_rows(capsys):
    env = {"gpus": {"0": copy.deepcopy(GPU_ENV), "1": copy.deepcopy(GPU_ENV)}}
    results = [kr(0, 1e-5, gpu=0), kr(12, 2e-5, gpu=0, flags=["throttled"]), kr(0, 1e-5, gpu=1),
               kr(12, 2e-5, gpu=1)]
    record = RunRecord("compare", "gpu", {"seed": 0}, env, results)
    text = render(capsys, "table", lambda rep: show_record(rep, record))
    summary = text[text.index("per GPU"):]
    assert re.search(r"\([\d,.]+\)\? T", summary) and "T = throttled" in summary


# --------------------------------------------------------------------------
# a diff that compares nothing is exit 2 and one line
# --------------------------------------------------------------------------

ONE = Shape(128, 128, 128)
OTHER = Shape(256, 256, 256)
NOTHING = [
    ("empty old", lambda: gpu_record([]), lambda: gpu_record([kr(0, 1e-5)]), "the old record holds no rows"),
    ("empty new", lambda: gpu_record([kr(0, 1e-5)]), lambda: gpu_record([]), "the new record holds no rows"),
    ("other shape", lambda: gpu_record([kr(0, 1e-5)]), lambda: gpu_record([kr(0, 1e-5, shape=OTHER)]),
     "shapes: 128x128x128 -> 256x256x256"),
    ("sizes against run", lambda: gpu_record([kr(0, 1e-5), kr(3, 1e-5)], "run"),
     lambda: gpu_record([kr(0, 1e-5, shape=OTHER)], "sizes"), "command: run -> sizes"),
    ("cpu against gpu", lambda: gpu_record([kr(0, 1e-5)]), lambda: cpu_record([kr(0, 1e-5, device="cpu", threads=1)]),
     "device: gpu -> cpu"),
    ("other kernels", lambda: gpu_record([kr(5, 1e-5)]), lambda: gpu_record([kr(6, 1e-5)]),
     "kernels: gpu:5 rung5 -> gpu:6 rung6"),
    ("skipped on one side", lambda: gpu_record([kr(5, 0, status="skip", reason="needs sm_90")]),
     lambda: gpu_record([kr(5, 1e-5)]), "not timed on both sides"),
]


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
@pytest.mark.parametrize("case, old, new, why", NOTHING, ids=[c[0] for c in NOTHING])
def test_a_diff_that_compares_nothing_is_exit_2_and_one_line(capsys, tmp_path, case, old, new, why, as_json):
    a, b = save(tmp_path, "old.json", old()), save(tmp_path, "new.json", new())
    code = cli.main(["diff", str(a), str(b), *(["--json"] if as_json else [])])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("gemmbench: error: ") and why in err, err
    assert "nothing compared: " in err
    assert "Traceback" not in err


@pytest.mark.parametrize("side", ["old", "new"])
def test_duplicate_rows_in_a_record_are_refused_by_name(side):
    plain, doubled = gpu_record([kr(0, 1e-5), kr(5, 1e-5)]), gpu_record([kr(0, 1e-5), kr(5, 1e-5), kr(5, 2e-5)])
    old, new = (doubled, plain) if side == "old" else (plain, doubled)
    with pytest.raises(DuplicateRows, match=rf"the {side} record holds the same row more than once: "
                                            r"gpu:5 rung5 FP32 128x128x128 \(2 times\)"):
        diff_records(old, new)


def test_the_same_row_on_two_gpus_is_not_a_duplicate():
    record = gpu_record([kr(0, 1e-5, gpu=0), kr(0, 1e-5, gpu=1)])
    assert len(diff_records(record, record).rows) == 2


def test_nothing_compared_carries_what_was_found():
    with pytest.raises(NothingCompared) as caught:
        diff_records(gpu_record([kr(5, 1e-5)]), gpu_record([kr(6, 1e-5)]))
    assert [r.kernel_id for r in caught.value.diff.only_old] == [5]
    assert [r.kernel_id for r in caught.value.diff.only_new] == [6]


# --------------------------------------------------------------------------
# 80 columns: names and reasons cut, numbers never
# --------------------------------------------------------------------------

LONG_NAME = "a_kernel_name_that_goes_on_" * 8
LONG_REASON = "compile error: " + "the_compiler_said_something_long " * 12


def assert_fits_and_numbers_whole(text: str, numbers: list[str], width: int = 80):
    for line in text.splitlines():
        if "━" in line or line.startswith("  "):  # table lines (prose lines may run long: they wrap in a terminal)
            assert len(line) <= width, line
    assert not re.search(r"(^|\s)[-+(]?[\d,.]+…", text, re.M), "a number was cut"
    shown = " ".join(text.split())
    for number in numbers:
        assert number in shown, number


def narrow(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")


def test_results_at_80_columns_cut_a_long_name_and_reason_not_a_number(capsys, monkeypatch):
    narrow(monkeypatch)
    results = [kr(0, 1e-5), kr(12, 2.5e-5, name=LONG_NAME), kr(13, 3.3e-5), kr(14, 0, status="fail", reason=LONG_REASON),
               kr(15, 0, status="skip", reason=LONG_REASON, name=LONG_NAME)]
    record = gpu_record(results)
    text = render(capsys, "table", lambda rep: show_record(rep, record))
    numbers = [format_number(r.gflops) for r in results if r.gflops] + \
        [format_number(record.percent_of_baseline(r)) for r in results if r.gflops]
    assert_fits_and_numbers_whole(text, numbers)
    assert "…" in text and LONG_NAME not in " ".join(text.split())  # the name is cut


def test_diff_at_80_columns_keeps_every_figure(capsys, monkeypatch):
    narrow(monkeypatch)
    old = gpu_record([kr(0, 1e-4, shape=Shape(4096, 4096, 4096)),
                      kr(12, 1.2e-4, name=LONG_NAME, shape=Shape(4096, 4096, 4096))])
    new = gpu_record([kr(0, 1e-4, shape=Shape(4096, 4096, 4096)),
                      kr(12, 1.5e-4, name=LONG_NAME, shape=Shape(4096, 4096, 4096))])
    diff = diff_records(old, new)
    text = render(capsys, "table", lambda rep: show_diff(rep, diff, "a " * 30, "b"))
    numbers = [format_number(r.old.gflops) for r in diff.rows] + [format_number(r.new.gflops) for r in diff.rows]
    numbers += [f"{100 * r.change:+.1f}%" for r in diff.rows]
    assert_fits_and_numbers_whole(text, numbers)
    assert "slower" in text


def test_diff_of_many_shapes_at_80_columns_never_cuts_a_number(capsys, monkeypatch):
    narrow(monkeypatch)
    shapes = [Shape(s, s + 1, s + 2) for s in (1000, 2000, 4000)]
    old = gpu_record([kr(k, 1e-4 * (k + 1), shape=s, name=LONG_NAME if k else None) for s in shapes for k in (0, 7)])
    new = gpu_record([kr(k, 1.1e-4 * (k + 1), shape=s, name=LONG_NAME if k else None) for s in shapes
                      for k in (0, 7)])
    diff = diff_records(old, new)
    text = render(capsys, "table", lambda rep: show_diff(rep, diff, "a", "b"))
    assert_fits_and_numbers_whole(text, [format_number(r.new.gflops) for r in diff.rows])


def test_several_records_at_80_columns_keep_every_figure(capsys, monkeypatch):
    narrow(monkeypatch)
    records = [gpu_record([kr(0, 1e-5 * f), kr(12, 2e-5 * f, name=LONG_NAME), kr(13, 0, status="fail")])
               for f in (1.0, 1.1, 1.3, 0.7)]
    text = render(capsys, "table", lambda rep: show_side_by_side(rep, records, ["same label"] * 4))
    numbers = [format_number(r.gflops) for rec in records for r in rec.results if r.gflops]
    assert_fits_and_numbers_whole(text, numbers)
    assert text.count("(1/") >= 1  # split into several tables rather than cut


def test_sizes_at_80_columns_with_a_long_name(capsys, monkeypatch):
    narrow(monkeypatch)
    shapes = [Shape(s, s, s) for s in range(1000, 9000, 1000)]
    record = gpu_record([kr(k, 1e-3 * (k + 1), shape=s, name=LONG_NAME if k else None) for s in shapes
                         for k in (0, 5)], "sizes")
    text = render(capsys, "table", lambda rep: show_record(rep, record))
    assert_fits_and_numbers_whole(text, [format_rate(r.gflops) for r in record.results])


def test_list_at_80_columns_breaks_no_word(capsys, monkeypatch):
    from gemmbench.rungs import GPU_LADDER
    narrow(monkeypatch)
    text = render(capsys, "table", lambda rep: rep.show_ladder(GPU_LADDER, "gpu"))
    tokens = set(text.split())
    for spec in GPU_LADDER:
        for word in spec.summary.split():
            if len(word) <= 14:  # the column's narrowest; longer words may be cut, with an ellipsis
                assert word in tokens, (spec.id, word)
    assert_fits_and_numbers_whole(text, [])


def test_records_of_the_same_minute_get_distinct_labels():
    a = gpu_record([kr(0, 1e-5)], created="2026-11-23T10:00:05+00:00")
    b = gpu_record([kr(0, 1e-5)], created="2026-11-23T10:00:41+00:00")
    c = gpu_record([kr(0, 1e-5)], created="2026-11-23T10:00:41+00:00")
    labels = distinct_labels([a, b, c], ["H200 2026-11-23 10:00"] * 3, [Path("x/run1.json"), Path("y/run2.json"),
                                                                        Path("z/run3.json")])
    assert labels == ["H200 2026-11-23 10:00:05", "H200 2026-11-23 10:00:41 run2", "H200 2026-11-23 10:00:41 run3"]
    assert len(set(distinct_labels([b, c], ["x", "x"]))) == 2


def test_show_of_two_records_of_the_same_minute_tells_them_apart(capsys, tmp_path):
    a = save(tmp_path, "a.json", gpu_record([kr(0, 1e-5)], created="2026-11-23T10:00:05+00:00"))
    b = save(tmp_path, "b.json", gpu_record([kr(0, 2e-5)], created="2026-11-23T10:00:41+00:00"))
    code = cli.main(["show", str(a), str(b), "--format", "csv"])
    out, err = capsys.readouterr()
    header = next(csv.reader(io.StringIO(out)))
    assert code == 0 and len(set(header)) == len(header), header
    assert "2026-11-23 10:00:05" in header[3] and "2026-11-23 10:00:41" in header[6]


@pytest.mark.parametrize("name", ['=HYPERLINK("http://x","y")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)"])
def test_a_name_a_spreadsheet_would_run_is_csv_text(capsys, tmp_path, name):
    path = save(tmp_path, "formula.json", gpu_record([kr(0, 1e-5), kr(12, 2e-5, name=name)]))
    code = cli.main(["show", str(path), "--format", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    cell = next(cell for row in rows for cell in row if name.strip()[:3] in cell)
    assert cell.startswith("'"), cell
    # the numbers stay numbers: negative ones and exponents are not quoted
    assert all(not c.startswith("'") for row in rows[1:] for c in row if c and c[0] in "-+" and c[1:2].isdigit()
               and c != cell)


def test_negative_numbers_are_not_quoted_in_csv():
    from gemmbench.output.text import spreadsheet_safe
    assert [spreadsheet_safe(x) for x in ("-1.5e-3", "+2", "-0.5", "-.5", "3", "=1+1", "-")] == \
        ["-1.5e-3", "+2", "-0.5", "-.5", "3", "'=1+1", "'-"]
