// K split over KSPLIT > 2 blocks through FP32 partial sums in global memory
// (rungs 30-33; sm_90a). Where a shape has few C tiles and a long K (a few
// tokens against a wide layer, or K far above M and N), a pair of blocks
// (half_split.cuh) still leaves most SMs idle: here unit u of the grid is C
// tile u % tiles over the u / tiles-th of K's tiles (cluster_gemm's
// cluster_unit), so tiles x KSPLIT units fill the GPU. Each block writes its
// raw FP32 sums to its slice of `partials` (KSPLIT slices of M x N), and
// reduce_splits16, launched after it, adds the slices up in a fixed order
// (the same C every run) and applies the epilogue once, rounding to the
// 16-bit type. Include inside `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, after
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

// The slices of partials as items of one or two neighbouring elements of C (two where M * N is even and C
// 4-byte aligned: one 32-bit store of a 16-bit pair).
template <bool kPairs>
struct PartialItems {
    const float* partials;
    size_t items;  // per slice

    __device__ __forceinline__ float2 load(int z, size_t i) const {
        if constexpr (kPairs) return reinterpret_cast<const float2*>(partials)[z * items + i];
        else return make_float2(partials[z * items + i], 0.0f);
    }
    // Splits first, first + step, ... of item i, added in that order.
    __device__ __forceinline__ float2 sum(size_t i, int first, int splits, int step) const {
        float2 s = load(first, i);
        for (int z = first + step; z < splits; z += step) {
            const float2 v = load(z, i);
            s.x += v.x;
            s.y += v.y;
        }
        return s;
    }
    __device__ __forceinline__ void store(elem16* C, size_t i, float2 s, float alpha, float beta) const {
        if constexpr (kPairs) store16x2(C + 2 * i, s.x, s.y, alpha, beta);
        else store16(C + i, s.x, alpha, beta);
    }
};

// parts = 1: a grid-stride loop, a thread per item, its splits added in order z = 0, 1, ... parts = P > 1
// (few items and many splits, where one thread's chain of S loads would outlast the product): P threads of
// a block share an item, thread p adding splits p, p + P, ... in order, and the first of them adding the P
// sums in order p = 0..P-1 through shared memory. A fixed order either way: the same C every run.
template <bool kPairs>
__device__ __forceinline__ void reduce_items16(PartialItems<kPairs> in, int splits, int parts, float alpha,
                                               float beta, elem16* C, float2* sums) {
    if (parts == 1) {
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < in.items; i += (size_t)gridDim.x * blockDim.x)
            in.store(C, i, in.sum(i, 0, splits, 1), alpha, beta);
        return;
    }
    const int lanes = blockDim.x / parts, lane = threadIdx.x % lanes, part = threadIdx.x / lanes;
    for (size_t base = (size_t)blockIdx.x * lanes; base < in.items; base += (size_t)gridDim.x * lanes) {
        const size_t i = base + lane;
        sums[threadIdx.x] = i < in.items && part < splits ? in.sum(i, part, splits, parts) : make_float2(0.0f, 0.0f);
        __syncthreads();
        if (part == 0 && i < in.items) {
            float2 s = sums[lane];
            for (int p = 1; p < parts; ++p) {
                s.x += sums[p * lanes + lane].x;
                s.y += sums[p * lanes + lane].y;
            }
            in.store(C, i, s, alpha, beta);
        }
        __syncthreads();
    }
}

// C = alpha * (sum over the splits of partials[z]) + beta * C, rounded once to the 16-bit type. Blocks of
// 256 threads; parts (1, 2, 4, ... 32, at most splits) is the driver's choice (reduce16_parts).
extern "C" __global__ void __launch_bounds__(256)
reduce_splits16(int M, int N, int splits, int parts, float alpha, const float* __restrict__ partials, float beta,
                elem16* __restrict__ C) {
    __shared__ float2 sums[256];
    const size_t total = (size_t)M * N;
    if (total % 2 == 0 && (reinterpret_cast<unsigned long long>(C) & 3) == 0)
        reduce_items16(PartialItems<true>{partials, total / 2}, splits, parts, alpha, beta, C, sums);
    else
        reduce_items16(PartialItems<false>{partials, total}, splits, parts, alpha, beta, C, sums);
}
