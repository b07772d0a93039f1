// A and B swapped (SWAP_AB = 1, rung 18): the ring computes C^T = B^T A^T.
// Include after tma_tiles.cuh.
//
// Why: the warp-specialized rungs compute C transposed, with the B tile as
// wgmma's register operand (64 columns of C per consumer warpgroup: wgmma's
// M) and the A tile as its shared-memory operand (BM rows of C, down to 16:
// wgmma's N). Where N is small and M large (skinny-n, a column GEMV) that
// spends most of the tensor-core work on columns that are not there, and
// rung 18 reads A three times (its per-call split writes A_big and A_small,
// the product reads both) where the product is about as cheap as reading A
// once. Swapped, A is the register operand: TMA loads its rows (boxes of 32
// rows x BK = 32 floats, 128-byte swizzle: the size of a B box), each
// thread splits its fragments in registers as it does B's, so A is read
// once; B^T, transposed and split by pre-passes (O(KN): small here), is the
// shared-memory operand, and N is wgmma's N side, down to 16.
//
// The kernel runs on the swapped problem (its M = N, its N = M, its "A"
// maps are B^T's, its "B" map is A's) and stores C^T of it: C itself.
static_assert(BK == 32, "A's boxes are 32 rows x 128 bytes, the size of a B box");

// One thread: K tile kt of the swapped C tile at (m0, n0) into slot s:
// B^T's rows m0.. and A's rows n0.. (32 per box).
__device__ __forceinline__ void issue_swapped(const TmaRing& ring, const Maps& maps, int s, int m0, int n0, int kt) {
    mbar_arrive_expect_tx(ring.full_bar(s), kTileBytes);
#pragma unroll
    for (int src = 0; src < kASources; ++src) tma_load_2d(ring.a(s, src), *maps.a[src], kt * BK, m0, ring.full_bar(s));
#pragma unroll
    for (int box = 0; box < kBBoxes; ++box)
        tma_load_2d(ring.b(s) + box * kBBoxBytes, *maps.b, kt * BK, n0 + 32 * box, ring.full_bar(s));
}

// The producer of a swapped block: tma_tiles.cuh's `produce`, issuing swapped boxes.
template <bool kSplit>
__device__ __forceinline__ void produce_swapped(const TmaRing& ring, const Maps& maps, int M, int N, int K,
                                                int splits) {
    produce<kSplit>(ring, M, N, K, splits,
                    [&](int s, int m0, int n0, int kt) { issue_swapped(ring, maps, s, m0, n0, kt); });
}

// A consumer thread's view of A's rows (BFragment's counterpart): wgmma row
// 16*warp + g + 8*half of warpgroup wg is row 64*wg + 16*warp + 8*half + g of
// the tile. In a 32-row box a warp's rows g = 0..7 then differ in row % 8, so
// the swizzle puts a fragment load's 32 lanes (rows g, k = t or t + 4 of a k8
// step) on 32 distinct banks.
struct AFragment {
    int row0, row1, t;

    __device__ __forceinline__ AFragment(int wg, int warp, int lane)
        : row0(64 * wg + 16 * warp + lane / 4), row1(row0 + 8), t(lane % 4) {}

    // This thread's raw A values of the K tile whose A boxes start at `bs`.
    __device__ __forceinline__ void read(float (&raw)[BK / 8][4], const unsigned char* smem, unsigned smem0,
                                         unsigned bs) const {
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int k = 8 * ks + t + 4 * (j / 2), row = j % 2 ? row1 : row0;
                const unsigned addr = bs + (row / 32) * kBBoxBytes + swizzle<128>((row % 32) * 128 + k * 4);
                raw[ks][j] = *reinterpret_cast<const float*>(smem + (addr - smem0));
            }
    }

    // Where accumulator i of the swapped C tile at (m0, n0) belongs in C
    // itself: acc[4i' + 2h + e] = D(wgmma row of half h, column 8i' + 2t + e)
    // = C[n0 + (h ? row1 : row0)][m0 + 8i' + 2t + e]. The store and the NaN
    // recomputation both place sums by it.
    __device__ __forceinline__ void element(int i, int m0, int n0, int& m, int& n) const {
        m = n0 + ((i >> 1) & 1 ? row1 : row0);
        n = m0 + 8 * (i / 4) + 2 * t + (i & 1);
    }

    // The accumulators to C (M x N here is the swapped shape: C has N rows
    // of M); the two columns e = 0, 1 are neighbours, one 8-byte store where
    // M is even and C aligned.
    __device__ __forceinline__ void store(const float* acc, float* C, int M, int N, int m0, int n0, float alpha,
                                          float beta) const {
        const bool pairs = M % 2 == 0 && (reinterpret_cast<unsigned long long>(C) & 7) == 0;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            int r, c;
            element(2 * h, m0, n0, r, c);
            if (r >= N) continue;
#pragma unroll
            for (int i = 0; i < kAcc / 4; ++i) {
                element(4 * i + 2 * h, m0, n0, r, c);
                float* out = C + (size_t)r * M + c;
                if (pairs && c < M) {
                    *reinterpret_cast<float2*>(out) =
                        gemm_epilogue2(make_float2(acc[4 * i + 2 * h], acc[4 * i + 2 * h + 1]), alpha, beta, out);
                } else {
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        if (c + e < M) out[e] = gemm_epilogue(acc[4 * i + 2 * h + e], alpha, beta, out + e);
                }
            }
        }
    }
};
