/* Rung 2 - loop reorder: the same arithmetic in i-k-j order.
 *
 * Changed from rung 1: the p (K) loop moves out of the innermost position. For a
 *               fixed row i and step p, A[i][p] is one scalar and the inner loop
 *               does C[i][:] += A[i][p] * B[p][:], a contiguous row of B into a
 *               contiguous row of C ("axpy").
 * Why it helps: both inner streams are unit-stride, so every byte of a fetched
 *               cache line is used and the compiler vectorises the inner loop
 *               into SIMD FMAs.
 * Bottleneck:   bandwidth. Each row of A sweeps the whole of B (K*N floats)
 *               through the caches; once B outgrows L2 every row of A re-reads
 *               it from L3 or memory, and the row of C is loaded and stored K times.
 * Blocking:     none.
 * Edges:        none: the vector loop's remainder is the compiler's job.
 *
 * Row-major, A is MxK, B is KxN, C is MxN: C = alpha*A@B + beta*C. With
 * beta == 0, C is only written, never read (it may hold NaN).
 */

void sgemm(int M, int N, int K, float alpha, const float *restrict A,
           const float *restrict B, float beta, float *restrict C)
{
    for (int i = 0; i < M; i++) {
        float *c = &C[(long)i * N];
        /* scale (or clear: beta == 0 must not read C) the row once, then accumulate */
        for (int j = 0; j < N; j++)
            c[j] = beta == 0.0f ? 0.0f : beta * c[j];
        for (int p = 0; p < K; p++) {
            const float a = alpha * A[(long)i * K + p];
            const float *b = &B[(long)p * N];
            for (int j = 0; j < N; j++)
                c[j] += a * b[j];
        }
    }
}
