// Rung 14 — TF32 tensor cores through Hopper's warpgroup MMA (wgmma).
//
// What changed from rung 11: the FFMA loop is gone. Each K tile is BK/8
// asynchronous `wgmma.mma_async` m64nNk8 instructions (TF32 inputs, FP32
// accumulators in registers) per warpgroup of 128 threads; tiles move global
// -> shared with 16-byte `cp.async` (zero-fill at the edges) through a ring
// of STAGES slots, so the copies of the next STAGES-1 tiles overlap the
// tensor-core work on this one. Why: TF32 wgmma on an H200 has ~7x the
// throughput of FP32 FFMA (~495 vs 67 TFLOP/s dense), at 10 mantissa bits.
//
// Layout: TF32 wgmma only reads K-major operands from shared memory (no
// transpose). A (M x K, K contiguous) is K-major, B (K x N, N contiguous) is
// not. So the kernel computes the C tile transposed, D = B^T * A^T:
//   - wgmma's "A" (its M side = 64 columns of C per warpgroup) is the B tile,
//     taken from REGISTERS: each thread reads its 4 values per k8 step from
//     a plain row-major B tile (row stride BN + 8 floats, so the 4 k-rows a
//     warp reads at once sit 8 banks apart: no conflicts) and rounds them to
//     TF32 (cvt.rna);
//   - wgmma's "B" (its N side = BM rows of C) is the A tile, K-major as
//     stored, read through a shared-memory descriptor in the 128-byte
//     (BK = 32) or 64-byte (BK = 16) swizzled layout that cp.async writes
//     (16-byte chunk index XOR address bits 7..9 resp. 7..8; 1024-byte
//     aligned slots). The tensor cores truncate these to TF32.
//   - the accumulator D(n, m) goes to C[m][n]: each warp store covers 4 rows
//     x 32 contiguous bytes, whole 32-byte sectors.
// A transposing copy of B into a K-major tile would add a shared-memory
// round trip per tile; the register operand needs none.
//
// Pipeline, per K tile kt: round tile kt's raw B fragments (read during tile
// kt-1) to TF32 into one of two fragment sets, wgmma.fence, issue the
// wgmmas, commit, wgmma.wait_group 1 (tile kt-1's group retires, tile kt's
// stays queued in the tensor cores); then wait for tile kt+1's copies,
// fence.proxy.async (cp.async writes are generic-proxy, wgmma reads through
// the async proxy), barrier, start the copies of tile kt+STAGES-1 into the
// slot tile kt-1 used (its wgmmas retired in every thread before the
// barrier), read tile kt+1's raw fragments. The fragment sets alternate by
// tile parity in a loop over tile pairs, so ptxas sees that no instruction
// writes the registers of a pending wgmma and keeps the wgmmas asynchronous
// (no C7513).
//
// Expected bottleneck: the load path, not wgmma issue gaps. Timed apart, the
// wgmma loop without the loads runs much faster than the whole kernel and the
// loads alone take most of its time; ncu shows L2, issue and the tensor pipe
// all far from busy (latency, not a saturated unit), and wait_group 1 instead
// of 0 gained only a few percent. Tried and slower: a producer warpgroup
// (cp.async + mbarriers, setmaxnreg); B fragments straight from global memory
// into registers (6-7 A-only stages); 256 x 192 tiles (3 warpgroups); BK = 16
// with 8 stages; two CTAs per SM (128 x 128 x 16, 6 stages, <= 128
// registers); the B tile by cp.async.bulk row copies completing on mbarriers;
// 2-CTA clusters sharing the B tile through distributed shared memory (half
// the B bytes per CTA, cluster barrier per tile, B fragments via
// ld.shared::cluster). Throughput falls with tile area, i.e. with the L2 -> SM
// bytes per FLOP. cuBLAS presumably closes the gap with TMA (tensor maps,
// multicast in clusters): rung 16 takes that step. The measured figures
// (H200): results/notes/2026-11-kernel-measurements.md.
//
// Tile: C tile BM x BN, BM = wgmma N in {64, 128, 192, 256}; BN = 64 per
// warpgroup (BN / 64 warpgroups; all issue copies and wgmmas); K tile BK.
// BM / 2 accumulators per thread. Grid: one CTA per C tile, 1-D, rasterized
// in groups of GROUP_M tile rows so that CTAs running together share tiles
// in L2. Shared memory: STAGES * (BM * BK + BK * (BN + 8)) floats + 1 KiB
// (alignment).
// Edges: A and B tiles are zero-filled outside the matrices (cp.async
// src-size 0). 16-byte copies when K % 4 == 0 and A is 16-byte aligned
// (resp. N % 4 == 0 and B), else 4-byte copies per element; the store is
// guarded per element and reads C only when beta != 0 (gemm_epilogue).
#include "common.cuh"
#include "ptx.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "wgmma.cuh"
#include "wgmma_tiles.cuh"


extern "C" __global__ void __launch_bounds__(kThreads, 1)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // The swizzle pattern repeats every 1024 bytes: align the ring to that.
    const unsigned smem0 = smem_addr(smem);
    const unsigned a_base = (smem0 + 1023u) & ~1023u;
    const unsigned b_base = a_base + STAGES * kAStage;
    const float* b_tiles = reinterpret_cast<const float*>(smem + (b_base - smem0));

    int m0, n0;
    tile_origin(M, N, m0, n0);

    const int tid = threadIdx.x;
    const bool a_vec = K % 4 == 0 && is_aligned16(A);  // block-uniform
    const bool b_vec = N % 4 == 0 && is_aligned16(B);
    const int k_tiles = CEIL_DIV(K, BK);

    // Global -> shared copies of K tile kt into ring slot `slot`.
    const float* const a_sources[1] = {A};
    auto load_tile = [&](int slot, int kt) {
        copy_a_tiles<1>(a_base + slot * kAStage, a_sources, M, K, m0, kt * BK, a_vec);
        copy_b_tile(b_base + slot * kBStage, B, K, N, kt * BK, n0, b_vec);
    };

    // This thread's place in the wgmma fragments: warp w of warpgroup wg owns
    // rows 16w..16w+15 of the warpgroup's 64 (= columns of C); lane = 4g + t.
    const int wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int frag_n = wg * 64 + warp * 16 + g;  // column of the B tile

    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;

    // Per K tile kt: round the raw B fragments (read while tile kt-1 was in
    // the tensor cores) to TF32, issue tile kt's wgmmas, retire tile kt-1's,
    // and while tile kt's run: wait for tile kt+1's copies, publish them
    // (proxy fence + barrier), start the copies of tile kt+STAGES-1 into the
    // slot tile kt-1 used (all of its wgmmas retired before the barrier), read
    // tile kt+1's raw fragments.
    float raw[BK / 8][4];
    start_ring(load_tile, k_tiles);
    read_b_fragments(raw, b_tiles, 0, frag_n, t);

    // One wgmma group stays in flight: tile kt's wgmmas are issued before
    // tile kt-1's retire (wait_group 1), so the tensor cores are never left
    // without queued work at a tile boundary. The two fragment sets f0 / f1
    // alternate: the loop runs over PAIRS of tiles (registers named
    // statically) and an odd last tile is handled after it, unconditionally
    // with f0. (A pair loop whose second step sits under `if (kt + 1 <
    // k_tiles)` made ptxas serialize the wgmmas, C7513 "non wgmma
    // instructions defining input registers of a wgmma between start and end
    // of the pipeline stage": on the path that skips the second step the group
    // still pending at the loop head reads f0, which the next step rewrites.)
    auto step = [&](int kt, unsigned (&f)[BK / 8][4]) {
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks)
#pragma unroll
            for (int j = 0; j < 4; ++j) f[ks][j] = to_tf32(raw[ks][j]);
        wgmma_fence();
        const unsigned as = a_base + (kt % STAGES) * kAStage;
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) wgmma_tf32_rs<BM>(acc, f[ks], make_desc<kRowBytes>(as + 32 * ks), 1);
        wgmma_commit();
        wgmma_wait<1>();                  // tile kt-1's wgmmas have retired (this thread)
        if (kt + 1 < k_tiles) {         // block-uniform
            cp_async_wait<kAhead - 2>();  // this thread's copies of tile kt+1 have landed
            fence_proxy_async();
            __syncthreads();              // everyone's have; every wgmma of tile kt-1 has retired
            if (kt + kAhead < k_tiles) load_tile((kt + kAhead) % STAGES, kt + kAhead);
            cp_async_commit();            // (possibly empty: keeps the group count uniform)
            read_b_fragments(raw, b_tiles, (kt + 1) % STAGES, frag_n, t);
        }
    };
    unsigned f0[BK / 8][4], f1[BK / 8][4];
    int kt = 0;
#pragma unroll 1
    for (; kt + 1 < k_tiles; kt += 2) {
        step(kt, f0);
        step(kt + 1, f1);
    }
    if (kt < k_tiles) step(kt, f0);
    wgmma_wait<0>();

    store_transposed(acc, C, M, N, m0, n0, frag_n, t, alpha, beta);
}

#else
// Without sm_90a (sm_80/86/89, later GPUs): TF32 on mma.sync tensor cores.
#include "tf32_mma_sync.cuh"

extern "C" __global__ void __launch_bounds__(TC_THREADS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    tf32_mma_sync_gemm<false>(M, N, K, alpha, A, nullptr, B, beta, C);
}
#endif
