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
def params(spec, M, N, K, ov):
    """The rung's selection with ov on top (call 1 had ALONE=0 here: the first no-cluster rule off)."""
    p = dict(spec.for_device((9, 0)).params_for(M, N, K, 132))
    p.update(ov); return p
def _pre(job):
    from gemmbench.gpu import compile as c
    rung, p = job
    spec = get_spec("gpu", rung).for_device((9, 0))
    try:
        c.cubin(spec, (9, 0), p)
    except Exception as e:
        return f"{rung} {p}: {e}"
    return None
if __name__ == "__main__":
    import concurrent.futures as cf
    jobs = []
    for (M, N, K) in shapes:
        for name, rung, ov in variants:
            spec = get_spec("gpu", rung).for_device((9, 0))
            p = params(spec, M, N, K, ov)
            if p.get("GEMV") or p.get("SMALL"):
                continue
            if (rung, p) not in jobs:
                jobs.append((rung, p))
    with cf.ProcessPoolExecutor(14) as ex:
        for r in ex.map(_pre, jobs):
            if r: print("precompile:", r, flush=True)
    print(f"precompiled {len(jobs)}", flush=True)
be = GpuBackend()
base = (baselines("gpu", (prec,)) or baselines("gpu", ("fp32",)))[0]  # 3xTF32 against SGEMM
budget = Budget(warmup_seconds=0.05, min_samples=10, max_samples=300, max_seconds=0.3)
for (M, N, K) in shapes:
    shape = Shape(M, N, K); prob = Problem.random(shape, 0); be.load(prob)
    from gemmbench.precision import precision as _pc
    ref, absref = be.reference(prob, _pc(prec).inputs)
    passes = expectations(prob, ref, absref)
    preps = [("cublas", be.prepare(base, shape), base.precision)]
    import gemmbench.gpu.drivers as _D
    _orig = getattr(_D, "_padded_operands", None)
    def _two(ctx, launches, a, b, element_bytes=4):
        return [_D._padded_operand(ctx, m, r, c, launches, element_bytes) for m, r, c in (a, b)]
    for name, rung, ov in variants:
        spec = get_spec("gpu", rung)
        if _orig is not None:
            _D._padded_operands = _two if name.startswith("old") else _orig
        import gemmbench.gpu.tensormap as _TM
        _TM._L2_PROMOTION_128B = 3 if "p256" in name else 1 if "p64" in name else 0 if "p0" in name else 2
        try:
            p = None
            if ov:
                p = params(spec, M, N, K, ov)
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
        for name, pr, _ in (preps if r % 2 == 0 else preps[::-1]):  # the order reversed every other round
            s, notes = be.measure(pr.gemm, 1.0, 0.0, budget)
            times[name].append(statistics.median(s))
    cb = statistics.median(times["cublas"])
    print(f"== {M}x{N}x{K} {prec}: cublas {cb*1e6:.2f} us", flush=True)
    for name, pr, _ in preps:
        t = statistics.median(times[name])
        print(f"   {name:14s} {t*1e6:9.2f} us {100*cb/t:6.1f}%  {ver[name]}  {pr.params}  rounds {[round(x*1e6,1) for x in times[name]]}", flush=True)
# energy: per variant, calls for SECS seconds, NVML energy counter before and after (mJ per call)
import os
secs = float(os.environ.get("ESECS", "0"))
if secs:
    import pynvml, time
    pynvml.nvmlInit(); h = pynvml.nvmlDeviceGetHandleByIndex(0)
    import pycuda.driver as cuda
    for (M, N, K) in shapes:
        shape = Shape(M, N, K); prob = Problem.random(shape, 0); be.load(prob)
        preps = [("cublas", be.prepare(base, shape))]
        for name, rung, ov in variants:
            spec = get_spec("gpu", rung)
            p = None
            if ov:
                p = dict(spec.for_device((9, 0)).params_for(M, N, K, be.info.sm_count)); p.update(ov)
            preps.append((name, be.prepare(spec, shape, p)))
        res = {n: [] for n, _ in preps}
        for r in range(2):
            for name, pr in preps:
                for _ in range(20): pr.gemm(1.0, 0.0)
                cuda.Context.synchronize()
                e0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(h); t0 = time.perf_counter(); n = 0
                while time.perf_counter() - t0 < secs:
                    for _ in range(20): pr.gemm(1.0, 0.0)
                    n += 20
                    cuda.Context.synchronize()
                t = time.perf_counter() - t0; e1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
                res[name].append(((e1 - e0) / n, t / n * 1e6, (e1 - e0) / 1e3 / t))
        cb = statistics.median(x[0] for x in res["cublas"])
        print(f"== energy {M}x{N}x{K}", flush=True)
        for name, v in res.items():
            print(f"   {name:8s} mJ/call {[round(x[0],2) for x in v]} rel {statistics.median(x[0] for x in v)/cb:.3f}  us/call {[round(x[1],1) for x in v]}  W {[round(x[2]) for x in v]}", flush=True)
