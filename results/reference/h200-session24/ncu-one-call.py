"""Scratch: one call each of cuBLAS SGEMM and rung 28 (the table's choice, then variants given as K=V,...
overrides) at a shape, for ncu. usage: ncu-one-call.py MxNxK 'K=V,...;K=V,...'"""
import sys
from gemmbench.backend import Shape, Problem
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, baselines
import pycuda.driver as cuda
M, N, K = map(int, sys.argv[1].split("x"))
be = GpuBackend(); shape = Shape(M, N, K); be.load(Problem.random(shape, 0))
spec = get_spec("gpu", 28)
runs = [("cublas", be.prepare(baselines("gpu", ("fp32",))[0], shape)), ("table", be.prepare(spec, shape))]
for v in filter(None, (sys.argv[2] if len(sys.argv) > 2 else "").split(";")):
    p = dict(spec.for_device((9, 0)).params_for(M, N, K, 132)); p.update({k: int(x) for k, _, x in (i.partition("=") for i in v.split(","))})
    runs.append((v, be.prepare(spec, shape, p)))
for name, pr in runs:
    for _ in range(3): pr.gemm(1.0, 0.0)
cuda.Context.synchronize()
for name, pr in runs:
    print(name, pr.params, flush=True); pr.gemm(1.0, 0.0); cuda.Context.synchronize()
