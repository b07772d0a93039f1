// Rung 10 — warptiling.
//
// What changed from rung 9: a third level of tiling between the block and the
// thread. Each warp owns a WM x WN warptile of the block's BM x BN tile and
// walks it in WMITER x WNITER subtiles of (WM/WMITER) x (WN/WNITER); inside a
// subtile its 32 lanes hold TM x TN results each. A warp's shared-memory reads
// per k then cover only WM + WN floats (broadcast among lanes of one row or
// column of the warp's lane grid, so few bank conflicts), and each thread
// reuses WMITER*TM + WNITER*TN fragment registers for (WMITER*TM) *
// (WNITER*TN) FMAs per k: more FMAs per shared-memory load than rung 9.
// Expected bottleneck: FFMA issue with some shared-memory bandwidth and the
// two barriers per K tile (global loads overlap compute only across blocks;
// rung 11 fixes that).
// Tile: block BM x BN x BK with NUM_THREADS threads, one WM x WN warptile per
// warp. A is stored transposed in shared memory so fragments are LDS.128.
// Edges: as rung 9 — zero-filled shared tiles, 128-bit global access only for
// whole, aligned tiles (block-uniform flag, last partial K tile guarded),
// guarded scalar loads and stores otherwise.
#include "common.cuh"

constexpr int kWMIter = WM * WN / (32 * TM * TN * WNITER);  // subtiles down a warptile
constexpr int kWSubM = WM / kWMIter;                        // subtile height
constexpr int kWSubN = WN / WNITER;                         // subtile width
constexpr int kLanesN = kWSubN / TN;                        // lanes across a subtile
static_assert(NUM_THREADS % 32 == 0 && NUM_THREADS <= 1024, "NUM_THREADS must be whole warps");
static_assert(BM % WM == 0 && BN % WN == 0 && (BM / WM) * (BN / WN) == NUM_THREADS / 32,
              "the warptiles must cover the blocktile exactly, one per warp");
static_assert(kWMIter >= 1 && WM % kWMIter == 0 && WN % WNITER == 0 && kWSubN % TN == 0 && kWSubM % TM == 0,
              "subtiles must split into TM x TN thread tiles");
static_assert(kLanesN * (kWSubM / TM) == 32, "a warp subtile must hold exactly 32 thread tiles");
static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 loads of tiles and fragments");
static_assert(4 * BK * (BM + BN) <= 48 * 1024, "static shared memory is limited to 48 KiB");

extern "C" __global__ void __launch_bounds__(NUM_THREADS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k * BM + m]
    __shared__ __align__(16) float Bs[BK * BN];  // Bs[k * BN + n]

    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int rows = M - m0, cols = N - n0;  // what is left of C from the block's corner
    A += (size_t)m0 * K;
    B += n0;
    C += (size_t)m0 * N + n0;

    // The thread's corner in the block tile: its warp's warptile, then its
    // lane's TM x TN spot inside the first subtile.
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int tr = warp / (BN / WN) * WM + lane / kLanesN * TM;
    const int tc = warp % (BN / WN) * WN + lane % kLanesN * TN;

    // Block-uniform: 128-bit global access needs whole, aligned tile rows.
    const bool a_vector = K % 4 == 0 && rows >= BM && is_aligned16(A);
    const bool b_vector = N % 4 == 0 && cols >= BN && is_aligned16(B);

    float acc[kWMIter * TM][WNITER * TN];
#pragma unroll
    for (int i = 0; i < kWMIter * TM; ++i)
#pragma unroll
        for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        const int depth = K - k0;  // >= BK except in the last, partial tile
        float4 a[TileSplit<BM, BK, NUM_THREADS>::kPerThread], b[TileSplit<BK, BN, NUM_THREADS>::kPerThread];
        load_tile<BM, BK, NUM_THREADS>(a, A, K, rows, depth, a_vector && depth >= BK);
        load_tile<BK, BN, NUM_THREADS>(b, B, N, depth, cols, b_vector && depth >= BK);
        store_tile_transposed<BM, BK, NUM_THREADS>(As, a);
        store_tile<BK, BN, NUM_THREADS>(Bs, b);
        __syncthreads();  // the tile is complete
        thread_tile_mma<BK, BM, BN, kWMIter, TM, kWSubM, WNITER, TN, kWSubN>(acc, As + tr, Bs + tc);
        __syncthreads();  // everyone is done reading before the next tile overwrites it
        A += BK;
        B += (size_t)BK * N;
    }

    const bool c_vector = N % 4 == 0 && rows >= BM && cols >= BN && is_aligned16(C);
    store_thread_tile<kWMIter, TM, kWSubM, WNITER, TN, kWSubN>(C + tr * N + tc, N, rows - tr, cols - tc, acc,
                                                               alpha, beta, c_vector);
}
