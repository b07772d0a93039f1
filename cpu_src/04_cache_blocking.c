/* Rung 4 - 2-D cache blocking: M, N and K all blocked.
 *
 * Changed from rung 3: N is blocked too (and M, to order the work), so the
 *               working set is an MB x KB block of A, a KB x NB block of B and an
 *               MB x NB block of C instead of whole rows.
 * Why it helps: the KB x NB block of B (512 KiB) sits in L2 and is reused by all
 *               MB rows of A; each row segment of C (NB floats = 2 KiB) stays in
 *               L1 across the KB axpys that update it, so C traffic leaves memory.
 *               The working set no longer grows with N, unlike rung 3's tile.
 * Bottleneck:   loads and stores: the inner loop still does one load of B, one
 *               load and one store of C per FMA, so it runs at L1 bandwidth, far
 *               below the FMA units' peak, much as rung 3 already did: blocking
 *               alone gains little over rung 3 there. Register blocking (rung 5)
 *               is what removes the bottleneck.
 * Blocking:     MB = 256, NB = 512, KB = 256 (override with -D; measured on
 *               a Zen 5 core with 1 MiB L2, smaller blocks were slower).
 * Edges:        every block is clipped to the matrix: min(block, rest).
 *
 * Row-major, A is MxK, B is KxN, C is MxN: C = alpha*A@B + beta*C. With
 * beta == 0, C is only written, never read (it may hold NaN).
 */

#ifndef MB
#define MB 256
#endif
#ifndef NB
#define NB 512
#endif
#ifndef KB
#define KB 256
#endif

static inline int min_int(int a, int b) { return a < b ? a : b; }

void sgemm(int M, int N, int K, float alpha, const float *restrict A,
           const float *restrict B, float beta, float *restrict C)
{
    for (long e = 0; e < (long)M * N; e++)
        C[e] = beta == 0.0f ? 0.0f : beta * C[e];

    for (int j0 = 0; j0 < N; j0 += NB) {
        const int nb = min_int(NB, N - j0);
        for (int p0 = 0; p0 < K; p0 += KB) {
            const int p1 = min_int(p0 + KB, K);
            for (int i0 = 0; i0 < M; i0 += MB) {
                const int i1 = min_int(i0 + MB, M);
                for (int i = i0; i < i1; i++) {
                    float *c = &C[(long)i * N + j0];
                    for (int p = p0; p < p1; p++) {
                        const float a = alpha * A[(long)i * K + p];
                        const float *b = &B[(long)p * N + j0];
                        for (int j = 0; j < nb; j++)
                            c[j] += a * b[j];
                    }
                }
            }
        }
    }
}
