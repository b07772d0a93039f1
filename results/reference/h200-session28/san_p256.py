"""Scratch: rungs 32/33 forced to pairs of 64 x 256 tiles, verified at odd shapes (for compute-sanitizer)."""
import numpy as np
from gemmbench.backend import Problem, Shape
from gemmbench.execute.local import expectations, verify_kernel
from gemmbench.gpu.backend import GpuBackend
from gemmbench.precision import round_to
from gemmbench.rungs import get_spec
gpu = GpuBackend()
bad = 0
for M, N, K in [(127, 255, 2051), (33, 300, 1000)]:
    shape = Shape(M, N, K); problem = Problem.random(shape, seed=1); gpu.load(problem)
    for rung, prec in [(32, "bf16"), (33, "fp16")]:
        spec = get_spec("gpu", rung)
        el = "bf16" if prec == "bf16" else "fp16"
        a, b = (round_to(x, el).astype(np.float64) for x in (problem.A, problem.B))
        p = dict(spec.for_device((9, 0)).params_for(M, N, K, 132))
        p.update(BM=64, BN=256, KSPLIT=2, CLUSTER=2, PERSISTENT=0, STAGES=3)
        v = verify_kernel(gpu, gpu.prepare(spec, shape, p).gemm, expectations(problem, a @ b, np.abs(a) @ np.abs(b)), prec)
        print(M, N, K, rung, "PASS" if v.passed else "FAIL", flush=True)
        bad += not v.passed
print("failed", bad)
