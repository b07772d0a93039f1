"""Scratch: per-kernel times of one call. usage: prof.py PREC 'MxNxK,..' 'name:RUNG[:K=V,..];..'  (name cublas: the baseline)
Run under: ncu --profile-from-start off --metrics gpu__time_duration.sum python3 prof.py ...
Also prints the event-timed median per call (outside ncu this is the real figure)."""
import sys, ctypes, statistics
from gemmbench.backend import Shape, Problem, Budget
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, baselines
import pycuda.driver as cuda
prec = sys.argv[1]
shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[2].split(",")]
lib = ctypes.CDLL("libcuda.so.1")
be = GpuBackend()
base = baselines("gpu", (prec,))[0]
budget = Budget(warmup_seconds=0.05, min_samples=10, max_samples=200, max_seconds=0.2)
for (M, N, K) in shapes:
    shape = Shape(M, N, K); prob = Problem.random(shape, 0); be.load(prob)
    for v in sys.argv[3].split(";"):
        name, rung, *kv = v.split(":")
        if rung == "0":
            spec, p = base, None
        else:
            spec = get_spec("gpu", int(rung)); p = None
            ov = {k: int(x) for k, _, x in (i.partition("=") for i in filter(None, (kv[0] if kv else "").split(",")))}
            if ov:
                p = dict(spec.for_device((9, 0)).params_for(M, N, K, be.info.sm_count)); p.update(ov)
        pr = be.prepare(spec, shape, p)
        for _ in range(10): pr.gemm(1.0, 0.0)
        cuda.Context.synchronize()
        s, _ = be.measure(pr.gemm, 1.0, 0.0, budget)
        print(f"## {M}x{N}x{K} {name}: {statistics.median(s)*1e6:.2f} us/call (events) {getattr(pr, 'params', '')}", flush=True)
        lib.cuProfilerStart(); pr.gemm(1.0, 0.0); cuda.Context.synchronize(); lib.cuProfilerStop()
