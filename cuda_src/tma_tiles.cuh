// The TMA tile ring rungs 16-18 share on Hopper. Include it inside
// `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, after wgmma_tiles.cuh and tma.cuh.
//
// Ring slot: A_SOURCES A boxes (BM rows x BK floats each, BK*4-byte swizzle:
// the K-major layout wgmma's descriptor reads; 2 for 3xTF32's big and small
// halves), then BN/32 B boxes (BK rows x 32
// floats, 128-byte swizzle: chunk c of row k sits at chunk c ^ (k % 8)).
// Each slot has a "full" mbarrier (TMA counts the tile's bytes onto it) and
// an "empty" one (each consumer warp arrives once its wgmmas on the slot
// have retired). A TMA box has no padding; instead the B fragments come
// from a permutation of the columns that reads conflict-free (b_column).

#ifndef A_SOURCES
#define A_SOURCES 1
#endif
constexpr int kASources = A_SOURCES;                               // A boxes per K tile
constexpr int kBBoxes = BN / 32;                                   // 32-column boxes of B per K tile
constexpr int kBBoxBytes = BK * 128;
constexpr int kSlotBytes = kASources * kAStage + kBBoxes * kBBoxBytes;
constexpr unsigned kTileBytes = kASources * BM * BK * 4 + BK * BN * 4;  // TMA bytes per K tile (edges: zeros)
static_assert(kAStage % 1024 == 0 && kBBoxBytes % 1024 == 0, "swizzled boxes need 1024-byte aligned slots");

// The tensor maps of one GEMM: kASources of A (or its halves), one of B.
struct Maps {
    const TensorMap* a[kASources];
    const TensorMap* b;
};

struct TmaRing {
    unsigned base, full, empty;  // shared addresses: STAGES slots, STAGES full and STAGES empty barriers

    __device__ __forceinline__ unsigned a(int s, int src = 0) const { return base + s * kSlotBytes + src * kAStage; }
    __device__ __forceinline__ unsigned b(int s) const { return base + s * kSlotBytes + kASources * kAStage; }
    __device__ __forceinline__ unsigned full_bar(int s) const { return full + 8 * s; }
    __device__ __forceinline__ unsigned empty_bar(int s) const { return empty + 8 * s; }

    // One thread: K tile kt of the C tile at (m0, n0) into slot s.
    __device__ __forceinline__ void issue(const Maps& maps, int s, int m0, int n0, int kt) const {
        mbar_arrive_expect_tx(full_bar(s), kTileBytes);
#pragma unroll
        for (int src = 0; src < kASources; ++src) tma_load_2d(a(s, src), *maps.a[src], kt * BK, m0, full_bar(s));
#pragma unroll
        for (int box = 0; box < kBBoxes; ++box)
            tma_load_2d(b(s) + box * kBBoxBytes, *maps.b, n0 + 32 * box, kt * BK, full_bar(s));
    }
};

// The ring in dynamic shared memory (aligned to 1024 bytes for the
// swizzle); thread 0 initialises its barriers, the caller then syncs.
__device__ __forceinline__ TmaRing make_ring(unsigned char* smem, const Maps& maps, int consumer_warps) {
    TmaRing ring;
    ring.base = (smem_addr(smem) + 1023u) & ~1023u;
    ring.full = ring.base + STAGES * kSlotBytes;
    ring.empty = ring.full + 8 * STAGES;
    if (threadIdx.x == 0) {
        for (int src = 0; src < kASources; ++src) tma_prefetch_map(*maps.a[src]);
        tma_prefetch_map(*maps.b);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(ring.full_bar(s), 1);
            mbar_init(ring.empty_bar(s), consumer_warps);
        }
        mbar_init_fence();
    }
    return ring;
}

#ifndef PAIR_COLS
#define PAIR_COLS 0
#endif
// Column of the B (and C) tile that wgmma row 16*warp + g + 8*half of
// consumer warpgroup wg stands for (any permutation of the warpgroup's 64
// columns computes the same C; it decides how fragments and results move).
// PAIR_COLS = 0 (rungs 16, 18): a warp's fragment load (fixed half, rows
// k = t and t + 4 of a k8 step, g = 0..7) takes columns 4c..4c+3 and
// 16+4c..16+4c+3 of one 32-column box, c = 2*(warp%2) + half: chunks c and
// c + 4, which the swizzle spreads over 32 distinct banks for the four rows t.
// PAIR_COLS = 1 (rung 17): a thread's two columns are neighbours (col1 =
// col0 + 1, col0 even), so one 64-bit load reads both fragments of a row k,
// and one 64-bit store writes both results of a row of C. Lanes 0-15 (g =
// 0..3) take column pairs 0-1, 2-3 of chunk c and of chunk c + 4, c =
// 2*(warp%2) + g/4 (lanes 16-31: c + 1): after the swizzle (chunk ^ k%8,
// k%8 = t or t + 4) each half-warp's 16 8-byte pieces cover all 32 banks
// once, conflict-free; a warp's store of C fills 8 whole 32-byte sectors
// (4 rows x 2 runs of 8 columns) where PAIR_COLS = 0 half-fills 8.
__device__ __forceinline__ int b_column(int wg, int warp, int half, int g) {
#if PAIR_COLS
    return 32 * (2 * wg + warp / 2) + 4 * (2 * (warp % 2) + g / 4) + 16 * ((g % 4) / 2) + 2 * (g % 2) + half;
#else
    return 32 * (2 * wg + warp / 2) + 4 * (2 * (warp % 2) + half) + (g % 4) + 16 * (g / 4);
#endif
}

// A consumer thread's view of the B tile: its two fragment columns.
struct BFragment {
    int col0, col1, t;
    unsigned off0, off1;  // byte offsets of the columns' boxes and in-row positions, before the swizzle

    __device__ __forceinline__ BFragment(int wg, int warp, int lane)
        : col0(b_column(wg, warp, 0, lane / 4)), col1(b_column(wg, warp, 1, lane / 4)), t(lane % 4),
          off0((col0 / 32) * kBBoxBytes), off1((col1 / 32) * kBBoxBytes) {}

    // This thread's raw (not yet rounded) B values of the K tile whose B boxes start at `bs`.
    __device__ __forceinline__ void read(float (&raw)[BK / 8][4], const unsigned char* smem, unsigned smem0,
                                         unsigned bs) const {
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks)
#if PAIR_COLS
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // rows k = 8ks + t and + 4: (col0, col1 = col0 + 1) in one 8-byte load
                const int k = 8 * ks + t + 4 * h;
                const unsigned addr = bs + off0 + swizzle<128>(k * 128 + (col0 % 32) * 4);
                const float2 v = *reinterpret_cast<const float2*>(smem + (addr - smem0));
                raw[ks][2 * h] = v.x;
                raw[ks][2 * h + 1] = v.y;
            }
#else
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int k = 8 * ks + t + 4 * (j / 2), col = j % 2 ? col1 : col0;
                const unsigned addr = bs + (j % 2 ? off1 : off0) + swizzle<128>(k * 128 + (col % 32) * 4);
                raw[ks][j] = *reinterpret_cast<const float*>(smem + (addr - smem0));
            }
#endif
    }

    // Where accumulator i of the C tile at (m0, n0) belongs: acc[4i' + j] =
    // D(wgmma row 16*warp + g + 8*(j/2), 8i' + 2t + j%2) = C[m0 + 8i' + 2t + j%2][n0 + (j/2 ? col1 : col0)].
    // The store and the NaN recomputation (rung 18) both place sums by it.
    __device__ __forceinline__ void element(int i, int m0, int n0, int& m, int& n) const {
        m = m0 + 8 * (i / 4) + 2 * t + (i & 1);
        n = n0 + ((i >> 1) & 1 ? col1 : col0);
    }

    // The accumulators to C.
    __device__ __forceinline__ void store(const float* acc, float* C, int M, int N, int m0, int n0, float alpha,
                                          float beta) const {
        int m, n;
#if PAIR_COLS
        // col1 = col0 + 1, col0 even: acc[4i + r] and acc[4i + 2 + r] are neighbours in a row of C,
        // one 8-byte store where N is even (then n < N implies n + 1 < N) and C 8-byte aligned.
        if (N % 2 == 0 && (reinterpret_cast<unsigned long long>(C) & 7) == 0) {
            element(0, m0, n0, m, n);
            if (n >= N) return;
#pragma unroll
            for (int i = 0; i < kAcc / 4; ++i)
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    element(4 * i + r, m0, n0, m, n);
                    if (m < M) {
                        float* c = C + (size_t)m * N + n;
                        *reinterpret_cast<float2*>(c) =
                            gemm_epilogue2(make_float2(acc[4 * i + r], acc[4 * i + 2 + r]), alpha, beta, c);
                    }
                }
            return;
        }
#endif
#pragma unroll
        for (int i = 0; i < kAcc; ++i) {
            element(i, m0, n0, m, n);
            if (m < M && n < N) {
                float* c = C + (size_t)m * N + n;
                *c = gemm_epilogue(acc[i], alpha, beta, c);
            }
        }
    }
};

// Rounds a K tile's raw B fragments to TF32 and issues its BK/8 wgmmas on
// the A tile at `as` (one commit group).
__device__ __forceinline__ void wgmma_tile(float (&acc)[kAcc], unsigned (&f)[BK / 8][4],
                                           const float (&raw)[BK / 8][4], unsigned as) {
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks)
#pragma unroll
        for (int j = 0; j < 4; ++j) f[ks][j] = to_tf32(raw[ks][j]);
    __syncwarp();  // lanes may have parted around a refill or barrier wait; wgmma needs all 32
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) wgmma_tf32_rs<BM>(acc, f[ks], make_desc<kRowBytes>(as + 32 * ks), 1);
    wgmma_commit();
}

// Warp-specialized blocks: the consumer warpgroups (128 threads per 64
// columns of C), then one producer warpgroup, which hands its registers over.
constexpr int kConsumerThreads = kThreads;
[[maybe_unused]] constexpr int kBlockThreads = kConsumerThreads + 128;  // rungs 17-18 (rung 16 shares this file)
constexpr int kProducerRegs = 40, kConsumerRegs = 232;
static_assert(kProducerRegs * 128 + kConsumerRegs * kConsumerThreads <= 65536, "registers per SM");

// The work of a warp-specialized persistent block (rungs 17-18): units
// blockIdx.x, + gridDim.x, ... of tiles * splits. Unit u is the C tile
// u % tiles over the K tiles [k_begin, k_end) of split u / tiles (per =
// ceil(k_tiles / splits) each; a split may be empty when splits does not
// divide k_tiles evenly). With one split a unit is a whole tile, as before.
struct WorkUnit {
    int m0, n0, k_begin, k_end, split;
};

__device__ __forceinline__ WorkUnit work_unit(int u, int tiles, int k_tiles, int splits, int M, int N) {
    WorkUnit w;
    w.split = u / tiles;
    const int per = CEIL_DIV(k_tiles, splits);
    w.k_begin = min(k_tiles, w.split * per);
    w.k_end = min(k_tiles, w.k_begin + per);
    tile_origin_of(u % tiles, M, N, w.m0, w.n0);
    return w;
}

// unit_of<false> is work_unit for a call that does not split K: the whole
// tile, with k_begin = 0 and the unit count known to the compiler.
template <bool kSplit>
struct SplitK {
    static constexpr bool value = kSplit;
};

template <bool kSplit>
__device__ __forceinline__ WorkUnit unit_of(int u, int tiles, int k_tiles, int splits, int M, int N) {
    if constexpr (kSplit) {
        return work_unit(u, tiles, k_tiles, splits, M, N);
    } else {
        WorkUnit w{0, 0, 0, k_tiles, 0};
        tile_origin_of(u, M, N, w.m0, w.n0);
        return w;
    }
}

// The producer of such a block (one thread): every K tile of every unit the
// block walks, each into the next slot once the consumers have released it,
// by `issue(s, m0, n0, kt)` (the ring's own, or rung 18's swapped one).
// The K-tile counter `it` runs across units: slot it % STAGES, barrier phase
// (it / STAGES) & 1. Built unsplit and split (produce_units picks one).
template <bool kSplit, typename Issue>
__device__ __forceinline__ void produce(const TmaRing& ring, int M, int N, int K, int splits, Issue issue) {
    const int tiles = CEIL_DIV(M, BM) * CEIL_DIV(N, BN), k_tiles = CEIL_DIV(K, BK);
    const int units = kSplit ? tiles * splits : tiles;
    int it = 0;
    for (int u = blockIdx.x; u < units; u += gridDim.x) {
        const WorkUnit w = unit_of<kSplit>(u, tiles, k_tiles, splits, M, N);
        for (int kt = w.k_begin; kt < w.k_end; ++kt, ++it) {
            const int s = it % STAGES;
            if (it >= STAGES) mbar_wait(ring.empty_bar(s), (it / STAGES - 1) & 1);
            issue(s, w.m0, w.n0, kt);
        }
    }
}

template <bool kSplit>
__device__ __forceinline__ void produce(const TmaRing& ring, const Maps& maps, int M, int N, int K, int splits) {
    produce<kSplit>(ring, M, N, K, splits, [&](int s, int m0, int n0, int kt) { ring.issue(maps, s, m0, n0, kt); });
}

__device__ __forceinline__ void produce_units(const TmaRing& ring, const Maps& maps, int M, int N, int K,
                                              int splits) {
    if (splits == 1) produce<false>(ring, maps, M, N, K, 1);
    else produce<true>(ring, maps, M, N, K, splits);
}

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs)); }
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs)); }
