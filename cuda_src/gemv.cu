// The GEMV path of rungs 17, 18 and 28 (the TF32, 3xTF32 and FP32 tops): where M == 1
// or N == 1 the product is a matrix-vector product, one pass over the
// matrix. Not a rung: the driver loads this file as a helper module.
//
// Why: each element of the matrix is used once, so the time is the time to
// read it (4096 x 4096 floats: 64 MB), and a tiled tensor-core kernel spends
// 15/16 of a 16-row tile on rows that are not there, plus the launches of its
// pre-passes. Here every product is an FP32 FMA (at least as accurate as
// TF32 and 3xTF32; the same as SGEMM) and the matrix is streamed once with
// 16-byte loads where rows allow, many loads in flight per thread.
//
//   gemv_rows (N == 1): C[m] = alpha * A[m, :] . B + beta * C[m]. A block per
//     row: its 256 threads stride over K, then a tree sum in shared memory.
//   gemv_cols, gemv_cols_wide (M == 1): C[n] = alpha * A . B[:, n] + beta * C[n].
//     A block of 512 (1024) per 32 columns: 8 column threads (4 columns each,
//     128 contiguous bytes of a row) x 64 (128) K lanes, 8 (4) loads in flight
//     per thread, summed over the K lanes in shared memory.
// `vec` = 1 where the matrix's rows are 16-byte multiples and A and B are
// 16-byte aligned (then float4 loads; gemv_cols: a block per 8 columns
// otherwise), else 0. beta == 0 never reads C (it may hold NaN). Sums run in
// a fixed order: deterministic.
constexpr int kGemvThreads = 256;
constexpr int kUnroll = 4;  // independent loads in flight per thread

__device__ __forceinline__ float dot4(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }

// The block's 256 partial sums, added in a fixed tree order; thread 0 gets the total.
__device__ __forceinline__ float block_sum(float v, float* sums) {
    sums[threadIdx.x] = v;
    __syncthreads();
    for (int half = kGemvThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
        __syncthreads();
    }
    return sums[0];
}

__device__ __forceinline__ float epilogue(float sum, float alpha, float beta, const float* c) {
    return beta == 0.0f ? alpha * sum : alpha * sum + beta * *c;
}

extern "C" __global__ void __launch_bounds__(kGemvThreads)
gemv_rows(int M, int K, float alpha, const float* __restrict__ A, const float* __restrict__ x, float beta,
          float* __restrict__ C, int vec) {
    __shared__ float sums[kGemvThreads];
    for (int m = blockIdx.x; m < M; m += gridDim.x) {
        const float* row = A + (size_t)m * K;
        float s = 0.0f;
        if (vec) {
            const float4* r4 = reinterpret_cast<const float4*>(row);
            const float4* x4 = reinterpret_cast<const float4*>(x);
            const int n4 = K / 4;
            int k = threadIdx.x;
            for (; k + (kUnroll - 1) * kGemvThreads < n4; k += kUnroll * kGemvThreads) {
                float4 a[kUnroll], b[kUnroll];
#pragma unroll
                for (int u = 0; u < kUnroll; ++u) a[u] = r4[k + u * kGemvThreads], b[u] = x4[k + u * kGemvThreads];
#pragma unroll
                for (int u = 0; u < kUnroll; ++u) s += dot4(a[u], b[u]);
            }
            for (; k < n4; k += kGemvThreads) s += dot4(r4[k], x4[k]);
        } else {
            for (int k = threadIdx.x; k < K; k += kGemvThreads) s += row[k] * x[k];
        }
        const float total = block_sum(s, sums);
        if (threadIdx.x == 0) C[m] = epilogue(total, alpha, beta, C + m);
        __syncthreads();  // sums is reused by the next row
    }
}

// A block per 32 columns: 8 column threads x kBlock / 8 K lanes, kUnroll loads in flight per thread. While
// the blocks all fit at once two to an SM (N <= 64 x SMs), gemv_cols_wide's 1024 threads keep more loads in
// flight per SM (H100, against cuBLAS: 1x4096x4096 97.7% against 89.2% for 512 threads, 1x4228x4096 121.5%
// against 112.1%); beyond, gemv_cols's 512 fit four to an SM with no tail wave (1x11008x4096: 102.7% against
// 99.5%).
constexpr int kColThreads = 8;  // column threads per block

template <int kBlock, int kUnroll>
__device__ __forceinline__ void gemv_cols_body(int N, int K, float alpha, const float* __restrict__ x,
                                               const float* __restrict__ B, float beta, float* __restrict__ C,
                                               int vec) {
    constexpr int kColLanes = kBlock / kColThreads;  // K lanes per block
    __shared__ float sums[kColLanes][kColThreads * 4 + 1];
    const int ct = threadIdx.x % kColThreads, lane = threadIdx.x / kColThreads;
    const int width = vec ? 4 : 1, cols = kColThreads * width;  // columns per block
    const int n = blockIdx.x * cols + ct * width;
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (vec && n < N) {  // N % 4 == 0: the thread's 4 columns are all there
        int k = lane;
        for (; k + (kUnroll - 1) * kColLanes < K; k += kUnroll * kColLanes) {
            float4 b[kUnroll];
            float a[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                b[u] = *reinterpret_cast<const float4*>(B + (size_t)(k + u * kColLanes) * N + n);
                a[u] = x[k + u * kColLanes];
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                s[0] += a[u] * b[u].x, s[1] += a[u] * b[u].y, s[2] += a[u] * b[u].z, s[3] += a[u] * b[u].w;
            }
        }
        for (; k < K; k += kColLanes) {
            const float4 b = *reinterpret_cast<const float4*>(B + (size_t)k * N + n);
            const float a = x[k];
            s[0] += a * b.x, s[1] += a * b.y, s[2] += a * b.z, s[3] += a * b.w;
        }
    } else if (!vec && n < N) {
        for (int k = lane; k < K; k += kColLanes) s[0] += x[k] * B[(size_t)k * N + n];
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) sums[lane][ct * 4 + j] = s[j];
    __syncthreads();
    // One thread per column of the block adds its K lanes in order.
    if (threadIdx.x < cols) {
        const int c = threadIdx.x, col = blockIdx.x * cols + c;
        const int at = vec ? c : c * 4;  // one float per load: column thread c's sum sits in slot 4c
        float total = 0.0f;
        for (int l = 0; l < kColLanes; ++l) total += sums[l][at];
        if (col < N) C[col] = epilogue(total, alpha, beta, C + col);
    }
}

extern "C" __global__ void __launch_bounds__(512)
gemv_cols(int N, int K, float alpha, const float* __restrict__ x, const float* __restrict__ B, float beta,
          float* __restrict__ C, int vec) {
    gemv_cols_body<512, 8>(N, K, alpha, x, B, beta, C, vec);
}

extern "C" __global__ void __launch_bounds__(1024)
gemv_cols_wide(int N, int K, float alpha, const float* __restrict__ x, const float* __restrict__ B, float beta,
               float* __restrict__ C, int vec) {
    gemv_cols_body<1024, 4>(N, K, alpha, x, B, beta, C, vec);
}
