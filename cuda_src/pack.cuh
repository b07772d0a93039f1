// The pre-passes a driver launches inside the timed call to give a kernel
// operands it can copy with 16-byte accesses: copy_rows pads a matrix's rows
// to a multiple of 16 bytes (the TMA rungs 16-18, rung 28), transpose_pad
// writes A^T zero-padded to whole tiles (rungs 19 and 28, k-major A tiles).
// Each costs one read and one write of the operand: O(MK) or O(KN) against
// the product's O(MNK).
#include "common.cuh"

// dst[r * pitch + c] = src[r * cols + c] for r < rows, c < cols: a matrix
// copied into rows `pitch` floats apart (pitch a multiple of 4, dst 16-byte
// aligned: the driver's workspace). A thread writes four floats of a dst row
// with one 16-byte store, zeros past `cols` (a tensor map's dims stop at
// `cols`, rung 28's loops take `pitch` as the stride only, so the padding is
// never read), from four 4-byte loads: src's rows are not 16-byte aligned
// (that is why the copy exists), and the loads' sectors are shared by
// neighbouring threads through L1. Stores cost more than loads, hence wide
// ones. Grid-stride over the 4-float groups (for_each_row_group).
__device__ __forceinline__ void copy_row_group(int cols, const float* __restrict__ src, int pitch,
                                               float* __restrict__ dst, size_t r, int c) {
    const float* s = src + r * cols + c;
    const float4 v = make_float4(s[0], c + 1 < cols ? s[1] : 0.0f, c + 2 < cols ? s[2] : 0.0f,
                                 c + 3 < cols ? s[3] : 0.0f);  // c < cols: groups start inside the row
    *reinterpret_cast<float4*>(dst + r * pitch + c) = v;
}

extern "C" __global__ void copy_rows(int rows, int cols, const float* __restrict__ src, int pitch,
                                     float* __restrict__ dst) {
    // per row: pitch / 4 groups (pitch_for_tma)
    for_each_row_group<4>(rows, cols, pitch, [&](size_t r, int c) { copy_row_group(cols, src, pitch, dst, r, c); });
}

// At = A^T zero-padded: At[k][m] = A[m][k] for m < M, k < K, 0 elsewhere in
// Kp x Mp. A block moves a 64 x 64 tile through shared memory (rows padded to
// 65 floats); its 256 threads read 16 floats each. A tile wholly inside A
// with K % 4 == 0 and A 16-byte aligned is read with 128-bit loads along k
// and written with 128-bit stores along m (Mp is a multiple of BM, hence of
// 4); other tiles element by element, zero outside A, only inside Kp x Mp.
extern "C" __global__ void __launch_bounds__(256)
transpose_pad(int M, int K, int Mp, int Kp, const float* __restrict__ A, float* __restrict__ At) {
    __shared__ float tile[64][65];
    const int k0 = blockIdx.x * 64, m0 = blockIdx.y * 64;
    const int c = threadIdx.x % 16, r = threadIdx.x / 16;  // 16 float4 columns x 16 rows per pass
    if (m0 + 64 <= M && k0 + 64 <= K && (K & 3) == 0 && is_aligned16(A)) {
        float4 v[4];
#pragma unroll
        for (int p = 0; p < 4; ++p)
            v[p] = *reinterpret_cast<const float4*>(A + (size_t)(m0 + r + 16 * p) * K + k0 + 4 * c);
#pragma unroll
        for (int p = 0; p < 4; ++p) {
            float* row = tile[r + 16 * p] + 4 * c;
            row[0] = v[p].x; row[1] = v[p].y; row[2] = v[p].z; row[3] = v[p].w;
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < 4; ++p) {
            const int k = r + 16 * p;
            *reinterpret_cast<float4*>(At + (size_t)(k0 + k) * Mp + m0 + 4 * c) =
                make_float4(tile[4 * c][k], tile[4 * c + 1][k], tile[4 * c + 2][k], tile[4 * c + 3][k]);
        }
        return;
    }
    const int tx = threadIdx.x % 64, ty = threadIdx.x / 64;
#pragma unroll 4
    for (int i = ty; i < 64; i += 4) {
        const int m = m0 + i, k = k0 + tx;
        tile[i][tx] = m < M && k < K ? A[(size_t)m * K + k] : 0.0f;
    }
    __syncthreads();
#pragma unroll 4
    for (int i = ty; i < 64; i += 4) {
        const int k = k0 + i, m = m0 + tx;
        if (k < Kp && m < Mp) At[(size_t)k * Mp + m] = tile[tx][i];
    }
}
