"""Scratch (twenty-fourth session, from ../h200-session21/pdl.py): does PDL with an EARLY TRIGGER in the product
shorten rung 28's split calls? t1: every block of sgemm runs griddepcontrol.launch_dependents first; t2: after its
main loop, before its stores; both then launch reduce_pdl with the PDL attribute. Was: does programmatic dependent launch (PDL) shorten rung 28's split calls? At each shape, rung 28's
table parameters (its pre-passes left out: A and B allocated as the kernel reads them), 'sgemm' then a
reduction, timed back to back with CUDA events over many calls:
  base : sgemm + reduce_splits (the rung's own, plain launches)
  copy : sgemm + reduce_pdl (reduce_splits with griddepcontrol.wait first), plain launches
  pdl  : sgemm + reduce_pdl launched with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
  gemm : sgemm alone;  red : reduce_pdl alone
usage: pdl-trigger.py 'MxNxK,...' [CALLS]"""
import ctypes, math, re, subprocess, sys, tempfile
import numpy as np
import gemmbench.validate, gemmbench.rungs.choice_table  # noqa: F401,E401  (imported before the CUDA set-up: see the records' README)
import pycuda.autoinit  # noqa: F401
import pycuda.driver as cuda
from gemmbench.rungs import get_spec, any_shape
from gemmbench.gpu import compile as cc
from gemmbench.gpu.drivers import elementwise_grid

lib = ctypes.CDLL("libcuda.so.1")
def ok(code, what):
    if code != 0:
        name = ctypes.c_char_p(); lib.cuGetErrorName(code, ctypes.byref(name)); raise RuntimeError(f"{what}: {name.value}")

class Attr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_char * 64)]
class Config(ctypes.Structure):
    _fields_ = [("gx", ctypes.c_uint), ("gy", ctypes.c_uint), ("gz", ctypes.c_uint), ("bx", ctypes.c_uint),
                ("by", ctypes.c_uint), ("bz", ctypes.c_uint), ("smem", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(Attr)), ("nattrs", ctypes.c_uint)]
pdl_attr = Attr(); pdl_attr.id = 6; ctypes.memmove(pdl_attr.value, ctypes.byref(ctypes.c_int(1)), 4)
stream = ctypes.c_void_p(); ok(lib.cuStreamCreate(ctypes.byref(stream), 1), "stream")

def launch(fn, grid, block, smem, args, pdl=False):
    vals = []
    for kind, v in args:
        vals.append({"i": ctypes.c_int, "f": ctypes.c_float, "p": ctypes.c_uint64}[kind](v))
    params = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
    cfg = Config(*grid, *block, smem, stream.value, ctypes.pointer(pdl_attr) if pdl else None, 1 if pdl else 0)
    ok(lib.cuLaunchKernelEx(ctypes.byref(cfg), fn, params, None), "launch")

def events():
    a, b = ctypes.c_void_p(), ctypes.c_void_p()
    ok(lib.cuEventCreate(ctypes.byref(a), 0), "ev"); ok(lib.cuEventCreate(ctypes.byref(b), 0), "ev")
    return a, b

def timed(body, calls):
    for _ in range(20): body()
    a, b = events()
    ok(lib.cuEventRecord(a, stream), "rec"); [body() for _ in range(calls)]; ok(lib.cuEventRecord(b, stream), "rec")
    ok(lib.cuEventSynchronize(b), "sync"); ms = ctypes.c_float(); ok(lib.cuEventElapsedTime(ctypes.byref(ms), a, b), "el")
    return ms.value * 1e3 / calls

spec = get_spec("gpu", 28).for_device((9, 0))
shapes = [tuple(map(int, s.split("x"))) for s in sys.argv[1].split(",")]
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 300
src = cc.expand_source(spec)
body = re.search(r'extern "C" __global__ void __launch_bounds__\(kReduceThreads\)\nreduce_splits\(.*?\n}\n', src, re.S).group(0)
pdl_src = body.replace("reduce_splits(", "reduce_pdl(", 1).replace(
    "float* __restrict__ C) {", 'float* __restrict__ C) {\n    asm volatile("griddepcontrol.wait;" ::: "memory");', 1)
trig = '#if PDL_TRIGGER == 2\n    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");\n#endif\n'
anchor = "    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;\n"
assert src.count(anchor) == 1
src = src.replace(anchor, '#if PDL_TRIGGER == 1\n    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");\n#endif\n' + anchor)
for st in ("    kmajor_store(acc, M, N, slice.out", "    multistage_store(acc, M, N, slice.out"):
    assert src.count(st) == 1, st
    src = src.replace(st, trig + st)
d = tempfile.mkdtemp(); open(f"{d}/k.cu", "w").write(src + "\n" + pdl_src)
arch, code = cc.target_for(spec, (9, 0))
opts = {s: tuple(cc.nvcc_options(spec, spec.params_for(*s, 132))) for s in shapes}
opts_t = {(s, t): opts[s] + (f"-DPDL_TRIGGER={t}",) for s in shapes for t in (0, 1, 2)}
builds = {o: f"{d}/k{i}.cubin" for i, o in enumerate(dict.fromkeys(opts_t.values()))}
import concurrent.futures as cf
with cf.ThreadPoolExecutor(8) as ex:
    list(ex.map(lambda item: subprocess.run(cc.build_command(cc.find_nvcc(), item[0], arch, code, f"{d}/k.cu", item[1]), check=True), builds.items()))
print(f"built {len(builds)} cubins", flush=True)
for (M, N, K) in shapes:
    p = dict(spec.params_for(M, N, K, 132))
    fns = {}
    for t in (0, 1, 2):
        mod = ctypes.c_void_p(); ok(lib.cuModuleLoadData(ctypes.byref(mod), ctypes.create_string_buffer(open(builds[opts_t[((M, N, K), t)]], "rb").read())), "load")
        for name in ("sgemm", "reduce_splits", "reduce_pdl"):
            f = ctypes.c_void_p(); ok(lib.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()), name); fns[name + ("" if t == 0 else f"_t{t}")] = f
        ok(lib.cuFuncSetAttribute(fns["sgemm" + ("" if t == 0 else f"_t{t}")], 8, ctypes.c_int(spec.shared_bytes(p))), "smem")
    grid, block, smem = spec.grid(M, N, K, p), spec.block(p), spec.shared_bytes(p)
    ok(lib.cuFuncSetAttribute(fns["sgemm"], 8, ctypes.c_int(smem)), "smem")
    splits = grid[2]
    ka = p["KMAJOR_A"]
    lda = (math.ceil(M / p["BM"]) * p["BM"]) if ka == 1 else (K if K % 4 == 0 or not p.get("PACK", 1) else K + (-K) % 4)
    ldb = N + (-N) % 4 if p.get("PACK", 1) else N
    ldp = N + (-N) % 4
    rows_a = math.ceil(K / p["BK"]) * p["BK"] if ka == 1 else M  # At: zero-padded to whole tiles
    rng = np.random.default_rng(0)
    A = cuda.to_device(rng.uniform(-1, 1, (rows_a, lda)).astype(np.float32))
    B = cuda.to_device(rng.uniform(-1, 1, (K, ldb)).astype(np.float32))
    C = cuda.mem_alloc(4 * M * N); P = cuda.mem_alloc(4 * splits * M * ldp)
    rgrid = elementwise_grid(M * N, 132, per_block=32) if splits >= 32 else elementwise_grid(M * ldp, 132)  # as _reduce_grid (M*N % 4 == 0 or ldp padded here)
    gargs = [("i", M), ("i", N), ("i", K), ("f", 1.0), ("p", int(A)), ("i", lda), ("p", int(B)), ("i", ldb), ("f", 0.0), ("p", int(C)), ("p", int(P)), ("i", ldp)]
    rargs = [("i", M), ("i", N), ("i", ldp), ("i", splits), ("f", 1.0), ("p", int(P)), ("f", 0.0), ("p", int(C))]
    g = lambda: launch(fns["sgemm"], grid, block, smem, gargs)
    variants = {"base": lambda: (g(), launch(fns["reduce_splits"], rgrid, (256, 1, 1), 0, rargs)),
                "pdl": lambda: (g(), launch(fns["reduce_pdl"], rgrid, (256, 1, 1), 0, rargs, pdl=True)),
                "t1": lambda: (launch(fns["sgemm_t1"], grid, block, smem, gargs), launch(fns["reduce_pdl"], rgrid, (256, 1, 1), 0, rargs, pdl=True)),
                "t2": lambda: (launch(fns["sgemm_t2"], grid, block, smem, gargs), launch(fns["reduce_pdl"], rgrid, (256, 1, 1), 0, rargs, pdl=True)),
                "gemm": g, "red": lambda: launch(fns["reduce_pdl"], rgrid, (256, 1, 1), 0, rargs)}
    outs = {}
    for name in ("base", "pdl", "t1", "t2"):
        variants[name](); ok(lib.cuStreamSynchronize(stream), "sync")
        outs[name] = cuda.from_device(C, (M, N), np.float32)
    same = all(np.array_equal(outs["base"], outs[n]) for n in ("pdl", "t1", "t2"))
    res = {n: [] for n in variants}
    for r in range(3):
        for n in (list(variants) if r % 2 == 0 else list(reversed(variants))):
            res[n].append(timed(variants[n], calls))
    med = {n: sorted(v)[1] for n, v in res.items()}
    print(f"{M}x{N}x{K} splits {splits} grid {grid} rgrid {rgrid} KA{ka} lda {lda} ldb {ldb} ldp {ldp}; pdl/t1/t2 results bit-equal: {same}")
    print("   " + "  ".join(f"{n} {med[n]:.2f} us {[round(x, 2) for x in res[n]]}" for n in variants), flush=True)
