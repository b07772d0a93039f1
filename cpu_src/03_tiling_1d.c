/* Rung 3 - 1-D tiling over K: rung 2's loops, with K cut into tiles.
 *
 * Changed from rung 2: the K loop is split into tiles of KT rows of B; for each
 *               tile, every row of A runs its i-k-j axpys against only those KT
 *               rows before the next tile starts.
 * Why it helps: a tile of B (KT x N floats) is small enough to stay in L2 while
 *               all M rows of A use it, so B is read from far memory once per
 *               tile instead of once per row of A.
 * Bottleneck:   the row of C is still loaded and stored once per p, and with a
 *               wide N the tile of B (KT*N*4 bytes) can outgrow L2 again; each
 *               loaded value of B is used for one FMA only (no register reuse).
 * Blocking:     KT = 64 rows of B (256 KiB of L2 at N = 1024).
 * Edges:        the last tile is shorter: min(KT, K - p0).
 *
 * Row-major, A is MxK, B is KxN, C is MxN: C = alpha*A@B + beta*C. With
 * beta == 0, C is only written, never read (it may hold NaN).
 */

#define KT 64

void sgemm(int M, int N, int K, float alpha, const float *restrict A,
           const float *restrict B, float beta, float *restrict C)
{
    /* beta is applied once up front (beta == 0 clears without reading) */
    for (long e = 0; e < (long)M * N; e++)
        C[e] = beta == 0.0f ? 0.0f : beta * C[e];

    for (int p0 = 0; p0 < K; p0 += KT) {
        const int p1 = p0 + KT < K ? p0 + KT : K;
        for (int i = 0; i < M; i++) {
            float *c = &C[(long)i * N];
            for (int p = p0; p < p1; p++) {
                const float a = alpha * A[(long)i * K + p];
                const float *b = &B[(long)p * N];
                for (int j = 0; j < N; j++)
                    c[j] += a * b[j];
            }
        }
    }
}
