// Split-K in a cluster (rungs 30-33; sm_90a). The S = KSPLIT = CLUSTER
// blocks of a cluster (__cluster_dims__(S, 1, 1)) compute the same C tile,
// rank r over the r-th of S parts of its K tiles, each through its own TMA
// ring (no multicast: they read different K). Then they share out the sums
// through distributed shared memory: rank r finishes the r-th of S near-equal
// slices of the tile's 8-column groups (split_first).
// Each consumer warpgroup writes the accumulators of every other rank's slice
// into its outgoing buffers, and one of its threads copies each slice into
// its owner's incoming buffers with one bulk copy (cp.async.bulk, a DMA that
// counts its bytes on the owner's exchange barrier, as TMA loads do on the
// ring's). The block waits on its own exchange barrier, adds what arrived in
// the order of the senders' ranks (the same C every run), tells each sender
// its copy is done (so the sender may end: the copy read its shared memory)
// and hands its slice to the epilogue. One C tile per cluster (the grid is
// not persistent), so every buffer and barrier is used once. With S = 2
// (pairs) a block finishes whole 64-column boxes, which leave by TMA store;
// with S = 3 or 4 its 40, 48 or 32 columns are stored directly.
//
// Include inside `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, after
// half_tma.cuh, cluster.cuh and half_store.cuh.

constexpr int kSplitWays = KSPLIT;               // blocks of a cluster, one part of K each
constexpr int kSplitPeers = kSplitWays - 1;
constexpr int kSplitGroups = kHalfAcc / 4;       // 8-column groups of the tile: acc[4g..4g+3] is group g
// Rank r finishes groups split_first(r) .. split_first(r + 1) - 1: the r-th of kSplitWays near-equal slices
// (2 ways: 8 groups each, whole 64-column boxes; 3 ways: 6, 5 and 5; 4 ways: 4 each).
__host__ __device__ constexpr int split_first(int r) { return (r * kSplitGroups + kSplitWays - 1) / kSplitWays; }
__host__ __device__ constexpr int split_owner(int g) { return g * kSplitWays / kSplitGroups; }
// The bytes of one consumer warpgroup's part of rank r's slice: 16 per group and thread.
__host__ __device__ constexpr int split_bytes(int r) { return (split_first(r + 1) - split_first(r)) * 16 * 128; }
constexpr int kSplitWgBytes = split_bytes(0);  // one buffer: a warpgroup's widest slice (the first)
// Slices of whole 64-column boxes (8 groups) can leave by TMA store; narrower ones are stored directly.
constexpr bool kSplitWholeBoxes = kSplitGroups % (8 * kSplitWays) == 0;
static_assert(KSPLIT == CLUSTER && KSPLIT >= 2 && KSPLIT <= 8, "a K split in a cluster of 2 to 8 blocks");
static_assert(16 * STAGES + 16 <= 1024, "the two exchange barriers fit in the 1 KiB after the ring's barriers");

// After the ring's barriers: the exchange barrier (the peers' copies into this block have landed) and the
// copied barrier (this block's copies have landed in every peer). After the staging boxes of C: each
// warpgroup's kSplitPeers incoming buffers, then its outgoing ones. In each, float4 q (the q-th group of the
// slice) of a warpgroup's thread t is at 16 (q * 128 + t).
__device__ __forceinline__ unsigned exchange_bar(const HalfRing& ring) { return ring.empty + 8 * STAGES; }
__device__ __forceinline__ unsigned copied_bar(const HalfRing& ring) { return ring.empty + 8 * STAGES + 8; }
__device__ __forceinline__ unsigned split_buffer(const HalfRing& ring, int i) {
    return staging(ring, kHalfConsumerWarpgroups, 0) + i * kSplitWgBytes;
}
// The buffer of this block's exchange with rank `other` (!= rank): peers numbered by rank, skipping its own.
__device__ __forceinline__ int peer_index(int other, unsigned rank) { return other < (int)rank ? other : other - 1; }
__device__ __forceinline__ unsigned incoming(const HalfRing& ring, int wg, int from, unsigned rank) {
    return split_buffer(ring, wg * kSplitPeers + peer_index(from, rank));
}
__device__ __forceinline__ unsigned outgoing(const HalfRing& ring, int wg, int to, unsigned rank) {
    return split_buffer(ring, (kHalfConsumerWarpgroups + wg) * kSplitPeers + peer_index(to, rank));
}
// Where a thread's group g lies in a buffer of its owner's slice.
__device__ __forceinline__ unsigned split_at(unsigned buffer, int g) {
    return buffer + 16 * ((g - split_first(split_owner(g))) * 128 + threadIdx.x % 128);
}

// `bytes` of this block's shared memory at `src` into block `cta`'s at `dst`, counted on its barrier `bar`
// (addresses are this block's own, mapped into the peer's window).
__device__ __forceinline__ void bulk_copy_to_peer(unsigned dst, unsigned src, unsigned bytes, unsigned bar,
                                                  unsigned cta) {
    asm volatile("{\n.reg .b32 rdst, rbar;\nmapa.shared::cluster.u32 rdst, %0, %3;\nmapa.shared::cluster.u32 rbar, %2, %3;\n"
                 "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [rdst], [%1], %4, [rbar];\n}\n"
                 ::"r"(dst), "r"(src), "r"(bar), "r"(cta), "r"(bytes) : "memory");
}

// f(SplitRank<rank>{}): the block's rank as a constant, so that code over the slices indexes acc by
// constants (acc stays in registers) and branches on no rank at run time.
template <int R>
struct SplitRank {
    static constexpr int value = R;
};
template <int R = 0, typename F>
__device__ __forceinline__ void with_split_rank(unsigned rank, F&& f) {
    if constexpr (R + 1 < kSplitWays) {
        if (rank != R) {
            with_split_rank<R + 1>(rank, f);
            return;
        }
    }
    f(SplitRank<R>{});
}

// split_stage: every group of acc that another rank owns into this block's outgoing buffer for that rank;
// split_add: this block's groups of acc += a peer's incoming buffer.
template <int kRank>
__device__ __forceinline__ void split_stage(const float (&acc)[kHalfAcc], const HalfRing& ring, int wg) {
#pragma unroll
    for (int g = 0; g < kSplitGroups; ++g) {
        if (split_owner(g) == kRank) continue;
        asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n"
                     ::"r"(split_at(outgoing(ring, wg, split_owner(g), kRank), g)), "f"(acc[4 * g]),
                     "f"(acc[4 * g + 1]), "f"(acc[4 * g + 2]), "f"(acc[4 * g + 3]) : "memory");
    }
}
template <int kRank>
__device__ __forceinline__ void split_add(float (&acc)[kHalfAcc], unsigned in) {
#pragma unroll
    for (int g = split_first(kRank); g < split_first(kRank + 1); ++g) {
        float x, y, z, w;
        asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                     : "=f"(x), "=f"(y), "=f"(z), "=f"(w) : "r"(split_at(in, g)) : "memory");
        acc[4 * g] += x, acc[4 * g + 1] += y, acc[4 * g + 2] += z, acc[4 * g + 3] += w;
    }
}

// The body of a split kernel (launched in clusters of KSPLIT blocks of
// kHalfBlock threads, a cluster per C tile): the ring, the producer, and the
// consumer warpgroups, which call `epilogue(ring, acc, m0, n0, wg, owned)`
// with owned(i) true for the 8-column groups i of this block's slice, then
// `finish()`.
template <typename Epilogue, typename Finish>
__device__ __forceinline__ void split_gemm(unsigned char* smem, const TensorMap& map_a, const TensorMap& map_b,
                                           int M, int N, int K, Epilogue&& epilogue, Finish&& finish) {
    const HalfRing ring = make_half_ring(smem, map_a, map_b, M);
    const unsigned rank = cluster_rank();
    if (threadIdx.x == 0) {  // the peers' copies complete one phase: every warpgroup's slice from each peer
        mbar_init(exchange_bar(ring), 1);
        mbar_arrive_expect_tx(exchange_bar(ring), kSplitPeers * kHalfConsumerWarpgroups * split_bytes(rank));
        mbar_init(copied_bar(ring), kSplitPeers * kHalfConsumerWarpgroups);  // each peer's warpgroups, once each
        mbar_init_fence();
    }
    cluster_sync();  // every block's barriers are initialised before any arrives on another's

    // rank r: K tiles [r * per, (r + 1) * per) that exist (the last ranks have none when K is short)
    const int k_tiles = CEIL_DIV(K, kHalfBK), per = CEIL_DIV(k_tiles, kSplitWays);
    const int k0 = min(k_tiles, (int)rank * per), count = min(k_tiles, k0 + per) - k0;
    int m0, n0;
    half_tile_origin(blockIdx.x / kSplitWays, M, N, m0, n0);
    const int first_row = m0;
    m0 = half_tail_origin(m0, M);
    const int tid = threadIdx.x, lane = tid % 32;

    if (tid >= kHalfConsumers) {  // the producer warpgroup: one thread issues this block's K tiles
        half_setmaxnreg_dec<kHalfProducerRegs>();
        if (tid == kHalfConsumers) {
            int s = 0;
            unsigned phase = 1;  // that of the slot's use before
            for (int kt = 0; kt < count; ++kt) {
                if (kt >= STAGES) mbar_wait(ring.empty_bar(s), phase);
                ring.issue(map_a, map_b, s, m0, n0, k0 + kt);
                half_next_slot(s, phase);
            }
        }
        return;
    }

    half_setmaxnreg_inc<kHalfConsumerRegs>();
    const int wg = tid / 128;
    float acc[kHalfAcc];
    if (count > 0) {
        int it = 0;
        half_consume(ring, acc, count, it, wg, [&](int s) {
            if (lane == 0) mbar_arrive(ring.empty_bar(s));
        });
    } else {
#pragma unroll
        for (int i = 0; i < kHalfAcc; ++i) acc[i] = 0.0f;
    }
    with_split_rank(rank, [&](auto r) { split_stage<decltype(r)::value>(acc, ring, wg); });
    fence_proxy_async();  // the outgoing sums, visible to the bulk copies
    named_barrier(1 + wg, 128);
    const bool leader = tid % 128 == 0;
    if (leader)
        for (int r = 0; r < kSplitWays; ++r)
            if (r != (int)rank)
                bulk_copy_to_peer(incoming(ring, wg, rank, r), outgoing(ring, wg, r, rank), split_bytes(r),
                                  exchange_bar(ring), r);
    mbar_wait(exchange_bar(ring), 0);  // every peer's sums for our slice have landed
    if (leader)
        for (int r = 0; r < kSplitWays; ++r)
            if (r != (int)rank) mbar_arrive_cluster(copied_bar(ring), r);
    with_split_rank(rank, [&](auto mine) {
#pragma unroll
        for (int r = 0; r < kSplitWays; ++r)  // in rank order: the same sum every run
            if (r != decltype(mine)::value) split_add<decltype(mine)::value>(acc, incoming(ring, wg, r, rank));
    });
    epilogue(ring, acc, m0, n0, wg, [rank](int group) { return split_owner(group) == (int)rank; }, first_row);
    finish();
    if (leader) mbar_wait(copied_bar(ring), 0);  // our copies have read our outgoing buffers: the block may end
}
