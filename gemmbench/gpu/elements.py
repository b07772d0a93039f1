"""16-bit copies of the problem on the device, and their float64 widening.

The BF16 and FP16 classes take A and B rounded to their type. The rounding
is done once per shape on the device, from the float32 inputs already there,
by the same cvt.rn instruction (round to nearest even) that ml_dtypes and
numpy use on the host; the reference widens those very copies to float64,
so it sees exactly the values the kernels see.
"""

from __future__ import annotations

# Element type -> (narrow: float -> 16-bit bits, widen: 16-bit bits -> float)
_CONVERT = {
    "bf16": ("cvt.rn.bf16.f32 %0, %1;", "{ .reg .b32 t; mov.b32 t, {0, %1}; mov.b32 %0, t; }"),
    "fp16": ("cvt.rn.f16.f32 %0, %1;", "cvt.f32.f16 %0, %1;"),
}


def source(element: str) -> str:
    """narrow(x, y, n): y = x rounded to ``element``; widen(x, y, n, absolute):
    y = (double) x, or its absolute value."""
    narrow, widen = _CONVERT[element]
    return r"""
__device__ __forceinline__ unsigned short narrow1(float x) {
    unsigned short h;
    asm("%NARROW%" : "=h"(h) : "f"(x));
    return h;
}
__device__ __forceinline__ float widen1(unsigned short h) {
    float x;
    asm("%WIDEN%" : "=f"(x) : "h"(h));
    return x;
}
extern "C" __global__ void narrow(const float* x, unsigned short* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = narrow1(x[i]);
}
extern "C" __global__ void widen(const unsigned short* x, double* y, long long n, int absolute) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        const double v = (double)widen1(x[i]);
        y[i] = absolute ? fabs(v) : v;
    }
}
""".replace("%NARROW%", narrow).replace("%WIDEN%", widen)
