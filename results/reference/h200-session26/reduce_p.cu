#include "common.cuh"
// Scratch: the splits of each float4 group of C summed by `parts` threads of a block (split z by thread
// z % parts, in order), their sums added in order p = 0..parts-1 through shared memory.
extern "C" __global__ void __launch_bounds__(256)
reduce_p(int M, int N, int ldp, int splits, float alpha, const float* __restrict__ partials, float beta,
         float* __restrict__ C, int parts) {
    __shared__ float4 sums[256];
    const int lanes = 256 / parts, lane = threadIdx.x % lanes, part = threadIdx.x / lanes;
    const bool flat = ldp == N;
    const size_t slice4 = (size_t)M * ldp / 4, groups = flat ? (size_t)M * N / 4 : slice4;
    const unsigned row_groups = (unsigned)ldp / 4;
    const float4* p4 = reinterpret_cast<const float4*>(partials);
    for (size_t base = (size_t)blockIdx.x * lanes; base < groups; base += (size_t)gridDim.x * lanes) {
        const size_t i = base + lane;
        float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
        if (i < groups) {
            int z = part;
            if (z < splits) { s = __ldcg(p4 + z * slice4 + i); z += parts; }
#pragma unroll 4
            for (; z < splits; z += parts) {
                const float4 v = __ldcg(p4 + z * slice4 + i);
                s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
            }
        }
        if (parts > 1) {
            sums[threadIdx.x] = s;
            __syncthreads();
            if (part == 0 && i < groups)
                for (int p = 1; p < parts; ++p) {
                    const float4 v = sums[p * lanes + lane];
                    s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
                }
        }
        if (part == 0 && i < groups) {
            if (flat) {
                *reinterpret_cast<float4*>(C + 4 * i) = gemm_epilogue4(s, alpha, beta, C + 4 * i);
            } else {
                const unsigned r = (unsigned)i / row_groups, c = 4 * ((unsigned)i - r * row_groups);
                float* out = C + (size_t)r * N + c;
                const float sum[4] = {s.x, s.y, s.z, s.w};
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (c + j < (unsigned)N) out[j] = gemm_epilogue(sum[j], alpha, beta, out + j);
            }
        }
        if (parts > 1) __syncthreads();
    }
}
