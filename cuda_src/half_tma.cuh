// The TMA ring of the 16-bit warp-specialized rungs (22 on), after tma.cuh
// (TensorMap, mbarriers, tma_load_2d), wgmma.cuh, wgmma_half.cuh and
// half.cuh (which also holds copy_rows16, the padding copy of the driver).
// Include it inside `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`.
//
// K tiles are 64 elements: one 128-byte swizzled row of A per m, the span
// of the 128-byte swizzle. A slot holds the A box (BM rows x 64, K-major,
// as wgmma's A descriptor reads it) and BN/64 B boxes (64 k rows x 64 n,
// MN-major). Each slot has a "full" mbarrier (TMA counts the slot's bytes
// onto it) and an "empty" one (each consumer warp arrives once its wgmmas
// on the slot have retired).
//
// B3D (rungs 32-33): the B map is 3-D, 64-column chunks side by side
// (gemmbench/gpu/tensormap.py), so one TMA instruction loads all the boxes
// of a slot that a block issues, where rungs 22-31 issue one per box.

#include "tma_3d.cuh"

constexpr int kHalfBK = 64;
constexpr int kHalfConsumerWarpgroups = BM / 64;  // one per 64 rows of the C tile
constexpr int kHalfConsumers = 128 * kHalfConsumerWarpgroups;
constexpr int kHalfBlock = kHalfConsumers + 128;   // + the producer warpgroup
constexpr int kHalfABytes = BM * kHalfBK * 2;
constexpr int kHalfBBoxBytes = kHalfBK * 64 * 2;
constexpr int kHalfBBoxes = BN / 64;
constexpr int kHalfSlot = kHalfABytes + kHalfBBoxes * kHalfBBoxBytes;  // = the TMA bytes of one K tile where M >= BM
constexpr int kHalfAcc = BN / 2;  // FP32 accumulators per consumer thread (64 x BN per warpgroup)
static_assert(BM == 64 || BM == 128 || BM == 192, "BM = 64 rows per consumer warpgroup, 1 to 3 of them");
static_assert(BN == 64 || BN == 128 || BN == 256, "BN is the wgmma N: 64, 128 or 256");
static_assert(STAGES >= 2, "at least two slots");

// The producer keeps 40 registers; the consumers share the rest (setmaxnreg: multiples of 8). The
// block starts with the registers __launch_bounds__ gives each thread, and setmaxnreg.inc waits
// until the producer's setmaxnreg.dec has released enough of them: a consumer count that asks for
// more than the block holds waits forever. 232 for up to 2 consumer warpgroups, 152 for 3.
constexpr int kHalfProducerRegs = 40;
constexpr int kHalfLaunchRegs = 65536 / kHalfBlock / 8 * 8;
constexpr int kHalfConsumerRegsLeft = (kHalfLaunchRegs * kHalfBlock - kHalfProducerRegs * 128) / kHalfConsumers / 8 * 8;
constexpr int kHalfConsumerRegs = kHalfConsumerRegsLeft < 232 ? kHalfConsumerRegsLeft : 232;
static_assert(kHalfProducerRegs * 128 + kHalfConsumerRegs * kHalfConsumers <= kHalfLaunchRegs * kHalfBlock,
              "the consumers' registers come from those the block started with");

// The rows of A's box: the tile's BM, or M where all of C's rows fit one tile (a few tokens). TMA fills the
// rows of a box past the matrix with zeros, and that fill costs: 48 zero rows a K tile took rung 32 at
// 16 x 8192 x 8192 from 35.5 us (M = 64) to 46.7. The slot's rows past M then keep whatever they held; wgmma's
// row r of C reads only row r of A, and no row past M is ever stored. The driver's map has the same box.
__device__ __forceinline__ int half_a_rows(int M) { return M < BM ? M : BM; }

struct HalfRing {
    unsigned base, full, empty;  // shared addresses: STAGES slots, then STAGES full and STAGES empty barriers
    unsigned tx;                 // the bytes TMA writes into a slot: the A box (half_a_rows) and BN/64 B boxes

    __device__ __forceinline__ unsigned a(int s) const { return base + s * kHalfSlot; }
    __device__ __forceinline__ unsigned b(int s) const { return base + s * kHalfSlot + kHalfABytes; }
    __device__ __forceinline__ unsigned full_bar(int s) const { return full + 8 * s; }
    __device__ __forceinline__ unsigned empty_bar(int s) const { return empty + 8 * s; }

    // One thread: K tile kt of the C tile at (m0, n0) into slot s. Parts of a box outside the matrix arrive as zeros.
    __device__ __forceinline__ void issue(const TensorMap& map_a, const TensorMap& map_b, int s, int m0, int n0,
                                          int kt) const {
        mbar_arrive_expect_tx(full_bar(s), tx);
        tma_load_2d(a(s), map_a, kt * kHalfBK, m0, full_bar(s));
        if constexpr (B3D && kHalfBBoxes > 1) {  // one box is a 2-D map (rungs.half.b_box_chunks)
            tma_load_3d(b(s), map_b, 0, kt * kHalfBK, n0 / 64, full_bar(s));
        } else {
#pragma unroll
            for (int box = 0; box < kHalfBBoxes; ++box)
                tma_load_2d(b(s) + box * kHalfBBoxBytes, map_b, n0 + 64 * box, kt * kHalfBK, full_bar(s));
        }
    }
};

// The next K tile's place in the ring: its slot, and its barriers' phase, which flips each time the slots wrap
// round. Producers and consumers carry (slot, phase) from one K tile to the next rather than dividing a K-tile
// count by STAGES (a producer's phase is that of the slot's use before: it starts at 1).
__device__ __forceinline__ void half_next_slot(int& s, unsigned& phase) {
    if (++s == STAGES) s = 0, phase ^= 1;
}

// The ring in dynamic shared memory, aligned to 1024 bytes for the swizzle;
// thread 0 initialises the barriers, the caller then syncs. A slot is free
// again after `releases` arrivals (the consumer warps of every block whose
// loads write into it).
__device__ __forceinline__ HalfRing make_half_ring(unsigned char* smem, const TensorMap& map_a,
                                                   const TensorMap& map_b, int M, int releases = kHalfConsumers / 32) {
    HalfRing ring;
    ring.base = (smem_addr(smem) + 1023u) & ~1023u;
    ring.full = ring.base + STAGES * kHalfSlot;
    ring.empty = ring.full + 8 * STAGES;
    ring.tx = kHalfSlot - (BM - half_a_rows(M)) * kHalfBK * 2;
    if (threadIdx.x == 0) {
        tma_prefetch_map(map_a);
        tma_prefetch_map(map_b);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(ring.full_bar(s), 1);
            mbar_init(ring.empty_bar(s), releases);
        }
        mbar_init_fence();
    }
    return ring;
}

// The corner of C tile number `tile` (GROUP_M tile rows at a time: L2 reuse).
__device__ __forceinline__ void half_tile_origin(int tile, int M, int N, int& m0, int& n0) {
    int tm, tn;
    grouped_tile(tile, CEIL_DIV(M, BM), CEIL_DIV(N, BN), GROUP_M, tm, tn);
    m0 = tm * BM;
    n0 = tn * BN;
}

// wgmma descriptors of K tile slot s, k16 step ks: A rows 64 * wg.. of the
// A box (K-major: 32 bytes per k16 inside the swizzled row), B rows 16 * ks..
// (MN-major: 16 rows of 128 bytes per k16; the next 64 columns one box on).
__device__ __forceinline__ unsigned long long half_desc_a(const HalfRing& ring, int s, int wg, int ks) {
    return make_desc<128>(ring.a(s) + wg * 64 * 128 + 32 * ks);
}
__device__ __forceinline__ unsigned long long half_desc_b(const HalfRing& ring, int s, int ks) {
    return make_desc_mn128(ring.b(s) + ks * 16 * 128, kHalfBBoxBytes);
}

// One consumer warpgroup's main loop over the K tiles of one C tile: acc = its
// 64 rows of A @ B. `it` counts the K tiles this block has consumed;
// `release(s)`, called by every lane of each warp, frees slot s once the
// warp's wgmmas on it have retired (one arrival per warp, by its lane 0).
// The loop carries the slot and its phase from one K tile to the next and
// offsets slot 0's descriptors by the slot's bytes (their address field
// counts 16 bytes): no division and no descriptor built per K tile. ncu's
// stall samples had the consumer warps mostly issuing that bookkeeping
// between a K tile's wgmmas; without it, rung 32 BF16 on the H200, in one
// run: 256 x 8192 x 8192 88.9 -> 93.4% of cuBLAS, 512 x 4096 x 4096 92.6 ->
// 95.4, 1024^3 96.5 -> 100.1.
template <typename Release>
__device__ __forceinline__ void half_consume(const HalfRing& ring, float (&acc)[kHalfAcc], int k_tiles, int& it,
                                             int wg, Release release) {
    int s = it % STAGES;
    unsigned phase = (it / STAGES) & 1;
    const unsigned long long desc_a = half_desc_a(ring, 0, wg, 0), desc_b = half_desc_b(ring, 0, 0);
    int last = 0;  // the slot of the K tile before
#pragma unroll 1
    for (int kt = 0; kt < k_tiles; ++kt) {
        mbar_wait(ring.full_bar(s), phase);
        __syncwarp();  // lanes may have left the wait apart; wgmma needs all 32
        wgmma_fence();
        const unsigned long long slot = (unsigned)(s * (kHalfSlot >> 4));
#pragma unroll
        for (int ks = 0; ks < kHalfBK / 16; ++ks)  // k16 step ks: A 32 bytes on, B 16 rows of 128 bytes
            wgmma_half_ss<BN>(acc, desc_a + slot + 2 * ks, desc_b + slot + 128 * ks, kt > 0 || ks > 0);
        wgmma_commit();
        wgmma_wait<1>();  // the previous K tile's wgmmas have retired: release its slot
        if (kt > 0) release(last);
        last = s;
        half_next_slot(s, phase);
    }
    it += k_tiles;
    wgmma_wait<0>();
    __syncwarp();
    release(last);  // the tile's last K tile
}

// The last row of tiles where C has more than one row of tiles and a quarter or more of that row's tile
// would lie past M: the tile at m0 moves up to end at row M (its first row M - BM), so A's box lies inside
// the matrix and TMA fills no rows with zeros (the cost half_a_rows removes where C is one row of tiles);
// the rows it then shares with the tile above are that tile's to store (the epilogue's first_row), and it
// stores its own directly. Elsewhere m0: a few rows of zeros cost less than those direct stores (H200, rung
// 32, BF16, pairs of 64 x 128 tiles: 100 x 4096 x 4096, 28 rows past M, 75.2 -> 86.3% of cuBLAS moved;
// 127 x 4096 x 4096, 1 row, 77.3 -> 71.6).
__device__ __forceinline__ int half_tail_origin(int m0, int M) {
    return M > BM && 4 * (m0 + BM - M) >= BM ? M - BM : m0;
}

// A consumer warpgroup's 64 rows of the C tile at (m0, n0) through the
// epilogue, straight from its accumulators to C (store_pair: guarded, and
// reading C where beta != 0): the 8-column groups i (acc[4i..4i+3]) for which
// owned(i) holds, or all of them, of the rows from first_row on (a tile moved
// up by half_tail_origin). acc[4i + j] is row 16 * warp + lane / 4 +
// 8 * (j / 2) of the warpgroup's 64, column 8i + 2 (lane % 4) + j % 2.
template <typename Owned>
__device__ __forceinline__ void half_store_rows(elem16* C, int M, int N, int m0, int n0, int wg, const float (&acc)[kHalfAcc],
                                                float alpha, float beta, Owned owned, int first_row = 0) {
    const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
    const bool pairs = N % 2 == 0 && (reinterpret_cast<unsigned long long>(C) & 3) == 0;
    const int m = m0 + 64 * wg + 16 * warp + lane / 4, n = n0 + 2 * (lane % 4);
    const bool upper = m >= first_row, lower = m + 8 >= first_row;
#pragma unroll
    for (int i = 0; i < kHalfAcc / 4; ++i) {
        if (!owned(i)) continue;
        if (upper) store_pair(C, M, N, m, n + 8 * i, acc[4 * i], acc[4 * i + 1], alpha, beta, pairs);
        if (lower) store_pair(C, M, N, m + 8, n + 8 * i, acc[4 * i + 2], acc[4 * i + 3], alpha, beta, pairs);
    }
}
__device__ __forceinline__ void half_store_rows(elem16* C, int M, int N, int m0, int n0, int wg, const float (&acc)[kHalfAcc],
                                                float alpha, float beta) {
    half_store_rows(C, M, N, m0, n0, wg, acc, alpha, beta, [](int) { return true; });
}

// Registers per thread of the calling warpgroup: down to kRegs (the producer), up to kRegs (the consumers).
template <int kRegs>
__device__ __forceinline__ void half_setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void half_setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
