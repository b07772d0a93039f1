/* Rung 6 - rung 5 on every core (OpenMP).
 *
 * Changed from rung 5: the same packing, micro-kernel and loop nest (shared
 *               through packed_gemm.h), run by a team of OpenMP threads. For
 *               each KC x NC slice, the threads pack B's micro-panels together
 *               (shared, one copy), wait at a barrier, then split the rows of
 *               C between them (contiguous shares of MR-row tiles, even to
 *               within one tile): each packs its own MC x KC blocks of A
 *               into a private buffer and runs the macro-kernel on its rows.
 * Why it helps: the micro-kernel was FMA-bound on one core; now each core
 *               runs one. Threads write disjoint rows of C (no locks), and all
 *               of them read the one packed slice of B, which sits in the
 *               shared L3 rather than once per core.
 * Bottleneck:   the per-slice barriers and the shared packing of B (serial
 *               fraction), shared L3/memory bandwidth, and idle threads when
 *               M has fewer MR-row tiles than there are threads.
 * Blocking:     rung 5's (packed_gemm.h); threads from OpenMP (omp_set_num_threads,
 *               which threadpoolctl sets; OMP_NUM_THREADS; default all cores).
 * Edges:        as rung 5.
 *
 * Row-major, A is MxK, B is KxN, C is MxN: C = alpha*A@B + beta*C. With
 * beta == 0, C is only written, never read (it may hold NaN).
 */
#include <omp.h>
#include "packed_gemm.h"

void sgemm(int M, int N, int K, float alpha, const float *A, const float *B,
           float beta, float *C)
{
    const int kc_max = pg_min(KC, K);
    const int nc_max = round_up(pg_min(NC, N), NR);
    float *pb = alloc_floats((size_t)kc_max * nc_max);

#pragma omp parallel
    {
        /* this thread's rows of C: a contiguous share of the MR-row tiles,
         * so the split is even to within one tile */
        const int threads = omp_get_num_threads(), t = omp_get_thread_num();
        const long tiles = (M + MR - 1) / MR;
        const int row0 = pg_min(M, (int)(tiles * t / threads) * MR);
        const int row1 = pg_min(M, (int)(tiles * (t + 1) / threads) * MR);
        float *pa = alloc_floats((size_t)kc_max * pg_min(MC, round_up(row1 - row0, MR)));

        for (int jc = 0; jc < N; jc += NC) {
            const int nc = pg_min(NC, N - jc);
            for (int pc = 0; pc < K; pc += KC) {
                const int kc = pg_min(KC, K - pc);
                const float beta_slice = pc == 0 ? beta : 1.0f;
                const float *b = B + (long)pc * N + jc;
                /* the slice of B, packed by all threads, a share of micro-panels each */
#pragma omp for schedule(static)
                for (int j = 0; j < nc; j += NR)
                    pack_b_panel(kc, pg_min(NR, nc - j), b + j, N, pb + (long)j * kc);
                /* (implicit barrier: the slice is complete) */
                for (int ic = row0; ic < row1; ic += MC) {
                    const int mc = pg_min(MC, row1 - ic);
                    pack_a(mc, kc, A + (long)ic * K + pc, K, pa);
                    macro_kernel(mc, nc, kc, pa, pb, C + (long)ic * N + jc, N, alpha, beta_slice);
                }
                /* nobody repacks B while another thread still reads it */
#pragma omp barrier
            }
        }
        free(pa);
    }
    free(pb);
}
