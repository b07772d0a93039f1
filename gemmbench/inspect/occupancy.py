"""Occupancy of a kernel at a shape: its resources, blocks per SM, the limit
that binds, theoretical occupancy and waves.

The kernel's resources (registers, spilled bytes, static shared memory) are
the compiled function's attributes, and blocks per SM is the driver's own
occupancy calculator (cuOccupancyMaxActiveBlocksPerMultiprocessor). Only the
attribution, *which* limit binds, is derived here: each resource's limit
on blocks per SM by the allocation rules of the CUDA occupancy calculator
(registers per warp rounded to 256 and shared among 4 sub-partitions; shared
memory in 128-byte units plus the driver's per-block reservation; warp and
block slots); the binding ones are those equal to the driver's answer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..gpu.drivers import launched_grid
from ..rungs.limits import SMEM_DEFAULT_PER_BLOCK
from ..spec import Dim3, KernelSpec, Params, ceil_div
from . import cudriver as d
from .cudriver import FUNC_LOCAL_SIZE_BYTES, FUNC_NUM_REGS, FUNC_SHARED_SIZE_BYTES, LoadedFunction


def _round_up(value: int, unit: int) -> int:
    return ceil_div(value, unit) * unit


@dataclass(frozen=True)
class SmLimits:
    """What one SM of a device holds (defaults: sm_80 / sm_90)."""

    sm_count: int
    max_threads: int = 2048
    max_blocks: int = 32
    registers: int = 65536
    shared_bytes: int = 233472  # usable per SM at the largest carveout
    reserved_shared_per_block: int = 1024
    warp_size: int = 32
    register_unit: int = 256  # registers are allocated per warp in these units
    sub_partitions: int = 4  # each holds a quarter of the register file
    shared_unit: int = 128

    @classmethod
    def from_driver(cls) -> "SmLimits":
        return cls(sm_count=d.device_attribute(d.DEV_MULTIPROCESSOR_COUNT),
                   max_threads=d.device_attribute(d.DEV_MAX_THREADS_PER_MULTIPROCESSOR),
                   max_blocks=d.device_attribute(d.DEV_MAX_BLOCKS_PER_MULTIPROCESSOR),
                   registers=d.device_attribute(d.DEV_MAX_REGISTERS_PER_MULTIPROCESSOR),
                   shared_bytes=d.device_attribute(d.DEV_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
                   reserved_shared_per_block=d.device_attribute(d.DEV_RESERVED_SHARED_MEMORY_PER_BLOCK),
                   warp_size=d.device_attribute(d.DEV_WARP_SIZE))


@dataclass(frozen=True)
class Resources:
    """What one block of a compiled kernel asks of an SM."""

    registers: int  # per thread
    local_bytes: int  # per thread: spilled registers and local arrays
    static_shared: int
    dynamic_shared: int
    threads: int  # per block

    @property
    def shared(self) -> int:
        return self.static_shared + self.dynamic_shared


LIMIT_NAMES = ("registers", "shared memory", "threads", "block slots")


def limits_per_resource(r: Resources, sm: SmLimits) -> dict[str, int]:
    """Blocks per SM that each resource alone would allow."""
    warps = ceil_div(r.threads, sm.warp_size)
    regs_per_warp = _round_up(r.registers * sm.warp_size, sm.register_unit)
    if regs_per_warp:
        warps_per_partition = (sm.registers // sm.sub_partitions) // regs_per_warp
        by_registers = warps_per_partition * sm.sub_partitions // warps
    else:
        by_registers = sm.max_blocks
    shared_per_block = _round_up(r.shared + sm.reserved_shared_per_block, sm.shared_unit)
    return {"registers": by_registers,
            "shared memory": sm.shared_bytes // shared_per_block,
            "threads": (sm.max_threads // sm.warp_size) // warps,
            "block slots": sm.max_blocks}


def binding_limits(limits: dict[str, int], blocks_per_sm: int) -> list[str]:
    """The resources whose limit is the driver's blocks per SM (ties: all of
    them); ["driver"] when the driver's number is below every one (a rule
    this module does not model)."""
    binding = [name for name in LIMIT_NAMES if limits[name] == blocks_per_sm]
    return binding or ["driver"]


@dataclass(frozen=True)
class Occupancy:
    """One kernel's occupancy at one shape."""

    kernel_id: int
    name: str
    function: str  # the kernel inspected ("sgemm")
    note: str  # e.g. "main kernel of 2 (split-K: + reduce_splits)"
    params: dict
    params_source: str
    resources: Resources
    block: Dim3
    grid: Dim3
    blocks_per_sm: int  # the driver's answer
    limits: dict  # resource -> blocks per SM it alone allows
    binding: list
    sm: SmLimits
    choice: str = ""  # the rung's account of its per-shape choice (KernelSpec.explain)

    @property
    def warps_per_block(self) -> int:
        return ceil_div(self.resources.threads, self.sm.warp_size)

    @property
    def theoretical_occupancy(self) -> float:
        """Resident warps over the SM's warp slots."""
        return self.blocks_per_sm * self.warps_per_block / (self.sm.max_threads // self.sm.warp_size)

    @property
    def grid_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def waves(self) -> float:
        """Blocks over the blocks all SMs hold at once."""
        per_wave = self.blocks_per_sm * self.sm.sm_count
        return self.grid_blocks / per_wave if per_wave else float("inf")

    @property
    def tail_share(self) -> float:
        """How full the last wave is (1.0: every wave full)."""
        per_wave = self.blocks_per_sm * self.sm.sm_count
        if not per_wave:
            return 0.0
        rest = self.grid_blocks % per_wave
        return rest / per_wave if rest else 1.0

    def to_dict(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k != "sm"}
        out.update(warps_per_block=self.warps_per_block, theoretical_occupancy=self.theoretical_occupancy,
                   grid_blocks=self.grid_blocks, waves=self.waves, tail_share=self.tail_share,
                   sm_count=self.sm.sm_count)
        return out


_HELPERS = {"split_k": "split-K: then reduce_splits", "presplit_a": "3xTF32: after split_tf32",
            "any_shape": "after any pre-pass, before any reduce_splits"}


def occupancy(spec: KernelSpec, params: Params, params_source: str, M: int, N: int, K: int,
              cubin: bytes, sm: SmLimits, choice: str = "") -> Occupancy:
    """Load the cubin's entry kernel and ask the driver. ``spec`` is the record
    that runs on this device (``Prepared.spec``), ``params`` what it runs with."""
    block, grid = spec.block(params), launched_grid(spec.grid(M, N, K, params), params, sm.sm_count)
    dynamic = spec.shared_bytes(params)
    threads = block[0] * block[1] * block[2]
    function = LoadedFunction(cubin, spec.entry)
    try:
        if dynamic > SMEM_DEFAULT_PER_BLOCK:  # as the launch does (gpu.drivers)
            function.allow_dynamic_shared(dynamic)
        resources = Resources(function.attribute(FUNC_NUM_REGS), function.attribute(FUNC_LOCAL_SIZE_BYTES),
                              function.attribute(FUNC_SHARED_SIZE_BYTES), dynamic, threads)
        blocks = function.max_active_blocks(threads, dynamic)
    finally:
        function.close()
    limits = limits_per_resource(resources, sm)
    note = f"main kernel ({_HELPERS[spec.driver]})" if spec.driver in _HELPERS else ""
    return Occupancy(spec.id, spec.name, spec.entry, note, dict(params), params_source, resources, tuple(block),
                     tuple(grid), blocks, limits, binding_limits(limits, blocks), sm, choice)
