/* gemmbench kernel
 * name:        tiled (example)
 * summary:     BM x BN tile of C per block from shared-memory tiles of A and B; TM x TN results per thread
 * params:      BM=64, BN=64, BK=16, TM=4, TN=4
 * search:      BM=32,64,128; BN=32,64,128; BK=8,16,32; TM=2,4,8; TN=2,4,8
 * constraints: BM % TM == 0 and BN % TN == 0
 * constraints: 64 <= (BM / TM) * (BN / TN) <= 1024
 * constraints: 4 * BK * (BM + BN) <= 48 * 1024
 * block:       (BM / TM) * (BN / TN)
 * grid:        ceil_div(N, BN), ceil_div(M, BM)
 * smem:        4 * BK * (BM + BN)
 * precision:   fp32
 * min_cc:      7.0
 */

// An example of your own kernel for `gemmbench compare --kernel-file`.
//
// The contract every ladder rung keeps: row-major C = alpha * A @ B + beta * C,
// A is M x K, B is K x N, C is M x N; any M, N, K >= 1; with beta == 0 C is
// written, never read. The parameters above arrive as -DBM=64 ... and the
// launch geometry comes from the header's block, grid and smem fields.
//
// Idea: a block computes a BM x BN tile of C. It walks K in BK-deep steps; at
// each step its threads copy a BM x BK tile of A (stored transposed, so a
// thread's TM values of one k are adjacent) and a BK x BN tile of B into
// dynamic shared memory, then each thread accumulates a TM x TN sub-tile in
// registers, reusing each A value TN times and each B value TM times.
// Edges: tile loads outside A or B write zeros, stores are guarded.

#define THREADS ((BM / TM) * (BN / TN))

extern "C" __global__ void __launch_bounds__(THREADS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
      float beta, float* __restrict__ C) {
    extern __shared__ float smem[];
    float* As = smem;            // [BK][BM]: A's tile, transposed
    float* Bs = smem + BK * BM;  // [BK][BN]

    const int tx = threadIdx.x % (BN / TN);  // which TN-wide strip of columns
    const int ty = threadIdx.x / (BN / TN);  // which TM-tall strip of rows
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += THREADS) {
            const int r = i / BK, c = i % BK;  // consecutive threads read consecutive k: coalesced
            const int gr = row0 + r, gc = k0 + c;
            As[c * BM + r] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.0f;
        }
        for (int i = threadIdx.x; i < BK * BN; i += THREADS) {
            const int r = i / BN, c = i % BN;
            const int gr = k0 + r, gc = col0 + c;
            Bs[i] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.0f;
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
            if (r < M && c < N) {
                float* out = &C[(size_t)r * N + c];
                *out = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *out;
            }
        }
    }
}
