// Rung 5 — 2-D blocktiling.
//
// What changed: each thread computes a TM x TN tile of C instead of a TM x 1
//   column. Per step of k it copies TM values of A and TN values of B from
//   shared memory into registers and does TM*TN FMAs on them (an outer
//   product): 64 FMAs for 16 shared loads at TM = TN = 8, against 8 FMAs for 9
//   loads in rung 4. The block tile grows to 128 x 128, so each global element
//   is reused 128 times.
// Bottleneck: shared-memory loads of A — As is stored [m][k], so the TM values
//   a thread needs for one k are BK floats apart and take TM scalar loads; and
//   the global loads are still scalar. Rung 6 fixes both.
// Tile: BM x BN per block of BM*BN/(TM*TN) threads (256 at the defaults),
//   K in BK-deep steps; thread t owns rows (t / (BN/TN))*TM.. and columns
//   (t % (BN/TN))*TN.. of the block tile.
// Edges: out-of-range tile elements are loaded as 0; stores are guarded.
#include "common.cuh"

constexpr int THREADS = BM * BN / (TM * TN);
static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles must cover the block tile");
static_assert((BM * BK) % THREADS == 0 && (BN * BK) % THREADS == 0, "every thread loads the same count");

// Two blocks per SM (<= 128 registers a thread) where ptxas fits the unrolled
// loop in them without spilling: on sm_90, 16 warps hide the shared-load
// latency that 8 do not (H200 figures: results/notes/2026-11-kernel-measurements.md).
// sm_80's ptxas would spill 164 bytes under that cap, so it keeps one.
#if __CUDA_ARCH__ >= 900
#define R5_MIN_BLOCKS 2
#else
#define R5_MIN_BLOCKS 1
#endif

extern "C" __global__ void __launch_bounds__(THREADS, R5_MIN_BLOCKS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
      float beta, float* __restrict__ C) {
    __shared__ float As[BM * BK];  // As[m * BK + k]
    __shared__ float Bs[BK * BN];  // Bs[k * BN + n]

    const int threadRow = threadIdx.x / (BN / TN);
    const int threadCol = threadIdx.x % (BN / TN);

    const int rowStart = blockIdx.y * BM, colStart = blockIdx.x * BN;
    const int rowsLeft = M - rowStart, colsLeft = N - colStart;
    A += (size_t)rowStart * K;
    B += colStart;
    C += (size_t)rowStart * N + colStart;

    float acc[TM][TN] = {};
    float regM[TM], regN[TN];
#pragma unroll 1  // one k-step per iteration keeps register pressure predictable
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int kLeft = K - k0;
        // Each thread copies (BM*BK)/THREADS elements of A and (BK*BN)/THREADS of
        // B; consecutive threads take consecutive elements of a row (coalesced).
#pragma unroll
        for (int l = 0; l < BM * BK / THREADS; ++l) {
            const int i = threadIdx.x + l * THREADS;
            As[i] = load_guarded(A, K, i / BK, i % BK, rowsLeft, kLeft);
        }
#pragma unroll
        for (int l = 0; l < BK * BN / THREADS; ++l) {
            const int i = threadIdx.x + l * THREADS;
            Bs[i] = load_guarded(B, N, i / BN, i % BN, kLeft, colsLeft);
        }
        __syncthreads();
        A += BK;
        B += (size_t)BK * N;

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            // Cache this k's slice of A and B in registers, then reuse each value TN (or TM) times.
#pragma unroll
            for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + k];
#pragma unroll
            for (int j = 0; j < TN; ++j) regN[j] = Bs[k * BN + threadCol * TN + j];
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
        for (int j = 0; j < TN; ++j)
            store_guarded(C, N, threadRow * TM + i, threadCol * TN + j, rowsLeft, colsLeft, acc[i][j], alpha, beta);
}
