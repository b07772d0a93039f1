// Rung 17 — warp specialization and a persistent grid on rung 16's TMA ring.
//
// What changed from rung 16: a third warpgroup, the producer, only issues
// the TMA loads (one thread of it), and gives most of its registers to the
// two consumer warpgroups (`setmaxnreg`: 40 per producer thread, 232 per
// consumer thread), which only wait, read B fragments and issue wgmmas. No
// consumer thread ever waits for a slot to be released, as rung 16's thread
// 0 did inside its compute loop. The grid is persistent (PERSISTENT = 1:
// one block per SM, each walking tiles blockIdx.x, + gridDim.x, ...): the
// producer runs ahead across tile boundaries, so the next tile's first
// STAGES K tiles land while the consumers store this tile, and no block
// pays the ring's fill latency more than once.
//
// The ring and the layouts are rung 16's, the producer loop is `produce`
// (tma_tiles.cuh). A K-tile counter `it` runs across the tiles of a block:
// slot it % STAGES, barrier phase (it / STAGES) & 1.
//
// Paired columns (PAIR_COLS = 1, b_column in tma_tiles.cuh): the B fragment
// permutation gives each thread two neighbouring columns of C, so its B
// fragments come by 64-bit shared loads (half the LDS of rung 16's
// permutation, still conflict-free) and its results go out as 64-bit stores
// that fill whole 32-byte sectors (rung 16's scalar stores half-fill
// theirs). Fewer instructions and sectors mean less energy, and under the
// H200's power cap a higher clock. Measured against the unpaired layout in
// the same runs, the paired one's times were lower at every size tried (the
// ranges overlap at 4096^3), at a higher SM clock on the whole; ncu shows the
// tensor pipe busier and no shared bank conflicts. The figures (H200): results/notes/2026-11-kernel-measurements.md.
//
// B in one load (B3D = 1, where N is a multiple of 32): a swizzled box row
// holds at most 128 bytes, so each K tile of B is BN / 32 boxes of 32
// columns, one TMA instruction each; through a 3-D map of 32-column chunks
// (tma_3d.cuh) the producer issues one for all of them. Fewer instructions
// on the one thread every load waits on; past N the chunks lie outside the
// map, so they fill with zeros as the 2-D boxes do. Where N is not a
// multiple of 32 a 3-D box would read the next row instead, so B3D = 0.
//
// Tile: C tile BM x BN, BN = 64 per consumer warpgroup; block = BN / 64 * 128
// + 128 threads. Edges and padded operands as rung 16.
#include "common.cuh"
#include "ptx.cuh"
#include "tma.cuh"
#include "split_k.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "wgmma.cuh"
#include "wgmma_tiles.cuh"
#include "tma_tiles.cuh"
#include "tma_3d.cuh"

extern "C" __global__ void __launch_bounds__(kBlockThreads, 1)
sgemm(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, int M, int N, int K,
      float alpha, float beta, float* __restrict__ C, float* __restrict__ partials, int splits) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned smem0 = smem_addr(smem);
    const Maps maps = {{&map_a}, &map_b};
    const TmaRing ring = make_ring(smem, maps, kConsumerThreads / 32);
    __syncthreads();  // the barriers are initialised

    const int tiles = CEIL_DIV(M, BM) * CEIL_DIV(N, BN), k_tiles = CEIL_DIV(K, BK);
    const int tid = threadIdx.x, lane = tid % 32;

    if (tid >= kConsumerThreads) {  // the producer warpgroup: its last warpgroup, one thread working
        setmaxnreg_dec<kProducerRegs>();
        if (tid == kConsumerThreads) {
#if B3D
            // A's box, then all BN / 32 boxes of B by one load through the 3-D map (chunk n0 / 32 on)
            auto issue = [&](int s, int m0, int n0, int kt) {
                mbar_arrive_expect_tx(ring.full_bar(s), kTileBytes);
                tma_load_2d(ring.a(s), map_a, kt * BK, m0, ring.full_bar(s));
                tma_load_3d(ring.b(s), map_b, 0, kt * BK, n0 / 32, ring.full_bar(s));
            };
            if (splits == 1) produce<false>(ring, M, N, K, 1, issue);
            else produce<true>(ring, M, N, K, splits, issue);
#else
            produce_units(ring, maps, M, N, K, splits);
#endif
        }
        return;
    }

    setmaxnreg_inc<kConsumerRegs>();
    const BFragment frag(tid / 128, (tid / 32) % 4, lane);
    float acc[kAcc];
    float raw[BK / 8][4];
    unsigned f0[BK / 8][4], f1[BK / 8][4];
    int it = 0;  // K tiles consumed by this block so far

    // Per K tile: round its B fragments and issue its wgmmas, let the
    // previous tile's retire (one group stays in flight) and release that
    // slot to the producer, then wait for the next tile of this unit and
    // read its B fragments. Fragment sets alternate by parity (rung 14).
    auto step = [&](int kt, int k_begin, int k_end, unsigned (&f)[BK / 8][4]) {
        wgmma_tile(acc, f, raw, ring.a(it % STAGES));
        wgmma_wait<1>();
        if (kt > k_begin) {
            __syncwarp();
            if (lane == 0) mbar_arrive(ring.empty_bar((it - 1) % STAGES));
        }
        ++it;
        if (kt + 1 < k_end) {
            mbar_wait(ring.full_bar(it % STAGES), (it / STAGES) & 1);
            frag.read(raw, smem, smem0, ring.b(it % STAGES));
        }
    };

#pragma unroll 1
    for (int u = blockIdx.x; u < tiles * splits; u += gridDim.x) {
        const WorkUnit w = work_unit(u, tiles, k_tiles, splits, M, N);
#pragma unroll
        for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
        if (w.k_begin < w.k_end) {  // an empty split still writes its zeros
            mbar_wait(ring.full_bar(it % STAGES), (it / STAGES) & 1);
            frag.read(raw, smem, smem0, ring.b(it % STAGES));
            int kt = w.k_begin;
#pragma unroll 1
            for (; kt + 1 < w.k_end; kt += 2) {
                step(kt, w.k_begin, w.k_end, f0);
                step(kt + 1, w.k_begin, w.k_end, f1);
            }
            if (kt < w.k_end) step(kt, w.k_begin, w.k_end, f0);
            wgmma_wait<0>();
            __syncwarp();
            if (lane == 0) mbar_arrive(ring.empty_bar((it - 1) % STAGES));  // the unit's last K tile
        }
        if (splits == 1) frag.store(acc, C, M, N, w.m0, w.n0, alpha, beta);
        else frag.store(acc, partials + (size_t)w.split * M * N, M, N, w.m0, w.n0, 1.0f, 0.0f);  // raw sums
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
