"""Scratch, device only: add the timeline probes to cuda_src/half_*.cuh in place."""
def edit(path, pairs):
    s = open(path).read()
    for a, b in pairs:
        assert a in s, (path, a[:60])
        s = s.replace(a, b)
    open(path, "w").write(s)
edit("cuda_src/half_tma.cuh", [
    ("constexpr int kHalfBK = 64;", '''constexpr int kHalfBK = 64;
__device__ unsigned long long g_probe[4096 * 16];
__device__ __forceinline__ void probe(int i) { if (threadIdx.x == 0) g_probe[blockIdx.x * 16 + i] = clock64(); }
__device__ __forceinline__ void probe_any(int i) { g_probe[blockIdx.x * 16 + i] = clock64(); }
__device__ __forceinline__ unsigned long long gtimer() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ void probe_start() { if (threadIdx.x == 0) { g_probe[blockIdx.x * 16 + 7] = gtimer(); g_probe[blockIdx.x * 16] = clock64(); } }
__device__ __forceinline__ void probe_print() {
    if (threadIdx.x == 0) { unsigned sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        g_probe[blockIdx.x * 16 + 8] = sm; g_probe[blockIdx.x * 16 + 9] = gtimer(); }
}'''),
    ('''        mbar_wait(ring.full_bar(s), (it / STAGES) & 1);
        __syncwarp();''', '''        mbar_wait(ring.full_bar(s), (it / STAGES) & 1);
        if (kt == 0) probe(2);
        __syncwarp();'''),
    ('''    wgmma_wait<0>();
    __syncwarp();''', '''    wgmma_wait<0>();
    probe(3);
    __syncwarp();''')])
edit("cuda_src/half_cluster.cuh", [
    ("    const HalfRing ring = make_half_ring(smem, map_a, map_b, kClusterReleases", "    probe_start();\n    const HalfRing ring = make_half_ring(smem, map_a, map_b, kClusterReleases"),
    ("        half_setmaxnreg_dec<kHalfProducerRegs>();\n        if (tid == kHalfConsumers) cluster_produce(",
     "        half_setmaxnreg_dec<kHalfProducerRegs>();\n        if (tid == kHalfConsumers) probe_any(12);\n        if (tid == kHalfConsumers) cluster_produce("),
    ("                tma_load_2d(ring.a(s), map_a, kt * kHalfBK, m0, ring.full_bar(s));\n            }",
     "                tma_load_2d(ring.a(s), map_a, kt * kHalfBK, m0, ring.full_bar(s));\n                if (it == 0) probe_any(13);\n            }"),
    ("                                      ring.full_bar(s), (1u << kClusterBlocks) - 1);\n",
     "                                      ring.full_bar(s), (1u << kClusterBlocks) - 1);\n            if (it == 0) probe_any(14);\n"),
    ("    else cluster_sync();  // every block's barriers are initialised before any multicasts into it\n",
     "    else cluster_sync();  // every block's barriers are initialised before any multicasts into it\n    probe(1);\n"),
    ("            if (it >= STAGES) mbar_wait(ring.empty_bar(s), (it / STAGES - 1) & 1);\n            if (it >= early) {",
     "            if (it >= STAGES) mbar_wait(ring.empty_bar(s), (it / STAGES - 1) & 1);\n            if (it == 0) probe_any(10);\n            if (it == STAGES) probe_any(11);\n            if (it >= early) {"),
    ('''            epilogue(ring, acc, m0, n0, wg);
        }
        finish();''', '''            epilogue(ring, acc, m0, n0, wg);
            probe(4);
        }
        finish();
        probe(5); probe(6); probe_print();''')])
edit("cuda_src/half_split.cuh", [
    ("    const HalfRing ring = make_half_ring(smem, map_a, map_b);", "    probe_start();\n    const HalfRing ring = make_half_ring(smem, map_a, map_b);"),
    ("    cluster_sync();  // both blocks' barriers are initialised before either arrives on the other's\n",
     "    cluster_sync();  // both blocks' barriers are initialised before either arrives on the other's\n    probe(1);\n"),
    ("                if (kt >= STAGES) mbar_wait(ring.empty_bar(s), (kt / STAGES - 1) & 1);\n",
     "                if (kt >= STAGES) mbar_wait(ring.empty_bar(s), (kt / STAGES - 1) & 1);\n                if (kt == 0) probe_any(10);\n                if (kt == STAGES) probe_any(11);\n"),
    ("    mbar_wait(exchange_bar(ring), 0);  // the peer's halves of our boxes have landed",
     "    mbar_wait(exchange_bar(ring), 0);  // the peer's halves of our boxes have landed\n    probe(6);"),
    ('''    epilogue(ring, acc, m0, n0, wg, [rank](int c) { return c / kSplitBoxes == (int)rank; });
    finish();''', '''    epilogue(ring, acc, m0, n0, wg, [rank](int c) { return c / kSplitBoxes == (int)rank; });
    probe(4);
    finish();
    probe(5); probe_print();''')])
