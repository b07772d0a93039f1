"""tune across a shape set (no GPU): candidate rows tied to their shapes,
shared out over GPUs, run by the one execution path; the per-shape choice
table it writes; the tuning cache it fills."""

from __future__ import annotations

import dataclasses

import numpy as np

from gemmbench.backend import Budget, Prepared, Shape
from gemmbench.execute.gpus import plan_orders
from gemmbench.execute.local import Batch, Entry, run_plan
from gemmbench.plan import Plan, Row
from gemmbench.records.results import RunRecord
from gemmbench.rungs import any_shape, get_spec
from gemmbench.tuning import candidates, candidates_at, compile_candidates

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


def test_gpus_share_the_candidates_and_run_cublas_at_the_shapes_of_theirs():
    orders = plan_orders(tune_plan(gpus=(0, 1)))
    candidates = sorted((r.shape.M, dict(r.params)["BM"]) for o in orders for r in o.plan.rows if r.params)
    assert candidates == sorted((r.shape.M, dict(r.params)["BM"]) for r in tune_plan().rows if r.params)
    for order in orders:
        mine = [r for r in order.plan.rows if r.params]
        assert order.plan.shapes == tuple(s for s in SHAPES if any(r.shape == s for r in mine))
        assert [r.kernel_id for r in order.plan.rows if r.params is None] == [0]
    assert sum(o.plan.steps for o in orders) == 6 + sum(len(o.plan.shapes) for o in orders)


# -- what tune tries at each shape --------------------------------------------------------

RUNG28 = get_spec("gpu", 28)
H200_SMS = 132


def test_rung_28_proposes_its_own_candidates_per_shape_its_usual_choice_first():
    shapes = [Shape(1, 4096, 4096), Shape(1024, 1023, 1024), Shape(64, 64, 131072)]
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


def test_candidates_that_differ_only_in_runtime_parameters_compile_once(monkeypatch):
    import gemmbench.gpu.compile as compile
    built = []
    monkeypatch.setattr(compile, "cubin", lambda spec, cc, params: built.append(tuple(spec.defines(params))))
    tried, _ = candidates_at(RUNG28, [Shape(1, 4096, 4096), Shape(1000, 1000, 1000)], H200_SMS)
    found = list({repr(sorted(p.items())): p for ps in tried.values() for p in ps}.values())
    outcome = list(compile_candidates(RUNG28, (9, 0), found, jobs=4))
    assert [p for p, _ in outcome] == found and all(error is None for _, error in outcome)
    assert len(found) > 50 and len(built) == len(set(built)) <= len(any_shape.CONFIGS)  # one build per loop and tile
