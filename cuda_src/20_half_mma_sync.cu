// Rungs 20 (BF16) and 21 (FP16) — 16-bit tensor cores through mma.sync.
//
// The idea: A, B and C in a 16-bit type (BF16 = 1 or 0 picks bfloat16 or
// half), FP32 accumulators. One m16n8k16 mma.sync does 4096 multiply-adds,
// four times a TF32 m16n8k8's per instruction, and a 16-bit tile is half the
// bytes of an FP32 one, so both the issue slots and the shared-memory
// traffic per FLOP drop against rungs 14-19.
//
// What it removes: scalar fragment loads. Each warp reads its A fragments
// with ldmatrix (four 8x8 matrices per instruction, already in mma's
// register layout) and its B fragments with ldmatrix.trans (B is row-major,
// k x n; mma wants it column-major), from tiles that cp.async streams into a
// ring of HM_STAGES slots with an XOR swizzle (half_mma_sync.cuh) so neither
// the copies nor ldmatrix meet bank conflicts.
//
// Evidence (the README's 16-bit ladder section has the dated figures):
// about half of cuBLAS's rate at the large shapes, far below at 1024^3 where
// its 128 x 256 tiles leave most SMs idle; no ncu profile yet, so which of
// issue slots, ldmatrix or the per-tile barrier binds is not yet shown.
// This is also the path rungs 22-27 take on GPUs without sm_90a.
#include "common.cuh"
#include "ptx.cuh"
#include "half.cuh"
#include "half_fallback.cuh"
