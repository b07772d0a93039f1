"""tune across a shape set (no GPU): candidate rows tied to their shapes,
shared out over GPUs, run by the one execution path; the per-shape choice
table it writes; the tuning cache it fills."""

from __future__ import annotations

import shlex
import signal
from types import SimpleNamespace

import numpy as np
import pytest

from gemmbench import cli
from gemmbench.backend import Budget, Prepared, Shape
from gemmbench.errors import UserError
from gemmbench.fsutil import TargetError
from gemmbench.execute.gpus import plan_orders, run_on_gpus
from gemmbench.execute.interrupts import Interrupted, Interrupts
from gemmbench.execute.local import Batch, Entry, run_plan
from gemmbench.execute.recording import Recording
from gemmbench.output.report import Reporter
from gemmbench.plan import Plan, Row
from gemmbench.records.results import KernelResult, RunRecord
from gemmbench.records.store import load
from gemmbench.rungs import any_shape, choice_table, get_spec
from gemmbench.tuning import (TuningCache, candidates, candidates_at, compile_candidates, shape_class,
                              source_digest)
from gemmbench.verify import Verification

SHAPES = (Shape(8, 8, 8), Shape(16, 8, 4), Shape(4, 4, 32))


class HostBackend:
    """Exact GEMMs on the host; a call 'takes' what ``seconds(spec, shape, params)`` says."""

    device = "gpu"

    def __init__(self, seconds=lambda spec, shape, params: 1e-3):
        self.seconds = seconds
        self.prepared = []

    def environment(self):
        return {}

    def load(self, problem):
        self.shape, self.A, self.B = problem.shape, problem.A, problem.B
        self.C = np.zeros((problem.shape.M, problem.shape.N), np.float32)

    def prepare(self, spec, shape, params=None):
        assert shape == self.shape
        self.prepared.append((spec.id, shape, None if params is None else dict(params)))
        took = self.seconds(spec, shape, params)

        def gemm(alpha, beta):
            product = alpha * (self.A.astype(np.float64) @ self.B)
            self.C = (product + beta * self.C if beta else product).astype(np.float32)
        gemm.took = took
        return Prepared(gemm, spec, dict(params or {}), "given" if params is not None else "default")

    def set_c(self, c, output="fp32"):
        self.C = c.copy()

    def get_c(self, output="fp32"):
        return self.C.copy()

    def measure(self, gemm, alpha, beta, budget, flush_l2=False):
        return [gemm.took] * 5, {}

    def reference(self, problem, inputs="fp32"):
        a, b = problem.A.astype(np.float64), problem.B.astype(np.float64)
        return a @ b, np.abs(a) @ np.abs(b)


def tune_plan(gpus=None) -> Plan:
    rows = (Row("gpu", 0, "fp32"), Row("gpu", 12, "fp32"))
    plan = Plan("tune", "gpu", rows, SHAPES, Budget(0, 5, 5, 0), gpus=gpus, spread="candidates")
    return plan.with_candidates({SHAPES[0]: [{"BM": 64}, {"BM": 128}], SHAPES[1]: [{"BM": 64}],
                                 SHAPES[2]: [{"BM": 32}, {"BM": 64}, {"BM": 256}]}, not_compiled=0)


def test_the_plan_has_one_row_per_candidate_per_shape():
    plan = tune_plan()
    tied = [(r.shape, dict(r.params)["BM"]) for r in plan.rows if r.kernel_id == 12]
    assert tied == [(SHAPES[0], 64), (SHAPES[0], 128), (SHAPES[1], 64), (SHAPES[2], 32), (SHAPES[2], 64),
                    (SHAPES[2], 256)]
    assert [r.shape for r in plan.rows if r.kernel_id == 0] == [None]  # the library row runs at every shape
    assert plan.steps == 6 + 3


def test_each_candidate_runs_at_its_own_shape_only():
    backend = HostBackend()
    plan = tune_plan()
    spec0, spec12 = get_spec("gpu", 0), get_spec("gpu", 12)
    entries = [Entry(backend, spec0 if r.kernel_id == 0 else spec12, r.given_params, shape=r.shape)
               for r in plan.rows]
    batch = Batch(entries, list(plan.shapes), budget=plan.budget, device="gpu")
    record = RunRecord("tune", "gpu", {}, {})
    run_plan(batch, record.results.append)
    ran = [(r.kernel_id, r.shape, r.params.get("BM")) for r in record.results]
    assert ran == [(0, SHAPES[0], None), (12, SHAPES[0], 64), (12, SHAPES[0], 128),
                   (0, SHAPES[1], None), (12, SHAPES[1], 64),
                   (0, SHAPES[2], None), (12, SHAPES[2], 32), (12, SHAPES[2], 64), (12, SHAPES[2], 256)]
    assert batch.steps == len(record.results) == plan.steps
    assert all(r.status == "pass" for r in record.results)


def test_a_shape_set_on_gpus_keeps_each_shapes_candidates_on_one_gpu():
    orders = plan_orders(tune_plan(gpus=(0, 1)))
    where = {}
    for order in orders:
        for r in order.plan.rows:
            if r.params:
                where.setdefault(r.shape, set()).add(order.gpu)
    assert set(where) == set(SHAPES) and all(len(gpus) == 1 for gpus in where.values())
    assert {g for gpus in where.values() for g in gpus} == {0, 1}
    three = plan_orders(tune_plan(gpus=(0, 1, 2, 3)))  # fewer shapes than GPUs: candidates shared one by one
    assert len(three) == 4 and sum(len([r for r in o.plan.rows if r.params]) for o in three) == 6


def test_gpus_share_the_candidates_and_run_cublas_at_the_shapes_of_theirs():
    orders = plan_orders(tune_plan(gpus=(0, 1)))
    candidates = sorted((r.shape.M, dict(r.params)["BM"]) for o in orders for r in o.plan.rows if r.params)
    assert candidates == sorted((r.shape.M, dict(r.params)["BM"]) for r in tune_plan().rows if r.params)
    for order in orders:
        mine = [r for r in order.plan.rows if r.params]
        assert order.plan.shapes == tuple(s for s in SHAPES if any(r.shape == s for r in mine))
        assert [r.kernel_id for r in order.plan.rows if r.params is None] == [0]
    assert sum(o.plan.steps for o in orders) == 6 + sum(len(o.plan.shapes) for o in orders)


def tied_worker(order, outbox):
    """A GPU worker's messages for its share, each row at the shapes it runs at (real 'spawn' process, no CUDA)."""
    for shape in order.plan.shapes:
        for row in (r for r in order.plan.rows if r.runs_at(shape)):
            bm = dict(row.params or ()).get("BM", 0)
            result = KernelResult("gpu", row.kernel_id, f"rung{row.kernel_id}", "fp32", shape, "pass",
                                  params=row.given_params or {}, params_source="given" if row.params else "default",
                                  verification=Verification(1e-7, 1e-5, 0), samples=[1e-3 * (1 + bm / 64)] * 5,
                                  gpu=order.gpu)
            outbox.put((order.gpu, "result", result.to_dict()))
    outbox.put((order.gpu, "done", None))


def test_a_shape_set_tune_on_two_gpus_is_one_record_each_shape_against_its_gpus_cublas():
    plan = tune_plan(gpus=(0, 1))
    record = RunRecord("tune", "gpu", {"seed": 0}, {"gpus": {}})
    failed = run_on_gpus(plan, SimpleNamespace(gpu=None), [], Recording(record, None, Interrupts(), print),
                         Reporter("csv", quiet=True), tied_worker)
    assert not failed
    wanted = [(r.shape, r.given_params) for r in plan.rows if r.params]
    got = [(r.shape, r.params) for r in record.results if r.kernel_id == 12]
    assert sorted(map(repr, got)) == sorted(map(repr, wanted))
    order = [(r.shape, r.gpu) for r in record.results]
    assert order == sorted(order, key=lambda k: (SHAPES.index(k[0]), k[1]))  # by shape, then GPU
    for r in (r for r in record.results if r.kernel_id == 12):  # each against the cuBLAS of its own GPU and shape
        base = record.baseline_of(r)
        assert (base.kernel_id, base.shape, base.gpu) == (0, r.shape, r.gpu)
        mine = [x.params["BM"] for x in record.results if x.kernel_id == 12 and (x.shape, x.gpu) == (r.shape, r.gpu)]
        assert mine == [p["BM"] for s, p in wanted if s == r.shape and p["BM"] in mine]  # in plan order
    assert {s: r.params["BM"] for s, r in record.best_by_shape(12).items()} == {s: 32 if s == SHAPES[2] else 64
                                                                               for s in SHAPES}


# -- what tune tries at each shape --------------------------------------------------------

RUNG28 = get_spec("gpu", 28)
H200_SMS = 132


def test_rung_28_proposes_its_own_candidates_per_shape_its_usual_choice_first():
    shapes = [Shape(2, 4096, 4096), Shape(1024, 1023, 1024), Shape(64, 64, 131072)]  # M = 1 would be a GEMV
    tried, valid = candidates_at(RUNG28, shapes, H200_SMS)
    for shape in shapes:
        own = [{**any_shape.CONFIGS[n], "SPLITS": s, "PACK": p}
               for n, s, p in any_shape.candidates(shape.M, shape.N, shape.K, H200_SMS)]
        assert tried[shape][0] == RUNG28.params_for(shape.M, shape.N, shape.K, H200_SMS)
        assert sorted(map(repr, tried[shape])) == sorted(map(repr, own)) and valid[shape] == len(own)
    assert len(tried[shapes[0]]) != len(tried[shapes[2]])  # a list of the shape's own
    limited, _ = candidates_at(RUNG28, shapes, H200_SMS, limit=5, seed=1)
    assert all(len(limited[s]) == 5 and limited[s][0] == tried[s][0] for s in shapes)
    assert limited == candidates_at(RUNG28, shapes, H200_SMS, limit=5, seed=1)[0]  # seeded


def test_other_rungs_try_their_search_space_the_same_at_every_shape():
    rung12 = get_spec("gpu", 12)
    tried, valid = candidates_at(rung12, SHAPES, H200_SMS, limit=7, seed=3)
    assert all(tried[s] == candidates(rung12, 7, 3)[0] for s in SHAPES)
    assert set(valid.values()) == {candidates(rung12)[1]}


def test_where_m_or_n_is_1_a_rung_without_its_own_list_tries_only_its_gemv_path():
    """Rungs 30-33 run their GEMV path where M or N is 1 (GEMV = 1): any tile of their search space would replace
    it with a slower one, so tune tries only that path there, and the search space at the other shapes."""
    from gemmbench.commands import _candidates_note
    rung32 = get_spec("gpu", 32).for_device((9, 0))
    assert rung32.shape_candidates is None
    gemv, square = Shape(1, 4096, 4096), Shape(1000, 1000, 1000)
    tried, valid = candidates_at(rung32, [gemv, square], H200_SMS, limit=7, seed=3)
    assert tried[gemv] == [rung32.params_for(1, 4096, 4096, H200_SMS)] and tried[gemv][0]["GEMV"] == 1
    assert valid[gemv] == 1
    assert tried[square] == candidates(rung32, 7, 3)[0] and valid[square] == candidates(rung32)[1] > 7
    assert _candidates_note(rung32, tried, valid) == (
        f"{rung32.name}: {valid[square]} valid configurations; trying 7 at 1 of its 2 shapes; only its GEMV path "
        "(M or N is 1; no tile to choose) at 1 of its 2 shapes")
    alone, counts = candidates_at(rung32, [gemv], H200_SMS)
    assert _candidates_note(rung32, alone, counts) == (
        f"{rung32.name}: only its GEMV path (M or N is 1; no tile to choose) at 1x4096x4096")


def test_candidates_that_differ_only_in_runtime_parameters_compile_once(monkeypatch):
    import gemmbench.gpu.compile as compile
    built = []
    monkeypatch.setattr(compile, "cubin", lambda spec, cc, params: built.append(tuple(spec.defines(params))))
    tried, _ = candidates_at(RUNG28, [Shape(2, 4096, 4096), Shape(1000, 1000, 1000)], H200_SMS)
    found = list({repr(sorted(p.items())): p for ps in tried.values() for p in ps}.values())
    outcome = list(compile_candidates(RUNG28, (9, 0), found, jobs=4))
    assert [p for p, _ in outcome] == found and all(error is None for _, error in outcome)
    assert len(found) > 50 and len(built) == len(set(built)) <= len(any_shape.CONFIGS)  # one build per loop and tile


# -- gemmbench tune --shapes end to end, on a stand-in GPU ----------------------------------

SET_TEXT = "M,N,K,name,group\n8,8,8,tiny,t\n2,64,64,thin,t\n60,60,60,sixty,t\n64,64,256,long,t\n64,64,64,cube,t\n"
SET_SHAPES = [Shape(8, 8, 8), Shape(2, 64, 64), Shape(60, 60, 60), Shape(64, 64, 256), Shape(64, 64, 64)]
FAST = ["--warmup", "0", "--budget", "0", "--min-samples", "1", "--max-samples", "2"]


def fake_seconds(spec, shape, params) -> float:
    """A made-up time per call: cuBLAS 10 us; a candidate's the longer, the further its splits are from
    K/64 and its tile's rows from M (so each shape has a best of its own)."""
    if params is None:
        return 1e-5
    p = {"SPLITS": 1, "PACK": 0, "KMAJOR_A": 0, **params}
    return 1e-5 * (1 + 0.1 * abs(p["SPLITS"] - max(1, shape.K // 64)) + 0.05 * p["PACK"] + 0.3 * p["KMAJOR_A"]
                   + abs(p["BM"] - shape.M) / 1600)


class StandInGpu(HostBackend):
    """What Devices and tune need of GpuBackend, on the host."""

    def __init__(self, log=None, tuning=None, ordinal=0):
        super().__init__(fake_seconds)
        self.tuning = tuning
        self.info = SimpleNamespace(name="Fake GPU", compute_capability=(9, 0), sm_count=H200_SMS)

    def environment(self):
        return {"gpu": {"name": "Fake GPU", "compute_capability": "9.0", "sm_count": H200_SMS,
                        "max_sm_clock_mhz": 1980.0, "peak_fp32_tflops": 66.9, "driver_version": "580",
                        "cuda_driver_api": "13.0", "index": 0, "uuid": "GPU-0", "pci_bus_id": "0000:00:00.0"},
                "cublas": "13.1.0"}

    def check_fits(self, shape):
        pass


@pytest.fixture
def stand_in(monkeypatch, tmp_path):
    """One stand-in GPU, nvcc replaced by a list of the builds asked for, a cache folder of the test's own."""
    import gemmbench.execute.devices as devices
    import gemmbench.gpu.compile as compile
    import gemmbench.gpu.device as device
    built = []
    monkeypatch.setattr(device, "open_device", lambda ordinal=None: None)
    monkeypatch.setattr(device, "device_count", lambda: 1)
    monkeypatch.setattr(devices, "GpuBackend", StandInGpu)
    monkeypatch.setattr(compile, "cubin", lambda spec, cc, params=None: built.append(tuple(spec.defines(params))))
    monkeypatch.setenv("GEMMBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "set.csv").write_text(SET_TEXT)
    return built


def run(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def expected_best(shape: Shape) -> dict:
    tried, _ = candidates_at(RUNG28, [shape], H200_SMS)
    return min(tried[shape], key=lambda p: fake_seconds(RUNG28, shape, p))


def test_tune_across_a_shape_set_writes_a_table_and_one_cache_entry_per_class(capsys, tmp_path, stand_in):
    args = ["tune", "-i", "28", "--shapes", "set.csv", "--table", "out.json", *FAST, "--results-dir", "res",
            "--format", "markdown"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    tried, _ = candidates_at(RUNG28, SET_SHAPES, H200_SMS)

    # one record: cuBLAS at every shape, each candidate at its own shape
    (saved,) = (tmp_path / "res").glob("tune-*.json")
    record = load(saved).record
    assert [(r.kernel_id, r.shape) for r in record.results if r.kernel_id == 0] == [(0, s) for s in SET_SHAPES]
    for shape in SET_SHAPES:
        ran = [r.params for r in record.results if r.kernel_id == 28 and r.shape == shape]
        assert ran == tried[shape] and all(r.status == "pass" for r in record.results)
    assert record.planned == len(record.results) == len(SET_SHAPES) + sum(map(len, tried.values()))
    # compiled once per loop and tile, however many splits and PACKs
    assert len(stand_in) == len(set(stand_in)) == len({tuple(RUNG28.defines(p)) for ps in tried.values() for p in ps})

    # the output: per shape, the best beside cuBLAS and its %
    for shape, name in zip(SET_SHAPES, ["tiny", "thin", "sixty", "long", "cube"]):
        line = next(l for l in out.splitlines() if l.startswith(f"| {shape} {name} |"))
        best = expected_best(shape)
        assert f"{len(tried[shape])}/{len(tried[shape])}" in line and f"SPLITS={best['SPLITS']}" in line
        assert f"| {100 * 1e-5 / fake_seconds(RUNG28, shape, best):.1f} |" in line
    assert "| shape | timed | best parameters |" in out and "| cuBLAS GFLOP/s | % cuBLAS |" in out
    assert "each shape's fastest is beside cuBLAS at that shape" in out and "Timed with alpha=1" in out

    # the table
    table = choice_table.read(tmp_path / "out.json")
    assert table.command == shlex.join(["gemmbench", *args])
    assert (table.rung, table.gpu, table.sm_count, table.source_digest) == (28, "Fake GPU", H200_SMS,
                                                                            source_digest(RUNG28))
    assert list(table.choices) == SET_SHAPES
    for shape, choice in table.choices.items():
        assert choice.params == expected_best(shape) and choice.candidates == len(tried[shape])
        assert choice.time_us == pytest.approx(1e6 * fake_seconds(RUNG28, shape, choice.params), abs=0.01)
        # beside the best, every other candidate within 5% of it, fastest first
        us = {repr(sorted(p.items())): 1e6 * fake_seconds(RUNG28, shape, p) for p in tried[shape]}
        near = sorted(t for key, t in us.items() if key != repr(sorted(choice.params.items()))
                      and t <= 1.05 * choice.time_us)
        assert [c.time_us for c in choice.close] == pytest.approx(near, abs=0.01)
        assert all(choice.time_of(p) == pytest.approx(t, abs=0.01) for p in tried[shape]
                   if (t := us[repr(sorted(p.items()))]) <= 1.05 * choice.time_us)
    assert sum(len(c.close) for c in table.choices.values()) > 0  # the made-up times do hold near-ties

    # the tuning cache: per shape class, the best of its largest shape
    entries = dict(TuningCache(tmp_path / "cache" / "tuning.json"))
    assert len(entries) == len({shape_class(s) for s in SET_SHAPES}) == 4
    cube = next(e for k, e in entries.items() if k.endswith("| 64x64x64"))
    assert cube["shape"] == "64x64x64" and cube["params"] == expected_best(Shape(64, 64, 64))  # not 60x60x60's
    assert len({repr(expected_best(s)) for s in SET_SHAPES}) > 2  # the shapes do differ in their best
    assert "per shape class (each dimension rounded to a power of two) the best of its largest shape" in err
    assert "wrote the best of each shape to out.json (5 shapes)" in err

    # show prints what the run printed
    code, shown, _ = run(capsys, "show", saved, "--format", "markdown")
    assert code == 0 and shown == out


def test_no_tune_cache_stores_nothing(capsys, tmp_path, stand_in):
    code, out, err = run(capsys, "tune", "-i", "28", "--shapes", "set.csv", *FAST, "--no-save", "--no-tune-cache")
    assert code == 0 and "nothing stored in the tuning cache" in err
    assert not (tmp_path / "cache" / "tuning.json").exists()


def test_other_rungs_try_their_search_space_at_each_shape(capsys, tmp_path, stand_in):
    code, out, err = run(capsys, "tune", "-i", "12", "--shapes", "set.csv", "--limit", "3", *FAST,
                         "--results-dir", "res")
    assert code == 0, err
    record = load(next((tmp_path / "res").glob("tune-*.json"))).record
    params = {s: [r.params for r in record.results if r.kernel_id == 12 and r.shape == s] for s in SET_SHAPES}
    assert all(len(p) == 3 and p == params[SET_SHAPES[0]] for p in params.values())
    assert "trying 3 at each of 5 shapes" in err


@pytest.mark.parametrize("rung,shape,note", [
    ("12", ("256", "256", "256"), "valid configurations; trying 3 at 256x256x256"),
    ("32", ("1", "4096", "4096"), "only its GEMV path (M or N is 1; no tile to choose) at 1x4096x4096"),
    ("32", ("64", "4096", "4096"), "valid configurations; trying 3 at 64x4096x4096")], ids=["12", "32-gemv", "32"])
def test_tune_at_one_shape_says_what_it_tries(capsys, tmp_path, stand_in, rung, shape, note):
    """One shape given by -m/-n/-k: a search space sampled (--limit 3), or at a GEMV shape only the rung's GEMV path,
    which is what the record then holds."""
    m, n, k = shape
    code, out, err = run(capsys, "tune", "-i", rung, "-m", m, "-n", n, "-k", k, "--limit", "3", *FAST,
                         "--results-dir", "res")
    assert code == 0, err
    assert note in err
    record = load(next((tmp_path / "res").glob("tune-*.json"))).record
    tried = [r.params for r in record.results if r.kernel_id == int(rung)]
    assert len(tried) == (1 if "GEMV" in note else 3) and all(("GEMV" in p) == ("GEMV" in note) for p in tried)


def test_an_existing_table_is_kept_without_overwrite(capsys, tmp_path, stand_in):
    (tmp_path / "out.json").write_text("the table I made")
    code, out, err = run(capsys, "tune", "-i", "28", "--shapes", "set.csv", "--table", "out.json", *FAST,
                         "--results-dir", "res")
    assert code == 2 and err.count("\n") == 1 and "--table out.json already exists; give --overwrite" in err
    assert (tmp_path / "out.json").read_text() == "the table I made"
    assert not (tmp_path / "res").exists() and not stand_in  # nothing compiled, run or saved
    code, out, err = run(capsys, "tune", "-i", "28", "--shapes", "set.csv", "--table", "out.json", "--overwrite",
                         *FAST, "--no-save")
    assert code == 0 and list(choice_table.read(tmp_path / "out.json").choices) == SET_SHAPES


@pytest.mark.parametrize("args, fragment", [
    (["-m", "64"], "-m 64 does not go with --shapes"),
    (["-k", "8"], "-k 8 does not go with --shapes"),
])
def test_shapes_with_a_pinned_dimension_is_one_line_exit_2(capsys, tmp_path, args, fragment):
    (tmp_path / "set.csv").write_text(SET_TEXT)
    code, out, err = run(capsys, "tune", "-i", "28", "--shapes", tmp_path / "set.csv", "--table", tmp_path / "t.json",
                         *args, "--results-dir", tmp_path / "res")
    assert code == 2 and err.count("\n") == 1 and fragment in err and "Traceback" not in err
    assert out == "" and sorted(p.name for p in tmp_path.iterdir()) == ["set.csv"]


def test_a_table_needs_a_shape_set(capsys, tmp_path):
    code, out, err = run(capsys, "tune", "-i", "28", "--table", tmp_path / "t.json", "--no-save")
    assert code == 2 and err.count("\n") == 1 and "give --shapes too" in err
    assert not (tmp_path / "t.json").exists()


def test_the_python_api_tunes_across_a_shape_set_as_the_command_line_does(capsys, tmp_path, stand_in):
    from gemmbench import api
    record = api.tune(28, "set.csv", table="out.json", warmup=0, budget=0, min_samples=1, max_samples=2)
    tried, _ = candidates_at(RUNG28, SET_SHAPES, H200_SMS)
    assert record.complete and [r.shape for r in record.results if r.kernel_id == 0] == SET_SHAPES
    best = record.best_by_shape(28)
    assert {shape: r.params for shape, r in best.items()} == {s: expected_best(s) for s in SET_SHAPES}
    table = choice_table.read(tmp_path / "out.json")
    assert table.command == "gemmbench.api.tune(28, 'set.csv', table='out.json')"
    assert {s: c.params for s, c in table.choices.items()} == {s: expected_best(s) for s in SET_SHAPES}
    assert len(dict(TuningCache(tmp_path / "cache" / "tuning.json"))) == 4  # one entry per shape class
    assert not (tmp_path / "results").exists() and capsys.readouterr().out == ""  # nothing saved or printed
    with pytest.raises(TargetError, match="out.json"):  # an existing table is kept without overwrite=True
        api.tune(28, [(8, 8, 8)], table="out.json", warmup=0, budget=0)
    with pytest.raises(UserError, match="unknown option 'top_k'"):
        api.tune(28, [(8, 8, 8)], top_k=3)


@pytest.mark.parametrize("stop_at, stored", [(3, 0), (20, 1)])
def test_a_run_that_did_not_finish_caches_only_shapes_whose_candidates_all_ran(capsys, tmp_path, stand_in,
                                                                               monkeypatch, stop_at, stored):
    """The set's first shape (8x8x8) has fewer candidates than the stop point in the second case: its search
    finished and its best is kept; the shape that was cut short stores nothing."""
    tried, _ = candidates_at(RUNG28, SET_SHAPES, H200_SMS)
    calls = []

    def interrupted(self, gemm, *a, **k):
        calls.append(1)
        if len(calls) == stop_at:
            raise Interrupted(signal.SIGTERM)
        return [1e-5] * 5, {}
    monkeypatch.setattr(StandInGpu, "measure", interrupted)
    assert 1 + len(tried[SET_SHAPES[0]]) < 20 < 2 + len(tried[SET_SHAPES[0]]) + len(tried[SET_SHAPES[1]])
    code, out, err = run(capsys, "tune", "-i", "28", "--shapes", "set.csv", *FAST, "--results-dir", "res")
    assert code == 143
    path = tmp_path / "cache" / "tuning.json"
    entries = dict(TuningCache(path)) if path.exists() else {}
    assert [e["shape"] for e in entries.values()] == [str(SET_SHAPES[0])] * stored
    assert ("nothing stored in the tuning cache (no shape had every candidate run)" in err) == (stored == 0)
    if stored:
        assert "the tuning cache takes only the 1 of 2 shapes where every candidate ran" in err


def test_a_run_that_did_not_finish_writes_no_table(capsys, tmp_path, stand_in, monkeypatch):
    calls = []

    def interrupted(self, gemm, *a, **k):
        calls.append(1)
        if len(calls) == 4:
            raise Interrupted(signal.SIGTERM)
        return [1e-5] * 5, {}
    monkeypatch.setattr(StandInGpu, "measure", interrupted)
    code, out, err = run(capsys, "tune", "-i", "28", "--shapes", "set.csv", "--table", "out.json", *FAST,
                         "--results-dir", "res")
    assert code == 143 and "out.json not written" in err and not (tmp_path / "out.json").exists()
