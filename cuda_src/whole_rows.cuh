// Edge blocks of the FP32 cp.async loops (multistage_loop.cuh,
// kmajor_loop.cuh: rungs 12, 13, 19 and 28) that copy B as fast as interior
// ones.
#include "common.cuh"

// How many leading rows of a K x ld buffer a tile may copy whole, 16 bytes at
// a time, from its first column up to column `tile_end` (its last + 1),
// where rows are 16-byte aligned (`vector`). A tile at the matrix's right
// edge (tile_end > N) reads past column N: into the row's padding or the
// next row, which only reaches columns of C past N, never stored; it stays
// inside the buffer for rows k < K + 1 - ceil(tile_end / ld). So a block at
// the edge copies as fast as an interior one, and only the tiles holding
// the rows after that (at most the last K tile) take per-chunk sizes.
// (Measured, H200: 1024x1000x1024 took 62.6 us against 58.7 at 1024^3 with
// the same tiles, its edge column of blocks copying every K tile by parts.)
__device__ __forceinline__ int whole_tile_rows(int K, int ld, int tile_end, bool vector) {
    return vector ? K + 1 - CEIL_DIV(tile_end, ld) : 0;
}
