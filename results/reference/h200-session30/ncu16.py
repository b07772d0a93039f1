"""Scratch: cuBLAS of PREC, the rung's own choice and variants, at each shape, one call each (for ncu).
usage: ncu16.py PREC RUNG SHAPES 'K=V,...;...'"""
import sys
from gemmbench.backend import Shape, Problem
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, baselines
import pycuda.driver as cuda
prec, rung = sys.argv[1], int(sys.argv[2])
be = GpuBackend(); spec = get_spec("gpu", rung)
for s in sys.argv[3].split(","):
    M, N, K = map(int, s.split("x")); shape = Shape(M, N, K); be.load(Problem.random(shape, 0))
    runs = [("cublas", be.prepare(baselines("gpu", (prec,))[0], shape)), ("own", be.prepare(spec, shape))]
    for v in filter(None, (sys.argv[4] if len(sys.argv) > 4 else "").split(";")):
        p = dict(spec.for_device((9, 0)).params_for(M, N, K, 132)); p.update({k: int(x) for k, _, x in (i.partition("=") for i in v.split(","))})
        runs.append((v, be.prepare(spec, shape, p)))
    for name, pr in runs:
        for _ in range(3): pr.gemm(1.0, 0.0)
    cuda.Context.synchronize()
    for name, pr in runs:
        print(s, name, pr.params, flush=True); pr.gemm(1.0, 0.0); cuda.Context.synchronize()
