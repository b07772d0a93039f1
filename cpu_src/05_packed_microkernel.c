/* Rung 5 - packed panels and a register-blocked SIMD micro-kernel.
 *
 * Changed from rung 4: the inner loop no longer streams C through L1. An
 *               MR x NR tile of C is held in vector registers for a whole KC
 *               slice; per step of k the micro-kernel loads NR floats of B,
 *               broadcasts MR floats of A and issues MR*NR/VW FMAs. A and B are
 *               first copied ("packed") into the exact order the micro-kernel
 *               reads them (see packed_gemm.h).
 * Why it helps: rung 4 did one load+store of C and one load of B per FMA; here
 *               there are about (NV + MR) loads per MR*NV FMAs, so the FMA
 *               pipes, not the load ports, set the pace. Packing turns A's
 *               strided columns and B's long rows into short sequential,
 *               aligned streams that stay in cache (no TLB or set conflicts).
 * Bottleneck:   FMA throughput of one core, minus packing (O(MK + KN) per
 *               slice against O(MNK) work) and the edge tiles.
 * Blocking:     loop order jc (NC columns) -> pc (KC deep: pack B slice) ->
 *               ic (MC rows: pack A block) -> jr (NR) -> ir (MR) -> micro-kernel.
 *               MR x NR = 14 x 32 (AVX-512), 6 x 16 (AVX2), 4 x 8 (plain C);
 *               KC, MC, NC in packed_gemm.h.
 * Edges:        packing zero-pads partial micro-panels; partial tiles of C are
 *               computed into a scratch tile and merged (macro_kernel).
 *               beta is applied on the first KC slice only; later slices add.
 *
 * Row-major, A is MxK, B is KxN, C is MxN: C = alpha*A@B + beta*C. With
 * beta == 0, C is only written, never read (it may hold NaN).
 */
#include "packed_gemm.h"

void sgemm(int M, int N, int K, float alpha, const float *A, const float *B,
           float beta, float *C)
{
    const int kc_max = pg_min(KC, K);
    float *pb = alloc_floats((size_t)kc_max * round_up(pg_min(NC, N), NR));
    float *pa = alloc_floats((size_t)kc_max * round_up(pg_min(MC, M), MR));

    for (int jc = 0; jc < N; jc += NC) {
        const int nc = pg_min(NC, N - jc);
        for (int pc = 0; pc < K; pc += KC) {
            const int kc = pg_min(KC, K - pc);
            const float beta_slice = pc == 0 ? beta : 1.0f;
            pack_b(kc, nc, B + (long)pc * N + jc, N, pb);
            for (int ic = 0; ic < M; ic += MC) {
                const int mc = pg_min(MC, M - ic);
                pack_a(mc, kc, A + (long)ic * K + pc, K, pa);
                macro_kernel(mc, nc, kc, pa, pb, C + (long)ic * N + jc, N, alpha, beta_slice);
            }
        }
    }
    free(pa);
    free(pb);
}
