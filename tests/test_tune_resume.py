"""tune --resume (no GPU): a shape set's tune cut short, resumed from its
record, runs only the shapes it left, and writes the table a whole run
writes; a record that measured something else is refused in one line."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from gemmbench import resume
from gemmbench.backend import Shape
from gemmbench.execute.interrupts import Interrupted
from gemmbench.records.results import KernelResult, RunRecord, to_json
from gemmbench.records.store import load
from gemmbench.rungs import choice_table
from gemmbench.tuning import candidates_at, source_digest
from gemmbench.verify import Verification
from test_tune_shapes import (FAST, H200_SMS, RUNG28, SET_SHAPES, StandInGpu, expected_best, run,  # noqa: F401
                              stand_in)

TRIED, _ = candidates_at(RUNG28, SET_SHAPES, H200_SMS)
BASE = ["tune", "-i", "28", "--shapes", "set.csv", *FAST, "--no-tune-cache"]


def counting(monkeypatch, stop_at: tuple[Shape, int] | None = None) -> list:
    """The shape of each call the stand-in times; with ``stop_at`` (shape, n), a SIGTERM arrives at that
    shape's n-th timed call."""
    calls, measure = [], StandInGpu.measure

    def counted(self, gemm, *args, **kwargs):
        calls.append(self.shape)
        if stop_at is not None and calls.count(stop_at[0]) == stop_at[1]:
            raise Interrupted(signal.SIGTERM)
        return measure(self, gemm, *args, **kwargs)
    monkeypatch.setattr(StandInGpu, "measure", counted)
    return calls


def records(directory: Path) -> list[Path]:
    return sorted(directory.glob("tune-*.json"), key=lambda p: p.stat().st_mtime_ns)


def identity(r: KernelResult) -> tuple:
    return r.kernel_id, r.shape, tuple(sorted(r.params.items()))


def interrupted_run(capsys, tmp_path, monkeypatch) -> Path:
    """A tune of the set stopped two rows into its third shape: two shapes finished, one left part-way."""
    counting(monkeypatch, stop_at=(SET_SHAPES[2], 3))  # cuBLAS and one candidate timed there
    code, out, err = run(capsys, *BASE, "--results-dir", "res")
    assert code == 143
    (path,) = records(tmp_path / "res")
    return path


def test_a_resumed_tune_runs_only_the_shapes_left_and_writes_a_whole_runs_table(capsys, tmp_path, stand_in,
                                                                                 monkeypatch):
    first = interrupted_run(capsys, tmp_path, monkeypatch)
    earlier = load(first).record
    assert not earlier.complete and {r.shape for r in earlier.results} == set(SET_SHAPES[:3])

    calls = counting(monkeypatch)
    args = [*BASE, "--results-dir", "res", "--table", "out.json", "--resume", first]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    rest = SET_SHAPES[2:]  # the third shape again, whole, and the two never reached
    assert set(calls) == set(rest)  # nothing timed again at the shapes carried
    n_carried = 2 + len(TRIED[SET_SHAPES[0]]) + len(TRIED[SET_SHAPES[1]])
    assert f"--resume {first}: carried {n_carried} rows at the 2 shapes it finished; running the other 3" in err

    # the new record holds every shape: the finished ones' rows as they were measured, the rest new
    second = next(p for p in records(tmp_path / "res") if p != first)
    record = load(second).record
    assert record.complete and record.planned == len(record.results) == len(SET_SHAPES) + sum(map(len, TRIED.values()))
    before = {identity(r): r for r in earlier.results if r.shape in SET_SHAPES[:2]}
    now = {identity(r): r for r in record.results}
    assert set(before) <= set(now) and all(now[k].samples == r.samples and now[k].notes == r.notes
                                           for k, r in before.items())
    assert record.options["resume"] == str(first) and record.options["source_digest"] == source_digest(RUNG28)
    assert load(first).record.results == earlier.results  # the earlier record is left as it was

    # the table is what one whole run writes, and records the command that remakes it whole
    table = choice_table.read(tmp_path / "out.json")
    assert list(table.choices) == SET_SHAPES
    assert {s: c.params for s, c in table.choices.items()} == {s: expected_best(s) for s in SET_SHAPES}
    assert all(c.candidates == len(TRIED[s]) for s, c in table.choices.items())
    assert "--resume" not in table.command and table.command.endswith("--table out.json")

    # resumed from the finished record, nothing is left to run: the same table again, nothing timed
    calls.clear()
    code, out, err = run(capsys, *BASE, "--no-save", "--table", "again.json", "--resume", second)
    assert code == 0, err
    assert calls == [] and "nothing left to run" in err
    assert choice_table.read(tmp_path / "again.json").choices == table.choices


def test_a_candidate_that_did_not_compile_does_not_keep_its_shapes_from_being_carried(capsys, tmp_path, stand_in,
                                                                                     monkeypatch):
    """nvcc refuses one build: its candidates have no rows anywhere, and the record names them, so a resumed run
    still carries the shapes that finished (it ran them all again before)."""
    import gemmbench.gpu.compile as compile
    refused = tuple(RUNG28.defines(TRIED[SET_SHAPES[0]][0]))

    def cubin(spec, cc, params=None):
        if tuple(spec.defines(params)) == refused:
            raise compile.CompileError("ptxas error: entry function uses too much shared data", "")
        stand_in.append(tuple(spec.defines(params)))
    monkeypatch.setattr(compile, "cubin", cubin)
    bad = {shape: [p for p in tried if tuple(RUNG28.defines(p)) == refused] for shape, tried in TRIED.items()}
    first = interrupted_run(capsys, tmp_path, monkeypatch)
    not_built = load(first).record.options["not_built"]
    assert not_built and all(tuple(RUNG28.defines(p)) == refused for p in not_built)
    assert {tuple(sorted(p.items())) for ps in bad.values() for p in ps} == {tuple(sorted(p.items())) for p in not_built}

    calls = counting(monkeypatch)
    code, out, err = run(capsys, *BASE, "--results-dir", "res", "--table", "out.json", "--resume", first)
    assert code == 0, err
    assert set(calls) == set(SET_SHAPES[2:])
    n_carried = 2 + sum(len(TRIED[s]) - len(bad[s]) for s in SET_SHAPES[:2])
    assert f"carried {n_carried} rows at the 2 shapes it finished; running the other 3" in err
    second = next(p for p in records(tmp_path / "res") if p != first)
    assert load(second).record.options["not_built"] == not_built  # for a run resumed from this one
    assert all(c.candidates == len(TRIED[s]) - len(bad[s])
               for s, c in choice_table.read(tmp_path / "out.json").choices.items())

    calls.clear()
    code, out, err = run(capsys, *BASE, "--no-save", "--resume", second)
    assert code == 0 and calls == [] and "nothing left to run" in err, err


def test_a_record_without_a_finished_shape_carries_nothing(capsys, tmp_path, stand_in, monkeypatch):
    counting(monkeypatch, stop_at=(SET_SHAPES[0], 3))  # cuBLAS and one candidate of the first shape
    code, _, _ = run(capsys, *BASE, "--results-dir", "res")
    assert code == 143
    (first,) = records(tmp_path / "res")
    calls = counting(monkeypatch)
    code, out, err = run(capsys, *BASE, "--no-save", "--resume", first)
    assert code == 0 and f"--resume {first}: no shape of this run had every candidate timed there; running all 5" in err
    assert set(calls) == set(SET_SHAPES)


def edited(path: Path, target: Path, change) -> Path:
    data = json.loads(path.read_text())
    change(data)
    target.write_text(json.dumps(data))
    return target


@pytest.mark.parametrize("change, extra, fragment", [
    (lambda d: d.update(command="sizes"), [], "is a record of gpu sizes: give the record of an earlier tune"),
    (lambda d: d["options"].update(kernels=[12]), [], "was measured with -i 12, this run with 28"),
    (lambda d: None, ["--max-samples", "3"], "was measured with --max-samples 2, this run with 3"),
    (lambda d: d["options"].update(source_digest="0123456789abcdef"), [],
     "timed another version of the kernel (source digest 0123456789abcdef, now"),
    (lambda d: d["options"].pop("source_digest"), [], "does not record its kernel's source digest"),
    (lambda d: d["environment"]["gpu"].update(name="NVIDIA H100"), [],
     "ran on a GPU with name NVIDIA H100, this one has Fake GPU"),
    (lambda d: d["environment"]["gpu"].update(sm_count=114), [], "ran on a GPU with sm_count 114, this one has 132"),
    (lambda d: d["options"].update(params=["X=1" * 10000]), [], "was measured with --param " + "X=1" * 19 + "X=…"),
], ids=["command", "kernel", "sampling", "digest", "no-digest", "gpu-name", "gpu-sms", "long"])
def test_a_record_that_measured_something_else_is_refused_in_one_line(capsys, tmp_path, stand_in, monkeypatch,
                                                                     change, extra, fragment):
    first = interrupted_run(capsys, tmp_path, monkeypatch)
    other = edited(first, tmp_path / "other.json", change)
    calls = counting(monkeypatch)
    stand_in.clear()
    code, out, err = run(capsys, *BASE, *extra, "--results-dir", "res2", "--table", "t.json", "--resume", other)
    assert code == 2 and err.count("\n") == 1 and f"--resume {other} " in err and fragment in err, err
    assert len(err) < 400  # a hostile record's value is cut short
    assert "Traceback" not in err and out == ""
    assert calls == [] and not stand_in and not (tmp_path / "res2").exists() and not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("content, fragment", [
    (None, "missing.json"), ("not json", "is not JSON"), ('{"schema": 2}', "missing field 'command'")])
def test_an_unreadable_record_is_one_line_exit_2(capsys, tmp_path, stand_in, content, fragment):
    path = tmp_path / "missing.json"
    if content is not None:
        path.write_text(content)
    code, out, err = run(capsys, *BASE, "--no-save", "--resume", path)
    assert code == 2 and err.count("\n") == 1 and fragment in err and "Traceback" not in err
    assert err.startswith(f"gemmbench: error: --resume {path}") and not stand_in


def test_resume_needs_a_shape_set(capsys, tmp_path):
    code, out, err = run(capsys, "tune", "-i", "28", "--resume", tmp_path / "r.json", "--no-save")
    assert code == 2 and err.count("\n") == 1 and "give --shapes too" in err


# -- which rows carry over ----------------------------------------------------------------------------

SHAPE_A, SHAPE_B = Shape(64, 64, 64), Shape(32, 32, 32)


def row(kid: int, shape: Shape, params: dict | None = None, visits: int | None = None,
        status: str = "pass") -> KernelResult:
    notes = {"rounds": [{"median_s": 1e-5, "samples": 2}] * visits} if visits else {}
    return KernelResult("gpu", kid, "cuBLAS" if kid == 0 else "rung 28", "fp32", shape, status,
                        params=params or {}, verification=Verification(1e-7, 1e-5, 0),
                        samples=[1e-5, 1e-5] if status == "pass" else [], notes=notes, gpu=0)


def loaded(tmp_path: Path, results: list, rounds: int = 1):
    record = RunRecord("tune", "gpu", {"rounds": rounds}, {}, results)
    path = tmp_path / "r.json"
    path.write_text(to_json(record))
    return load(path)


def test_only_shapes_with_every_candidate_and_the_library_row_carry(tmp_path):
    tried = {SHAPE_A: [{"BM": 64}, {"BM": 128}], SHAPE_B: [{"BM": 64}]}
    whole = [row(0, SHAPE_A), row(28, SHAPE_A, {"BM": 64}), row(28, SHAPE_A, {"BM": 128}, status="fail")]
    carried = resume.carry(loaded(tmp_path, whole + [row(28, SHAPE_B, {"BM": 64})]), 28, ("fp32",), tried)
    assert carried.shapes == {SHAPE_A} and [identity(r) for r in carried.rows] == [identity(r) for r in whole]
    # a candidate this run tries that the record never timed: the shape runs again
    more = {SHAPE_A: [{"BM": 64}, {"BM": 128}, {"BM": 256}]}
    assert not resume.carry(loaded(tmp_path, whole), 28, ("fp32",), more).shapes
    # rows of candidates this run does not try are left behind
    fewer = resume.carry(loaded(tmp_path, whole), 28, ("fp32",), {SHAPE_A: [{"BM": 64}]})
    assert [identity(r) for r in fewer.rows] == [identity(r) for r in whole[:2]]


def test_with_rounds_a_row_short_of_its_visits_is_not_whole(tmp_path):
    tried = {SHAPE_A: [{"BM": 64}], SHAPE_B: [{"BM": 64}]}
    rows = [row(0, SHAPE_A, visits=3), row(28, SHAPE_A, {"BM": 64}, visits=3),
            row(0, SHAPE_B, visits=2), row(28, SHAPE_B, {"BM": 64}, visits=2)]  # stopped in SHAPE_B's last round
    assert resume.carry(loaded(tmp_path, rows, rounds=3), 28, ("fp32",), tried).shapes == {SHAPE_A}


def test_on_several_gpus_the_carried_rows_stay_first_as_they_were():
    """tune --resume --gpus: the rows the record starts with keep their place; the new ones follow by shape."""
    from types import SimpleNamespace

    from gemmbench.backend import Budget
    from gemmbench.execute.gpus import run_on_gpus
    from gemmbench.execute.interrupts import Interrupts
    from gemmbench.execute.recording import Recording
    from gemmbench.output.report import Reporter
    from gemmbench.plan import Plan, Row
    from test_tune_shapes import SHAPES, tied_worker

    plan = Plan("tune", "gpu", (Row("gpu", 0, "fp32"), Row("gpu", 12, "fp32")), SHAPES, Budget(0, 5, 5, 0),
                gpus=(0, 1), spread="candidates").without_shapes({SHAPES[1]})
    plan = plan.with_candidates({SHAPES[0]: [{"BM": 64}], SHAPES[2]: [{"BM": 32}, {"BM": 64}]}, not_compiled=0)
    carried = [row(0, SHAPES[1]), row(12, SHAPES[1], {"BM": 64})]
    record = RunRecord("tune", "gpu", {"seed": 0}, {"gpus": {}})
    recording = Recording(record, None, Interrupts(), print)
    for r in carried:
        recording.keep(r)
    assert not run_on_gpus(plan, SimpleNamespace(gpu=None), [], recording, Reporter("csv", quiet=True), tied_worker)
    assert record.results[:2] == carried
    shapes = [r.shape for r in record.results[2:]]
    assert set(shapes) == {SHAPES[0], SHAPES[2]} and shapes == sorted(shapes, key=SHAPES.index)


def test_the_record_of_a_killed_tune_is_first_recovered_from_its_journal(capsys, tmp_path, stand_in, monkeypatch):
    """A SIGKILL leaves the record's last snapshot (taken after 1, 2, 4, 8... rows) and a journal of every
    row: --resume reads them all, as the next run in that folder would have."""
    from gemmbench.records.writer import RecordWriter
    earlier = load(interrupted_run(capsys, tmp_path, monkeypatch)).record
    rows, earlier.results = earlier.results, []
    writer = RecordWriter(earlier, tmp_path / "killed")
    for r in rows:
        earlier.results.append(r)
        writer.add(r)
    writer.close()  # as a kill leaves it: the journal in place, its lock released
    assert len(json.loads(writer.path.read_text())["results"]) < len(rows)
    calls = counting(monkeypatch)
    code, out, err = run(capsys, *BASE, "--no-save", "--resume", writer.path)
    assert code == 0, err
    assert "carried" in err and "at the 2 shapes it finished" in err and set(calls) == set(SET_SHAPES[2:])
    recovered = load(writer.path).record
    assert len(recovered.results) == len(rows) and not recovered.complete


def test_the_python_api_resumes_as_the_command_line_does(capsys, tmp_path, stand_in, monkeypatch):
    from gemmbench import api
    first = interrupted_run(capsys, tmp_path, monkeypatch)
    calls = counting(monkeypatch)
    record = api.tune(28, "set.csv", resume=first, table="out.json", no_tune_cache=True, warmup=0, budget=0,
                      min_samples=1, max_samples=2)
    assert record.complete and set(calls) == set(SET_SHAPES[2:])
    assert {s: r.params for s, r in record.best_by_shape(28).items()} == {s: expected_best(s) for s in SET_SHAPES}
    assert list(choice_table.read(tmp_path / "out.json").choices) == SET_SHAPES
