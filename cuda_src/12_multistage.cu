// Rung 12 — multistage cp.async pipeline.
//
// What changed from rung 11: global -> shared copies no longer pass through
// registers. Every thread issues 16-byte `cp.async.cg.shared.global` copies
// for K tiles up to STAGES-1 ahead of the one being computed, so (a)
// DRAM/L2 latency is hidden by several tiles of FMAs instead of one, and (b)
// the registers rung 11 spent on the staged float4s go to a bigger thread
// tile (8 x 16 by default). The shared memory is dynamic (STAGES * 4 * BK *
// (BM + BN) bytes; 144 KiB by default).
// The loop lives in multistage_loop.cuh (rung 13 shares it): its pipeline,
// the XOR-swizzled row-major A tile that cp.async can fill without a
// transpose, and why its shared loads and stores are conflict-free are
// explained there. Interior blocks copy full K tiles without per-chunk size
// arithmetic, and BK = 32 halves the number of tiles: with only 8 warps per
// SM, every instruction between the FMA runs is exposed.
// Expected bottleneck: FFMA issue. Per 4 k-slices a thread issues 4*TM*TN
// FFMA against TM + TN LDS.128 (512 vs 24 at 8 x 16). ncu counts about the
// same warp instructions and shared-load wavefronts as for cuBLAS's sm80
// 256x128x8 FFMA kernel; what is left is scheduling inside ptxas's code:
// more "dispatch stall" cycles per instruction than cuBLAS (most likely
// operand-collector / register-bank conflicts from the register allocation
// of 128 accumulators, which CUDA C does not control), so the FMA pipe is
// less busy than cuBLAS's. The measured figures (H200) are in
// results/notes/2026-11-kernel-measurements.md.
// Tile: block BM x BN x BK, NUM_THREADS = 32 * (BM/WM) * (BN/WN) threads,
// warptile WM x WN = 8*TM x 4*TN, thread tile TM x TN, MIN_BLOCKS blocks per
// SM promised to __launch_bounds__ (the register cap is 64K / (threads*MIN_BLOCKS)).
// Edges: cp.async zero-fills rows and columns past M, N and K, so the FMA
// loop has no checks; C is written with guarded stores and not read when
// beta == 0 (see multistage_loop.cuh).
#include "multistage_loop.cuh"

extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    extern __shared__ __align__(128) float smem[];
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    multistage_mainloop(acc, M, N, K, A, K, B, N, m0, n0, 0, CEIL_DIV(K, BK), smem);
    multistage_store(acc, M, N, C, N, m0, n0, alpha, beta);
}
