"""Saved records read back: validation, one-line errors, and `show` printing
a record exactly as its run did."""

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from gemmbench import cli
from gemmbench.backend import Shape
from gemmbench.output.report import Reporter
from gemmbench.output.runs import show_record
from gemmbench.fsutil import write_atomic
from gemmbench.records.results import KernelResult, RunRecord, to_json
from gemmbench.records.store import RecordError, load
from gemmbench.verify import Verification

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference"
# the reference directory also holds files that are not run records
RECORDS = sorted(p for p in REFERENCE.glob("*.json") if isinstance(json.loads(p.read_text()), dict)
                 and "schema" in json.loads(p.read_text()))
NOT_RECORDS = sorted(set(REFERENCE.glob("*.json")) - set(RECORDS))


def rendered(record: RunRecord, fmt: str) -> str:
    reporter = Reporter(fmt)
    reporter.out = Console(file=io.StringIO(), width=200, highlight=False, color_system=None)
    show_record(reporter, record)
    return reporter.out.file.getvalue()


def test_there_are_reference_records():
    assert len(RECORDS) >= 5 and {"compare", "sizes", "tune"} <= {load(p).record.command for p in RECORDS}


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_reference_records_render_and_round_trip(path, fmt, tmp_path):
    loaded = load(path)
    before = rendered(loaded.record, fmt)
    assert loaded.record.results and before.strip()
    # every timed row's GFLOP/s in the printed table (the numbers come from the samples)
    gflops = next(r.gflops for r in loaded.record.results if r.status == "pass")
    assert any(text in before for text in (f"{gflops:,.0f}"[:4], f"{gflops:.3g}"[:3], f"{gflops:.6g}"))
    again = tmp_path / "again.json"
    write_atomic(again, to_json(loaded.record))
    assert rendered(load(again).record, fmt) == before


def test_a_fresh_record_renders_the_same_before_and_after_saving(tmp_path):
    """What a run prints (the in-memory record) is what show prints later."""
    shape = Shape(64, 48, 32)
    v = Verification(1e-7, 1e-5, 0)
    results = [KernelResult("gpu", 0, "cuBLAS", "fp32", shape, "pass", verification=v,
                            samples=[1.1e-6, 1.0e-6, 1.3e-6], notes={"sm_clock_mhz": 1980}, gpu=0),
               KernelResult("gpu", 12, "multistage cp.async", "fp32", shape, "pass", params={"BM": 128},
                            params_source="tuned", verification=v, samples=[2.2e-6, 2.1e-6], gpu=0),
               KernelResult("gpu", 14, "TF32 wgmma", "tf32", shape, "skip", reason="needs compute capability 9.0"),
               KernelResult("gpu", 3, "smem blocking", "fp32", shape, "fail", reason="wrong result",
                            verification=Verification(float("inf"), 1e-5, 7), gpu=0)]
    env = {"gpu": {"name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132, "max_sm_clock_mhz": 1980.0,
                   "peak_fp32_tflops": 66.9, "driver_version": "580", "cuda_driver_api": "13.0", "index": 0,
                   "uuid": "GPU-1234", "pci_bus_id": "0000:19:00.0"},
           "cublas": "13.1.0", "notes": ["GPU 0: NVIDIA H200, UUID GPU-1234, PCI 0000:19:00.0"]}
    for command in ("run", "compare", "sizes", "tune"):
        record = RunRecord(command, "gpu", {"seed": 0, "top": 5}, env, results)
        path = tmp_path / f"{command}.json"
        write_atomic(path, to_json(record))
        for fmt in ("table", "markdown", "csv"):
            assert rendered(load(path).record, fmt) == rendered(record, fmt), (command, fmt)
    assert "UUID GPU-1234" in rendered(record, "table")


def test_show_command_prints_the_record(capsys):
    path = next(p for p in RECORDS if "compare" in p.name)
    code = cli.main(["show", str(path), "--format", "csv"])
    out, err = capsys.readouterr()
    assert code == 0 and out.startswith("device,kernel_id,kernel,") and "cuBLAS" in out


def test_show_side_by_side_one_column_group_per_record(capsys):
    a = next(p for p in RECORDS if "compare" in p.name)
    b = next(p for p in RECORDS if "sizes" in p.name and "h200" in p.name)
    code = cli.main(["show", str(a), str(b), "--format", "csv"])
    out, _ = capsys.readouterr()
    header = out.splitlines()[0].split(",")
    # per record: GFLOP/s, % and (issue 16: flags visible in every format) its flags
    assert code == 0 and header[:3] == ["kernel", "precision", "shape"] and len(header) == 3 + 2 * 3
    assert all("NVIDIA H200" in h for h in header[3:]) and header[5].endswith(" flags")
    line = next(l for l in out.splitlines() if l.startswith("12 multistage") and "4096x4096x4096" in l)
    assert line.count('"4') == 2  # both records hold rung 12 at 4096^3: a number in each group


def test_show_plot_of_a_sizes_record(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "s.png"
    sizes = next(p for p in RECORDS if "ci-cpu-sizes" in p.name)
    code = cli.main(["show", str(sizes), "--plot", str(png)])
    capsys.readouterr()
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG"
    compare = next(p for p in RECORDS if "compare" in p.name)
    code = cli.main(["show", str(compare), "--plot", str(png)])
    _, err = capsys.readouterr()
    assert code == 2 and "sizes record" in err


# -- malformed records: one line each, exit 2 -----------------------------------

def _valid() -> dict:
    return json.loads(next(p for p in RECORDS if "compare" in p.name).read_text())


def _edit(change):
    d = _valid()
    change(d)
    return json.dumps(d)


CASES = {
    "truncated": (lambda: _edit(lambda d: None)[:5000], "truncated"),
    "not json": (lambda: "schema: 1\nresults: []\n", "not JSON"),
    "empty": (lambda: "", "empty"),
    "a json list": (lambda: "[1, 2]", "JSON list"),
    "no schema": (lambda: _edit(lambda d: d.pop("schema")), "no 'schema' field"),
    "newer schema": (lambda: _edit(lambda d: d.update(schema=99)), "schema 99"),
    "schema as text": (lambda: _edit(lambda d: d.update(schema="1")), 'schema "1"'),
    "missing command": (lambda: _edit(lambda d: d.pop("command")), "missing field 'command'"),
    "missing shape": (lambda: _edit(lambda d: d["results"][3].pop("shape")), "missing field results[3].'shape'"),
    "results not a list": (lambda: _edit(lambda d: d.update(results={})), "results should be a list"),
    "kernel id as text": (lambda: _edit(lambda d: d["results"][1].update(kernel_id="1")),
                          'results[1].kernel_id should be an integer, not "1"'),
    "long text as an integer": (lambda: _edit(lambda d: d["results"][1].update(kernel_id="x" * 100)),
                                'results[1].kernel_id should be an integer, not "' + "x" * 28 + "…"),
    "not built not a list": (lambda: _edit(lambda d: d["options"].update(not_built={})),
                             "options.not_built should be a list"),
    "not built not an object": (lambda: _edit(lambda d: d["options"].update(not_built=[5])),
                                "options.not_built[0] should be an object, not 5"),
    "not built bad name": (lambda: _edit(lambda d: d["options"].update(not_built=[{"BM": 64}, {"1x": 2}])),
                           'options.not_built[1] has a key "1x", not a parameter name'),
    "not built bad value": (lambda: _edit(lambda d: d["options"].update(not_built=[{"BM": "64"}])),
                            'options.not_built[0].BM should be an integer, not "64"'),
    "bool as an integer": (lambda: _edit(lambda d: d["results"][0].update(threads=True)),
                           "results[0].threads should be an integer, not true"),
    "sample as text": (lambda: _edit(lambda d: d["results"][2]["samples_s"].__setitem__(4, "x")),
                       "results[2].samples_s[4] should be a number"),
    "negative sample": (lambda: _edit(lambda d: d["results"][2]["samples_s"].__setitem__(0, -1.0)),
                        "results[2].samples_s[0] should be a positive number"),
    "bad status": (lambda: _edit(lambda d: d["results"][0].update(status="ok")), "status should be one of"),
    "zero dimension": (lambda: _edit(lambda d: d["results"][0]["shape"].update(K=0)), "shape.K should be >= 1"),
    "gpu facts missing": (lambda: _edit(lambda d: d["environment"]["gpu"].pop("sm_count")),
                          "missing field environment.gpu.'sm_count'"),
    "notes not text": (lambda: _edit(lambda d: d["environment"].update(notes=[1])),
                       "environment.notes[0] should be a string"),
    "top as text": (lambda: _edit(lambda d: d["options"].update(top="5")), "options.top should be an integer"),
    "bad device": (lambda: _edit(lambda d: d.update(device="tpu")), 'device should be "gpu" or "cpu"'),
    "passed without samples": (lambda: _edit(lambda d: d["results"][0].update(samples_s=[])),
                               "samples_s is empty"),
    "unknown stop reason": (lambda: _edit(lambda d: d["results"][0]["notes"].update(stopped="bored")),
                            'results[0].notes.stopped should be one of noise, budget, samples, timeout, not "bored"'),
    "stop reason not text": (lambda: _edit(lambda d: d["results"][0]["notes"].update(stopped=1)),
                             "results[0].notes.stopped should be a string"),
    "negative median noise": (lambda: _edit(lambda d: d["results"][0]["notes"].update(median_noise=-0.1)),
                              "results[0].notes.median_noise should be >= 0"),
    "zero noise target": (lambda: _edit(lambda d: d["results"][0]["notes"].update(max_noise=0)),
                          "results[0].notes.max_noise should be > 0"),
    "noise target over 1": (lambda: _edit(lambda d: d["results"][0]["notes"].update(max_noise=5)),
                            "results[0].notes.max_noise should be >= 0 and <= 1"),
    "rounds as text": (lambda: _edit(lambda d: d["options"].update(rounds="3")), "options.rounds should be an integer"),
    "zero rounds": (lambda: _edit(lambda d: d["options"].update(rounds=0)), "options.rounds should be >= 1"),
    "settled warm-up as text": (lambda: _edit(lambda d: d["results"][0]["notes"].update(warmup_settled_s="0.3")),
                                "results[0].notes.warmup_settled_s should be a number"),
    "temperatures as text": (lambda: _edit(lambda d: d["results"][0]["notes"].update(gpu_temp_range_c="60")),
                             "results[0].notes.gpu_temp_range_c should be a list"),
    "temperatures the wrong way round": (
        lambda: _edit(lambda d: d["results"][0]["notes"].update(gpu_temp_range_c=[63, 58])),
        "results[0].notes.gpu_temp_range_c should be [lowest, highest] in C, not [63, 58]"),
    "a temperature as text": (lambda: _edit(lambda d: d["results"][0]["notes"].update(gpu_temp_range_c=[58, "hot"])),
                              "results[0].notes.gpu_temp_range_c[1] should be a number"),
    "one temperature": (lambda: _edit(lambda d: d["results"][0]["notes"].update(gpu_temp_range_c=[60])),
                        "results[0].notes.gpu_temp_range_c should be [lowest, highest] in C, not [60]"),
    "round not a dict": (lambda: _edit(lambda d: d["results"][0]["notes"].update(rounds=[1e-3])),
                         "results[0].notes.rounds[0] should be"),
    "round without a median": (lambda: _edit(lambda d: d["results"][0]["notes"].update(rounds=[{"samples": 5}])),
                               "missing field results[0].notes.rounds[0].'median_s'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
@pytest.mark.parametrize("command", ["show", "diff"])
def test_malformed_record_is_one_line_and_exit_2(capsys, tmp_path, case, command):
    text, fragment = CASES[case]
    bad = tmp_path / "bad.json"
    bad.write_text(text())
    args = ["show", str(bad)] if command == "show" else ["diff", str(RECORDS[0]), str(bad)]
    code = cli.main(args)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"gemmbench: error: {bad}") and "Traceback" not in err
    assert fragment in err, err


@pytest.mark.parametrize("make, fragment", [
    (lambda tmp: tmp, "is a directory"),
    (lambda tmp: tmp / "missing.json", "no such file"),
    (lambda tmp: (tmp / "bin.json").write_bytes(b"\xff\xfe\x00") and tmp / "bin.json", "not UTF-8"),
])
def test_unreadable_paths_are_one_line(capsys, tmp_path, make, fragment):
    code = cli.main(["show", str(make(tmp_path))])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and fragment in err


@pytest.mark.parametrize("path", NOT_RECORDS, ids=lambda p: p.name)
def test_other_json_files_are_refused_in_one_line(capsys, path):
    code = cli.main(["show", str(path)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "not a gemmbench record" in err


def test_schema_2_unknown_fields_pass_known_fields_are_checked(tmp_path, capsys):
    d = _valid()
    d.update(schema=2, complete=False, written_by_the_future={"x": 1})
    for r in d["results"]:
        r["flags"] = ["noisy"]
        r["something_new"] = 3
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(d))
    loaded = load(path)
    assert loaded.schema == 2 and not loaded.complete and len(loaded.record.results) == len(d["results"])
    code = cli.main(["show", str(path), "--format", "csv"])
    out, err = capsys.readouterr()
    assert code == 0 and "did not finish" in err and out.startswith("device,")
    d["complete"] = "yes"
    path.write_text(json.dumps(d))
    with pytest.raises(RecordError, match="complete should be true or false"):
        load(path)


def test_schema_1_records_ignore_a_complete_field_they_cannot_have(tmp_path):
    d = _valid()
    d["schema"], d["complete"] = 1, "whatever"
    for r in d["results"]:
        r.pop("flags", None)
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(d))
    assert load(path).complete


def test_saved_record_carries_the_gpu_index():
    r = KernelResult("gpu", 0, "cuBLAS", "fp32", Shape(8, 8, 8), "pass", samples=[1e-6], gpu=1)
    data = json.loads(to_json(RunRecord("run", "gpu", {}, {}, [r])))
    assert data["results"][0]["gpu"] == 1 and KernelResult.from_dict(data["results"][0]).gpu == 1


def test_why_sampling_stopped_round_trips_and_old_records_load_without_it(tmp_path):
    """notes.stopped/median_noise/max_noise are kept as written; a row
    without them (every record before --max-noise) loads as before, unflagged."""
    rows = [r for p in RECORDS for r in load(p).record.results]
    old = [r for r in rows if "stopped" not in r.notes]
    assert old and all("unsettled" not in r.flags for r in old)  # records from before --max-noise load, unflagged
    shape = Shape(8, 8, 8)
    settled = KernelResult("cpu", 1, "naive", "fp32", shape, "pass", samples=[1e-6] * 8,
                           notes={"stopped": "noise", "median_noise": 0.0, "max_noise": 0.005})
    short = KernelResult("cpu", 2, "blocked", "fp32", shape, "pass", samples=[1e-6, 2e-6, 3e-6],
                         notes={"stopped": "timeout", "median_noise": None, "max_noise": 0.005}, flags=["unsettled"])
    path = tmp_path / "noise.json"
    write_atomic(path, to_json(RunRecord("compare", "cpu", {"max_noise": 0.5}, {}, [settled, short])))
    back = load(path).record.results
    assert [r.notes for r in back] == [settled.notes, short.notes]
    assert [r.flags for r in back] == [[], ["unsettled"]]
