"""GPU resource limits and the register-budget rule, each written once.

The figures are those of sm_80/sm_90 (the GPUs the ladder is tuned on); a GPU
that refuses a launch is still caught at run time, where the rung is skipped
with the driver's reason.
"""

from __future__ import annotations

SMEM_DEFAULT_PER_BLOCK = 48 * 1024   # static + dynamic shared memory without opting in
SMEM_PER_BLOCK_MAX = 227 * 1024      # after opting in (sm_90; sm_80 allows 163 KiB)
SMEM_PER_SM = 228 * 1024
SMEM_RESERVED_PER_BLOCK = 1024       # the driver keeps 1 KiB per resident block
REGISTERS_PER_SM = 65536
REGISTERS_PER_THREAD_MAX = 255
THREADS_PER_SM = 2048


def register_budget(threads: int, blocks_per_sm: int = 1) -> int:
    """Registers per thread ptxas may use when ``blocks_per_sm`` blocks of
    ``threads`` threads must be resident on one SM together."""
    return min(REGISTERS_PER_THREAD_MAX, REGISTERS_PER_SM // (threads * blocks_per_sm))


def spill_reason(need: int, budget: int) -> str | None:
    """Why an estimate of ``need`` registers per thread would spill, or None."""
    if need > budget:
        return f"about {need} registers per thread needed, {budget} available: it would spill"
    return None
