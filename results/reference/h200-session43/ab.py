"""Scratch (session 42): a rung built from several cuda_src trees, the same parameters (its shipped table's at each
shape, else its defaults), finite random inputs, interleaved rounds, % of cuBLAS (SGEMM for 3xTF32, TF32 for TF32).
Every variant verified first. usage: ab.py RUNG SHAPES ROUNDS NAME=TREE ...   (TREE '.' = the working tree)"""
import sys, os, json, statistics, dataclasses, time
from concurrent.futures import ThreadPoolExecutor
from gemmbench.backend import Shape, Problem, Budget
from gemmbench.gpu.backend import GpuBackend
from gemmbench.gpu import compile as c
from gemmbench.rungs import get_spec, baselines
from gemmbench.execute.local import expectations, verify_kernel
fb = sys.argv[1].endswith("f"); rung = int(sys.argv[1].rstrip("f")); shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[2].split(",")]
rounds = int(sys.argv[3]); trees = [a.split("=", 1) for a in sys.argv[4:]]
spec0 = get_spec("gpu", rung).fallback if fb else get_spec("gpu", rung).for_device((9, 0))
specs = {n: spec0 if t == "." else dataclasses.replace(spec0, source=os.path.abspath(os.path.join(t, os.path.basename(spec0.source))))
         for n, t in trees}
tname = {17: "tf32_tma_ws_h200.json", 18: "3xtf32_tma_ws_h200.json"}.get(rung)
table = json.load(open(f"gemmbench/rungs/{tname}"))["choices"] if tname and not fb else {}
def params(M, N, K):
    key = f"{M}x{N}x{K}"
    return {**spec0.params, **table[key]["params"]} if key in table else dict(spec0.params)
t0 = time.time()
with ThreadPoolExecutor(16) as ex:
    list(ex.map(lambda a: c.cubin(a[0], (9, 0), a[1]), [(s, params(*sh)) for s in specs.values() for sh in shapes]))
print(f"# built in {time.time() - t0:.0f} s", flush=True)
be = GpuBackend()
base = [b for b in baselines("gpu", ("fp32", "tf32")) if b.precision == ("tf32" if spec0.precision == "tf32" else "fp32")][0]
budget = Budget(warmup_seconds=0.05, min_samples=10, max_samples=300, max_seconds=0.3)
for (M, N, K) in shapes:
    shape = Shape(M, N, K); prob = Problem.random(shape, 0); be.load(prob)
    ref, absref = be.reference(prob, "fp32")
    passes = expectations(prob, ref, absref)
    p = params(M, N, K)
    preps = [("cublas", base, be.prepare(base, shape))] + [(n, s, be.prepare(s, shape, p)) for n, s in specs.items()]
    ver = {}
    for name, s, pr in preps:
        v = verify_kernel(be, pr.gemm, passes, s.precision)
        ver[name] = ("ok" if v.passed else "FAIL") + f" err {v.max_rel_error:.2e}"
    times = {n: [] for n, _, _ in preps}
    for r in range(rounds):
        for name, _, pr in (preps if r % 2 == 0 else preps[::-1]):
            s, _ = be.measure(pr.gemm, 1.0, 0.0, budget)
            times[name].append(statistics.median(s))
    cb = statistics.median(times["cublas"])
    print(f"== {M}x{N}x{K} rung {rung} {p}: {base.name} {cb*1e6:.2f} us", flush=True)
    for name, _, _ in preps:
        t = statistics.median(times[name])
        print(f"   {name:7s} {t*1e6:9.2f} us {100*cb/t:6.1f}%  {ver[name]}  rounds {[round(x*1e6,1) for x in times[name]]}", flush=True)
