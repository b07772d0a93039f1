// Rungs 34 (BF16) and 35 (FP16) — rung 32 with each tile's epilogue run
// during the next tile's main loop.
//
// What changed from rungs 32-33: where a persistent block computes more
// than one C tile (more tiles than blocks, DEFER = 1), a consumer warpgroup
// no longer stages its tile's results into shared memory between tiles. It
// rounds them into 16-bit pairs (64 registers for its 64 x 256 results,
// half its accumulators' count), starts the next tile, and stages one
// 64-column box to TMA after issuing the wgmmas of each of the next tile's
// first K tiles (half_store.cuh: hold, stage_next; half_cluster.cuh). The
// stores then share the SM with the tensor cores instead of idling them;
// the block's last tile is stored as before.
//
// What it removes: at 4096^3 (512 tiles of 128 x 256, about 4 a block) a
// tile's staging is 64 KiB of shared-memory stores while both warpgroups
// wait; ncu (H200, its locked clock) gave rung 32 1.6% more SM cycles than
// cuBLAS BF16 and this rung 0.5%, and NVML's energy counter 1.012 and 1.005
// times cuBLAS's energy per call (FP16: 1.012 and 1.000). Where each block
// has one tile, holding the tile first was slower (1024^3: 6.99 against
// 6.70 us), so there DEFER = 0 and the rung is rung 32.
//
// Evidence: the README's 16-bit ladder section.
#include "32_half_b_one_load.cu"
