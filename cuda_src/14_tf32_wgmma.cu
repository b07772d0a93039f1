// Rung 14 — TF32 tensor cores through Hopper's warpgroup MMA (wgmma).
//
// What changed from rung 11: the FFMA loop is gone. Each K tile is BK/8
// asynchronous `wgmma.mma_async` m64nNk8 instructions (TF32 inputs, FP32
// accumulators in registers) per warpgroup of 128 threads; tiles move global
// -> shared with 16-byte `cp.async` (zero-fill at the edges) through a ring
// of STAGES slots, so the copies of the next STAGES-1 tiles overlap the
// tensor-core work on this one. Why: TF32 wgmma on an H200 has ~7x the
// throughput of FP32 FFMA (~495 vs 67 TFLOP/s dense), at 10 mantissa bits.
//
// Layout: TF32 wgmma only reads K-major operands from shared memory (no
// transpose). A (M x K, K contiguous) is K-major, B (K x N, N contiguous) is
// not. So the kernel computes the C tile transposed, D = B^T * A^T:
//   - wgmma's "A" (its M side = 64 columns of C per warpgroup) is the B tile,
//     taken from REGISTERS: each thread reads its 4 values per k8 step from
//     a plain row-major B tile (row stride BN + 8 floats, so the 4 k-rows a
//     warp reads at once sit 8 banks apart: no conflicts) and rounds them to
//     TF32 (cvt.rna);
//   - wgmma's "B" (its N side = BM rows of C) is the A tile, K-major as
//     stored, read through a shared-memory descriptor in the 128-byte
//     (BK = 32) or 64-byte (BK = 16) swizzled layout that cp.async writes
//     (16-byte chunk index XOR address bits 7..9 resp. 7..8; 1024-byte
//     aligned slots). The tensor cores truncate these to TF32.
//   - the accumulator D(n, m) goes to C[m][n]: each warp store covers 4 rows
//     x 32 contiguous bytes, whole 32-byte sectors.
// A transposing copy of B into a K-major tile would add a shared-memory
// round trip per tile; the register operand needs none.
//
// Pipeline, per K tile kt: round tile kt's raw B fragments (read during tile
// kt-1) to TF32, wgmma.fence, issue the wgmmas, commit; while they run: wait
// for tile kt+1's copies, fence.proxy.async (cp.async writes are generic-
// proxy, wgmma reads through the async proxy), barrier, start the copies of
// tile kt+STAGES-1 into the slot tile kt-1 used (its wgmmas retired in every
// thread before the barrier), read tile kt+1's raw fragments; then
// wgmma.wait_group 0. The wgmma input registers are only written while no
// wgmma is pending: writing them under a pending group (double-buffered
// fragments with wait_group 1) makes ptxas serialize the wgmmas (C7513).
//
// Expected bottleneck, measured on the H200 at 4096^3 (256 x 128 x 32, 4
// stages: ~241 TFLOP/s, ~63% of cuBLAS TF32's ~384): latency of the load
// path, not a throughput limit. Without the loads the wgmma loop alone runs
// at ~394 TFLOP/s and the loads alone take ~0.385 ms (vs 0.57 ms together);
// ncu: L2 ~37% and issue ~36% busy, tensor pipe ~51%. Tried and slower: a
// producer warpgroup (cp.async + mbarriers, setmaxnreg) 149 TFLOP/s; B
// fragments straight from global memory into registers (6-7 A-only stages)
// 197; 256 x 192 tiles (3 warpgroups) 188; BK = 16 with 8 stages 211.
// cuBLAS presumably closes the gap with TMA (tensor maps, multicast in
// clusters), which this tool's plain-pointer launch cannot provide.
//
// Tile: C tile BM x BN, BM = wgmma N in {64, 128, 192, 256}; BN = 64 per
// warpgroup (BN / 64 warpgroups; all issue copies and wgmmas); K tile BK.
// BM / 2 accumulators per thread. Grid: one CTA per C tile, 1-D, rasterized
// in groups of GROUP_M tile rows so that CTAs running together share tiles
// in L2. Shared memory: STAGES * (BM * BK + BK * (BN + 8)) floats + 1 KiB
// (alignment).
// Edges: A and B tiles are zero-filled outside the matrices (cp.async
// src-size 0). 16-byte copies when K % 4 == 0 and A is 16-byte aligned
// (resp. N % 4 == 0 and B), else 4-byte copies per element; the store is
// guarded per element and reads C only when beta != 0 (gemm_epilogue).
#include "common.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// ----------------------------------------------------------------- PTX helpers
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16-byte global -> shared copy; src_bytes = 0 fills the 16 bytes with zeros.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
// 4-byte copy with the same zero-fill rule (edges when 16-byte copies are not allowed).
__device__ __forceinline__ void cp_async4(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending)); }
// Makes this thread's generic-proxy shared writes (cp.async) visible to the async proxy (wgmma).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory"); }
// Round to the nearest TF32 value (ties away), as a 32-bit pattern.
__device__ __forceinline__ unsigned to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// Swizzled byte offset inside a tile whose rows are kRowBytes (64 or 128)
// long and whose base is 1024-byte aligned: the 16-byte chunk index (bits
// 4..) is XORed with the 128-byte line index (bits 7..), as the 64B / 128B
// swizzle modes of the wgmma descriptor expect.
template <int kRowBytes>
__device__ __forceinline__ unsigned swizzle(unsigned off) {
    return off ^ (((off >> 7) & (kRowBytes / 16 - 1)) << 4);
}
// Shared-memory matrix descriptor of a K-major, swizzled operand: start
// address, leading byte offset (unused with these swizzles: one wgmma's 8
// TF32 = 32 bytes stay inside a swizzled row; set to 1), stride byte offset
// = 8 rows, swizzle mode (1 = 128B, 2 = 64B).
template <int kRowBytes>
__device__ __forceinline__ unsigned long long make_desc(unsigned addr) {
    constexpr unsigned long long kMode = kRowBytes == 128 ? 1ull : 2ull;
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) |
           ((unsigned long long)((8 * kRowBytes) >> 4) << 32) | (kMode << 62);
}

// wgmma m64nNk8, TF32 x TF32 -> FP32, A from registers, B from shared memory
// (descriptor); D += A * B when scale_d != 0, D = A * B otherwise.
__device__ __forceinline__ void wgmma_tf32_rs_n64(float (&d)[32], const unsigned (&a)[4],
                                                  unsigned long long desc, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_tf32_rs_n128(float (&d)[64], const unsigned (&a)[4],
                                                  unsigned long long desc, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_tf32_rs_n192(float (&d)[96], const unsigned (&a)[4],
                                                  unsigned long long desc, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %101, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, {%96, %97, %98, %99}, %100, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_tf32_rs_n256(float (&d)[128], const unsigned (&a)[4],
                                                  unsigned long long desc, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

template <int kN>
__device__ __forceinline__ void wgmma_tf32_rs(float (&d)[kN / 2], const unsigned (&a)[4], unsigned long long desc,
                                              int scale_d) {
    if constexpr (kN == 256) wgmma_tf32_rs_n256(d, a, desc, scale_d);
    else if constexpr (kN == 192) wgmma_tf32_rs_n192(d, a, desc, scale_d);
    else if constexpr (kN == 128) wgmma_tf32_rs_n128(d, a, desc, scale_d);
    else wgmma_tf32_rs_n64(d, a, desc, scale_d);
}
// --------------------------------------------------------------- end helpers

constexpr int kWarpgroups = BN / 64;
constexpr int kThreads = 128 * kWarpgroups;
constexpr int kRowBytes = BK * 4;                 // one A-tile row = one swizzled row
constexpr int kLdb = BN + 8;                      // B tile row stride (floats)
constexpr int kAStage = BM * BK * 4;              // bytes
constexpr int kBStage = BK * kLdb * 4;
constexpr int kAhead = STAGES - 1;                // tiles copied ahead of the one computed
constexpr int kAcc = BM / 2;                      // accumulators per thread
static_assert(BN % 64 == 0 && kWarpgroups >= 1 && kWarpgroups <= 4, "BN = 64 per warpgroup, 1..4 warpgroups");
constexpr int kAChunks = BM * BK / 4, kBChunks = BK * BN / 4;  // 16-byte pieces per tile
static_assert(BM == 64 || BM == 128 || BM == 192 || BM == 256, "BM is the wgmma N: 64, 128, 192 or 256");
static_assert(BK == 16 || BK == 32, "BK = 32 (128-byte swizzle) or 16 (64-byte swizzle)");
static_assert(STAGES >= 3, "the tile in the tensor cores, the next one landed, at least one in flight");
static_assert(GROUP_M >= 1, "GROUP_M >= 1");

extern "C" __global__ void __launch_bounds__(kThreads, 1)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // The swizzle pattern repeats every 1024 bytes: align the ring to that.
    const unsigned smem0 = smem_addr(smem);
    const unsigned a_base = (smem0 + 1023u) & ~1023u;
    const unsigned b_base = a_base + STAGES * kAStage;
    const float* b_tiles = reinterpret_cast<const float*>(smem + (b_base - smem0));

    // Tile raster: GROUP_M tile rows at a time, column by column inside a group.
    const int tiles_m = CEIL_DIV(M, BM), tiles_n = CEIL_DIV(N, BN);
    const int per_group = GROUP_M * tiles_n;
    const int group = blockIdx.x / per_group, in_group = blockIdx.x % per_group;
    const int first_m = group * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    const int m0 = (first_m + in_group % group_rows) * BM;
    const int n0 = (in_group / group_rows) * BN;

    const int tid = threadIdx.x;
    const bool a_vec = K % 4 == 0 && is_aligned16(A);  // block-uniform
    const bool b_vec = N % 4 == 0 && is_aligned16(B);
    const int k_tiles = CEIL_DIV(K, BK);

    // Global -> shared copies of K tile kt into ring slot `slot`.
    auto load_tile = [&](int slot, int kt) {
        const int k0 = kt * BK;
        const unsigned as = a_base + slot * kAStage;
        if (a_vec) {
#pragma unroll
            for (int i = 0; i < CEIL_DIV(kAChunks, kThreads); ++i) {
                if (kAChunks % kThreads != 0 && tid + i * kThreads >= kAChunks) break;
                const int p = tid + i * kThreads, r = p / (BK / 4), c = p % (BK / 4);
                const int gm = m0 + r, gk = k0 + 4 * c;
                const bool ok = gm < M && gk < K;  // K % 4 == 0: a chunk is all in or all out
                cp_async16(as + swizzle<kRowBytes>(r * kRowBytes + 16 * c), ok ? A + (size_t)gm * K + gk : A,
                           ok ? 16 : 0);
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
                    cp_async4(dst + 4 * e, ok ? A + (size_t)gm * K + gk + e : A, ok ? 4 : 0);
                }
            }
        }
        const unsigned bs = b_base + slot * kBStage;
        if (b_vec) {
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
    };

    // This thread's place in the wgmma fragments: warp w of warpgroup wg owns
    // rows 16w..16w+15 of the warpgroup's 64 (= columns of C); lane = 4g + t.
    const int wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int frag_n = wg * 64 + warp * 16 + g;  // column of the B tile

    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;

    // Per K tile kt: round the raw B fragments (read while tile kt-1 was in
    // the tensor cores) to TF32, issue tile kt's wgmmas, and while they run:
    // wait for tile kt+1's copies, publish them (proxy fence + barrier), start
    // the copies of tile kt+STAGES-1 into the slot tile kt-1 used (all of its
    // wgmmas retired before the barrier), read tile kt+1's raw fragments; then
    // retire tile kt's wgmmas. The fragment registers the wgmmas read are only
    // written while no wgmma is pending (otherwise ptxas serializes, C7513).
    float raw[BK / 8][4];
    auto load_raw = [&](int slot) {
        const float* bt = b_tiles + slot * (kBStage / 4) + frag_n;
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) {
            raw[ks][0] = bt[(8 * ks + t) * kLdb];
            raw[ks][1] = bt[(8 * ks + t) * kLdb + 8];
            raw[ks][2] = bt[(8 * ks + t + 4) * kLdb];
            raw[ks][3] = bt[(8 * ks + t + 4) * kLdb + 8];
        }
    };

#pragma unroll 1
    for (int s = 0; s < kAhead; ++s) {
        if (s < k_tiles) load_tile(s, s);
        cp_async_commit();
    }
    cp_async_wait<kAhead - 1>();
    fence_proxy_async();
    __syncthreads();
    load_raw(0);

#pragma unroll 1
    for (int kt = 0; kt < k_tiles; ++kt) {
        unsigned f[BK / 8][4];
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks)
#pragma unroll
            for (int j = 0; j < 4; ++j) f[ks][j] = to_tf32(raw[ks][j]);
        wgmma_fence();
        const unsigned as = a_base + (kt % STAGES) * kAStage;
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) wgmma_tf32_rs<BM>(acc, f[ks], make_desc<kRowBytes>(as + 32 * ks), 1);
        wgmma_commit();
        if (kt + 1 < k_tiles) {         // block-uniform
            cp_async_wait<kAhead - 2>();  // this thread's copies of tile kt+1 have landed
            fence_proxy_async();
            __syncthreads();              // everyone's have; every wgmma of tile kt-1 has retired
            if (kt + kAhead < k_tiles) load_tile((kt + kAhead) % STAGES, kt + kAhead);
            cp_async_commit();            // (possibly empty: keeps the group count uniform)
            load_raw((kt + 1) % STAGES);
        }
        wgmma_wait<0>();
    }


    // D(n, m) -> C[m][n]. acc[4i + j]: n = frag_n + 8 * (j / 2), m = 8i + 2t + j % 2.
#pragma unroll
    for (int i = 0; i < kAcc / 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int m = m0 + 8 * i + 2 * t + (j & 1), n = n0 + frag_n + 8 * (j >> 1);
            if (m < M && n < N) {
                float* c = C + (size_t)m * N + n;
                *c = gemm_epilogue(acc[4 * i + j], alpha, beta, c);
            }
        }
}

#else
// Without sm_90a (sm_80/86/89, later GPUs): TF32 on mma.sync tensor cores.
#include "tf32_mma_sync.cuh"

extern "C" __global__ void __launch_bounds__(TC_THREADS)
sgemm(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
      float* __restrict__ C) {
    tf32_mma_sync_gemm<false>(M, N, K, alpha, A, nullptr, B, beta, C);
}
#endif
