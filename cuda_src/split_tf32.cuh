// The split the 3xTF32 rungs (15, 18) run over A once per call, launched by
// their driver: x = big + small, both TF32 (big = rna(x), small = rna(x -
// big)). Grid-stride; 16-byte accesses when all three arrays are 16-byte
// aligned. Needs ptx.cuh (to_tf32) and common.cuh (is_aligned16).
extern "C" __global__ void split_tf32(long long n, const float* __restrict__ x, float* __restrict__ big,
                                      float* __restrict__ small) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (is_aligned16(x) && is_aligned16(big) && is_aligned16(small)) {
        const long long n4 = n / 4;
        for (long long i = first; i < n4; i += stride) {
            const float4 v = reinterpret_cast<const float4*>(x)[i];
            float4 b, s;
            b.x = __uint_as_float(to_tf32(v.x)); s.x = __uint_as_float(to_tf32(v.x - b.x));
            b.y = __uint_as_float(to_tf32(v.y)); s.y = __uint_as_float(to_tf32(v.y - b.y));
            b.z = __uint_as_float(to_tf32(v.z)); s.z = __uint_as_float(to_tf32(v.z - b.z));
            b.w = __uint_as_float(to_tf32(v.w)); s.w = __uint_as_float(to_tf32(v.w - b.w));
            reinterpret_cast<float4*>(big)[i] = b;
            reinterpret_cast<float4*>(small)[i] = s;
        }
        for (long long i = 4 * n4 + first; i < n; i += stride) {
            const float b = __uint_as_float(to_tf32(x[i]));
            big[i] = b;
            small[i] = __uint_as_float(to_tf32(x[i] - b));
        }
    } else {
        for (long long i = first; i < n; i += stride) {
            const float b = __uint_as_float(to_tf32(x[i]));
            big[i] = b;
            small[i] = __uint_as_float(to_tf32(x[i] - b));
        }
    }
}

// The same split of B fragments in registers (the 3xTF32 rungs' register
// operand): big = rna(x), small = rna(x - big), per element.
template <int kSlices>
__device__ __forceinline__ void split_fragments(const float (&raw)[kSlices][4], unsigned (&big)[kSlices][4],
                                                unsigned (&small)[kSlices][4]) {
#pragma unroll
    for (int ks = 0; ks < kSlices; ++ks)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            big[ks][j] = to_tf32(raw[ks][j]);
            small[ks][j] = to_tf32(raw[ks][j] - __uint_as_float(big[ks][j]));
        }
}
