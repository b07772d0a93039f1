// Rung 1 — naive: one thread per element of C.
//
// What it does: thread (x, y) of the grid computes C[row][col] as a K-long
//   dot product read straight from global memory. There is no reuse at all.
// The mapping is deliberately the uncoalesced one: threadIdx.x (the index
//   that runs fastest inside a warp) walks down the ROWS of C. A warp's 32
//   threads therefore read 32 different rows of A (32 separate cache lines per
//   load) and write 32 different rows of C; only the B read is shared (all 32
//   threads read the same element, a broadcast).
// Bottleneck: global-memory transactions — each warp load touches 32 lines.
// Tile: BLOCK x BLOCK threads, grid.x over M, grid.y over N (see ladder.py).
// Edges: threads outside C simply do nothing.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK * BLOCK)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
      float beta, float* __restrict__ C) {
    const int row = blockIdx.x * BLOCK + threadIdx.x;  // neighbours in a warp: neighbouring rows
    const int col = blockIdx.y * BLOCK + threadIdx.y;
    if (row >= M || col >= N) return;

    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = gemm_epilogue(acc, alpha, beta, &C[(size_t)row * N + col]);
}
