// Tiles of an operand whose rows are not 16-byte aligned, for the FP32
// cp.async loops (multistage_loop.cuh, kmajor_loop.cuh: rungs 12, 13, 19
// and 28): 4-byte copies, consecutive threads on consecutive floats of a
// row. A warp then reads one or two contiguous runs (4-6 sectors for its 32
// floats) and writes 32 consecutive shared words (no bank conflict). The
// loops' 16-byte chunk mapping, done as four 4-byte copies a chunk, had a
// warp read 32 chunks 16 bytes apart (16 sectors a copy) and write shared
// words 16 bytes apart (4-way bank conflicts).
// (Measured, H200, 333x555x777, 64x64 tiles, ncu: the chunk mapping's
// product took 31.3 us against 19.2 us for 16-byte copies of padded rows;
// this one 20.3 us, with no padding launch before it.)
#include "common.cuh"
#include "ptx.cuh"

// 4 bytes global -> shared, all of them read (a tile wholly inside the matrix: no size operand). Beside
// ptx.cuh's cp_async4 but kept here: rungs 14-18 inline ptx.cuh, and their choice tables hold its digest.
__device__ __forceinline__ void cp_async4_full(unsigned dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}

// The source row kStep rows below `row`. The empty asm hides the pointer's
// history from the compiler: without it, every row's offset from the tile's
// start is a loop invariant, which it keeps in registers for the whole main
// loop (32 of them for rung 12's 256x32 A tile: spills).
template <int kStep>
__device__ __forceinline__ const float* next_row(const float* row, int ld) {
    row += (size_t)kStep * ld;
    asm("" : "+l"(row));
    return row;
}

// Copies the kRows x kCols tile whose first element is g (row stride ld
// floats) into shared memory: element (r, c) goes to shared word
// dst_base / 4 + dst(r, c). Elements at r >= rows_left or c >= cols_left
// (past the matrix) are zero-filled; `any` is a valid address for them.
// Thread t copies columns c0 + j * NUM_THREADS of rows r0 + i * kStep; its
// source walks down by one pointer step a row, so the loop that calls this
// every K tile keeps two registers for it, not one offset per element.
// `whole`: the caller's block-uniform promise that every element of the tile
// may be read (inside the buffer); then no element takes a size (the
// per-element predicates and selects were most of this copy's instructions:
// ncu, 333x555x777, 9.3 million against 7.4 for the padded rows' copies).
template <int kRows, int kCols, class Dst>
__device__ __forceinline__ void cp_async_tile4(unsigned dst_base, const float* g, int ld, int rows_left,
                                               int cols_left, bool whole, const float* any, Dst dst) {
    static_assert((kCols & (kCols - 1)) == 0 && (NUM_THREADS & (NUM_THREADS - 1)) == 0, "powers of two");
    constexpr int kStep = kCols < NUM_THREADS ? NUM_THREADS / kCols : 1;    // rows between a thread's rows
    constexpr int kPerRow = kCols > NUM_THREADS ? kCols / NUM_THREADS : 1;  // its copies in a row
    const int c0 = threadIdx.x % kCols, r0 = threadIdx.x / kCols;  // r0 = 0 where kCols >= NUM_THREADS
    const float* row = g + (size_t)r0 * ld + c0;
    if (whole) {
#pragma unroll
        for (int i = 0; i < CEIL_DIV(kRows, kStep); ++i) {
            if (kRows % kStep != 0 && r0 + i * kStep >= kRows) break;
#pragma unroll
            for (int j = 0; j < kPerRow; ++j)
                cp_async4_full(dst_base + 4 * dst(r0 + i * kStep, c0 + j * NUM_THREADS), row + j * NUM_THREADS);
            row = next_row<kStep>(row, ld);
        }
        return;
    }
    rows_left -= r0;
    cols_left -= c0;
#pragma unroll
    for (int i = 0; i < CEIL_DIV(kRows, kStep); ++i) {
        if (kRows % kStep != 0 && r0 + i * kStep >= kRows) break;
#pragma unroll
        for (int j = 0; j < kPerRow; ++j) {
            const bool ok = i * kStep < rows_left && j * NUM_THREADS < cols_left;
            cp_async4(dst_base + 4 * dst(r0 + i * kStep, c0 + j * NUM_THREADS), ok ? row + j * NUM_THREADS : any,
                      ok ? 4 : 0);
        }
        row = next_row<kStep>(row, ld);
    }
}
