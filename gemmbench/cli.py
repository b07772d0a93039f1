"""The command line: parse -> options -> plan -> run -> report -> save.

Exit codes: 0 ok; 1 a kernel failed verification (or crashed); 2 bad input or
a missing prerequisite, always as one line on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import __version__, validate
from .errors import UserError
from .output.report import Reporter
from .output.runs import show_record
from .rungs import get_spec, ladder
from .session import Session
from .sweep import parse_sweep, sweep_shapes

TUNE_BUDGET_SECONDS = 0.15


# --------------------------------------------------------------------------
# option types: every number is checked when it is parsed
# --------------------------------------------------------------------------

class Number(click.ParamType):
    """A number written in ASCII within [low, high]: click's int also takes
    full-width digits such as '９', its float takes nan and inf. ``high`` may be
    a function, for bounds that depend on the machine."""

    def __init__(self, parse, name: str, low=None, high=None, why: str = ""):
        self.parse, self.name, self.low, self.high, self.why = parse, name, low, high, why

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        high = self.high() if callable(self.high) else self.high
        wanted = f"give {_range_text(self.low, high)}{self.why}"
        try:
            number = self.parse(value)
        except ValueError as exc:
            self.fail(f"{exc}: {wanted}", param, ctx)
        if (self.low is not None and number < self.low) or (high is not None and number > high):
            self.fail(f"{value.strip()} is out of range: {wanted}", param, ctx)
        return number


def ascii_int(low: int | None = None, high=None, why: str = "") -> Number:
    return Number(validate.parse_int, "integer", low, high, why)


def finite_seconds(low: float, high: float) -> Number:
    return Number(validate.parse_finite_float, "seconds", low, high, " seconds")


def _range_text(low, high) -> str:
    if high is None:
        return f"an integer >= {low}"
    return f"a value from {low:g} to {high:g}" if isinstance(low, float) else f"an integer from {low} to {high}"


class DirectoryPath(click.ParamType):
    """A directory path, never empty (Path('') would mean the current directory)."""

    name = "directory"

    def convert(self, value, param, ctx):
        if isinstance(value, Path):
            return value
        if not value.strip():
            self.fail("an empty path; give a directory (default: results)", param, ctx)
        return Path(value)


POSITIVE = ascii_int(1)
RUNG_ID = ascii_int(0)
SIZE = ascii_int(1, validate.MAX_DIMENSION, " (the kernels take int sizes)")
THREADS = ascii_int(1, validate.max_threads, " (4 per core here, at most 1024)")
SAMPLES = ascii_int(1, validate.MAX_SAMPLES)


# --------------------------------------------------------------------------
# shared options
# --------------------------------------------------------------------------

def _shape_options(f):
    for name in ("k", "n", "m"):
        f = click.option(f"-{name}", type=SIZE, default=None,
                         help=f"{name.upper()} (default 4096 on the GPU, 1024 on the CPU).")(f)
    return f


def _common_options(f):
    options = [
        click.option("--device", type=click.Choice(["auto", "gpu", "cpu"]), default="auto", show_default=True,
                     help="Which ladder; auto picks the GPU when one is usable."),
        click.option("--threads", type=THREADS, default=None,
                     help="CPU threads for OpenBLAS and OpenMP (default: 1 for rungs 1-5, all cores for rung 6; "
                          "at most 4 per core)."),
        click.option("--seed", type=ascii_int(0, validate.SEED_MAX), default=0, show_default=True,
                     help="Seed of the random inputs (0 to 2**32-1)."),
        click.option("--flush-l2", is_flag=True, help="Flush the L2 cache before every timed call (cold cache)."),
        click.option("--warmup", type=finite_seconds(0.0, validate.MAX_WARMUP_SECONDS), default=None,
                     help=f"Warm-up seconds per kernel (0 to {validate.MAX_WARMUP_SECONDS:g})."),
        click.option("--min-samples", type=SAMPLES, default=None, help="Fewest samples per kernel."),
        click.option("--max-samples", type=SAMPLES, default=None, help="Most samples per kernel."),
        click.option("--budget", type=finite_seconds(0.0, validate.MAX_BUDGET_SECONDS), default=None,
                     help=f"Seconds of samples per kernel before stopping (0 to {validate.MAX_BUDGET_SECONDS:g})."),
        click.option("--json", "as_json", is_flag=True,
                     help="Print the results as JSON on stdout (conflicts with --format csv/markdown)."),
        click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv"]), default="table",
                     show_default=True, help="How to print the results."),
        click.option("--no-save", is_flag=True, help="Do not save a JSON record under --results-dir."),
        click.option("--results-dir", type=DirectoryPath(), default=Path("results"),
                     show_default=True, help="Where records are saved."),
        click.option("--no-tune-cache", is_flag=True,
                     help="Ignore the parameters stored by 'gemmbench tune' (use each rung's defaults)."),
        click.option("-v", "--verbose", is_flag=True, help="Show compiler commands and timings on stderr."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _kernel_file_options(f):
    """A user's own kernel files (gemmbench.kernelfile.header), run beside the ladder."""
    options = [
        click.option("--kernel-file", "kernel_files", multiple=True, type=click.Path(dir_okay=False),
                     help="Your own kernel: a .cu (GPU) or .c (CPU) file with a 'gemmbench kernel' header "
                          "(repeatable; shown as rows -1, -2, ...)."),
        click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
                     help="Override a parameter of the kernel files (repeatable)."),
        click.option("--kernel-timeout", type=finite_seconds(0.001, 3600.0), default=None,
                     help="Seconds one call of a kernel file may run before its row FAILs (default 10)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


# -- which GPUs, and a saved run to compare with (issue 10) -------------------

def _gpu_option(f):
    return click.option("--gpu", type=RUNG_ID, default=None,
                        help="Which GPU, by CUDA's index (default 0; CUDA_VISIBLE_DEVICES is honoured).")(f)


def _gpus_option(f):
    return click.option("--gpus", default=None, metavar="all|0,2,3",
                        help="Several GPUs, one worker process each: 'all' or a list of indices.")(f)


def _baseline_option(f):
    return click.option("--baseline", type=click.Path(path_type=Path), default=None, metavar="RECORD.json",
                        help="Also diff this run against a saved record (exit 1 on a significant slowdown).")(f)


def _load_baseline(path: Path | None):
    """The --baseline record, validated before anything runs."""
    if path is None:
        return None
    from .records.store import load
    return load(path)


def _reporter(opts: dict) -> Reporter:
    """Where output goes: with --json, stdout holds the JSON alone and notes
    stay off stderr too, unless -v asks for the log."""
    if opts["as_json"] and opts["fmt"] != "table":
        raise UserError(f"--json and --format {opts['fmt']} conflict: --json prints JSON; give one of them")
    return Reporter(opts["fmt"], quiet=opts["as_json"] and not opts["verbose"])


# --------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------

@click.group(context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(__version__, prog_name="gemmbench")
@click.pass_context
def cli(ctx):
    """Benchmark a ladder of hand-written SGEMM kernels against cuBLAS and OpenBLAS."""
    if ctx.invoked_subcommand is None:  # bare 'gemmbench': the help, and success
        click.echo(ctx.get_help())


@cli.command()
@click.option("-i", "--kernel", "kernel_id", type=RUNG_ID, default=None, help="Rung id (0 = the library baseline).")
@_shape_options
@_kernel_file_options
@_common_options
@_gpu_option
@_baseline_option
def run(kernel_id, m, n, k, baseline, **opts):
    """One rung (or kernel file) at one shape, beside the library baseline."""
    if kernel_id is None and not opts["kernel_files"]:
        raise UserError("nothing to run: give -i or --kernel-file")
    opts.update(kernel=kernel_id, m=m, n=n, k=k)
    baseline = _load_baseline(baseline)
    reporter = _reporter(opts)
    session = Session(opts, reporter)
    entries = session.entries([0] if kernel_id is None else [0, kernel_id])
    return session.execute("run", entries, [session.shape(m, n, k)], lambda r: show_record(reporter, r),
                           baseline=baseline)


@cli.command()
@click.option("--all", "all_rungs", is_flag=True, help="Every rung of the ladder.")
@click.option("-i", "--kernel", "kernel_ids", type=RUNG_ID, multiple=True, help="Rung ids to compare (repeatable).")
@_shape_options
@_kernel_file_options
@_common_options
@_gpu_option
@_gpus_option
@_baseline_option
def compare(all_rungs, kernel_ids, m, n, k, baseline, **opts):
    """Rungs side by side at one shape, with cuBLAS and OpenBLAS."""
    if all_rungs and kernel_ids:
        raise UserError("give either --all or -i, not both")
    if not all_rungs and not kernel_ids and not opts["kernel_files"]:
        raise UserError("nothing to compare: give --all, one or more -i, or --kernel-file")
    opts.update(all=all_rungs, kernels=list(kernel_ids), m=m, n=n, k=k)
    baseline = _load_baseline(baseline)
    reporter = _reporter(opts)
    session = Session(opts, reporter)
    ids = [s.id for s in ladder(session.device)] if all_rungs else [0, *kernel_ids]
    entries = session.entries(ids, with_openblas=True, all_baselines=all_rungs)
    return session.execute("compare", entries, [session.shape(m, n, k)], lambda r: show_record(reporter, r),
                           baseline=baseline)


@cli.command()
@click.option("--sweep", required=True, help="Sizes: a..b doubles, a..b:step steps, a,b,c lists.")
@click.option("-i", "--kernel", "kernel_ids", type=RUNG_ID, multiple=True,
              help="Rung ids (repeatable; default: the baseline and every rung).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw GFLOP/s against size into this image (.png, .svg, .pdf...; needs matplotlib). "
                   "An existing file is kept unless --overwrite is given.")
@click.option("--overwrite", is_flag=True, help="Let --plot replace an existing file.")
@_shape_options
@_kernel_file_options
@_common_options
@_gpu_option
@_gpus_option
@_baseline_option
def sizes(sweep, kernel_ids, plot, overwrite, m, n, k, baseline, **opts):
    """A size sweep: GFLOP/s of each kernel at each size."""
    opts.update(sweep=sweep, kernels=list(kernel_ids), m=m, n=n, k=k, plot=str(plot) if plot else None)
    try:
        shapes = sweep_shapes(parse_sweep(sweep), m, n, k)
    except ValueError as exc:
        raise UserError(str(exc))
    if plot is not None:
        from .output.plot import require_matplotlib
        require_matplotlib()
        validate.check_plot_path(plot, overwrite)
    baseline = _load_baseline(baseline)
    reporter = _reporter(opts)
    session = Session(opts, reporter)
    chosen = kernel_ids or opts["kernel_files"]  # kernel files alone: just them and the baselines
    ids = [0, *kernel_ids] if chosen else [s.id for s in ladder(session.device)]
    entries = session.entries(ids, all_baselines=not chosen)

    def show(record):
        show_record(reporter, record)
        if plot is not None:
            from .output.plot import plot_sweep
            plot_sweep(record, plot, overwrite)
            reporter.note(f"plot written to {plot}")

    return session.execute("sizes", entries, shapes, show, spread="shapes", baseline=baseline)


@cli.command()
@click.option("-i", "--kernel", "kernel_id", type=RUNG_ID, default=None, help="Rung id with tunable parameters.")
@click.option("--limit", type=POSITIVE, default=None,
              help="Try at most this many candidates (the defaults plus a seeded random sample).")
@click.option("--top", type=POSITIVE, default=10, show_default=True,
              help="How many of the best configurations to show.")
@click.option("--jobs", type=THREADS, default=None,
              help="Parallel nvcc processes (default: one per core; at most 4 per core).")
@_shape_options
@_kernel_file_options
@_common_options
@_gpu_option
@_gpus_option
def tune(kernel_id, limit, top, jobs, m, n, k, **opts):
    """Search a rung's (or a kernel file's) parameter space at one shape; store the best for this GPU."""
    if (kernel_id is None) == (not opts["kernel_files"]) or len(opts["kernel_files"]) > 1:
        raise UserError("tune one kernel: give -i or one --kernel-file")
    opts.update(kernel=kernel_id, limit=limit, top=top, m=m, n=n, k=k, no_tune_cache=True)
    if opts["budget"] is None:  # many candidates: a shorter look at each than run's
        opts["budget"] = TUNE_BUDGET_SECONDS
    reporter = _reporter(opts)
    session = Session(opts, reporter)
    session.require_gpu("tune")
    from .tuning import TuningCache, candidates
    gpu = session.gpu
    users = session.user_kernels()
    try:
        spec = users[0].spec if users else get_spec("gpu", kernel_id)
    except KeyError as exc:
        raise UserError(exc.args[0])
    run_spec = spec.for_device(gpu.info.compute_capability)
    if users and not spec.search_space:
        raise UserError(f"{users[0].given} has no search space: add a 'search:' line to its header")
    if not run_spec.search_space:
        tunable = ", ".join(str(s.id) for s in ladder("gpu") if s.search_space)
        raise UserError(f"rung {kernel_id} has no tunable parameters (tunable rungs: {tunable})")
    shape = session.shape(m, n, k)
    session.check([shape])  # before nvcc fills the cache with candidates
    cache = TuningCache()
    cache.check_writable()
    found, valid = candidates(run_spec, limit, opts["seed"])
    reporter.note(f"{spec.name}: {valid} valid configurations; trying {len(found)}")
    built = _compile_candidates(gpu, run_spec, found, jobs, reporter)
    opts["not_compiled"] = len(found) - len(built)  # saved, so 'show' prints the same summary
    entries = [e for e in session.entries([0] if users else [kernel_id]) if e.spec.is_baseline] + \
        [session.kernel_entry(gpu, spec, params=p) for p in built]

    def show(record):
        show_record(reporter, record)
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

    return session.execute("tune", entries, [shape], show, spread="candidates")


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


@cli.command()
@click.argument("records", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv"]), default="table", show_default=True)
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Draw a sizes record's GFLOP/s against size into this PNG (needs matplotlib).")
def show(records, fmt, plot):
    """Saved records: one as its run printed it; several side by side."""
    from .output.runs import show_side_by_side
    from .records.store import load
    loaded = [load(path) for path in records]
    if plot is not None:
        from .output.plot import plot_sweep, require_matplotlib
        if len(loaded) != 1 or loaded[0].record.command != "sizes":
            raise UserError(f"--plot draws one sizes record; got {', '.join(l.record.command for l in loaded)}")
        require_matplotlib()
    reporter = Reporter(fmt)
    for item in loaded:
        if not item.complete:
            reporter.note(f"{item.path}: the run did not finish (complete=false): showing what it saved")
    if len(loaded) == 1:
        show_record(reporter, loaded[0].record)
    else:
        show_side_by_side(reporter, [l.record for l in loaded], [l.label for l in loaded])
    if plot is not None:
        plot_sweep(loaded[0].record, plot)
        reporter.note(f"plot written to {plot}")
    return 0


@cli.command()
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--threshold", default="3%", show_default=True,
              help="Slower by more than this (and significantly) is a regression.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON on stdout.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv"]), default="table", show_default=True)
def diff(old, new, threshold, as_json, fmt):
    """Two saved records row by row; exit 1 when a row got significantly slower."""
    import json
    from .records.diff import diff_records, parse_threshold
    from .output.runs import show_diff
    from .records.store import load
    try:
        fraction = parse_threshold(threshold)
    except ValueError as exc:
        raise UserError(str(exc))
    a, b = load(old), load(new)
    result = diff_records(a.record, b.record, fraction, versions=(a.writer, b.writer))
    if as_json:
        click.echo(json.dumps({"old": str(a.path), "new": str(b.path), **result.to_dict()}, indent=2))
    else:
        show_diff(Reporter(fmt), result, f"{a.path} ({a.label})", f"{b.path} ({b.label})")
    return result.exit_code


@cli.command(name="list")
@click.option("--device", type=click.Choice(["auto", "gpu", "cpu"]), default="auto", show_default=True,
              help="Which ladder; auto shows the GPU ladder when a GPU is usable, else the CPU ladder.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv"]), default="table", show_default=True)
def list_rungs(device, fmt):
    """The ladder, one line per rung."""
    reporter = Reporter(fmt)
    if device == "auto":
        from .gpu.device import GpuUnavailable, open_device
        try:
            open_device()
            device = "gpu"
        except GpuUnavailable as exc:
            reporter.note(f"No GPU ({exc}): showing the CPU ladder (--device gpu shows the GPU ladder).")
            device = "cpu"
    reporter.show_ladder(ladder(device), device)
    return 0

# --------------------------------------------------------------------------
# instruments: why a rung is fast (gemmbench.inspect)
# --------------------------------------------------------------------------

def _gpu_spec(kernel_id: int):
    try:
        return get_spec("gpu", kernel_id)
    except KeyError as exc:
        raise UserError(exc.args[0])


def _inspected(kernel_ids, kernel_files, params) -> list:
    """The rungs and CUDA kernel files an instrument looks at."""
    from .kernelfile import KernelFileError, load, parse_overrides
    overrides = parse_overrides(params)
    users = [load(path, i, overrides) for i, path in enumerate(kernel_files)]
    for user in users:
        if user.spec.device != "gpu":
            raise KernelFileError(f"{user.given}: info, asm and profile look at CUDA kernels (.cu files)")
    return [_gpu_spec(i) for i in dict.fromkeys(kernel_ids)] + [u.spec for u in users]


def _one_inspected(kernel_id, kernel_files, params):
    if (kernel_id is None) == (not kernel_files) or len(kernel_files) > 1:
        raise UserError("give one kernel: -i or one --kernel-file")
    return _inspected([] if kernel_id is None else [kernel_id], kernel_files, params)[0]


def _inspect_options(f):
    """--kernel-file and --param as the benchmark commands take them, and --gpu."""
    options = [
        click.option("--kernel-file", "kernel_files", multiple=True, type=click.Path(dir_okay=False),
                     help="Your own CUDA kernel, with a 'gemmbench kernel' header (see the README)."),
        click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
                     help="Override a parameter of the kernel file (repeatable)."),
    ]
    for option in reversed(options):
        f = option(f)
    return _gpu_option(f)


def _default_shape(m, n, k):
    from .backend import Shape
    return Shape(m or 4096, n or 4096, k or 4096)


@cli.command()
@click.option("-i", "--kernel", "kernel_ids", type=RUNG_ID, multiple=True,
              help="Rung ids (repeatable; default: every rung).")
@_shape_options
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON on stdout.")
@_inspect_options
def info(kernel_ids, m, n, k, as_json, kernel_files, params, gpu):
    """Occupancy at a shape: registers, shared memory, blocks per SM and the limit that binds."""
    from .inspect import commands
    specs = _inspected(kernel_ids, kernel_files, params) if kernel_ids or kernel_files else list(ladder("gpu"))
    return commands.info(specs, _default_shape(m, n, k), as_json, gpu or 0)


@cli.command()
@click.option("-i", "--kernel", "kernel_id", type=RUNG_ID, default=None, help="Rung id.")
@click.option("--ptx", "kind", flag_value="ptx", help="Show the PTX.")
@click.option("--sass", "kind", flag_value="sass", default=True, help="Show the SASS (default).")
@click.option("--arch", default=None, help="Build for this architecture (sm_80, sm_90, ...) without a GPU, "
                                           "with the rung's default parameters.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the listing to this file instead of stdout.")
@_shape_options
@_inspect_options
def asm(kernel_id, kind, arch, output, m, n, k, kernel_files, params, gpu):
    """A rung's PTX or SASS as gemmbench builds it, and its main loop's instruction mix."""
    from .inspect import commands
    spec = _one_inspected(kernel_id, kernel_files, params)
    return commands.asm(spec, _default_shape(m, n, k), kind, arch, output, gpu or 0)


@cli.command()
@click.option("-i", "--kernel", "kernel_id", type=RUNG_ID, default=None, help="Rung id (0: cuBLAS).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw the profiled kernels on the GPU's roofline into this PNG (needs matplotlib).")
@click.option("--export", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to keep the .ncu-rep (default: under --results-dir).")
@click.option("--results-dir", type=DirectoryPath(), default=Path("results"),
              show_default=True, help="Where the report is kept.")
@_shape_options
@_inspect_options
def profile(kernel_id, plot, export, results_dir, m, n, k, kernel_files, params, gpu):
    """Nsight Compute on one call of a rung: pipes, memory, occupancy and warp stalls."""
    from .inspect import commands
    spec = _one_inspected(kernel_id, kernel_files, params)
    return commands.profile(spec, _default_shape(m, n, k), plot, export, results_dir, gpu or 0, params)


def _one_line(message: str) -> str:
    """A message as the single stderr line the error contract promises."""
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


def main(argv: list[str] | None = None) -> int:
    """Entry point: click in non-standalone mode, so every error is one line."""
    def error(message: str) -> int:
        click.echo(f"gemmbench: error: {_one_line(message)}", err=True)
        return 2

    try:
        code = cli.main(args=argv, prog_name="gemmbench", standalone_mode=False)
    except click.exceptions.Exit as exc:  # --help, --version
        code = exc.exit_code
    except click.ClickException as exc:  # bad option, bad value, missing option (UsageError, BadParameter)
        code = error(exc.format_message())
    except click.Abort:
        click.echo("gemmbench: interrupted", err=True)
        code = 130
    except UserError as exc:  # the user's input or environment, raised anywhere below: one line, exit 2
        details = getattr(exc, "details", "")  # a compiler's full message, above its one-line summary
        if details:
            click.echo(details.rstrip(), err=True)
        code = error(str(exc))
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
