// Infinities through 3xTF32 (rungs 15 and 18, and their mma.sync fallbacks). The split x =
// big + small makes small = rna(Inf - Inf) = NaN for x = +-Inf, and an
// Inf's big half times the other operand's small half is an infinity of
// that small half's sign, which may differ from big x big's: three products
// give NaN where one FP32 product gives +-Inf. So a sum that comes out NaN
// is summed again here, in FP32 from the original A and B over the same K
// range: NaN where an input makes it NaN, +-Inf where FP32 gives that.
// On finite inputs the check costs a compare per sum and one vote of the
// warp at the end of a tile; the recomputation runs only where an input is
// non-finite, and there the whole warp sums each NaN sum of any of its
// lanes in turn: lane l takes k = k0 + l, k0 + l + 32, ... (A's row read
// coalesced, 32 loads of B's column in flight), then a shuffle reduction.
// One lane alone would walk K serially, and a column of C's sums sits with
// few lanes (rung 18: 4 lanes, 32 sums each): at 1024^3 one -Inf in B took
// 2.9 ms a call that way, 0.22 ms this way (H200; docs/history.md).
// Needs nothing but CUDA's intrinsics.

// The whole warp: sum over k in [k0, k1) of A[m][k] * B[k][n] (A row-major
// with K columns, B with N), every lane returning it.
__device__ __forceinline__ float warp_fp32_dot(const float* A, const float* B, int N, int K, int m, int n, int k0,
                                                int k1) {
    const float* a = A + (size_t)m * K;
    float s = 0.0f;
    for (int k = k0 + threadIdx.x % 32; k < k1; k += 32) s = fmaf(a[k], B[(size_t)k * N + n], s);
#pragma unroll
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    return s;
}

// Replaces each NaN among a thread's kSums sums by the FP32 sum at its
// element of C: element(i, m, n) gives sum i's row and column of the real C
// (M x N, A M x K and B K x N row-major as the user passed them). All 32
// lanes of a warp call it together. Sum by sum (unrolled: constant indices,
// the sums stay in registers) the warp votes on which lanes have it NaN.
template <int kSums, class Element>
__device__ __forceinline__ void recompute_nan(float (&sums)[kSums], Element element, const float* A, const float* B,
                                              int M, int N, int K, int k0, int k1) {
    bool any = false;
#pragma unroll
    for (int i = 0; i < kSums; ++i) any |= sums[i] != sums[i];
    if (!__any_sync(0xffffffffu, any)) return;  // finite sums in every lane: the usual case
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < kSums; ++i) {
#pragma unroll 1
        for (unsigned lanes = __ballot_sync(0xffffffffu, sums[i] != sums[i]); lanes != 0; lanes &= lanes - 1) {
            const int owner = __ffs(lanes) - 1;
            int m, n;
            element(i, m, n);
            m = __shfl_sync(0xffffffffu, m, owner);
            n = __shfl_sync(0xffffffffu, n, owner);
            const float s = m < M && n < N ? warp_fp32_dot(A, B, N, K, m, n, k0, k1) : 0.0f;  // (uniform)
            if (lane == owner) sums[i] = s;
        }
    }
}
