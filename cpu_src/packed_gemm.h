/* packed_gemm.h - what rungs 5 and 6 share: packing, the register-blocked
 * micro-kernel and the macro-kernel that sweeps it over one packed block.
 *
 * The scheme is GotoBLAS/BLIS's. C is cut into NC-wide column panels; for each,
 * K is cut into KC-deep slices. A KC x NC slice of B is packed once into
 * NR-wide micro-panels (L3/L2 resident), an MC x KC block of A into MR-tall
 * micro-panels (L2 resident), and the micro-kernel computes one MR x NR tile
 * of C in registers from one micro-panel of each: per step of k it loads one
 * row of NR floats of B, broadcasts MR floats of A and issues MR*NR/VW FMAs,
 * so each loaded value feeds several FMAs (rung 4 fed one). Packing makes the
 * micro-kernel's reads purely sequential and aligned, and zero-pads the edge
 * panels to full MR and NR, so the hot loop never tests a bound.
 *
 * The SIMD width is fixed at compile time from the target that -march=native
 * chose on the user's machine:
 *   __AVX512F__     16 floats per vector, 14 x 32 tile: 28 zmm accumulators
 *   __AVX2__+__FMA__ 8 floats per vector,  6 x 16 tile: 12 ymm accumulators
 *   otherwise        plain C, 4 x 8 tile of scalars (the compiler may vectorise)
 * Two FMA pipes of 4-cycle latency need >= 8 independent accumulators in
 * flight; both SIMD tiles have more, and leave registers for B and A.
 */
#ifndef PACKED_GEMM_H
#define PACKED_GEMM_H

#include <stdlib.h>
#include <string.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define SIMD_LEVEL "avx512"
typedef __m512 vec;
#define VW 16
#define vzero() _mm512_setzero_ps()
#define vload(p) _mm512_load_ps(p)
#define vloadu(p) _mm512_loadu_ps(p)
#define vstoreu(p, v) _mm512_storeu_ps(p, v)
#define vbcast(x) _mm512_set1_ps(x)
#define vfma(a, b, c) _mm512_fmadd_ps(a, b, c)
#define vmul(a, b) _mm512_mul_ps(a, b)
#ifndef MR
#define MR 14
#endif
#define NV 2
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define SIMD_LEVEL "avx2"
typedef __m256 vec;
#define VW 8
#define vzero() _mm256_setzero_ps()
#define vload(p) _mm256_load_ps(p)
#define vloadu(p) _mm256_loadu_ps(p)
#define vstoreu(p, v) _mm256_storeu_ps(p, v)
#define vbcast(x) _mm256_set1_ps(x)
#define vfma(a, b, c) _mm256_fmadd_ps(a, b, c)
#define vmul(a, b) _mm256_mul_ps(a, b)
#ifndef MR
#define MR 6
#endif
#define NV 2
#else
#define SIMD_LEVEL "portable"
typedef float vec;
#define VW 1
#define vzero() 0.0f
#define vload(p) (*(p))
#define vloadu(p) (*(p))
#define vstoreu(p, v) (*(p) = (v))
#define vbcast(x) (x)
#define vfma(a, b, c) ((a) * (b) + (c))
#define vmul(a, b) ((a) * (b))
#ifndef MR
#define MR 4
#endif
#define NV 8
#endif

#define NR (NV * VW) /* columns of the micro-tile */

/* Cache blocking (defaults tuned on an AMD EPYC, Zen 5: 48 KiB L1d, 1 MiB L2
 * per core): the MC x KC block of A takes ~170 KiB of L2, one KC x NR
 * micro-panel of B 32 KiB of L1, the KC x NC slice of B ~4 MiB of L3. */
#ifndef KC
#define KC 256
#endif
#ifndef MC
#define MC (12 * MR)
#endif
#ifndef NC
#define NC 4096
#endif

#define ALIGNMENT 64

static inline int pg_min(int a, int b) { return a < b ? a : b; }
static inline int round_up(int x, int to) { return (x + to - 1) / to * to; }

static float *alloc_floats(size_t n)
{
    size_t bytes = (n * sizeof(float) + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    return aligned_alloc(ALIGNMENT, bytes ? bytes : ALIGNMENT);
}

/* One micro-panel of B: kc rows of `cols` (<= NR) floats from B (leading
 * dimension ldb), laid out as kc rows of exactly NR floats, zero-padded. */
static void pack_b_panel(int kc, int cols, const float *B, long ldb, float *dst)
{
    for (int p = 0; p < kc; p++, dst += NR) {
        const float *src = B + p * ldb;
        int j = 0;
        for (; j < cols; j++) dst[j] = src[j];
        for (; j < NR; j++) dst[j] = 0.0f;
    }
}

/* The kc x nc slice of B as ceil(nc/NR) consecutive micro-panels. */
static void pack_b(int kc, int nc, const float *B, long ldb, float *dst)
{
    for (int j = 0; j < nc; j += NR)
        pack_b_panel(kc, pg_min(NR, nc - j), B + j, ldb, dst + (long)j * kc);
}

/* The mc x kc block of A as ceil(mc/MR) micro-panels, each stored k-major
 * (MR values of one column of A after another), rows beyond mc zero. */
static void pack_a(int mc, int kc, const float *A, long lda, float *dst)
{
    for (int i = 0; i < mc; i += MR) {
        const int rows = pg_min(MR, mc - i);
        for (int p = 0; p < kc; p++, dst += MR) {
            int r = 0;
            for (; r < rows; r++) dst[r] = A[(i + r) * lda + p];
            for (; r < MR; r++) dst[r] = 0.0f;
        }
    }
}

/* The MR x NR tile: c = alpha * (pa @ pb) + beta * c, over kc steps. With
 * beta == 0, c is not read. Accumulators live in registers throughout. */
static inline void micro_kernel(int kc, const float *restrict pa, const float *restrict pb,
                                float *restrict c, long ldc, float alpha, float beta)
{
    vec acc[MR][NV];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) acc[r][v] = vzero();

    for (int p = 0; p < kc; p++, pa += MR, pb += NR) {
        vec b[NV];
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) b[v] = vload(pb + v * VW);
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            const vec a = vbcast(pa[r]);
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) acc[r][v] = vfma(a, b[v], acc[r][v]);
        }
    }

    const vec va = vbcast(alpha), vb = vbcast(beta);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            float *dst = c + r * ldc + v * VW;
            vstoreu(dst, beta == 0.0f ? vmul(va, acc[r][v])
                                      : vfma(va, acc[r][v], vmul(vb, vloadu(dst))));
        }
}

/* C[0:mc, 0:nc] = alpha * (packed A block @ packed B slice) + beta * C.
 * Edge tiles (fewer than MR rows or NR columns left in C) are computed into
 * a scratch tile and only their valid part is merged into C. */
static void macro_kernel(int mc, int nc, int kc, const float *pa, const float *pb,
                         float *C, long ldc, float alpha, float beta)
{
    for (int j = 0; j < nc; j += NR) {
        const int cols = pg_min(NR, nc - j);
        for (int i = 0; i < mc; i += MR) {
            const int rows = pg_min(MR, mc - i);
            const float *a = pa + (long)i * kc, *b = pb + (long)j * kc;
            float *c = C + i * ldc + j;
            if (rows == MR && cols == NR) {
                micro_kernel(kc, a, b, c, ldc, alpha, beta);
                continue;
            }
            float tile[MR * NR] __attribute__((aligned(ALIGNMENT)));
            micro_kernel(kc, a, b, tile, NR, 1.0f, 0.0f);
            for (int r = 0; r < rows; r++)
                for (int s = 0; s < cols; s++) {
                    float *dst = &c[r * ldc + s];
                    *dst = beta == 0.0f ? alpha * tile[r * NR + s]
                                        : alpha * tile[r * NR + s] + beta * *dst;
                }
        }
    }
}

#endif /* PACKED_GEMM_H */
