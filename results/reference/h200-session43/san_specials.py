"""Scratch: rungs 15 and 18 (several builds) on inputs with NaN and Inf planted (tests/conftest.py), no timing,
for compute-sanitizer: the FP32 recomputation path runs. usage: san_specials.py M N K"""
import sys, os
sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
import numpy as np
from conftest import plant_specials, specials_reference, specials_mismatches
from gemmbench.backend import Problem, Shape
from gemmbench.execute.local import expectations
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec
shape = Shape(*map(int, sys.argv[1:4]))
gpu = GpuBackend()
problem = plant_specials(Problem.random(shape, seed=3))
gpu.load(problem)
passes = expectations(problem, *specials_reference(problem.A, problem.B))
R15, R18 = get_spec("gpu", 15), get_spec("gpu", 18)
runs = [(R15, None), (R18, {**R18.params}), (R18, {**R18.params, "SPLITS": 3}),
        (R18, {**R18.params, "SWAP_AB": 1, "BK": 32}), (R18, {**R18.params, "SWAP_AB": 1, "BK": 32, "SPLITS": 3}),
        (R18, {**R18.params, "BM": 16, "BN": 64, "STAGES": 8}),
        (R18, {**R18.params, "BM": 128, "BN": 64, "FLUSH": 2, "SPLITS": 2})]
bad = 0
for spec, p in runs:
    gemm = gpu.prepare(spec, shape, p).gemm
    wrong = []
    for e in passes:
        gpu.set_c(np.full_like(problem.C0, np.nan) if e.C0 is None else e.C0, "fp32")
        gemm(e.alpha, e.beta)
        wrong += specials_mismatches(gpu.get_c("fp32"), e, spec.precision)
    bad += bool(wrong)
    print(f"rung {spec.id} {p}: {'PASS' if not wrong else 'FAIL ' + '; '.join(wrong)}", flush=True)
sys.exit(1 if bad else 0)
