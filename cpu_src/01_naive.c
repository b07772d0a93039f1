/* Rung 1 - naive: the i-j-k triple loop, straight from the definition.
 *
 * What it does: one dot product per element of C, C[i][j] = sum_p A[i][p]*B[p][j].
 * Bottleneck:   the inner loop walks B down a column, N floats apart, so every
 *               multiply touches a new cache line (and, for large N, a new page):
 *               it is bound by memory latency, not arithmetic, and it cannot be
 *               vectorised because consecutive iterations read scattered addresses.
 * Blocking:     none.
 * Edges:        none to handle: every loop runs to its exact bound.
 *
 * Row-major, A is MxK, B is KxN, C is MxN: C = alpha*A@B + beta*C. With
 * beta == 0, C is only written, never read (it may hold NaN).
 */

void sgemm(int M, int N, int K, float alpha, const float *A, const float *B,
           float beta, float *C)
{
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int p = 0; p < K; p++)
                acc += A[(long)i * K + p] * B[(long)p * N + j];
            float *c = &C[(long)i * N + j];
            *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
        }
    }
}
