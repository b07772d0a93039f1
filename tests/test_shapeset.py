"""Shape sets (issue 18): shape files, `sizes --shapes`, the record of a shape
set and its table, CSV, plot, show and diff; the shipped benchmarks/shapes/."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from gemmbench import api, cli, validate
from gemmbench.backend import Shape
from gemmbench.errors import UserError
from gemmbench.options import RANGES, NamedShape, RunOptions
from gemmbench.output.rows import result_csv_rows, sweep_rows
from gemmbench.records.results import KernelResult, RunRecord, to_json
from gemmbench.records.store import RecordError, load
from gemmbench.shapeset import ShapeFileError, read_shape_file, read_shapes
from gemmbench.verify import Verification

ROOT = Path(__file__).resolve().parent.parent
SHAPES_DIR = ROOT / "benchmarks" / "shapes"
FAST = ["--warmup", "0", "--min-samples", "1", "--max-samples", "2", "--budget", "0"]
ODD = "# three odd shapes\nM,N,K,name,group\n17,33,9,first,odd\n33,17,29   # no name\n9,9,65,\"a, b\",odd\n"


def run(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, *fragments):
    assert code == 2 and err.count("\n") == 1 and err.startswith("gemmbench: error: "), err
    assert "Traceback" not in err and all(f in err for f in fragments), err


def write(tmp_path, text, name="shapes.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# --------------------------------------------------------------------------
# reading shape files
# --------------------------------------------------------------------------

def test_a_good_file_reads_in_order_with_names_groups_and_comments(tmp_path):
    text = ("\ufeff# a BOM, then comments\r\n\r\n  group , k,M,n   # any order, any case\r\n"
            "odd,3,1,2\r\n,5,4,6\r\n")
    shapes = read_shapes([write(tmp_path, text)]).shapes
    assert shapes == (NamedShape(Shape(1, 2, 3), None, "odd"), NamedShape(Shape(4, 6, 5)))
    shapes = read_shapes([write(tmp_path, ODD)]).shapes
    assert [(s.shape, s.name, s.group) for s in shapes] == [
        (Shape(17, 33, 9), "first", "odd"), (Shape(33, 17, 29), None, None), (Shape(9, 9, 65), "a, b", "odd")]
    assert [s.label for s in shapes] == ["17x33x9 first", "33x17x29", "9x9x65 a, b"]


HIGH = RANGES["m"][1]


@pytest.mark.parametrize("text, line, fragment", [
    ("M,N,K\n1,2,3,4\n", 2, "4 fields, but the header has 3 columns"),
    ("M,N,K,name\n1,2,3,x,y\n", 2, "5 fields"),
    ("M,N,K\n1,0,3\n", 2, "N 0 is out of range"),
    ("M,N,K\n1,2,-3\n", 2, "K -3 is out of range"),
    ("M,N,K\n\uff11,2,3\n", 2, "M '\uff11' is not an integer"),
    ("M,N,K\n1,2,1_0\n", 2, "K '1_0' is not an integer"),
    ("M,N,K\n1,2,3.0\n", 2, "K '3.0' is not an integer"),
    (f"M,N,K\n1,{HIGH + 1},3\n", 2, f"N {HIGH + 1} is out of range: give 1 to {HIGH}"),
    ("M,N,K\n1,2,99999999999999999999999\n", 2, "K '99999999999999999999999' is out of range"),
    ("M,N,K\n1,2\n", 2, "no K"),
    ("M,N,K\n\n1,2,3\n# again\n1,2,3\n", 5, "1x2x3 is already on line 3"),
    ("M,N,K,name\n1,2,3,a\x1bb\n", 2, "has a control character"),
    ("M,N,K,name\n1,2,3," + "x" * 65 + "\n", 2, "65 characters"),
    ("M,N,K\n1" + "x" * 60 + ",2,3\n", 2, "M '1" + "x" * 22 + "…' is not an integer"),  # a long value cut
    ('M,N,K\n1,2,"3\n', 2, "not a line of CSV"),
    ("1,2,3\n", 1, "'1' is not a column"),
    ("M,N,X\n1,2,3\n", 1, "'X' is not a column"),
    ("M,N,K,m\n1,2,3,4\n", 1, "the header names M twice"),
    ("M,K\n1,2\n", 1, "the header has no N column"),
])
def test_every_bad_line_is_one_error_naming_file_line_and_value(tmp_path, text, line, fragment):
    path = write(tmp_path, text)
    with pytest.raises(ShapeFileError) as caught:
        read_shapes([path])
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: ") and fragment in message and "\n" not in message


@pytest.mark.parametrize("text, fragment", [
    ("", "no shapes (empty)"), ("# only\n\n# comments\n", "nothing but comments"), ("M,N,K\n", "only a header")])
def test_a_file_without_shapes_is_an_error(tmp_path, text, fragment):
    path = write(tmp_path, text)
    with pytest.raises(ShapeFileError, match=re.escape(f"{path}: no shapes")) as caught:
        read_shapes([path])
    assert fragment in str(caught.value)


def test_files_are_read_through_the_one_reader(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="not a regular file"):
        read_shapes([fifo])  # refused at once, never waiting for a writer
    with pytest.raises(UserError, match="no such file"):
        read_shapes([tmp_path / "missing.csv"])
    with pytest.raises(UserError, match="not UTF-8"):
        read_shapes([write(tmp_path, b"M,N,K\n1,2,\xff\n")])
    with pytest.raises(UserError, match="more than the 1 MiB"):
        read_shapes([write(tmp_path, "M,N,K\n" + "#" * (1 << 20) + "\n1,2,3\n")])
    with pytest.raises(ShapeFileError, match="give a shape file or a folder"):
        read_shapes([""])


def test_two_files_sharing_a_shape_measure_it_once_under_the_first_name(tmp_path):
    a = write(tmp_path, "M,N,K,name\n8,8,8,first\n4,4,4\n", "a.csv")
    b = write(tmp_path, "M,N,K,name\n2,2,2\n8,8,8,second\n", "b.csv")
    shape_set = read_shapes([a, b])
    assert [(s.shape.M, s.name) for s in shape_set.shapes] == [(8, "first"), (4, None), (2, None)]
    assert shape_set.notes == (f"{b}:3: 8x8x8 is also {a}:2: measured once, as 'first'",)


def test_a_folder_is_its_csv_files_in_name_order(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    write(folder, "M,N,K\n2,2,2\n", "b.csv")
    write(folder, "M,N,K\n1,1,1\n", "a.csv")
    write(folder, "not a shape file", "notes.txt")
    write(folder, "M,N,K\n3,3,3\n", ".hidden.csv")
    (folder / "sub.csv").mkdir()  # a folder named .csv is listed, and refused by the reader
    with pytest.raises(UserError, match="is a directory"):
        read_shapes([folder])
    (folder / "sub.csv").rmdir()
    shape_set = read_shapes([folder, folder / "a.csv"])  # a file given twice is read once
    assert [s.shape.M for s in shape_set.shapes] == [1, 2] and shape_set.notes == ()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ShapeFileError, match="no .csv shape files"):
        read_shapes([empty])


# --------------------------------------------------------------------------
# RunOptions: the shape set as an option
# --------------------------------------------------------------------------

SET = (NamedShape(Shape(8, 4, 2), "x"), NamedShape(Shape(3, 5, 7)))


@pytest.mark.parametrize("given, fragment", [
    (dict(sweep="8,16"), "give either --sweep or --shapes, not both"),
    (dict(m=64), "-m 64 does not go with --shapes"),
    (dict(k=3), "-k 3 does not go with --shapes"),
    (dict(command="compare"), "--shapes is for sizes and tune, not compare"),
    (dict(shapes=SET + (NamedShape(Shape(3, 5, 7), "again"),)), "shape 3x5x7 is given twice"),
    (dict(shapes=(Shape(1, HIGH + 1, 1),)), f"N {HIGH + 1} is out of range"),
    (dict(shapes=(Shape(1, 1, 0),)), "K 0 is out of range"),
    (dict(shapes=((1, 2, 3),)), "is not a Shape or NamedShape"),
])
def test_run_options_check_the_shape_set_once(given, fragment):
    with pytest.raises(UserError, match=re.escape(fragment)):
        RunOptions(**{"command": "sizes", "shapes": SET, "device": "cpu", **given})


def test_the_record_keeps_the_shape_set_in_its_options():
    options = RunOptions(command="sizes", shapes=(SET[0], Shape(3, 5, 7)), device="cpu")
    assert options.shapes == SET
    assert options.saved()["shapes"] == [{"M": 8, "N": 4, "K": 2, "name": "x", "group": None},
                                         {"M": 3, "N": 5, "K": 7, "name": None, "group": None}]
    json.dumps(options.saved())  # JSON-safe as it stands


# --------------------------------------------------------------------------
# the command line, on the CPU
# --------------------------------------------------------------------------

def test_sizes_shapes_runs_the_file_and_show_plot_and_diff_read_it_back(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    shapes = write(tmp_path, ODD)
    results = tmp_path / "results"
    code, out, err = run(capsys, "sizes", "--device", "cpu", "--shapes", shapes, "-i", "2", *FAST,
                         "--results-dir", results)
    assert code == 0, err
    table = out.splitlines()
    assert [line.split()[0] for line in table if re.match(r"\s+(\d+x\d+x\d+|precision|max)", line)] == \
        ["precision", "17x33x9", "33x17x29", "9x9x65", "max"]
    assert any("17x33x9 first" in line for line in table) and any("9x9x65 a, b" in line for line in table)
    (saved,) = results.glob("sizes-cpu-*.json")
    record = load(saved).record
    assert [(r.kernel_id, str(r.shape)) for r in record.results] == [
        (k, s) for s in ("17x33x9", "33x17x29", "9x9x65") for k in (0, 2)]
    assert record.options["shapes"][0] == {"M": 17, "N": 33, "K": 9, "name": "first", "group": "odd"}
    assert record.options["sweep"] is None and all(r.status == "pass" for r in record.results)

    code, shown, _ = run(capsys, "show", saved)
    assert code == 0 and shown == out  # the record alone prints what the run printed
    code, csv_text, _ = run(capsys, "show", saved, "--format", "csv")
    lines = csv_text.splitlines()
    assert code == 0 and lines[0].endswith(",shape_name,shape_group")
    assert lines[1].endswith(",first,odd") and lines[3].endswith(",,") and lines[5].endswith(',"a, b",odd')
    png = tmp_path / "set.png"
    code, _, err = run(capsys, "show", saved, "--plot", png)
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG", err
    code, diffed, err = run(capsys, "diff", saved, saved)
    assert code == 0, err
    assert all(shape in diffed for shape in ("17x33x9", "33x17x29", "9x9x65")) and "no regression" in diffed


def test_sizes_plot_of_a_shape_set_is_drawn_by_the_run_too(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "run.png"
    code, _, err = run(capsys, "sizes", "--device", "cpu", "--shapes", write(tmp_path, "M,N,K\n5,7,3\n"),
                       "-i", "1", *FAST, "--plot", png, "--no-save")
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG", err


@pytest.mark.parametrize("args, fragment", [
    (["--sweep", "8,16"], "give either --sweep or --shapes, not both"),
    (["-m", "8"], "-m 8 does not go with --shapes"),
    (["-n", "8"], "-n 8 does not go with --shapes"),
])
def test_shapes_conflicts_are_one_line_exit_2_and_write_nothing(capsys, tmp_path, args, fragment):
    results = tmp_path / "results"
    code, out, err = run(capsys, "sizes", "--device", "cpu", "--shapes", write(tmp_path, ODD), *args,
                         "--results-dir", results)
    assert_one_line_error(code, err, fragment)
    assert out == "" and not results.exists()


def test_sizes_needs_a_sweep_or_shapes(capsys):
    code, _, err = run(capsys, "sizes", "--device", "cpu", "--no-save")
    assert_one_line_error(code, err, "sizes needs --sweep", "--shapes")


def test_a_bad_shape_file_is_one_line_naming_file_and_line_and_nothing_is_written(capsys, tmp_path):
    results = tmp_path / "results"
    bad = write(tmp_path, "M,N,K\n4,4,4\n8,\x1b[31m8,8\n")
    code, out, err = run(capsys, "sizes", "--device", "cpu", "--shapes", bad, "--results-dir", results)
    assert_one_line_error(code, err, f"{bad}:3: N ", "is not an integer")
    assert "\x1b" not in err and out == "" and not results.exists()  # the value escaped, nothing saved


def test_two_files_are_one_sweep_and_the_repeat_is_a_note(capsys, tmp_path):
    a = write(tmp_path, "M,N,K,name\n9,9,9,nine\n", "a.csv")
    b = write(tmp_path, "M,N,K\n9,9,9\n5,5,5\n", "b.csv")
    code, out, err = run(capsys, "sizes", "--device", "cpu", "--shapes", a, "--shapes", b, "-i", "1", *FAST,
                         "--json")
    assert code == 0, err
    assert [r["shape"]["M"] for r in json.loads(out)["results"]] == [9, 9, 5, 5]
    code, _, err = run(capsys, "sizes", "--device", "cpu", "--shapes", a, "--shapes", b, "-i", "1", *FAST,
                       "--no-save")
    assert code == 0 and f"{b}:2: 9x9x9 is also {a}:2: measured once, as 'nine'" in err


def test_every_shape_of_the_file_must_fit_in_host_memory(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(validate, "available_host_bytes", lambda: 64 << 20)
    shapes = write(tmp_path, "M,N,K\n8,8,8\n16,16,16\n1024,2048,1024\n4,4,4\n")  # the third is too large
    code, _, err = run(capsys, "sizes", "--device", "cpu", "--shapes", shapes, "-i", "1", *FAST,
                       "--results-dir", tmp_path / "results")
    assert_one_line_error(code, err, "shape 1024x2048x1024 needs about", "host memory")
    assert not (tmp_path / "results").exists()


# --------------------------------------------------------------------------
# the Python API
# --------------------------------------------------------------------------

def test_the_api_takes_shape_files_among_its_shapes(tmp_path):
    record = api.run(kernels=[1], shapes=[(4, 4, 4), write(tmp_path, ODD)], device="cpu", warmup=0.0,
                     min_samples=1, max_samples=2, budget=0.0)
    assert list(dict.fromkeys(str(r.shape) for r in record.results)) == ["4x4x4", "17x33x9", "33x17x29", "9x9x65"]
    assert [s["name"] for s in record.options["shapes"]] == [None, "first", None, "a, b"]
    with pytest.raises(UserError, match="shape 17x33x9 is given twice"):
        api.run(kernels=[1], shapes=[str(tmp_path / "shapes.csv"), (17, 33, 9)], device="cpu")
    with pytest.raises(ShapeFileError, match=":2: N 0 is out of range"):
        api.run(kernels=[1], shapes=write(tmp_path, "M,N,K\n1,0,1\n", "bad.csv"), device="cpu")


# --------------------------------------------------------------------------
# a shape set's record: table, CSV, validation
# --------------------------------------------------------------------------

def _result(kid, shape, seconds=1e-4):
    return KernelResult("cpu", kid, "OpenBLAS" if kid == 0 else f"rung{kid}", "fp32", shape, "pass", threads=1,
                        verification=Verification(1e-7, 1e-5, 0), samples=[seconds] * 3)


def shape_set_record(order=None) -> RunRecord:
    entries = [NamedShape(Shape(64, 8, 8), "a", "g1"), NamedShape(Shape(8, 64, 8), None, "g1"),
               NamedShape(Shape(8, 8, 64), "c", "g2")]
    shapes = [e.shape for e in (order or entries)]
    results = [_result(k, s, 1e-4 * (k + 1)) for s in shapes for k in (0, 3)]
    options = RunOptions(command="sizes", shapes=tuple(entries), device="cpu").saved()
    return RunRecord("sizes", "cpu", options, {}, results)


def test_a_shape_set_table_has_shapes_down_in_the_files_order():
    entries_order = shape_set_record()
    header, rows, _ = sweep_rows(entries_order)
    assert header == ["shape", "0 OpenBLAS [1T]", "3 rung3 [1T]"]
    assert [row[0] for row in rows] == ["precision", "64x8x8 a", "8x64x8", "8x8x64 c", "max rel err"]
    assert rows[1][2].endswith("(25%)") and rows[0][1:] == ["FP32", "FP32"] and rows[-1][1:] == ["1.0e-07"] * 2
    # results from several GPUs may land in another order: the rows keep the files'
    shuffled = shape_set_record([NamedShape(Shape(8, 8, 64)), NamedShape(Shape(64, 8, 8)),
                                 NamedShape(Shape(8, 64, 8))])
    assert sweep_rows(shuffled)[1] == rows
    header, csv_rows = result_csv_rows(entries_order)
    assert header[-2:] == ["shape_name", "shape_group"]
    assert [row[-2:] for row in csv_rows[::2]] == [["a", "g1"], ["", "g1"], ["c", "g2"]]


def test_a_sweep_record_keeps_its_old_table():
    record = shape_set_record()
    record.options["shapes"] = []
    header, rows, _ = sweep_rows(record)
    assert header[:2] == ["kernel", "precision"] and header[2:-1] == ["64x8x8", "8x64x8", "8x8x64"]
    assert "shape_name" not in result_csv_rows(record)[0]


@pytest.mark.parametrize("entry, fragment", [
    ("x", "options.shapes[0] should be an object"),
    ({"M": 1, "N": 2}, "missing field options.shapes[0].'K'"),
    ({"M": 0, "N": 2, "K": 3}, "options.shapes[0].M should be >= 1"),
    ({"M": 1, "N": 2, "K": 3, "name": 5}, "options.shapes[0].name should be a string"),
])
def test_a_record_with_a_bad_shape_set_is_refused(tmp_path, entry, fragment):
    data = json.loads(to_json(shape_set_record()))
    data["options"]["shapes"][0] = entry
    path = write(tmp_path, json.dumps(data), "bad.json")
    with pytest.raises(RecordError, match=re.escape(fragment)):
        load(path)


def test_the_plot_of_a_shape_set_labels_each_shape_and_keeps_names_as_text():
    pytest.importorskip("matplotlib")
    from gemmbench.output.plot import sweep_figure
    import matplotlib.pyplot as plt
    record = shape_set_record()
    record.options["shapes"][0]["name"] = "$x^2$"  # text, not mathtext
    fig = sweep_figure(record)
    try:
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert labels == ["64x8x8 $x^2$", "8x64x8", "8x8x64 c"]
        assert not any(t.get_parse_math() for t in ax.get_xticklabels())
        assert sorted(t.get_text() for t in ax.texts) == ["g1", "g2"]  # each group named once
        assert [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":"] == [1.5]
        fig.canvas.draw()  # renders: a '$' in a name breaks nothing
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------
# the shipped set: benchmarks/shapes/
# --------------------------------------------------------------------------

GROUPS = {"squares.csv": {"squares"}, "odd.csv": {"odd"}, "skinny.csv": {"skinny-m", "skinny-n", "long-k"},
          "transformer.csv": {"gpt2", "bert-large", "llama-2-7b", "llama-3-8b"}}


def test_every_shipped_file_parses_in_range_with_the_groups_the_readme_names():
    readme = (ROOT / "README.md").read_text()
    assert {p.name for p in SHAPES_DIR.glob("*.csv")} == set(GROUPS)
    for name, groups in GROUPS.items():
        shapes = [entry for entry, _ in read_shape_file(SHAPES_DIR / name)]
        assert {s.group for s in shapes} == groups
        for s in shapes:
            for dim in "MNK":
                low, high = RANGES[dim.lower()]
                assert low <= getattr(s.shape, dim) <= high
        flops = sum(s.shape.flops for s in shapes)
        # the README states each file's shapes and FLOPs: keep it true
        assert re.search(rf"`{name}`\s*\|\s*{len(shapes)}\s*\|\s*{flops / 1e12:.2f}\s*\|", readme), name
        assert all(f"`{g}`" in readme for g in groups)
    whole = read_shapes([SHAPES_DIR])
    assert f"{len(whole.shapes)} shapes" in readme and f"{sum(s.shape.flops for s in whole.shapes) / 1e12:.2f} TFLOP" \
        in readme
    assert len(whole.notes) == 2  # 128x4096x4096 and 4096^3: in two files each, measured once
    assert {"squares", "odd", "skinny-m", "long-k", "llama-3-8b"} <= {s.group for s in whole.shapes}


def test_the_named_shapes_of_the_issue_are_in_the_set():
    shapes = {str(s.shape) for s in read_shapes([SHAPES_DIR]).shapes}
    assert {"256x8192x8192", "801x1537x3001", "2047x2047x2047", "1023x1024x1024", "1024x1023x1024",
            "1024x1024x1023", "127x4096x4096", "1024x1024x16384", "128x128x65536", "1000x1000x1000"} <= shapes
    # Llama-3-8B's QKV with grouped-query attention, and Llama-2-7B's, at 4096 tokens
    assert {"4096x6144x4096", "4096x12288x4096", "4096x14336x4096", "4096x4096x11008"} <= shapes
