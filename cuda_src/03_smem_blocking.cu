// Rung 3 — shared-memory cache blocking.
//
// What changed: the block walks K in BLOCK-wide steps. At each step its
//   threads cooperatively copy a BLOCK x BLOCK tile of A and one of B into
//   shared memory (one coalesced element each), synchronise, and every thread
//   then reads BLOCK values of each tile from shared memory. Each global load
//   is now reused BLOCK times (by the BLOCK threads of a row or column).
// Bottleneck: shared-memory traffic — every FMA still needs two shared loads
//   (As[ty][k] is a broadcast, Bs[k][tx] is conflict-free), so the kernel is
//   limited by LDS throughput and by the synchronisation per tile.
// Tile: BLOCK x BLOCK of C per block of BLOCK*BLOCK threads, one element per
//   thread; grid.x over N, grid.y over M.
// Edges: tile loads outside A or B write 0 into shared memory (a zero adds
//   nothing to the dot product), so the FMA loop has no checks; the store is
//   guarded. A block wholly inside C walks its full K tiles in a loop with no
//   guards at all; only the last, partial K tile and the blocks on C's edge
//   take the guarded loop. (Checking inside one loop whether each tile needed
//   guards cost the interior ~15 instructions a tile and ran measurably slower
//   than an unguarded loop; the guard-free loop stepping two per-thread
//   pointers won back the difference. Figures (H200):
//   results/notes/2026-11-kernel-measurements.md.)
//   Out-of-range threads stay alive because they help load tiles and must
//   reach every __syncthreads().
#include "common.cuh"

// One K tile of the dot product, from the tiles in shared memory; the
// barriers on both sides keep the tiles whole while anyone reads them.
__device__ __forceinline__ float accumulate_tile(const float (&As)[BLOCK][BLOCK], const float (&Bs)[BLOCK][BLOCK],
                                                 int ty, int tx, float acc) {
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BLOCK; ++k)
        acc += As[ty][k] * Bs[k][tx];
    __syncthreads();  // nobody may overwrite the tiles while others still read them
    return acc;
}

extern "C" __global__ void __launch_bounds__(BLOCK * BLOCK)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
      float beta, float* __restrict__ C) {
    __shared__ float As[BLOCK][BLOCK];
    __shared__ float Bs[BLOCK][BLOCK];

    const int ty = threadIdx.x / BLOCK;  // row inside the tile
    const int tx = threadIdx.x % BLOCK;  // column inside the tile: neighbours in a warp
    const int rowStart = blockIdx.y * BLOCK, colStart = blockIdx.x * BLOCK;
    const int rowsLeft = M - rowStart, colsLeft = N - colStart;

    // Move the pointers to this block's corner; 64-bit because M*K may exceed 2^31.
    A += (size_t)rowStart * K;
    B += colStart;
    C += (size_t)rowStart * N + colStart;

    float acc = 0.0f;
    int k0 = 0;
    if (rowsLeft >= BLOCK && colsLeft >= BLOCK) {  // block-uniform: full tiles need no guards
        const float* a = A + ty * K + tx;  // this thread's element of each tile
        const float* b = B + ty * N + tx;
        for (; k0 + BLOCK <= K; k0 += BLOCK, a += BLOCK, b += (size_t)BLOCK * N) {
            As[ty][tx] = *a;
            Bs[ty][tx] = *b;
            acc = accumulate_tile(As, Bs, ty, tx, acc);
        }
        A += k0;
        B += (size_t)k0 * N;
    }
    for (; k0 < K; k0 += BLOCK) {  // edge blocks, and the last partial K tile
        As[ty][tx] = load_guarded(A, K, ty, tx, rowsLeft, K - k0);
        Bs[ty][tx] = load_guarded(B, N, ty, tx, K - k0, colsLeft);
        acc = accumulate_tile(As, Bs, ty, tx, acc);
        A += BLOCK;
        B += (size_t)BLOCK * N;
    }
    store_guarded(C, N, ty, tx, rowsLeft, colsLeft, acc, alpha, beta);
}
