// Shared by every rung. Inlined textually by gemmbench.gpu.compile (not
// pulled in by the preprocessor) so that pycuda's compile cache keys on plain source text and a
// cached module loads without running nvcc.
//
// Contract of every rung (row-major, C = alpha * A @ B + beta * C):
//   extern "C" __global__ void sgemm(int M, int N, int K, float alpha,
//       const float* A, const float* B, float beta, float* C)
//   A is M x K (row stride K), B is K x N (stride N), C is M x N (stride N).
//   Correct for any M, N, K >= 1. With beta == 0, C is never read.
// No #pragma once: the tool inlines this file once per rung, where nvcc would
// warn about "#pragma once in main file".

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

// The epilogue every rung shares. BLAS semantics: beta == 0 means C is
// write-only, so a NaN left in C must not leak into the result.
__device__ __forceinline__ float gemm_epilogue(float acc, float alpha, float beta, const float* c) {
    return beta == 0.0f ? alpha * acc : alpha * acc + beta * (*c);
}

// The same epilogue for four neighbouring elements of one row of C, for the
// rungs that store C with 128-bit accesses. c must be 16-byte aligned; it is
// read (as one float4) only when beta != 0.
__device__ __forceinline__ float4 gemm_epilogue4(float4 acc, float alpha, float beta, const float* c) {
    if (beta == 0.0f) return make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    const float4 old = *reinterpret_cast<const float4*>(c);
    return make_float4(alpha * acc.x + beta * old.x, alpha * acc.y + beta * old.y,
                       alpha * acc.z + beta * old.z, alpha * acc.w + beta * old.w);
}

// The same epilogue for two neighbouring elements of one row of C (64-bit
// stores); c must be 8-byte aligned and is read only when beta != 0.
__device__ __forceinline__ float2 gemm_epilogue2(float2 acc, float alpha, float beta, const float* c) {
    if (beta == 0.0f) return make_float2(alpha * acc.x, alpha * acc.y);
    const float2 old = *reinterpret_cast<const float2*>(c);
    return make_float2(alpha * acc.x + beta * old.x, alpha * acc.y + beta * old.y);
}

// True when every element offset of A (M x K), B (K x N) and C (M x N) fits
// in an int, so index math may stay 32-bit (cheaper in a tight loop).
__device__ __forceinline__ bool offsets_fit_int(int M, int N, int K) {
    const long long most = 2147483647LL;
    return (long long)M * K <= most && (long long)K * N <= most && (long long)M * N <= most;
}

// Grid-stride over a rows x cols matrix in groups of kWidth neighbouring
// elements of a row (a row's last group may run past cols), calling
// group(r, c) with each group's first element: the padding copies
// (copy_rows, copy_rows16), which write each group with one 16-byte store.
// 32-bit index math (a 64-bit division costs several times more) unless the
// padded matrix, rows x pitch, has 2^31 elements or more.
template <int kWidth, class Group>
__device__ __forceinline__ void for_each_row_group(int rows, int cols, int pitch, Group group) {
    const int groups = CEIL_DIV(cols, kWidth);
    const long long n = (long long)rows * groups, stride = (long long)gridDim.x * blockDim.x;
    const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if ((long long)rows * pitch < 0x7fffffffLL) {
        for (unsigned i = (unsigned)first; i < (unsigned)n; i += (unsigned)stride) {
            const unsigned r = i / (unsigned)groups;
            group((size_t)r, kWidth * (int)(i - r * (unsigned)groups));
        }
        return;
    }
    for (long long i = first; i < n; i += stride) group((size_t)(i / groups), kWidth * (int)(i % groups));
}

// Blocks per SM to promise __launch_bounds__ so that ptxas keeps a thread at
// <= 128 registers: for a 256-thread blocktiling kernel that lets two blocks
// (16 warps) share an SM instead of one, and one block's loads and barrier
// then overlap the other's FMAs. Used by rungs 6-8 (rung 5 takes the same cap
// on sm_90 only: with scalar loads and stores it would spill on sm_80).
constexpr int min_blocks_for_128_regs(int threads) { return threads >= 512 ? 1 : 65536 / (128 * threads); }

// ---------------------------------------------------------------------------
// Edge handling of rungs 3-8 (load_guarded, store_guarded: 3-5; load_float4,
// store_float4: 6-8), also taken by later rungs: is_aligned16 by most of
// 6-19, store_float4 by 12, 13 and 19, store_guarded by the mma.sync fallback
// of 14-18. Coordinates are relative to a pointer
// `m` already moved to a tile's corner; `rows` x `cols` is what is left of the
// matrix from that corner (it may exceed the tile), `ld` the row stride.
// ---------------------------------------------------------------------------

__device__ __forceinline__ bool is_aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15) == 0;
}

// One element, or 0 outside the matrix: a zero adds nothing to a dot product,
// so a zero-filled shared tile needs no further checks in the FMA loop.
__device__ __forceinline__ float load_guarded(const float* m, int ld, int r, int c, int rows, int cols) {
    return (r < rows && c < cols) ? m[r * ld + c] : 0.0f;
}

// Elements (r, c..c+3). `vector` is the caller's block-uniform promise that
// all four are inside the matrix and 16-byte aligned: then this is one 128-bit
// load; otherwise four guarded scalar loads.
__device__ __forceinline__ float4 load_float4(const float* m, int ld, int r, int c, int rows, int cols,
                                              bool vector) {
    if (vector) return *reinterpret_cast<const float4*>(&m[r * ld + c]);
    return make_float4(load_guarded(m, ld, r, c, rows, cols), load_guarded(m, ld, r, c + 1, rows, cols),
                       load_guarded(m, ld, r, c + 2, rows, cols), load_guarded(m, ld, r, c + 3, rows, cols));
}

// Writes one result through the epilogue if (r, c) is inside the matrix.
__device__ __forceinline__ void store_guarded(float* m, int ld, int r, int c, int rows, int cols,
                                              float acc, float alpha, float beta) {
    if (r < rows && c < cols) m[r * ld + c] = gemm_epilogue(acc, alpha, beta, &m[r * ld + c]);
}

// Writes results (r, c..c+3): one 128-bit store when `vector` (same promise as
// load_float4), else four guarded scalar stores.
__device__ __forceinline__ void store_float4(float* m, int ld, int r, int c, int rows, int cols,
                                             float4 acc, float alpha, float beta, bool vector) {
    if (vector) {
        float* p = &m[r * ld + c];
        *reinterpret_cast<float4*>(p) = gemm_epilogue4(acc, alpha, beta, p);
        return;
    }
    store_guarded(m, ld, r, c, rows, cols, acc.x, alpha, beta);
    store_guarded(m, ld, r, c + 1, rows, cols, acc.y, alpha, beta);
    store_guarded(m, ld, r, c + 2, rows, cols, acc.z, alpha, beta);
    store_guarded(m, ld, r, c + 3, rows, cols, acc.w, alpha, beta);
}

// ---------------------------------------------------------------------------
// Rungs 9-11: tiles staged global -> registers -> shared memory as float4s,
// and the register-tiled FMA loop. Template parameters are spelled kXxx so
// they cannot collide with the -D tile macros (BM, BN, BK, TM, ...).
// ---------------------------------------------------------------------------

// How kThreads threads split a kRows x kCols tile into float4 pieces: piece
// p = threadIdx.x + i * kThreads is row p / (kCols / 4), columns
// 4 * (p % (kCols / 4)) + 0..3, so neighbouring threads read neighbouring
// 16 bytes of a row (coalesced).
template <int kRows, int kCols, int kThreads>
struct TileSplit {
    static_assert(kCols % 4 == 0, "a tile row must hold whole float4s");
    static_assert((kRows * kCols) % (4 * kThreads) == 0, "each thread must move a whole number of float4s");
    static constexpr int kPerThread = kRows * kCols / (4 * kThreads);
    __device__ static __forceinline__ int row(int i) { return (threadIdx.x + i * kThreads) / (kCols / 4); }
    __device__ static __forceinline__ int col(int i) { return (threadIdx.x + i * kThreads) % (kCols / 4) * 4; }
};

// Global -> registers. `tile` points at the tile's corner, rows x cols is what
// is left of the matrix from there; outside it the pieces are zero-filled.
// `vector` is the block-uniform promise of load_float4 for the whole tile.
template <int kRows, int kCols, int kThreads>
__device__ __forceinline__ void load_tile(float4 (&r)[TileSplit<kRows, kCols, kThreads>::kPerThread],
                                          const float* tile, int ld, int rows, int cols, bool vector) {
    using S = TileSplit<kRows, kCols, kThreads>;
#pragma unroll
    for (int i = 0; i < S::kPerThread; ++i) r[i] = load_float4(tile, ld, S::row(i), S::col(i), rows, cols, vector);
}

// Registers -> shared, same layout (kRows x kCols, row-major).
template <int kRows, int kCols, int kThreads>
__device__ __forceinline__ void store_tile(float* s, const float4 (&r)[TileSplit<kRows, kCols, kThreads>::kPerThread]) {
    using S = TileSplit<kRows, kCols, kThreads>;
#pragma unroll
    for (int i = 0; i < S::kPerThread; ++i) *reinterpret_cast<float4*>(&s[S::row(i) * kCols + S::col(i)]) = r[i];
}

// Registers -> shared, transposed (kCols x kRows): the A tile is stored k-major
// so that a thread's TM values of one k-slice are contiguous (one LDS.128).
template <int kRows, int kCols, int kThreads>
__device__ __forceinline__ void store_tile_transposed(float* s, const float4 (&r)[TileSplit<kRows, kCols, kThreads>::kPerThread]) {
    using S = TileSplit<kRows, kCols, kThreads>;
#pragma unroll
    for (int i = 0; i < S::kPerThread; ++i) {
        const int row = S::row(i), col = S::col(i);
        s[(col + 0) * kRows + row] = r[i].x;
        s[(col + 1) * kRows + row] = r[i].y;
        s[(col + 2) * kRows + row] = r[i].z;
        s[(col + 3) * kRows + row] = r[i].w;
    }
}

// One k-slice of a thread's operand fragment from shared memory: kIter groups
// of kT contiguous floats, kStride floats apart, each read as float4s.
template <int kIter, int kT, int kStride>
__device__ __forceinline__ void load_fragment(float (&f)[kIter * kT], const float* s) {
    static_assert(kT % 4 == 0, "fragments are read as float4s");
#pragma unroll
    for (int it = 0; it < kIter; ++it)
#pragma unroll
        for (int i = 0; i < kT; i += 4) {
            const float4 v = *reinterpret_cast<const float4*>(&s[it * kStride + i]);
            f[it * kT + i + 0] = v.x;
            f[it * kT + i + 1] = v.y;
            f[it * kT + i + 2] = v.z;
            f[it * kT + i + 3] = v.w;
        }
}

// acc += a (column) x b (row): kM * kN FMAs on registers only.
template <int kM, int kN>
__device__ __forceinline__ void outer_product_acc(float (&acc)[kM][kN], const float (&a)[kM], const float (&b)[kN]) {
#pragma unroll
    for (int i = 0; i < kM; ++i)
#pragma unroll
        for (int j = 0; j < kN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

// A thread's register tile is kIterM x kIterN pieces of kTM x kTN results;
// piece (im, in) starts kStrideM * im rows and kStrideN * in columns from the
// thread's corner (a warptile's subtiles; a plain blocktile has kIter = 1).
// This runs one shared-memory tile of depth kBK: `as` is the transposed A tile
// (row stride kLdA) and `bs` the B tile (row stride kLdB), both already moved
// to the thread's corner.
template <int kBK, int kLdA, int kLdB, int kIterM, int kTM, int kStrideM, int kIterN, int kTN, int kStrideN>
__device__ __forceinline__ void thread_tile_mma(float (&acc)[kIterM * kTM][kIterN * kTN], const float* as, const float* bs) {
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
        float a[kIterM * kTM], b[kIterN * kTN];
        load_fragment<kIterM, kTM, kStrideM>(a, as + k * kLdA);
        load_fragment<kIterN, kTN, kStrideN>(b, bs + k * kLdB);
        outer_product_acc(acc, a, b);
    }
}

// Writes a thread's register tile (layout as in thread_tile_mma) through the
// epilogue. `c` is the thread's corner in C, rows x cols what is left of C
// from there; `vector` is store_float4's block-uniform promise.
template <int kIterM, int kTM, int kStrideM, int kIterN, int kTN, int kStrideN>
__device__ __forceinline__ void store_thread_tile(float* c, int ldc, int rows, int cols,
                                                  const float (&acc)[kIterM * kTM][kIterN * kTN],
                                                  float alpha, float beta, bool vector) {
    static_assert(kTN % 4 == 0, "rows of results are written as float4s");
#pragma unroll
    for (int im = 0; im < kIterM; ++im)
#pragma unroll
        for (int i = 0; i < kTM; ++i)
#pragma unroll
            for (int in = 0; in < kIterN; ++in)
#pragma unroll
                for (int j = 0; j < kTN; j += 4) {
                    const float* v = &acc[im * kTM + i][in * kTN + j];
                    store_float4(c, ldc, im * kStrideM + i, in * kStrideN + j, rows, cols,
                                 make_float4(v[0], v[1], v[2], v[3]), alpha, beta, vector);
                }
}
// --------------------------- end of rungs 9-11 -----------------------------
