/* gemmbench kernel
 * name:        tiled bf16 (example)
 * summary:     the tiled example on BF16 A, B and C: tiles widened to FP32 in shared memory, FP32 sums, C rounded once
 * params:      BM=64, BN=64, BK=16, TM=4, TN=4
 * search:      BM=32,64,128; BN=32,64,128; BK=8,16,32; TM=2,4,8; TN=2,4,8
 * constraints: BM % TM == 0 and BN % TN == 0
 * constraints: 64 <= (BM / TM) * (BN / TN) <= 1024
 * constraints: 4 * BK * (BM + BN) <= 48 * 1024
 * block:       (BM / TM) * (BN / TN)
 * grid:        ceil_div(N, BN), ceil_div(M, BM)
 * smem:        4 * BK * (BM + BN)
 * precision:   bf16
 * min_cc:      8.0
 */

// An example of your own 16-bit kernel for `gemmbench compare --kernel-file`
// (precision bf16; the same file runs as FP16 with `precision: fp16` and
// BF16=0 among its params).
//
// The 16-bit contract: row-major C = alpha * A @ B + beta * C with A, B and
// C of bfloat16 (or half) values, alpha and beta floats, the products summed
// in FP32 and each element of C rounded once; any M, N, K >= 1; with
// beta == 0 C is written, never read. half.cuh (found in gemmbench's
// cuda_src/ when it is not beside this file) gives the element type elem16
// (the raw 16 bits), to_float, and store16, the epilogue that rounds.
//
// Idea: examples/tiled_sgemm.cu with the tiles of A and B widened to FP32 as
// they are copied into shared memory; the tensor cores rungs 20-25 use are
// left out, so this runs on the FP32 cores.
#include "half.cuh"

#define THREADS ((BM / TM) * (BN / TN))

extern "C" __global__ void __launch_bounds__(THREADS)
sgemm(int M, int N, int K, float alpha, const elem16* __restrict__ A, const elem16* __restrict__ B,
      float beta, elem16* __restrict__ C) {
    extern __shared__ float smem[];
    float* As = smem;            // [BK][BM]: A's tile, transposed, widened
    float* Bs = smem + BK * BM;  // [BK][BN]

    const int tx = threadIdx.x % (BN / TN);
    const int ty = threadIdx.x / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += THREADS) {
            const int r = i / BK, c = i % BK;
            const int gr = row0 + r, gc = k0 + c;
            As[c * BM + r] = (gr < M && gc < K) ? to_float(A[(size_t)gr * K + gc]) : 0.0f;
        }
        for (int i = threadIdx.x; i < BK * BN; i += THREADS) {
            const int r = i / BN, c = i % BN;
            const int gr = k0 + r, gc = col0 + c;
            Bs[i] = (gr < K && gc < N) ? to_float(B[(size_t)gr * N + gc]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[k * BM + ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k * BN + tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();  // the tiles are overwritten next step
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = col0 + tx * TN + j;
            if (r < M && c < N) store16(&C[(size_t)r * N + c], acc[i][j], alpha, beta);
        }
    }
}
