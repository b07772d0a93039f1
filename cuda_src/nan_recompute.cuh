// Infinities through 3xTF32 (rungs 15 and 18, and their mma.sync fallbacks). The split x =
// big + small makes small = rna(Inf - Inf) = NaN for x = +-Inf, and an
// Inf's big half times the other operand's small half is an infinity of
// that small half's sign, which may differ from big x big's: three products
// give NaN where one FP32 product gives +-Inf. So a sum that comes out NaN
// is summed again here, in FP32 from the original A and B over the same K
// range: NaN where an input makes it NaN (the loop stops at the first),
// +-Inf where FP32 gives that. The check costs a compare per sum at the end
// of a tile; the loop runs only where an input is non-finite.
// Needs nothing but CUDA's intrinsics.

// sum over k in [k0, k1) of A[m][k] * B[k][n]: A row-major with K columns, B
// with N; stops once the sum is NaN (it stays NaN).
__device__ __forceinline__ float fp32_dot(const float* A, const float* B, int N, int K, int m, int n, int k0,
                                           int k1) {
    const float* a = A + (size_t)m * K;
    const float* b = B + n;
    float s = 0.0f;
    for (int k = k0; k < k1 && s == s; ++k) s = fmaf(a[k], b[(size_t)k * N], s);
    return s;
}

// Replaces each NaN among a thread's kSums sums by fp32_dot at its element
// of C: element(i, m, n) gives sum i's row and column of the real C (M x N,
// A M x K and B K x N as the user passed them). The NaNs are found 32 at a
// time as a bit mask, so the sums stay in registers (no dynamic index).
template <int kSums, class Element>
__device__ __forceinline__ void recompute_nan(float (&sums)[kSums], Element element, const float* A, const float* B,
                                              int M, int N, int K, int k0, int k1) {
#pragma unroll
    for (int base = 0; base < kSums; base += 32) {
        unsigned nan = 0;
#pragma unroll
        for (int i = base; i < kSums && i < base + 32; ++i) nan |= (unsigned)(sums[i] != sums[i]) << (i - base);
#pragma unroll 1
        while (nan != 0) {
            const int i = base + __ffs(nan) - 1;
            nan &= nan - 1;
            int m, n;
            element(i, m, n);
            const float s = m < M && n < N ? fp32_dot(A, B, N, K, m, n, k0, k1) : 0.0f;
#pragma unroll
            for (int j = base; j < kSums && j < base + 32; ++j)
                if (j == i) sums[j] = s;
        }
    }
}
