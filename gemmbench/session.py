"""A command's session: device choice, the plan's rows and budgets, size checks,
then running the plan, reporting and saving. No click here: errors are
``UserError`` (one line, exit 2), raised before the first kernel runs.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .backend import Budget, Shape
from .bench import Entry, Plan, run_plan
from .errors import UserError
from .report import Reporter
from .results import RunRecord, new_result_path, save, to_json
from .rungs import baselines, get_spec, ladder
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
        self.gpus = self._resolve_gpus(opts.get("gpu"), opts.get("gpus"), opts["device"])
        ordinal = self.gpus[0] if self.gpus else opts.get("gpu") or 0
        # a GPU the user named must be there: no quiet fallback to the CPU
        wanted = "gpu" if opts.get("gpu") is not None or self.gpus else opts["device"]
        self.device, self.gpu = self._resolve_device(wanted, ordinal)
        if self.gpus and len(self.gpus) == 1:  # one GPU: no worker process needed
            self.gpus = None
        self._cpu = {}

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
        from .workers import parse_gpus
        try:
            return parse_gpus(gpus, device_count())
        except GpuUnavailable as exc:
            raise UserError(f"no usable GPU: {exc}")
        except ValueError as exc:
            raise UserError(str(exc))

    def _resolve_device(self, wanted: str, ordinal: int):
        if wanted == "cpu":
            return "cpu", None
        from .gpu.device import GpuUnavailable
        try:
            from .gpu.backend import GpuBackend
            from .tuning import TuningCache
            tuning = None if self.opts.get("no_tune_cache") else TuningCache()
            return "gpu", GpuBackend(log=self.log, tuning=tuning, ordinal=ordinal)
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
            from .report_runs import identity_line
            env["notes"] = [identity_line(env["gpu"])]
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


    def saved_options(self) -> dict:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.opts.items()}

    def execute(self, command: str, entries: list[Entry], shapes: list[Shape], show,
                spread: str = "same", baseline=None) -> int:
        """Run the plan, saving after every kernel; print; return the exit code.

        With several GPUs (--gpus) the plan runs in one worker process per
        GPU, ``spread`` saying how: "same" (every GPU runs it all), "shapes"
        (the shapes are shared out) or "candidates" (the rows with given
        parameters are shared out, the library rows run everywhere).
        ``baseline``: a loaded record (gemmbench.store.Loaded) to diff against."""
        opts, reporter = self.opts, self.reporter
        self.check_fits(shapes)
        budget = self.budget()
        path = None if opts["no_save"] else new_result_path(opts["results_dir"], command, self.device)
        if self.gpus:
            from .workers import run_on_gpus
            record, code = run_on_gpus(self, command, entries, shapes, spread, path)
        else:
            plan = Plan(entries, shapes, opts["seed"], budget, opts["flush_l2"])
            if self.log:
                plan.log = self.log
            record = RunRecord(command, self.device, self.saved_options(), self.environment(entries))
            with reporter.progress(plan.steps, command) as advance:
                def on_result(result):
                    if result.device == "gpu":
                        result.gpu = self.gpu.ordinal
                    record.results.append(result)
                    if path is not None:
                        save(record, path)
                    advance(f"{result.name} {result.shape}")
                run_plan(plan, on_result)
            code = 1 if record.failed else 0

        diff = None
        if baseline is not None:
            from .diff import diff_records
            from .store import current_writer
            diff = diff_records(baseline.record, record, versions=(baseline.writer, current_writer()))
            code = max(code, diff.exit_code)
        if opts["as_json"] and diff is None:
            sys.stdout.write(to_json(record, indent=2) + "\n")
        elif opts["as_json"]:
            data = {**json.loads(to_json(record)), "baseline_diff": {"baseline": str(baseline.path), **diff.to_dict()}}
            sys.stdout.write(json.dumps(data, indent=2) + "\n")
        else:
            show(record)
            if diff is not None:
                from .report_runs import show_diff
                from .store import record_label
                show_diff(reporter, diff, f"{baseline.path} ({baseline.label})", f"this run ({record_label(record)})")
        if path is not None:
            reporter.note(f"saved {path}")
        return code
