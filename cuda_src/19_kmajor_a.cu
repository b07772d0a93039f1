// Rung 19 — A transposed once per call: both operands k-major in shared memory.
//
// What changed from rung 12: one idea. cp.async cannot transpose, so rung 12
// keeps A row-major in shared memory and a thread reads 4 k-values of each of
// its TM rows per LDS.128: its A fragments are 4*TM registers, double
// buffered 8*TM (64 at 8 x 16), next to 128 accumulators, which leaves
// ptxas no room to schedule (255 registers, ~224 live). Here a pre-pass
// (transpose_pad, launched by the "transpose_a" driver inside the timed
// call) writes At = A^T once per call, K x M, padded with zeros to Kp x Mp
// (Kp = K rounded up to BK, Mp = M rounded up to BM). The A tile is then a
// plain BK x BM row block of At, copied with 16-byte cp.async exactly like
// B's, and a k-slice's fragments are TM/4 + TN/4 LDS.128 (TM + TN registers,
// double buffered 2*(TM+TN) = 48 at 16 x 8): the same number of LDS.128 as
// rung 12 (6 per slice at 128 results per thread) with ~48 fewer live
// registers. ptxas: 227 registers at 128x256 tiles of 16 x 8, 221 at rung
// 12's 256x128 of 8 x 16, no spills; the SASS main loop of the latter has
// the same 4096 FFMA and 192 LDS.128 per K tile as rung 12, 36 MOV against
// 168, and a quarter as many FFMAs whose two non-reused sources share a
// register bank (133 against 656 of 4096, counting banks as register % 4).
// Cost of the pre-pass: M*K floats read and written once, at close to DRAM
// bandwidth: small beside the GEMM at the shapes where this rung pays.
//
// Effect: with rung 12's own 256x128x32 tiles of 8 x 16 the freed registers
// alone make the loop faster and the FMA pipe busier. With registers to
// spare, other tiles fit; the record's tiles (select_19 in
// gemmbench/rungs/multistage.py) are 128x128x16 of 16 x 8, 4 warps, 2 blocks
// per SM, or, when those tiles would leave a last wave under 94% full,
// 64x128x16 of 8 x 8, 4 warps, 3 blocks per SM (BK = 16 with 4 stages held
// up better than BK = 32 at 2048^3). The measured figures (H200, gemmbench
// compare and ncu): results/notes/2026-11-kernel-measurements.md.
// Where the rung's pieces live: this kernel and its pre-pass; the record
// (gemmbench/rungs/gpu.py, rung 19); its parameters, constraints and
// per-shape choice (gemmbench/rungs/multistage.py, with rungs 12 and 13);
// the host side that launches the pre-pass, then sgemm, within the timed
// call (the "transpose_a" driver, gemmbench/gpu/drivers.py).
//
// Layout. A stage is [As: BK x BM | Bs: BK x BN], both row-major with no
// padding or swizzle. Lanes: a warp is 8 (M) x 4 (N) lanes; lane (ly, lx)
// owns rows 4*ly + 32*i + 0..3 (i < TM/4) and columns 4*lx + 16*j + 0..3
// (j < TN/4) of its warp's WM x WN = 8*TM x 4*TN tile. An A fragment load
// is 8 distinct 16-byte chunks (128 contiguous bytes, each read by the 4 lx
// lanes), a B load 4 distinct chunks (64 bytes, read by 8 lanes): no bank
// conflicts. Copies: consecutive threads copy consecutive 16-byte chunks of
// a tile row: conflict-free stores, coalesced reads.
// Pipeline: as rung 12 (STAGES-deep cp.async ring, one __syncthreads per K
// tile placed before its last k-slice, fragments double buffered in
// registers). The FMAs of a slice are written row by row with the column
// order reversed on every other row (serpentine); ptxas reorders them anyway.
// Edges: At is zero-padded to whole tiles, so A copies never need a guard.
// B as rung 12: cp.async src-size < 16 zero-fills chunks past N or K; when
// N % 4 or B's alignment forbids 16-byte copies (block-uniform flag), four
// 4-byte cp.async.ca per chunk. C: 128-bit stores where a whole aligned
// float4 is inside C, guarded scalar stores otherwise; not read if beta == 0.
// Tile: block BM x BN x BK, NUM_THREADS = 32 * (BM/WM) * (BN/WN), thread
// tile TM x TN (TM, TN multiples of 4), MIN_BLOCKS for __launch_bounds__.
#include "common.cuh"
#include "ptx.cuh"

constexpr int kWM = 8 * TM;
constexpr int kWN = 4 * TN;
constexpr int kWarpsN = BN / kWN;
constexpr int kChunksA = BM / 4;          // 16-byte chunks in an A tile row (BM floats of At)
constexpr int kChunksB = BN / 4;
constexpr int kStageA = BK * BM;          // floats
constexpr int kStageFloats = BK * (BM + BN);
constexpr int kCopiesA = CEIL_DIV(BK * kChunksA, NUM_THREADS);
constexpr int kCopiesB = CEIL_DIV(BK * kChunksB, NUM_THREADS);
constexpr bool kExactA = kCopiesA * NUM_THREADS == BK * kChunksA;
constexpr bool kExactB = kCopiesB * NUM_THREADS == BK * kChunksB;
constexpr int kRowStepA = NUM_THREADS / kChunksA;
constexpr int kRowStepB = NUM_THREADS / kChunksB;
static_assert(BM % kWM == 0 && BN % kWN == 0 && (BM / kWM) * (BN / kWN) * 32 == NUM_THREADS,
              "8*TM x 4*TN warptiles must cover the block tile, one per warp");
static_assert(TM % 4 == 0 && TN % 4 == 0, "A and B fragments are float4s");
static_assert(NUM_THREADS % kChunksA == 0 && NUM_THREADS % kChunksB == 0,
              "a thread copies the same chunk column of every tile row it copies");
static_assert(STAGES >= 3, "the wait before the last slice keeps STAGES-2 tiles in flight");
static_assert(BK % 2 == 0, "an even number of slices: every tile starts on fragment buffer 0");

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

// acc += a (TM values of one k) x b (TN values of the same k), serpentine.
__device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float4 (&a)[TM / 4],
                                              const float4 (&b)[TN / 4]) {
    const float* av = reinterpret_cast<const float*>(a);
    const float* bv = reinterpret_cast<const float*>(b);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int jj = 0; jj < TN; ++jj) {
            const int j = (i & 1) ? TN - 1 - jj : jj;
            acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ At, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    extern __shared__ __align__(128) float smem[];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int Mp = CEIL_DIV(M, BM) * BM;
    const int tiles = CEIL_DIV(K, BK);

    // ---- the chunks this thread copies ----
    const int a_row = tid / kChunksA, a_chunk = tid % kChunksA;
    const int b_row = tid / kChunksB, b_chunk = tid % kChunksB;
    const unsigned smem_base = smem_addr(smem);
    const unsigned a_dst = smem_base + 4 * (a_row * BM + 4 * a_chunk);
    const unsigned b_dst = smem_base + 4 * (kStageA + b_row * BN + 4 * b_chunk);
    const float* a_src = At + (size_t)a_row * Mp + m0 + 4 * a_chunk;
    const float* b_src = B + (size_t)b_row * N + n0 + 4 * b_chunk;
    const bool b_vector = (N & 3) == 0 && is_aligned16(B);  // block-uniform
    const bool b_interior = b_vector && n0 + BN <= N;
    const int b_cols_left = N - n0 - 4 * b_chunk;

    auto load_tile = [&](int t, int stage) {
        const int k0 = t * BK;
        const unsigned sa = a_dst + 4 * stage * kStageFloats;
        const unsigned sb = b_dst + 4 * stage * kStageFloats;
        const float* ga = a_src + (size_t)k0 * Mp;
        const float* gb = b_src + (size_t)k0 * N;
#pragma unroll
        for (int q = 0; q < kCopiesA; ++q)
            if (kExactA || a_row + q * kRowStepA < BK)
                cp_async16_full(sa + 4 * q * kRowStepA * BM, ga + (size_t)q * kRowStepA * Mp);
        if (b_interior && k0 + BK <= K) {
#pragma unroll
            for (int q = 0; q < kCopiesB; ++q)
                if (kExactB || b_row + q * kRowStepB < BK)
                    cp_async16_full(sb + 4 * q * kRowStepB * BN, gb + (size_t)q * kRowStepB * N);
            return;
        }
#pragma unroll
        for (int q = 0; q < kCopiesB; ++q) {
            if (!kExactB && b_row + q * kRowStepB >= BK) continue;
            cp_async_chunk(sb + 4 * q * kRowStepB * BN, gb + (size_t)q * kRowStepB * N, B,
                           k0 + b_row + q * kRowStepB < K, b_cols_left, b_vector);
        }
    };

    // ---- the fragments this thread reads ----
    const int warp = tid / 32, lane = tid % 32;
    const int ly = lane / 4, lx = lane % 4;
    const int a_frag = (warp / kWarpsN) * kWM + 4 * ly;             // + 32*i, + k*BM
    const int b_frag = kStageA + (warp % kWarpsN) * kWN + 4 * lx;   // + 16*j, + k*BN

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) load_tile(s, s);
        cp_async_commit();
    }

    float4 a[2][TM / 4], b[2][TN / 4];
    auto load_frags = [&](int buf, const float* stage, int k) {
#pragma unroll
        for (int i = 0; i < TM / 4; ++i)
            a[buf][i] = *reinterpret_cast<const float4*>(stage + a_frag + k * BM + 32 * i);
#pragma unroll
        for (int j = 0; j < TN / 4; ++j)
            b[buf][j] = *reinterpret_cast<const float4*>(stage + b_frag + k * BN + 16 * j);
    };

    cp_async_wait<STAGES - 2>();
    __syncthreads();
    load_frags(0, smem, 0);

    int read_stage = 0, write_stage = STAGES - 1;
    for (int t = 0; t < tiles; ++t) {
        const float* stage = smem + read_stage * kStageFloats;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k + 1 < BK) {
                load_frags((k + 1) & 1, stage, k + 1);
            } else {
                cp_async_wait<STAGES - 3>();
                __syncthreads();
                if (t + STAGES - 1 < tiles) load_tile(t + STAGES - 1, write_stage);
                cp_async_commit();
                read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
                write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
                if (t + 1 < tiles) load_frags(0, smem + read_stage * kStageFloats, 0);
            }
            outer_product(acc, a[k & 1], b[k & 1]);
        }
    }
    cp_async_wait<0>();

    // ---- epilogue: row 4*ly + 32*(i/4) + i%4, columns 4*lx + 16*j + 0..3 ----
    const int r0 = m0 + (warp / kWarpsN) * kWM + 4 * ly;
    const int c0 = n0 + (warp % kWarpsN) * kWN + 4 * lx;
    const bool aligned = (N & 3) == 0 && is_aligned16(C);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN / 4; ++j) {
            const int r = r0 + 32 * (i / 4) + i % 4, c = c0 + 16 * j;
            store_float4(C, N, r, c, M, N,
                         make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]),
                         alpha, beta, aligned && r < M && c + 4 <= N);
        }
}
