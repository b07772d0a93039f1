// Rung 15 — 3xTF32 on wgmma: FP32 accuracy from TF32 tensor cores.
//
// What changed from rung 14: every operand is split into two TF32 numbers,
// x = big + small with big = rna_tf32(x), small = rna_tf32(x - big), which
// together carry ~22 of FP32's 24 significand bits, and each k8 step issues
// three wgmmas, small_B * big_A, big_B * small_A, big_B * big_A (small terms
// first; small * small, ~2^-22 relative, is dropped). Why: three TF32
// products still run faster than FP32 FFMA while the result is as accurate
// as an FP32 GEMM.
// Driver "presplit_a": A is the shared-memory (descriptor) operand of the
// transposed product D = B^T * A^T, so splitting it inside the kernel would
// cost a shared-memory round trip per tile; the small `split_tf32` kernel
// writes A_big and A_small once per call (a small part of the call's time).
// B, the
// register operand, is split by each thread as it reads its fragment.
// Infinities: the split alone turns an Inf's row or column of C into NaN;
// A as the user passed it comes last, and a sum that comes out NaN is
// summed again in FP32 before the store (nan_recompute.cuh).
//
// Accuracy: the tensor cores do not round each addition into the FP32
// accumulator to nearest; summed over K in one accumulator the error grows
// with K, to several times cuBLAS SGEMM's. So the wgmma accumulator
// restarts every FLUSH K tiles (scale-d = 0) and is added into a second
// register set with FP32 FADD: tensor-core partial sums of FLUSH * BK <= 64
// terms, then an ordinary FP32 sum; the error then stays at or below cuBLAS
// SGEMM's at K = 256, 4096 and 16384. The second register set limits the
// tile to BM <= 192.
//
// Layout, pipeline and edges: as rung 14 (C tile computed transposed; A_big
// and A_small tiles side by side in each 1024-byte aligned ring slot, in the
// 128B / 64B swizzled K-major layout read by descriptor; B tile row-major
// with row stride BN + 8 floats, read into register fragments; cp.async ring
// of STAGES slots with zero-fill; per-element guarded stores).
// Expected bottleneck: as rung 14, the latency of the load path. Flushing
// less often (FLUSH = 4) or never (FLUSH = 0, which also allows 256 x 128
// tiles) runs faster, the latter at an error far above cuBLAS SGEMM's at long
// K. The measured speeds and errors (H200):
// results/notes/2026-11-kernel-measurements.md.
// Tile: C tile BM x BN, BM = wgmma N in {64, 128, 192, 256}, BN = 64 per
// warpgroup; K tile BK (32 or 16). Shared memory: STAGES * (2 * BM * BK +
// BK * (BN + 8)) floats + 1 KiB (alignment).
#include "common.cuh"
#include "ptx.cuh"

#include "split_tf32.cuh"
// (both paths: the wgmma one and the mma.sync fallback)
#include "nan_recompute.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "wgmma.cuh"
#include "wgmma_tiles.cuh"

static_assert(FLUSH >= 0, "FLUSH: K tiles per tensor-core partial sum, 0 = one sum over all of K");

extern "C" __global__ void __launch_bounds__(kThreads, 1)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A_big, const float* __restrict__ A_small,
      const float* __restrict__ B, float beta, float* __restrict__ C, const float* __restrict__ A) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // The swizzle pattern repeats every 1024 bytes: align the ring to that.
    const unsigned smem0 = smem_addr(smem);
    const unsigned a_base = (smem0 + 1023u) & ~1023u;
    const unsigned b_base = a_base + 2 * STAGES * kAStage;  // slots: [A_big | A_small] x STAGES, then B
    const float* b_tiles = reinterpret_cast<const float*>(smem + (b_base - smem0));

    int m0, n0;
    tile_origin(M, N, m0, n0);

    const int tid = threadIdx.x;
    const bool a_vec = K % 4 == 0 && is_aligned16(A_big) && is_aligned16(A_small);  // block-uniform
    const bool b_vec = N % 4 == 0 && is_aligned16(B);
    const int k_tiles = CEIL_DIV(K, BK);

    // Global -> shared copies of K tile kt into ring slot `slot`.
    const float* const a_sources[2] = {A_big, A_small};
    auto load_tile = [&](int slot, int kt) {
        copy_a_tiles<2>(a_base + slot * 2 * kAStage, a_sources, M, K, m0, kt * BK, a_vec);
        copy_b_tile(b_base + slot * kBStage, B, K, N, kt * BK, n0, b_vec);
    };

    // This thread's place in the wgmma fragments: warp w of warpgroup wg owns
    // rows 16w..16w+15 of the warpgroup's 64 (= columns of C); lane = 4g + t.
    const int wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int frag_n = wg * 64 + warp * 16 + g;  // column of the B tile

    float acc[kAcc], total[FLUSH > 0 ? kAcc : 1];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < (FLUSH > 0 ? kAcc : 1); ++i) total[i] = 0.0f;

    // Per K tile kt: round the raw B fragments (read while tile kt-1 was in
    // the tensor cores) to TF32, issue tile kt's wgmmas, and while they run:
    // wait for tile kt+1's copies, publish them (proxy fence + barrier), start
    // the copies of tile kt+STAGES-1 into the slot tile kt-1 used (all of its
    // wgmmas retired before the barrier), read tile kt+1's raw fragments; then
    // retire tile kt's wgmmas. The fragment registers the wgmmas read are only
    // written while no wgmma is pending (otherwise ptxas serializes, C7513).
    float raw[BK / 8][4];
    start_ring(load_tile, k_tiles);
    read_b_fragments(raw, b_tiles, 0, frag_n, t);

#pragma unroll 1
    for (int kt = 0; kt < k_tiles; ++kt) {
        unsigned big[BK / 8][4], small[BK / 8][4];
        split_fragments(raw, big, small);
        // With FLUSH, the first wgmma of a FLUSH-tile block overwrites the accumulator.
        const int keep = (FLUSH > 0 && kt % FLUSH == 0) ? 0 : 1;
        wgmma_fence();
        const unsigned as = a_base + (kt % STAGES) * 2 * kAStage;
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) {
            const unsigned a_big = as + 32 * ks, a_small = a_big + kAStage;
            wgmma_tf32_rs<BM>(acc, small[ks], make_desc<kRowBytes>(a_big), ks == 0 ? keep : 1);
            wgmma_tf32_rs<BM>(acc, big[ks], make_desc<kRowBytes>(a_small), 1);
            wgmma_tf32_rs<BM>(acc, big[ks], make_desc<kRowBytes>(a_big), 1);
        }
        wgmma_commit();
        if (kt + 1 < k_tiles) {         // block-uniform
            cp_async_wait<kAhead - 2>();  // this thread's copies of tile kt+1 have landed
            fence_proxy_async();
            __syncthreads();              // everyone's have; every wgmma of tile kt-1 has retired
            if (kt + kAhead < k_tiles) load_tile((kt + kAhead) % STAGES, kt + kAhead);
            cp_async_commit();            // (possibly empty: keeps the group count uniform)
            read_b_fragments(raw, b_tiles, (kt + 1) % STAGES, frag_n, t);
        }
        wgmma_wait<0>();
        if (FLUSH > 0 && ((kt + 1) % FLUSH == 0 || kt + 1 == k_tiles)) {
#pragma unroll
            for (int i = 0; i < kAcc; ++i) total[i] += acc[i];
        }
    }

#if FLUSH > 0
    float(&sums)[kAcc] = total;
#else
    float(&sums)[kAcc] = acc;
#endif
    auto element = [&](int i, int& m, int& n) { transposed_element(i, m0, n0, frag_n, t, m, n); };
    recompute_nan(sums, element, A, B, M, N, K, 0, K);
    store_transposed(sums, C, M, N, m0, n0, frag_n, t, alpha, beta);
}

#else
// Without sm_90a (sm_80/86/89, later GPUs): 3xTF32 on mma.sync tensor cores.
// Like the wgmma path it sums a NaN sum again in FP32 from A, the user's.
#include "tf32_mma_sync.cuh"

extern "C" __global__ void __launch_bounds__(TC_THREADS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A_big, const float* __restrict__ A_small,
      const float* __restrict__ B, float beta, float* __restrict__ C, const float* __restrict__ A) {
    tf32_mma_sync_gemm<true>(M, N, K, alpha, A_big, A_small, B, beta, C, A);
}
#endif
