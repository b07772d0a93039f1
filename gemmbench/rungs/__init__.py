"""The two ladders shipped with gemmbench, and lookups over them."""

from __future__ import annotations

from ..spec import KernelSpec
from .cpu import CPU_LADDER
from .gpu import GPU_LADDER

LADDERS = {"gpu": GPU_LADDER, "cpu": CPU_LADDER}


def ladder(device: str) -> tuple[KernelSpec, ...]:
    return LADDERS[device]


def get_spec(device: str, kernel_id: int) -> KernelSpec:
    """The rung with this id (0: the FP32 library baseline); raises KeyError with the valid ids."""
    for spec in LADDERS[device]:
        if spec.id == kernel_id:
            return spec
    ids = ", ".join(str(i) for i in dict.fromkeys(s.id for s in LADDERS[device]))
    raise KeyError(f"no {device.upper()} rung {kernel_id} (valid: {ids})")


def baselines(device: str, precisions=("fp32", "tf32")) -> list[KernelSpec]:
    """The library rows of a ladder in these precisions (the CPU has FP32 only)."""
    return [s for s in LADDERS[device] if s.is_baseline and s.precision in precisions]
