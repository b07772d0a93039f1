"""Scratch: resident blocks of rung 28's sgemm and clusters of rung 29's sgemm_cluster (apply cluster-split-k.patch)."""
import ctypes
import pycuda.autoinit  # noqa: F401  (a current context)
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
from gemmbench.gpu.tensormap import _libcuda, loaded_function
from gemmbench.gpu.clusters import _LaunchConfig
lib = _libcuda()
for shape in [(256, 4096, 4096), (1024, 1024, 1024), (333, 555, 777), (384, 384, 384), (128, 11008, 4096), (2047, 2047, 2047)]:
    s29 = get_spec("gpu", 29).for_device((9, 0)); s28 = get_spec("gpu", 28).for_device((9, 0))
    p = s29.params_for(*shape, 132); S = p["CLUSTER_K"]
    if not S: print(shape, "no cluster"); continue
    p28 = {k: v for k, v in p.items() if k != "CLUSTER_K"}
    threads, sm28, sm29 = s28.block(p28)[0], s28.shared_bytes(p28), s29.shared_bytes(p)
    with loaded_function(lib, c.cubin(s28, (9, 0), p28), "sgemm") as f:
        lib.cuFuncSetAttribute(f, 8, ctypes.c_int(sm28)); n = ctypes.c_int()
        e1 = lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(n), f, threads, ctypes.c_size_t(sm28))
        blocks = n.value
    with loaded_function(lib, c.cubin(s29, (9, 0), p), "sgemm_cluster") as f:
        lib.cuFuncSetAttribute(f, 8, ctypes.c_int(sm29)); m = ctypes.c_int()
        cfg = _LaunchConfig(1, 1, S, threads, 1, 1, sm29, None, None, 0)
        e2 = lib.cuOccupancyMaxActiveClusters(ctypes.byref(m), f, ctypes.byref(cfg))
        b2 = ctypes.c_int(); e3 = lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(b2), f, threads, ctypes.c_size_t(sm29))
    grid = s28.grid(*shape, p28)
    print(shape, f"S={S} tile {p['BM']}x{p['BN']} grid {grid} = {grid[0]*grid[1]*grid[2]} blocks; rung 28: {blocks}/SM = {132*blocks} resident (rc {e1});"
          f" rung 29: {m.value} clusters = {m.value*S} blocks resident (rc {e2}), {b2.value}/SM without the cluster rule (rc {e3}); smem {sm28} / {sm29}")
