// tma_load_2d (tma.cuh) through a 3-D map: coordinates (c0, c1, c2),
// innermost first. A swizzle span caps a box row at 128 bytes, so a B tile
// wider than that comes as several boxes side by side; a 3-D map that views
// the matrix as column chunks of one box (gemmbench/gpu/tensormap.py,
// box_chunks) loads all of them in one instruction (B3D = 1: rung 17 and the
// 16-bit rungs 32-33). Its own file, not tma.cuh, so that the source digests
// of rungs 16 and 18 (and the choice table keyed on rung 18's) stay.

#ifndef B3D
#define B3D 0
#endif

__device__ __forceinline__ void tma_load_3d(unsigned dst, const TensorMap& map, int c0, int c1, int c2, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
        ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}
