// Rung 2 — global-memory coalescing.
//
// What changed: only the thread -> element mapping. Consecutive threads of a
//   warp now take consecutive COLUMNS of one row of C. A warp's B load is then
//   32 neighbouring floats (one 128-byte transaction instead of 32), its A load
//   is one element for the whole warp (a broadcast), and its C store is one
//   contiguous 128-byte write.
// Bottleneck: still global-memory bandwidth — every FMA loads two floats, and
//   nothing is reused across threads except through the caches.
// Tile: a 1-D block of BLOCK*BLOCK threads computes a BLOCK x BLOCK tile of C;
//   grid.x over M, grid.y over N: blocks launched together share columns of B
//   (measured a little faster than grid.x over N).
// Edges: threads outside C simply do nothing.
// Offsets: 32-bit wherever every offset of A, B and C fits in an int (the
//   grid-uniform branch below), 64-bit only for matrices past 2^31 elements.
//   With 32-bit offsets ptxas steps B's address with one IMAD.WIDE per k
//   instead of a 64-bit add pair. The dot product is a __noinline__ function:
//   inlined twice, ptxas compiled both loops into the 64-bit form.
// The measured figures behind these choices (H200): results/notes/2026-11-kernel-measurements.md.
#include "common.cuh"

template <typename Offset>
__device__ __noinline__ float dot_row_col(const float* __restrict__ A, const float* __restrict__ B, int N, int K,
                                             int row, int col) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[(Offset)row * K + k] * B[(Offset)k * N + col];
    return acc;
}

extern "C" __global__ void __launch_bounds__(BLOCK * BLOCK)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
      float beta, float* __restrict__ C) {
    const int row = blockIdx.x * BLOCK + threadIdx.x / BLOCK;
    const int col = blockIdx.y * BLOCK + threadIdx.x % BLOCK;  // neighbours in a warp: neighbouring columns
    if (row >= M || col >= N) return;

    const float acc = offsets_fit_int(M, N, K) ? dot_row_col<int>(A, B, N, K, row, col)
                                               : dot_row_col<size_t>(A, B, N, K, row, col);
    C[(size_t)row * N + col] = gemm_epilogue(acc, alpha, beta, &C[(size_t)row * N + col]);
}
