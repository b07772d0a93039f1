// Tensor-core SGEMM with mma.sync (sm_80 and later): the path that rungs 14-18
// (TF32: 14, 16, 17; 3xTF32: 15, 18) take where wgmma is missing (sm_80/86/89,
// and plain sm_90 builds). Pasted textually after common.cuh; its PTX wrappers come from ptx.cuh.
//
//   template <bool kThreeTf32>
//   __device__ void tf32_mma_sync_gemm(M, N, K, alpha, A_big, A_small, B, beta, C[, A])
//
// kThreeTf32 == false: A_big is the plain fp32 A (A_small unused, may be NULL);
//   fragments of A and B are rounded to TF32 (cvt.rna) and multiplied once.
// kThreeTf32 == true: A_big / A_small are the TF32 halves of A split ahead of
//   the kernel (big = rna(a), small = rna(a - big)); B is split the same way
//   in registers, and each product is big*small + small*big + big*big (the
//   small*small term, ~2^-22 relative, is dropped). The tensor core truncates
//   when it adds into its accumulator, so with TC_FLUSH (default) each K tile
//   is summed from zero in the MMA and then added into an fp32 total with a
//   round-to-nearest FADD: that keeps the error at SGEMM level for long K.
//   A is the user's A: a sum that comes out NaN is summed again from it in
//   FP32 (nan_recompute.cuh), so an Inf gives an Inf back as SGEMM does.
//
// Tiling: a block of TC_THREADS = (TC_BM/TC_WM)*(TC_BN/TC_WN)*32 threads
// (1-D) computes a TC_BM x TC_BN tile of C, one TC_WM x TC_WN warptile per
// warp, in m16n8k8 pieces; K advances TC_BK at a time through a TC_STAGES-deep
// cp.async ring in static shared memory. Grid: (ceil(N/TC_BN), ceil(M/TC_BM));
// the blocks are renumbered in column strips TC_GROUP tiles tall so that
// blocks running together share panels of A and B in L2.
//
// Fragment layout, chosen so that every shared-memory read is an LDS.128 and
// conflict-free. The order of k inside an m16n8k8 step is free as long as A
// and B agree, and so is the order of the n columns as long as the epilogue
// follows it:
//  * k: in each group of 16 k (two MMA steps), lane t (= lane % 4) holds
//    k = 4t..4t+3: step 0 takes 4t (slot t) and 4t+1 (slot t+4), step 1 takes
//    4t+2 and 4t+3. So one LDS.128 of a row of A gives a lane both steps.
//  * n: column g (= lane / 4) of the warp's n8 block j is the real column
//    g*NJ + j (NJ = TC_WN/8), so a lane's B values of one k are NJ contiguous
//    floats (LDS.128s), and its results are 2*NJ contiguous floats of a row.
//  Shared tiles are kept as global memory has them (A: TC_BM x TC_BK, B:
//  TC_BK x TC_BN, row-major) with their 16-byte chunks XOR-swizzled within
//  groups of 8 so that each quarter-warp of an LDS.128 touches 8 distinct bank
//  groups (see a_swizzle / b_swizzle).
// Edges: every 16-byte chunk is copied with cp.async's src-size = the bytes
// left in the matrix (zero-filled beyond); when rows are not 16-byte aligned
// (K or N not a multiple of 4, or an unaligned pointer) each float is copied
// on its own, 4 bytes with zero fill. C is written through gemm_epilogue(4).

#include "ptx.cuh"

// Defined in nan_recompute.cuh, which the 3xTF32 rungs (15, 18) include before
// this file; only declared here, where the TF32 rungs (14, 16, 17) never
// instantiate it. So its body is not in their text, and rung 17's choice
// table (which holds that text's digest) outlives changes to it.
template <int kSums, class Element>
__device__ void recompute_nan(float (&sums)[kSums], Element element, const float* A, const float* B, int M, int N,
                              int K, int k0, int k1);

#ifndef TC_BM
#define TC_BM 128
#endif
#ifndef TC_BN
#define TC_BN 128
#endif
#ifndef TC_BK
#define TC_BK 16
#endif
#ifndef TC_WM
#define TC_WM 64
#endif
#ifndef TC_WN
#define TC_WN 64
#endif
#ifndef TC_STAGES
#define TC_STAGES 3
#endif
#ifndef TC_GROUP
#define TC_GROUP 8
#endif
#ifndef TC_FLUSH
#define TC_FLUSH 1
#endif
#ifndef TC_THREADS
#define TC_THREADS ((TC_BM / TC_WM) * (TC_BN / TC_WN) * 32)
#endif

namespace tc_mma {

constexpr int kBM = TC_BM, kBN = TC_BN, kBK = TC_BK, kWM = TC_WM, kWN = TC_WN;
constexpr int kStages = TC_STAGES;
constexpr int kThreads = (kBM / kWM) * (kBN / kWN) * 32;
constexpr int kWarpsN = kBN / kWN;
constexpr int kMI = kWM / 16;  // m16 pieces down a warptile
constexpr int kNJ = kWN / 8;   // n8 pieces across a warptile
constexpr int kBQ = kNJ / 4;   // float4s of B per lane and k

static_assert(TC_THREADS == kThreads, "TC_THREADS must equal (TC_BM/TC_WM)*(TC_BN/TC_WN)*32");
static_assert(kBM % kWM == 0 && kBN % kWN == 0, "warptiles must tile the block tile");
static_assert(kWM % 16 == 0, "TC_WM must be a multiple of 16");
static_assert(kWN == 32 || kWN == 64, "TC_WN must be 32 or 64 (4 or 8 n8 pieces: the B swizzle)");
static_assert(kBK % 16 == 0, "TC_BK must be a multiple of 16 (k groups of two MMA steps)");
static_assert(kBN % 32 == 0, "TC_BN must be a multiple of 32 (B rows span whole bank rows)");
static_assert(kStages >= 2, "TC_STAGES must be at least 2");
static_assert((kBM * kBK / 4) % kThreads == 0 && (kBK * kBN / 4) % kThreads == 0,
              "each thread must copy a whole number of 16-byte chunks of the A and B tiles");
static_assert(TC_GROUP >= 1, "TC_GROUP must be at least 1");

// Position of 16-byte chunk `c` of row `r` of the A tile: rows are kBK floats,
// and lanes g, g+1 (rows r, r+1) read the same chunk numbers 4*kg + t. For
// kBK == 16 the two rows already fill 8 bank groups; for wider rows the odd
// row's chunks move by 4.
__device__ __forceinline__ int a_swizzle(int r) { return kBK >= 32 ? (r & 1) << 2 : 0; }

// Chunk XOR of row k of the B tile. A quarter-warp reading B holds lanes
// g = 2p, 2p+1 and t = 0..3 (rows 4t + i): its chunks differ in the bit of
// value kBQ (from g) and t must spread over the other two of bits 1, 2, 4.
__device__ __forceinline__ int b_swizzle(int k) {
    const int t = (k >> 2) & 3;
    return kBQ == 1 ? t << 1 : (t & 1) | ((t & 2) << 1);
}

// d += a * b (16x8x8, TF32 in, fp32 accumulate).
__device__ __forceinline__ void mma_acc(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// d = a * b (accumulator input zero).
__device__ __forceinline__ void mma_zero(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%10,%10,%10};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.0f));
}

struct ASwizzle {
    __device__ __forceinline__ int operator()(int r) const { return a_swizzle(r); }
};
struct BSwizzle {
    __device__ __forceinline__ int operator()(int k) const { return b_swizzle(k); }
};

// Issues the cp.asyncs of one kRows x (4*kChunks) tile. `g` is the tile's
// corner in global memory (it may lie past the matrix; nothing outside is
// read), `ld` the row stride, rows_left x cols_left what is left of the
// matrix from the corner (may be <= 0). `base` is any valid address of the
// matrix, given to zero-byte copies. `vec` (block-uniform): rows are 16-byte
// aligned, so a chunk is one 16-byte copy; else four 4-byte copies.
template <int kRows, int kChunks, typename Swizzle>
__device__ __forceinline__ void load_tile_async(float* s, const float* g, const float* base, int ld, int rows_left,
                                                int cols_left, bool vec, Swizzle swz) {
    constexpr int kPerThread = kRows * kChunks / kThreads;
    if (vec && rows_left >= kRows && cols_left >= 4 * kChunks) {  // whole tile inside: plain 16-byte copies
#pragma unroll
        for (int i = 0; i < kPerThread; ++i) {
            const int idx = threadIdx.x + i * kThreads;
            const int r = idx / kChunks, c = idx % kChunks;
            cp_async16(smem_addr(s + r * (4 * kChunks) + ((c ^ swz(r)) << 2)), g + (long long)r * ld + 4 * c, 16);
        }
    } else if (vec) {
#pragma unroll
        for (int i = 0; i < kPerThread; ++i) {
            const int idx = threadIdx.x + i * kThreads;
            const int r = idx / kChunks, c = idx % kChunks;
            const int left = cols_left - 4 * c;
            const int valid = r < rows_left ? (left < 0 ? 0 : (left > 4 ? 4 : left)) : 0;
            cp_async16(smem_addr(s + r * (4 * kChunks) + ((c ^ swz(r)) << 2)),
                       valid > 0 ? g + (long long)r * ld + 4 * c : base, 4 * valid);
        }
    } else {
#pragma unroll
        for (int i = 0; i < kPerThread; ++i) {
            const int idx = threadIdx.x + i * kThreads;
            const int r = idx / kChunks, c = idx % kChunks;
            const int left = cols_left - 4 * c;
            const int valid = r < rows_left ? (left < 0 ? 0 : (left > 4 ? 4 : left)) : 0;
            const unsigned dst = smem_addr(s + r * (4 * kChunks) + ((c ^ swz(r)) << 2));
            const float* src = g + (long long)r * ld + 4 * c;
#pragma unroll
            for (int e = 0; e < 4; ++e) cp_async4(dst + 4 * e, e < valid ? src + e : base, e < valid ? 4 : 0);
        }
    }
}

// Block (bm, bn) of this launch: blockIdx renumbered in strips of TC_GROUP
// block rows, walked column by column, so the blocks resident at one time
// cover a compact patch of C (and reuse each other's A and B panels in L2).
__device__ __forceinline__ void tile_coords(int& bm, int& bn) {
    const int per_group = TC_GROUP * gridDim.x;
    const int id = blockIdx.y * gridDim.x + blockIdx.x;
    const int first = id / per_group * TC_GROUP;
    const int height = min(TC_GROUP, (int)gridDim.y - first);
    const int in = id - id / per_group * per_group;
    bm = first + in % height;
    bn = in / height;
}

}  // namespace tc_mma

template <bool kThreeTf32>
__device__ __forceinline__ void tf32_mma_sync_gemm(int M, int N, int K, float alpha, const float* A_big,
                                                   const float* A_small, const float* B, float beta, float* C,
                                                   const float* A = nullptr) {
    using namespace tc_mma;
    constexpr int kATiles = kThreeTf32 ? 2 : 1;
    constexpr int kAFloats = kBM * kBK, kBFloats = kBK * kBN;
    constexpr int kStageFloats = kATiles * kAFloats + kBFloats;
    constexpr bool kFlush = kThreeTf32 && TC_FLUSH != 0;
    static_assert(kStages * kStageFloats * 4 <= 48 * 1024, "static shared memory is limited to 48 KiB");
    __shared__ __align__(128) float smem[kStages * kStageFloats];

    int bm, bn;
    tile_coords(bm, bn);
    const int m0 = bm * kBM, n0 = bn * kBN;
    const int rows = M - m0, cols = N - n0;  // what is left of C from the block's corner

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const int wm = warp / kWarpsN * kWM, wn = warp % kWarpsN * kWN;

    // Block-uniform: 16-byte copies need every row start 16-byte aligned.
    const bool a_vec = (K & 3) == 0 && is_aligned16(A_big) && (!kThreeTf32 || is_aligned16(A_small));
    const bool b_vec = (N & 3) == 0 && is_aligned16(B);
    const float* a_tile = A_big + (size_t)m0 * K;
    const float* as_tile = kThreeTf32 ? A_small + (size_t)m0 * K : A_big;
    const float* b_tile = B + n0;

    auto load_stage = [&](int stage, int kt) {
        const int k0 = kt * kBK;
        float* s = smem + stage * kStageFloats;
        load_tile_async<kBM, kBK / 4>(s, a_tile + k0, A_big, K, rows, K - k0, a_vec, ASwizzle());
        if (kThreeTf32)
            load_tile_async<kBM, kBK / 4>(s + kAFloats, as_tile + k0, A_small, K, rows, K - k0, a_vec, ASwizzle());
        load_tile_async<kBK, kBN / 4>(s + kATiles * kAFloats, b_tile + (size_t)k0 * N, B, N, K - k0, cols, b_vec,
                                      BSwizzle());
    };

    // Per-lane offsets into a stage (floats), fixed for the whole kernel.
    // A: row wm + 16*mi + 8*h + g, chunk (4*kg + t) ^ a_swizzle(row), and
    // a_swizzle(row) depends on g & 1 only. B: row 16*kg + 4*t + i, chunk
    // wn/4 + g*kBQ + q, XORed with b_swizzle (a function of t only).
    const int a_off = (wm + g) * kBK;
    const int a_swz = a_swizzle(g);
    const int b_swz = b_swizzle(4 * t);
    const int b_off = kATiles * kAFloats + 4 * t * kBN;

    float acc[kMI][kNJ][4];
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int j = 0; j < kNJ; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mi][j][e] = 0.0f;

    const int tiles = CEIL_DIV(K, kBK);
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < tiles) load_stage(s, s);
        cp_async_commit();
    }

    int stage = 0, next_stage = kStages - 1;
    for (int kt = 0; kt < tiles; ++kt) {
        // Tile kt has landed (groups complete in order) and every warp is done
        // with tile kt-1, whose stage is the one refilled below.
        cp_async_wait<kStages - 2>();
        __syncthreads();
        if (kt + kStages - 1 < tiles) load_stage(next_stage, kt + kStages - 1);
        cp_async_commit();  // possibly empty: keeps one group per iteration
        next_stage = next_stage + 1 == kStages ? 0 : next_stage + 1;

        const float* s = smem + stage * kStageFloats;
        stage = stage + 1 == kStages ? 0 : stage + 1;

        // Where this tile's products go: a fresh sum added to acc after the
        // tile (3xTF32 with TC_FLUSH), else acc itself.
        float tacc[kMI][kNJ][4];
        float(&sum)[kMI][kNJ][4] = kFlush ? tacc : acc;

#pragma unroll
        for (int kg = 0; kg < kBK / 16; ++kg) {
            // A: float4 of row (g [+8]) of piece mi = k 16kg + 4t .. +3.
            float4 af[kMI][2], asf[kThreeTf32 ? kMI : 1][2];
#pragma unroll
            for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int o = a_off + (16 * mi + 8 * h) * kBK + (((4 * kg + t) ^ a_swz) << 2);
                    af[mi][h] = *reinterpret_cast<const float4*>(s + o);
                    if (kThreeTf32) asf[mi][h] = *reinterpret_cast<const float4*>(s + kAFloats + o);
                }
            // B: bf[i][j] = B(k = 16kg + 4t + i, real column wn + g*kNJ + j).
            float bf[4][kNJ];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int q = 0; q < kBQ; ++q) {
                    const int chunk = ((wn >> 2) + g * kBQ + q) ^ b_swz;
                    const float4 v =
                        *reinterpret_cast<const float4*>(s + b_off + (16 * kg + i) * kBN + (chunk << 2));
                    bf[i][4 * q + 0] = v.x;
                    bf[i][4 * q + 1] = v.y;
                    bf[i][4 * q + 2] = v.z;
                    bf[i][4 * q + 3] = v.w;
                }

#pragma unroll
            for (int ks = 0; ks < 2; ++ks) {
                // Step ks: slot t is k = 4t + 2ks, slot t+4 is 4t + 2ks + 1.
                auto pick = [&](const float4& v, int e) { return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w; };
                if constexpr (!kThreeTf32) {
                    unsigned a[kMI][4], b[kNJ][2];
#pragma unroll
                    for (int mi = 0; mi < kMI; ++mi) {
                        a[mi][0] = to_tf32(pick(af[mi][0], 2 * ks));
                        a[mi][1] = to_tf32(pick(af[mi][1], 2 * ks));
                        a[mi][2] = to_tf32(pick(af[mi][0], 2 * ks + 1));
                        a[mi][3] = to_tf32(pick(af[mi][1], 2 * ks + 1));
                    }
#pragma unroll
                    for (int j = 0; j < kNJ; ++j) {
                        b[j][0] = to_tf32(bf[2 * ks][j]);
                        b[j][1] = to_tf32(bf[2 * ks + 1][j]);
                    }
#pragma unroll
                    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
                        for (int j = 0; j < kNJ; ++j) mma_acc(acc[mi][j], a[mi], b[j]);
                } else {
                    unsigned ab[kMI][4], as[kMI][4], bb[kNJ][2], bs[kNJ][2];
#pragma unroll
                    for (int mi = 0; mi < kMI; ++mi) {
                        ab[mi][0] = __float_as_uint(pick(af[mi][0], 2 * ks));
                        ab[mi][1] = __float_as_uint(pick(af[mi][1], 2 * ks));
                        ab[mi][2] = __float_as_uint(pick(af[mi][0], 2 * ks + 1));
                        ab[mi][3] = __float_as_uint(pick(af[mi][1], 2 * ks + 1));
                        as[mi][0] = __float_as_uint(pick(asf[mi][0], 2 * ks));
                        as[mi][1] = __float_as_uint(pick(asf[mi][1], 2 * ks));
                        as[mi][2] = __float_as_uint(pick(asf[mi][0], 2 * ks + 1));
                        as[mi][3] = __float_as_uint(pick(asf[mi][1], 2 * ks + 1));
                    }
#pragma unroll
                    for (int j = 0; j < kNJ; ++j)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const float x = bf[2 * ks + e][j];
                            bb[j][e] = to_tf32(x);
                            bs[j][e] = to_tf32(x - __uint_as_float(bb[j][e]));
                        }
                    // Small terms first, the big one last; the first MMA of a
                    // flushed tile starts from zero.
#pragma unroll
                    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
                        for (int j = 0; j < kNJ; ++j) {
                            if (kFlush && kg == 0 && ks == 0)
                                mma_zero(sum[mi][j], as[mi], bb[j]);
                            else
                                mma_acc(sum[mi][j], as[mi], bb[j]);
                        }
#pragma unroll
                    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
                        for (int j = 0; j < kNJ; ++j) mma_acc(sum[mi][j], ab[mi], bs[j]);
#pragma unroll
                    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
                        for (int j = 0; j < kNJ; ++j) mma_acc(sum[mi][j], ab[mi], bb[j]);
                }
            }
        }
        if constexpr (kFlush) {
#pragma unroll
            for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
                for (int j = 0; j < kNJ; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[mi][j][e] += tacc[mi][j][e];
        }
    }

    // Where sum i = (mi, j, e) of acc[mi][j][e] belongs in C: MMA piece (mi,
    // j) holds rows g and g + 8 at MMA columns 2t and 2t + 1, i.e. real
    // columns (2t + e % 2) kNJ + j of the warp's tile. So per row the lane has
    // 2 kNJ contiguous results, from element (mi, 0, 2h) on.
    auto element = [&](int i, int& m, int& n) {
        const int mi = i / (4 * kNJ), j = i / 4 % kNJ, e = i % 4;
        m = m0 + wm + 16 * mi + 8 * (e >> 1) + g;
        n = n0 + wn + (2 * t + (e & 1)) * kNJ + j;
    };
    if constexpr (kThreeTf32) {
        // An Inf through the three products may come out NaN: such a sum is
        // summed again in FP32 from A as the user passed it (and B).
        recompute_nan(reinterpret_cast<float(&)[kMI * kNJ * 4]>(acc), element, A, B, M, N, K, 0, K);
    }

    // Epilogue: each lane's rows, one contiguous run of 2 kNJ columns each.
    const bool c_vec = (N & 3) == 0 && is_aligned16(C) && rows >= kBM && cols >= kBN;
    float* c_tile = C + (size_t)m0 * N + n0;
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            int m, n;
            element(4 * kNJ * mi + 2 * h, m, n);
            const int r = m - m0, c0 = n - n0;  // in the tile
            float v[2 * kNJ];
#pragma unroll
            for (int j = 0; j < kNJ; ++j) {
                v[j] = acc[mi][j][2 * h];
                v[kNJ + j] = acc[mi][j][2 * h + 1];
            }
            if (c_vec) {
                float* p = c_tile + (size_t)r * N + c0;
#pragma unroll
                for (int q = 0; q < kNJ / 2; ++q)
                    *reinterpret_cast<float4*>(p + 4 * q) =
                        gemm_epilogue4(make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]), alpha, beta,
                                       p + 4 * q);
            } else if (r < rows) {
                float* p = c_tile + (size_t)r * N;
#pragma unroll
                for (int e = 0; e < 2 * kNJ; ++e) store_guarded(p, N, 0, c0 + e, 1, cols, v[e], alpha, beta);
            }
        }
}
