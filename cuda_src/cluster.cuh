// Thread-block cluster wrappers (sm_90a) for the rungs whose blocks share
// TMA loads (24 on): a block's rank in its cluster, the cluster-wide
// barrier, an mbarrier arrival on another block of the cluster, and a TMA
// load multicast into several blocks. Include it inside
// `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, after tma.cuh.

// The launch attribute of a kernel in clusters of CLUSTER blocks. A cluster of one block is declared no
// cluster at all: with __cluster_dims__(1, 1, 1) the same kernel ran 0.25-0.3 us slower a call at
// 512^3-1024^3 and 3.9 us at 16 x 8192 x 8192 (H200, rung 32, BF16: 1024^3 92.6% against 96.6% of cuBLAS).
// Without it a block is its own cluster: rank 0, and the cluster barrier is the block's.
#if CLUSTER > 1
#define CLUSTER_LAUNCH __cluster_dims__(CLUSTER, 1, 1)
#else
#define CLUSTER_LAUNCH
#endif

__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// Every thread of every block of the cluster arrives, then waits for all:
// shared memory and mbarriers of the other blocks may be used after it, and
// a block may exit after it without leaving a peer writing into it.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// One arrival on the mbarrier at shared address `bar` of the cluster's block `cta`
// (its own address mapped into that block's shared window). The default
// .release.cta semantics: what it orders is this warp's wgmma reads, already
// retired, before the peer's TMA overwrites the slot; a cluster-scope release
// would also wait for this thread's global stores of C, on every K tile.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned cta) {
    asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
                 ::"r"(bar), "r"(cta) : "memory");
}

// tma_load_3d into every block of `mask`, as tma_load_2d_multicast below.
__device__ __forceinline__ void tma_load_3d_multicast(unsigned dst, const TensorMap& map, int c0, int c1, int c2,
                                                      unsigned bar, unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3, %4}], [%5], %6;\n"
        ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
        : "memory");
}

// tma_load_2d into every block of `mask` (bit i: cluster rank i): the box lands at `dst`
// of each of them and counts its bytes on each one's barrier at `bar`.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const TensorMap& map, int inner, int outer,
                                                      unsigned bar, unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;\n"
        ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(inner), "r"(outer), "r"(bar), "h"(mask)
        : "memory");
}
