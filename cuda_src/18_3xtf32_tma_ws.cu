// Rung 18 — 3xTF32 on rung 17's warp-specialized TMA pipeline.
//
// What changed from rung 17: rung 15's FP32-accurate scheme on the faster
// pipeline. A is split once per call by `split_tf32` (driver) into A_big and
// A_small, both loaded by TMA into each ring slot; each thread splits its B
// fragments in registers (big = rna(b), small = rna(b - big)); each k8 step
// issues three wgmmas, the correction terms first (small_B x big_A, big_B x
// small_A), then big x big; small x small is dropped.
// Accuracy: the tensor cores do not round their FP32 accumulation to nearest,
// so (as rung 15) the wgmma accumulator restarts every FLUSH K tiles
// (FLUSH*BK <= 64 terms: 32, or 64 from K = 2048, FLUSH2_MIN_K in
// gemmbench/rungs/gpu.py) and is added into a second register set with FP32
// adds. Every K tile therefore ends with wgmma.wait_group 0, and a flush
// keeps the tensor cores waiting on the adds: 64 terms halve the flushes.
// Why it should help over rung 15: rung 17 keeps the tensor pipe far busier
// than rung 14's loop did; 3xTF32 is three times the tensor work per byte
// loaded, so the 128 x 128 tile the two register sets allow is enough.
// Its speed against cuBLAS SGEMM and rung 15, and its errors against cuBLAS
// SGEMM's (H200): results/notes/2026-11-kernel-measurements.md.
//
// Tile: C tile BM x BN, BM <= 128 (accumulators and partial sums: BM
// registers per thread), BN = 64 per consumer warpgroup; persistent grid,
// producer warpgroup and ring as rung 17 (A_SOURCES = 2 boxes of A per slot).
// Edges and padded operands as rung 16 (the split runs over the padded copy).
//
// Split K (SPLIT_K = 1, a build of its own): where the tiles leave SMs idle
// (skinny and long-K shapes), the persistent grid walks rung 17's units,
// tiles x `splits` K ranges, each writing raw sums to its slice of
// `partials` for reduce_splits (split_k.cuh). The unsplit build (SPLIT_K =
// 0) compiles to the same code as before split K existed: a split loop with
// runtime bounds ran the unsplit case 6-12% slower per clock (README).
//
// A and B swapped (SWAP_AB = 1, a build of its own; swap_ab.cuh): for
// skinny-n shapes, C^T = B^T A^T with A as the register operand, split in
// registers, so A is read once and N is wgmma's flexible side.
//
// Infinities: A and B as the user passed them (row-major, unpadded) come
// last, for the sums that come out NaN, summed again in FP32 before the
// store (nan_recompute.cuh): 3xTF32 alone turns an Inf's row or column of C
// into NaN.
#define A_SOURCES 2
#ifndef SPLIT_K
#define SPLIT_K 0
#endif
#ifndef SWAP_AB
#define SWAP_AB 0
#endif
#include "common.cuh"
#include "ptx.cuh"
#include "tma.cuh"
#include "split_tf32.cuh"
#include "split_k.cuh"
// (both paths: the wgmma one and the mma.sync fallback)
#include "nan_recompute.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "wgmma.cuh"
#include "wgmma_tiles.cuh"
#include "tma_tiles.cuh"
#if SWAP_AB
#include "swap_ab.cuh"
#endif

static_assert(FLUSH >= 1 && FLUSH * BK <= 64, "tensor-core partial sums of at most 64 terms");

extern "C" __global__ void __launch_bounds__(kBlockThreads, 1)
sgemm(const __grid_constant__ TensorMap map_a_big, const __grid_constant__ TensorMap map_a_small,
      const __grid_constant__ TensorMap map_b, int M, int N, int K, float alpha, float beta, float* __restrict__ C,
      float* __restrict__ partials, int splits, const float* __restrict__ A, const float* __restrict__ B) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned smem0 = smem_addr(smem);
    const Maps maps = {{&map_a_big, &map_a_small}, &map_b};
    const TmaRing ring = make_ring(smem, maps, kConsumerThreads / 32);
    __syncthreads();  // the barriers are initialised

    const int tiles = CEIL_DIV(M, BM) * CEIL_DIV(N, BN), k_tiles = CEIL_DIV(K, BK);
    const int tid = threadIdx.x, lane = tid % 32;

    if (tid >= kConsumerThreads) {  // the producer warpgroup
        setmaxnreg_dec<kProducerRegs>();
#if SWAP_AB
        if (tid == kConsumerThreads) produce_swapped<SPLIT_K>(ring, maps, M, N, K, splits);
#else
        if (tid == kConsumerThreads) produce<SPLIT_K>(ring, maps, M, N, K, splits);
#endif
        return;
    }

    setmaxnreg_inc<kConsumerRegs>();
#if SWAP_AB
    const AFragment frag(tid / 128, (tid / 32) % 4, lane);  // A's rows: the register operand
#else
    const BFragment frag(tid / 128, (tid / 32) % 4, lane);
#endif
#if SWAP_AB
    const int real_m = N, real_n = M;  // this build's M x N is C^T's
#else
    const int real_m = M, real_n = N;
#endif
    float acc[kAcc], total[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;  // (overwritten: the first wgmma of a FLUSH block has scale-d 0)
    float raw[BK / 8][4];
    int it = 0;  // K tiles consumed by this block so far

#pragma unroll 1
#if SPLIT_K
    for (int u = blockIdx.x; u < tiles * splits; u += gridDim.x) {
        const WorkUnit w = work_unit(u, tiles, k_tiles, splits, M, N);
        const int m0 = w.m0, n0 = w.n0, k_begin = w.k_begin, k_end = w.k_end;
#else
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int m0, n0;
        tile_origin_of(tile, M, N, m0, n0);
        constexpr int k_begin = 0;
        const int k_end = k_tiles;
#endif
#pragma unroll
        for (int i = 0; i < kAcc; ++i) total[i] = 0.0f;
#if SPLIT_K
        if (k_begin == k_end) {  // an empty split still writes its zeros
            frag.store(total, partials + (size_t)w.split * M * N, M, N, m0, n0, 1.0f, 0.0f);
            continue;
        }
#endif
        mbar_wait(ring.full_bar(it % STAGES), (it / STAGES) & 1);
        frag.read(raw, smem, smem0, ring.b(it % STAGES));
#pragma unroll 1
        for (int kt = k_begin; kt < k_end; ++kt) {
            // Split this K tile's B fragments, issue its 3 * BK/8 wgmmas; while
            // they run, wait for the next K tile and read its fragments; then
            // retire them, release the slot and fold the partial sum in.
            unsigned big[BK / 8][4], small[BK / 8][4];
            split_fragments(raw, big, small);
            const int s = it % STAGES, keep = (kt - k_begin) % FLUSH == 0 ? 0 : 1;
            __syncwarp();
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < BK / 8; ++ks) {
                const unsigned a_big = ring.a(s, 0) + 32 * ks, a_small = ring.a(s, 1) + 32 * ks;
                wgmma_tf32_rs<BM>(acc, small[ks], make_desc<kRowBytes>(a_big), ks == 0 ? keep : 1);
                wgmma_tf32_rs<BM>(acc, big[ks], make_desc<kRowBytes>(a_small), 1);
                wgmma_tf32_rs<BM>(acc, big[ks], make_desc<kRowBytes>(a_big), 1);
            }
            wgmma_commit();
            ++it;
            if (kt + 1 < k_end) {
                mbar_wait(ring.full_bar(it % STAGES), (it / STAGES) & 1);
                frag.read(raw, smem, smem0, ring.b(it % STAGES));
            }
            wgmma_wait<0>();
            __syncwarp();
            if (lane == 0) mbar_arrive(ring.empty_bar(s));
            if ((kt + 1 - k_begin) % FLUSH == 0 || kt + 1 == k_end) {
#pragma unroll
                for (int i = 0; i < kAcc; ++i) total[i] += acc[i];
            }
        }
        auto element = [&](int i, int& m, int& n) { frag.element(i, m0, n0, m, n); };  // in the real C
#if SPLIT_K
        recompute_nan(total, element, A, B, real_m, real_n, K, k_begin * BK, min(k_end * BK, K));
        frag.store(total, partials + (size_t)w.split * M * N, M, N, m0, n0, 1.0f, 0.0f);  // raw sums
#else
        recompute_nan(total, element, A, B, real_m, real_n, K, 0, K);
        frag.store(total, C, M, N, m0, n0, alpha, beta);
#endif
    }
}

#else
// Without sm_90a (sm_80/86/89, later GPUs): rung 15's 3xTF32 mma.sync path.
// Like the wgmma path it sums a NaN sum again in FP32 from A, the user's.
#include "tf32_mma_sync.cuh"

extern "C" __global__ void __launch_bounds__(TC_THREADS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A_big, const float* __restrict__ A_small,
      const float* __restrict__ B, float beta, float* __restrict__ C, const float* __restrict__ A) {
    tf32_mma_sync_gemm<true>(M, N, K, alpha, A_big, A_small, B, beta, C, A);
}
#endif
