// The cluster machinery of the 16-bit multicast rungs (24 on): blocks in
// clusters of CLUSTER stacked along M share every B tile by TMA multicast.
// CLUSTER = 1 (rung 30 at small shapes) is the same kernel without sharing:
// each block loads its own B, as rung 22 does.
// Include inside `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, after
// half_tma.cuh and cluster.cuh. A rung's kernel is `cluster_gemm` with its
// own epilogue.
//
// A cluster walks groups of CLUSTER tile rows: unit u is tile column tn of
// tile rows CLUSTER * pm + 0 .. CLUSTER - 1 (GROUP_M units grouped for L2
// reuse); rank r takes row CLUSTER * pm + r. When the tile rows do not fill
// the last group, its blocks past the end compute tiles past M: TMA fills
// their A with zeros, their stores are guarded (or clipped) away, and they
// still load and share their part of B. With KSPLIT > 2 and CLUSTER = 1
// (rungs 30-33) a unit is a C tile and one of KSPLIT parts of K's tiles
// (cluster_unit; half_partials.cuh writes its sums).

#ifndef KSPLIT
#define KSPLIT 1
#endif

constexpr int kClusterBlocks = CLUSTER;  // blocks per cluster, stacked along M (1, 2 or 4)
// K's tiles in this many parts, one unit each (half_partials.cuh, no clusters); a split in clusters is
// half_split.cuh's
constexpr int kUnitSplits = CLUSTER == 1 && KSPLIT > 2 ? KSPLIT : 1;
static_assert(kClusterBlocks == 1 || kClusterBlocks == 2 || kClusterBlocks == 4, "clusters of 1, 2 or 4 blocks");
// Fewer B boxes than blocks (one 64-column box in pairs): each block loads its 1/CLUSTER of the box's 64 k rows
// (whole 1 KiB swizzle atoms, so the rows land where the whole box would put them); the driver's B map has
// that box (b_box_rows).
constexpr bool kClusterPartBox = kHalfBBoxes < kClusterBlocks;
static_assert(kClusterPartBox ? kHalfBBoxes == 1 && kClusterBlocks == 2
                              : kHalfBBoxes % kClusterBlocks == 0,
              "each block of a cluster multicasts the same number of B boxes, or half of the one box in pairs");
constexpr int kClusterShare = kClusterPartBox ? 1 : kHalfBBoxes / kClusterBlocks;  // B boxes each block loads
constexpr int kClusterPartRows = kHalfBK / kClusterBlocks;  // k rows of the box each block loads (kClusterPartBox)
// With B3D a block's boxes are neighbours, one 3-D load; the driver's B map holds them as one box.
constexpr bool kClusterB3D = B3D && kClusterShare > 1;

// Arrivals that free a slot: every consumer warp of every block of the cluster.
constexpr int kClusterReleases = kClusterBlocks * kHalfConsumers / 32;

// Units (groups of CLUSTER vertically neighbouring C tiles) of an M x N product.
__device__ __forceinline__ int cluster_units(int M, int N) {
    return CEIL_DIV(CEIL_DIV(M, BM), kClusterBlocks) * CEIL_DIV(N, BN);
}

// The C tile of this block in unit `unit`.
__device__ __forceinline__ void cluster_tile_origin(int unit, int M, int N, unsigned rank, int& m0, int& n0) {
    int pm, tn;
    grouped_tile(unit, CEIL_DIV(CEIL_DIV(M, BM), kClusterBlocks), CEIL_DIV(N, BN), GROUP_M, pm, tn);
    m0 = (kClusterBlocks * pm + rank) * BM;
    n0 = tn * BN;
}

// What unit `unit` of the grid (cluster_units x kUnitSplits of them) computes: the C tile of this block
// and K tiles [k_begin, k_begin + k_count), part `split` of K (empty where the parts do not divide K).
struct ClusterUnit {
    int m0, n0, k_begin, k_count, split, first_row;
};
__device__ __forceinline__ ClusterUnit cluster_unit(int unit, int M, int N, int K, unsigned rank) {
    const int k_tiles = CEIL_DIV(K, kHalfBK);
    ClusterUnit u{0, 0, 0, k_tiles, 0, 0};
    if constexpr (kUnitSplits > 1) {
        const int tiles = cluster_units(M, N), per = CEIL_DIV(k_tiles, kUnitSplits);
        u.split = unit / tiles;
        unit -= u.split * tiles;
        u.k_begin = min(k_tiles, u.split * per);
        u.k_count = min(k_tiles, u.k_begin + per) - u.k_begin;
    }
    cluster_tile_origin(unit, M, N, rank, u.m0, u.n0);
    u.first_row = u.m0;
    // pairs of 64 x 64 tiles: the last row of tiles moves up to end at M (no rows of zeros to load; the rows it
    // shares with the tile above are that tile's to store)
    if constexpr (kClusterPartBox) u.m0 = half_tail_origin(u.m0, M);
    return u;
}

// The producer (one thread): for each unit of this cluster, its K tiles: its
// own A box and its share of the B boxes, multicast into every block.
__device__ __forceinline__ void cluster_produce(const HalfRing& ring, const TensorMap& map_a, const TensorMap& map_b,
                                                int M, int N, int K, unsigned rank, int cluster, int clusters) {
    const int units = cluster_units(M, N) * kUnitSplits;
    int it = 0, s = 0;   // K tiles issued; the slot of the next (it % STAGES)
    unsigned phase = 1;  // that slot's phase at its use before (it / STAGES - 1) & 1: no division per K tile
    for (int unit = cluster; unit < units; unit += clusters) {
        const ClusterUnit u = cluster_unit(unit, M, N, K, rank);
        const int m0 = u.m0, n0 = u.n0;
        for (int kt = u.k_begin; kt < u.k_begin + u.k_count; ++kt, ++it, half_next_slot(s, phase)) {
            if (it >= STAGES) mbar_wait(ring.empty_bar(s), phase);
            if constexpr (kClusterBlocks == 1) {  // no cluster: rung 22's loads
                ring.issue(map_a, map_b, s, m0, n0, kt);
                continue;
            }
            mbar_arrive_expect_tx(ring.full_bar(s), ring.tx);  // own A box + every B box
            tma_load_2d(ring.a(s), map_a, kt * kHalfBK, m0, ring.full_bar(s));
            if constexpr (kClusterPartBox) {
                tma_load_2d_multicast(ring.b(s) + rank * kClusterPartRows * 128, map_b, n0,
                                      kt * kHalfBK + rank * kClusterPartRows, ring.full_bar(s), (1u << kClusterBlocks) - 1);
            } else if constexpr (kClusterB3D) {
                tma_load_3d_multicast(ring.b(s) + rank * kClusterShare * kHalfBBoxBytes, map_b, 0, kt * kHalfBK,
                                      n0 / 64 + rank * kClusterShare, ring.full_bar(s), (1u << kClusterBlocks) - 1);
            } else {
#pragma unroll
                for (int box = rank; box < kHalfBBoxes; box += kClusterBlocks)
                    tma_load_2d_multicast(ring.b(s) + box * kHalfBBoxBytes, map_b, n0 + 64 * box, kt * kHalfBK,
                                          ring.full_bar(s), (1u << kClusterBlocks) - 1);
            }
        }
    }
    // The tail: wait until every consumer warp of the cluster has released the last use of each slot.
    // Then no peer's arrival is still on its way to this block's barriers (and every multicast into it
    // has landed: its consumers waited for each), so the block may end without a cluster barrier.
    for (int i = it > STAGES ? it - STAGES : 0; i < it; ++i) mbar_wait(ring.empty_bar(i % STAGES), (i / STAGES) & 1);
}

// Slot s is free for every producer of the cluster once this warp's wgmmas on it have retired.
__device__ __forceinline__ void cluster_release(const HalfRing& ring, int s, int lane) {
    if (lane == 0) {
        if constexpr (kClusterBlocks == 1) {
            mbar_arrive(ring.empty_bar(s));
        } else {
#pragma unroll
            for (unsigned cta = 0; cta < kClusterBlocks; ++cta) mbar_arrive_cluster(ring.empty_bar(s), cta);
        }
    }
}

// The body of a multicast rung's kernel (launched in clusters of CLUSTER
// blocks of kHalfBlock threads): the ring, the producer warpgroup, and the
// consumer warpgroups, which after each C tile call
// `epilogue(ring, acc, m0, n0, wg, owned)` to write their 64 rows of it
// (owned(i): every 8-column group i of the tile is theirs; with a split
// through partials one more argument, the unit's part of K) and after their
// last tile `finish()`.
template <typename Epilogue, typename Finish>
__device__ __forceinline__ void cluster_gemm(unsigned char* smem, const TensorMap& map_a, const TensorMap& map_b,
                                             int M, int N, int K, Epilogue&& epilogue, Finish&& finish) {
    const HalfRing ring = make_half_ring(smem, map_a, map_b, M, kClusterReleases);
    const unsigned rank = cluster_rank();
    if constexpr (kClusterBlocks == 1) __syncthreads();  // the barriers are initialised
    else cluster_sync();  // every block's barriers are initialised before any multicasts into it

    const int cluster = blockIdx.x / kClusterBlocks, clusters = gridDim.x / kClusterBlocks;
    const int tid = threadIdx.x, lane = tid % 32;

    if (tid >= kHalfConsumers) {  // the producer warpgroup
        half_setmaxnreg_dec<kHalfProducerRegs>();
        if (tid == kHalfConsumers) cluster_produce(ring, map_a, map_b, M, N, K, rank, cluster, clusters);
    } else {
        half_setmaxnreg_inc<kHalfConsumerRegs>();
        const int wg = tid / 128, units = cluster_units(M, N) * kUnitSplits;
        float acc[kHalfAcc];
        int it = 0;  // K tiles consumed by this block so far
#pragma unroll 1
        for (int unit = cluster; unit < units; unit += clusters) {
            const ClusterUnit u = cluster_unit(unit, M, N, K, rank);
            const auto all = [](int) { return true; };
            if constexpr (kUnitSplits == 1) {
                half_consume(ring, acc, u.k_count, it, wg, [&](int s) { cluster_release(ring, s, lane); });
                if constexpr (kClusterPartBox) epilogue(ring, acc, u.m0, u.n0, wg, all, u.first_row);
                else epilogue(ring, acc, u.m0, u.n0, wg, all);
            } else {
                if (u.k_count > 0) {
                    half_consume(ring, acc, u.k_count, it, wg, [&](int s) { cluster_release(ring, s, lane); });
                } else {  // an empty part of K still writes its zeros: the reduction reads every slice
#pragma unroll
                    for (int i = 0; i < kHalfAcc; ++i) acc[i] = 0.0f;
                }
                epilogue(ring, acc, u.m0, u.n0, wg, all, u.split);
            }
        }
        finish();
    }
    // No cluster barrier at the end: its release (MEMBAR.ALL.GPU in SASS) made every consumer warp wait
    // for its stores of C to land, about 10 points of cuBLAS at 1024^3; the producer's tail keeps the
    // block alive while a peer may still arrive on its barriers.
}
