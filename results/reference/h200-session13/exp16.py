"""Scratch: 16-bit variants against cuBLAS of the same type, interleaved rounds, both verification passes.
usage: exp16.py SHAPES ROUNDS PREC 'name:RUNG[:K=V,...];...'   (no K=V: the rung's own selection)"""
import sys, statistics
from gemmbench.backend import Shape, Problem, Budget
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, baselines
from gemmbench.execute.local import expectations, verify_kernel

shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1].split(",")]
rounds, prec = int(sys.argv[2]), sys.argv[3]
variants = []
for v in sys.argv[4].split(";"):
    name, rung, *kv = v.split(":")
    ov = {k: int(val) for k, _, val in (i.partition("=") for i in filter(None, (kv[0] if kv else "").split(",")))}
    variants.append((name, int(rung), ov))
be = GpuBackend()
base = baselines("gpu", (prec,))[0]
budget = Budget(warmup_seconds=0.05, min_samples=10, max_samples=300, max_seconds=0.3)
for (M, N, K) in shapes:
    shape = Shape(M, N, K); prob = Problem.random(shape, 0); be.load(prob)
    ref, absref = be.reference(prob, prec)
    passes = expectations(prob, ref, absref)
    preps = [("cublas", be.prepare(base, shape), base.precision)]
    for name, rung, ov in variants:
        spec = get_spec("gpu", rung)
        try:
            p = None
            if ov:
                p = dict(spec.for_device((9, 0)).params_for(M, N, K, be.info.sm_count)); p.update(ov)
            pr = be.prepare(spec, shape, p)
            preps.append((name, pr, spec.precision))
        except Exception as e:
            print(f"{M}x{N}x{K} {name}: skip {e}", flush=True)
    ver = {}
    for name, pr, pc in preps:
        v = verify_kernel(be, pr.gemm, passes, pc)
        ver[name] = ("ok" if v.passed else "FAIL") + f" err {v.max_rel_error:.2e}/{v.tolerance:.1e} nf {v.nonfinite}"
    times = {n: [] for n, _, _ in preps}
    for r in range(rounds):
        for name, pr, _ in preps:
            s, notes = be.measure(pr.gemm, 1.0, 0.0, budget)
            times[name].append(statistics.median(s))
    cb = statistics.median(times["cublas"])
    print(f"== {M}x{N}x{K} {prec}: cublas {cb*1e6:.2f} us", flush=True)
    for name, pr, _ in preps:
        t = statistics.median(times[name])
        print(f"   {name:14s} {t*1e6:9.2f} us {100*cb/t:6.1f}%  {ver[name]}  {pr.params}  rounds {[round(x*1e6,1) for x in times[name]]}", flush=True)
