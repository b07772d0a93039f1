// Rung 20's kernel (mma.sync, any GPU from sm_80), which the wgmma rungs
// 22-27 compile instead on GPUs without sm_90a, with their record's
// fallback parameters and launch geometry. After common.cuh, ptx.cuh, half.cuh.
#include "half_mma_sync.cuh"

extern "C" __global__ void __launch_bounds__(kHmThreads)
sgemm(int M, int N, int K, float alpha, const elem16* __restrict__ A, const elem16* __restrict__ B, float beta,
      elem16* __restrict__ C) {
    half_mma_sync_gemm(M, N, K, alpha, A, B, beta, C);
}
