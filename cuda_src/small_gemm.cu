// The small-product path of rungs 17 and 18 (the TF32 and 3xTF32 tops):
// where M x N x K is so small that launches, not arithmetic, take the time.
// Not a rung: the driver loads this file as a helper module.
//
// Why: at 3 x 5 x 7 rung 18 runs four launches (a row-pad copy of A and of
// B for TMA's 16-byte rule, the split of A into big and small parts, the
// tiles) where SGEMM runs one, and each costs about as much as the product
// itself. Here the whole product is one launch that reads A and B as they
// are (any M, N, K, any alignment), every product an FP32 FMA: at least as
// accurate as TF32 and 3xTF32, the same as SGEMM.
//
//   small_gemm: a block of 256 threads per 32 x 32 tile of C; K in steps of
//     32 through shared memory (zeros past the edges), the next step's loads
//     in flight while a step is summed; thread (tx, ty) sums
//     rows ty, ty + 8, ty + 16, ty + 24 of column tx in K order
//     (deterministic). beta == 0 never reads C (it may hold NaN).
constexpr int kSmallTile = 32;
constexpr int kSmallThreads = 256;
constexpr int kSmallRows = kSmallThreads / kSmallTile;  // thread rows: each sums kSmallTile / kSmallRows rows

extern "C" __global__ void __launch_bounds__(kSmallThreads)
small_gemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
           float* __restrict__ C) {
    // +1: a thread row reads a column of As (the same word for the whole warp: a broadcast); the
    // padding keeps the writes of a row of 32 to distinct banks.
    __shared__ float As[kSmallTile][kSmallTile + 1], Bs[kSmallTile][kSmallTile + 1];
    const int tx = threadIdx.x % kSmallTile, ty = threadIdx.x / kSmallTile;
    const int m0 = blockIdx.y * kSmallTile, n0 = blockIdx.x * kSmallTile;
    constexpr int kPerThread = kSmallTile / kSmallRows;
    // The next K step's elements wait in registers while this one is summed: at these sizes a block has
    // few K steps and each would otherwise wait a whole round trip to memory.
    float a_next[kPerThread], b_next[kPerThread];
    auto fetch = [&](int k0) {
#pragma unroll
        for (int i = 0; i < kPerThread; ++i) {
            const int r = ty + kSmallRows * i;
            a_next[i] = m0 + r < M && k0 + tx < K ? A[(size_t)(m0 + r) * K + k0 + tx] : 0.0f;
            b_next[i] = k0 + r < K && n0 + tx < N ? B[(size_t)(k0 + r) * N + n0 + tx] : 0.0f;
        }
    };
    float acc[kPerThread] = {};
    fetch(0);
    for (int k0 = 0; k0 < K; k0 += kSmallTile) {
#pragma unroll
        for (int i = 0; i < kPerThread; ++i) {
            As[ty + kSmallRows * i][tx] = a_next[i];
            Bs[ty + kSmallRows * i][tx] = b_next[i];
        }
        __syncthreads();
        if (k0 + kSmallTile < K) fetch(k0 + kSmallTile);
#pragma unroll
        for (int kk = 0; kk < kSmallTile; ++kk) {
            const float b = Bs[kk][tx];
#pragma unroll
            for (int i = 0; i < kPerThread; ++i) acc[i] += As[ty + kSmallRows * i][kk] * b;
        }
        __syncthreads();
    }
    const int n = n0 + tx;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
        const int m = m0 + ty + kSmallRows * i;
        if (m < M && n < N) {
            float* c = C + (size_t)m * N + n;
            *c = beta == 0.0f ? alpha * acc[i] : alpha * acc[i] + beta * *c;
        }
    }
}
