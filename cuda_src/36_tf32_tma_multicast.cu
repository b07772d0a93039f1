// Rung 36 — rung 17 in clusters of two blocks side by side along N that share A by TMA multicast.
//
// What changed from rung 17: blocks are launched in clusters of CLUSTER
// (__cluster_dims__), and the two blocks of a cluster always compute
// horizontally neighbouring C tiles (the same rows m0, columns n0 and
// n0 + BN) over the same K range, so they need the same A tiles. Each
// block's producer loads half of the A box (BM/2 rows) multicast into both
// blocks, and its own B boxes; every slot's "full" barrier in each block
// counts the whole A box and its B boxes. A slot is refilled only when the
// consumers of both blocks are done with it (a multicast writes into both),
// so each consumer warp releases a slot on the "empty" barrier of both
// blocks, and each "empty" barrier waits for all their warps.
//
// What it removes: a third of the L2-to-SM traffic of rung 17's 256 x 128
// tiles. Per K tile of 32 a block reads A (BM x 32 floats: 32 KiB at BM =
// 256) and B (32 x 128: 16 KiB) from L2; shared, A costs each block half.
// TF32 moves twice the bytes of BF16 per multiply at half the rate, so it
// asks the L2 for as many bytes a second as the 16-bit rungs do, which
// needed multicast to reach cuBLAS (rungs 24-27); and under the H200's power
// cap every byte not moved is energy the tensor cores can spend instead.
//
// Why A and not B (the 16-bit rungs share B): rung 17 computes C transposed,
// A is the shared-memory operand wgmma reads by descriptor and the larger
// box (BM rows against BN = 128 columns), so sharing it saves the most.
//
// CLUSTER = 1 is rung 17's schedule (each block loads its own A): where the
// tiles are one column of them, a pair's second block would only compute
// columns past N.
#include "common.cuh"
#include "ptx.cuh"
#include "tma.cuh"
#include "split_k.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "wgmma.cuh"
#include "wgmma_tiles.cuh"
#include "tma_tiles.cuh"
#include "cluster.cuh"

#ifndef CLUSTER
#define CLUSTER 2
#endif
#ifndef NODIMS
#define NODIMS 0
#endif
static_assert(CLUSTER == 1 || CLUSTER == 2, "clusters of 1 or 2 blocks side by side along N");
static_assert(BM % (8 * CLUSTER) == 0, "each block's part of the A box is whole 1024-byte swizzle atoms");
constexpr int kAShare = BM / CLUSTER;                          // A rows each block loads for the cluster
constexpr int kReleases = CLUSTER * kConsumerThreads / 32;     // arrivals that free a slot

// The cluster's units: pair tiles (BM rows x CLUSTER * BN columns, grouped as rung 17's tiles) times K
// splits. Rank r of the cluster takes the pair tile's r-th BN columns; where the tile columns do not fill
// the last pair, its second block computes columns past N (TMA reads zeros there; its stores are guarded).
__device__ __forceinline__ int pair_tiles(int M, int N) {
    return CEIL_DIV(M, BM) * CEIL_DIV(CEIL_DIV(N, BN), CLUSTER);
}

__device__ __forceinline__ WorkUnit pair_unit(int u, int tiles, int k_tiles, int splits, int M, int N,
                                              unsigned rank) {
    WorkUnit w = work_unit(u, tiles, k_tiles, splits, M, CEIL_DIV(CEIL_DIV(N, BN), CLUSTER) * BN);
    w.n0 = (CLUSTER * (w.n0 / BN) + rank) * BN;
    return w;
}

// The producer (one thread): every K tile of every unit of this cluster: its half of the A box, multicast
// into both blocks, and its own B boxes.
__device__ __forceinline__ void pair_produce(const TmaRing& ring, const Maps& maps, int M, int N, int K, int splits,
                                             unsigned rank, int cluster, int clusters) {
    const int tiles = pair_tiles(M, N), k_tiles = CEIL_DIV(K, BK);
    int it = 0;  // K tiles issued: slot it % STAGES, its phase (it / STAGES) & 1
    for (int u = cluster; u < tiles * splits; u += clusters) {
        const WorkUnit w = pair_unit(u, tiles, k_tiles, splits, M, N, rank);
        for (int kt = w.k_begin; kt < w.k_end; ++kt, ++it) {
            const int s = it % STAGES;
            if (it >= STAGES) mbar_wait(ring.empty_bar(s), (it / STAGES - 1) & 1);
            if constexpr (CLUSTER == 1) {
                ring.issue(maps, s, w.m0, w.n0, kt);
                continue;
            }
            mbar_arrive_expect_tx(ring.full_bar(s), kTileBytes);  // the whole A box and this block's B boxes
            tma_load_2d_multicast(ring.a(s) + rank * kAShare * kRowBytes, *maps.a[0], kt * BK, w.m0 + rank * kAShare,
                                  ring.full_bar(s), (1u << CLUSTER) - 1);
#pragma unroll
            for (int box = 0; box < kBBoxes; ++box)
                tma_load_2d(ring.b(s) + box * kBBoxBytes, *maps.b, w.n0 + 32 * box, kt * BK, ring.full_bar(s));
        }
    }
    // The tail: wait until every consumer warp of the cluster has released the last use of each slot, so no
    // peer's arrival is still on its way to this block's barriers when it ends (half_cluster.cuh's reason).
    if (CLUSTER > 1 || !NODIMS)
    for (int i = it > STAGES ? it - STAGES : 0; i < it; ++i) mbar_wait(ring.empty_bar(i % STAGES), (i / STAGES) & 1);
}

// Slot s is free for both producers once this warp's wgmmas on it have retired.
__device__ __forceinline__ void pair_release(const TmaRing& ring, int s) {
    if constexpr (CLUSTER == 1) {
        mbar_arrive(ring.empty_bar(s));
    } else {
#pragma unroll
        for (unsigned cta = 0; cta < CLUSTER; ++cta) mbar_arrive_cluster(ring.empty_bar(s), cta);
    }
}

#ifndef DEFER
#define DEFER 0
#endif
static_assert(!DEFER || BM <= 128, "DEFER holds two accumulator sets: BM <= 128");
constexpr int kDeferParts = DEFER ? 4 : 0;  // the previous unit's results go out in this many parts

// Part `part` of kDeferParts of a unit's results (rows 8i + .. for i in the part's range of kAcc / 4),
// as BFragment::store writes them: into C, or split, raw sums into the split's partials.
__device__ __forceinline__ void store_part(const BFragment& frag, const float (&acc)[kAcc], const WorkUnit& w,
                                           int part, float* C, float* partials, int M, int N, int splits,
                                           float alpha, float beta) {
    constexpr int kRowsPer = kAcc / 4 / (kDeferParts ? kDeferParts : 1);
    float* out = splits == 1 ? C : partials + (size_t)w.split * M * N;
    const float a = splits == 1 ? alpha : 1.0f, b = splits == 1 ? beta : 0.0f;
    const int t = frag.t;
    if (N % 2 == 0 && (reinterpret_cast<unsigned long long>(out) & 7) == 0) {
        const int n = w.n0 + frag.col0;
        if (n >= N) return;
#pragma unroll
        for (int i = part * kRowsPer; i < (part + 1) * kRowsPer; ++i)
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int m = w.m0 + 8 * i + 2 * t + r;
                if (m < M) {
                    float* c = out + (size_t)m * N + n;
                    *reinterpret_cast<float2*>(c) = gemm_epilogue2(make_float2(acc[4 * i + r], acc[4 * i + 2 + r]), a, b, c);
                }
            }
        return;
    }
#pragma unroll
    for (int i = part * kRowsPer; i < (part + 1) * kRowsPer; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int m = w.m0 + 8 * i + 2 * t + (j & 1), n = w.n0 + (j >> 1 ? frag.col1 : frag.col0);
            if (m < M && n < N) {
                float* c = out + (size_t)m * N + n;
                *c = gemm_epilogue(acc[4 * i + j], a, b, c);
            }
        }
}

#if NODIMS
extern "C" __global__ void __launch_bounds__(kBlockThreads, 1)
#else
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(kBlockThreads, 1)
#endif
sgemm(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, int M, int N, int K,
      float alpha, float beta, float* __restrict__ C, float* __restrict__ partials, int splits) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned smem0 = smem_addr(smem);
    const Maps maps = {{&map_a}, &map_b};
    const TmaRing ring = make_ring(smem, maps, kReleases);
    const unsigned rank = cluster_rank();
    if constexpr (CLUSTER == 1) __syncthreads();  // the barriers are initialised
    else cluster_sync();  // both blocks' barriers are initialised before any multicast or arrival reaches them

    const int tiles = pair_tiles(M, N), k_tiles = CEIL_DIV(K, BK);
    const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    const int tid = threadIdx.x, lane = tid % 32;

    if (tid >= kConsumerThreads) {  // the producer warpgroup: its last warpgroup, one thread working
        setmaxnreg_dec<kProducerRegs>();
        if (tid == kConsumerThreads) pair_produce(ring, maps, M, N, K, splits, rank, cluster, clusters);
        return;
    }

    setmaxnreg_inc<kConsumerRegs>();
    const BFragment frag(tid / 128, (tid / 32) % 4, lane);
    float raw[BK / 8][4];
    unsigned f0[BK / 8][4], f1[BK / 8][4];
    int it = 0;  // K tiles consumed by this block so far

    // Rung 17's step: round and issue this K tile's wgmmas, retire the previous tile's and release its
    // slot (in both blocks), then wait for the next tile and read its B fragments.
    auto step = [&](float (&acc)[kAcc], int kt, int k_begin, int k_end, unsigned (&f)[BK / 8][4]) {
        wgmma_tile(acc, f, raw, ring.a(it % STAGES));
        wgmma_wait<1>();
        if (kt > k_begin) {
            __syncwarp();
            if (lane == 0) pair_release(ring, (it - 1) % STAGES);
        }
        ++it;
        if (kt + 1 < k_end) {
            mbar_wait(ring.full_bar(it % STAGES), (it / STAGES) & 1);
            frag.read(raw, smem, smem0, ring.b(it % STAGES));
        }
    };

    // One unit into `acc`; after each of its first kDeferParts K tiles, part p of the previous unit's
    // results (`prev`, when `store_prev`) goes out, under this unit's wgmmas.
    auto unit_into = [&](float (&acc)[kAcc], const WorkUnit& w, float (&prev)[kAcc], const WorkUnit& pw,
                         bool store_prev) {
#pragma unroll
        for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
        int kt = w.k_begin;
        if (w.k_begin < w.k_end) {  // an empty split still writes its zeros
            mbar_wait(ring.full_bar(it % STAGES), (it / STAGES) & 1);
            frag.read(raw, smem, smem0, ring.b(it % STAGES));
        }
#pragma unroll
        for (int part = 0; part < kDeferParts; ++part) {
            if (kt < w.k_end) step(acc, kt++, w.k_begin, w.k_end, part % 2 ? f1 : f0);
            if (store_prev) store_part(frag, prev, pw, part, C, partials, M, N, splits, alpha, beta);
        }
#pragma unroll 1
        for (; kt + 1 < w.k_end; kt += 2) {
            step(acc, kt, w.k_begin, w.k_end, f0);
            step(acc, kt + 1, w.k_begin, w.k_end, f1);
        }
        if (kt < w.k_end) step(acc, kt, w.k_begin, w.k_end, f0);
        if (w.k_begin < w.k_end) {
            wgmma_wait<0>();
            __syncwarp();
            if (lane == 0) pair_release(ring, (it - 1) % STAGES);  // the unit's last K tile
        }
    };

#if DEFER
    // Two accumulator sets take turns (BM <= 128: 2 x BM/2 registers): a unit's results are stored while
    // the next unit's first K tiles run on the tensor cores, not between the two.
    float acc0[kAcc], acc1[kAcc];
    WorkUnit w0{}, w1{};
    bool pending1 = false;  // acc1 holds a unit not yet stored
#pragma unroll 1
    for (int u = cluster; u < tiles * splits; u += 2 * clusters) {
        w0 = pair_unit(u, tiles, k_tiles, splits, M, N, rank);
        unit_into(acc0, w0, acc1, w1, pending1);
        if (u + clusters >= tiles * splits) {
#pragma unroll
            for (int part = 0; part < kDeferParts; ++part)
                store_part(frag, acc0, w0, part, C, partials, M, N, splits, alpha, beta);
            pending1 = false;
            break;
        }
        w1 = pair_unit(u + clusters, tiles, k_tiles, splits, M, N, rank);
        unit_into(acc1, w1, acc0, w0, true);
        pending1 = true;
    }
    if (pending1) {
#pragma unroll
        for (int part = 0; part < kDeferParts; ++part)
            store_part(frag, acc1, w1, part, C, partials, M, N, splits, alpha, beta);
    }
#else
    float acc[kAcc];
#pragma unroll 1
    for (int u = cluster; u < tiles * splits; u += clusters) {
        const WorkUnit w = pair_unit(u, tiles, k_tiles, splits, M, N, rank);
#pragma unroll
        for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
        if (w.k_begin < w.k_end) {  // an empty split still writes its zeros
            mbar_wait(ring.full_bar(it % STAGES), (it / STAGES) & 1);
            frag.read(raw, smem, smem0, ring.b(it % STAGES));
            int kt = w.k_begin;
#pragma unroll 1
            for (; kt + 1 < w.k_end; kt += 2) {
                step(acc, kt, w.k_begin, w.k_end, f0);
                step(acc, kt + 1, w.k_begin, w.k_end, f1);
            }
            if (kt < w.k_end) step(acc, kt, w.k_begin, w.k_end, f0);
            wgmma_wait<0>();
            __syncwarp();
            if (lane == 0) pair_release(ring, (it - 1) % STAGES);  // the unit's last K tile
        }
        if (splits == 1) frag.store(acc, C, M, N, w.m0, w.n0, alpha, beta);
        else frag.store(acc, partials + (size_t)w.split * M * N, M, N, w.m0, w.n0, 1.0f, 0.0f);  // raw sums
    }
#endif
    // No cluster barrier at the end (half_cluster.cuh: its fence made every warp wait for its stores of C);
    // the producer's tail keeps the block alive while the peer may still arrive on its barriers.
}

#else
// Without sm_90a (sm_80/86/89, later GPUs): rung 14's TF32 mma.sync path.
#include "tf32_mma_sync.cuh"

extern "C" __global__ void __launch_bounds__(TC_THREADS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    tf32_mma_sync_gemm<false>(M, N, K, alpha, A, nullptr, B, beta, C);
}
#endif
