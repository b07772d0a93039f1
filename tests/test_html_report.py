"""``gemmbench show --html``: one self-contained file, the terminal's rows and
flags, charts with the record's numbers, every string as text, nothing
loaded from anywhere, and the one writer's rules for the file."""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import sys
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gemmbench import cli
from gemmbench.backend import Shape
from gemmbench.inspect.profile import parse_raw_csv
from gemmbench.inspect.roofline import point_for
from gemmbench.output.format import DOUBTFUL_NOTE, format_number, format_rate
from gemmbench.output.html import report_html
from gemmbench.output.rows import result_columns, result_rows
from gemmbench.output.text import printable
from gemmbench.records.results import NOISY, THROTTLED, KernelResult, RunRecord, to_json
from gemmbench.records.store import load
from gemmbench.verify import Verification

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "results" / "reference"
PROFILE = ROOT / "tests" / "data" / "ncu_raw_rung14_h200.csv"
HOSTILE = "<script>alert(1)</script>\x1b[2J"

GPU_ENV = {"gpu": {"name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132, "max_sm_clock_mhz": 1980.0,
                   "peak_fp32_tflops": 66.9, "driver_version": "580.159.04", "cuda_driver_api": "13.0",
                   "cuda_toolkit": "13.0", "memory_bytes": 150109880320, "l2_bytes": 62914560},
           "cublas": "13.1.0", "nvcc": "Build cuda_13.0", "sm_clock_mhz": 1980,
           "cpu": {"cpu": "Intel Xeon", "cores": 16, "threads": 16, "numpy": "2.1",
                   "blas": [{"internal_api": "openblas", "version": "0.3.28", "architecture": "SkylakeX",
                             "num_threads": 16}]}}
SHAPE = Shape(1024, 1024, 1024)


def kr(kid, median, *, name=None, precision="fp32", shape=SHAPE, status="pass", reason=None, flags=()):
    name = name or ("cuBLAS" if kid == 0 and precision == "fp32" else "cuBLAS TF32" if kid == 0 else f"rung{kid}")
    return KernelResult("gpu", kid, name, precision, shape, status, reason,
                        verification=Verification(2e-7, 1e-5, 0) if status != "skip" else None,
                        samples=[median * (1 + 0.001 * i) for i in range(5)] if status == "pass" else [],
                        flags=list(flags), gpu=0)


def compare_record(**names) -> RunRecord:
    rows = [kr(0, 2e-4), kr(0, 5e-5, precision="tf32", flags=[NOISY]), kr(12, 2.5e-4, name=names.get("name")),
            kr(14, 1e-4, precision="tf32", flags=[THROTTLED]), kr(13, 0, status="fail", reason="wrong result"),
            kr(15, 0, status="skip", reason="needs sm_90")]
    return RunRecord("compare", "gpu", {"seed": 0}, copy.deepcopy(GPU_ENV), rows)


def sizes_record() -> RunRecord:
    rows = []
    for n in (256, 512, 1024):
        shape = Shape(n, n, n)
        rows += [kr(0, 1e-9 * n ** 3, shape=shape),
                 kr(12, 2e-9 * n ** 3, shape=shape, flags=[NOISY] if n == 512 else ()),
                 kr(5, 0, shape=shape, status="fail", reason="bad") if n == 1024 else kr(5, 4e-9 * n ** 3, shape=shape)]
    return RunRecord("sizes", "gpu", {"seed": 0}, copy.deepcopy(GPU_ENV), rows)


def save(folder: Path, name: str, record: RunRecord) -> Path:
    path = folder / name
    path.write_text(to_json(record))
    return path


class Page(HTMLParser):
    """What a browser would build: the tags and their attributes, the tables
    (cell texts and classes), the SVG marks, and the text."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.tables, self.text, self.svg_titles = [], [], [], []
        self._cell = self._row = None
        self._in_title = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
            self.tables[-1].append(self._row)
        elif tag in ("td", "th"):
            self._cell = [dict(attrs).get("class") or "", ""]
            self._row.append(self._cell)
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._cell = None
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell[1] += data
        if self._in_title:
            self.svg_titles.append(data)

    def table_with(self, *headers: str) -> list[list[list[str]]]:
        """The first table whose header starts with ``headers``."""
        return next(t for t in self.tables if t and [cell[1] for cell in t[0][:len(headers)]] == list(headers))

    def all_text(self) -> str:
        return "".join(self.text)


def texts(table) -> list[list[str]]:
    return [[cell[1] for cell in row] for row in table]


def assert_self_contained(html: str) -> None:
    """Nothing to load: no URL, no script, no resource a browser would fetch."""
    lowered = html.lower()
    scheme = re.search(r".{0,40}(https?:|ftp:|file:|data:|javascript:|//).{0,40}", lowered)
    assert scheme is None, scheme.group(0)
    for forbidden in ("src=", "href=", "@import", "url(", "<script", "<link", "<img", "<iframe", "<object",
                      "<embed", "xlink"):
        assert forbidden not in lowered, forbidden


# --------------------------------------------------------------------------
# structure and numbers
# --------------------------------------------------------------------------

def test_the_report_holds_the_terminal_table_and_its_flags(tmp_path, capsys):
    record = compare_record()
    out = tmp_path / "report.html"
    code = cli.main(["show", str(save(tmp_path, "c.json", record)), "--html", str(out)])
    assert code == 0 and f"report written to {out}" in capsys.readouterr().err
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert_self_contained(html)
    page = Page(html)
    tags = [t for t, _ in page.tags]
    assert tags[:2] == ["html", "head"] and "main" in tags and "svg" in tags and "style" in tags
    csp = next(a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert csp["content"].startswith("default-src 'none'")
    # the table is the terminal's: the same header and cells
    table = page.table_with("rung")
    assert texts(table)[0] == [c.name for c in result_columns(record)]
    assert texts(table)[1:] == result_rows(record)
    # and its numbers are the record's: GFLOP/s from 2*M*N*K over the median sample
    rung12 = next(row for row in texts(table) if row[0] == "12")
    assert rung12[5] == f"{2 * 1024 ** 3 / 2.5e-4 / 1e9 * (1 / 1.002):,.1f}"
    assert rung12[6] == f"{100 * 2e-4 / 2.5e-4:.1f}"
    # a flagged row's figures are marked, greyed, and the footnote says why
    rung14 = next(row for row in table if row[0][1] == "14")
    assert rung14[5][1].startswith("(") and rung14[5][1].endswith(")?") and "doubtful" in rung14[5][0]
    assert "doubtful" not in next(row for row in table if row[0][1] == "12")[5][0]
    assert DOUBTFUL_NOTE in page.all_text()
    assert "fail" in next(row for row in table if row[0][1] == "13")[-1][0]
    # the machine and the versions
    facts = page.all_text()
    for fact in ("NVIDIA H200", "580.159.04", "13.1.0", "Build cuda_13.0", "openblas 0.3.28", "Intel Xeon"):
        assert fact in facts, fact


def test_bars_are_the_tables_percentages(tmp_path):
    record = compare_record()
    page = Page(report_html([load(save(tmp_path, "c.json", record))]))
    table = texts(page.table_with("rung"))
    percent = {(row[0], row[2]): row[6] for row in table[1:]}
    # one chart per library row: rung 12 against cuBLAS (FP32), rung 14 against cuBLAS TF32
    bar_texts = [t for t, a in page.tags if t == "text" and "bar-text" in (a.get("class") or "")]
    assert len(bar_texts) == 4  # 12, 13 FAIL, 15 SKIP, 14 (the library rows are the 100% lines)
    titles = "\n".join(page.svg_titles)
    assert f"12 rung12: {format_number(record.results[2].gflops)} GFLOP/s, {percent[('12', 'FP32')]}% of cuBLAS" \
        in titles
    assert f"{percent[('14', 'TF32')]}% of cuBLAS TF32" in titles and percent[("14", "TF32")].endswith(")?")
    assert "% of cuBLAS TF32 (TF32)" in titles and "% of cuBLAS (FP32)" in titles


def test_a_multi_gpu_record_has_each_gpus_table_bars_and_the_summary(tmp_path):
    rows = [dataclasses.replace(r, gpu=g) for g in (0, 1) for r in compare_record().results]
    env = {"gpus": {"0": copy.deepcopy(GPU_ENV), "1": copy.deepcopy(GPU_ENV)}}
    env["gpus"]["1"]["gpu"]["name"] = "NVIDIA H200 NVL"
    page = Page(report_html([load(save(tmp_path, "m.json", RunRecord("compare", "gpu", {"seed": 0}, env, rows)))]))
    assert len([t for t in page.tables if texts(t)[0][:2] == ["rung", "kernel"]]) == 2
    summary = texts(page.table_with("GPU", "name"))  # the per-GPU summary, as compare --gpus ends
    assert [row[:2] for row in summary[1:]] == [["0", "NVIDIA H200"], ["1", "NVIDIA H200 NVL"]]
    titles = [a["aria-label"] for t, a in page.tags if t == "svg"]
    assert [t.split(":")[0] for t in titles] == ["% of cuBLAS (FP32) on GPU 0", "% of cuBLAS TF32 (TF32) on GPU 0",
                                                 "% of cuBLAS (FP32) on GPU 1", "% of cuBLAS TF32 (TF32) on GPU 1"]
    facts = page.all_text()
    assert "GPU 0: GPU" in facts and "GPU 1: GPU" in facts and "NVIDIA H200 NVL" in facts


def test_the_sizes_curve_has_a_point_for_each_timed_size(tmp_path):
    record = sizes_record()
    page = Page(report_html([load(save(tmp_path, "s.json", record))]))
    points = [a for t, a in page.tags if "point" in (a.get("class") or "").split()]
    timed = [r for r in record.results if r.status == "pass"]
    assert len(points) == len(timed)
    titles = page.svg_titles
    for r in timed:
        figure = format_rate(r.gflops)
        want = f"({figure})? N" if r.flags else figure
        assert any(t.endswith(f"at {r.shape}: {want} GFLOP/s") for t in titles), (r.kernel_id, r.shape)
    assert any(t == "5 rung5 at 1024x1024x1024: FAIL (bad)" for t in titles)
    hollow = [a for a in points if a.get("fill") == "#ffffff"]
    assert len(hollow) == 1  # rung 12 at 512, noisy
    # the x axis is labelled with the sweep's sizes
    assert {"256", "512", "1,024"} <= set(page.text)
    # the table's columns of figures are right-aligned, a FAIL among them or not
    header = page.table_with("kernel", "precision")[0]
    assert [cell[0] for cell in header] == ["", "", "num", "num", "num", "num"]
    assert [c[1] for c in header] == ["kernel", "precision", "256", "512", "1024", "max rel err"]


def test_several_records_diff_and_roofline(tmp_path):
    old, new = compare_record(), compare_record()
    new.results[2] = kr(12, 5e-4)  # half as fast: a regression
    a, b = save(tmp_path, "old.json", old), save(tmp_path, "new.json", new)
    out = tmp_path / "r.html"
    code = cli.main(["show", str(b), "--baseline", str(a), "--html", str(out), "--profile", str(PROFILE)])
    assert code == 1  # as diff and compare --baseline: a significant slowdown
    page = Page(out.read_text())
    diff = texts(page.table_with("kernel"))
    row = next(r for r in diff if r[0] == "12 rung12")
    assert row[diff[0].index("verdict")] == "slower"
    # the roofline of the profile: its point's figures as ncu counted them
    [kernel] = parse_raw_csv(PROFILE.read_text())
    point = point_for(kernel, kernel.name)
    roof = texts(page.table_with("kernel", "TFLOP/s executed"))
    assert roof[1][:3] == ["sgemm", f"{point.flops_per_second / 1e12:.2f}", f"{point.intensity:.0f}"]
    assert "Roofline: ncu_raw_rung14_h200.csv" in page.svg_titles


def test_the_real_reference_records_make_a_report_with_nothing_outside(tmp_path):
    compare, sizes = REFERENCE / "h200-compare-4096.json", REFERENCE / "h200-sizes-256-8192.json"
    html = report_html([load(compare), load(sizes)])
    assert_self_contained(html)
    page = Page(html)
    record = load(compare).record
    table = texts(page.table_with("rung"))
    by_name = {(row[0], row[1]): row for row in table[1:]}
    for r in record.results:
        rung = str(r.kernel_id) if r.device == "gpu" else f"cpu:{r.kernel_id}"
        label = r.name + (f" [{r.threads}T]" if r.device == "cpu" else "")
        figure = format_number(r.gflops)
        assert by_name[(rung, label)][5] in (figure, f"({figure})?")


# --------------------------------------------------------------------------
# strings are text
# --------------------------------------------------------------------------

def hostile_record() -> RunRecord:
    record = compare_record(name=HOSTILE)
    record.results[4].reason = HOSTILE
    record.environment["gpu"]["name"] = HOSTILE
    record.environment["gpu"]["driver_version"] = HOSTILE
    record.environment["cublas"] = HOSTILE
    record.environment["notes"] = [HOSTILE]
    record.environment["cpu"]["cpu"] = HOSTILE
    return record


def test_a_hostile_record_is_text(tmp_path):
    path = save(tmp_path, "hostile.json", hostile_record())
    out = tmp_path / "h.html"
    assert cli.main(["show", str(path), "--html", str(out), "--baseline", str(path)]) == 0
    html = out.read_text()
    assert "<script" not in html.lower()
    controls = [c for c in html if unicodedata.category(c) == "Cc" and c not in "\n"]
    assert not controls, controls
    page = Page(html)
    assert "script" not in {t for t, _ in page.tags}
    assert not [a for _, attrs in page.tags for a in attrs if a.startswith("on")]  # no event handler either
    text = page.all_text()
    assert text.count(printable(HOSTILE)) >= 6  # name, reason, GPU, driver, cuBLAS, note, CPU: shown as typed
    assert any("<script>alert(1)</script>\\x1b[2J" in t for t in page.svg_titles)  # in the charts too


# --------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------

def one_line_error(capsys, code, *fragments):
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    assert err.count("\n") == 1 and err.startswith("gemmbench: error: ") and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


@pytest.fixture
def record_file(tmp_path) -> Path:
    return save(tmp_path, "c.json", compare_record())


def test_an_existing_report_is_kept_without_overwrite(tmp_path, capsys, record_file):
    out = tmp_path / "report.html"
    out.write_text("precious\n")
    one_line_error(capsys, cli.main(["show", str(record_file), "--html", str(out)]), str(out), "--overwrite")
    assert out.read_text() == "precious\n"
    assert cli.main(["show", str(record_file), "--html", str(out), "--overwrite"]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]


@pytest.mark.parametrize("target", ["directory", "device", "missing folder", "link to a directory"])
def test_what_is_not_a_regular_file_is_one_line(tmp_path, capsys, record_file, target):
    if target == "directory":
        path = tmp_path / "d.html"
        path.mkdir()
    elif target == "device":
        path = Path("/dev/null")
    elif target == "missing folder":
        path = tmp_path / "nowhere" / "r.html"
    else:
        (tmp_path / "d").mkdir()
        path = tmp_path / "link.html"
        path.symlink_to(tmp_path / "d")
    before = sorted(os.listdir(tmp_path))
    one_line_error(capsys, cli.main(["show", str(record_file), "--html", str(path), "--overwrite"]), str(path))
    assert sorted(os.listdir(tmp_path)) == before


def test_bad_extras_are_one_line_and_write_nothing(tmp_path, capsys, record_file):
    out = tmp_path / "r.html"
    one_line_error(capsys, cli.main(["show", str(record_file), "--profile", str(PROFILE)]), "--html")
    rep = tmp_path / "p.ncu-rep"
    rep.write_bytes(b"\0binary")
    one_line_error(capsys, cli.main(["show", str(record_file), "--html", str(out), "--profile", str(rep)]),
                   "p.csv", "ncu --import")
    one_line_error(capsys, cli.main(["show", str(record_file), "--html", str(out), "--profile", str(record_file)]),
                   "not a raw ncu CSV")
    other = save(tmp_path, "other.json", RunRecord("compare", "gpu", {"seed": 0}, copy.deepcopy(GPU_ENV),
                                                   [kr(0, 1e-3, shape=Shape(64, 64, 64))]))
    one_line_error(capsys, cli.main(["show", str(record_file), "--html", str(out), "--baseline", str(other)]),
                   "--baseline", "nothing compared")
    assert not out.exists()


def test_the_terminal_shows_the_baseline_diff_too(tmp_path, capsys, record_file):
    assert cli.main(["show", str(record_file), "--baseline", str(record_file), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "old_gflops,new_gflops" in out and ",same," in out


def test_the_report_needs_no_matplotlib(tmp_path, monkeypatch, record_file):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    out = tmp_path / "r.html"
    sizes = save(tmp_path, "s.json", sizes_record())
    assert cli.main(["show", str(sizes), "--html", str(out)]) == 0
    assert "<svg" in out.read_text() and re.search(r"<polyline", out.read_text())
