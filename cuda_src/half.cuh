// The 16-bit element types of the BF16 and FP16 rungs (20 on): storage,
// conversions and the epilogue. -DBF16=1 builds a rung for bfloat16,
// -DBF16=0 for IEEE half; the tool pastes headers as text and includes no
// system header, so the types are raw 16-bit patterns and every conversion
// is one PTX instruction spelled out here.
//
// Contract of a 16-bit rung (row-major, C = alpha * A @ B + beta * C, the
// products accumulated in FP32, C rounded once to the 16-bit type):
//   extern "C" __global__ void sgemm(int M, int N, int K, float alpha,
//       const elem16* A, const elem16* B, float beta, elem16* C)
// (TMA rungs take A and B as tensor maps instead.) With beta == 0, C is never read.

// common.cuh: for_each_row_group (copy_rows16), for kernel files that include only this header
#include "common.cuh"

#ifndef BF16
#define BF16 1
#endif

typedef unsigned short elem16;  // the bits of one bf16 / fp16 value

__device__ __forceinline__ float to_float(elem16 h) {
    float x;
#if BF16
    x = __uint_as_float((unsigned)h << 16);
#else
    asm("cvt.f32.f16 %0, %1;\n" : "=f"(x) : "h"(h));
#endif
    return x;
}

// Round to nearest even, as cuBLAS and the host's rounding of the inputs do.
__device__ __forceinline__ elem16 from_float(float x) {
    elem16 h;
#if BF16
    asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(h) : "f"(x));
#else
    asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(h) : "f"(x));
#endif
    return h;
}

// Two values packed as one 32-bit word, `lo` at the lower address.
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
    unsigned r;
#if BF16
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

// One element of C through the epilogue (beta == 0: C is write-only).
__device__ __forceinline__ void store16(elem16* c, float acc, float alpha, float beta) {
    *c = from_float(beta == 0.0f ? alpha * acc : alpha * acc + beta * to_float(*c));
}

// Two neighbouring elements of a row of C, one 32-bit store; c must be 4-byte aligned.
__device__ __forceinline__ void store16x2(elem16* c, float a0, float a1, float alpha, float beta) {
    unsigned* p = reinterpret_cast<unsigned*>(c);
    if (beta == 0.0f) {
        *p = pack2(alpha * a0, alpha * a1);
    } else {
        const unsigned old = *p;
        *p = pack2(alpha * a0 + beta * to_float((elem16)(old & 0xFFFF)),
                   alpha * a1 + beta * to_float((elem16)(old >> 16)));
    }
}

// Results (m, n) and (m, n + 1) of a tile's accumulators: one 32-bit store
// where `pairs` (block-uniform: N even and C 4-byte aligned, so n even means
// n + 1 < N whenever n < N), else up to two guarded 16-bit stores.
__device__ __forceinline__ void store_pair(elem16* C, int M, int N, int m, int n, float a0, float a1, float alpha,
                                           float beta, bool pairs) {
    if (m >= M || n >= N) return;
    elem16* c = C + (size_t)m * N + n;
    if (pairs) {
        store16x2(c, a0, a1, alpha, beta);
        return;
    }
    store16(c, a0, alpha, beta);
    if (n + 1 < N) store16(c + 1, a1, alpha, beta);
}

// The corner tile (tm, tn) of C tile number `tile` on a tiles_m x tiles_n
// grid: tiles numbered group_m tile rows at a time, column by column inside
// a group, so blocks running together share A and B panels in L2.
__device__ __forceinline__ void grouped_tile(int tile, int tiles_m, int tiles_n, int group_m, int& tm, int& tn) {
    const int per_group = group_m * tiles_n;
    const int group = tile / per_group, in_group = tile % per_group;
    const int first_m = group * group_m;
    const int rows = min(tiles_m - first_m, group_m);
    tm = first_m + in_group % rows;
    tn = in_group / rows;
}

// dst[r * pitch + c] = src[r * cols + c]: a 16-bit matrix copied into rows
// `pitch` elements apart (a multiple of 8, dst 16-byte aligned: the driver's
// workspace), so a tensor map can take it (TMA wants 16-byte row pitches).
// As pack.cuh's copy_rows does for floats: a thread writes eight elements of
// a dst row with one 16-byte store, zeros past `cols` (the map's dims stop
// at `cols`, so the padding is never read), from 2-byte loads (src's rows
// are not aligned; neighbouring threads share the loads' sectors through
// L1). Grid-stride over the 8-element groups (common.cuh's for_each_row_group).
__device__ __forceinline__ void copy_row_group16(int cols, const elem16* __restrict__ src, int pitch,
                                                 elem16* __restrict__ dst, size_t r, int c) {
    const elem16* s = src + r * cols + c;  // c < cols: groups start inside the row
    unsigned w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const unsigned lo = c + 2 * j < cols ? s[2 * j] : 0u, hi = c + 2 * j + 1 < cols ? s[2 * j + 1] : 0u;
        w[j] = lo | hi << 16;  // element 2j at the lower address
    }
    *reinterpret_cast<uint4*>(dst + r * pitch + c) = make_uint4(w[0], w[1], w[2], w[3]);
}

extern "C" __global__ void copy_rows16(int rows, int cols, const elem16* __restrict__ src, int pitch,
                                       elem16* __restrict__ dst) {
    // per row: pitch / 8 groups (pitch_for_tma)
    for_each_row_group<8>(rows, cols, pitch,
                          [&](size_t r, int c) { copy_row_group16(cols, src, pitch, dst, r, c); });
}
