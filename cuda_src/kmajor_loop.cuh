// The main loop and the C store of the k-major FP32 rungs 19 and 28: both
// tiles copied k-major (A from At = A^T, written by pack.cuh's transpose_pad
// zero-padded to Kp x Mp, Kp = K rounded up to BK, Mp = M rounded up to BM;
// or, kAInPlace (rung 28's KMAJOR_A=2), from A itself, M x K row-major,
// transposed by the threads between a register load and a shared store).
// 19_kmajor_a.cu tells the rung's story; 28_any_shape.cu cuts the same loop's
// work per shape and over K. Needs the -D parameters BM, BN, BK, TM, TN,
// NUM_THREADS, STAGES; the including rung defines its entry point.
//
// Layout. A stage is [As: BK x BM | Bs: BK x BN], both row-major with no
// padding or swizzle. Lanes: a warp is 8 (M) x 4 (N) lanes; lane (ly, lx)
// owns rows 4*ly + 32*i + 0..3 (i < TM/4) and columns 4*lx + 16*j + 0..3
// (j < TN/4) of its warp's WM x WN = 8*TM x 4*TN tile. An A fragment load
// is 8 distinct 16-byte chunks (128 contiguous bytes, each read by the 4 lx
// lanes), a B load 4 distinct chunks (64 bytes, read by 8 lanes): no bank
// conflicts. Copies: consecutive threads copy consecutive 16-byte chunks of
// a tile row: conflict-free stores, coalesced reads.
// Pipeline: as rung 12 (STAGES-deep cp.async ring, one __syncthreads per K
// tile placed before its last k-slice, fragments double buffered in
// registers). The FMAs of a slice are written row by row with the column
// order reversed on every other row (serpentine); ptxas reorders them anyway.
// Edges: At is zero-padded to whole tiles, so A copies never need a guard;
// A read in place takes 16-byte loads where a quad lies inside an aligned A,
// guarded scalar loads (zero outside A) elsewhere.
// B as rung 12: whole 16-byte copies up to the tile's edge, also past N where
// the rows stay inside B's buffer (whole_tile_rows); elsewhere cp.async
// src-size < 16 zero-fills chunks past N or K; when
// ldb % 4 or B's alignment forbids 16-byte copies, the call runs the loop's
// second instantiation (kCopy4), which copies B with copy4.cuh's 4-byte
// copies. C: 128-bit stores where a whole aligned
// float4 is inside C, guarded scalar stores otherwise; not read if beta == 0.
// Tile: block BM x BN x BK, NUM_THREADS = 32 * (BM/WM) * (BN/WN), thread
// tile TM x TN (TM, TN multiples of 4), MIN_BLOCKS for __launch_bounds__.
#include "common.cuh"
#include "ptx.cuh"
#include "whole_rows.cuh"
#include "copy4.cuh"

constexpr int kWM = 8 * TM;
constexpr int kWN = 4 * TN;
constexpr int kWarpsN = BN / kWN;
constexpr int kChunksA = BM / 4;          // 16-byte chunks in an A tile row (BM floats of At)
constexpr int kChunksB = BN / 4;
constexpr int kStageA = BK * BM;          // floats
constexpr int kStageFloats = BK * (BM + BN);
constexpr int kCopiesA = CEIL_DIV(BK * kChunksA, NUM_THREADS);
constexpr int kCopiesB = CEIL_DIV(BK * kChunksB, NUM_THREADS);
constexpr bool kExactA = kCopiesA * NUM_THREADS == BK * kChunksA;
constexpr bool kExactB = kCopiesB * NUM_THREADS == BK * kChunksB;
constexpr int kRowStepA = NUM_THREADS / kChunksA;
constexpr int kRowStepB = NUM_THREADS / kChunksB;
// With kAInPlace, the slice of a K tile at which the threads load the next
// tile's A (see kmajor_mainloop).
constexpr int kFetchSliceA = 1;
static_assert(BM % kWM == 0 && BN % kWN == 0 && (BM / kWM) * (BN / kWN) * 32 == NUM_THREADS,
              "8*TM x 4*TN warptiles must cover the block tile, one per warp");
static_assert(TM % 4 == 0 && TN % 4 == 0, "A and B fragments are float4s");
static_assert(NUM_THREADS % kChunksA == 0 && NUM_THREADS % kChunksB == 0,
              "a thread copies the same chunk column of every tile row it copies");
static_assert(STAGES >= 3, "the wait before the last slice keeps STAGES-2 tiles in flight");
static_assert(BK % 2 == 0, "an even number of slices: every tile starts on fragment buffer 0");

// acc += a (TM values of one k) x b (TN values of the same k), serpentine.
__device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float4 (&a)[TM / 4],
                                              const float4 (&b)[TN / 4]) {
    const float* av = reinterpret_cast<const float*>(a);
    const float* bv = reinterpret_cast<const float*>(b);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int jj = 0; jj < TN; ++jj) {
            const int j = (i & 1) ? TN - 1 - jj : jj;
            acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
    }
}

// The block's main loop: accumulates A[m0:m0+BM, k] @ B[k, n0:n0+BN] over the
// K tiles [t_begin, t_end) into each thread's acc (TM x TN, rows 4*ly +
// 32*(i/4) + i%4, columns 4*lx + 16*(j/4) + j%4 of its warptile). At has row
// stride lda (Mp; kAInPlace: At is A itself, M x K, row stride lda >= K), B
// row stride ldb (N, or wider for a padded copy: only the stride changes,
// nothing past column N is read). `smem` holds STAGES stages.
template <bool kAInPlace, bool kCopy4>
__device__ __forceinline__ void kmajor_loop(float (&acc)[TM][TN], int M, int N, int K,
                                            const float* __restrict__ At, int lda, const float* __restrict__ B,
                                            int ldb, int m0, int n0, int t_begin, int t_end, float* smem) {
    const int tid = threadIdx.x;

    // ---- the chunks this thread copies ----
    const int a_row = tid / kChunksA, a_chunk = tid % kChunksA;
    const int b_row = tid / kChunksB, b_chunk = tid % kChunksB;
    const unsigned smem_base = smem_addr(smem);
    const unsigned a_dst = smem_base + 4 * (a_row * BM + 4 * a_chunk);
    const unsigned b_dst = smem_base + 4 * (kStageA + b_row * BN + 4 * b_chunk);
    const float* a_src = At + (size_t)a_row * lda + m0 + 4 * a_chunk;
    const float* b_src = B + (size_t)b_row * ldb + n0 + 4 * b_chunk;
    // block-uniform; false in the kCopy4 instantiation, which runs only where it is (kmajor_mainloop), so the
    // 16-byte B paths below are compiled out of it
    const bool b_vector = !kCopy4 && (ldb & 3) == 0 && is_aligned16(B);
    const int b_whole_rows = whole_tile_rows(K, ldb, n0 + BN, b_vector);
    const int b_rows4 = whole_tile_rows(K, ldb, n0 + BN, true);  // the same for B's 4-byte copies
    const int b_cols_left = N - n0 - 4 * b_chunk;

    auto load_tile = [&](int t, int stage) {
        const int k0 = t * BK;
        const unsigned sa = a_dst + 4 * stage * kStageFloats;
        const unsigned sb = b_dst + 4 * stage * kStageFloats;
        const float* ga = a_src + (size_t)k0 * lda;
        const float* gb = b_src + (size_t)k0 * ldb;
        if constexpr (!kAInPlace) {
#pragma unroll
            for (int q = 0; q < kCopiesA; ++q)
                if (kExactA || a_row + q * kRowStepA < BK)
                    cp_async16_full(sa + 4 * q * kRowStepA * BM, ga + (size_t)q * kRowStepA * lda);
        }
        if constexpr (kCopy4) {  // unaligned B: 4-byte copies, a warp on consecutive floats (copy4.cuh)
            cp_async_tile4<BK, BN>(smem_base + 4 * stage * kStageFloats, B + (size_t)k0 * ldb + n0, ldb, K - k0,
                                   N - n0, k0 + BK <= b_rows4, B, [](int r, int c) { return kStageA + r * BN + c; });
            return;
        }
        if (k0 + BK <= b_whole_rows) {
#pragma unroll
            for (int q = 0; q < kCopiesB; ++q)
                if (kExactB || b_row + q * kRowStepB < BK)
                    cp_async16_full(sb + 4 * q * kRowStepB * BN, gb + (size_t)q * kRowStepB * ldb);
            return;
        }
#pragma unroll
        for (int q = 0; q < kCopiesB; ++q) {
            if (!kExactB && b_row + q * kRowStepB >= BK) continue;
            cp_async_chunk(sb + 4 * q * kRowStepB * BN, gb + (size_t)q * kRowStepB * ldb, B,
                           k0 + b_row + q * kRowStepB < K, b_cols_left, b_vector);
        }
    };

    // ---- the fragments this thread reads ----
    const int warp = tid / 32, lane = tid % 32;
    const int ly = lane / 4, lx = lane % 4;
    const int a_frag = (warp / kWarpsN) * kWM + 4 * ly;             // + 32*i, + k*BM
    const int b_frag = kStageA + (warp % kWarpsN) * kWN + 4 * lx;   // + 16*j, + k*BN

    // ---- A read in place (kAInPlace): row-major M x K, row stride lda ----
    // A tile's BM x BK values move through registers. Thread (g, q) =
    // (tid / kQuadsA, tid % kQuadsA) loads the 16-byte k quad q of kRowsA
    // consecutive rows g*kRowsA + j: a warp's load reads whole 64-byte row
    // pieces. Transposed in registers, a k of those rows is one kRowsA-wide
    // store into As's k row. Tile t+1's A is loaded at slice kFetchSliceA of
    // tile t and stored before tile t's last barrier: BK - 2 slices of FMAs
    // hide the loads' latency. Loading right after the barrier instead (a
    // whole tile ahead) put them beside that barrier's burst of cp.asyncs and
    // fragment loads: 1-2 points slower (H100: 4096^3 90.5% of SGEMM against
    // 92.4%, 4096x128x4096 96.7% against 98.1%).
    constexpr int kQuadsA = BK / 4;
    constexpr int kRowsA = BM * kQuadsA / NUM_THREADS;
    static_assert(!kAInPlace || (kRowsA * NUM_THREADS == BM * kQuadsA && BK % 4 == 0 &&
                                 (kRowsA == 1 || kRowsA == 2 || kRowsA == 4)),
                  "A's 16-byte chunks must split into 1, 2 or 4 rows per thread");
    static_assert(!kAInPlace || kFetchSliceA < BK, "the next tile's A is loaded inside this tile");
    float4 a_next[kAInPlace ? kRowsA : 1];
    const int a_quad = 4 * (tid % kQuadsA), a_first = (tid / kQuadsA) * kRowsA;
    const bool a_vector = (lda & 3) == 0 && is_aligned16(At);  // block-uniform
    auto fetch_a = [&](int t) {
        const int k0 = t * BK;
        const bool quad_in = a_vector && a_quad + 4 <= K - k0;
#pragma unroll
        for (int j = 0; j < kRowsA; ++j)
            a_next[j] = load_float4(At + (size_t)m0 * lda + k0, lda, a_first + j, a_quad, M - m0, K - k0,
                                    quad_in && a_first + j < M - m0);
    };
    auto store_a = [&](int stage) {
        float* as = smem + stage * kStageFloats + a_quad * BM + a_first;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            float v[kRowsA];
#pragma unroll
            for (int j = 0; j < kRowsA; ++j) v[j] = reinterpret_cast<const float*>(&a_next[j])[i];
            if constexpr (kRowsA == 4) *reinterpret_cast<float4*>(as + i * BM) = make_float4(v[0], v[1], v[2], v[3]);
            else if constexpr (kRowsA == 2) *reinterpret_cast<float2*>(as + i * BM) = make_float2(v[0], v[1]);
            else as[i * BM] = v[0];
        }
    };

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (t_begin + s < t_end) load_tile(t_begin + s, s);
        cp_async_commit();  // empty groups keep the count uniform
    }
    if (t_begin >= t_end) return;
    if constexpr (kAInPlace) {
        fetch_a(t_begin);
        store_a(0);
    }

    float4 a[2][TM / 4], b[2][TN / 4];
    auto load_frags = [&](int buf, const float* stage, int k) {
#pragma unroll
        for (int i = 0; i < TM / 4; ++i)
            a[buf][i] = *reinterpret_cast<const float4*>(stage + a_frag + k * BM + 32 * i);
#pragma unroll
        for (int j = 0; j < TN / 4; ++j)
            b[buf][j] = *reinterpret_cast<const float4*>(stage + b_frag + k * BN + 16 * j);
    };

    cp_async_wait<STAGES - 2>();
    __syncthreads();
    load_frags(0, smem, 0);

    int read_stage = 0, write_stage = STAGES - 1;
    for (int t = t_begin; t < t_end; ++t) {
        const float* stage = smem + read_stage * kStageFloats;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if constexpr (kAInPlace) {
                if (k == kFetchSliceA && t + 1 < t_end) fetch_a(t + 1);
            }
            if (k + 1 < BK) {
                load_frags((k + 1) & 1, stage, k + 1);
            } else {
                if constexpr (kAInPlace) {  // tile t+1's A (loaded at slice kFetchSliceA) into its stage
                    if (t + 1 < t_end) store_a(read_stage + 1 == STAGES ? 0 : read_stage + 1);
                }
                cp_async_wait<STAGES - 3>();
                __syncthreads();
                if (t + STAGES - 1 < t_end) load_tile(t + STAGES - 1, write_stage);
                cp_async_commit();
                read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
                write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
                if (t + 1 < t_end) load_frags(0, smem + read_stage * kStageFloats, 0);
            }
            outer_product(acc, a[k & 1], b[k & 1]);
        }
    }
    cp_async_wait<0>();  // no copy may still target shared memory when the block exits
}

// The main loop for B's alignment: unaligned rows take the instantiation
// with copy4.cuh's copies, so their per-element offsets do not take
// registers from the loop every aligned call runs.
template <bool kAInPlace = false>
__device__ __forceinline__ void kmajor_mainloop(float (&acc)[TM][TN], int M, int N, int K,
                                                const float* __restrict__ At, int lda, const float* __restrict__ B,
                                                int ldb, int m0, int n0, int t_begin, int t_end, float* smem) {
    if (!((ldb & 3) == 0 && is_aligned16(B)))
        kmajor_loop<kAInPlace, true>(acc, M, N, K, At, lda, B, ldb, m0, n0, t_begin, t_end, smem);
    else
        kmajor_loop<kAInPlace, false>(acc, M, N, K, At, lda, B, ldb, m0, n0, t_begin, t_end, smem);
}

// Writes a thread's tile (layout of kmajor_mainloop) to the M x N matrix
// `out` (row stride ld, block corner m0, n0) as alpha * acc + beta * out.
__device__ __forceinline__ void kmajor_store(const float (&acc)[TM][TN], int M, int N, float* out, int ld, int m0,
                                             int n0, float alpha, float beta) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int r0 = m0 + (warp / kWarpsN) * kWM + 4 * (lane / 4);
    const int c0 = n0 + (warp % kWarpsN) * kWN + 4 * (lane % 4);
    const bool aligned = (ld & 3) == 0 && is_aligned16(out);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN / 4; ++j) {
            const int r = r0 + 32 * (i / 4) + i % 4, c = c0 + 16 * j;
            store_float4(out, ld, r, c, M, N,
                         make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]),
                         alpha, beta, aligned && r < M && c + 4 <= N);
        }
}
