// The tile machinery rungs 14-18 share on Hopper: sizes derived from the
// -D parameters (BM, BN, BK, STAGES, GROUP_M), the tile raster, and the
// cp.async copies of one K tile into a ring slot. Include it inside
// `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, after wgmma.cuh.
//
// Slot layout: the A tile(s) of BM rows x BK floats, K-major in the 128B
// (BK = 32) or 64B (BK = 16) swizzle the wgmma descriptor reads, then the B
// tile of BK rows x BN floats, row stride BN + 8 (read into registers by the
// threads themselves: the padding spreads a warp's reads over all banks).

constexpr int kWarpgroups = BN / 64;
constexpr int kThreads = 128 * kWarpgroups;
constexpr int kRowBytes = BK * 4;                 // one A-tile row = one swizzled row
constexpr int kLdb = BN + 8;                      // B tile row stride (floats)
constexpr int kAStage = BM * BK * 4;              // bytes of one A tile
constexpr int kBStage = BK * kLdb * 4;
[[maybe_unused]] constexpr int kAhead = STAGES - 1;  // tiles copied ahead (cp.async rungs; TMA rungs share this file)
constexpr int kAcc = BM / 2;                      // accumulators per thread
[[maybe_unused]] constexpr int kAChunks = BM * BK / 4, kBChunks = BK * BN / 4;  // 16-byte pieces per tile
static_assert(BN % 64 == 0 && kWarpgroups >= 1 && kWarpgroups <= 4, "BN = 64 per warpgroup, 1..4 warpgroups");
static_assert(BM == 16 || BM == 32 || BM == 64 || BM == 128 || BM == 192 || BM == 256,
              "BM is the wgmma N: 16, 32, 64, 128, 192 or 256");
static_assert(BK == 16 || BK == 32, "BK = 32 (128-byte swizzle) or 16 (64-byte swizzle)");
static_assert(STAGES >= 3, "the tile in the tensor cores, the next one landed, at least one in flight");
static_assert(GROUP_M >= 1, "GROUP_M >= 1");

// The corner of C tile number `tile`: tiles are numbered GROUP_M tile rows
// at a time, column by column inside a group, so blocks running together
// share A and B panels in L2.
__device__ __forceinline__ void tile_origin_of(int tile, int M, int N, int& m0, int& n0) {
    const int tiles_m = CEIL_DIV(M, BM), tiles_n = CEIL_DIV(N, BN);
    const int per_group = GROUP_M * tiles_n;
    const int group = tile / per_group, in_group = tile % per_group;
    const int first_m = group * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    m0 = (first_m + in_group % group_rows) * BM;
    n0 = (in_group / group_rows) * BN;
}

// This block's tile (one tile per block: a 1-D grid over all tiles).
__device__ __forceinline__ void tile_origin(int M, int N, int& m0, int& n0) { tile_origin_of(blockIdx.x, M, N, m0, n0); }

// The BM x BK tile at (m0, k0) of each of kSources M x K row-major matrices
// into consecutive swizzled A slots from `as`. `vec` (block-uniform: K % 4 ==
// 0 and every source 16-byte aligned) allows 16-byte copies, each all in or
// all out of the matrix; otherwise 4-byte copies. Outside: zero-filled.
template <int kSources>
__device__ __forceinline__ void copy_a_tiles(unsigned as, const float* const (&src)[kSources], int M, int K, int m0,
                                             int k0, bool vec) {
    const int tid = threadIdx.x;
    if (vec) {
#pragma unroll
        for (int i = 0; i < CEIL_DIV(kAChunks, kThreads); ++i) {
            if (kAChunks % kThreads != 0 && tid + i * kThreads >= kAChunks) break;
            const int p = tid + i * kThreads, r = p / (BK / 4), c = p % (BK / 4);
            const int gm = m0 + r, gk = k0 + 4 * c;
            const bool ok = gm < M && gk < K;
            const unsigned dst = as + swizzle<kRowBytes>(r * kRowBytes + 16 * c);
            const size_t off = ok ? (size_t)gm * K + gk : 0;
#pragma unroll
            for (int s = 0; s < kSources; ++s) cp_async16(dst + s * kAStage, src[s] + off, ok ? 16 : 0);
        }
    } else {
#pragma unroll 1
        for (int i = 0; i < CEIL_DIV(kAChunks, kThreads); ++i) {
            if (kAChunks % kThreads != 0 && tid + i * kThreads >= kAChunks) break;
            const int p = tid + i * kThreads, r = p / (BK / 4), c = p % (BK / 4);
            const int gm = m0 + r, gk = k0 + 4 * c;
            const unsigned dst = as + swizzle<kRowBytes>(r * kRowBytes + 16 * c);
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool ok = gm < M && gk + e < K;
                const size_t off = ok ? (size_t)gm * K + gk + e : 0;
#pragma unroll
                for (int s = 0; s < kSources; ++s) cp_async4(dst + s * kAStage + 4 * e, src[s] + off, ok ? 4 : 0);
            }
        }
    }
}

// The BK x BN tile at (k0, n0) of B into the padded B slot at `bs`; `vec`
// as above (N % 4 == 0, B 16-byte aligned).
__device__ __forceinline__ void copy_b_tile(unsigned bs, const float* B, int K, int N, int k0, int n0, bool vec) {
    const int tid = threadIdx.x;
    if (vec) {
#pragma unroll
        for (int i = 0; i < CEIL_DIV(kBChunks, kThreads); ++i) {
            if (kBChunks % kThreads != 0 && tid + i * kThreads >= kBChunks) break;
            const int p = tid + i * kThreads, r = p / (BN / 4), c = p % (BN / 4);
            const int gk = k0 + r, gn = n0 + 4 * c;
            const bool ok = gk < K && gn < N;
            cp_async16(bs + (r * kLdb + 4 * c) * 4, ok ? B + (size_t)gk * N + gn : B, ok ? 16 : 0);
        }
    } else {
#pragma unroll 1
        for (int i = 0; i < CEIL_DIV(kBChunks, kThreads); ++i) {
            if (kBChunks % kThreads != 0 && tid + i * kThreads >= kBChunks) break;
            const int p = tid + i * kThreads, r = p / (BN / 4), c = p % (BN / 4);
            const int gk = k0 + r, gn = n0 + 4 * c;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool ok = gk < K && gn + e < N;
                cp_async4(bs + (r * kLdb + 4 * c + e) * 4, ok ? B + (size_t)gk * N + gn + e : B, ok ? 4 : 0);
            }
        }
    }
}

// This thread's raw (not yet rounded) B values of the K tile in ring slot
// `slot`, as the register operand of the BK/8 wgmmas: rows 8ks+t and
// 8ks+t+4, columns frag_n and frag_n+8 of the B tile.
__device__ __forceinline__ void read_b_fragments(float (&raw)[BK / 8][4], const float* b_tiles, int slot,
                                                 int frag_n, int t) {
    const float* bt = b_tiles + slot * (kBStage / 4) + frag_n;
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) {
        raw[ks][0] = bt[(8 * ks + t) * kLdb];
        raw[ks][1] = bt[(8 * ks + t) * kLdb + 8];
        raw[ks][2] = bt[(8 * ks + t + 4) * kLdb];
        raw[ks][3] = bt[(8 * ks + t + 4) * kLdb + 8];
    }
}

// Fills the ring: copies of the first STAGES-1 K tiles in flight (one commit
// group each, empty past the end of K), waits for the first, and publishes it
// to the tensor cores (proxy fence, then barrier).
template <typename LoadTile>
__device__ __forceinline__ void start_ring(LoadTile load_tile, int k_tiles) {
#pragma unroll 1
    for (int s = 0; s < kAhead; ++s) {
        if (s < k_tiles) load_tile(s, s);
        cp_async_commit();
    }
    cp_async_wait<kAhead - 1>();
    fence_proxy_async();
    __syncthreads();
}

// Where accumulator i belongs in C. The wgmma computed the C tile at (m0,
// n0) transposed, D(n, m): acc[4i' + j] = D(frag_n + 8 * (j / 2), 8i' + 2t +
// j % 2), i.e. C[m0 + 8i' + 2t + j % 2][n0 + frag_n + 8 * (j / 2)]. The store
// and the NaN recomputation (rung 15) both place sums by it.
__device__ __forceinline__ void transposed_element(int i, int m0, int n0, int frag_n, int t, int& m, int& n) {
    m = m0 + 8 * (i / 4) + 2 * t + (i & 1);
    n = n0 + frag_n + 8 * ((i >> 1) & 1);
}

// The block's results to C through the epilogue. `acc` points at kAcc
// registers: inlined and unrolled, every index is a constant.
__device__ __forceinline__ void store_transposed(const float* acc, float* C, int M, int N, int m0, int n0,
                                                 int frag_n, int t, float alpha, float beta) {
#pragma unroll
    for (int i = 0; i < kAcc; ++i) {
        int m, n;
        transposed_element(i, m0, n0, frag_n, t, m, n);
        if (m < M && n < N) {
            float* c = C + (size_t)m * N + n;
            *c = gemm_epilogue(acc[i], alpha, beta, c);
        }
    }
}
