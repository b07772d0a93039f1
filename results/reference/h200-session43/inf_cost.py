"""Scratch: what an Inf in the inputs costs 3xTF32 now that a NaN sum is summed again in FP32: rungs 18 and 15 and
cuBLAS SGEMM at one shape, with finite inputs, one +Inf in A (one row of C), one -Inf in B (one column), +Inf in
column 7 of A (every row: all of C recomputed). Each variant verified (NaN/Inf positions and finite bound).
usage: inf_cost.py M N K"""
import sys, os, statistics, dataclasses
sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
import numpy as np
from conftest import specials_reference, specials_mismatches
from gemmbench.backend import Problem, Shape, Budget
from gemmbench.execute.local import expectations
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, baselines
M, N, K = map(int, sys.argv[1:4]); shape = Shape(M, N, K)
gpu = GpuBackend()
base = Problem.random(shape, seed=7)
def with_(a=None, b=None):
    A, B = base.A.copy(), base.B.copy()
    if a: a(A)
    if b: b(B)
    return dataclasses.replace(base, A=A, B=B)
cases = [("finite", base),
         ("one +Inf in A", with_(a=lambda A: A.__setitem__((M // 2, K - 1), np.inf))),
         ("one -Inf in B", with_(b=lambda B: B.__setitem__((0, N // 2), -np.inf))),
         ("+Inf in A's column 7 (every row)", with_(a=lambda A: A.__setitem__((slice(None), 7), np.inf)))]
T = os.environ.get("TREE")
def sp(i):
    s = get_spec("gpu", i)
    return dataclasses.replace(s, source=os.path.abspath(os.path.join(T, os.path.basename(s.source)))) if T else s
rows = [("cuBLAS SGEMM", baselines("gpu", ("fp32",))[0]), ("rung 18", sp(18)), ("rung 15", sp(15))]
budget = Budget(warmup_seconds=0.05, min_samples=3, max_samples=100, max_seconds=0.3)
for cname, prob in cases:
    gpu.load(prob)
    e = expectations(prob, *specials_reference(prob.A, prob.B))[0]  # alpha 1, beta 0
    for rname, spec in rows:
        gemm = gpu.prepare(spec, shape).gemm
        gpu.set_c(np.full_like(prob.C0, np.nan), "fp32"); gemm(e.alpha, e.beta)
        wrong = specials_mismatches(gpu.get_c("fp32"), e, spec.precision)
        s, _ = gpu.measure(gemm, 1.0, 0.0, budget)
        print(f"{cname:34s} {rname:13s} {statistics.median(s)*1e6:10.1f} us  n={len(s):3d}  "
              f"{'ok' if not wrong else 'WRONG ' + wrong[0][:100]}", flush=True)
