// The BF16 / FP16 tensor-core GEMM of rung 20 (and the path rungs 22-23
// take without sm_90a): mma.sync m16n8k16 with FP32 accumulators, its
// fragments read from shared memory by ldmatrix, the tiles copied by
// cp.async into a ring of HM_STAGES slots. Needs half.cuh and ptx.cuh
// before it, and sm_80 or later.
//
// Block tile HM_BM x HM_BN, K tiles of 64; warps of HM_WM x HM_WN each.
// Shared layout: the A slot is HM_BM rows of 64 elements (128 bytes, 8
// chunks of 16 bytes), the B slot 64 rows (k) of HM_BN elements. Chunk c of
// row r is stored at chunk c ^ (r % 8): ldmatrix's eight row addresses of a
// matrix (8 consecutive rows, one chunk) then fall in 8 different bank
// groups, and so do a cp.async warp's chunks of one row. Without the XOR
// the rows, 128 or 2*HM_BN bytes apart, all start in the same bank.

constexpr int kHmBK = 64;
constexpr int kHmWarpsM = HM_BM / HM_WM, kHmWarpsN = HM_BN / HM_WN;
constexpr int kHmThreads = 32 * kHmWarpsM * kHmWarpsN;
constexpr int kHmMT = HM_WM / 16, kHmNT = HM_WN / 8;      // m16 and n8 tiles per warp
constexpr int kHmAChunks = HM_BM * kHmBK / 8, kHmBChunks = kHmBK * HM_BN / 8;  // 16-byte chunks per tile
constexpr int kHmBRowChunks = HM_BN / 8;
constexpr int kHmABytes = HM_BM * kHmBK * 2, kHmBBytes = kHmBK * HM_BN * 2, kHmSlot = kHmABytes + kHmBBytes;
static_assert(HM_WM % 16 == 0 && HM_WN % 16 == 0, "warp tiles are m16 x n16 pieces");
static_assert(HM_BN % 64 == 0, "a B row holds whole groups of 8 chunks (the swizzle's period)");
static_assert(kHmAChunks % kHmThreads == 0 && kHmBChunks % kHmThreads == 0, "whole chunks per thread");
static_assert(HM_STAGES >= 2, "at least two slots");

__device__ __forceinline__ unsigned hm_swz(int row, int chunk) { return (unsigned)((chunk ^ (row & 7)) << 4); }

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// d += a (m16 x k16, row) * b (k16 x n8, col), FP32 accumulators.
__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if BF16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#endif
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// 16 bytes of a tile row at `g` (elems_left elements remain in the row
// from g; row_ok: the row is inside the matrix) into shared `dst`, zeros
// outside. `vector` (block-uniform: the row pitch and the base are 16-byte
// multiples) lets a chunk be one cp.async, all in or all out; otherwise the
// elements go one by one through registers.
__device__ __forceinline__ void hm_copy_chunk(unsigned dst, unsigned char* dst_ptr, const elem16* g,
                                              const elem16* any, bool row_ok, int elems_left, bool vector) {
    if (vector) {
        const bool ok = row_ok && elems_left > 0;
        cp_async16(dst, ok ? g : any, ok ? 16 : 0);
        return;
    }
    elem16 v[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = row_ok && e < elems_left ? g[e] : (elem16)0;
    uint4 packed;
    packed.x = v[0] | ((unsigned)v[1] << 16);
    packed.y = v[2] | ((unsigned)v[3] << 16);
    packed.z = v[4] | ((unsigned)v[5] << 16);
    packed.w = v[6] | ((unsigned)v[7] << 16);
    *reinterpret_cast<uint4*>(dst_ptr) = packed;
}

__device__ __forceinline__ void hm_load_tiles(unsigned char* slot, const elem16* A, const elem16* B, int M, int N,
                                              int K, int m0, int n0, int k0, bool vec_a, bool vec_b) {
    const unsigned base = smem_addr(slot);
#pragma unroll
    for (int i = 0; i < kHmAChunks / kHmThreads; ++i) {
        const int p = threadIdx.x + i * kHmThreads, r = p / 8, c = p % 8;
        const int m = m0 + r, k = k0 + 8 * c;
        const unsigned off = r * 128 + hm_swz(r, c);
        hm_copy_chunk(base + off, slot + off, A + (size_t)m * K + k, A, m < M, K - k, vec_a);
    }
#pragma unroll
    for (int i = 0; i < kHmBChunks / kHmThreads; ++i) {
        const int p = threadIdx.x + i * kHmThreads, r = p / kHmBRowChunks, c = p % kHmBRowChunks;
        const int k = k0 + r, n = n0 + 8 * c;
        const unsigned off = kHmABytes + r * (2 * HM_BN) + hm_swz(r, c);
        hm_copy_chunk(base + off, slot + off, B + (size_t)k * N + n, B, k < K, N - n, vec_b);
    }
}

// One 64-deep K tile of a warp's HM_WM x HM_WN results from slot `slot`.
__device__ __forceinline__ void hm_mma_tile(float (&acc)[kHmMT][kHmNT][4], unsigned slot, int wm, int wn, int lane) {
#pragma unroll
    for (int kk = 0; kk < kHmBK / 16; ++kk) {
        unsigned a[kHmMT][4], b[kHmNT][2];
#pragma unroll
        for (int mt = 0; mt < kHmMT; ++mt) {  // matrices: rows 0-7 / 8-15 at k 0-7, then at k 8-15
            const int r = wm * HM_WM + 16 * mt + lane % 16, c = 2 * kk + lane / 16;
            ldmatrix_x4(a[mt], slot + r * 128 + hm_swz(r, c));
        }
#pragma unroll
        for (int np = 0; np < kHmNT / 2; ++np) {  // k 0-7 / 8-15 of n-tile 2np, then of 2np + 1, transposed
            const int r = 16 * kk + lane % 8 + 8 * ((lane / 8) % 2), c = (wn * HM_WN + 16 * np) / 8 + lane / 16;
            unsigned t[4];
            ldmatrix_x4_trans(t, slot + kHmABytes + r * (2 * HM_BN) + hm_swz(r, c));
            b[2 * np][0] = t[0];
            b[2 * np][1] = t[1];
            b[2 * np + 1][0] = t[2];
            b[2 * np + 1][1] = t[3];
        }
#pragma unroll
        for (int mt = 0; mt < kHmMT; ++mt)
#pragma unroll
            for (int nt = 0; nt < kHmNT; ++nt) mma16816(acc[mt][nt], a[mt], b[nt][0], b[nt][1]);
    }
}

__device__ __forceinline__ void half_mma_sync_gemm(int M, int N, int K, float alpha, const elem16* __restrict__ A,
                                                   const elem16* __restrict__ B, float beta, elem16* __restrict__ C) {
    extern __shared__ __align__(128) unsigned char hm_smem[];
    const int tiles_m = CEIL_DIV(M, HM_BM), tiles_n = CEIL_DIV(N, HM_BN);
    int tm, tn;
    grouped_tile(blockIdx.x, tiles_m, tiles_n, HM_GROUP, tm, tn);
    const int m0 = tm * HM_BM, n0 = tn * HM_BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / kHmWarpsN, wn = warp % kHmWarpsN;
    const bool vec_a = K % 8 == 0 && is_aligned16(A), vec_b = N % 8 == 0 && is_aligned16(B);
    const int k_tiles = CEIL_DIV(K, kHmBK);

    float acc[kHmMT][kHmNT][4];
#pragma unroll
    for (int mt = 0; mt < kHmMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kHmNT; ++nt)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[mt][nt][j] = 0.0f;

    // The ring: K tile kt lives in slot kt % HM_STAGES; HM_STAGES - 1 tiles are in flight ahead of the one computed.
#pragma unroll
    for (int s = 0; s < HM_STAGES - 1; ++s) {
        if (s < k_tiles) hm_load_tiles(hm_smem + s * kHmSlot, A, B, M, N, K, m0, n0, s * kHmBK, vec_a, vec_b);
        cp_async_commit();
    }
#pragma unroll 1
    for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<HM_STAGES - 2>();
        __syncthreads();  // tile kt landed for every thread; slot (kt - 1) % HM_STAGES is free again
        const int next = kt + HM_STAGES - 1;
        if (next < k_tiles)
            hm_load_tiles(hm_smem + (next % HM_STAGES) * kHmSlot, A, B, M, N, K, m0, n0, next * kHmBK, vec_a, vec_b);
        cp_async_commit();
        hm_mma_tile(acc, smem_addr(hm_smem + (kt % HM_STAGES) * kHmSlot), wm, wn, lane);
    }

    // Accumulator (mt, nt): rows g and g + 8 of the m16 tile, columns 2t and 2t + 1 of the n8 tile.
    const bool pairs = N % 2 == 0 && (reinterpret_cast<unsigned long long>(C) & 3) == 0;
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int mt = 0; mt < kHmMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kHmNT; ++nt) {
            const int m = m0 + wm * HM_WM + 16 * mt + g, n = n0 + wn * HM_WN + 8 * nt + 2 * t;
            store_pair(C, M, N, m, n, acc[mt][nt][0], acc[mt][nt][1], alpha, beta, pairs);
            store_pair(C, M, N, m + 8, n, acc[mt][nt][2], acc[mt][nt][3], alpha, beta, pairs);
        }
}
