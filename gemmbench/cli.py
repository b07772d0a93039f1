"""The command line: parse -> options -> plan -> run -> report -> save.

Exit codes: 0 ok; 1 a kernel failed verification (or crashed); 2 bad input or
a missing prerequisite, always as one line on stderr.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from . import __version__
from .backend import Budget, Shape
from .bench import Entry, Plan, run_plan
from .ladder import baselines, comparison_precision, get_spec, ladder
from .report import Reporter
from .results import RunRecord, new_result_path, save, to_json
from .sweep import parse_sweep, sweep_shapes

_STARTED = time.perf_counter()
DEFAULT_SIZE = {"gpu": 4096, "cpu": 1024}
DEFAULT_BUDGET = {"gpu": Budget(0.05, 10, 200, 0.5), "cpu": Budget(0.2, 3, 50, 2.0)}
TUNE_BUDGET_SECONDS = 0.15


class UserError(click.ClickException):
    """Bad input or a missing prerequisite: one line, exit code 2."""

    exit_code = 2


# --------------------------------------------------------------------------
# shared options
# --------------------------------------------------------------------------

def _positive(ctx, param, value):
    if value is not None and value < 1:
        raise click.BadParameter(f"must be a positive integer, got {value}", ctx, param)
    return value


def _shape_options(f):
    for name in ("k", "n", "m"):
        f = click.option(f"-{name}", type=int, default=None, callback=_positive,
                         help=f"{name.upper()} (default 4096 on the GPU, 1024 on the CPU).")(f)
    return f


def _common_options(f):
    options = [
        click.option("--device", type=click.Choice(["auto", "gpu", "cpu"]), default="auto", show_default=True,
                     help="Which ladder; auto picks the GPU when one is usable."),
        click.option("--threads", type=int, default=None, callback=_positive,
                     help="CPU threads for OpenBLAS and OpenMP (default: 1 for rungs 1-5, all cores for rung 6)."),
        click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random inputs."),
        click.option("--flush-l2", is_flag=True, help="Flush the L2 cache before every timed call (cold cache)."),
        click.option("--warmup", type=float, default=None, help="Warm-up seconds per kernel."),
        click.option("--min-samples", type=int, default=None, callback=_positive, help="Fewest samples per kernel."),
        click.option("--max-samples", type=int, default=None, callback=_positive, help="Most samples per kernel."),
        click.option("--budget", type=float, default=None, help="Seconds of samples per kernel before stopping."),
        click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout."),
        click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv"]), default="table",
                     show_default=True, help="How to print the results."),
        click.option("--no-save", is_flag=True, help="Do not save a JSON record under --results-dir."),
        click.option("--results-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("results"),
                     show_default=True, help="Where records are saved."),
        click.option("--no-tune-cache", is_flag=True,
                     help="Ignore the parameters stored by 'gemmbench tune' (use each rung's defaults)."),
        click.option("-v", "--verbose", is_flag=True, help="Show compiler commands."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


# --------------------------------------------------------------------------
# building a plan
# --------------------------------------------------------------------------

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


def execute(command: str, session: Session, entries: list[Entry], shapes: list[Shape], show) -> int:
    """Run the plan, saving after every kernel; print; return the exit code."""
    opts, reporter = session.opts, session.reporter
    session.check_fits(shapes)
    plan = Plan(entries, shapes, opts["seed"], session.budget(), opts["flush_l2"])
    if session.log:
        plan.log = session.log
    saved = {k: (str(v) if isinstance(v, Path) else v) for k, v in opts.items()}
    record = RunRecord(command, session.device, saved, session.environment(entries))
    path = None if opts["no_save"] else new_result_path(opts["results_dir"], command, session.device)

    with reporter.progress(plan.steps, command) as advance:
        def on_result(result):
            record.results.append(result)
            if path is not None:
                save(record, path)
            advance(f"{result.name} {result.shape}")
        run_plan(plan, on_result)

    if opts["as_json"]:
        click.echo(to_json(record, indent=2))
    else:
        show(record)
    if path is not None:
        reporter.note(f"saved {path}")
    return 1 if record.failed else 0


def _reporter(opts: dict) -> Reporter:
    return Reporter(opts["fmt"], quiet=opts["as_json"])


# --------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------

@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gemmbench")
def cli():
    """Benchmark a ladder of hand-written SGEMM kernels against cuBLAS and OpenBLAS."""


@cli.command()
@click.option("-i", "--kernel", "kernel_id", type=int, required=True, help="Rung id (0 = the library baseline).")
@_shape_options
@_common_options
def run(kernel_id, m, n, k, **opts):
    """One rung at one shape, beside the library baseline."""
    opts.update(kernel=kernel_id, m=m, n=n, k=k)
    reporter = _reporter(opts)
    session = Session(opts, reporter)
    entries = session.entries([0, kernel_id])
    return execute("run", session, entries, [session.shape(m, n, k)], reporter.show_results)


@cli.command()
@click.option("--all", "all_rungs", is_flag=True, help="Every rung of the ladder.")
@click.option("-i", "--kernel", "kernel_ids", type=int, multiple=True, help="Rung ids to compare (repeatable).")
@_shape_options
@_common_options
def compare(all_rungs, kernel_ids, m, n, k, **opts):
    """Rungs side by side at one shape, with cuBLAS and OpenBLAS."""
    if all_rungs and kernel_ids:
        raise UserError("give either --all or -i, not both")
    if not all_rungs and not kernel_ids:
        raise UserError("nothing to compare: give --all or one or more -i")
    opts.update(all=all_rungs, kernels=list(kernel_ids), m=m, n=n, k=k)
    reporter = _reporter(opts)
    session = Session(opts, reporter)
    ids = [s.id for s in ladder(session.device)] if all_rungs else [0, *kernel_ids]
    entries = session.entries(ids, with_openblas=True, all_baselines=all_rungs)
    return execute("compare", session, entries, [session.shape(m, n, k)], reporter.show_results)


@cli.command()
@click.option("--sweep", required=True, help="Sizes: a..b doubles, a..b:step steps, a,b,c lists.")
@click.option("-i", "--kernel", "kernel_ids", type=int, multiple=True,
              help="Rung ids (repeatable; default: the baseline and every rung).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw GFLOP/s against size into this PNG (needs matplotlib).")
@_shape_options
@_common_options
def sizes(sweep, kernel_ids, plot, m, n, k, **opts):
    """A size sweep: GFLOP/s of each kernel at each size."""
    opts.update(sweep=sweep, kernels=list(kernel_ids), m=m, n=n, k=k, plot=str(plot) if plot else None)
    try:
        shapes = sweep_shapes(parse_sweep(sweep), m, n, k)
    except ValueError as exc:
        raise UserError(str(exc))
    if plot is not None:
        from .plot import require_matplotlib
        try:
            require_matplotlib()
        except ImportError as exc:
            raise UserError(str(exc))
    reporter = _reporter(opts)
    session = Session(opts, reporter)
    ids = [0, *kernel_ids] if kernel_ids else [s.id for s in ladder(session.device)]
    entries = session.entries(ids, all_baselines=not kernel_ids)

    def show(record):
        reporter.show_sweep(record)
        if plot is not None:
            from .plot import plot_sweep
            plot_sweep(record, plot)
            reporter.note(f"plot written to {plot}")

    return execute("sizes", session, entries, shapes, show)


@cli.command()
@click.option("-i", "--kernel", "kernel_id", type=int, required=True, help="Rung id with tunable parameters.")
@click.option("--limit", type=int, default=None, callback=_positive,
              help="Try at most this many candidates (the defaults plus a seeded random sample).")
@click.option("--top", type=int, default=10, show_default=True, callback=_positive,
              help="How many of the best configurations to show.")
@click.option("--jobs", type=int, default=None, callback=_positive,
              help="Parallel nvcc processes (default: one per core).")
@_shape_options
@_common_options
def tune(kernel_id, limit, top, jobs, m, n, k, **opts):
    """Search a rung's parameter space at one shape; store the best for this GPU."""
    opts.update(kernel=kernel_id, limit=limit, top=top, m=m, n=n, k=k, no_tune_cache=True)
    if opts["budget"] is None:  # many candidates: a shorter look at each than run's
        opts["budget"] = TUNE_BUDGET_SECONDS
    reporter = _reporter(opts)
    session = Session(opts, reporter)
    if session.gpu is None:
        raise UserError("tune needs a GPU: the CPU rungs have no tunable parameters")
    from .tuning import TuningCache, candidates
    gpu = session.gpu
    try:
        spec = get_spec("gpu", kernel_id)
    except KeyError as exc:
        raise UserError(exc.args[0])
    run_spec = spec.for_device(gpu.info.compute_capability)
    if not run_spec.search_space:
        tunable = ", ".join(str(s.id) for s in ladder("gpu") if s.search_space)
        raise UserError(f"rung {kernel_id} has no tunable parameters (tunable rungs: {tunable})")
    shape = session.shape(m, n, k)
    session.check_fits([shape])
    found, valid = candidates(run_spec, limit, opts["seed"])
    reporter.note(f"{spec.name}: {valid} valid configurations; trying {len(found)}")
    built = _compile_candidates(gpu, run_spec, found, jobs, reporter)
    entries = [e for e in session.entries([kernel_id]) if e.spec.is_baseline] + \
        [Entry(gpu, spec, params=p) for p in built]
    cache = TuningCache()

    def show(record):
        reporter.show_tuning(record, top, len(found) - len(built))
        best = record.best_result(spec.id)
        if best is None:
            reporter.note("no candidate passed verification: nothing stored")
            return
        try:
            note = cache.store(gpu.info.name, run_spec, shape, best.params, best.gflops, len(built))
        except OSError as exc:
            raise UserError(f"could not write the tuning cache {cache.path}: {exc.strerror or exc}")
        if note:
            reporter.note(note)
        reporter.note(f"stored the best for {gpu.info.name}, rung {spec.id}, shapes like {shape} in {cache.path}")

    return execute("tune", session, entries, [shape], show)


def _compile_candidates(gpu, spec, found: list[dict], jobs: int | None, reporter) -> list[dict]:
    """The candidates that compile (in parallel, with a progress bar); the others are reported."""
    from .tuning import compile_candidates
    built = []
    with reporter.progress(len(found), "compile") as advance:
        for params, error in compile_candidates(spec, gpu.info.compute_capability, found, jobs):
            advance(" ".join(f"{k}={v}" for k, v in params.items()))
            if error is None:
                built.append(params)
            else:
                reporter.note(f"does not compile: {params}: {error}")
    return built


@cli.command(name="list")
@click.option("--device", type=click.Choice(["gpu", "cpu"]), default="gpu", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv"]), default="table", show_default=True)
def list_rungs(device, fmt):
    """The ladder, one line per rung."""
    Reporter(fmt).show_ladder(ladder(device), device)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: click in non-standalone mode, so every error is one line."""
    try:
        code = cli.main(args=argv, prog_name="gemmbench", standalone_mode=False)
    except click.exceptions.Exit as exc:  # --help, --version
        code = exc.exit_code
    except click.UsageError as exc:  # bad option, bad value, missing option
        click.echo(f"gemmbench: error: {exc.format_message()}", err=True)
        code = 2
    except click.ClickException as exc:
        click.echo(f"gemmbench: error: {exc.format_message()}", err=True)
        code = exc.exit_code
    except click.Abort:
        click.echo("gemmbench: interrupted", err=True)
        code = 130
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
