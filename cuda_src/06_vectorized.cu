// Rung 6 — vectorised memory access.
//
// What changed from rung 5:
//   * Global loads of A and B tiles are float4 (128-bit, LDG.E.128): a quarter
//     of the load instructions for the same bytes.
//   * The A tile is stored TRANSPOSED in shared memory, As[k][m]. The TM values
//     of A a thread needs for one k are then contiguous and come in TM/4
//     128-bit shared loads (LDS.128) instead of TM scalar ones; B was already
//     contiguous and is read the same way.
//   * C is written with float4 stores.
//   * __launch_bounds__ also asks for two blocks per SM (<= 128 registers a
//     thread). The vector accesses need fewer address registers than rung 5's
//     scalar ones, so the cap costs no spills, and 16 resident warps instead
//     of 8 let one block's load phase overlap the other's FMAs.
// Bottleneck: the kernel is now close to FMA-bound; what remains is shared-
//   memory bank conflicts (the transposed A stores and the B reads, fixed in
//   rungs 7 and 8) and the latency of the synchronised load phase.
// Tile: BM x BN x BK per block of BM*BN/(TM*TN) threads, TM x TN per thread
//   (128 x 128 x 8, 8 x 8 and 256 threads at the defaults).
// Edges: a float4 global access is only legal when the row stride is a
//   multiple of 4, the pointer 16-byte aligned and all four elements in range.
//   That is decided once per block (rows / columns) and once per k-step (the
//   K edge), uniformly for the whole block: interior tiles take the 128-bit
//   path with no per-element checks; edge tiles fall back to guarded scalar
//   accesses that zero-fill shared memory. The FMA loop never checks anything.
#include "common.cuh"

constexpr int THREADS = BM * BN / (TM * TN);
static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles must cover the block tile");
static_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0 && BM % 4 == 0 && BN % 4 == 0, "float4 access");
static_assert((BM * BK) % (4 * THREADS) == 0 && (BN * BK) % (4 * THREADS) == 0, "whole float4s per thread");

extern "C" __global__ void __launch_bounds__(THREADS, min_blocks_for_128_regs(THREADS))
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
      float beta, float* __restrict__ C) {
    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k * BM + m]
    __shared__ __align__(16) float Bs[BK * BN];  // Bs[k * BN + n]

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

        // A: a float4 runs along k (4 consecutive k of one row m); it is
        // scattered into 4 rows of the transposed tile.
#pragma unroll
        for (int l = 0; l < BM * BK / (4 * THREADS); ++l) {
            const int i = threadIdx.x + l * THREADS;
            const int m = i / (BK / 4), k = (i % (BK / 4)) * 4;
            const float4 v = load_float4(A, K, m, k, rowsLeft, kLeft, aVector && kFull);
            As[(k + 0) * BM + m] = v.x;
            As[(k + 1) * BM + m] = v.y;
            As[(k + 2) * BM + m] = v.z;
            As[(k + 3) * BM + m] = v.w;
        }
        // B: a float4 runs along n and lands unchanged in shared memory.
#pragma unroll
        for (int l = 0; l < BK * BN / (4 * THREADS); ++l) {
            const int i = threadIdx.x + l * THREADS;
            const int k = i / (BN / 4), n = (i % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[k * BN + n]) = load_float4(B, N, k, n, kLeft, colsLeft, bVector && kFull);
        }
        __syncthreads();
        A += BK;
        B += (size_t)BK * N;

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            // Both fragments are contiguous now: TM/4 + TN/4 128-bit shared loads.
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 a = *reinterpret_cast<const float4*>(&As[k * BM + threadRow * TM + i]);
                regM[i] = a.x; regM[i + 1] = a.y; regM[i + 2] = a.z; regM[i + 3] = a.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 b = *reinterpret_cast<const float4*>(&Bs[k * BN + threadCol * TN + j]);
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
