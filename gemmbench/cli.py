"""The command line: parse -> options -> plan -> run -> report -> save.

Exit codes: 0 ok; 1 a kernel failed verification (or crashed); 2 bad input or
a missing prerequisite, always as one line on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import __version__
from .bench import Entry
from .errors import UserError
from .report import Reporter
from .report_runs import show_record
from .rungs import get_spec, ladder
from .session import Session
from .sweep import parse_sweep, sweep_shapes

TUNE_BUDGET_SECONDS = 0.15


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


# -- which GPUs, and a saved run to compare with (issue 10) -------------------

def _gpu_option(f):
    return click.option("--gpu", type=int, default=None, callback=_non_negative,
                        help="Which GPU, by CUDA's index (default 0; CUDA_VISIBLE_DEVICES is honoured).")(f)


def _gpus_option(f):
    return click.option("--gpus", default=None, metavar="all|0,2,3",
                        help="Several GPUs, one worker process each: 'all' or a list of indices.")(f)


def _baseline_option(f):
    return click.option("--baseline", type=click.Path(path_type=Path), default=None, metavar="RECORD.json",
                        help="Also diff this run against a saved record (exit 1 on a significant slowdown).")(f)


def _non_negative(ctx, param, value):
    if value is not None and value < 0:
        raise click.BadParameter(f"must be 0 or more, got {value}", ctx, param)
    return value


def _load_baseline(path: Path | None):
    """The --baseline record, validated before anything runs."""
    if path is None:
        return None
    from .store import load
    return load(path)


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
@_gpu_option
@_baseline_option
def run(kernel_id, m, n, k, baseline, **opts):
    """One rung at one shape, beside the library baseline."""
    opts.update(kernel=kernel_id, m=m, n=n, k=k)
    baseline = _load_baseline(baseline)
    reporter = _reporter(opts)
    session = Session(opts, reporter)
    entries = session.entries([0, kernel_id])
    return session.execute("run", entries, [session.shape(m, n, k)], lambda r: show_record(reporter, r),
                           baseline=baseline)


@cli.command()
@click.option("--all", "all_rungs", is_flag=True, help="Every rung of the ladder.")
@click.option("-i", "--kernel", "kernel_ids", type=int, multiple=True, help="Rung ids to compare (repeatable).")
@_shape_options
@_common_options
@_gpu_option
@_gpus_option
@_baseline_option
def compare(all_rungs, kernel_ids, m, n, k, baseline, **opts):
    """Rungs side by side at one shape, with cuBLAS and OpenBLAS."""
    if all_rungs and kernel_ids:
        raise UserError("give either --all or -i, not both")
    if not all_rungs and not kernel_ids:
        raise UserError("nothing to compare: give --all or one or more -i")
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
@click.option("-i", "--kernel", "kernel_ids", type=int, multiple=True,
              help="Rung ids (repeatable; default: the baseline and every rung).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw GFLOP/s against size into this PNG (needs matplotlib).")
@_shape_options
@_common_options
@_gpu_option
@_gpus_option
@_baseline_option
def sizes(sweep, kernel_ids, plot, m, n, k, baseline, **opts):
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
    baseline = _load_baseline(baseline)
    reporter = _reporter(opts)
    session = Session(opts, reporter)
    ids = [0, *kernel_ids] if kernel_ids else [s.id for s in ladder(session.device)]
    entries = session.entries(ids, all_baselines=not kernel_ids)

    def show(record):
        show_record(reporter, record)
        if plot is not None:
            from .plot import plot_sweep
            plot_sweep(record, plot)
            reporter.note(f"plot written to {plot}")

    return session.execute("sizes", entries, shapes, show, spread="shapes", baseline=baseline)


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
@_gpu_option
@_gpus_option
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
    opts["not_compiled"] = len(found) - len(built)  # saved, so 'show' prints the same summary
    entries = [e for e in session.entries([kernel_id]) if e.spec.is_baseline] + \
        [Entry(gpu, spec, params=p) for p in built]
    cache = TuningCache()

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
    from .report_runs import show_side_by_side
    from .store import load
    loaded = [load(path) for path in records]
    if plot is not None:
        from .plot import plot_sweep, require_matplotlib
        if len(loaded) != 1 or loaded[0].record.command != "sizes":
            raise UserError(f"--plot draws one sizes record; got {', '.join(l.record.command for l in loaded)}")
        try:
            require_matplotlib()
        except ImportError as exc:
            raise UserError(str(exc))
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
    from .diff import diff_records, parse_threshold
    from .report_runs import show_diff
    from .store import load
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
    except UserError as exc:
        click.echo(f"gemmbench: error: {exc}", err=True)
        code = UserError.exit_code
    except click.Abort:
        click.echo("gemmbench: interrupted", err=True)
        code = 130
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
