"""A command's session: device choice, the plan's rows and budgets, size checks,
then running the plan, reporting and saving. No click here: errors are
``UserError`` (one line, exit 2), raised before the first kernel runs.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

from .backend import Budget, Shape
from .bench import Entry, Plan, run_plan
from .errors import UserError
from .interrupts import Interrupted, Interrupts
from .recordfile import RecordWriter, SaveError, check_writable, recover_orphans
from .report import Reporter
from .results import RunRecord, to_json
from .rungs import baselines, get_spec
from .spec import comparison_precision

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
        self.device, self.gpu = self._resolve_device(opts["device"])
        self._cpu = {}

    def _resolve_device(self, wanted: str):
        if wanted == "cpu":
            return "cpu", None
        from .gpu.device import GpuUnavailable
        try:
            from .gpu.backend import GpuBackend
            from .tuning import TuningCache
            tuning = None if self.opts.get("no_tune_cache") else TuningCache()
            return "gpu", GpuBackend(log=self.log, tuning=tuning)
        except GpuUnavailable as exc:
            if wanted == "gpu":
                raise UserError(f"no usable GPU: {exc}")
            self.reporter.note(f"No GPU ({exc}): running the CPU ladder.")
            return "cpu", None

    def cpu(self, threads: int):
        """The CPU backend running everything at ``threads`` threads."""
        if threads not in self._cpu:
            from .cpu.backend import CpuBackend
            self._cpu[threads] = CpuBackend(threads=threads, log=self.log)
        return self._cpu[threads]

    def entries(self, ids: list[int], with_openblas: bool = False, all_baselines: bool = False) -> list[Entry]:
        """Rows for these rung ids, on the right backends, after the library
        rows they are compared with (cuBLAS SGEMM always; cuBLAS TF32 beside
        TF32 rungs, or with all_baselines)."""
        try:
            rungs = [get_spec(self.device, i) for i in dict.fromkeys(ids) if i != 0]
        except KeyError as exc:
            raise UserError(exc.args[0])
        rungs.sort(key=lambda s: s.id)
        precisions = {"fp32", "tf32"} if all_baselines else {"fp32", *(comparison_precision(s.precision) for s in rungs)}
        specs = baselines(self.device, precisions) + rungs
        if self.device == "gpu":
            rows = [Entry(self.gpu, s) for s in specs]
            if with_openblas:
                from .cpu.backend import core_count
                rows.append(Entry(self.cpu(self.opts["threads"] or core_count()), get_spec("cpu", 0)))
            return rows
        if any(not s.is_baseline for s in specs):
            from .cpu.build import CompilerNotFound, compiler
            try:
                compiler()
            except CompilerNotFound as exc:
                raise UserError(str(exc))
        from .cpu.backend import default_threads
        baseline = get_spec("cpu", 0)
        rungs = [s for s in specs if not s.is_baseline]

        def threads_of(spec):
            return default_threads(spec, self.opts["threads"])

        rows = []
        # each thread count gets its own OpenBLAS row, the one its rungs are compared with
        for threads in dict.fromkeys(map(threads_of, rungs)) or [threads_of(baseline)]:
            group = [baseline] + [s for s in rungs if threads_of(s) == threads]
            rows += [Entry(self.cpu(threads), s) for s in group]
        return rows

    def shape(self, m, n, k) -> Shape:
        size = DEFAULT_SIZE[self.device]
        return Shape(m or size, n or size, k or size)

    def budget(self) -> Budget:
        base = DEFAULT_BUDGET[self.device]
        o = self.opts
        budget = Budget(
            base.warmup_seconds if o["warmup"] is None else o["warmup"],
            o["min_samples"] or base.min_samples,
            o["max_samples"] or max(base.max_samples, o["min_samples"] or 0),
            base.max_seconds if o["budget"] is None else o["budget"])
        if budget.warmup_seconds < 0 or budget.max_seconds < 0:
            raise UserError("--warmup and --budget must be >= 0")
        if budget.min_samples > budget.max_samples:
            raise UserError("--min-samples is larger than --max-samples")
        return budget

    def environment(self, entries: list[Entry]) -> dict:
        env = {}
        if self.gpu is not None:
            env.update(self.gpu.environment())
        cpu = next((e.backend for e in entries if e.backend.device == "cpu"), None)
        if cpu is not None:
            env["cpu"] = cpu.environment()
        return env

    def check_fits(self, shapes: list[Shape]) -> None:
        if self.gpu is None:
            return
        from .gpu.backend import ShapeTooLarge
        for shape in shapes:
            try:
                self.gpu.check_fits(shape)
            except ShapeTooLarge as exc:
                raise UserError(str(exc))

    def execute(self, command: str, entries: list[Entry], shapes: list[Shape], show) -> int:
        """Run the plan, saving every result as it lands; print; return the exit code.

        Stopped early by SIGINT/SIGTERM, it still prints what finished and saves
        it marked incomplete (exit 128 + signal); when the record cannot be
        written it stops, prints what ran, and ends with one error line (exit 2).
        """
        opts, reporter = self.opts, self.reporter
        self.check_fits(shapes)
        plan = Plan(entries, shapes, opts["seed"], self.budget(), opts["flush_l2"], device=self.device)
        if self.log:
            plan.log = self.log
        saved = {k: (str(v) if isinstance(v, Path) else v) for k, v in opts.items()}
        record = RunRecord(command, self.device, saved, self.environment(entries), planned=plan.steps)
        writer = None
        if not opts["no_save"]:
            check_writable(opts["results_dir"])
            for path in recover_orphans(opts["results_dir"]):
                reporter.note(f"recovered {path} (incomplete) from the journal of a run that was killed")
            writer = RecordWriter(record, opts["results_dir"])

        stop: Interrupted | SaveError | None = None
        with Interrupts() as interrupts:
            def on_result(result):
                with interrupts.deferred():  # a row is saved whole or not at all
                    record.results.append(result)
                    if writer:
                        writer.add(result)
                advance(f"{result.name} {result.shape}")

            def on_update(result):
                with interrupts.deferred():
                    if writer:
                        writer.update(result)
            try:
                with reporter.progress(plan.steps, command) as advance:
                    run_plan(plan, on_result, on_update)
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
            if record.results or stop is None:
                if opts["as_json"]:
                    sys.stdout.write(to_json(record, indent=2) + "\n")
                else:
                    show(record)
            if save_error:
                raise UserError(str(save_error))
            if writer and writer.path:
                reporter.note(f"saved {writer.path}" + (f" (incomplete: {reason})" if reason else ""))
            if isinstance(stop, Interrupted):
                reporter.alert(f"gemmbench: interrupted by {stop.name}"
                               + ("" if record.results else " before the first kernel finished: nothing saved"))
                return stop.exit_code
        return 1 if record.failed else 0
