"""The CPU ladder: one KernelSpec record per rung (sources in ``cpu_src/``)."""

from __future__ import annotations

from ..spec import KernelSpec

CPU_LADDER: tuple[KernelSpec, ...] = (
    KernelSpec(0, "OpenBLAS", "cpu", "the library baseline: numpy float32 matmul"),
    KernelSpec(1, "naive", "cpu", "the i-j-k triple loop: B walked down a column, one cache line per multiply",
               source="01_naive.c"),
    KernelSpec(2, "loop reorder", "cpu", "i-k-j order: the inner loop streams rows of B and C, so it vectorises",
               source="02_loop_reorder.c"),
    KernelSpec(3, "1D tiling", "cpu", "K split in tiles so a block of B rows stays in cache across rows of A",
               source="03_tiling_1d.c"),
    KernelSpec(4, "2D cache blocking", "cpu", "M, N and K blocked so each block of A, B and C fits in L1/L2",
               source="04_cache_blocking.c"),
    KernelSpec(5, "packed micro-kernel", "cpu", "A and B packed into panels; a register-blocked FMA micro-kernel",
               source="05_packed_microkernel.c"),
    KernelSpec(6, "multithreaded", "cpu", "rung 5 with the rows of C split across cores (OpenMP); B packed by all threads",
               source="06_multithreaded.c", multithreaded=True, cflags=("-fopenmp",)),
)
