// Split-K, shared by rungs 13 and 28: which K tiles a block of a split call
// sums and where its results go, and the kernel that adds the splits up.
//
// blockIdx.z = split z sums K tiles [z*per, min((z+1)*per, tiles)) with
// per = ceil(tiles / gridDim.z) and writes its raw sums (alpha = 1, beta = 0:
// never reads) to partials[z*M*N + row*N + col]; reduce_splits then adds the
// splits in the fixed order z = 0, 1, ... (deterministic) and applies the
// epilogue. With gridDim.z == 1 the block writes C through the epilogue itself
// and partials may be NULL. A split whose K range is empty (possible when the
// split count does not divide the tile count evenly) still writes its zeros,
// so reduce_splits never reads uninitialised partials.
#include "common.cuh"

struct SplitSlice {
    int t_begin, t_end;  // K tiles this block sums
    float* out;          // C, or this split's slice of partials
    float alpha, beta;   // the epilogue's, or 1 and 0 for raw sums
};

// Decided before the main loop, so only a few values stay live across it.
__device__ __forceinline__ SplitSlice split_slice(int tiles, int M, int N, float alpha, float beta, float* C,
                                                  float* partials) {
    const int per = CEIL_DIV(tiles, (int)gridDim.z);
    const int t_begin = min(tiles, (int)blockIdx.z * per);
    if (gridDim.z == 1) return {0, tiles, C, alpha, beta};
    return {t_begin, min(tiles, t_begin + per), partials + (size_t)blockIdx.z * M * N, 1.0f, 0.0f};
}

// C = alpha * sum_z partials[z] + beta * C, z in increasing order. Grid-stride;
// float4 accesses when M*N % 4 == 0 and both pointers are 16-byte aligned.
extern "C" __global__ void __launch_bounds__(256)
reduce_splits(int M, int N, int splits, float alpha, const float* __restrict__ partials, float beta,
              float* __restrict__ C) {
    const size_t total = (size_t)M * N;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if ((total & 3) == 0 && is_aligned16(partials) && is_aligned16(C)) {
        const float4* p4 = reinterpret_cast<const float4*>(partials);
        for (size_t i = first; i < total / 4; i += stride) {
            float4 s = p4[i];
            for (int z = 1; z < splits; ++z) {
                const float4 v = p4[z * (total / 4) + i];
                s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
            }
            *reinterpret_cast<float4*>(C + 4 * i) = gemm_epilogue4(s, alpha, beta, C + 4 * i);
        }
    } else {
        for (size_t i = first; i < total; i += stride) {
            float s = partials[i];
            for (int z = 1; z < splits; ++z) s += partials[z * total + i];
            C[i] = gemm_epilogue(s, alpha, beta, C + i);
        }
    }
}
