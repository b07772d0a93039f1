// TMA and mbarrier wrappers for the rungs that take tensor maps (16-18); the
// row copy their driver runs when an operand's rows are not 16-byte
// multiples (TMA's rule for a global row pitch) is pack.cuh's copy_rows.
//
// A tensor map is encoded on the host (gemmbench/gpu/tensormap.py) and
// passed by value as `const __grid_constant__ TensorMap`: the kernel reads
// it where the driver put it, in the parameter bank, by generic address.
// The type stands in for cuda.h's CUtensorMap (128 bytes, 64-byte aligned):
// the tool pastes headers as text and includes no system header.
struct __align__(64) TensorMap {
    unsigned long long opaque[16];
};

#include "pack.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// --- mbarrier: a shared-memory barrier with a phase bit and a transaction count.
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
// Makes the barriers' initialisation visible to the other threads and to the async proxy (TMA).
__device__ __forceinline__ void mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::: "memory");
}
// One arrival that also announces `bytes` of TMA transactions this phase waits for.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Blocks until the barrier's phase of this parity has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}

// --- TMA: one box of a 2-D tensor map at (inner, outer) element coordinates
// into shared memory at `dst`; completion counts its bytes on barrier `bar`.
// Parts of the box outside the matrix arrive as zeros.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap& map, int inner, int outer, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
        ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(inner), "r"(outer), "r"(bar)
        : "memory");
}
__device__ __forceinline__ void tma_prefetch_map(const TensorMap& map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&map)) : "memory");
}

// --- TMA stores: a box of shared memory at `src` written to the matrix at
// (inner, outer); parts of the box outside the matrix are not written. The
// stores of a thread form bulk groups (commit), which it waits on: ".read"
// until their shared memory may be reused, plain until the writes are done.
// Shared memory written by ordinary stores must be fenced into the async
// proxy (fence_proxy_async, wgmma.cuh) by the writing threads before the store reads it.
__device__ __forceinline__ void tma_store_2d(const TensorMap& map, unsigned src, int inner, int outer) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(reinterpret_cast<unsigned long long>(&map)), "r"(inner), "r"(outer), "r"(src) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Barrier `id` (1..15; 0 is __syncthreads) among `threads` threads (a multiple of 32).
__device__ __forceinline__ void named_barrier(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
#endif
