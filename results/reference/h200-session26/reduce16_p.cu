#include "common.cuh"
#include "half.cuh"
// Scratch: reduce_splits16 with the splits of each pair (or element) summed by `parts` threads (split z by
// thread z % parts, in order), their sums added in order p = 0..parts-1 through shared memory.
extern "C" __global__ void __launch_bounds__(256)
reduce16_p(int M, int N, int splits, float alpha, const float* __restrict__ partials, float beta,
           elem16* __restrict__ C, int parts) {
    __shared__ float2 sums[256];
    const int lanes = 256 / parts, lane = threadIdx.x % lanes, part = threadIdx.x / lanes;
    const size_t total = (size_t)M * N;
    const bool pairs = total % 2 == 0 && (reinterpret_cast<unsigned long long>(C) & 3) == 0;
    const size_t items = pairs ? total / 2 : total;
    const float2* p2 = reinterpret_cast<const float2*>(partials);
    for (size_t base = (size_t)blockIdx.x * lanes; base < items; base += (size_t)gridDim.x * lanes) {
        const size_t i = base + lane;
        float2 s = make_float2(0.f, 0.f);
        if (i < items && part < splits) {
            if (pairs) {
                s = __ldcg(p2 + part * items + i);
#pragma unroll 4
                for (int z = part + parts; z < splits; z += parts) {
                    const float2 v = __ldcg(p2 + z * items + i);
                    s.x += v.x; s.y += v.y;
                }
            } else {
                s.x = __ldcg(partials + part * items + i);
#pragma unroll 4
                for (int z = part + parts; z < splits; z += parts) s.x += __ldcg(partials + z * items + i);
            }
        }
        if (parts > 1) {
            sums[threadIdx.x] = s;
            __syncthreads();
            if (part == 0)
                for (int p = 1; p < parts; ++p) {
                    const float2 v = sums[p * lanes + lane];
                    s.x += v.x; s.y += v.y;
                }
        }
        if (part == 0 && i < items) {
            if (pairs) store16x2(C + 2 * i, s.x, s.y, alpha, beta);
            else store16(C + i, s.x, alpha, beta);
        }
        if (parts > 1) __syncthreads();
    }
}
