/* gemmbench kernel
 * name:        blocked (example)
 * summary:     i-k-j loops over KB-deep slices of K, so a slice of B stays in cache across the rows of A
 * params:      KB=128
 * constraints: KB >= 1
 * threads:     1
 */

/* An example of your own C kernel for `gemmbench compare --device cpu --kernel-file`.
 *
 * The contract every ladder rung keeps: row-major C = alpha * A @ B + beta * C,
 * A is M x K, B is K x N, C is M x N; any M, N, K >= 1; with beta == 0 C is
 * written, never read. The parameters above arrive as -DKB=128; the file is
 * built with cc -O3 -march=native -fPIC -shared.
 */

void sgemm(int M, int N, int K, float alpha, const float *restrict A,
           const float *restrict B, float beta, float *restrict C)
{
    for (int i = 0; i < M; i++) {  /* scale C once (beta == 0: clear, never read) */
        float *c = &C[(long)i * N];
        for (int j = 0; j < N; j++)
            c[j] = beta == 0.0f ? 0.0f : beta * c[j];
    }
    for (int k0 = 0; k0 < K; k0 += KB) {
        const int k1 = k0 + KB < K ? k0 + KB : K;
        for (int i = 0; i < M; i++) {
            float *c = &C[(long)i * N];
            for (int p = k0; p < k1; p++) {  /* a row of B into a row of C: vectorises */
                const float a = alpha * A[(long)i * K + p];
                const float *b = &B[(long)p * N];
                for (int j = 0; j < N; j++)
                    c[j] += a * b[j];
            }
        }
    }
}
