// Split-K, shared by rungs 13, 17, 18 and 28: which K tiles a block of a
// split call sums and where its results go, and the kernel that adds the
// splits up.
//
// blockIdx.z = split z sums K tiles [z*per, min((z+1)*per, tiles)) with
// per = ceil(tiles / gridDim.z). Without a partials buffer (one split) the
// block writes C through the epilogue itself. With one, it writes its raw
// sums (alpha = 1, beta = 0: never reads) to partials[z*M*ldp + row*ldp +
// col], and reduce_splits then adds the splits in the fixed order z = 0, 1,
// ... (deterministic) and applies the epilogue. ldp may exceed N: rung 28
// gives a split call's sums padded rows when C's rows are not 16-byte
// multiples, so the tile stores stay 16-byte wide; the reduction reads them
// four floats at a time and stores C's elements one by one. A split whose K
// range is empty (possible when the split count does not divide the tile
// count evenly) still writes its zeros, so reduce_splits never reads
// uninitialised partials.
#include "common.cuh"

struct SplitSlice {
    int t_begin, t_end;  // K tiles this block sums
    float* out;          // C, or this split's slice of partials
    int ld;              // out's row stride: N, or ldp
    float alpha, beta;   // the epilogue's, or 1 and 0 for raw sums
};

// Decided before the main loop, so only a few values stay live across it.
__device__ __forceinline__ SplitSlice split_slice(int tiles, int M, int N, int ldp, float alpha, float beta,
                                                  float* C, float* partials) {
    const int per = CEIL_DIV(tiles, (int)gridDim.z);
    const int t_begin = min(tiles, (int)blockIdx.z * per);
    if (partials == nullptr) return {0, tiles, C, N, alpha, beta};
    return {t_begin, min(tiles, t_begin + per), partials + (size_t)blockIdx.z * M * ldp, ldp, 1.0f, 0.0f};
}

// Where C element i (row-major, N columns) lives in a slice of partials.
__device__ __forceinline__ size_t partial_index(size_t i, int N, int ldp) {
    const size_t r = i / N;
    return r * ldp + (i - r * N);
}

constexpr int kReduceThreads = 256;
constexpr int kDeepSplits = 32;  // from this many splits on, the splits of an element are summed by 8 warps

// Float4 group i summed over the splits, z = 0, 1, ... in order (slices
// slice4 groups apart): the float4 paths of reduce_splits.
__device__ __forceinline__ float4 sum_splits4(const float4* __restrict__ p4, size_t i, int splits, size_t slice4) {
    float4 s = p4[i];
    for (int z = 1; z < splits; ++z) {
        const float4 v = p4[z * slice4 + i];
        s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    return s;
}

// C = alpha * sum_z partials[z] + beta * C; partials rows ldp floats apart.
// Below kDeepSplits splits: grid-stride, z in increasing order, a thread per
// four elements with float4 loads where it can (ldp == N, M*N % 4 == 0 and
// both pointers 16-byte aligned: C as one flat float4 array; padded rows,
// ldp % 4 == 0: four floats of a row), else one element at a time. From
// kDeepSplits on (a long-K shape: few elements, many splits, where one
// thread's chain of dependent loads would take longer than the product), a
// block takes 32 elements at a time: warp w sums splits w, w+8, ... of its
// lane's element and warp 0 adds the 8 sums in order w = 0..7 (deterministic
// too). The driver sizes the grid for each.
extern "C" __global__ void __launch_bounds__(kReduceThreads)
reduce_splits(int M, int N, int ldp, int splits, float alpha, const float* __restrict__ partials, float beta,
              float* __restrict__ C) {
    const size_t total = (size_t)M * N, slice = (size_t)M * ldp;
    if (splits >= kDeepSplits) {
        __shared__ float sums[kReduceThreads / 32][33];
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        for (size_t base = (size_t)blockIdx.x * 32; base < total; base += (size_t)gridDim.x * 32) {
            const size_t i = base + lane;
            float s = 0.0f;
            if (i < total) {
                const size_t p = partial_index(i, N, ldp);
#pragma unroll 4
                for (int z = warp; z < splits; z += kReduceThreads / 32) s += partials[z * slice + p];
            }
            sums[warp][lane] = s;
            __syncthreads();
            if (warp == 0 && i < total) {
                float t = sums[0][lane];
#pragma unroll
                for (int w = 1; w < kReduceThreads / 32; ++w) t += sums[w][lane];
                C[i] = gemm_epilogue(t, alpha, beta, C + i);
            }
            __syncthreads();
        }
        return;
    }
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (ldp == N && (total & 3) == 0 && is_aligned16(partials) && is_aligned16(C)) {
        const float4* p4 = reinterpret_cast<const float4*>(partials);
        for (size_t i = first; i < total / 4; i += stride)
            *reinterpret_cast<float4*>(C + 4 * i) =
                gemm_epilogue4(sum_splits4(p4, i, splits, slice / 4), alpha, beta, C + 4 * i);
        return;
    }
    if (ldp != N && (ldp & 3) == 0 && is_aligned16(partials) && slice < 0x7fffffffu) {
        // Padded partial rows (rung 28: C's rows not 16-byte multiples): a thread
        // sums four floats of a row with 16-byte loads and stores the ones inside
        // C one by one (C's rows are not 16-byte aligned). 32-bit index math.
        const float4* p4 = reinterpret_cast<const float4*>(partials);
        const unsigned groups = (unsigned)ldp / 4, slice4 = (unsigned)(slice / 4);
        for (unsigned i = (unsigned)first; i < slice4; i += (unsigned)stride) {
            const float4 s = sum_splits4(p4, i, splits, slice4);
            const unsigned r = i / groups, c = 4 * (i - r * groups);
            float* out = C + (size_t)r * N + c;
            const float sum[4] = {s.x, s.y, s.z, s.w};
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (c + j < (unsigned)N) out[j] = gemm_epilogue(sum[j], alpha, beta, out + j);
        }
        return;
    }
    for (size_t i = first; i < total; i += stride) {
        const size_t p = partial_index(i, N, ldp);
        float s = partials[p];
        for (int z = 1; z < splits; ++z) s += partials[z * slice + p];
        C[i] = gemm_epilogue(s, alpha, beta, C + i);
    }
}
