"""A command's session: device choice, the plan's rows and budgets, size checks,
then running the plan, reporting and saving. No click here: errors are
``UserError`` (one line, exit 2), raised before the first kernel runs.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .backend import Budget, Shape
from . import validate
from .execute.local import Entry, Plan, run_plan
from .errors import UserError
from .execute.interrupts import Interrupted, Interrupts
from .records.writer import RecordWriter, SaveError, recover_orphans
from .output.report import Reporter
from .records.results import RunRecord, to_json
from .rungs import baselines, get_spec, ladder
from .precision import comparison_precision

_STARTED = time.perf_counter()
DEFAULT_SIZE = {"gpu": 4096, "cpu": 1024}
DEFAULT_BUDGET = {"gpu": Budget(0.05, 10, 200, 0.5), "cpu": Budget(0.2, 3, 50, 2.0)}


class Session:
    """The backends one command uses, created once and shared by its plan."""

    def __init__(self, opts: dict, reporter: Reporter):
        self.opts = opts
        self.reporter = reporter
        self.log = (lambda message: reporter.note(f"[{time.perf_counter() - _STARTED:6.2f}s] {message}")) \
            if opts["verbose"] else None
        # why --device auto fell back to the CPU; told once the plan is known to run
        self.no_gpu_reason: str | None = None
        self._fallback_told = False
        self.kernel_files = [str(f) for f in opts.get("kernel_files") or ()]
        self.gpus = self._resolve_gpus(opts.get("gpu"), opts.get("gpus"), opts["device"])
        ordinal = self.gpus[0] if self.gpus else opts.get("gpu") or 0
        # a GPU the user named must be there: no quiet fallback to the CPU
        wanted = "gpu" if opts.get("gpu") is not None or self.gpus else opts["device"]
        self.device, self.gpu = self._resolve_device(wanted, ordinal)
        if self.gpus and len(self.gpus) == 1:  # one GPU: no worker process needed
            self.gpus = None
        self._cpu = {}
        self._user_kernels = None
        self._isolated = {}

    @staticmethod
    def _resolve_gpus(gpu, gpus, device) -> list[int] | None:
        """The GPUs of --gpus (validated, before any context exists), or None."""
        if gpu is not None and device == "cpu":
            raise UserError(f"--gpu {gpu} picks a GPU: it does not go with --device cpu")
        if gpus is None:
            return None
        if gpu is not None:
            raise UserError("give either --gpu or --gpus, not both")
        if device == "cpu":
            raise UserError("--gpus runs on GPUs: it does not go with --device cpu")
        from .gpu.device import GpuUnavailable, device_count
        from .execute.gpus import parse_gpus
        try:
            return parse_gpus(gpus, device_count())
        except GpuUnavailable as exc:
            raise UserError(f"no usable GPU: {exc}")
        except ValueError as exc:
            raise UserError(str(exc))

    def _resolve_device(self, wanted: str, ordinal: int):
        from .kernelfile import device_of
        devices = {device_of(f) for f in self.kernel_files}
        if wanted == "auto" and devices:  # a kernel file names its device: .cu the GPU, .c the CPU
            wanted = "gpu" if "gpu" in devices else "cpu"
        if wanted == "cpu":
            return "cpu", None
        from .gpu.device import GpuUnavailable
        try:
            from .gpu.backend import GpuBackend
            from .tuning import TuningCache
            tuning = None if self.opts.get("no_tune_cache") else TuningCache()
            return "gpu", GpuBackend(log=self.log, tuning=tuning, ordinal=ordinal)
        except GpuUnavailable as exc:
            cuda = [f for f in self.kernel_files if device_of(f) == "gpu"]
            if cuda:
                raise UserError(f"{cuda[0]} is a CUDA kernel: it needs a GPU ({exc})")
            if wanted == "gpu":
                raise UserError(f"no usable GPU: {exc}")
            self.no_gpu_reason = str(exc)
            return "cpu", None

    def require_gpu(self, command: str) -> None:
        """For commands that search GPU rungs' parameters (tune)."""
        if self.gpu is None:
            why = f"no usable GPU ({self.no_gpu_reason})" if self.no_gpu_reason else "--device cpu was given"
            raise UserError(f"{command} needs a GPU: {why}; the CPU rungs have no tunable parameters")

    def cpu(self, threads: int):
        """The CPU backend running everything at ``threads`` threads."""
        if threads not in self._cpu:
            from .cpu.backend import CpuBackend
            self._cpu[threads] = CpuBackend(threads=threads, log=self.log)
        return self._cpu[threads]

    def user_kernels(self) -> list:
        """The ``--kernel-file`` kernels (gemmbench.kernelfile.header.UserKernel), parsed,
        checked and compiled with their default parameters, so that a bad
        header or a compile error is an error (exit 2) before any kernel runs."""
        if self._user_kernels is None:
            from .kernelfile import KernelFileError, check_overrides, load, parse_overrides
            overrides = parse_overrides(self.opts.get("params") or ())
            kernels = [load(path, i, overrides) for i, path in enumerate(self.kernel_files)]
            check_overrides(kernels, overrides)
            for kernel in kernels:
                if kernel.spec.device != self.device:
                    want = "--device cpu (a C kernel)" if kernel.spec.device == "cpu" else "a GPU (a CUDA kernel)"
                    raise KernelFileError(f"{kernel.given} runs with {want}, not on the {self.device.upper()} ladder")
                self._compile(kernel)
            self._user_kernels = kernels
        return self._user_kernels

    def _compile(self, kernel) -> None:
        from .kernelfile import KernelFileError, compile_summary
        spec = kernel.spec
        if self.device == "gpu":
            from .gpu import compile as kernels
            cc = self.gpu.info.compute_capability
            if cc < spec.min_cc:
                raise KernelFileError(f"{kernel.given} needs compute capability %d.%d; this GPU has %d.%d"
                                      % (*spec.min_cc, *cc))
            try:  # loads into this context too: finds a missing (or C++-mangled) entry point now
                kernels.load_module(spec, cc).get_function(spec.entry)
            except ValueError as exc:  # an #include left after inlining
                raise KernelFileError(f"{kernel.given}: {exc}") from None
            except Exception as exc:
                output = getattr(exc, "stderr", None) or str(exc)
                if type(exc).__name__ == "CompileError":
                    raise KernelFileError(compile_summary(kernel.given, output), output) from None
                raise KernelFileError(f"{kernel.given}: no kernel '{spec.entry}' after compiling ({exc}); declare it "
                                      f'extern "C" __global__ void {spec.entry}(int M, int N, int K, ...)') from None
            return
        from .cpu import build
        try:
            build.build(spec, self.log)
        except build.CompilerNotFound as exc:
            raise UserError(str(exc)) from None
        except build.BuildError as exc:
            raise KernelFileError(compile_summary(kernel.given, str(exc).split("\n", 2)[-1]), str(exc)) from None

    def kernel_entry(self, backend, spec, params=None) -> Entry:
        """The row of one kernel: a user's kernel runs in its worker process."""
        kernel = next((k for k in self.user_kernels() if k.spec.id == spec.id), None) if spec.id < 0 else None
        if kernel is None:
            return Entry(backend, spec, params)
        from .execute.isolated import DEFAULT_CALL_SECONDS, Isolated, WorkerConfig
        key = (spec.id, getattr(backend, "threads", None))
        if key not in self._isolated:
            seconds = self.opts.get("kernel_timeout") or DEFAULT_CALL_SECONDS
            self._isolated[key] = Isolated(kernel, WorkerConfig(
                self.device, seconds, getattr(backend, "threads", None), not self.opts.get("no_tune_cache")))
        return Entry(backend, spec, params, isolated=self._isolated[key])

    def entries(self, ids: list[int], with_openblas: bool = False, all_baselines: bool = False) -> list[Entry]:
        """Rows for these rung ids and the ``--kernel-file`` kernels (after the
        rungs, in the order given), on the right backends, after the library
        rows they are compared with (cuBLAS SGEMM always; cuBLAS TF32 beside
        TF32 rungs, or with all_baselines)."""
        users = [k.spec for k in self.user_kernels()]
        rungs = [self._spec(i) for i in dict.fromkeys(ids) if i != 0]
        rungs.sort(key=lambda s: s.id)
        rungs += users
        precisions = {"fp32", "tf32"} if all_baselines else {"fp32", *(comparison_precision(s.precision) for s in rungs)}
        specs = baselines(self.device, precisions) + rungs
        if self.device == "gpu":
            rows = [self.kernel_entry(self.gpu, s) for s in specs]
            if with_openblas:
                from .cpu.backend import core_count
                rows.append(Entry(self.cpu(self.opts["threads"] or core_count()), get_spec("cpu", 0)))
            return rows
        from .cpu.build import check_ready
        check_ready(specs)  # a broken compiler or cache directory: one line before any kernel
        from .cpu.backend import default_threads
        baseline = get_spec("cpu", 0)
        rungs = [s for s in specs if not s.is_baseline]

        def threads_of(spec):
            return default_threads(spec, self.opts["threads"])

        rows = []
        # each thread count gets its own OpenBLAS row, the one its rungs are compared with
        for threads in dict.fromkeys(map(threads_of, rungs)) or [threads_of(baseline)]:
            group = [baseline] + [s for s in rungs if threads_of(s) == threads]
            rows += [self.kernel_entry(self.cpu(threads), s) for s in group]
        return rows

    def _spec(self, kernel_id: int):
        try:
            return get_spec(self.device, kernel_id)
        except KeyError as exc:
            if self.no_gpu_reason and any(s.id == kernel_id for s in ladder("gpu")):
                cpu_ids = [s.id for s in ladder("cpu")]
                raise UserError(f"rung {kernel_id} is a GPU rung; no usable GPU ({self.no_gpu_reason}): use "
                                f"--device cpu for the CPU ladder (rungs {min(cpu_ids)}-{max(cpu_ids)})") from None
            raise UserError(exc.args[0]) from None

    def entries_from(self, rows: list) -> list[Entry]:
        """GPU rows from their plain-data form (``workers.RowSpec``): how a
        worker process rebuilds its share of a plan."""
        def spec_of(kernel_id, precision):
            for spec in ladder("gpu"):
                if spec.id == kernel_id and spec.precision == precision:
                    return spec
            raise UserError(f"no GPU rung {kernel_id} in {precision}")
        return [Entry(self.gpu, spec_of(kid, precision), params) for kid, precision, params in rows]

    def shape(self, m, n, k) -> Shape:
        size = DEFAULT_SIZE[self.device]
        return Shape(m or size, n or size, k or size)

    def budget(self) -> Budget:
        """The sampling budget: the device's defaults, overridden by the options
        given (their ranges were checked when they were parsed). A default
        bound gives way to a bound the user gave, so ``--max-samples 1`` alone
        lowers the default minimum instead of clashing with it."""
        base, o = DEFAULT_BUDGET[self.device], self.opts
        low, high = o["min_samples"], o["max_samples"]
        if low is not None and high is not None and low > high:
            raise UserError(f"--min-samples {low} is larger than --max-samples {high}; "
                            "give a minimum no larger than the maximum")
        max_samples = high or max(base.max_samples, low or 0)
        return Budget(
            base.warmup_seconds if o["warmup"] is None else o["warmup"],
            low or min(base.min_samples, max_samples),
            max_samples,
            base.max_seconds if o["budget"] is None else o["budget"])

    def environment(self, entries: list[Entry]) -> dict:
        env = {}
        if self.gpu is not None:
            env.update(self.gpu.environment())
            from .output.runs import identity_line
            env["notes"] = [identity_line(env["gpu"])]
        cpu = next((e.backend for e in entries if e.backend.device == "cpu"), None)
        if cpu is not None:
            env["cpu"] = cpu.environment()
        return env

    def check(self, shapes: list[Shape]) -> None:
        """Everything the user's input and environment must allow, checked
        before anything is allocated, built or written: the budget, the GPU
        tiles' int offsets, host and GPU memory for the largest shape and the
        results directory (the caches the rungs build into were checked when
        the backends and rows were made). Raises UserError."""
        self.budget()
        validate.check_index_range(shapes, self.device)
        validate.check_host_memory(shapes)
        if self.gpu is not None:
            from .gpu.backend import ShapeTooLarge
            for shape in shapes:
                try:
                    self.gpu.check_fits(shape)
                except ShapeTooLarge as exc:
                    raise UserError(f"{exc}: choose a smaller shape") from None
        if not self.opts["no_save"]:
            validate.check_output_dir("--results-dir", Path(self.opts["results_dir"]))
        if self.no_gpu_reason and not self._fallback_told:  # told only once the plan is known to run
            self.reporter.note(f"No GPU ({self.no_gpu_reason}): running the CPU ladder.")
            self._fallback_told = True

    def check_user_geometry(self, entries: list[Entry], shapes: list[Shape]) -> None:
        from .kernelfile import check_shapes
        for kernel in self.user_kernels():
            if any(e.spec.id == kernel.spec.id for e in entries):
                check_shapes(kernel, shapes)

    def saved_options(self) -> dict:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.opts.items()}

    def execute(self, command: str, entries: list[Entry], shapes: list[Shape], show,
                spread: str = "same", baseline=None) -> int:
        """Run the plan (see ``run``); print what ran, and its diff against
        ``baseline`` (a loaded record, gemmbench.records.store.Loaded); return the exit code.

        Stopped early by SIGINT/SIGTERM, it still prints what finished and saves
        it marked incomplete (exit 128 + signal); when the record cannot be
        written it stops, prints what ran, and ends with one error line (exit 2).
        """
        opts, reporter = self.opts, self.reporter
        with Interrupts() as interrupts:
            outcome = self.run(command, entries, shapes, spread, interrupts)
            record, code = outcome.record, outcome.code
            diff = None
            if baseline is not None and record.results:
                from .records.diff import diff_records
                from .records.store import current_writer
                diff = diff_records(baseline.record, record, versions=(baseline.writer, current_writer()))
                code = max(code, diff.exit_code)
            if record.results or outcome.stop is None:
                if opts["as_json"]:
                    data = json.loads(to_json(record))
                    if diff is not None:
                        data["baseline_diff"] = {"baseline": str(baseline.path), **diff.to_dict()}
                    sys.stdout.write(json.dumps(data, indent=2) + "\n")
                else:
                    show(record)
                    if diff is not None:
                        from .output.runs import show_diff
                        from .records.store import record_label
                        show_diff(reporter, diff, f"{baseline.path} ({baseline.label})",
                                  f"this run ({record_label(record)})")
            if outcome.save_error:
                raise UserError(str(outcome.save_error))
            if outcome.path:
                reason = record.incomplete_reason
                reporter.note(f"saved {outcome.path}" + (f" (incomplete: {reason})" if reason else ""))
            for note in self.gpu.tuning.notes if self.gpu is not None and self.gpu.tuning is not None else ():
                reporter.note(note)  # tuning cache entries that were ignored, and why
            if isinstance(outcome.stop, Interrupted):
                reporter.alert(f"gemmbench: interrupted by {outcome.stop.name}"
                               + ("" if record.results else " before the first kernel finished: nothing saved"))
                return outcome.stop.exit_code
        return code

    def run(self, command: str, entries: list[Entry], shapes: list[Shape], spread: str = "same",
            interrupts: Interrupts | None = None) -> "Outcome":
        """Run the plan, saving every result as it lands (unless --no-save).

        With several GPUs (--gpus) the plan runs in one worker process per
        GPU, ``spread`` saying how: "same" (every GPU runs it all), "shapes"
        (the shapes are shared out) or "candidates" (the rows with given
        parameters are shared out, the library rows run everywhere).
        ``interrupts``: the signal handling of ``execute`` (none from the API)."""
        opts, reporter = self.opts, self.reporter
        interrupts = interrupts or Interrupts()  # not entered: no handlers, rows still saved whole
        self.check(shapes)
        self.check_user_geometry(entries, shapes)
        plan = Plan(entries, shapes, opts["seed"], self.budget(), opts["flush_l2"], device=self.device)
        if self.log:
            plan.log = self.log
        environment = self.environment(entries)
        if self.gpus:
            environment["gpus"] = {}  # each worker's GPU, filled as they report
        record = RunRecord(command, self.device, self.saved_options(), environment, planned=plan.steps)
        writer = None
        if not opts["no_save"]:  # the directory was checked (validate.check_output_dir)
            for path in recover_orphans(opts["results_dir"]):
                reporter.note(f"recovered {path} (incomplete) from the journal of a run that was killed")
            writer = RecordWriter(record, opts["results_dir"])

        def keep(result):
            with interrupts.deferred():  # a row is saved whole or not at all
                if result.device == "gpu" and result.gpu is None:
                    result.gpu = self.gpu.ordinal
                record.results.append(result)
                if writer:
                    writer.add(result)

        def update(result):
            with interrupts.deferred():
                if writer:
                    writer.update(result)

        stop: Interrupted | SaveError | None = None
        workers_failed = False
        try:
            if self.gpus:
                from .execute.gpus import run_on_gpus
                workers_failed = run_on_gpus(self, record, entries, shapes, spread, keep)
            else:
                with reporter.progress(plan.steps, command) as advance:
                    def on_result(result):
                        keep(result)
                        advance(f"{result.name} {result.shape}")
                    run_plan(plan, on_result, update)
        except KeyboardInterrupt:  # a SIGINT that came before our handler
            stop = Interrupted(signal.SIGINT)
        except (Interrupted, SaveError) as exc:
            stop = exc
        interrupts.hold()  # finishing: a second Ctrl-C must not lose the record

        done = f"{len(record.results)} of {plan.steps} kernels"
        reason = None if stop is None else f"interrupted by {stop.name} after {done}" \
            if isinstance(stop, Interrupted) else f"stopped after {done}: {stop}"
        save_error = stop if isinstance(stop, SaveError) else None
        record.complete, record.incomplete_reason = stop is None, reason
        if writer:
            try:
                writer.finish()
            except SaveError as exc:
                save_error = save_error or exc
        code = 1 if record.failed or workers_failed else 0
        return Outcome(record, writer.path if writer else None, code, stop, save_error)


@dataclass
class Outcome:
    """What ``Session.run`` leaves: the record, where it was saved, the exit
    code of its rows, and why it stopped early (a signal, a failed save)."""

    record: RunRecord
    path: Path | None
    code: int
    stop: "Interrupted | SaveError | None" = None
    save_error: "SaveError | None" = None
