// Rung 7 — shared-memory bank conflicts, fixed by re-laying out the B tile.
//
// What changed from rung 6: where B values live in shared memory. In rung 6 a
//   thread reads its TN values of one k as float4s at column threadCol * TN.
//   A 128-bit shared load is served 8 threads (32 banks) at a time; with
//   TN = 8 those 8 threads start 8 floats apart, spanning 64 floats, so thread
//   t and thread t + 4 hit the same banks: a 2-way conflict on every B read.
//   Here each row of the B tile is stored "quad-major": first the first float4
//   of every thread column, then the second float4 of every thread column, ...
//   A warp's float4 reads of one k are then 16-byte neighbours — consecutive
//   banks, no conflict — and the TN/4 reads of a thread are BN/TN*4 apart.
//   The loader walks the tile in destination order (thread i writes shared
//   quad i of a row and fetches whichever global quad belongs there), so the
//   shared stores are contiguous too; the global reads of a warp still cover
//   one contiguous 512-byte row, so they stay coalesced.
// Bottleneck: the transposed scalar stores of the A tile (2-way conflicts,
//   rung 8's subject) and the synchronised load phase.
// Tile: as rung 6 (128 x 128 x 8, 8 x 8 per thread, 256 threads).
// Edges: as rung 6 — block-uniform float4 fast path for full, aligned tiles;
//   guarded scalar loads (zero-filled) and stores elsewhere.
#include "common.cuh"

constexpr int THREADS = BM * BN / (TM * TN);
constexpr int THREAD_COLS = BN / TN;  // threads across the block tile
static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles must cover the block tile");
static_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0 && BM % 4 == 0 && BN % 4 == 0, "float4 access");
static_assert((BM * BK) % (4 * THREADS) == 0 && (BN * BK) % (4 * THREADS) == 0, "whole float4s per thread");

// Shared offset, inside one row of Bs, of quad q (0 .. TN/4-1) of thread column t.
__device__ __forceinline__ int bs_quad(int t, int q) { return (q * THREAD_COLS + t) * 4; }

extern "C" __global__ void __launch_bounds__(THREADS, min_blocks_for_128_regs(THREADS))
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
      float beta, float* __restrict__ C) {
    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k * BM + m]
    __shared__ __align__(16) float Bs[BK * BN];  // Bs[k * BN + bs_quad(n / TN, n % TN / 4) + n % 4]

    const int threadRow = threadIdx.x / THREAD_COLS;
    const int threadCol = threadIdx.x % THREAD_COLS;

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
            As[(k + 0) * BM + m] = v.x;
            As[(k + 1) * BM + m] = v.y;
            As[(k + 2) * BM + m] = v.z;
            As[(k + 3) * BM + m] = v.w;
        }
        // B: thread i fills shared quad p of row k, i.e. quad q of thread column
        // t, which holds global columns t * TN + q * 4 .. +3.
#pragma unroll
        for (int l = 0; l < BK * BN / (4 * THREADS); ++l) {
            const int i = threadIdx.x + l * THREADS;
            const int k = i / (BN / 4), p = i % (BN / 4);
            const int q = p / THREAD_COLS, t = p % THREAD_COLS;
            *reinterpret_cast<float4*>(&Bs[k * BN + bs_quad(t, q)]) =
                load_float4(B, N, k, t * TN + q * 4, kLeft, colsLeft, bVector && kFull);
        }
        __syncthreads();
        A += BK;
        B += (size_t)BK * N;

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 a = *reinterpret_cast<const float4*>(&As[k * BM + threadRow * TM + i]);
                regM[i] = a.x; regM[i + 1] = a.y; regM[i + 2] = a.z; regM[i + 3] = a.w;
            }
#pragma unroll
            for (int q = 0; q < TN / 4; ++q) {
                const float4 b = *reinterpret_cast<const float4*>(&Bs[k * BN + bs_quad(threadCol, q)]);
                regN[4 * q] = b.x; regN[4 * q + 1] = b.y; regN[4 * q + 2] = b.z; regN[4 * q + 3] = b.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }

    // C keeps the natural layout: the re-layout lives only in shared memory.
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            store_float4(C, N, threadRow * TM + i, threadCol * TN + j, rowsLeft, colsLeft,
                         make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), alpha, beta, cVector);
}
