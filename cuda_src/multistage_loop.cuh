// The main loop and the C store of the multistage FP32 rungs 12 and 13
// (12_multistage.cu tells the rung's story; 13_shape_adaptive.cu cuts the
// same loop's work per shape and over K). Needs the -D parameters BM, BN, BK,
// TM, TN, NUM_THREADS, STAGES; the including rung defines its entry point.
//
// Pipeline. Global -> shared copies are 16-byte `cp.async.cg.shared.global`
// for K tiles up to STAGES-1 ahead of the one being computed (commit_group /
// wait_group keep count); the shared memory is dynamic, STAGES stages of
// [A tile | B tile] (STAGES * 4 * BK * (BM + BN) bytes).
// One __syncthreads per K tile, placed before the tile's LAST k-slice: after
// it, tile t+1 is complete (wait_group STAGES-3), the stage tile t-1 used is
// refilled with tile t+STAGES-1 (every warp consumed its last fragments
// before the barrier), and tile t+1's first fragments are read while slice
// BK-1 of tile t runs its FMAs, so no shared-memory latency is exposed at
// tile boundaries.
//
// Layout. cp.async cannot transpose, so A stays row-major in shared memory
// (As[m][k], BK floats a row) and the FMA loop reads it along k: one LDS.128
// gives a thread 4 consecutive k values of one of its rows, i.e. TM LDS.128
// feed 4 k-slices — the same count as rung 11's k-major tile (TM/4 LDS.128
// per slice). The price is 4*TM fragment registers for A instead of TM.
//   Lanes: a warp is 8 (M) x 4 (N) lanes; lane (ly, lx) owns rows
//   ly + 8*i (i < TM) and columns 4*lx + 16*j + 0..3 (j < TN/4) of its
//   warp's WM x WN = 8*TM x 4*TN tile.
//   A fragment load (fixed i and k chunk): the warp touches 8 consecutive
//   rows at one 16-byte chunk (the 4 lx lanes of a row broadcast). With a
//   plain row stride of BK floats those 8 chunks would fall in the same 4
//   banks (8-way conflict). The chunk index is therefore XOR-swizzled:
//   chunk c of row r lives at chunk c ^ swz(r), swz(r) = (r / (8/CH)) % CH
//   for CH = BK/4 < 8 chunks a row, r % 8 for CH >= 8. Eight consecutive
//   rows then cover all 32 banks exactly once, and since swz only uses the
//   low 3 bits of r (= ly), a lane's CH swizzled chunk offsets are
//   per-thread constants: no index math in the FMA loop. (Padding rows to
//   BK+4 floats would also work but wastes shared memory and still needs a
//   per-row offset.)
//   A stores (cp.async): 8 consecutive lanes write 8/CH whole rows (or 8
//   chunks of one row); the same swizzle puts them in 8 distinct bank quads.
//   B stays row-major (Bs[k][n], no padding): a fragment load is 4 lanes
//   reading 4 consecutive chunks (64 bytes), stores are 32 consecutive
//   chunks of a row — both conflict-free.
// Registers: fragments are double buffered — B of slice k+1 and A of the
// next 4-slice group are read while the current FMAs run.
// Copies: a block whose A rows lie inside A, with 16-byte aligned rows
// (block-uniform flag), copies every full K tile within B's whole rows
// (whole_tile_rows: all but a partial last one) with plain
// 16-byte cp.async and no per-chunk size arithmetic (~40 instructions a
// tile per warp): with only 8 warps per SM, every instruction between the
// FMA runs is exposed.
// Edges: cp.async with src-size < 16 zero-fills the rest of a chunk, so
// rows/columns past M and K become zeros in shared memory and the FMA
// loop has no checks. A block at N's edge copies B's rows whole where they
// stay inside B's buffer (whole_tile_rows): its columns past N only reach
// C's columns past N, which are never stored. 16-byte copies need 16-byte
// aligned sources: when lda % 4 (A) or ldb % 4 (B) or a base pointer
// forbids it, the call runs the loop's second instantiation (kCopy4), which
// copies both operands with copy4.cuh's 4-byte copies, consecutive threads
// on consecutive floats (one copy path, so the registers of the other are
// not live in it: with both, rung 12 spilled on sm_80). C is written with
// 128-bit stores where
// a whole float4 is inside C and aligned, guarded scalar stores otherwise;
// C is not read when beta == 0.
#include "common.cuh"
#include "ptx.cuh"
#include "whole_rows.cuh"
#include "copy4.cuh"

constexpr int kWM = 8 * TM;               // warptile height (8 lanes down)
constexpr int kWN = 4 * TN;               // warptile width (4 lanes across, float4s)
constexpr int kWarpsN = BN / kWN;
constexpr int kChunksA = BK / 4;          // 16-byte chunks in an A tile row
constexpr int kChunksB = BN / 4;          // ... in a B tile row
constexpr int kStageA = BM * BK;          // floats
constexpr int kStageFloats = BM * BK + BK * BN;
constexpr int kCopiesA = CEIL_DIV(BM * kChunksA, NUM_THREADS);  // chunks a thread copies per tile
constexpr int kCopiesB = CEIL_DIV(BK * kChunksB, NUM_THREADS);  // (the last one maybe not by all threads)
constexpr bool kExactA = kCopiesA * NUM_THREADS == BM * kChunksA;
constexpr bool kExactB = kCopiesB * NUM_THREADS == BK * kChunksB;
constexpr int kRowStepA = NUM_THREADS / kChunksA;      // rows between a thread's A chunks
constexpr int kRowStepB = NUM_THREADS / kChunksB;
static_assert(BM % kWM == 0 && BN % kWN == 0 && (BM / kWM) * (BN / kWN) * 32 == NUM_THREADS,
              "8*TM x 4*TN warptiles must cover the block tile, one per warp");
static_assert(TN % 4 == 0 && BK % 4 == 0, "B fragments and tile chunks are float4s");
static_assert(NUM_THREADS % kChunksA == 0 && NUM_THREADS % kChunksB == 0,
              "a thread copies the same chunk column of every row it copies");
static_assert((kChunksA & (kChunksA - 1)) == 0, "BK/4 must be a power of two (XOR swizzle stays inside a row)");
static_assert(kCopiesA <= 32, "a_rows_ok holds one bit per A chunk");
static_assert(kRowStepA % 8 == 0 || kCopiesA == 1, "a thread's A rows share one swizzle");
static_assert(STAGES >= 3, "the wait before the last slice keeps STAGES-2 tiles in flight");
static_assert(BK % 8 == 0, "an even number of 4-slice groups: every tile starts on fragment buffer 0");


// Chunk c of A row r is stored at chunk c ^ a_swizzle(r) (see the header).
__device__ __forceinline__ int a_swizzle(int r) {
    return kChunksA >= 8 ? (r & 7) : ((r / (8 / kChunksA)) & (kChunksA - 1));
}

// acc += column kk of the A fragment (x, y, z or w of each row's float4) times
// the B fragment row. Row-outer order: ptxas marks each row's A value .reuse
// for its TN FMAs (a column-outer order doubled the register-bank conflicts in the SASS).
__device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float4 (&a)[TM], const float4 (&b)[TN / 4],
                                              int kk) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const float ak = kk == 0 ? a[i].x : kk == 1 ? a[i].y : kk == 2 ? a[i].z : a[i].w;
#pragma unroll
        for (int j = 0; j < TN / 4; ++j) {
            acc[i][4 * j + 0] = fmaf(ak, b[j].x, acc[i][4 * j + 0]);
            acc[i][4 * j + 1] = fmaf(ak, b[j].y, acc[i][4 * j + 1]);
            acc[i][4 * j + 2] = fmaf(ak, b[j].z, acc[i][4 * j + 2]);
            acc[i][4 * j + 3] = fmaf(ak, b[j].w, acc[i][4 * j + 3]);
        }
    }
}

// The block's main loop: accumulates A[m0:m0+BM, k] @ B[k, n0:n0+BN] over the
// K tiles [t_begin, t_end) into each thread's acc (TM x TN, rows ly + 8i,
// columns 4*lx + 16*(j/4) + j%4 of its warptile). `smem` holds STAGES stages
// of [A tile | B tile]. lda and ldb are the row strides of A and B (K and N,
// or wider for a copy whose rows were padded to 16-byte multiples: only the
// stride changes, nothing past column K of A or N of B is read).
template <bool kCopy4>
__device__ __forceinline__ void multistage_loop(float (&acc)[TM][TN], int M, int N, int K,
                                                const float* __restrict__ A, int lda,
                                                const float* __restrict__ B, int ldb,
                                                int m0, int n0, int t_begin, int t_end, float* smem) {
    const int tid = threadIdx.x;

    // ---- the chunks this thread copies (fixed for the whole loop) ----
    const int a_row = tid / kChunksA, a_chunk = tid % kChunksA;
    const int b_row = tid / kChunksB, b_chunk = tid % kChunksB;
    // Shared offsets (floats) inside a stage; rows a_row + q*kRowStepA share a_row's swizzle.
    const int a_dst = a_row * BK + 4 * (a_chunk ^ a_swizzle(a_row));
    const int b_dst = kStageA + b_row * BN + 4 * b_chunk;
    const unsigned smem_base = smem_addr(smem);
    // Global sources at K tile 0; rows past M are never read (src-size 0).
    const float* a_src = A + (size_t)(m0 + a_row) * lda + 4 * a_chunk;
    const float* b_src = B + (size_t)b_row * ldb + n0 + 4 * b_chunk;
    const bool a_vector = (lda & 3) == 0 && is_aligned16(A);  // block-uniform
    const bool b_vector = (ldb & 3) == 0 && is_aligned16(B);
    const int b_cols_left = N - n0 - 4 * b_chunk;           // floats of this chunk's row inside B
    unsigned a_rows_ok = 0;                                  // bit q: row a_row + q*kRowStepA < M
#pragma unroll
    for (int q = 0; q < kCopiesA; ++q) a_rows_ok |= (m0 + a_row + q * kRowStepA < M ? 1u : 0u) << q;

    // Block-uniform: the block's A rows are all inside A, and A and B are
    // 16-byte aligned, so every K tile inside B's whole rows (all but a
    // partial last one; see whole_tile_rows for a block at N's edge) is
    // copied with plain 16-byte copies and no per-chunk arithmetic.
    const int b_whole_rows = a_vector && m0 + BM <= M ? whole_tile_rows(K, ldb, n0 + BN, b_vector) : 0;
    const int b_rows4 = whole_tile_rows(K, ldb, n0 + BN, true);  // the same for B's 4-byte copies

    auto load_tile = [&](int t, int stage) {
        const int k0 = t * BK;
        if constexpr (kCopy4) {  // a row of A or B is not 16-byte aligned: both copied 4 bytes at a time
            const unsigned stage_base = smem_base + 4 * stage * kStageFloats;
            cp_async_tile4<BM, BK>(stage_base, A + (size_t)m0 * lda + k0, lda, M - m0, K - k0,
                                   m0 + BM <= M && k0 + BK <= K, A,
                                   [](int r, int c) { return r * BK + 4 * ((c / 4) ^ a_swizzle(r)) + c % 4; });
            cp_async_tile4<BK, BN>(stage_base, B + (size_t)k0 * ldb + n0, ldb, K - k0, N - n0, k0 + BK <= b_rows4, B,
                                   [](int r, int c) { return kStageA + r * BN + c; });
            return;
        }
        const unsigned sa = smem_base + 4 * (stage * kStageFloats + a_dst);
        const unsigned sb = smem_base + 4 * (stage * kStageFloats + b_dst);
        const float* ga = a_src + k0;
        const float* gb = b_src + (size_t)k0 * ldb;
        if (k0 + BK <= b_whole_rows) {
#pragma unroll
            for (int q = 0; q < kCopiesA; ++q)
                if (kExactA || a_row + q * kRowStepA < BM)
                    cp_async16_full(sa + 4 * q * kRowStepA * BK, ga + (size_t)q * kRowStepA * lda);
#pragma unroll
            for (int q = 0; q < kCopiesB; ++q)
                if (kExactB || b_row + q * kRowStepB < BK)
                    cp_async16_full(sb + 4 * q * kRowStepB * BN, gb + (size_t)q * kRowStepB * ldb);
            return;
        }
        // Edge blocks, the partial last K tile: per-chunk sizes.
        const int a_k_left = K - k0 - 4 * a_chunk;  // floats of this chunk's k range inside A
#pragma unroll
        for (int q = 0; q < kCopiesA; ++q) {
            if (!kExactA && a_row + q * kRowStepA >= BM) continue;
            cp_async_chunk(sa + 4 * q * kRowStepA * BK, ga + (size_t)q * kRowStepA * lda, A, (a_rows_ok >> q) & 1,
                           a_k_left, a_vector);
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
    const int a_frag_row = (warp / kWarpsN) * kWM + ly;  // + 8*i
    const int b_frag_col = (warp % kWarpsN) * kWN + 4 * lx;  // + 16*j
    const int swz = a_swizzle(ly);  // == a_swizzle(a_frag_row + 8*i): only the low 3 bits count
    int a_frag[kChunksA];  // offset of chunk g of the thread's first A row
#pragma unroll
    for (int g = 0; g < kChunksA; ++g) a_frag[g] = a_frag_row * BK + 4 * (g ^ swz);

    // ---- prologue: STAGES-1 tiles in flight ----
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (t_begin + s < t_end) load_tile(t_begin + s, s);
        cp_async_commit();  // empty groups keep the count uniform
    }
    if (t_begin >= t_end) return;

    // Fragments: a[g & 1] holds 4-slice group g of A (TM float4s), b[k & 1]
    // slice k of B. kChunksA and BK are even, so a tile starts on buffer 0.
    float4 a[2][TM], b[2][TN / 4];
    auto load_a = [&](float4 (&dst)[TM], const float* stage, int g) {
#pragma unroll
        for (int i = 0; i < TM; ++i) dst[i] = *reinterpret_cast<const float4*>(stage + a_frag[g] + 8 * i * BK);
    };
    auto load_b = [&](float4 (&dst)[TN / 4], const float* stage, int k) {
#pragma unroll
        for (int j = 0; j < TN / 4; ++j)
            dst[j] = *reinterpret_cast<const float4*>(stage + kStageA + b_frag_col + k * BN + 16 * j);
    };

    cp_async_wait<STAGES - 2>();  // tile t_begin has landed (this thread's copies) ...
    __syncthreads();              // ... and everyone's
    load_a(a[0], smem, 0);
    load_b(b[0], smem, 0);

    int read_stage = 0, write_stage = STAGES - 1;
    for (int t = t_begin; t < t_end; ++t) {
        const float* stage = smem + read_stage * kStageFloats;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int g = k / 4, kk = k % 4;
            if (k + 1 < BK) {  // register double buffering: next slice's fragments during this one's FMAs
                load_b(b[(k + 1) & 1], stage, k + 1);
                if (kk == 3) load_a(a[(g + 1) & 1], stage, g + 1);
            } else {
                // Before the tile's last slice's FMAs: wait for tile t+1 and
                // refill the stage that tile t-1 used (every warp finished
                // reading it: its last fragments were consumed before this
                // barrier), then read tile t+1's first fragments so their
                // latency hides behind this slice's FMAs.
                cp_async_wait<STAGES - 3>();
                __syncthreads();
                if (t + STAGES - 1 < t_end) load_tile(t + STAGES - 1, write_stage);
                cp_async_commit();
                read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
                write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
                if (t + 1 < t_end) {
                    const float* next = smem + read_stage * kStageFloats;
                    load_a(a[0], next, 0);
                    load_b(b[0], next, 0);
                }
            }
            outer_product(acc, a[g & 1], b[k & 1], kk);
        }
    }
    cp_async_wait<0>();  // no copy may still target shared memory when the block exits
}

// The main loop for the operands' alignment: unaligned rows take the
// instantiation with copy4.cuh's copies, so their offsets do not take
// registers from the loop every aligned call runs.
__device__ __forceinline__ void multistage_mainloop(float (&acc)[TM][TN], int M, int N, int K,
                                                    const float* __restrict__ A, int lda,
                                                    const float* __restrict__ B, int ldb,
                                                    int m0, int n0, int t_begin, int t_end, float* smem) {
    if (!((lda & 3) == 0 && is_aligned16(A) && (ldb & 3) == 0 && is_aligned16(B)))
        multistage_loop<true>(acc, M, N, K, A, lda, B, ldb, m0, n0, t_begin, t_end, smem);
    else
        multistage_loop<false>(acc, M, N, K, A, lda, B, ldb, m0, n0, t_begin, t_end, smem);
}

// Writes a thread's tile (layout of multistage_mainloop) to the M x N matrix
// `out` (row stride ld, block corner m0, n0) as alpha * acc + beta * out.
__device__ __forceinline__ void multistage_store(const float (&acc)[TM][TN], int M, int N, float* out, int ld,
                                                 int m0, int n0, float alpha, float beta) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int r0 = m0 + (warp / kWarpsN) * kWM + lane / 4;
    const int c0 = n0 + (warp % kWarpsN) * kWN + 4 * (lane % 4);
    const bool aligned = (ld & 3) == 0 && is_aligned16(out);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN / 4; ++j) {
            const int r = r0 + 8 * i, c = c0 + 16 * j;
            store_float4(out, ld, r, c, M, N,
                         make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]), alpha,
                         beta, aligned && r < M && c + 4 <= N);
        }
}
