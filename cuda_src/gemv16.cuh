// The GEMV path of rungs 30-33 (the BF16 and FP16 tops): gemv.cu's idea for
// 16-bit elements. Where M == 1 or N == 1 each element of the matrix is used
// once, so the time is the time to read it (4096 x 4096 x 2 bytes: 32 MB),
// and a 64 x 64 tensor-core tile spends 63/64 of its work on a row or column
// that is not there. The products are FP32 FMAs on the 16-bit values, summed
// in FP32 in a fixed order (deterministic), C rounded once. Not a rung:
// gemv_bf16.cu and gemv_fp16.cu include it after half.cuh (-D BF16 there).
//
//   gemv16_rows (N == 1): C[m] = alpha * A[m, :] . x + beta * C[m]. A warp
//     per row: its lanes stride over K, 8 elements (16 bytes) a load, then a
//     shuffle sum in a fixed order.
//   gemv16_cols, gemv16_cols_wide (M == 1): C[n] = alpha * x . B[:, n] + beta
//     * C[n]. A block of 512 (1024) per 32 columns: 4 column threads (8
//     columns each, 64 contiguous bytes of a row) x 128 (256) K lanes, summed
//     over the lanes in shared memory.
// `vec` = 1 where the matrix's rows are 16-byte multiples (K, or N, a
// multiple of 8) and A and B are 16-byte aligned; else one value a load.
// beta == 0 never reads C.

constexpr int kGemv16Threads = 256;   // gemv16_rows: 8 warps, a row each
constexpr int kGemv16Unroll = 4;      // independent 16-byte loads in flight per thread
constexpr int kGemv16ColThreads = 4;  // gemv16_cols: column threads per block

// Eight 16-bit values (one 16-byte load) as FP32, multiplied pairwise and added in order.
__device__ __forceinline__ float dot8(uint4 a, uint4 b) {
    const elem16* x = reinterpret_cast<const elem16*>(&a);
    const elem16* y = reinterpret_cast<const elem16*>(&b);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) s += to_float(x[i]) * to_float(y[i]);
    return s;
}

extern "C" __global__ void __launch_bounds__(kGemv16Threads)
gemv16_rows(int M, int K, float alpha, const elem16* __restrict__ A, const elem16* __restrict__ x, float beta,
            elem16* __restrict__ C, int vec) {
    const int lane = threadIdx.x % 32, warps = gridDim.x * (kGemv16Threads / 32);
    for (int m = blockIdx.x * (kGemv16Threads / 32) + threadIdx.x / 32; m < M; m += warps) {
        const elem16* row = A + (size_t)m * K;
        float s = 0.0f;
        if (vec) {
            const uint4* r8 = reinterpret_cast<const uint4*>(row);
            const uint4* x8 = reinterpret_cast<const uint4*>(x);
            const int n8 = K / 8;
            int k = lane;
            for (; k + (kGemv16Unroll - 1) * 32 < n8; k += kGemv16Unroll * 32) {
                uint4 a[kGemv16Unroll], b[kGemv16Unroll];
#pragma unroll
                for (int u = 0; u < kGemv16Unroll; ++u) a[u] = r8[k + 32 * u], b[u] = x8[k + 32 * u];
#pragma unroll
                for (int u = 0; u < kGemv16Unroll; ++u) s += dot8(a[u], b[u]);
            }
            for (; k < n8; k += 32) s += dot8(r8[k], x8[k]);
        } else {
            for (int k = lane; k < K; k += 32) s += to_float(row[k]) * to_float(x[k]);
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
        if (lane == 0) store16(C + m, s, alpha, beta);
    }
}

// A block per 32 columns: 4 column threads (8 columns each) x kBlock / 4 K lanes, kUnroll loads in flight per
// thread. As gemv.cu: 1024 threads while the blocks all fit at once, two to an SM, else 512 (four to an SM).
template <int kBlock, int kUnroll>
__device__ __forceinline__ void gemv16_cols_body(int N, int K, float alpha, const elem16* __restrict__ x,
                                                 const elem16* __restrict__ B, float beta, elem16* __restrict__ C,
                                                 int vec) {
    constexpr int kLanes = kBlock / kGemv16ColThreads;  // K lanes per block
    constexpr int kCols = kGemv16ColThreads * 8;         // columns per block
    __shared__ float sums[kLanes][kCols + 1];
    const int ct = threadIdx.x % kGemv16ColThreads, lane = threadIdx.x / kGemv16ColThreads;
    const int n = blockIdx.x * kCols + ct * 8;
    float s[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    if (vec && n < N) {  // N % 8 == 0: the thread's 8 columns are all there, one 16-byte load a row
        int k = lane;
        for (; k + (kUnroll - 1) * kLanes < K; k += kUnroll * kLanes) {
            uint4 b[kUnroll];
            float a[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                b[u] = *reinterpret_cast<const uint4*>(B + (size_t)(k + u * kLanes) * N + n);
                a[u] = to_float(x[k + u * kLanes]);
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const elem16* v = reinterpret_cast<const elem16*>(&b[u]);
#pragma unroll
                for (int j = 0; j < 8; ++j) s[j] += a[u] * to_float(v[j]);
            }
        }
        for (; k < K; k += kLanes) {
            const uint4 b = *reinterpret_cast<const uint4*>(B + (size_t)k * N + n);
            const elem16* v = reinterpret_cast<const elem16*>(&b);
            const float a = to_float(x[k]);
#pragma unroll
            for (int j = 0; j < 8; ++j) s[j] += a * to_float(v[j]);
        }
    } else if (n < N) {  // rows not 16-byte multiples: the same 8 columns, one value a load (8 in flight)
        for (int k = lane; k < K; k += kLanes) {
            const elem16* row = B + (size_t)k * N + n;
            const float a = to_float(x[k]);
#pragma unroll
            for (int j = 0; j < 8; ++j)
                if (n + j < N) s[j] += a * to_float(row[j]);
        }
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) sums[lane][ct * 8 + j] = s[j];
    __syncthreads();
    // One thread per column of the block adds its K lanes in order.
    if (threadIdx.x < kCols) {
        const int col = blockIdx.x * kCols + threadIdx.x;
        float total = 0.0f;
        for (int l = 0; l < kLanes; ++l) total += sums[l][threadIdx.x];
        if (col < N) store16(C + col, total, alpha, beta);
    }
}

extern "C" __global__ void __launch_bounds__(512)
gemv16_cols(int N, int K, float alpha, const elem16* __restrict__ x, const elem16* __restrict__ B, float beta,
            elem16* __restrict__ C, int vec) {
    gemv16_cols_body<512, 8>(N, K, alpha, x, B, beta, C, vec);
}

extern "C" __global__ void __launch_bounds__(1024)
gemv16_cols_wide(int N, int K, float alpha, const elem16* __restrict__ x, const elem16* __restrict__ B, float beta,
                 elem16* __restrict__ C, int vec) {
    gemv16_cols_body<1024, 4>(N, K, alpha, x, B, beta, C, vec);
}
