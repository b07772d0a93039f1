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
// The cluster machinery (tile order, producer, main loop) is half_cluster.cuh.
#include "common.cuh"
#include "ptx.cuh"
#include "half.cuh"
#include "tma.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "wgmma.cuh"
#include "wgmma_half.cuh"
#include "half_tma.cuh"
#include "cluster.cuh"
#include "half_cluster.cuh"

extern "C" __global__ void __cluster_dims__(kClusterBlocks, 1, 1) __launch_bounds__(kHalfBlock, 1)
sgemm(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, int M, int N, int K,
      float alpha, float beta, elem16* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const HalfRing ring = make_half_ring(smem, map_a, map_b, kClusterReleases);
    const unsigned rank = cluster_rank();
    cluster_sync();  // every block's barriers are initialised before any multicasts into it

    const int cluster = blockIdx.x / kClusterBlocks, clusters = gridDim.x / kClusterBlocks;
    const int tid = threadIdx.x, lane = tid % 32;

    if (tid >= kHalfConsumers) {  // the producer warpgroup
        half_setmaxnreg_dec<kHalfProducerRegs>();
        if (tid == kHalfConsumers) cluster_produce(ring, map_a, map_b, M, N, K, rank, cluster, clusters);
    } else {
        half_setmaxnreg_inc<kHalfConsumerRegs>();
        const int wg = tid / 128, units = cluster_units(M, N), k_tiles = CEIL_DIV(K, kHalfBK);
        float acc[kHalfAcc];
        int it = 0;  // K tiles consumed by this block so far
#pragma unroll 1
        for (int unit = cluster; unit < units; unit += clusters) {
            int m0, n0;
            cluster_tile_origin(unit, M, N, rank, m0, n0);
            cluster_consume(ring, acc, k_tiles, it, wg, lane);
            half_store_rows(C, M, N, m0, n0, wg, acc, alpha, beta);
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
