// Inline-PTX wrappers, included by rungs 12-19: shared-memory addresses
// (12-19), cp.async copies (12-15 and 19, and the mma.sync fallback of 14-18
// in tf32_mma_sync.cuh) and TF32 rounding (14-18). The tool pastes headers as
// text, so no CUDA header is pulled in: each instruction is spelled out here once.

// A generic pointer to shared memory as the 32-bit shared-space address PTX wants.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, bypassing L1 and the registers; only `bytes`
// (0..16) are read, the rest of the destination is zero-filled (edges).
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

// 16 bytes global -> shared, all of them read (interior tiles: no size operand to compute).
__device__ __forceinline__ void cp_async16_full(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}

// 4 bytes global -> shared from any 4-byte aligned source; bytes is 0 (zero-fill) or 4.
__device__ __forceinline__ void cp_async4(unsigned dst, const void* src, int bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

// One 16-byte chunk of a tile row, global -> shared, for tiles that may cross
// the matrix's edge: zero-filled where the row is outside the matrix
// (!row_ok) and past the row's end (floats_left floats remain from g).
// `vector` is the caller's block-uniform promise that rows are 16-byte
// aligned; otherwise four 4-byte copies. A fully zero-filled copy still
// needs a valid address: `any` (the matrix's base).
__device__ __forceinline__ void cp_async_chunk(unsigned dst, const float* g, const float* any, bool row_ok,
                                               int floats_left, bool vector) {
    if (vector) {
        const int bytes = row_ok ? (floats_left >= 4 ? 16 : (floats_left > 0 ? 4 * floats_left : 0)) : 0;
        cp_async16(dst, bytes ? g : any, bytes);
    } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const bool ok = row_ok && e < floats_left;
            cp_async4(dst + 4 * e, ok ? g + e : any, ok ? 4 : 0);
        }
    }
}

// Closes this thread's group of copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// fp32 -> the nearest TF32 value (ties away from zero), as the .b32 bits an MMA takes.
__device__ __forceinline__ unsigned to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}
