// Rung 4 — 1-D blocktiling.
//
// What changed: each thread now computes TM results (a short column of C)
//   instead of one. In the inner loop it loads one B value from shared memory
//   into a register and reuses it for TM FMAs against TM values of A, so the
//   shared-memory loads per FMA drop from 2 to about 1 + 1/TM. The tile also
//   becomes rectangular in K (BM x BK and BK x BN) so that each thread loads
//   exactly one element of each tile per step.
// Bottleneck: shared-memory loads of A (one per FMA, a broadcast) and the
//   per-thread work is still small; the arithmetic intensity is modest.
// Tile: BM x BN of C per block of BM*BN/TM threads; thread t owns rows
//   (t / BN)*TM .. +TM-1 of column t % BN. Requires BM*BK == BN*BK == threads.
// Edges: out-of-range tile elements are loaded as 0; stores are guarded.
#include "common.cuh"

constexpr int THREADS = BM * BN / TM;
static_assert(BM * BK == THREADS && BN * BK == THREADS, "each thread loads one element of each tile");
static_assert(BM % TM == 0, "BM must be a multiple of TM");

extern "C" __global__ void __launch_bounds__(THREADS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
      float beta, float* __restrict__ C) {
    __shared__ float As[BM * BK];  // As[m * BK + k]
    __shared__ float Bs[BK * BN];  // Bs[k * BN + n]

    const int threadCol = threadIdx.x % BN;  // neighbours in a warp: neighbouring columns of C
    const int threadRow = threadIdx.x / BN;  // which TM-tall strip of rows
    // Loader coordinates: a warp reads whole 32-byte rows of A and a 128-byte row of B.
    const int aRow = threadIdx.x / BK, aCol = threadIdx.x % BK;
    const int bRow = threadIdx.x / BN, bCol = threadIdx.x % BN;

    const int rowStart = blockIdx.y * BM, colStart = blockIdx.x * BN;
    const int rowsLeft = M - rowStart, colsLeft = N - colStart;
    A += (size_t)rowStart * K;
    B += colStart;
    C += (size_t)rowStart * N + colStart;

    float acc[TM] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int kLeft = K - k0;
        As[aRow * BK + aCol] = load_guarded(A, K, aRow, aCol, rowsLeft, kLeft);
        Bs[bRow * BN + bCol] = load_guarded(B, N, bRow, bCol, kLeft, colsLeft);
        __syncthreads();
        A += BK;
        B += (size_t)BK * N;

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k * BN + threadCol];  // one shared load, reused TM times
#pragma unroll
            for (int i = 0; i < TM; ++i)
                acc[i] += As[(threadRow * TM + i) * BK + k] * b;
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i)
        store_guarded(C, N, threadRow * TM + i, threadCol, rowsLeft, colsLeft, acc[i], alpha, beta);
}
