"""What one process needs to run plan rows: backends, kernel files, workers.

``Devices`` turns a Plan's plain-data rows into ``Entry`` objects on the
backends of this process: the GPU of ``plan.gpu`` (one CUDA context a
process), a CPU backend per thread count, and for a user's kernel file its
isolated worker (gemmbench.execute.isolated) after the file was loaded and
compiled here, so that a bad header or a compile error is one line (exit 2)
before any kernel runs. The parent process and every GPU worker build their
rows the same way, from the same Plan.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Callable

from .. import validate
from ..backend import Shape, SkipKernel
from ..cpu import build
from ..cpu.backend import CpuBackend, core_count
from ..errors import UserError
from ..gpu import compile as kernels
from ..gpu.backend import GpuBackend, ShapeTooLarge
from ..gpu.device import GpuUnavailable
from ..kernelfile import KernelFileError, check_shapes, compile_summary, load
from ..plan import Plan, Row
from ..records.results import identity_line
from ..rungs import ladder
from ..tuning import TuningCache, code_digest, source_digest
from .isolated import DEFAULT_CALL_SECONDS, Isolated, WorkerConfig
from .local import Entry

_STARTED = time.perf_counter()


def host_name() -> str:
    """The host a record names: $GEMMBENCH_HOST when set (a container's own
    hostname is the pod's, not the node's: a Kubernetes Job passes the node
    name through it), else the machine's hostname."""
    return os.environ.get("GEMMBENCH_HOST") or socket.gethostname()


def verbose_log(note: Callable[[str], None]) -> Callable[[str], None]:
    """-v's log: each line stamped with the seconds since gemmbench started."""
    return lambda message: note(f"[{time.perf_counter() - _STARTED:6.2f}s] {message}")


class Devices:
    """The backends and kernel-file workers of this process for one plan."""

    def __init__(self, plan: Plan, log: Callable[[str], None] | None = None):
        self.plan = plan
        self.log = log
        self.gpu = None
        if plan.device == "gpu":
            try:
                self.gpu = GpuBackend(log=log, tuning=TuningCache() if plan.use_tuning else None, ordinal=plan.gpu)
            except GpuUnavailable as exc:
                raise UserError(f"no usable GPU: {exc}") from None
        self._cpu: dict[int, object] = {}
        self._users: dict[int, object] | None = None
        self._isolated: dict[tuple, object] = {}

    def cpu(self, threads: int):
        """The CPU backend running everything at ``threads`` threads."""
        if threads not in self._cpu:
            self._cpu[threads] = CpuBackend(threads=threads, log=self.log)
        return self._cpu[threads]

    # -- the user's kernel files -------------------------------------------------
    def user_kernels(self) -> dict:
        """The plan's kernel files by their id (-1, -2, ...), loaded and
        compiled with their default parameters (KernelFileError otherwise)."""
        if self._users is None:
            kernels = {}
            for row in self.plan.rows:
                if row.kernel_file and row.kernel_id not in kernels:
                    kernel = self._read_file(row)
                    self._compile(kernel)
                    kernels[row.kernel_id] = kernel
            self._users = kernels
        return self._users

    def _read_file(self, row: Row):
        """The kernel file of ``row`` as its header and the plan's --param values make it (not compiled)."""
        return load(row.kernel_file, -row.kernel_id - 1, dict(self.plan.overrides))

    def _compile(self, kernel) -> None:
        spec = kernel.spec
        if self.plan.device == "gpu":
            cc = self.gpu.info.compute_capability
            if cc < spec.min_cc:
                raise KernelFileError(f"{kernel.given} needs compute capability %d.%d; this GPU has %d.%d"
                                      % (*spec.min_cc, *cc))
            try:  # loads into this context too: finds a missing (or C++-mangled) entry point now
                kernels.load_module(spec, cc).get_function(spec.entry)
            except ValueError as exc:  # an #include left after inlining
                raise KernelFileError(f"{kernel.given}: {exc}") from None
            except kernels.CompileError as exc:
                raise KernelFileError(compile_summary(kernel.given, exc.stderr), exc.stderr) from None
            except UserError:  # nvcc missing, timed out or killed: said in one line already
                raise
            except Exception as exc:
                raise KernelFileError(f"{kernel.given}: no kernel '{spec.entry}' after compiling ({exc}); declare it "
                                      f'extern "C" __global__ void {spec.entry}(int M, int N, int K, ...)') from None
            return
        try:
            build.build(spec, self.log)
        except build.CompilerNotFound as exc:
            raise UserError(str(exc)) from None
        except build.BuildError as exc:
            raise KernelFileError(compile_summary(kernel.given, str(exc).split("\n", 2)[-1]), str(exc)) from None

    # -- rows -> entries ---------------------------------------------------------
    def backend_of(self, row: Row):
        if row.device == "gpu":
            return self.gpu
        return self.cpu(row.threads or core_count())

    def entries(self, rows: tuple[Row, ...] | list[Row]) -> list[Entry]:
        """One Entry per row, in order; a kernel file's row runs in its worker."""
        if self.plan.device == "cpu":
            build.check_ready([self._spec(r) for r in rows if not r.kernel_file])  # a broken compiler: one line now
        return [self._entry(row) for row in rows]

    def _spec(self, row: Row):
        if row.kernel_file:
            return self.user_kernels()[row.kernel_id].spec
        for spec in ladder(row.device):
            if spec.id == row.kernel_id and spec.precision == row.precision:
                return spec
        raise UserError(f"no {row.device.upper()} rung {row.kernel_id} in {row.precision}")

    def _entry(self, row: Row) -> Entry:
        backend, spec = self.backend_of(row), self._spec(row)
        if not row.kernel_file:
            return Entry(backend, spec, row.given_params, shape=row.shape)
        key = (row.kernel_id, row.threads)
        if key not in self._isolated:
            config = WorkerConfig(row.device, self.plan.kernel_timeout or DEFAULT_CALL_SECONDS, row.threads,
                                  self.plan.use_tuning, self.plan.gpu)
            self._isolated[key] = Isolated(self.user_kernels()[row.kernel_id], config)
        return Entry(backend, spec, row.given_params, isolated=self._isolated[key], shape=row.shape)

    # -- what a row measures, for sizes --resume ---------------------------------------
    def source_digests(self) -> dict[str, str]:
        """Each kernel of the plan (not the library rows) by name, with its
        source digest as it would build here: a rung's ``gpu rung 17 tf32``,
        a kernel file's path (gemmbench.tuning.source_digest: its code, with
        what it includes, without comments and layout)."""
        digests = {}
        for row in self.plan.rows:
            if row.is_library:
                continue
            # a kernel file's header is enough: compiling it waits until the checks before the run have passed
            spec = self._read_file(row).spec if row.kernel_file else self._spec(row)
            name = row.kernel_file or f"{row.device} rung {row.kernel_id} {row.precision}"
            if row.device == "gpu":
                digests[name] = source_digest(spec.for_device(self.gpu.info.compute_capability))
            else:
                digests[name] = code_digest(build.source_text(spec))
        return digests

    def expected_params(self, row: Row, shape: Shape) -> dict:
        """The parameters ``row`` runs with at ``shape``, as its result's
        ``params`` would say (its backend's ``chosen``, which ``prepare``
        uses): none for a library row, or where the GPU is too old for it."""
        spec = self._spec(row)
        if spec.is_baseline:
            return {}
        try:
            return self.backend_of(row).chosen(spec, shape, row.given_params)[1]
        except SkipKernel:
            return {}

    # -- before anything runs ------------------------------------------------------
    def check(self, shapes: tuple[Shape, ...] | list[Shape], results_dir: Path | None) -> None:
        """Everything the input and environment must allow, checked before
        anything is allocated, built or written: the GPU tiles' int offsets,
        host and GPU memory for the largest shape, the kernel files' launch
        geometry, and the results directory. Raises UserError."""
        validate.check_index_range(list(shapes), self.plan.device)
        validate.check_host_memory(list(shapes))
        if self.gpu is not None:
            for shape in shapes:
                try:
                    self.gpu.check_fits(shape)
                except ShapeTooLarge as exc:
                    raise UserError(f"{exc}: choose a smaller shape") from None
        for kernel in self.user_kernels().values():
            check_shapes(kernel, shapes)
        if results_dir is not None:
            validate.check_output_dir("--results-dir", Path(results_dir))

    def environment(self) -> dict:
        """The machine facts a record keeps: the host, the GPU (and its identity line), the CPU (that of the
        plan's first CPU row)."""
        env = {"host": host_name()}
        if self.gpu is not None:
            env.update(self.gpu.environment())
            env["notes"] = [identity_line(env["gpu"])]
        cpu = next((row for row in self.plan.rows if row.device == "cpu"), None)
        if cpu is not None:
            env["cpu"] = self.backend_of(cpu).environment()
        return env

    def tuning_notes(self) -> list[str]:
        """Tuning-cache entries that were ignored, and why."""
        tuning = self.gpu.tuning if self.gpu is not None else None
        return list(tuning.notes) if tuning is not None else []

