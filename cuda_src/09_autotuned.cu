// Rung 9 — autotuned blocktiling.
//
// What changed: nothing in the algorithm of rung 6 (float4 global loads, A
// stored transposed in shared memory, a TM x TN register tile per thread).
// Rung 6 already takes BM, BN, BK, TM, TN as -D parameters; this rung is
// written so that a search over them can pick the shape that suits the GPU
// (occupancy vs. reuse): the tile copies and the register-tiled loop are
// common.cuh's shape-generic helpers, the static_asserts below (and the
// register budget in gemmbench/rungs/gpu.py) reject the shapes that cannot
// work or would spill, and __launch_bounds__ promises no second block per
// SM, a cap that would make some candidates spill.
// Expected bottleneck: shared-memory bandwidth and latency (each thread reads
// TM + TN floats per k for TM * TN FMAs) and the two barriers per K tile,
// during which nothing overlaps the global loads but other resident blocks.
// Tile: block BM x BN, depth BK, BM*BN/(TM*TN) threads, each owning a
// contiguous TM x TN piece of C.
// Edges: A, B tiles are zero-filled outside the matrix, so the FMA loop has no
// checks. Loads and stores are 128-bit only when the whole tile is inside and
// rows are 16-byte aligned (block-uniform flag; also per K tile for the last
// partial tile), otherwise guarded scalar accesses.
#include "common.cuh"

constexpr int kThreads = BM * BN / (TM * TN);
static_assert(BM % TM == 0 && BN % TN == 0, "BM must be a multiple of TM and BN of TN");
static_assert(kThreads % 32 == 0 && kThreads >= 64 && kThreads <= 1024, "threads: a multiple of 32 in 64..1024");
static_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0, "float4 loads of tiles and fragments");
static_assert((BM * BK) % (4 * kThreads) == 0 && (BN * BK) % (4 * kThreads) == 0,
              "each thread loads a whole number of float4s of the A and B tiles");
static_assert(4 * BK * (BM + BN) <= 48 * 1024, "static shared memory is limited to 48 KiB");

extern "C" __global__ void __launch_bounds__(kThreads)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k * BM + m]
    __shared__ __align__(16) float Bs[BK * BN];  // Bs[k * BN + n]

    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int rows = M - m0, cols = N - n0;  // what is left of C from the block's corner
    A += (size_t)m0 * K;
    B += n0;
    C += (size_t)m0 * N + n0;

    // The thread's TM x TN piece of the block tile.
    const int tr = threadIdx.x / (BN / TN) * TM;
    const int tc = threadIdx.x % (BN / TN) * TN;

    // Block-uniform: 128-bit global access needs whole, aligned tile rows.
    const bool a_vector = K % 4 == 0 && rows >= BM && is_aligned16(A);
    const bool b_vector = N % 4 == 0 && cols >= BN && is_aligned16(B);

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        const int depth = K - k0;  // >= BK except in the last, partial tile
        float4 a[TileSplit<BM, BK, kThreads>::kPerThread], b[TileSplit<BK, BN, kThreads>::kPerThread];
        load_tile<BM, BK, kThreads>(a, A, K, rows, depth, a_vector && depth >= BK);
        load_tile<BK, BN, kThreads>(b, B, N, depth, cols, b_vector && depth >= BK);
        store_tile_transposed<BM, BK, kThreads>(As, a);
        store_tile<BK, BN, kThreads>(Bs, b);
        __syncthreads();  // the tile is complete
        thread_tile_mma<BK, BM, BN, 1, TM, TM, 1, TN, TN>(acc, As + tr, Bs + tc);
        __syncthreads();  // everyone is done reading before the next tile overwrites it
        A += BK;
        B += (size_t)BK * N;
    }

    const bool c_vector = N % 4 == 0 && rows >= BM && cols >= BN && is_aligned16(C);
    store_thread_tile<1, TM, TM, 1, TN, TN>(C + tr * N + tc, N, rows - tr, cols - tc, acc, alpha, beta, c_vector);
}
