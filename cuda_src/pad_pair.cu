// One launch for both padding copies of a call whose A and B rows are both
// not 16-byte multiples: copy_rows_pair for floats (rungs 16-18 and 28, the
// `tma` and `any_shape` drivers), copy_rows16_pair for 16-bit elements
// (rungs 22-33, the `tma16` drivers). Not a rung: the driver loads this file
// as a helper module.
//
// Why: the copies are small where they are needed at all (333x555x777: 1.0
// and 1.7 MB), so each launch costs its ramp and tail more than its bytes
// (H200, ncu: 3.3 and 3.7 us for the two copy_rows launches, beside an
// 18.9-us product). Here blocks with blockIdx.y = 0 copy A and those with
// blockIdx.y = 1 copy B, each as pack.cuh's copy_rows (half.cuh's
// copy_rows16) does, side by side in one grid.
#include "pack.cuh"
#include "half.cuh"

extern "C" __global__ void copy_rows_pair(int rows_a, int cols_a, const float* __restrict__ a, int pitch_a,
                                          float* __restrict__ dst_a, int rows_b, int cols_b,
                                          const float* __restrict__ b, int pitch_b, float* __restrict__ dst_b) {
    if (blockIdx.y == 0)
        for_each_row_group<4>(rows_a, cols_a, pitch_a,
                              [&](size_t r, int c) { copy_row_group(cols_a, a, pitch_a, dst_a, r, c); });
    else
        for_each_row_group<4>(rows_b, cols_b, pitch_b,
                              [&](size_t r, int c) { copy_row_group(cols_b, b, pitch_b, dst_b, r, c); });
}

extern "C" __global__ void copy_rows16_pair(int rows_a, int cols_a, const elem16* __restrict__ a, int pitch_a,
                                            elem16* __restrict__ dst_a, int rows_b, int cols_b,
                                            const elem16* __restrict__ b, int pitch_b, elem16* __restrict__ dst_b) {
    if (blockIdx.y == 0)
        for_each_row_group<8>(rows_a, cols_a, pitch_a,
                              [&](size_t r, int c) { copy_row_group16(cols_a, a, pitch_a, dst_a, r, c); });
    else
        for_each_row_group<8>(rows_b, cols_b, pitch_b,
                              [&](size_t r, int c) { copy_row_group16(cols_b, b, pitch_b, dst_b, r, c); });
}
