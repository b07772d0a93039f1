// Rung 13 — shape-adaptive tiles and split-K.
//
// What changed from rung 12: nothing in the inner loop (rung 12's
// multistage_mainloop / multistage_store, shared through multistage_loop.cuh).
// What changes is how the work is cut: at 4096^3 a 128 x 256 tile gives 512
// blocks for 132 SMs, but at 256^3 it gives 2, and at 1024^3 32. Here the
// tile shape is a per-shape choice (the -D params, picked by select() in
// gemmbench/rungs/multistage.py from three compiled configurations: 64x64
// tiles of 4x8 per thread with 4 blocks/SM, 128x128 of 8x8, 256x128 of
// 8x16), and K can be split: blockIdx.z = split z sums K tiles
// [z*per, min((z+1)*per, tiles)) with per = ceil(tiles / SPLITS), and writes
// its raw sums to partials[z*M*N + row*N + col]; reduce_splits then adds the
// SPLITS partial sums in the fixed order z = 0, 1, ... (deterministic) and
// applies the epilogue. With SPLITS == 1 (gridDim.z == 1) the kernel writes C
// through the epilogue itself and partials is NULL.
// Expected bottleneck: for small shapes, launch latency and the pipeline
// prologue (each block runs only a few K tiles); the reduction costs
// (SPLITS + 1) * M * N * 4 bytes of traffic (L2-resident at these sizes) and
// a second launch. For large shapes: as rung 12.
// Tile and edges: as rung 12 (cp.async zero-fill; guarded stores). A split
// whose K range is empty (possible when SPLITS does not divide the tile
// count evenly) still writes its zeros, so reduce_splits never reads
// uninitialised partials.
#include "multistage_loop.cuh"

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
    const int tiles = CEIL_DIV(K, BK);
    const int per = CEIL_DIV(tiles, (int)gridDim.z);
    const int t_begin = min(tiles, (int)blockIdx.z * per), t_end = min(tiles, t_begin + per);
    // Where the tile goes, decided before the loop so only three values stay live
    // across it: C through the epilogue, or raw sums (alpha = 1, beta = 0 writes
    // acc unchanged and never reads) into this split's slice of partials.
    const bool split = gridDim.z > 1;
    float* const out = split ? partials + (size_t)blockIdx.z * M * N : C;
    const float out_alpha = split ? 1.0f : alpha, out_beta = split ? 0.0f : beta;
    multistage_mainloop(acc, M, N, K, A, B, m0, n0, t_begin, t_end, smem);
    multistage_store(acc, M, N, out, m0, n0, out_alpha, out_beta);
}

// C = alpha * sum_z partials[z] + beta * C, z in increasing order. Grid-stride;
// float4 accesses when M*N % 4 == 0 and both pointers are 16-byte aligned.
extern "C" __global__ void __launch_bounds__(256)
reduce_splits(int M, int N, int splits, float alpha, const float* __restrict__ partials, float beta,
              float* __restrict__ C) {
    const size_t total = (size_t)M * N;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if ((total & 3) == 0 && is_aligned16(partials) && is_aligned16(C)) {
        const float4* p4 = reinterpret_cast<const float4*>(partials);
        for (size_t i = first; i < total / 4; i += stride) {
            float4 s = p4[i];
            for (int z = 1; z < splits; ++z) {
                const float4 v = p4[z * (total / 4) + i];
                s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
            }
            *reinterpret_cast<float4*>(C + 4 * i) = gemm_epilogue4(s, alpha, beta, C + 4 * i);
        }
    } else {
        for (size_t i = first; i < total; i += stride) {
            float s = partials[i];
            for (int z = 1; z < splits; ++z) s += partials[z * total + i];
            C[i] = gemm_epilogue(s, alpha, beta, C + i);
        }
    }
}
