// Rung 19 — A transposed once per call: both operands k-major in shared memory.
//
// What changed from rung 12: one idea. cp.async cannot transpose, so rung 12
// keeps A row-major in shared memory and a thread reads 4 k-values of each of
// its TM rows per LDS.128: its A fragments are 4*TM registers, double
// buffered 8*TM (64 at 8 x 16), next to 128 accumulators, which leaves
// ptxas no room to schedule (255 registers, ~224 live). Here a pre-pass
// (transpose_pad, launched by the "transpose_a" driver inside the timed
// call) writes At = A^T once per call, K x M, padded with zeros to Kp x Mp
// (Kp = K rounded up to BK, Mp = M rounded up to BM). The A tile is then a
// plain BK x BM row block of At, copied with 16-byte cp.async exactly like
// B's, and a k-slice's fragments are TM/4 + TN/4 LDS.128 (TM + TN registers,
// double buffered 2*(TM+TN) = 48 at 16 x 8): the same number of LDS.128 as
// rung 12 (6 per slice at 128 results per thread) with ~48 fewer live
// registers. ptxas: 227 registers at 128x256 tiles of 16 x 8, 221 at rung
// 12's 256x128 of 8 x 16, no spills; the SASS main loop of the latter has
// the same 4096 FFMA and 192 LDS.128 per K tile as rung 12, 36 MOV against
// 168, and a quarter as many FFMAs whose two non-reused sources share a
// register bank (133 against 656 of 4096, counting banks as register % 4).
// Cost of the pre-pass: M*K floats read and written once, at close to DRAM
// bandwidth: small beside the GEMM at the shapes where this rung pays.
//
// Effect: with rung 12's own 256x128x32 tiles of 8 x 16 the freed registers
// alone make the loop faster and the FMA pipe busier. With registers to
// spare, other tiles fit; the record's tiles (select_19 in
// gemmbench/rungs/multistage.py) are 128x128x16 of 16 x 8, 4 warps, 2 blocks
// per SM, or, when those tiles would leave a last wave under 94% full,
// 64x128x16 of 8 x 8, 4 warps, 3 blocks per SM (BK = 16 with 4 stages held
// up better than BK = 32 at 2048^3). The measured figures (H200, gemmbench
// compare and ncu): results/notes/2026-11-kernel-measurements.md.
// Where the rung's pieces live: this kernel; its pre-pass (pack.cuh) and loop (kmajor_loop.cuh); the record
// (gemmbench/rungs/gpu.py, rung 19); its parameters, constraints and
// per-shape choice (gemmbench/rungs/multistage.py, with rungs 12 and 13);
// the host side that launches the pre-pass, then sgemm, within the timed
// call (the "transpose_a" driver, gemmbench/gpu/drivers.py).
//
// Layout, pipeline and edges: kmajor_loop.cuh (rung 28 shares the loop).
#include "pack.cuh"
#include "kmajor_loop.cuh"

extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ At, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    extern __shared__ __align__(128) float smem[];
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    kmajor_mainloop(acc, M, N, K, At, CEIL_DIV(M, BM) * BM, B, N, m0, n0, 0, CEIL_DIV(K, BK), smem);
    kmajor_store(acc, M, N, C, N, m0, n0, alpha, beta);
}
