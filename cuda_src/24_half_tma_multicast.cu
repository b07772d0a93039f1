// Rungs 24 (BF16) and 25 (FP16) — rung 22 in clusters of blocks that share B by TMA multicast.
//
// What changed from rungs 22-23: blocks are launched in clusters of CLUSTER
// (2, or 4; __cluster_dims__), and the blocks of a cluster always compute
// vertically neighbouring C tiles (rows m0, m0 + BM, ..., the same columns
// n0), so they need the same B tiles. Each block's producer loads its own A
// box and 1/CLUSTER of the B boxes, multicast into every block; every slot's
// "full" barrier in each block counts the A box and all BN/64 B boxes. A
// slot may be refilled only when the consumers of all blocks are done with
// it (the multicast writes into all), so each consumer warp releases a slot
// on the "empty" barrier of every block of the cluster (mbarrier arrive
// across the cluster), and each "empty" barrier waits for all their warps.
//
// What it removes: a quarter of the L2-to-SM traffic. A block reads A (BM x
// 64) and B (64 x BN) per K tile from L2; with BM = 128, BN = 256 that is
// 48 KiB per 2 x 128 x 256 x 64 FLOP, about 10 TB/s across 132 SMs at the
// tensor cores' pace: rungs 22-23 are held back by L2 bandwidth, most at the
// shapes that run at high clocks. Sharing B between two blocks cuts a
// block's reads to 32 KiB (four blocks: 24 KiB).
//
// Evidence (the README's 16-bit ladder section has the dated figures): a few
// points over rung 22 at 4096^3 and 8192^3 (the best 16-bit rung there),
// behind it at 1024^3-2048^3 where tiles are small. Releasing the peer's
// slot with a cluster-scope release (.release.cluster) instead of the
// default made every K tile wait for the thread's earlier global stores:
// that version ran at about 60% of cuBLAS; see mbar_arrive_cluster.
//
// A cluster walks groups of CLUSTER tile rows: unit u is tile column tn of
// tile rows CLUSTER * pm + 0 .. CLUSTER - 1 (GROUP_M units grouped for L2
// reuse); rank r takes row CLUSTER * pm + r. When the tile rows do not fill
// the last group, its blocks past the end compute tiles past M: TMA fills its A with zeros, its stores are
// guarded away, and it still loads and shares its half of B.
#include "common.cuh"
#include "ptx.cuh"
#include "half.cuh"
#include "tma.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "wgmma.cuh"
#include "wgmma_half.cuh"
#include "half_tma.cuh"
#include "cluster.cuh"

constexpr int kClusterBlocks = CLUSTER;  // blocks per cluster, stacked along M (2 or 4)
constexpr int kHalfProducerRegs = 40, kHalfConsumerRegs = kHalfConsumerWarpgroups == 3 ? 152 : 232;
static_assert(kHalfProducerRegs * 128 + kHalfConsumerRegs * kHalfConsumers <= 65536, "registers per SM");
static_assert(kClusterBlocks == 2 || kClusterBlocks == 4, "clusters of 2 or 4 blocks");
static_assert(kHalfBBoxes % kClusterBlocks == 0, "each block of a cluster multicasts the same number of B boxes");

// The C tile of this block in unit `unit`.
__device__ __forceinline__ void cluster_tile_origin(int unit, int M, int N, unsigned rank, int& m0, int& n0) {
    int pm, tn;
    grouped_tile(unit, CEIL_DIV(CEIL_DIV(M, BM), kClusterBlocks), CEIL_DIV(N, BN), GROUP_M, pm, tn);
    m0 = (kClusterBlocks * pm + rank) * BM;
    n0 = tn * BN;
}

extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1) __launch_bounds__(kHalfBlock, 1)
sgemm(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, int M, int N, int K,
      float alpha, float beta, elem16* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const HalfRing ring = make_half_ring(smem, map_a, map_b, kClusterBlocks * kHalfConsumers / 32);
    const unsigned rank = cluster_rank();
    cluster_sync();  // every block's barriers are initialised before any multicasts into it

    const int units = CEIL_DIV(CEIL_DIV(M, BM), kClusterBlocks) * CEIL_DIV(N, BN), k_tiles = CEIL_DIV(K, kHalfBK);
    const int cluster = blockIdx.x / kClusterBlocks, clusters = gridDim.x / kClusterBlocks;
    const int tid = threadIdx.x, lane = tid % 32;

    if (tid >= kHalfConsumers) {  // the producer warpgroup
        half_setmaxnreg_dec<kHalfProducerRegs>();
        if (tid == kHalfConsumers) {
            int it = 0;  // K tiles issued: slot it % STAGES, its phase (it / STAGES) & 1
            for (int unit = cluster; unit < units; unit += clusters) {
                int m0, n0;
                cluster_tile_origin(unit, M, N, rank, m0, n0);
                for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(ring.empty_bar(s), (it / STAGES - 1) & 1);
                    mbar_arrive_expect_tx(ring.full_bar(s), kHalfSlot);  // own A box + every B box
                    tma_load_2d(ring.a(s), map_a, kt * kHalfBK, m0, ring.full_bar(s));
#pragma unroll
                    for (int box = rank; box < kHalfBBoxes; box += kClusterBlocks)
                        tma_load_2d_multicast(ring.b(s) + box * kHalfBBoxBytes, map_b, n0 + 64 * box, kt * kHalfBK,
                                              ring.full_bar(s), (1u << kClusterBlocks) - 1);
                }
            }
        }
    } else {
        half_setmaxnreg_inc<kHalfConsumerRegs>();
        const int wg = tid / 128, warp = (tid / 32) % 4;
        const bool pairs = N % 2 == 0 && (reinterpret_cast<unsigned long long>(C) & 3) == 0;
        float acc[kHalfAcc];
        int it = 0;  // K tiles consumed by this block so far

        // Slot s is free for every producer of the cluster once this warp's wgmmas on it have retired.
        auto release = [&](int s) {
            if (lane == 0)
#pragma unroll
                for (unsigned cta = 0; cta < kClusterBlocks; ++cta) mbar_arrive_cluster(ring.empty_bar(s), cta);
        };

#pragma unroll 1
        for (int unit = cluster; unit < units; unit += clusters) {
            int m0, n0;
            cluster_tile_origin(unit, M, N, rank, m0, n0);
#pragma unroll 1
            for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(ring.full_bar(s), (it / STAGES) & 1);
                __syncwarp();  // lanes may have left the wait apart; wgmma needs all 32
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < kHalfBK / 16; ++ks)
                    wgmma_half_ss<BN>(acc, half_desc_a(ring, s, wg, ks), half_desc_b(ring, s, ks), kt > 0 || ks > 0);
                wgmma_commit();
                wgmma_wait<1>();  // the previous K tile's wgmmas have retired: release its slot
                if (kt > 0) release((it - 1) % STAGES);
            }
            wgmma_wait<0>();
            __syncwarp();
            release((it - 1) % STAGES);  // the tile's last K tile

            // acc[4i + j]: row 16 * warp + lane / 4 + 8 * (j / 2) of the warpgroup's 64,
            // column 8i + 2 (lane % 4) + j % 2.
            const int m = m0 + 64 * wg + 16 * warp + lane / 4, n = n0 + 2 * (lane % 4);
#pragma unroll
            for (int i = 0; i < kHalfAcc / 4; ++i) {
                store_pair(C, M, N, m, n + 8 * i, acc[4 * i], acc[4 * i + 1], alpha, beta, pairs);
                store_pair(C, M, N, m + 8, n + 8 * i, acc[4 * i + 2], acc[4 * i + 3], alpha, beta, pairs);
            }
        }
    }
    __syncwarp();
    cluster_sync();  // no block leaves while a peer may still multicast into it or arrive on its barriers
}

#else
// Without sm_90a (sm_80/86/89, later GPUs): rung 20's mma.sync path.
#include "half_mma_sync.cuh"

extern "C" __global__ void __launch_bounds__(kHmThreads)
sgemm(int M, int N, int K, float alpha, const elem16* __restrict__ A, const elem16* __restrict__ B, float beta,
      elem16* __restrict__ C) {
    half_mma_sync_gemm(M, N, K, alpha, A, B, beta, C);
}
#endif
