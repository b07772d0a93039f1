// Rung 11 — double buffering.
//
// What changed from rung 10: two copies of the shared A and B tiles. While the
// warps compute on one, the next K tile's global loads are already in flight
// (issued into registers before the FMA loop, written to the other buffer
// after it), so their latency hides behind compute and one barrier per tile
// suffices instead of two. Inside a tile, the fragments of k-slice k+1 are read
// from shared memory into a second register set while slice k's FMAs run.
// Expected bottleneck: FFMA issue; the price is registers (a second fragment
// set plus the staged float4s of the next tile) and twice the shared memory.
// Tile: as rung 10 — block BM x BN x BK with NUM_THREADS threads, one WM x WN
// warptile per warp, WMITER x WNITER subtiles of TM x TN per lane.
// Edges: as rungs 9-10 — zero-filled shared tiles, 128-bit global access only
// for whole, aligned tiles (block-uniform flag, last partial K tile guarded),
// guarded scalar loads and stores otherwise.
//
// Why one barrier is enough: in iteration t the warps read buffer t%2 and
// write buffer (t+1)%2. That buffer was last read in iteration t-1, and every
// warp passed the barrier at the end of t-1 before anyone writes it; the
// barrier at the end of t then publishes it for iteration t+1.
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
static_assert(2 * 4 * BK * (BM + BN) <= 48 * 1024, "static shared memory (two buffers) is limited to 48 KiB");

extern "C" __global__ void __launch_bounds__(NUM_THREADS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    __shared__ __align__(16) float As[2][BK * BM];  // transposed: As[buf][k * BM + m]
    __shared__ __align__(16) float Bs[2][BK * BN];  // Bs[buf][k * BN + n]

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

    // The next K tile, staged in registers between its global load and its
    // store into the idle shared buffer.
    float4 a_next[TileSplit<BM, BK, NUM_THREADS>::kPerThread], b_next[TileSplit<BK, BN, NUM_THREADS>::kPerThread];
    auto load_next = [&](int k0) {
        const int depth = K - k0;  // >= BK except in the last, partial tile
        load_tile<BM, BK, NUM_THREADS>(a_next, A + k0, K, rows, depth, a_vector && depth >= BK);
        load_tile<BK, BN, NUM_THREADS>(b_next, B + (size_t)k0 * N, N, depth, cols, b_vector && depth >= BK);
    };
    auto store_next = [&](int buf) {
        store_tile_transposed<BM, BK, NUM_THREADS>(As[buf], a_next);
        store_tile<BK, BN, NUM_THREADS>(Bs[buf], b_next);
    };

    load_next(0);
    store_next(0);
    __syncthreads();

    const int tiles = CEIL_DIV(K, BK);
    for (int t = 0; t < tiles; ++t) {
        const int buf = t & 1;
        const bool more = t + 1 < tiles;       // block-uniform
        if (more) load_next((t + 1) * BK);     // in flight during the FMAs below

        // Register double buffering: slice k+1's fragments load while slice k's FMAs run.
        const float* as = As[buf] + tr;
        const float* bs = Bs[buf] + tc;
        float a[2][kWMIter * TM], b[2][WNITER * TN];
        load_fragment<kWMIter, TM, kWSubM>(a[0], as);
        load_fragment<WNITER, TN, kWSubN>(b[0], bs);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k + 1 < BK) {
                load_fragment<kWMIter, TM, kWSubM>(a[(k + 1) & 1], as + (k + 1) * BM);
                load_fragment<WNITER, TN, kWSubN>(b[(k + 1) & 1], bs + (k + 1) * BN);
            }
            outer_product_acc(acc, a[k & 1], b[k & 1]);
        }

        if (more) store_next(buf ^ 1);  // that buffer's last readers passed the previous barrier
        __syncthreads();
    }

    const bool c_vector = N % 4 == 0 && rows >= BM && cols >= BN && is_aligned16(C);
    store_thread_tile<kWMIter, TM, kWSubM, WNITER, TN, kWSubN>(C + tr * N + tc, N, rows - tr, cols - tc, acc,
                                                               alpha, beta, c_vector);
}
