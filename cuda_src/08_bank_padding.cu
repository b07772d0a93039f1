// Rung 8 — shared-memory bank conflicts, fixed by padding instead.
//
// What changed from rung 6 (this rung is the alternative to rung 7, not built
// on it): the shared tiles keep their natural layout but get spare floats.
//   * As rows (one per k) are BM + 4 floats long. In rung 6 the transposed
//     store puts a warp's 32 values into BM-float rows, and BM is a multiple of
//     32, so the two threads that share an m but start 4 k apart hit the same
//     bank: a 2-way conflict on every A store. With BM + 4 the row start moves
//     by 4 banks per k, and the two groups land on disjoint banks.
//   * Bs rows get 4 spare floats after every 32 (a skew): n is stored at
//     n + 4 * (n / 32). The 8 threads of one 128-bit read start 8 floats apart
//     (TN = 8); without the skew threads t and t + 4 are 32 floats apart,
//     the same banks; with it they are 36 apart, 4 banks off. No conflict.
//   Both keep every float4 inside a 32-float group, so all shared accesses
//   stay 16-byte aligned and 128-bit. The price is a little shared memory.
// Bottleneck: the synchronised load phase; the next rungs tune the tile sizes,
//   tile per warp and double-buffer.
// Tile: as rung 6 (128 x 128 x 8, 8 x 8 per thread, 256 threads).
// Edges: as rung 6 — block-uniform float4 fast path for full, aligned tiles;
//   guarded scalar loads (zero-filled) and stores elsewhere.
#include "common.cuh"

constexpr int THREADS = BM * BN / (TM * TN);
constexpr int AS_LD = BM + 4;                         // padded row of the transposed A tile
constexpr int BS_LD = BN + 4 * CEIL_DIV(BN, 32);      // B row with 4 spare floats per 32
static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles must cover the block tile");
static_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0 && BM % 4 == 0 && BN % 4 == 0, "float4 access");
static_assert((BM * BK) % (4 * THREADS) == 0 && (BN * BK) % (4 * THREADS) == 0, "whole float4s per thread");

// Skewed position of column n inside a row of Bs.
__device__ __forceinline__ int bs_col(int n) { return n + 4 * (n / 32); }

extern "C" __global__ void __launch_bounds__(THREADS, min_blocks_for_128_regs(THREADS))
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
      float beta, float* __restrict__ C) {
    __shared__ __align__(16) float As[BK * AS_LD];  // transposed: As[k * AS_LD + m]
    __shared__ __align__(16) float Bs[BK * BS_LD];  // Bs[k * BS_LD + bs_col(n)]

    const int threadRow = threadIdx.x / (BN / TN);
    const int threadCol = threadIdx.x % (BN / TN);

    const int rowStart = blockIdx.y * BM, colStart = blockIdx.x * BN;
    const int rowsLeft = M - rowStart, colsLeft = N - colStart;
    // Block-uniform: may this block use 128-bit accesses (K edge aside)?
    const bool aVector = K % 4 == 0 && is_aligned16(A) && rowsLeft >= BM;
    const bool bVector = N % 4 == 0 && is_aligned16(B) && colsLeft >= BN;
    const bool cVector = N % 4 == 0 && is_aligned16(C) && rowsLeft >= BM && colsLeft >= BN;
    A += (size_t)rowStart * K;
    B += colStart;
    C += (size_t)rowStart * N + colStart;

    float acc[TM][TN] = {};
    float regM[TM], regN[TN];
#pragma unroll 1  // one k-step per iteration keeps register pressure predictable
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int kLeft = K - k0;
        const bool kFull = kLeft >= BK;

#pragma unroll
        for (int l = 0; l < BM * BK / (4 * THREADS); ++l) {
            const int i = threadIdx.x + l * THREADS;
            const int m = i / (BK / 4), k = (i % (BK / 4)) * 4;
            const float4 v = load_float4(A, K, m, k, rowsLeft, kLeft, aVector && kFull);
            As[(k + 0) * AS_LD + m] = v.x;
            As[(k + 1) * AS_LD + m] = v.y;
            As[(k + 2) * AS_LD + m] = v.z;
            As[(k + 3) * AS_LD + m] = v.w;
        }
#pragma unroll
        for (int l = 0; l < BK * BN / (4 * THREADS); ++l) {
            const int i = threadIdx.x + l * THREADS;
            const int k = i / (BN / 4), n = (i % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[k * BS_LD + bs_col(n)]) =
                load_float4(B, N, k, n, kLeft, colsLeft, bVector && kFull);
        }
        __syncthreads();
        A += BK;
        B += (size_t)BK * N;

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 a = *reinterpret_cast<const float4*>(&As[k * AS_LD + threadRow * TM + i]);
                regM[i] = a.x; regM[i + 1] = a.y; regM[i + 2] = a.z; regM[i + 3] = a.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 b = *reinterpret_cast<const float4*>(&Bs[k * BS_LD + bs_col(threadCol * TN + j)]);
                regN[j] = b.x; regN[j + 1] = b.y; regN[j + 2] = b.z; regN[j + 3] = b.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            store_float4(C, N, threadRow * TM + i, threadCol * TN + j, rowsLeft, colsLeft,
                         make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), alpha, beta, cVector);
}
