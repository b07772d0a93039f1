// Rung 28 — every shape: the FP32 top rung that cuts the work per shape.
//
// What changed from rungs 13 and 19: no new loop. Rung 19's k-major loop is
// the fastest FP32 loop of the ladder once every SM is busy (about cuBLAS at
// 2048^3 and up), but it has one tile shape per call and no split of K, so a
// skinny or long-K shape leaves most SMs idle (64x64x131072 ran at 1% of
// cuBLAS); rung 13 splits K but its row-major A tile costs registers; and
// both fall back to 4-byte copies when a row of A or B is not a multiple of
// 16 bytes (801x1537x3001 ran at 0.65x). Here the driver ("any_shape",
// gemmbench/gpu/drivers.py) and select (gemmbench/rungs/any_shape.py)
// choose per shape, each choice one -D parameter or one pre-pass:
//   - the loop: KMAJOR_A=1 is rung 19's (At = A^T written by transpose_pad,
//     kmajor_loop.cuh); KMAJOR_A=2 the same loop with A read in place and
//     transposed by the threads on its way into shared memory (no pre-pass:
//     where N is small or K long, the transpose's two passes over A cost more
//     than the ~9% slower loop); KMAJOR_A=0 rung 12's (A read in place,
//     row-major tiles, multistage_loop.cuh), which saves the pre-pass at
//     small shapes;
//   - the tile, from the compiled configurations of any_shape.py, thin ones
//     included (16 rows for M <= 16: a skinny shape computes 16 rows, not
//     128; 16 columns for N <= 16);
//   - for M <= 8 (GEMV-like), no tiles at all (VECTOR=1): one pass over B,
//     which is then the whole cost (memory);
//   - split-K over grid z (split_k.cuh), up to 256 splits, so a shape with
//     few output tiles still fills the SMs;
//   - packing (PACK=1): an operand whose rows are not a multiple of 16
//     bytes is first copied into padded rows (pack.cuh's copy_rows, inside
//     the timed call: O(MK) or O(KN) against the product's O(MNK)), so every
//     copy is a 16-byte cp.async; the loops take the padded pitch as the
//     stride (lda, ldb) and still stop at K and N. PACK=0 reads such rows in
//     place with 4-byte copies (copy4.cuh): a loop a few per cent slower but
//     no launch before it, which wins at small shapes (333x555x777). When K
//     is split and C's rows are not 16-byte multiples, the splits' sums go
//     to padded rows (ldp) with 16-byte stores, and reduce_splits reads them
//     four floats at a time and stores C's elements one by one; unsplit, the
//     tiles store into C itself (4-byte stores where a float4 of a row is
//     not 16-byte aligned), which measured faster than a padded buffer and
//     a copy.
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
// before the #if: a header is inlined once, where it is first named
#include "whole_rows.cuh"
#include "copy4.cuh"
#if VECTOR == 0
#if KMAJOR_A
#include "kmajor_loop.cuh"
#else
#include "multistage_loop.cuh"
#endif
#endif

// The tiled kernel (VECTOR=0). A is At (K x M, row stride lda = Mp) when
// KMAJOR_A, else A (M x K, row stride lda >= K); B is K x N with row stride
// ldb >= N; C is M x N (stride N); partials (split_k.cuh) has row stride ldp.
#if VECTOR == 0
extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
      float beta, float* __restrict__ C, float* __restrict__ partials, int ldp) {
    extern __shared__ __align__(128) float smem[];
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const SplitSlice slice = split_slice(CEIL_DIV(K, BK), M, N, ldp, alpha, beta, C, partials);
#if KMAJOR_A
    kmajor_mainloop<KMAJOR_A == 2>(acc, M, N, K, A, lda, B, ldb, m0, n0, slice.t_begin, slice.t_end, smem);
    kmajor_store(acc, M, N, slice.out, slice.ld, m0, n0, slice.alpha, slice.beta);
#else
    multistage_mainloop(acc, M, N, K, A, lda, B, ldb, m0, n0, slice.t_begin, slice.t_end, smem);
    multistage_store(acc, M, N, slice.out, slice.ld, m0, n0, slice.alpha, slice.beta);
#endif
}
#else
constexpr int kVectorThreads = 256;
constexpr int kMaxVector = 8;  // M is at most this

// This block's K range: split z of gridDim.z, in whole groups of 4 (float4s along k).
__device__ __forceinline__ void vector_k_range(int K, int& k_begin, int& k_end) {
    const int per = 4 * CEIL_DIV(CEIL_DIV(K, 4), (int)gridDim.z);
    k_begin = min(K, (int)blockIdx.z * per);
    k_end = min(K, k_begin + per);
}

// VECTOR=1, M <= 8 rows: thread t of the grid owns columns 4t..4t+3 of every
// row. Per k it reads one float4 of B (a warp reads 512 contiguous bytes: B is
// streamed once, the whole cost) and the M values A[m][k], the same address
// for every thread (a broadcast that stays in L1). split_slice is asked only
// where the results go: the K range is vector_k_range's.
extern "C" __global__ void __launch_bounds__(kVectorThreads)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
      float beta, float* __restrict__ C, float* __restrict__ partials, int ldp) {
    const int c = 4 * (blockIdx.x * kVectorThreads + threadIdx.x);
    int k_begin, k_end;
    vector_k_range(K, k_begin, k_end);
    float acc[kMaxVector][4] = {};
    const bool whole = (ldb & 3) == 0 && is_aligned16(B) && c + 4 <= N;
    if (c < N) {
#pragma unroll 4
        for (int k = k_begin; k < k_end; ++k) {
            const float* b_row = B + (size_t)k * ldb + c;
            const float4 b = whole ? __ldg(reinterpret_cast<const float4*>(b_row))
                                   : make_float4(__ldg(b_row), c + 1 < N ? __ldg(b_row + 1) : 0.0f,
                                                 c + 2 < N ? __ldg(b_row + 2) : 0.0f,
                                                 c + 3 < N ? __ldg(b_row + 3) : 0.0f);
#pragma unroll
            for (int m = 0; m < kMaxVector; ++m) {
                if (m >= M) break;
                const float a = __ldg(A + (size_t)m * lda + k);
                acc[m][0] = fmaf(a, b.x, acc[m][0]); acc[m][1] = fmaf(a, b.y, acc[m][1]);
                acc[m][2] = fmaf(a, b.z, acc[m][2]); acc[m][3] = fmaf(a, b.w, acc[m][3]);
            }
        }
    }
    const SplitSlice slice = split_slice(1, M, N, ldp, alpha, beta, C, partials);
    for (int m = 0; m < M && m < kMaxVector; ++m)
#pragma unroll
        for (int j = 0; j < 4; ++j)
            store_guarded(slice.out, slice.ld, m, c + j, M, N, acc[m][j], slice.alpha, slice.beta);
}
#endif
