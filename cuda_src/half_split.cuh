// Split-K in a pair of blocks (rungs 30-31; sm_90a). The two blocks of a
// cluster (__cluster_dims__(2, 1, 1)) compute the same C tile, rank 0 over
// the first half of its K tiles and rank 1 over the second, each through its
// own TMA ring (no multicast: they read different K). Then they swap halves
// of their sums through distributed shared memory: rank r finishes the
// 64-column boxes r * kSplitBoxes .. (r + 1) * kSplitBoxes - 1 of every
// warpgroup's rows. Each consumer warpgroup writes the accumulators of the
// other rank's boxes into its outgoing buffer, and one of its threads copies
// them into the peer's incoming buffer with one bulk copy (cp.async.bulk, a
// DMA that counts its bytes on the peer's exchange barrier, as TMA loads do
// on the ring's). The block waits on its own exchange barrier, adds what
// arrived, tells the peer its copy is done (so the peer may end: the copy
// read the peer's shared memory) and hands its boxes to the epilogue. One C
// tile per cluster (the grid is not persistent), so every buffer and
// barrier is used once.
//
// Include inside `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, after
// half_tma.cuh, cluster.cuh and half_store.cuh.

constexpr int kSplitBoxes = kHalfBBoxes / 2;      // 64-column boxes of C each rank finishes
constexpr int kSplitFloats = 32 * kSplitBoxes;    // accumulators a consumer thread sends: 32 per box
constexpr int kSplitWgBytes = kSplitFloats * 4 * 128;  // what one consumer warpgroup sends
static_assert(16 * STAGES + 16 <= 1024, "the two exchange barriers fit in the 1 KiB after the ring's barriers");

// After the ring's barriers: the exchange barrier (the peer's copies into this block have landed) and the
// copied barrier (this block's copies have landed in the peer). After the staging boxes of C: the incoming
// buffer, then the outgoing one. In both, float4 q of a warpgroup's thread t is at 16 (q * 128 + t) of its
// warpgroup's part.
__device__ __forceinline__ unsigned exchange_bar(const HalfRing& ring) { return ring.empty + 8 * STAGES; }
__device__ __forceinline__ unsigned copied_bar(const HalfRing& ring) { return ring.empty + 8 * STAGES + 8; }
__device__ __forceinline__ unsigned incoming(const HalfRing& ring, int wg) {
    return staging(ring, kHalfConsumerWarpgroups, 0) + wg * kSplitWgBytes;
}
__device__ __forceinline__ unsigned outgoing(const HalfRing& ring, int wg) {
    return incoming(ring, kHalfConsumerWarpgroups + wg);
}

// `bytes` of this block's shared memory at `src` into block `cta`'s at `dst`, counted on its barrier `bar`
// (addresses are this block's own, mapped into the peer's window).
__device__ __forceinline__ void bulk_copy_to_peer(unsigned dst, unsigned src, unsigned bytes, unsigned bar,
                                                  unsigned cta) {
    asm volatile("{\n.reg .b32 rdst, rbar;\nmapa.shared::cluster.u32 rdst, %0, %3;\nmapa.shared::cluster.u32 rbar, %2, %3;\n"
                 "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [rdst], [%1], %4, [rbar];\n}\n"
                 ::"r"(dst), "r"(src), "r"(bar), "r"(cta), "r"(bytes) : "memory");
}

// split_stage: acc[kFirst ..] (the peer's boxes) into this warpgroup's outgoing buffer; split_add:
// acc[kFirst ..] (this block's boxes) += the peer's sums for them, from the incoming one. kFirst is a
// constant so acc stays in registers.
template <int kFirst>
__device__ __forceinline__ void split_stage(const float (&acc)[kHalfAcc], unsigned out) {
#pragma unroll
    for (int q = 0; q < kSplitFloats / 4; ++q) {
        const int i = kFirst + 4 * q;
        asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n"
                     ::"r"(out + 16 * (q * 128 + threadIdx.x % 128)), "f"(acc[i]), "f"(acc[i + 1]), "f"(acc[i + 2]),
                     "f"(acc[i + 3]) : "memory");
    }
}
template <int kFirst>
__device__ __forceinline__ void split_add(float (&acc)[kHalfAcc], unsigned in) {
#pragma unroll
    for (int q = 0; q < kSplitFloats / 4; ++q) {
        float x, y, z, w;
        asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                     : "=f"(x), "=f"(y), "=f"(z), "=f"(w) : "r"(in + 16 * (q * 128 + threadIdx.x % 128)) : "memory");
        const int i = kFirst + 4 * q;
        acc[i] += x, acc[i + 1] += y, acc[i + 2] += z, acc[i + 3] += w;
    }
}

// The body of a split-pair kernel (launched in clusters of two blocks of
// kHalfBlock threads, two blocks per C tile): the ring, the producer, and the
// consumer warpgroups, which call `epilogue(ring, acc, m0, n0, wg, owned)`
// with owned(c) true for the boxes c this block finishes, then `finish()`.
template <typename Epilogue, typename Finish>
__device__ __forceinline__ void split_gemm(unsigned char* smem, const TensorMap& map_a, const TensorMap& map_b,
                                           int M, int N, int K, Epilogue&& epilogue, Finish&& finish) {
    const HalfRing ring = make_half_ring(smem, map_a, map_b, M);
    if (threadIdx.x == 0) {  // the peer's copies complete one phase: every warpgroup's outgoing sums
        mbar_init(exchange_bar(ring), 1);
        mbar_arrive_expect_tx(exchange_bar(ring), kHalfConsumerWarpgroups * kSplitWgBytes);
        mbar_init(copied_bar(ring), kHalfConsumerWarpgroups);  // the peer's warpgroups, once each
        mbar_init_fence();
    }
    const unsigned rank = cluster_rank(), peer = rank ^ 1;
    cluster_sync();  // both blocks' barriers are initialised before either arrives on the other's

    const int k_tiles = CEIL_DIV(K, kHalfBK), first = (k_tiles + 1) / 2;
    const int k0 = rank ? first : 0, count = rank ? k_tiles - first : first;  // rank 1 has none when K <= 64
    int m0, n0;
    half_tile_origin(blockIdx.x / 2, M, N, m0, n0);
    const int tid = threadIdx.x, lane = tid % 32;

    if (tid >= kHalfConsumers) {  // the producer warpgroup: one thread issues this block's K tiles
        half_setmaxnreg_dec<kHalfProducerRegs>();
        if (tid == kHalfConsumers)
            for (int kt = 0; kt < count; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES) mbar_wait(ring.empty_bar(s), (kt / STAGES - 1) & 1);
                ring.issue(map_a, map_b, s, m0, n0, k0 + kt);
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
    const unsigned out = outgoing(ring, wg), in = incoming(ring, wg);
    if (rank == 0) split_stage<kSplitFloats>(acc, out);
    else split_stage<0>(acc, out);
    fence_proxy_async();  // the outgoing sums, visible to the bulk copy
    named_barrier(1 + wg, 128);
    const bool leader = tid % 128 == 0;
    if (leader) bulk_copy_to_peer(in, out, kSplitWgBytes, exchange_bar(ring), peer);
    mbar_wait(exchange_bar(ring), 0);  // the peer's halves of our boxes have landed
    if (leader) mbar_arrive_cluster(copied_bar(ring), peer);
    if (rank == 0) split_add<0>(acc, in);
    else split_add<kSplitFloats>(acc, in);
    epilogue(ring, acc, m0, n0, wg, [rank](int c) { return c / kSplitBoxes == (int)rank; });
    finish();
    if (leader) mbar_wait(copied_bar(ring), 0);  // our copies have read our outgoing buffer: the block may end
}
