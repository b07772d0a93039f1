// K split over KSPLIT > 2 blocks through FP32 partial sums in global memory
// (rungs 30-33; sm_90a). Where a shape has few C tiles and a long K (a few
// tokens against a wide layer, or K far above M and N), a pair of blocks
// (half_split.cuh) still leaves most SMs idle: here unit u of the grid is C
// tile u % tiles over the u / tiles-th of K's tiles (cluster_gemm's
// cluster_unit), so tiles x KSPLIT units fill the GPU. Each block writes its
// raw FP32 sums to its slice of `partials` (KSPLIT slices of M x N), and
// reduce_splits16, launched after it, adds the slices in split order (the
// same C every run) and applies the epilogue once, rounding to the 16-bit
// type. Include inside `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, after
// half_tma.cuh.

static_assert(KSPLIT <= 2 || CLUSTER == 1, "K split through partials: no clusters (each block loads its own B)");

// The epilogue of a split unit: the warpgroup's 64 rows of raw sums into slice `split`, 8-byte stores where
// N is even (n is even, so n < N means n + 1 < N too), else guarded 4-byte ones.
struct PartialEpilogue {
    float* partials;
    int M, N;

    template <typename Owned>
    __device__ __forceinline__ void operator()(const HalfRing&, const float (&acc)[kHalfAcc], int m0, int n0, int wg,
                                               Owned, int split) const {
        float* out = partials + (size_t)split * M * N;
        const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
        const int m = m0 + 64 * wg + 16 * warp + lane / 4, n = n0 + 2 * (lane % 4);
#pragma unroll
        for (int i = 0; i < kHalfAcc / 4; ++i) {
            put(out, m, n + 8 * i, acc[4 * i], acc[4 * i + 1]);
            put(out, m + 8, n + 8 * i, acc[4 * i + 2], acc[4 * i + 3]);
        }
    }
    __device__ __forceinline__ void put(float* out, int m, int n, float a0, float a1) const {
        if (m >= M || n >= N) return;
        float* p = out + (size_t)m * N + n;
        if (N % 2 == 0) {
            *reinterpret_cast<float2*>(p) = make_float2(a0, a1);
            return;
        }
        p[0] = a0;
        if (n + 1 < N) p[1] = a1;
    }
    __device__ __forceinline__ void finish() const {}
};

// C = alpha * (sum over z = 0, 1, ... of partials[z]) + beta * C, rounded once to the 16-bit type; a
// grid-stride loop, two elements a thread where M * N is even and C 4-byte aligned (one 32-bit store).
extern "C" __global__ void __launch_bounds__(256)
reduce_splits16(int M, int N, int splits, float alpha, const float* __restrict__ partials, float beta,
                elem16* __restrict__ C) {
    const size_t total = (size_t)M * N, stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (total % 2 == 0 && (reinterpret_cast<unsigned long long>(C) & 3) == 0) {
        const float2* p2 = reinterpret_cast<const float2*>(partials);
        for (size_t i = first; i < total / 2; i += stride) {
            float2 s = p2[i];
            for (int z = 1; z < splits; ++z) {
                const float2 v = p2[z * (total / 2) + i];
                s.x += v.x;
                s.y += v.y;
            }
            store16x2(C + 2 * i, s.x, s.y, alpha, beta);
        }
        return;
    }
    for (size_t i = first; i < total; i += stride) {
        float s = partials[i];
        for (int z = 1; z < splits; ++z) s += partials[z * total + i];
        store16(C + i, s, alpha, beta);
    }
}
