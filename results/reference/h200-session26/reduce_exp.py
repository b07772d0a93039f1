"""Scratch: rung 28 (table choice) with reduce_splits against the same product followed by reduce_p
(parts = 1, 2, 4, 8, 16), and the product alone, beside cuBLAS SGEMM; interleaved rounds; every variant
but the product alone verified in both passes. usage: reduce_exp.py SHAPES ROUNDS"""
import sys, os, statistics, math
import numpy as np
from gemmbench.backend import Shape, Problem, Budget
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, baselines
from gemmbench.execute.local import expectations, verify_kernel
import gemmbench.gpu.drivers as D
from gemmbench.gpu.compile import load_source, expand_file

shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1].split(",")]
rounds = int(sys.argv[2])
PARTS = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "1,2,4,8,16").split(",")]
be = GpuBackend()
fn = load_source(expand_file(os.path.abspath(".scratch/reduce_p.cu")), "reduce_p", (9, 0))
fn.prepare("iiiifPfPi")
MODE = [None]
class Dummy:
    def prepared_async_call(self, *a, **k): pass
class Wrap:
    def __init__(self, parts): self.parts = parts
    def prepared_async_call(self, grid, block, stream, *args):
        fn.prepared_async_call(grid, block, stream, *args, np.int32(self.parts))
orig_kernel, orig_grid = D.LaunchContext.kernel, D._reduce_grid
def kernel(self, name, fmt, shared_bytes=0):
    if name == "reduce_splits" and MODE[0] is not None:
        return Dummy() if MODE[0] == "none" else Wrap(MODE[0])
    return orig_kernel(self, name, fmt, shared_bytes)
def grid(ctx, splits, ldp=None):
    if MODE[0] in (None, "none"):
        return orig_grid(ctx, splits, ldp)
    M, N = ctx.shape.M, ctx.shape.N; ldp = N if ldp is None else ldp
    groups = M * ldp // 4 if ldp != N else M * N // 4
    assert ldp % 4 == 0 and (ldp != N or (M * N) % 4 == 0), "scalar case not in reduce_p"
    return (max(1, min(math.ceil(groups / (256 // MODE[0])), 8 * ctx.sm_count)), 1, 1)
D.LaunchContext.kernel, D._reduce_grid = kernel, grid
base = baselines("gpu", ("fp32",))[0]
spec = get_spec("gpu", 28)
budget = Budget(warmup_seconds=0.05, min_samples=10, max_samples=300, max_seconds=0.3)
for (M, N, K) in shapes:
    shape = Shape(M, N, K); prob = Problem.random(shape, 0); be.load(prob)
    ref, absref = be.reference(prob, "fp32")
    passes = expectations(prob, ref, absref)
    preps = [("cublas", None, be.prepare(base, shape))]
    for mode in [None, "none"] + PARTS:
        MODE[0] = mode
        preps.append((f"reduce_splits" if mode is None else "product only" if mode == "none" else f"parts {mode}",
                       mode, be.prepare(spec, shape)))
    MODE[0] = None
    ver = {}
    for name, mode, pr in preps:
        if mode == "none":
            ver[name] = "-"; continue
        v = verify_kernel(be, pr.gemm, passes, "fp32")
        ver[name] = ("ok" if v.passed else "FAIL") + f" err {v.max_rel_error:.2e}"
    times = {n: [] for n, _, _ in preps}
    for r in range(rounds):
        for name, _, pr in preps:
            s, notes = be.measure(pr.gemm, 1.0, 0.0, budget)
            times[name].append(statistics.median(s))
    cb = statistics.median(times["cublas"])
    p = preps[1][2].params
    print(f"== {M}x{N}x{K}: cublas {cb*1e6:.2f} us; {p}", flush=True)
    for name, _, pr in preps:
        t = statistics.median(times[name])
        print(f"   {name:14s} {t*1e6:9.2f} us {100*cb/t:6.1f}%  {ver[name]}  rounds {[round(x*1e6,2) for x in times[name]]}", flush=True)
