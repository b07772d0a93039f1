// The TMA-store epilogue of the 16-bit rungs (26 on): a consumer warpgroup
// rounds its 64 x BN accumulators to the 16-bit type into shared memory, 64
// columns at a time (an 8 KiB box in the 128-byte swizzle, so the 32 lanes
// of a store hit 32 different banks), and one of its threads hands the box
// to TMA (a bulk group), which writes it to C while the warpgroup goes on:
// two boxes per warpgroup take turns, and before it refills one the thread
// waits only until TMA has read that box, never for the writes to C. TMA
// clips what lies outside the matrix, so edge tiles need no guards. Include
// inside `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, after half_tma.cuh.

constexpr int kBoxBytes = 64 * 64 * 2;  // one staged box of C: 64 rows (a warpgroup's) x 64 columns

// The staging boxes, two per consumer warpgroup, after the ring and its
// barriers (padded to 1 KiB), aligned to 1024 bytes (the swizzle's period).
__device__ __forceinline__ unsigned staging(const HalfRing& ring, int wg, int box) {
    return ((ring.empty + 8 * STAGES + 1023u) & ~1023u) + (2 * wg + box) * kBoxBytes;
}

// Columns 64c..64c+63 of a consumer warpgroup's accumulators, rounded, into
// the box at `dst`: row r's 16-byte chunk j lands at chunk j ^ (r % 8).
__device__ __forceinline__ void stage_box(unsigned dst, const float (&acc)[kHalfAcc], int c, float alpha) {
    const int lane = threadIdx.x % 32, r = 16 * ((threadIdx.x / 32) % 4) + lane / 4;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const int i = 8 * c + j;  // acc[4i..4i+3]: columns 8i + 2 (lane % 4) + {0, 1} of rows r and r + 8
        const unsigned at = dst + r * 128 + ((j ^ (r % 8)) * 16) + 4 * (lane % 4);
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(at), "r"(pack2(alpha * acc[4 * i], alpha * acc[4 * i + 1])));
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(at + 8 * 128),
                     "r"(pack2(alpha * acc[4 * i + 2], alpha * acc[4 * i + 3])));
    }
}

// The warpgroup's 64 rows of the C tile at (m0, n0), the boxes c (64 columns
// each) whose 8-column groups 8c.. are owned (owned(8c): callers own whole
// boxes here), through TMA. `boxes` counts the boxes this warpgroup has
// staged (which of its two buffers is next).
template <typename Owned>
__device__ __forceinline__ void tma_store_rows(const HalfRing& ring, const TensorMap& map_c, const float (&acc)[kHalfAcc],
                                               int m0, int n0, int wg, float alpha, int& boxes, Owned owned) {
    const bool leader = threadIdx.x % 128 == 0;
#pragma unroll
    for (int c = 0; c < BN / 64; ++c) {
        if (!owned(8 * c)) continue;
        const unsigned box = staging(ring, wg, boxes++ % 2);
        if (leader) bulk_wait_read<1>();  // TMA has read this box's previous contents
        named_barrier(1 + wg, 128);
        stage_box(box, acc, c, alpha);
        fence_proxy_async();  // the box's writes, visible to TMA
        named_barrier(1 + wg, 128);
        if (leader) {
            tma_store_2d(map_c, box, n0 + 64 * c, m0 + 64 * wg);
            bulk_commit();
        }
    }
}

// The epilogue of the TMA-store rungs (26, 30), for cluster_gemm and
// split_gemm: a warpgroup's rows through TMA where C can take them (the
// driver's store_c: 16-byte rows, an aligned C) and beta == 0, else stored
// directly (reading C); finish() keeps the block until TMA has written C.
// owned(i): the tile's 8-column groups i this block stores; first_row: the
// first row of C it stores (above m0 for a tile moved up by half_tail_origin,
// whose rows above first_row are stored by the tile above: directly, since a
// TMA box of 64 rows would write them too).
struct StoreEpilogue {
    const TensorMap& map_c;
    elem16* C;
    int M, N;
    float alpha, beta;
    bool via_tma;
    int boxes = 0;  // boxes this warpgroup has staged

    template <typename Owned>
    __device__ __forceinline__ void operator()(const HalfRing& ring, const float (&acc)[kHalfAcc], int m0, int n0,
                                               int wg, Owned owned, int first_row = 0) {
        if (via_tma && first_row <= m0) tma_store_rows(ring, map_c, acc, m0, n0, wg, alpha, boxes, owned);
        else half_store_rows(C, M, N, m0, n0, wg, acc, alpha, beta, owned, first_row);
    }
    __device__ __forceinline__ void finish() const {
        if (threadIdx.x % 128 == 0) bulk_wait_all();  // C is written before the block ends
    }
};
