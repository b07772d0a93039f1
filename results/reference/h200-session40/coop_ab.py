"""Scratch: rungs 15/18 as on main against the warp-shared NaN recomputation (coop/, not landed), finite inputs,
the same parameters (rung 18: its shipped table's), interleaved rounds, % of cuBLAS SGEMM.
usage: coop_ab.py SHAPES ROUNDS RUNG"""
import sys, os, json, statistics, dataclasses
from gemmbench.backend import Shape, Problem, Budget
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, baselines
from gemmbench.execute.local import expectations, verify_kernel
shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1].split(",")]
rounds, rung = int(sys.argv[2]), int(sys.argv[3])
here = os.path.dirname(os.path.abspath(__file__))
new = get_spec("gpu", rung).for_device((9, 0))
old = dataclasses.replace(new, source=os.path.join(here, "coop", os.path.basename(new.source)))
table = json.load(open("gemmbench/rungs/3xtf32_tma_ws_h200.json"))["choices"] if rung == 18 else {}
be = GpuBackend()
base = baselines("gpu", ("fp32",))[0]
budget = Budget(warmup_seconds=0.05, min_samples=10, max_samples=300, max_seconds=0.3)
for (M, N, K) in shapes:
    shape = Shape(M, N, K); prob = Problem.random(shape, 0); be.load(prob)
    ref, absref = be.reference(prob, "fp32")
    passes = expectations(prob, ref, absref)
    key = f"{M}x{N}x{K}"
    p = {**new.params, **table[key]["params"]} if key in table else dict(new.params)
    preps = [("cublas", be.prepare(base, shape))] + [(n, be.prepare(s, shape, p)) for n, s in (("main", new), ("coop", old))]
    ver = {}
    for name, pr in preps:
        v = verify_kernel(be, pr.gemm, passes, "3xtf32" if name != "cublas" else "fp32")
        ver[name] = ("ok" if v.passed else "FAIL") + f" err {v.max_rel_error:.2e} nf {v.nonfinite}"
    times = {n: [] for n, _ in preps}
    for r in range(rounds):
        for name, pr in (preps if r % 2 == 0 else preps[::-1]):
            s, _ = be.measure(pr.gemm, 1.0, 0.0, budget)
            times[name].append(statistics.median(s))
    cb = statistics.median(times["cublas"])
    print(f"== {key} rung {rung} {p}: cublas {cb*1e6:.2f} us", flush=True)
    for name, _ in preps:
        t = statistics.median(times[name])
        print(f"   {name:7s} {t*1e6:9.2f} us {100*cb/t:6.1f}%  {ver[name]}  rounds {[round(x*1e6,1) for x in times[name]]}", flush=True)
