// Rung 28 — every shape: the FP32 top rung that cuts the work per shape.
//
// What changed from rungs 13 and 19: no new loop. Rung 19's k-major loop is
// the fastest FP32 loop of the ladder once every SM is busy (about cuBLAS at
// 2048^3 and up), but it has one tile shape per call and no split of K, so a
// skinny or long-K shape leaves most SMs idle (64x64x131072 ran at 1% of
// cuBLAS); rung 13 splits K but its row-major A tile costs registers; and
// both fall back to 4-byte copies when a row of A or B is not a multiple of
// 16 bytes (801x1537x3001 ran at 0.65x). Here the driver ("any_shape",
// gemmbench/gpu/drivers.py) and select_28 (gemmbench/rungs/any_shape.py)
// choose per shape, each choice one -D parameter or one pre-pass:
//   - the loop: KMAJOR_A=1 is rung 19's (At = A^T written by transpose_pad,
//     kmajor_loop.cuh), KMAJOR_A=0 rung 12's (A read in place,
//     multistage_loop.cuh), which saves the pre-pass where it would cost more
//     than the faster loop gains (small shapes);
//   - the tile, from the compiled configurations of any_shape.py, thin ones
//     included (16 rows for M <= 16: a GEMV-like shape computes 16 rows, not
//     128; 16 columns for N <= 16);
//   - split-K over grid z (split_k.cuh), up to 256 splits, so a shape with
//     few output tiles still fills the SMs;
//   - packing: an operand whose rows are not a multiple of 16 bytes is first
//     copied into padded rows (pack.cuh's copy_rows, inside the timed call:
//     O(MK) or O(KN) against the product's O(MNK)), so every copy is a
//     16-byte cp.async; the loops take the padded pitch as the stride (lda,
//     ldb) and still stop at K and N.
// The table footer and `gemmbench info` print the choice and why.
// Expected bottleneck: as rung 19 (FFMA issue) where the tiles fill the SMs;
// for skinny shapes, the one read of the long operand (memory); for small
// ones, the launches (up to four: pack A, pack B, sgemm, reduce_splits).
// Edges: as the loop chosen (cp.async zero-fill past M, N and K; guarded
// stores; C not read when beta == 0).
#include "common.cuh"
#include "ptx.cuh"
#include "pack.cuh"
#include "split_k.cuh"
#if KMAJOR_A
#include "kmajor_loop.cuh"
#else
#include "multistage_loop.cuh"
#endif

// A is At (K x M, row stride lda = Mp) when KMAJOR_A, else A (M x K, row
// stride lda >= K); B is K x N with row stride ldb >= N; C is M x N (stride N).
extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
      float beta, float* __restrict__ C, float* __restrict__ partials) {
    extern __shared__ __align__(128) float smem[];
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const SplitSlice slice = split_slice(CEIL_DIV(K, BK), M, N, alpha, beta, C, partials);
#if KMAJOR_A
    kmajor_mainloop(acc, N, K, A, lda, B, ldb, m0, n0, slice.t_begin, slice.t_end, smem);
    kmajor_store(acc, M, N, slice.out, m0, n0, slice.alpha, slice.beta);
#else
    multistage_mainloop(acc, M, N, K, A, lda, B, ldb, m0, n0, slice.t_begin, slice.t_end, smem);
    multistage_store(acc, M, N, slice.out, m0, n0, slice.alpha, slice.beta);
#endif
}
