"""What the GPU makes of NaN bit patterns under cvt.rna.tf32.f32, the two-op rounding, and Inf - Inf."""
import numpy as np
import pycuda.autoinit  # noqa: F401
import pycuda.driver as cuda
from pycuda.compiler import SourceModule
src = r'''
extern "C" __global__ void k(const unsigned* in, unsigned* out, int n) {
    int i = threadIdx.x; if (i >= n) return;
    float x = __uint_as_float(in[i]); unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    out[4 * i] = r;
    out[4 * i + 1] = (in[i] + 0x1000u) & 0xffffe000u;
    float big = __uint_as_float(r); float d = x - big;
    out[4 * i + 2] = __float_as_uint(d);
    out[4 * i + 3] = (__float_as_uint(d) + 0x1000u) & 0xffffe000u;
}'''
k = SourceModule(src, no_extern_c=True, arch="sm_90a").get_function("k")
vals = np.array([0x7fffffff, 0xffffffff, 0x7fc00000, 0x7f800001, 0x7ffff000, 0x7f800000, 0xff800000, 0x7f7fffff,
                 0x3f800fff, 0x3f801000], np.uint32)
out = np.zeros(4 * len(vals), np.uint32)
k(cuda.In(vals), cuda.Out(out), np.int32(len(vals)), block=(32, 1, 1))
f = lambda u: np.uint32(u).view(np.float32)
print(f"{'x':>12} {'cvt.rna':>12} {'two-op':>12} {'x - rna(x)':>12} {'two-op of it':>12}")
for i, v in enumerate(vals):
    o = out[4 * i:4 * i + 4]
    print(f"{v:#012x} " + " ".join(f"{int(u):#012x}" for u in o) + f"   ({f(v)!r} -> two-op {f(o[1])!r})")
