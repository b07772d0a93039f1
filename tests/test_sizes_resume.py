"""sizes --resume (no GPU): a sweep cut short, resumed from its record, times
only the shapes it left and keeps the finished ones' rows as they were; a
record that measured something else is refused in one line (exit 2) before
anything runs or is written. The CPU ladder runs for real here; the GPU's
side (its per-shape parameters) runs on the host stand-in of tune's tests."""

from __future__ import annotations

import dataclasses
import json
import signal
from pathlib import Path

import pytest

from gemmbench import api, cli, resume
from gemmbench.backend import Shape
from gemmbench.cpu.backend import CpuBackend
from gemmbench.errors import UserError
from gemmbench.execute import local
from gemmbench.execute.interrupts import Interrupted
from gemmbench.options import RunOptions
from gemmbench.records.store import load
from test_tune_shapes import StandInGpu, stand_in  # noqa: F401  (a fixture)

SIZES = (16, 24, 32)
SHAPES = [Shape(s, s, s) for s in SIZES]
FAST = ["--budget", "0", "--min-samples", "1", "--max-samples", "2", "--warmup", "0"]
CPU = ["sizes", "--device", "cpu", "--sweep", ",".join(map(str, SIZES)), "-i", "1", "-i", "3", *FAST]


def run(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def counting(monkeypatch, backend=CpuBackend) -> list:
    """The shape of each timing ``backend`` does (a row disturbed by other load is timed again: compare sets)."""
    calls, measure = [], UNPATCHED[backend]

    def counted(self, *args, **kwargs):
        calls.append(getattr(self, "shape", None) or Shape(*self.C.shape, self.A.shape[1]))
        return measure(self, *args, **kwargs)
    monkeypatch.setattr(backend, "measure", counted)
    return calls


def stopping(monkeypatch, kernel_id: int, shape: Shape) -> None:
    """A SIGTERM as the row of ``kernel_id`` at ``shape`` starts, once (rows, not timings, so that a row timed
    again under load does not move it)."""
    visit, fired = local._visit, []

    def stopped(entry, problem, *args):
        if (entry.spec.id, problem.shape) == (kernel_id, shape) and not fired:
            fired.append(True)
            raise Interrupted(signal.SIGTERM)
        return visit(entry, problem, *args)
    monkeypatch.setattr(local, "_visit", stopped)


UNPATCHED = {CpuBackend: CpuBackend.measure, StandInGpu: StandInGpu.measure}


def records(directory: Path) -> list[Path]:
    return sorted(directory.glob("sizes-*.json"), key=lambda p: p.stat().st_mtime_ns)


def identity(r) -> tuple:
    return r.device, r.kernel_id, r.precision, r.shape, r.threads


def interrupted(capsys, tmp_path, monkeypatch, args=CPU) -> Path:
    """The sweep stopped one row into its second shape: one shape finished, one left part-way."""
    monkeypatch.chdir(tmp_path)
    stopping(monkeypatch, 1, SHAPES[1])
    code, out, err = run(capsys, *args, "--results-dir", "res")
    assert code == 143, err
    (path,) = records(tmp_path / "res")
    return path


def edited(path: Path, to: Path, change) -> Path:
    data = json.loads(path.read_text())
    change(data)
    to.write_text(json.dumps(data))
    return to


def test_a_resumed_sweep_times_only_the_shapes_left_and_keeps_the_rest_as_they_were(capsys, tmp_path,
                                                                                   monkeypatch):
    first = interrupted(capsys, tmp_path, monkeypatch)
    earlier = load(first).record
    assert not earlier.complete and {r.shape for r in earlier.results} == set(SHAPES[:2])
    digests = earlier.options[resume.SOURCES_KEY]
    assert set(digests) == {"cpu rung 1 fp32", "cpu rung 3 fp32"} and all(len(d) == 16 for d in digests.values())

    calls = counting(monkeypatch)
    code, out, err = run(capsys, *CPU, "--results-dir", "res", "--resume", first)
    assert code == 0, err
    assert set(calls) == set(SHAPES[1:])  # the part-way shape again, whole, and the one never reached
    assert f"--resume {first}: carried 3 rows at the 1 shapes it finished; running the other 2" in err
    assert f"Resumed from {first}: the rows at the shapes it had finished are its own" in out

    second = next(p for p in records(tmp_path / "res") if p != first)
    record = load(second).record
    assert record.complete and record.planned == len(record.results) == 9
    assert record.options["resume"] == str(first) and record.options[resume.SOURCES_KEY] == digests
    before = {identity(r): r for r in earlier.results if r.shape == SHAPES[0]}
    now = {identity(r): r for r in record.results}
    assert set(before) < set(now)
    assert all(now[k].samples == r.samples and now[k].notes == r.notes and now[k].params == r.params
               for k, r in before.items())
    assert {r.shape for r in record.results} == set(SHAPES)
    assert load(first).record.results == earlier.results  # the earlier record is left as it was

    # resumed from the finished record, nothing is left to time
    calls.clear()
    code, out, err = run(capsys, *CPU, "--no-save", "--resume", second)
    assert code == 0, err
    assert calls == [] and "carried 9 rows at the 3 shapes it finished; nothing left to run" in err
    assert out.count("OpenBLAS") >= 1 and "1 naive" in out and "3 1D tiling" in out


def test_a_shape_carries_only_with_a_row_of_every_kernel_this_run_has_there(capsys, tmp_path, monkeypatch):
    first = interrupted(capsys, tmp_path, monkeypatch)
    # a kernel the earlier run did not have: no shape of it is whole, so every shape runs
    calls = counting(monkeypatch)
    code, out, err = run(capsys, *CPU, "-i", "2", "--no-save", "--resume", first)
    assert code == 0, err
    assert "no shape of this run had a row of every kernel timed there; running all 3" in err
    assert sorted(set(calls), key=SHAPES.index) == SHAPES
    # fewer kernels than it had: their rows carry, the others' are left behind
    calls.clear()
    fewer = [a for i, a in enumerate(CPU) if CPU[i:i + 2] != ["-i", "3"] and CPU[i - 1:i + 1] != ["-i", "3"]]
    code, out, err = run(capsys, *fewer, "--results-dir", "res2", "--resume", first)
    assert code == 0, err
    assert "carried 2 rows at the 1 shapes" in err and set(calls) == set(SHAPES[1:])
    (second,) = records(tmp_path / "res2")
    assert {r.kernel_id for r in load(second).record.results} == {0, 1}


def test_a_row_with_other_parameters_than_this_run_would_use_is_timed_again(capsys, tmp_path, monkeypatch):
    """The shipped choice tables and the tuning cache can change between the runs without the source changing:
    a row timed with other parameters than this run chooses at its shape does not carry (nor its shape)."""
    first = interrupted(capsys, tmp_path, monkeypatch)

    def other_params(data):
        next(r for r in data["results"] if r["kernel_id"] == 3)["params"] = {"BM": 8}
    other = edited(first, tmp_path / "other.json", other_params)
    calls = counting(monkeypatch)
    code, out, err = run(capsys, *CPU, "--no-save", "--resume", other)
    assert code == 0, err
    assert "no shape of this run had a row of every kernel timed there" in err and SHAPES[0] in calls


def test_a_kernel_files_rows_carry_while_its_code_is_the_same(capsys, tmp_path, monkeypatch):
    """A kernel file is known by its path and its code (with what it includes): an edit of a comment keeps its
    rows; an edit of its code refuses the record, naming the file."""
    monkeypatch.chdir(tmp_path)
    example = Path(__file__).resolve().parent.parent / "examples" / "blocked_sgemm.c"
    mine = tmp_path / "mine.c"
    mine.write_text(example.read_text())
    args = ["sizes", "--device", "cpu", "--sweep", "16,24", "--kernel-file", mine, *FAST]
    stopping(monkeypatch, -1, SHAPES[1])
    code, out, err = run(capsys, *args, "--results-dir", "res")
    assert code == 143, err
    (first,) = records(tmp_path / "res")
    assert set(load(first).record.options[resume.SOURCES_KEY]) == {str(mine)}

    mine.write_text(mine.read_text() + "\n/* a comment added since */\n")
    calls = counting(monkeypatch)
    code, out, err = run(capsys, *args, "--no-save", "--resume", first)
    assert code == 0 and "carried 2 rows at the 1 shapes it finished; running the other 1" in err, err
    assert set(calls) == {SHAPES[1]}

    mine.write_text(mine.read_text().replace("k0 += KB", "k0 += KB + 0"))
    code, out, err = run(capsys, *args, "--no-save", "--resume", first)
    assert code == 2 and f"timed another version of {mine} (source digest " in err, err


def _gpu_record(data):
    data["device"] = "gpu"


@pytest.mark.parametrize("change, extra, fragment", [
    (lambda d: d.update(command="compare"), [], "is a record of cpu compare: give the record of an earlier sizes"),
    (_gpu_record, [], "is a record of gpu sizes: give the record of an earlier sizes run on the CPU"),
    (lambda d: None, ["--budget", "0.5"], "was measured with --budget 0.0, this run with 0.5"),
    (lambda d: None, ["--seed", "3"], "was measured with --seed 0, this run with 3"),
    (lambda d: d["options"][resume.SOURCES_KEY].update({"cpu rung 3 fp32": "0123456789abcdef"}), [],
     "timed another version of cpu rung 3 fp32 (source digest 0123456789abcdef, now "),
    (lambda d: d["options"].pop(resume.SOURCES_KEY), [], "does not record its kernels' source digests"),
    (lambda d: d["environment"]["cpu"].update(cpu="Another CPU"), [], "ran with CPU Another CPU, this run has "),
    (lambda d: d["environment"]["cpu"].update(cores=977), [], "ran with core count 977, this run has "),
    (lambda d: d["environment"]["cpu"].update(compiler="cc 1.0"), [], "ran with C compiler cc 1.0, this run has"),
    (lambda d: d["options"][resume.SOURCES_KEY].update({"cpu rung 1 fp32": "x" * 10000}), [], "x" * 40 + "…"),
], ids=["command", "device", "budget", "seed", "digest", "no-digests", "cpu", "cores", "compiler", "long"])
def test_a_record_that_measured_something_else_is_refused_in_one_line(capsys, tmp_path, monkeypatch, change, extra,
                                                                     fragment):
    first = interrupted(capsys, tmp_path, monkeypatch)
    other = edited(first, tmp_path / "other.json", change)
    calls = counting(monkeypatch)
    code, out, err = run(capsys, *CPU, *extra, "--results-dir", "res2", "--plot", "p.png", "--resume", other)
    assert code == 2 and err.count("\n") == 1 and f"--resume {other} " in err and fragment in err, err
    assert len(err) < 400 and "Traceback" not in err and out == ""
    assert calls == [] and not (tmp_path / "res2").exists() and not (tmp_path / "p.png").exists()


@pytest.mark.parametrize("content, fragment", [
    (None, "missing.json"), ("not json", "is not JSON"), ('{"schema": 2}', "missing field 'command'")])
def test_an_unreadable_record_is_one_line_exit_2(capsys, tmp_path, monkeypatch, content, fragment):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "missing.json"
    if content is not None:
        path.write_text(content)
    calls = counting(monkeypatch)
    code, out, err = run(capsys, *CPU, "--no-save", "--resume", path)
    assert code == 2 and err.count("\n") == 1 and fragment in err and "Traceback" not in err
    assert err.startswith(f"gemmbench: error: --resume {path}") and calls == []


@pytest.mark.parametrize("command", ["run", "compare"])
def test_resume_is_for_sweeps_and_shape_set_tunes(capsys, tmp_path, command):
    code, out, err = run(capsys, command, "--device", "cpu", "-i", "1", "--resume", tmp_path / "r.json", "--no-save")
    assert code == 2 and err == "gemmbench: error: No such option '--resume'.\n"
    with pytest.raises(UserError, match=f"it is for sizes and tune --shapes, not {command}"):
        RunOptions(command=command, kernels=(1,), resume=tmp_path / "r.json")


def test_the_python_api_resumes_as_sizes_does(capsys, tmp_path, monkeypatch):
    first = interrupted(capsys, tmp_path, monkeypatch)
    calls = counting(monkeypatch)
    record = api.run([1, 3], list(SIZES), device="cpu", resume=first, warmup=0, budget=0, min_samples=1,
                     max_samples=2)
    assert record.complete and set(calls) == set(SHAPES[1:])
    assert len(record.results) == 9 and record.options["resume"] == str(first)
    # and sizes resumes from the API's record
    calls.clear()
    saved = api.run([1, 3], list(SIZES), device="cpu", warmup=0, budget=0, min_samples=1, max_samples=2, save=True,
                    results_dir=tmp_path / "api")
    (path,) = (tmp_path / "api").glob("*.json")
    assert saved.complete
    calls.clear()
    code, out, err = run(capsys, *CPU, "--no-save", "--resume", path)
    assert code == 0 and calls == [] and "nothing left to run" in err, err


# -- the GPU's side, on the host stand-in ---------------------------------------------------------------

GPU_SHAPES = [Shape(64, 64, 64), Shape(96, 80, 72), Shape(33, 17, 50)]
GPU = ["sizes", "-i", "28", "-i", "12", "--shapes", "gpu.csv", *FAST, "--no-tune-cache"]


class ChoosingGpu(StandInGpu):
    """The stand-in GPU choosing each rung's parameters as the real one does (its per-shape choice)."""

    def chosen(self, spec, shape, params=None):
        if params is not None:
            return spec, dict(params), "given"
        return spec, spec.params_for(shape.M, shape.N, shape.K, self.info.sm_count), "selected"

    def prepare(self, spec, shape, params=None):
        prepared = super().prepare(spec, shape, params)
        if params is None and not spec.is_baseline:
            _, chosen, source = self.chosen(spec, shape)
            return dataclasses.replace(prepared, params=chosen, params_source=source)
        return prepared


@pytest.fixture
def choosing(monkeypatch, stand_in):  # noqa: F811
    import gemmbench.execute.devices as devices
    monkeypatch.setattr(devices, "GpuBackend", ChoosingGpu)
    Path("gpu.csv").write_text("M,N,K\n" + "".join(f"{s.M},{s.N},{s.K}\n" for s in GPU_SHAPES))
    return stand_in


def test_on_the_gpu_a_changed_per_shape_choice_times_that_shape_again(capsys, tmp_path, choosing, monkeypatch):
    stopping(monkeypatch, 12, GPU_SHAPES[2])
    code, out, err = run(capsys, *GPU, "--results-dir", "res")
    assert code == 143, out + err
    (first,) = records(tmp_path / "res")
    earlier = load(first).record
    assert set(earlier.options[resume.SOURCES_KEY]) == {"gpu rung 12 fp32", "gpu rung 28 fp32"}
    assert all(r.params for r in earlier.results if r.kernel_id == 28)  # the rung's own choice, recorded

    calls = counting(monkeypatch, StandInGpu)
    code, out, err = run(capsys, *GPU, "--no-save", "--resume", first)
    assert code == 0 and set(calls) == {GPU_SHAPES[2]}, err

    def choice_changed(data):  # as a remade choice table would leave it: rung 28 ran otherwise at the first shape
        row = next(r for r in data["results"] if r["kernel_id"] == 28)
        row["params"] = {**row["params"], "SPLITS": row["params"]["SPLITS"] + 1}
    other = edited(first, tmp_path / "other.json", choice_changed)
    calls.clear()
    code, out, err = run(capsys, *GPU, "--no-save", "--resume", other)
    assert code == 0, err
    assert "carried 3 rows at the 1 shapes it finished; running the other 2" in err
    assert set(calls) == {GPU_SHAPES[0], GPU_SHAPES[2]}

    def other_gpu(data):
        data["environment"]["gpu"]["name"] = "NVIDIA H100"
    other = edited(first, tmp_path / "gpu.json", other_gpu)
    code, out, err = run(capsys, *GPU, "--no-save", "--resume", other)
    assert code == 2 and "ran with GPU NVIDIA H100, this run has Fake GPU" in err, err
