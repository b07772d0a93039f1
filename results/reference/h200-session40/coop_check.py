"""Scratch: rungs 15 and 18 with the warp-shared NaN recomputation (coop/), held to the float64 reference's NaN and
Inf exactly at every build the specials tests use; then what an Inf costs, before (main) and after (coop)."""
import sys, os, statistics, dataclasses
sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
import numpy as np
from conftest import plant_specials, specials_reference, specials_mismatches
from gemmbench.backend import Problem, Shape, Budget
from gemmbench.execute.local import expectations
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, baselines
here = os.path.dirname(os.path.abspath(__file__))
R15, R18 = get_spec("gpu", 15), get_spec("gpu", 18)
C15 = dataclasses.replace(R15, source=os.path.join(here, "coop", "15_3xtf32_wgmma.cu"))
C18 = dataclasses.replace(R18, source=os.path.join(here, "coop", "18_3xtf32_tma_ws.cu"))
gpu = GpuBackend()
BUILDS_18 = [(16, 64, 8, 0), (32, 128, 8, 0), (64, 128, 4, 0), (128, 128, 4, 0), (16, 128, 8, 1), (64, 64, 8, 1),
             (128, 128, 4, 1)]
def check(spec, shape, params, seed=31):
    prob = plant_specials(Problem.random(shape, seed=seed)); gpu.load(prob)
    gemm = gpu.prepare(spec, shape, params).gemm
    wrong = []
    for e in expectations(prob, *specials_reference(prob.A, prob.B)):
        gpu.set_c(np.full_like(prob.C0, np.nan) if e.C0 is None else e.C0, "fp32"); gemm(e.alpha, e.beta)
        wrong += specials_mismatches(gpu.get_c("fp32"), e, spec.precision)
    return wrong
bad = n = 0
for shape in (Shape(127, 320, 511), Shape(1031, 3, 517), Shape(64, 1025, 1283)):
    for bm, bn, st, sw in BUILDS_18:
        for splits in (1, 3):
            p = {**R18.params, "BM": bm, "BN": bn, "STAGES": st, "SPLITS": splits, "SWAP_AB": sw, **({"BK": 32} if sw else {})}
            w = check(C18, shape, p); n += 1; bad += bool(w)
            if w: print("FAIL 18", shape, p, w[0][:150], flush=True)
for shape in (Shape(127, 320, 511), Shape(200, 136, 2000)):
    for bm, bk, st, fl in ((128, 16, 6, 1), (192, 16, 6, 2), (128, 32, 4, 2)):
        p = {**R15.params, "BM": bm, "BK": bk, "STAGES": st, "FLUSH": fl}
        w = check(C15, shape, p); n += 1; bad += bool(w)
        if w: print("FAIL 15", shape, p, w[0][:150], flush=True)
for shape in (Shape(7, 13, 5), Shape(1000, 1000, 1000), Shape(200, 136, 20000)):  # as chosen (the table's params)
    for spec in (C15, C18):
        w = check(spec, shape, None); n += 1; bad += bool(w)
        if w: print("FAIL chosen", spec.id, shape, w[0][:150], flush=True)
print(f"specials: {n - bad} of {n} passed", flush=True)
# what an Inf costs
budget = Budget(warmup_seconds=0.05, min_samples=3, max_samples=100, max_seconds=0.3)
for M in (1024, 4096):
    shape = Shape(M, M, M); base = Problem.random(shape, seed=7)
    def with_(a=None, b=None):
        A, B = base.A.copy(), base.B.copy()
        if a: A[a] = np.inf
        if b: B[b] = -np.inf
        return dataclasses.replace(base, A=A, B=B)
    cases = [("finite", base), ("one +Inf in A", with_(a=(M // 2, M - 1))), ("one -Inf in B", with_(b=(0, M // 2))),
             ("+Inf in every row of A", with_(a=(slice(None), 7)))]
    for cname, prob in cases:
        gpu.load(prob)
        e = expectations(prob, *specials_reference(prob.A, prob.B))[0]
        for rname, spec in (("18 main", R18), ("18 coop", C18), ("15 main", R15), ("15 coop", C15)):
            params = dict(R18.for_device((9, 0)).params_for(M, M, M, 132)) if spec.id == 18 else None
            gemm = gpu.prepare(spec, shape, params).gemm
            gpu.set_c(np.full_like(prob.C0, np.nan), "fp32"); gemm(e.alpha, e.beta)
            wrong = specials_mismatches(gpu.get_c("fp32"), e, spec.precision)
            s, _ = gpu.measure(gemm, 1.0, 0.0, budget)
            print(f"{M}^3 {cname:24s} {rname:8s} {statistics.median(s)*1e6:10.1f} us n={len(s):3d} "
                  f"{'ok' if not wrong else 'WRONG ' + wrong[0][:100]}", flush=True)
