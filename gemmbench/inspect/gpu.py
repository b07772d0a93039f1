"""The GPU side of the instruments: a backend holding one shape's buffers, and
kernels prepared exactly as ``run`` prepares them (fallback, tuned or
per-shape parameters, validity), so what is inspected is what is timed."""

from __future__ import annotations

from dataclasses import dataclass

from ..backend import Prepared, Problem, Shape, SkipKernel
from ..errors import UserError
from ..gpu.backend import GpuBackend, ShapeTooLarge
from ..gpu.compile import cubin as compiled_cubin
from ..gpu.device import GpuUnavailable
from ..spec import KernelSpec
from ..tuning import TuningCache
from .cudriver import DriverError
from .occupancy import SmLimits, occupancy


def open_backend(command: str, ordinal: int = 0):
    """GpuBackend on GPU ``ordinal`` with the tuning cache, or a one-line error."""
    try:
        return GpuBackend(tuning=TuningCache(), ordinal=ordinal)
    except GpuUnavailable as exc:
        raise UserError(f"{command} needs a GPU: {exc}")


def load_shape(backend, shape: Shape, seed: int = 0) -> None:
    try:
        backend.check_fits(shape)
    except ShapeTooLarge as exc:
        raise UserError(str(exc))
    backend.load(Problem.random(shape, seed))


@dataclass(frozen=True)
class NotInspected:
    """A row that has no compiled kernel of ours to inspect, and why."""

    spec: KernelSpec
    reason: str


def prepare(backend, spec: KernelSpec, shape: Shape) -> Prepared | NotInspected:
    if spec.is_baseline:
        return NotInspected(spec, "library kernel (cuBLAS): not inspectable")
    try:
        return backend.prepare(spec, shape)
    except SkipKernel as exc:
        return NotInspected(spec, str(exc))


def inspect_occupancy(backend, specs: list[KernelSpec], shape: Shape) -> list:
    """Occupancy of each spec at the shape (loaded on the backend), or NotInspected."""
    sm = SmLimits.from_driver()
    cc = backend.info.compute_capability
    rows = []
    for spec in specs:
        prepared = prepare(backend, spec, shape)
        if isinstance(prepared, NotInspected):
            rows.append(prepared)
            continue
        try:
            cubin = compiled_cubin(prepared.spec, cc, prepared.params)  # the cached image pycuda loaded
            rows.append(occupancy(prepared.spec, prepared.params, prepared.params_source,
                                  shape.M, shape.N, shape.K, cubin, sm, prepared.choice))
        except DriverError as exc:
            rows.append(NotInspected(spec, str(exc)))
    return rows
