// Rungs 30 (BF16) and 31 (FP16) — rung 26 with a schedule for shapes that
// have too few C tiles for a second wave (gemmbench/rungs/half.py picks it).
//
// What changed from rungs 26-27, where rung 26 would run one wave of its
// 64 x 128 tiles:
// - CLUSTER = 1: no clusters. Multicast saves L2 reads but couples each
//   pair of blocks, so one slow load holds both; in one wave nothing hides
//   that (1024^3: 84.5% of cuBLAS against 78.1% with pairs).
// - KSPLIT = 2, for long K: the two blocks of a cluster compute one 128 x 128
//   tile, each over half of K, and add their sums up in distributed shared
//   memory (half_split.cuh); each block stores half of the tile's columns.
//   The same multiply-adds then take 2/3 of the bytes per block (32 KiB per
//   K tile of 128 x 128 x 64 against 24 KiB per 64 x 128 x 64), which pays
//   once K has 32 tiles of 64 or more (1024 x 1024 x 4096: 81.4% against
//   70.7%); the exchange itself costs about 2,300 cycles.
// - KSPLIT = CLUSTER = 3 or 4, for long K and fewer tiles still: the blocks
//   of a cluster compute one 64 x 128 tile, each over its part of K, and
//   share out the sums in distributed shared memory as the pairs do; each
//   block stores its 32 to 48 of the tile's columns (half_split.cuh). No
//   FP32 sums through global memory and no second kernel, as the split
//   below has, but only as many clusters as fit at once in the GPCs.
// - KSPLIT = S > 2 with CLUSTER = 1, for long K and still fewer tiles: S
//   blocks per C tile, each over an S-th of K, write FP32 sums that a second
//   kernel adds up and rounds (half_partials.cuh), so tiles x S blocks fill
//   the GPU.
// Elsewhere the kernel is rung 26's.
//
// Evidence: the README's 16-bit ladder section.
#include "common.cuh"
#include "ptx.cuh"
#include "half.cuh"
#include "tma.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "wgmma.cuh"
#include "wgmma_half.cuh"
#include "half_tma.cuh"
#include "cluster.cuh"
#include "half_store.cuh"
#ifndef KSPLIT
#define KSPLIT 1
#endif
// K split in a cluster's blocks (summed in distributed shared memory), or through partials in global memory
#define SPLIT_IN_CLUSTER (KSPLIT > 1 && KSPLIT == CLUSTER)
#define SPLIT_PARTIALS (KSPLIT > 2 && CLUSTER == 1)
#if SPLIT_IN_CLUSTER
#include "half_split.cuh"
#else
#include "half_cluster.cuh"
#endif
#if SPLIT_PARTIALS
#include "half_partials.cuh"
#endif

extern "C" __global__ void CLUSTER_LAUNCH __launch_bounds__(kHalfBlock, 1)
sgemm(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b,
      const __grid_constant__ TensorMap map_c, int M, int N, int K, float alpha, float beta, elem16* __restrict__ C,
      int store_c
#if SPLIT_PARTIALS
      , float* __restrict__ partials
#endif
) {
    extern __shared__ __align__(1024) unsigned char smem[];
#if SPLIT_PARTIALS
    cluster_gemm(smem, map_a, map_b, M, N, K, PartialEpilogue{partials, M, N}, [] {});
#elif SPLIT_IN_CLUSTER
    // slices narrower than a 64-column box are stored directly: TMA's box of C is 64 x 64
    StoreEpilogue store{map_c, C, M, N, alpha, beta, store_c && beta == 0.0f && kSplitWholeBoxes};
    split_gemm(smem, map_a, map_b, M, N, K, store, [&] { store.finish(); });
#else
    StoreEpilogue store{map_c, C, M, N, alpha, beta, store_c && beta == 0.0f};
    cluster_gemm(smem, map_a, map_b, M, N, K, store, [&] { store.finish(); });
#endif
}

#else
// Without sm_90a (sm_80/86/89, later GPUs): rung 20's mma.sync kernel.
#include "half_fallback.cuh"
#endif
