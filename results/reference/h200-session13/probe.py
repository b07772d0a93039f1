"""Scratch: per-block timeline of a probed 16-bit rung (cuda_src with .scratch/s13/probe headers).
usage: probe.py MxNxK PREC 'name:RUNG[:K=V,...];...'"""
import sys, statistics, numpy as np
import pycuda.driver as cuda
from gemmbench.backend import Shape, Problem, Budget
from gemmbench.gpu.backend import GpuBackend
from gemmbench.gpu.compile import load_module
from gemmbench.rungs import get_spec
M, N, K = map(int, sys.argv[1].split("x")); prec = sys.argv[2]
be = GpuBackend(); shape = Shape(M, N, K); be.load(Problem.random(shape, 0))
for v in sys.argv[3].split(";"):
    name, rung, *kv = v.split(":")
    spec = get_spec("gpu", int(rung)).for_device((9, 0))
    p = dict(spec.params_for(M, N, K, be.info.sm_count))
    p.update({k: int(x) for k, _, x in (i.partition("=") for i in filter(None, (kv[0] if kv else "").split(",")))})
    pr = be.prepare(spec, shape, p)
    samples, _ = be.measure(pr.gemm, 1.0, 0.0, Budget(warmup_seconds=0.05, min_samples=10, max_samples=100, max_seconds=0.2))
    be.stream.synchronize()
    per_call = statistics.median(samples) * 1e6
    mod = load_module(spec, (9, 0), pr.params)
    ptr, size = mod.get_global("g_probe")
    g = np.empty(size // 8, np.uint64); cuda.memcpy_dtoh(g, ptr)
    g = g.reshape(-1, 16).astype(np.int64)
    blocks = int(np.count_nonzero(g[:, 9]))
    g = g[:blocks]
    t0 = g[:, 7] - g[:, 7].min()
    ph = np.concatenate([g[:, 1:7], g[:, 10:15]], axis=1) - g[:, :1]
    import os; np.save(os.path.join(os.environ.get("OUT", "."), f"probe-{name}-{sys.argv[1]}.npy"), g)
    span_ns = (g[:, 9].max() - g[:, 7].min())
    clk = np.median((g[:, 5] - g[:, 0]) / np.maximum(g[:, 9] - g[:, 7], 1))  # cycles per ns from entry to finish
    print(f"== {name} {sys.argv[1]} {prec} {pr.params}\n   event {per_call:.2f} us/call; blocks {blocks}; kernel span {span_ns/1e3:.2f} us (first entry to last finish, globaltimer); clock {clk:.2f} GHz")
    print(f"   entry spread: median {np.median(t0):.0f} ns, max {t0.max():.0f} ns")
    labels = ["cluster_sync", "first K tile", "K loop done", "epilogue issued", "stores done", "exchange landed", "producer 1st", "producer STAGES", "prod setmaxnreg", "prod 1st A issued", "prod 1st B issued"]
    for i, l in enumerate(labels):
        col = ph[:, i]
        print(f"   {l:16s} cycles from entry: min {col.min():7d} median {int(np.median(col)):7d} max {col.max():7d}")
    sys.stdout.flush()
