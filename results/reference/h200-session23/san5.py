"""Scratch: rung 28 (every config, PACK 0 and 1) and rungs 12/19 search-space corners verified at odd shapes; run under compute-sanitizer."""
import sys
from gemmbench.backend import Shape, Problem
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec, any_shape
from gemmbench.execute.local import expectations, verify_kernel
be = GpuBackend()
shapes = [Shape(*map(int, s.split("x"))) for s in sys.argv[1].split(",")]
for shape in shapes:
    prob = Problem.random(shape, 5); be.load(prob)
    passes = expectations(prob, *be.reference(prob))
    runs = [(28, {**c, "SPLITS": s, "PACK": pk}) for c in any_shape.CONFIGS.values() for s in (1, 3) for pk in (0, 1)]
    runs += [(12, dict(BM=64, BN=256, BK=8, TM=8, TN=16, NUM_THREADS=128, STAGES=3, MIN_BLOCKS=1))]
    for rung, p in runs:
        if rung == 28 and any_shape.shape_reason(shape.M, shape.N, p):
            continue
        spec = get_spec("gpu", rung)
        bad = spec.for_device((9, 0)).invalid_reason(p) if hasattr(spec, "invalid_reason") else None
        if bad:
            print("invalid", rung, p, bad); continue
        v = verify_kernel(be, be.prepare(spec, shape, p).gemm, passes, "fp32")
        print(shape, rung, {k: p[k] for k in ("BM", "BN", "BK", "NUM_THREADS") }, p.get("KMAJOR_A"), p.get("SPLITS"), p.get("PACK"), "ok" if v.passed and not v.nonfinite else "FAIL", f"{v.max_rel_error:.1e}", flush=True)
