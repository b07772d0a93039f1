"""Scratch A/B in one process: a rung's HEAD source (OLD_DIR/<file>, headers beside it) against the working tree,
both at the shipped table's choice (its digest check skipped), interleaved rounds beside cuBLAS of the precision.
usage: ab.py SHAPES ROUNDS PREC RUNG OLD_DIR [extra variants 'name:K=V,...;...' on the new source]"""
import sys, os, json, statistics, dataclasses
import gemmbench.rungs.choice_table as CT
_load = CT.load
CT.load = lambda path, digest: _load(path, json.load(open(path))["source_digest"])
from gemmbench.backend import Shape, Problem, Budget
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, baselines
from gemmbench.execute.local import expectations, verify_kernel
from gemmbench.precision import precision as _pc
shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1].split(",")]
rounds, prec, rung, old_dir = int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), os.path.abspath(sys.argv[5])
extra = []
if len(sys.argv) > 6:
    for v in filter(None, sys.argv[6].split(";")):
        name, kv = v.split(":")
        extra.append((name, {k: int(x) for k, _, x in (i.partition("=") for i in kv.split(","))}))
new = get_spec("gpu", rung)
old = dataclasses.replace(new, source=os.path.join(old_dir, new.source))
def _pre(job):
    from gemmbench.gpu import compile as c
    which, p = job
    spec = (old if which == "old" else new).for_device((9, 0))
    try:
        c.cubin(spec, (9, 0), p)
    except Exception as e:
        return f"{which} {p}: {e}"
import concurrent.futures as cf
jobs = []
for (M, N, K) in shapes:
    p = dict(new.for_device((9, 0)).params_for(M, N, K, 132))
    for j in [("old", p), ("new", p)] + [("new", {**p, **ov}) for _, ov in extra]:
        if j not in jobs: jobs.append(j)
with cf.ProcessPoolExecutor(14) as ex:
    for r in ex.map(_pre, jobs):
        if r: print("precompile:", r, flush=True)
print(f"precompiled {len(jobs)}", flush=True)
be = GpuBackend()
base = baselines("gpu", ("fp32" if prec == "3xtf32" else prec,))[0]
budget = Budget(warmup_seconds=0.05, min_samples=10, max_samples=300, max_seconds=0.3)
summary = []
for (M, N, K) in shapes:
    shape = Shape(M, N, K); prob = Problem.random(shape, 0); be.load(prob)
    ref, absref = be.reference(prob, _pc(prec).inputs)
    passes = expectations(prob, ref, absref)
    p = dict(new.for_device((9, 0)).params_for(M, N, K, be.info.sm_count))
    preps = [("cublas", be.prepare(base, shape), base.precision),
             ("head", be.prepare(old, shape, p), old.precision), ("lean", be.prepare(new, shape, p), new.precision)]
    for name, ov in extra:
        q = dict(p); q.update(ov)
        preps.append((name, be.prepare(new, shape, q), new.precision))
    ver = {}
    for name, pr, pc in preps:
        v = verify_kernel(be, pr.gemm, passes, pc)
        ver[name] = ("ok" if v.passed else "FAIL") + f" err {v.max_rel_error:.2e}/{v.tolerance:.1e}"
    times = {n: [] for n, _, _ in preps}
    for r in range(rounds):
        for name, pr, _ in preps:
            s, notes = be.measure(pr.gemm, 1.0, 0.0, budget)
            times[name].append(statistics.median(s))
    cb = statistics.median(times["cublas"])
    print(f"== {M}x{N}x{K} {prec} rung {rung}: cublas {cb*1e6:.2f} us  params {p}", flush=True)
    row = [f"{M}x{N}x{K}"]
    for name, pr, _ in preps:
        t = statistics.median(times[name])
        row.append(f"{name} {100*cb/t:.1f}")
        print(f"   {name:8s} {t*1e6:9.2f} us {100*cb/t:6.1f}%  {ver[name]}  rounds {[round(x*1e6,1) for x in times[name]]}", flush=True)
    summary.append("  ".join(row))
print("\n".join(summary))
