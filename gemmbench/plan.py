"""build_plan(options) -> Plan: which kernels run, at which shapes, on what.

A Plan is plain data (frozen dataclasses of ints, strings and tuples): the
rows (library rows first, then rungs, then the user's kernel files), the
shapes, the sampling budget and the GPUs. It is made once, in the process
the user started; a worker process for another GPU receives the same value
and runs its share of it, so every kind of row (a kernel file included)
runs the same way everywhere. Nothing is compiled, allocated or written
here: building a plan only reads the ladder, the kernel files' headers and
which device is there.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from .backend import Budget, Shape
from .cpu.backend import core_count, default_threads
from .errors import UserError
from .gpu import device as gpu_device
from .gpu.device import GpuUnavailable
from .kernelfile import KernelFileError, check_overrides, device_of, load, parse_overrides
from .options import RunOptions
from .precision import comparison_precision
from .rungs import get_spec, ladder
from .spec import KernelSpec, params_key
from .sweep import parse_sweep, sweep_shapes
from .validate import parse_int


@dataclass(frozen=True)
class Row:
    """One kernel of the plan. ``kernel_id`` 0 is a library row, > 0 a rung,
    < 0 the user's kernel file ``kernel_file`` (-1 the first given).
    ``params``: parameters given for this row (a tune candidate) as sorted
    (name, value) pairs, or None for the kernel's own (tuned, selected or
    default). ``threads``: the CPU thread count of a CPU row. ``shape``: the
    one shape of the plan the row runs at (a tune candidate is tried where
    it was proposed), or None: at every shape."""

    device: str
    kernel_id: int
    precision: str
    params: tuple[tuple[str, int], ...] | None = None
    threads: int | None = None
    kernel_file: str | None = None
    shape: Shape | None = None

    @property
    def given_params(self) -> dict | None:
        return None if self.params is None else dict(self.params)

    def runs_at(self, shape: Shape) -> bool:
        return self.shape is None or self.shape == shape

    @property
    def is_library(self) -> bool:
        return self.kernel_id == 0


@dataclass(frozen=True)
class Plan:
    """Everything a run needs to know, as data (see the module doc).

    ``device``: the ladder ("gpu" or "cpu"); ``gpu``: the GPU this process
    runs on; ``gpus``: several GPUs, one worker each, and ``spread`` how the
    plan is shared among them ("same": all of it on each; "shapes": the
    shapes shared out; "candidates": the rows with given parameters shared
    out, the library rows everywhere). ``no_gpu_reason``: why ``--device
    auto`` fell back to the CPU. ``overrides`` and ``kernel_timeout``: the
    kernel files' ``--param`` values and per-call limit.
    """

    command: str
    device: str
    rows: tuple[Row, ...]
    shapes: tuple[Shape, ...]
    budget: Budget
    seed: int = 0
    flush_l2: bool = False
    gpu: int = 0
    gpus: tuple[int, ...] | None = None
    spread: str = "same"
    no_gpu_reason: str | None = None
    overrides: tuple[tuple[str, int], ...] = ()
    kernel_timeout: float | None = None
    use_tuning: bool = True
    not_compiled: int = 0

    @property
    def steps(self) -> int:
        return sum(1 for shape in self.shapes for row in self.rows if row.runs_at(shape))

    @property
    def tuned_row(self) -> Row:
        """The kernel a tune plan searches (its one row that is not a library row)."""
        return next(r for r in self.rows if not r.is_library)

    def with_candidates(self, candidates: Mapping[Shape, Sequence[dict]], not_compiled: int) -> "Plan":
        """A tune plan with one row per parameter set of its kernel at each
        shape (each row tied to its shape), after the library rows, which run
        at every shape."""
        kernel = self.tuned_row
        rows = [r for r in self.rows if r.is_library]
        rows += [dataclasses.replace(kernel, params=params_key(p), shape=shape)
                 for shape in self.shapes for p in candidates.get(shape, ())]
        return dataclasses.replace(self, rows=tuple(rows), not_compiled=not_compiled)

    def without_shapes(self, shapes) -> "Plan":
        """This plan without ``shapes`` (tune --resume: those an earlier run finished)."""
        return dataclasses.replace(self, shapes=tuple(s for s in self.shapes if s not in shapes))

    def share(self, gpu: int, rows: Sequence[Row], shapes: Sequence[Shape]) -> "Plan":
        """The part of this plan one GPU's worker runs."""
        return dataclasses.replace(self, rows=tuple(rows), shapes=tuple(shapes), gpu=gpu, gpus=None)


# --------------------------------------------------------------------------
# the device
# --------------------------------------------------------------------------

def parse_gpus(text: str, count: int) -> list[int]:
    """'all' or a comma list of CUDA ordinals (as CUDA_VISIBLE_DEVICES leaves
    them) -> distinct ordinals in the order given; ValueError naming the value."""
    if count < 1:
        raise ValueError("--gpus: no GPU is visible")
    if text.strip().lower() == "all":
        return list(range(count))
    try:
        wanted = [parse_int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"--gpus {text!r}: give 'all' or GPU indices like 0,2,3") from None
    bad = [i for i in wanted if not 0 <= i < count]
    if bad:
        raise ValueError(f"--gpus {text!r}: no GPU {bad[0]} ({count} visible, numbered 0-{count - 1})")
    if len(set(wanted)) != len(wanted):
        raise ValueError(f"--gpus {text!r} names a GPU twice")
    return wanted


def _open_gpu(ordinal: int) -> None:
    """The default probe: open the GPU (the module's own function, so tests can stand in for it)."""
    gpu_device.open_device(ordinal)


def _gpu_count() -> int:
    return gpu_device.device_count()


def resolve_device(options: RunOptions, file_devices: set[str], probe: Callable[[int], None] = _open_gpu,
                   count: Callable[[], int] = _gpu_count) -> tuple[str, int, tuple[int, ...] | None, str | None]:
    """(ladder, this process's GPU, the GPUs of --gpus or None, why auto fell
    back to the CPU). A GPU the user named must be there: no quiet fallback."""
    gpus = None
    if options.gpus is not None:
        try:
            gpus = tuple(parse_gpus(options.gpus, count()))
        except GpuUnavailable as exc:
            raise UserError(f"no usable GPU: {exc}") from None
        except ValueError as exc:
            raise UserError(str(exc)) from None
    ordinal = gpus[0] if gpus else options.gpu or 0
    wanted = "gpu" if options.gpu is not None or gpus else options.device
    if wanted == "auto" and file_devices:  # a kernel file names its device: .cu the GPU, .c the CPU
        wanted = "gpu" if "gpu" in file_devices else "cpu"
    if wanted == "cpu":
        return "cpu", 0, None, None
    try:
        probe(ordinal)
    except GpuUnavailable as exc:
        if "gpu" in file_devices:
            cuda = next(f for f in options.kernel_files if device_of(f) == "gpu")
            raise UserError(f"{cuda} is a CUDA kernel: it needs a GPU ({exc})") from None
        if wanted == "gpu":
            raise UserError(f"no usable GPU: {exc}") from None
        return "cpu", 0, None, str(exc)
    return "gpu", ordinal, gpus if gpus and len(gpus) > 1 else None, None


# --------------------------------------------------------------------------
# the rows
# --------------------------------------------------------------------------

def _rung(device: str, kernel_id: int, no_gpu_reason: str | None) -> KernelSpec:
    try:
        return get_spec(device, kernel_id)
    except KeyError as exc:
        if no_gpu_reason and any(s.id == kernel_id for s in ladder("gpu")):
            cpu_ids = [s.id for s in ladder("cpu")]
            raise UserError(f"rung {kernel_id} is a GPU rung; no usable GPU ({no_gpu_reason}): use "
                            f"--device cpu for the CPU ladder (rungs {min(cpu_ids)}-{max(cpu_ids)})") from None
        raise UserError(exc.args[0]) from None


def _asked_rungs(options: RunOptions, device: str, no_gpu_reason: str | None) -> tuple[list[KernelSpec], bool]:
    """The rungs a command asks for, and whether every library row of the
    ladder comes along (--all, and a sweep of the whole ladder)."""
    every = options.all_rungs or (options.command == "sizes" and not options.kernels and not options.kernel_files)
    if every:
        specs = [s for s in ladder(device) if not s.is_baseline]
    else:
        specs = [_rung(device, i, no_gpu_reason) for i in dict.fromkeys(options.kernels) if i != 0]
    if options.precisions:
        specs = [s for s in specs if s.precision in options.precisions]
        if not specs and not options.kernel_files:
            raise UserError(f"no rung of the {device.upper()} ladder is of precision "
                            f"{', '.join(options.precisions)}")
    return sorted(specs, key=lambda s: s.id), every


def _library_rows(device: str, precisions: set[str]) -> list[KernelSpec]:
    return [s for s in ladder(device) if s.is_baseline and s.precision in precisions]


def user_specs(options: RunOptions, overrides: dict[str, int]) -> list[KernelSpec]:
    """The kernel files' records, read from their headers (nothing compiled)."""
    kernels = [load(path, i, overrides) for i, path in enumerate(options.kernel_files)]
    check_overrides(kernels, overrides)
    return [k.spec for k in kernels]


def _shapes(options: RunOptions, device: str) -> tuple[Shape, ...]:
    if options.shapes:  # sizes --shapes, and the API's
        return tuple(entry.shape for entry in options.shapes)
    if options.command == "sizes":
        if options.sweep is None:
            raise UserError("sizes needs --sweep (sizes) or --shapes (files of M,N,K)")
        try:
            return tuple(sweep_shapes(parse_sweep(options.sweep), options.m, options.n, options.k))
        except ValueError as exc:
            raise UserError(str(exc)) from None
    return (options.shape(device),)


def build_plan(options: RunOptions, probe: Callable[[int], None] = _open_gpu,
               count: Callable[[], int] = _gpu_count) -> Plan:
    """The plan of a benchmark command (see the module doc); for ``tune``,
    the library rows and the tuned kernel's row, which ``with_candidates``
    replaces by one row per parameter set. ``probe`` opens a GPU (raising
    GpuUnavailable) and ``count`` counts them: stand-ins for tests."""
    if options.command in ("run", "compare", "tune") and not options.kernels and not options.all_rungs \
            and not options.kernel_files:
        raise UserError({"run": "nothing to run: give -i or --kernel-file",
                         "compare": "nothing to compare: give --all, one or more -i, or --kernel-file",
                         "tune": "tune one kernel: give -i or one --kernel-file"}[options.command])
    files = {device_of(f) for f in options.kernel_files}
    device, gpu, gpus, no_gpu_reason = resolve_device(options, files, probe, count)
    overrides = parse_overrides(options.params)
    users = user_specs(options, overrides)
    for spec in users:
        if spec.device != device:
            want = "--device cpu (a C kernel)" if spec.device == "cpu" else "a GPU (a CUDA kernel)"
            raise KernelFileError(f"{options.kernel_files[-spec.id - 1]} runs with {want}, "
                                  f"not on the {device.upper()} ladder")
    if options.command == "tune":
        _check_tune_device(options, device, no_gpu_reason)
    rungs, every = _asked_rungs(options, device, no_gpu_reason)
    kernels = rungs + users
    if options.command == "tune" and len(kernels) != 1:
        raise UserError("tune one kernel: give -i or one --kernel-file")
    # the library rows each kernel is compared with (SGEMM always); all of the ladder's with --all
    compared = ladder(device) if every and not options.precisions else kernels
    wanted = {"fp32", *(comparison_precision(s.precision) for s in compared)}
    library = _library_rows(device, wanted)
    files_of = {-(i + 1): path for i, path in enumerate(options.kernel_files)}
    if device == "gpu":
        rows = [Row(device, s.id, s.precision, kernel_file=files_of.get(s.id)) for s in library + kernels]
        if options.command == "compare":  # OpenBLAS beside the GPU ladder
            rows.append(Row("cpu", 0, "fp32", threads=options.threads or core_count()))
    else:
        rows = _cpu_rows(options, library, kernels, files_of)
    spread = {"sizes": "shapes", "tune": "candidates"}.get(options.command, "same")
    return Plan(options.command, device, tuple(rows), _shapes(options, device), options.budget_for(device),
                options.seed, options.flush_l2, gpu, gpus, spread, no_gpu_reason,
                tuple(sorted(overrides.items())), options.kernel_timeout,
                options.use_tuning)


def _cpu_rows(options: RunOptions, library: list[KernelSpec], kernels: list[KernelSpec],
              files_of: dict[int, str]) -> list[Row]:
    """Each thread count gets its own OpenBLAS row, the one its rungs are compared with."""
    baseline = library[0]

    def threads_of(spec):
        return default_threads(spec, options.threads)

    rows = []
    for threads in dict.fromkeys(map(threads_of, kernels)) or [threads_of(baseline)]:
        group = [baseline] + [s for s in kernels if threads_of(s) == threads]
        rows += [Row("cpu", s.id, s.precision, threads=threads, kernel_file=files_of.get(s.id)) for s in group]
    return rows


def _check_tune_device(options: RunOptions, device: str, no_gpu_reason: str | None) -> None:
    """tune takes one kernel, a rung or a CUDA kernel file, and a GPU."""
    if len(options.kernel_files) + len(set(options.kernels)) != 1:
        raise UserError("tune one kernel: give -i or one --kernel-file")
    if device != "gpu":
        if no_gpu_reason:
            why = f"no usable GPU ({no_gpu_reason})"
        elif options.kernel_files:
            why = f"{options.kernel_files[0]} is a C kernel"
        else:
            why = "--device cpu was given"
        raise UserError(f"tune needs a GPU: {why}; the CPU rungs and C kernels have no tunable parameters")
