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
// and its profile was latency-bound on loads (tensor pipe about half busy); TMA
// moves a whole tile per instruction, computes the swizzle itself and
// zero-fills the edges, so the warps only wait and compute.
//
// Layout (as rung 14: the C tile is computed transposed, D = B^T * A^T):
//   - A (wgmma's shared-memory operand, K-major): one BK x BM box per slot,
//     BK*4-byte swizzle (128 B at BK = 32), the layout wgmma's descriptor reads.
//   - B (wgmma's register operand): BN/32 boxes of BK rows x 32 columns, each
//     row 128 bytes in the 128-byte swizzle. A TMA box has no padding, so
//     rung 14's padded rows are gone; instead each warp reads a permutation
//     of the columns that the swizzle spreads over all 32 banks, and the
//     store undoes it (tma_tiles.cuh).
//
// Expected bottleneck: the B fragment loads (ld.shared, 16 per thread per
// tile) and thread 0, which issues the TMA inside its compute loop, once
// every warp has released the slot of the tile before. Against rung 14, ncu
// shows the tensor pipe much busier and the call faster; the figures (H200):
// results/notes/2026-11-kernel-measurements.md.
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
#include "tma_tiles.cuh"

extern "C" __global__ void __launch_bounds__(kThreads, 1)
sgemm(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, int M, int N, int K,
      float alpha, float beta, float* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned smem0 = smem_addr(smem);
    const Maps maps = {{&map_a}, &map_b};
    const TmaRing ring = make_ring(smem, maps, kThreads / 32);
    __syncthreads();  // the barriers are initialised

    int m0, n0;
    tile_origin(M, N, m0, n0);
    const int tid = threadIdx.x, lane = tid % 32, k_tiles = CEIL_DIV(K, BK);
    if (tid == 0)
        for (int s = 0; s < STAGES && s < k_tiles; ++s) ring.issue(maps, s, m0, n0, s);
    const BFragment frag(tid / 128, (tid / 32) % 4, lane);

    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;

    float raw[BK / 8][4];
    mbar_wait(ring.full_bar(0), 0);
    frag.read(raw, smem, smem0, ring.b(0));

    // Per K tile kt: round tile kt's B fragments and issue its wgmmas; let
    // tile kt-1's retire (one group stays in flight) and release its slot;
    // thread 0 refills that slot with tile kt-1+STAGES once every warp has
    // released it; then wait for tile kt+1 and read its B fragments. The
    // fragment sets alternate by tile parity (as rung 14: keeps ptxas from
    // serialising the wgmmas).
    auto step = [&](int kt, unsigned (&f)[BK / 8][4]) {
        wgmma_tile(acc, f, raw, ring.a(kt % STAGES));
        wgmma_wait<1>();
        if (kt > 0) {
            const int done = kt - 1, s = done % STAGES;
            __syncwarp();
            if (lane == 0) mbar_arrive(ring.empty_bar(s));
            if (tid == 0 && done + STAGES < k_tiles) {
                mbar_wait(ring.empty_bar(s), (done / STAGES) & 1);
                ring.issue(maps, s, m0, n0, done + STAGES);
            }
        }
        if (kt + 1 < k_tiles) {
            const int next = kt + 1;
            mbar_wait(ring.full_bar(next % STAGES), (next / STAGES) & 1);
            frag.read(raw, smem, smem0, ring.b(next % STAGES));
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

    frag.store(acc, C, M, N, m0, n0, alpha, beta);
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
