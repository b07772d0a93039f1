// Rungs 22 (BF16) and 23 (FP16) — wgmma fed by TMA, warp-specialized, persistent.
//
// What changed from rungs 20-21: on Hopper (sm_90a) the tensor cores are
// driven by wgmma, one instruction per warpgroup computing 64 x BN x 16
// with both operands read straight from shared memory (no ldmatrix, no
// fragment registers): A K-major, B row-major through wgmma's transpose-B
// mode. The tiles arrive by TMA (one thread moves a whole K tile, swizzled
// as the descriptors read it) into an mbarrier ring of STAGES slots. The
// block is warp-specialized as rung 17: BM/64 consumer warpgroups that only
// wait and issue wgmmas (232 registers each through setmaxnreg, enough for
// a 64 x 256 FP32 accumulator tile; 152 with three of them) and one producer warpgroup whose single
// working thread issues the TMA loads. The grid is persistent (one block
// per SM walking tiles blockIdx.x, + gridDim.x, ... in GROUP_M-row groups),
// so the producer fills the next tile's slots while the consumers store.
//
// What it removes: rung 20's issue pressure (ldmatrix + mma.sync per 16 x 8
// x 16 piece, address math, cp.async per 16 bytes) and its block-wide
// barrier per K tile; the copy engine and the tensor cores run on their own.
//
// Evidence (the README's 16-bit ladder section has the dated figures): about
// twice rung 20's rate; within 5% of cuBLAS at 8192^3, 78-90% of it at
// 1024^3-4096^3. Its remaining limit looks like L2 bandwidth (48 KiB per
// 64-deep K tile per block; the fraction of the tensor peak falls as the
// clock rises), which rung 24 attacks; no ncu profile yet.
//
// Edges: TMA zero-fills boxes past the matrix; C is stored with guards.
// Rows whose pitch is not a multiple of 8 elements (16 bytes) are first
// copied into padded rows by the driver, inside the timed call.
#include "common.cuh"
#include "ptx.cuh"
#include "half.cuh"
#include "tma.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "wgmma.cuh"
#include "wgmma_half.cuh"
#include "half_tma.cuh"


extern "C" __global__ void __launch_bounds__(kHalfBlock, 1)
sgemm(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, int M, int N, int K,
      float alpha, float beta, elem16* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const HalfRing ring = make_half_ring(smem, map_a, map_b, M);
    __syncthreads();  // the barriers are initialised

    const int tiles = CEIL_DIV(M, BM) * CEIL_DIV(N, BN), k_tiles = CEIL_DIV(K, kHalfBK);
    const int tid = threadIdx.x, lane = tid % 32;

    if (tid >= kHalfConsumers) {  // the producer warpgroup: one thread issues every K tile of every C tile
        half_setmaxnreg_dec<kHalfProducerRegs>();
        if (tid == kHalfConsumers) {
            int it = 0, s = 0;   // K tiles issued; the slot of the next (it % STAGES)
            unsigned phase = 1;  // that slot's phase at its use before ((it / STAGES - 1) & 1)
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                int m0, n0;
                half_tile_origin(tile, M, N, m0, n0);
                for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                    if (it >= STAGES) mbar_wait(ring.empty_bar(s), phase);
                    ring.issue(map_a, map_b, s, m0, n0, kt);
                    half_next_slot(s, phase);
                }
            }
        }
        return;
    }

    half_setmaxnreg_inc<kHalfConsumerRegs>();
    const int wg = tid / 128;
    float acc[kHalfAcc];
    int it = 0;  // K tiles consumed by this block so far

#pragma unroll 1
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int m0, n0;
        half_tile_origin(tile, M, N, m0, n0);
        half_consume(ring, acc, k_tiles, it, wg, [&](int s) {
            if (lane == 0) mbar_arrive(ring.empty_bar(s));
        });
        half_store_rows(C, M, N, m0, n0, wg, acc, alpha, beta);
    }
}

#else
// Without sm_90a (sm_80/86/89, later GPUs): rung 20's mma.sync kernel.
#include "half_fallback.cuh"
#endif
