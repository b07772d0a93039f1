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
// that version ran at about 60% of cuBLAS; see mbar_arrive_cluster. The
// same fence hid in a cluster barrier at the kernel's end (MEMBAR.ALL.GPU):
// every consumer warp waited for its stores of C, 7-10 points of cuBLAS at
// 512^3-1024^3, until the producer's tail replaced it (half_cluster.cuh).
//
// The cluster machinery (tile order, producer, the kernel's body) is half_cluster.cuh.
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

extern "C" __global__ void CLUSTER_LAUNCH __launch_bounds__(kHalfBlock, 1)
sgemm(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, int M, int N, int K,
      float alpha, float beta, elem16* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    cluster_gemm(
        smem, map_a, map_b, M, N, K,
        [&](const HalfRing&, const float (&acc)[kHalfAcc], int m0, int n0, int wg, auto owned, int first_row = 0) {
            half_store_rows(C, M, N, m0, n0, wg, acc, alpha, beta, owned, first_row);
        },
        [] {});
}

#else
// Without sm_90a (sm_80/86/89, later GPUs): rung 20's mma.sync kernel.
#include "half_fallback.cuh"
#endif
