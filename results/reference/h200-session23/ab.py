"""Scratch A/B: rung 28 built from the session-22 sources (.scratch/old/cuda_src) against the working tree's, at the
new table's choice, cuBLAS SGEMM beside; each verified; interleaved rounds. usage: ab.py SHAPES ROUNDS"""
import sys, json, statistics, pathlib
from gemmbench.validate import *  # noqa: import order (see the session-21 note on 'null bytes')
from gemmbench.backend import Shape, Problem, Budget
from gemmbench.gpu.backend import GpuBackend
from gemmbench.gpu import compile as comp
from gemmbench.rungs import get_spec, baselines
from gemmbench.execute.local import expectations, verify_kernel
import gemmbench.sources as src
table = json.load(open("gemmbench/rungs/any_shape_h200.json"))["choices"]
shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1].split(",")]
rounds = int(sys.argv[2])
OLD = pathlib.Path(".scratch/old/cuda_src").resolve()
real = comp.source_dir
be = GpuBackend(); base = baselines("gpu", ("fp32",))[0]; spec = get_spec("gpu", 28)
budget = Budget(warmup_seconds=0.05, min_samples=10, max_samples=300, max_seconds=0.3)
summary = []
for (M, N, K) in shapes:
    shape = Shape(M, N, K); prob = Problem.random(shape, 0); be.load(prob)
    passes = expectations(prob, *be.reference(prob))
    p = dict(table[f"{M}x{N}x{K}"]["params"])
    preps = [("cublas", be.prepare(base, shape))]
    ver = {"cublas": verify_kernel(be, preps[0][1].gemm, passes, "fp32").passed}
    comp.source_dir = lambda kind: OLD if kind == "cuda_src" else real(kind)
    preps.append(("old", be.prepare(spec, shape, p)))
    ver["old"] = verify_kernel(be, preps[-1][1].gemm, passes, "fp32").passed  # loads the module: old sources
    comp.source_dir = real
    preps.append(("new", be.prepare(spec, shape, p)))
    ver["new"] = verify_kernel(be, preps[-1][1].gemm, passes, "fp32").passed
    times = {n: [] for n, _ in preps}
    for r in range(rounds):
        for n, pr in (preps if r % 2 == 0 else preps[::-1]):
            s, _ = be.measure(pr.gemm, 1.0, 0.0, budget)
            times[n].append(statistics.median(s))
    med = {n: statistics.median(t) for n, t in times.items()}
    summary.append(med["old"] / med["new"])
    print(f"{M}x{N}x{K} K{p.get('KMAJOR_A')} {p.get('BM')}x{p.get('BN')} s{p.get('SPLITS')}: cublas {med['cublas']*1e6:.2f} "
          f"old {med['old']*1e6:.2f} ({100*med['cublas']/med['old']:.1f}%) new {med['new']*1e6:.2f} "
          f"({100*med['cublas']/med['new']:.1f}%) old/new {med['old']/med['new']:.4f} verified {ver} "
          f"rounds old {[round(x*1e6,1) for x in times['old']]} new {[round(x*1e6,1) for x in times['new']]}", flush=True)
print("median old/new time", round(statistics.median(summary), 4))
