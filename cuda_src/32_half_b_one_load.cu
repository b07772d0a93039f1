// Rungs 32 (BF16) and 33 (FP16) — rung 30 with each K tile of B in one TMA load.
//
// What changed from rungs 30-31: the B map is 3-D. A 128-byte swizzle
// limits a box row to 64 16-bit values, so rungs 22-31 load a K tile of B
// (64 k rows x BN columns) as BN/64 boxes of 64 x 64, one TMA instruction
// each. Viewed as (64 columns, K rows, N/64 chunks), B's neighbouring boxes
// are one box of (64, 64, chunks), which lands in shared memory exactly
// where the separate boxes did (each chunk 8 KiB, 1 KiB-aligned, so the
// swizzle is the same): the producer issues 2 instructions a K tile (A and
// B) where it issued 3 (64 x 128 tiles) or 5 (128 x 256); in clusters, each
// block's share of B is one multicast load. The code is rung 30's; B3D
// switches the loads (half_tma.cuh, half_cluster.cuh) and the driver's map.
//
// What it removes: at 1024^3 (one wave of 64 x 128 tiles, clusters of one)
// the producer, not the ring, set the pace: every slot was free long before
// the producer came back to it, and each K tile's three loads took it 310
// to 460 cycles to issue (268-284 for the first four with one load of B). Timed:
// 87.9% -> 91.6% of cuBLAS BF16 at 1024^3; where the time is saved was not
// pinned down (the README's 16-bit ladder section).
//
// Only where N is a multiple of 64: past N a 3-D box reads the next row of
// B where a 2-D box reads zeros. Elsewhere (and with B3D = 0) it is rung 30.
//
// Evidence: the README's 16-bit ladder section.
#include "30_half_split_k.cu"
