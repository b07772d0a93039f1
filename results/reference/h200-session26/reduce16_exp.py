"""Scratch: rung 32/33 (own choice) with reduce_splits16 against the same product followed by reduce16_p
(parts P), and the product alone, beside cuBLAS of the type; interleaved rounds; verified in both passes.
usage: reduce16_exp.py SHAPES ROUNDS PREC PARTS [K=V,... overrides]"""
import sys, os, statistics, math
import numpy as np
from gemmbench.backend import Shape, Problem, Budget
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, baselines
from gemmbench.execute.local import expectations, verify_kernel
import gemmbench.gpu.drivers as D
from gemmbench.gpu.compile import load_source, expand_file

shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1].split(",")]
rounds, prec = int(sys.argv[2]), sys.argv[3]
PARTS = [int(x) for x in sys.argv[4].split(",")]
ov = {k: int(v) for k, _, v in (i.partition("=") for i in filter(None, (sys.argv[5] if len(sys.argv) > 5 else "").split(",")))}
rung = 32 if prec == "bf16" else 33
be = GpuBackend()
src = f"#define BF16 {int(prec == 'bf16')}\n" + expand_file(os.path.abspath(".scratch/reduce16_p.cu"))
fn = load_source(src, "reduce16_p", (9, 0)); fn.prepare("iiifPfPi")
MODE = [None]
class Dummy:
    def prepared_async_call(self, *a, **k): pass
class Wrap:
    def __init__(self, parts, sm): self.parts, self.sm = parts, sm
    def prepared_async_call(self, grid, block, stream, M, N, splits, *rest):
        items = M * N // 2 if (M * N) % 2 == 0 else M * N
        g = (max(1, min(math.ceil(items / (256 // self.parts)), 8 * self.sm)), 1, 1)
        fn.prepared_async_call(g, block, stream, M, N, splits, *rest, np.int32(self.parts))
orig_kernel = D.LaunchContext.kernel
def kernel(self, name, fmt, shared_bytes=0):
    if name == "reduce_splits16" and MODE[0] is not None:
        return Dummy() if MODE[0] == "none" else Wrap(MODE[0], self.sm_count)
    return orig_kernel(self, name, fmt, shared_bytes)
D.LaunchContext.kernel = kernel
base = baselines("gpu", (prec,))[0]
spec = get_spec("gpu", rung)
budget = Budget(warmup_seconds=0.05, min_samples=10, max_samples=300, max_seconds=0.3)
for (M, N, K) in shapes:
    shape = Shape(M, N, K); prob = Problem.random(shape, 0); be.load(prob)
    from gemmbench.precision import precision as _pc
    ref, absref = be.reference(prob, _pc(prec).inputs)
    passes = expectations(prob, ref, absref)
    p = dict(spec.for_device((9, 0)).params_for(M, N, K, be.info.sm_count)); p.update(ov)
    preps = [("cublas", None, be.prepare(base, shape))]
    for mode in [None, "none"] + PARTS:
        MODE[0] = mode
        preps.append(("reduce_splits16" if mode is None else "product only" if mode == "none" else f"parts {mode}",
                      mode, be.prepare(spec, shape, p)))
    MODE[0] = None
    ver = {}
    for name, mode, pr in preps:
        if mode == "none":
            ver[name] = "-"; continue
        v = verify_kernel(be, pr.gemm, passes, base.precision)
        ver[name] = ("ok" if v.passed else "FAIL") + f" err {v.max_rel_error:.2e}"
    times = {n: [] for n, _, _ in preps}
    for r in range(rounds):
        for name, _, pr in preps:
            s, notes = be.measure(pr.gemm, 1.0, 0.0, budget)
            times[name].append(statistics.median(s))
    cb = statistics.median(times["cublas"])
    print(f"== {M}x{N}x{K} {prec}: cublas {cb*1e6:.2f} us; {p}", flush=True)
    for name, _, pr in preps:
        t = statistics.median(times[name])
        print(f"   {name:16s} {t*1e6:9.2f} us {100*cb/t:6.1f}%  {ver[name]}  rounds {[round(x*1e6,2) for x in times[name]]}", flush=True)
