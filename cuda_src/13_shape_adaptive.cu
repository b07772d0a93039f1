// Rung 13 — shape-adaptive tiles and split-K.
//
// What changed from rung 12: nothing in the inner loop (rung 12's
// multistage_mainloop / multistage_store, shared through multistage_loop.cuh).
// What changes is how the work is cut: at 4096^3 a 128 x 256 tile gives 512
// blocks for 132 SMs, but at 256^3 it gives 2, and at 1024^3 32. Here the
// tile shape is a per-shape choice (the -D params, picked by select() in
// gemmbench/rungs/multistage.py from three compiled configurations: 64x64
// tiles of 4x8 per thread with 4 blocks/SM, 128x128 of 8x8, 256x128 of
// 8x16), and K can be split over grid z (split_k.cuh: each split writes its
// raw sums to a workspace, reduce_splits adds them in a fixed order and
// applies the epilogue; with SPLITS == 1 the kernel writes C itself).
// Expected bottleneck: for small shapes, launch latency and the pipeline
// prologue (each block runs only a few K tiles); the reduction costs
// (SPLITS + 1) * M * N * 4 bytes of traffic (L2-resident at these sizes) and
// a second launch. For large shapes: as rung 12.
// Tile and edges: as rung 12 (cp.async zero-fill; guarded stores).
#include "multistage_loop.cuh"
#include "split_k.cuh"

extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C, float* __restrict__ partials) {
    extern __shared__ __align__(128) float smem[];
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const SplitSlice slice = split_slice(CEIL_DIV(K, BK), M, N, N, alpha, beta, C, partials);
    multistage_mainloop(acc, M, N, K, A, K, B, N, m0, n0, slice.t_begin, slice.t_end, smem);
    multistage_store(acc, M, N, slice.out, slice.ld, m0, n0, slice.alpha, slice.beta);
}
