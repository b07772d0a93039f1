// Rung 16 — TF32 wgmma fed by TMA through an mbarrier ring.
//
// What changed from rung 14: the tiles no longer move by per-thread
// cp.async. One thread asks the Tensor Memory Accelerator for each K tile
// (one box of A, BN/32 boxes of B) with `cp.async.bulk.tensor`, described by
// tensor maps the host encoded (gemmbench/gpu/tensormap.py) and passed by
// value as `__grid_constant__` parameters. Each ring slot has a "full"
// mbarrier (TMA counts the tile's bytes onto it) and an "empty" one (each
// warp arrives once its wgmmas on the slot have retired); the block-wide
// __syncthreads of rung 14 is gone. Why it should help: rung 14 spent ~12
// cp.async per thread per tile plus their address arithmetic and a barrier,
// and its profile was latency-bound on loads (tensor pipe ~51% busy); TMA
// moves a whole tile per instruction, computes the swizzle itself and
// zero-fills the edges, so the warps only wait and compute.
//
// Layout (as rung 14: the C tile is computed transposed, D = B^T * A^T):
//   - A (wgmma's shared-memory operand, K-major): one BK x BM box per slot,
//     BK*4-byte swizzle (128 B at BK = 32), the layout wgmma's descriptor reads.
//   - B (wgmma's register operand): BN/32 boxes of BK rows x 32 columns, each
//     row 128 bytes in the 128-byte swizzle (16-byte chunk c of row k stored
//     at chunk c ^ (k % 8)). A TMA box has no padding, so rung 14's padded
//     rows are gone; instead a warp's fragment load takes the columns 4c..4c+3
//     and 16+4c..16+4c+3 of a box (c = 2*(warp%2) + half): with the swizzle
//     those 8 chunks x 4 rows hit 32 distinct banks. The same permutation of
//     C's columns is undone in the store.
//
// Expected bottleneck: the wgmma issue rate itself and the B fragment loads
// (ld.shared, 16 per thread per tile); thread 0 also issues the TMA, once
// every warp has released the slot of the tile before.
//
// Tile: C tile BM x BN (BM = wgmma N in {64..256}, BN = 64 per warpgroup),
// K tile BK in {16, 32}, STAGES slots; grid 1-D, GROUP_M rasterised (rung 14).
// Edges: TMA zero-fills boxes past M, N and K; the store is guarded.
// Operands whose row pitch is not a multiple of 16 bytes (K or N not a
// multiple of 4) are copied by the driver into padded rows first
// (copy_rows), as part of the timed call.
#include "common.cuh"
#include "ptx.cuh"
#include "tma.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "wgmma.cuh"
#include "wgmma_tiles.cuh"

constexpr int kBBoxes = BN / 32;                    // 32-column boxes of B per tile
constexpr int kBBoxBytes = BK * 128;
constexpr int kSlotBytes = kAStage + kBBoxes * kBBoxBytes;
constexpr unsigned kTileBytes = BM * BK * 4 + BK * BN * 4;  // TMA bytes per K tile
static_assert(kAStage % 1024 == 0 && kBBoxBytes % 1024 == 0, "swizzled boxes need 1024-byte aligned slots");

// Column of the B (and C) tile that wgmma row r = 16*warp + g + 8*half of
// warpgroup wg stands for (see the header: a bank-conflict-free permutation).
__device__ __forceinline__ int b_column(int wg, int warp, int half, int g) {
    return 32 * (2 * wg + warp / 2) + 4 * (2 * (warp % 2) + half) + (g % 4) + 16 * (g / 4);
}

extern "C" __global__ void __launch_bounds__(kThreads, 1)
sgemm(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, int M, int N, int K,
      float alpha, float beta, float* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned smem0 = smem_addr(smem);
    const unsigned ring = (smem0 + 1023u) & ~1023u;
    const unsigned full = ring + STAGES * kSlotBytes;  // STAGES barriers, then STAGES "empty" ones
    const unsigned empty = full + 8 * STAGES;
    auto slot_a = [&](int s) { return ring + s * kSlotBytes; };
    auto slot_b = [&](int s) { return ring + s * kSlotBytes + kAStage; };

    int m0, n0;
    tile_origin(M, N, m0, n0);
    const int tid = threadIdx.x, k_tiles = CEIL_DIV(K, BK);
    const int wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;

    auto issue = [&](int s, int kt) {  // thread 0 only
        mbar_arrive_expect_tx(full + 8 * s, kTileBytes);
        tma_load_2d(slot_a(s), map_a, kt * BK, m0, full + 8 * s);
#pragma unroll
        for (int b = 0; b < kBBoxes; ++b) tma_load_2d(slot_b(s) + b * kBBoxBytes, map_b, n0 + 32 * b, kt * BK, full + 8 * s);
    };
    if (tid == 0) {
        tma_prefetch_map(map_a);
        tma_prefetch_map(map_b);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, kThreads / 32);
        }
        mbar_init_fence();
    }
    __syncthreads();
    if (tid == 0)
        for (int s = 0; s < STAGES && s < k_tiles; ++s) issue(s, s);

    // This thread's B fragment columns (wgmma rows g and g + 8 of its warp).
    const int col0 = b_column(wg, warp, 0, g), col1 = b_column(wg, warp, 1, g);
    const unsigned box_off0 = (col0 / 32) * kBBoxBytes, box_off1 = (col1 / 32) * kBBoxBytes;
    auto read_b = [&](float (&raw)[BK / 8][4], int s) {
        const unsigned base = slot_b(s);
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int k = 8 * ks + t + 4 * (j / 2);
                const int col = j % 2 ? col1 : col0;
                const unsigned addr = base + (j % 2 ? box_off1 : box_off0) + swizzle<128>(k * 128 + (col % 32) * 4);
                raw[ks][j] = *reinterpret_cast<const float*>(smem + (addr - smem0));
            }
        }
    };

    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;

    float raw[BK / 8][4];
    mbar_wait(full, 0);
    read_b(raw, 0);

    // Per K tile kt: round tile kt's B fragments, issue its wgmmas, let tile
    // kt-1's retire (one group stays in flight), release kt-1's slot; thread
    // 0 refills that slot with tile kt-1+STAGES once every warp has released
    // it; then wait for tile kt+1 and read its B fragments. The fragment sets
    // alternate by tile parity (see rung 14: keeps ptxas from serialising).
    auto step = [&](int kt, unsigned (&f)[BK / 8][4]) {
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks)
#pragma unroll
            for (int j = 0; j < 4; ++j) f[ks][j] = to_tf32(raw[ks][j]);
        __syncwarp();  // warp 0's lanes may have parted around thread 0's refill; wgmma needs all 32
        wgmma_fence();
        const unsigned as = slot_a(kt % STAGES);
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) wgmma_tf32_rs<BM>(acc, f[ks], make_desc<kRowBytes>(as + 32 * ks), 1);
        wgmma_commit();
        wgmma_wait<1>();
        if (kt > 0) {
            const int done = kt - 1, s = done % STAGES;
            __syncwarp();
            if (lane == 0) mbar_arrive(empty + 8 * s);
            if (tid == 0 && done + STAGES < k_tiles) {
                mbar_wait(empty + 8 * s, (done / STAGES) & 1);
                issue(s, done + STAGES);
            }
        }
        if (kt + 1 < k_tiles) {
            const int next = kt + 1;
            mbar_wait(full + 8 * (next % STAGES), (next / STAGES) & 1);
            read_b(raw, next % STAGES);
        }
    };
    unsigned f0[BK / 8][4], f1[BK / 8][4];
    int kt = 0;
#pragma unroll 1
    for (; kt + 1 < k_tiles; kt += 2) {
        step(kt, f0);
        step(kt + 1, f1);
    }
    if (kt < k_tiles) step(kt, f0);
    wgmma_wait<0>();

    // acc[4i + j] = D(wgmma row 16*warp + g + 8*(j/2), 8i + 2t + j%2) = C[m][n0 + b_column(.., j/2, g)]
#pragma unroll
    for (int i = 0; i < kAcc / 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int m = m0 + 8 * i + 2 * t + (j & 1), n = n0 + (j >> 1 ? col1 : col0);
            if (m < M && n < N) {
                float* c = C + (size_t)m * N + n;
                *c = gemm_epilogue(acc[4 * i + j], alpha, beta, c);
            }
        }
}

#else
// Without sm_90a (sm_80/86/89, later GPUs): rung 14's TF32 mma.sync path.
#include "tf32_mma_sync.cuh"

extern "C" __global__ void __launch_bounds__(TC_THREADS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    tf32_mma_sync_gemm<false>(M, N, K, alpha, A, nullptr, B, beta, C);
}
#endif
