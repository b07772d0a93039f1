"""The command line: click declarations that build a RunOptions and hand it
to gemmbench.commands (or to gemmbench.inspect for info, asm and profile).

Exit codes: 0 ok; 1 a kernel failed verification (or crashed), or a diff
found a slowdown; 2 bad input or a missing prerequisite, always as one line
on stderr; 130 / 143 stopped by SIGINT / SIGTERM (what finished is saved);
141 the reader of stdout went away (a broken pipe), quietly.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from . import __version__, commands, validate
from .backend import Shape
from .errors import UserError
from .execute.interrupts import Interrupted, Interrupts, interrupted_cause
from .fsutil import check_target
from .gpu import device as gpu_device
from .inspect import commands as instruments
from .kernelfile import KernelFileError, load as load_kernel_file, parse_overrides
from .cli_options import (POSITIVE, RUNG_ID, THREADS, DirectoryPath, benchmark_options, gpu_option, precision_option,
                          shape_options)
from .options import RunOptions
from .output.charts import load_profile
from .output.fleet import show_fleet
from .output.html import report_html, write_report
from .output.plot import plot_sweep, require_matplotlib
from .output.report import Reporter
from .output.runs import show_diff, show_record, show_side_by_side
from .output.text import printable, printable_lines
from .records.diff import NothingCompared, diff_records, parse_threshold
from .records.store import load
from .rungs import get_spec, ladder
from .shapeset import ShapeSet, read_shapes

BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE, as a shell reports a pipeline's writer cut off


# --------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------

def _options(command: str, **given) -> RunOptions:
    """The RunOptions of a benchmark command from click's values."""
    given["kernel_files"] = tuple(given.get("kernel_files") or ())
    given["params"] = tuple(given.get("params") or ())
    return RunOptions(command=command, **given)


@dataclass(frozen=True)
class Invocation:
    """What main() hands every command: the signal handling entered at the
    command's first instruction, and the command line as given (a choice
    table records the command that made it)."""

    interrupts: Interrupts
    argv: tuple[str, ...]


def _invocation() -> Invocation | None:
    ctx = click.get_current_context(silent=True)
    return ctx.find_root().obj if ctx is not None else None


def _interrupts() -> Interrupts | None:
    """The signal handling main() entered at the command's first instruction."""
    invocation = _invocation()
    return invocation.interrupts if invocation is not None else None


def _command_line(drop: str | None = None) -> str:
    """This command as a shell would run it again, without the option ``drop`` and its value (a choice
    table records the command that remakes it whole: without --resume, which only saved time)."""
    invocation = _invocation()
    argv, kept = list(invocation.argv if invocation is not None else sys.argv[1:]), []
    while argv:
        arg = argv.pop(0)
        if drop is not None and arg == drop and argv:
            argv.pop(0)
        elif drop is None or not arg.startswith(drop + "="):
            kept.append(arg)
    return shlex.join(["gemmbench", *kept])


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(__version__, prog_name="gemmbench")
@click.pass_context
def cli(ctx):
    """Benchmark a ladder of hand-written SGEMM kernels against cuBLAS and OpenBLAS."""
    if ctx.invoked_subcommand is None:  # bare 'gemmbench': the help, and success
        click.echo(ctx.get_help())


@cli.command()
@click.option("-i", "--kernel", "kernel_id", type=RUNG_ID, multiple=True, help="Rung id (one; 0 = the library baseline).")
@benchmark_options(gpus=False)
def run(kernel_id, **given):
    """One rung (or kernel file) at one shape, beside the library baseline."""
    if len(kernel_id) > 1:
        raise UserError(f"run takes one -i (got {', '.join(map(str, kernel_id))}); compare takes several")
    options = _options("run", kernels=kernel_id, **given)
    return commands.benchmark(options, _interrupts())


@cli.command()
@click.option("--all", "all_rungs", is_flag=True, help="Every rung of the ladder.")
@precision_option
@click.option("-i", "--kernel", "kernel_ids", type=RUNG_ID, multiple=True, help="Rung ids to compare (repeatable).")
@benchmark_options()
def compare(kernel_ids, **given):
    """Rungs side by side at one shape, with cuBLAS and OpenBLAS."""
    return commands.benchmark(_options("compare", kernels=kernel_ids, **given), _interrupts())


@cli.command()
@click.option("--sweep", default=None, help="Sizes: a..b doubles, a..b:step steps, a,b,c lists.")
@click.option("--shapes", "shape_files", multiple=True, metavar="FILE|DIR",
              help="Shapes from files of M,N,K lines (a folder: its .csv files; repeatable), in place of --sweep; "
                   "benchmarks/shapes/ holds a set.")
@click.option("-i", "--kernel", "kernel_ids", type=RUNG_ID, multiple=True,
              help="Rung ids (repeatable; default: the baseline and every rung).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw GFLOP/s against size into this image (.png, .svg, .pdf...; needs matplotlib). "
                   "An existing file is kept unless --overwrite is given.")
@click.option("--overwrite", is_flag=True, help="Let --plot replace an existing file.")
@click.option("--resume", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="RECORD.json",
              help="Take from the record of an earlier sizes run (finished or not) the shapes where it timed every "
                   "kernel this run has there, on this code, and run only the rest (same sampling options, same "
                   "kind of machine).")
@precision_option
@benchmark_options()
def sizes(kernel_ids, shape_files, **given):
    """A size sweep (or a shape set): GFLOP/s of each kernel at each size."""
    options, reporter = _with_shape_set("sizes", kernel_ids, shape_files, given)
    return commands.benchmark(options, _interrupts(), reporter)


def _with_shape_set(command: str, kernel_ids, shape_files, given: dict) -> tuple[RunOptions, Reporter]:
    """The options of a command that takes --shapes, with the shapes of its files, and its reporter
    (which has said the files' notes: shapes that two files both list)."""
    shape_set = read_shapes(shape_files) if shape_files else ShapeSet(())
    options = _options(command, kernels=kernel_ids, shapes=shape_set.shapes, **given)
    reporter = commands.reporter_for(options)
    for note in shape_set.notes:
        reporter.note(note)
    return options, reporter


@cli.command()
@click.option("-i", "--kernel", "kernel_id", type=RUNG_ID, multiple=True, help="Rung id with tunable parameters (one).")
@click.option("--shapes", "shape_files", multiple=True, metavar="FILE|DIR",
              help="Tune at every shape of shape files (a folder: its .csv files; repeatable), in place of "
                   "-m/-n/-k; benchmarks/shapes/ holds a set.")
@click.option("--table", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="OUT.json",
              help="With --shapes: also write the best candidate of each shape as a per-shape choice table. "
                   "An existing file is kept unless --overwrite is given.")
@click.option("--overwrite", is_flag=True, help="Let --table replace an existing file.")
@click.option("--resume", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="RECORD.json",
              help="With --shapes: take from the record of an earlier tune of this kernel (finished or not) the "
                   "shapes where it timed every candidate, and run only the rest (same options, same GPU model).")
@click.option("--limit", type=POSITIVE, default=None,
              help="Try at most this many candidates a shape (the defaults, or the rung's usual choice at the "
                   "shape, plus a seeded random sample).")
@click.option("--top", type=POSITIVE, default=10, show_default=True,
              help="How many of the best configurations to show (at one shape).")
@click.option("--jobs", type=THREADS, default=None,
              help="Parallel nvcc processes (default: one per core; at most 4 per core).")
@benchmark_options(baseline=False)
def tune(kernel_id, shape_files, **given):
    """Search a rung's (or a kernel file's) parameters at one shape or a shape set; store the best for this GPU."""
    options, reporter = _with_shape_set("tune", kernel_id, shape_files, given)
    return commands.tune(options, _interrupts(), reporter, command_line=_command_line(drop="--resume"))


@cli.command()
@click.argument("records", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv"]), default="table", show_default=True)
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Draw a sizes record's GFLOP/s against size into this image (needs matplotlib). "
                   "An existing file is kept unless --overwrite is given.")
@click.option("--overwrite", is_flag=True, help="Let --plot and --html replace an existing file.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the records as one self-contained HTML report (tables, charts; opens offline).")
@click.option("--baseline", type=click.Path(path_type=Path), default=None, metavar="OLD.json",
              help="Also diff each record against this saved one (exit 1 on a significant slowdown).")
@click.option("--profile", "profiles", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              metavar="PROFILE.csv", help="With --html: the roofline of a profile's raw CSV (repeatable).")
@click.option("--summary", is_flag=True, help="A fleet's records: one line per GPU, ratios to the median GPU of "
                                              "its model, outliers flagged (see the README).")
@click.option("--fail-on-outlier", is_flag=True, help="With --summary: exit 1 when a GPU is flagged.")
@click.option("--json", "as_json", is_flag=True, help="With --summary: print it as JSON on stdout.")
def show(records, fmt, plot, overwrite, html_path, baseline, profiles, summary, fail_on_outlier, as_json):
    """Saved records: one as its run printed it; several side by side; --summary for many GPUs."""
    if (fail_on_outlier or as_json) and not summary:
        raise UserError("--fail-on-outlier and --json go with --summary")
    if summary:
        other = next((name for name, value in (("--plot", plot), ("--html", html_path), ("--baseline", baseline),
                                               ("--profile", profiles)) if value), None)
        if other:
            raise UserError(f"--summary shows a fleet's table only: drop {other}")
        return show_fleet([load(path) for path in records], fmt, as_json, fail_on_outlier)
    loaded = [load(path) for path in records]
    diffs = _baseline_diffs(loaded, load(baseline)) if baseline is not None else []
    if profiles and html_path is None:
        raise UserError("--profile draws a roofline into the --html report: give --html too")
    profiled = [load_profile(path) for path in profiles]
    if html_path is not None:
        check_target(html_path, overwrite, "--html")
    if plot is not None:
        if len(loaded) != 1 or loaded[0].record.command != "sizes":
            raise UserError(f"--plot draws one sizes record; got {', '.join(l.record.command for l in loaded)}")
        require_matplotlib()
        validate.check_plot_path(plot, overwrite)
    reporter = Reporter(fmt)
    for item in loaded:
        if not item.complete:
            reporter.note(f"{item.path}: the run did not finish (complete=false): showing what it saved")
    if len(loaded) == 1:
        show_record(reporter, loaded[0].record)
    else:
        show_side_by_side(reporter, [l.record for l in loaded], [l.label for l in loaded], [l.path for l in loaded])
    for old, new, result in diffs:
        show_diff(reporter, result, f"{old.path} ({old.label})", f"{new.path} ({new.label})")
    if plot is not None:
        plot_sweep(loaded[0].record, plot, overwrite)
        reporter.note(f"plot written to {plot}")
    if html_path is not None:
        write_report(html_path, report_html(loaded, diffs, profiled), overwrite)
        reporter.note(f"report written to {html_path}")
    return max((result.exit_code for _, _, result in diffs), default=0)


def _baseline_diffs(loaded, old) -> list:
    """(old, new, Diff) for each record against the baseline ``old``; one line when one shares no row with it."""
    diffs = []
    for new in loaded:
        try:
            diffs.append((old, new, diff_records(old.record, new.record, versions=(old.writer, new.writer))))
        except NothingCompared as exc:
            raise UserError(f"--baseline {old.path} -> {new.path}: {exc}") from None
    return diffs


@cli.command()
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--threshold", default="3%", show_default=True,
              help="Slower by more than this (and significantly) is a regression.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON on stdout.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv"]), default="table", show_default=True)
def diff(old, new, threshold, as_json, fmt):
    """Two saved records row by row; exit 1 when a row got significantly slower."""
    try:
        fraction = parse_threshold(threshold)
    except ValueError as exc:
        raise UserError(str(exc))
    a, b = load(old), load(new)
    try:
        result = diff_records(a.record, b.record, fraction, versions=(a.writer, b.writer))
    except NothingCompared as exc:
        raise UserError(f"{a.path} -> {b.path}: {exc}") from None
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
        try:
            gpu_device.open_device()
            device = "gpu"
        except gpu_device.GpuUnavailable as exc:
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
    if params and not kernel_files:
        raise UserError("--param overrides a kernel file's parameters; a rung runs with its own "
                        "(its default, the shape's choice or the tuned ones): give --kernel-file, or drop --param")
    overrides = parse_overrides(params)
    users = [load_kernel_file(path, i, overrides) for i, path in enumerate(kernel_files)]
    for user in users:
        if user.spec.device != "gpu":
            raise KernelFileError(f"{user.given}: info, asm and profile look at CUDA kernels (.cu files)")
    return [_gpu_spec(i) for i in dict.fromkeys(kernel_ids)] + [u.spec for u in users]


def _one_inspected(kernel_ids, kernel_files, params):
    """asm and profile look at one kernel: one -i or one --kernel-file."""
    if len(kernel_ids) + len(kernel_files) != 1:
        raise UserError(f"give one kernel: -i or one --kernel-file (got {len(kernel_ids)} -i and "
                        f"{len(kernel_files)} --kernel-file)")
    return _inspected(kernel_ids, kernel_files, params)[0]


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
    return gpu_option(f)


def _default_shape(m, n, k):
    return Shape(m or 4096, n or 4096, k or 4096)


@cli.command()
@click.option("-i", "--kernel", "kernel_ids", type=RUNG_ID, multiple=True,
              help="Rung ids (repeatable; default: every rung).")
@shape_options
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON on stdout.")
@_inspect_options
def info(kernel_ids, m, n, k, as_json, kernel_files, params, gpu):
    """Occupancy at a shape: registers, shared memory, blocks per SM and the limit that binds."""
    specs = _inspected(kernel_ids, kernel_files, params) if kernel_ids or kernel_files else list(ladder("gpu"))
    return instruments.info(specs, _default_shape(m, n, k), as_json, gpu or 0)


@cli.command()
@click.option("-i", "--kernel", "kernel_id", type=RUNG_ID, multiple=True, help="Rung id (one).")
@click.option("--ptx", "kind", flag_value="ptx", help="Show the PTX.")
@click.option("--sass", "kind", flag_value="sass", default=True, help="Show the SASS (default).")
@click.option("--arch", default=None, help="Build for this architecture (sm_80, sm_90, ...) without a GPU, "
                                           "with the rung's default parameters.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the listing to this file instead of stdout (an existing file is kept unless --overwrite).")
@click.option("--overwrite", is_flag=True, help="Let -o replace an existing file.")
@shape_options
@_inspect_options
def asm(kernel_id, kind, arch, output, overwrite, m, n, k, kernel_files, params, gpu):
    """A rung's PTX or SASS as gemmbench builds it, and its main loop's instruction mix."""
    spec = _one_inspected(kernel_id, kernel_files, params)
    return instruments.asm(spec, _default_shape(m, n, k), kind, arch, output, gpu or 0, overwrite=overwrite)


@cli.command()
@click.option("-i", "--kernel", "kernel_id", type=RUNG_ID, multiple=True, help="Rung id (one; 0: cuBLAS).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw the profiled kernels on the GPU's roofline into this PNG (needs matplotlib).")
@click.option("--export", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to keep the .ncu-rep (default: under --results-dir).")
@click.option("--results-dir", type=DirectoryPath(), default=Path("results"),
              show_default=True, help="Where the report is kept.")
@click.option("--overwrite", is_flag=True, help="Let --plot and --export replace existing files.")
@shape_options
@_inspect_options
def profile(kernel_id, plot, export, results_dir, overwrite, m, n, k, kernel_files, params, gpu):
    """Nsight Compute on one call of a rung: pipes, memory, occupancy and warp stalls."""
    spec = _one_inspected(kernel_id, kernel_files, params)
    return instruments.profile(spec, _default_shape(m, n, k), plot, export, results_dir, gpu or 0, params,
                               overwrite=overwrite)


def _one_line(message: str) -> str:
    """A message as the single stderr line the error contract promises."""
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


class StdoutError(Exception):
    """Writing to standard output failed (a closed pipe, a full disk); ``cause`` is the OSError."""

    def __init__(self, cause: OSError):
        super().__init__(cause.strerror or str(cause))
        self.cause = cause


class _GuardedStdout:
    """sys.stdout as gemmbench writes to it: an OSError of a write or a flush
    becomes StdoutError, which no library below mistakes for its own error
    (rich would turn a broken pipe into exit 1), so main() ends it one way."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise StdoutError(exc) from None

    def flush(self):
        try:
            self._stream.flush()
        except OSError as exc:
            raise StdoutError(exc) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def main(argv: list[str] | None = None, interrupts: Interrupts | None = None) -> int:
    """Entry point: click in non-standalone mode, so every error is one line.

    Signals are handled from here to the end (``interrupts``, entered by the
    caller at its first instruction, or here): a SIGINT or SIGTERM before
    the run starts ends the command with one line and 130 / 143; during the
    run, the run saves what finished first (gemmbench.execute.recording)."""
    own = interrupts is None
    interrupts = interrupts or Interrupts().__enter__()
    try:
        return _main(argv, interrupts)
    finally:
        if own:
            interrupts.__exit__(None, None, None)


def _main(argv: list[str] | None, interrupts: Interrupts) -> int:
    def error(message: str) -> int:
        click.echo(f"gemmbench: error: {printable(_one_line(message))}", err=True)
        return 2

    if sys.stdout is None:
        return error("standard output is closed: give it a file or a pipe")
    for stream in (sys.stdout, sys.stderr):  # an ASCII-only terminal gets escapes, not a UnicodeEncodeError
        if stream is not None and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    original, sys.stdout = sys.stdout, _GuardedStdout(sys.stdout)
    try:
        return _run(argv, interrupts, error)
    except StdoutError as exc:
        if isinstance(exc.cause, BrokenPipeError):
            return _broken_pipe(original)
        return error(f"cannot write to standard output: {exc}")
    finally:
        sys.stdout = original


def _run(argv: list[str] | None, interrupts: Interrupts, error) -> int:
    args = [str(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    try:
        code = cli.main(args=args, prog_name="gemmbench", standalone_mode=False,
                        obj=Invocation(interrupts, tuple(args)))
    except click.exceptions.Exit as exc:  # --help, --version
        code = exc.exit_code
    except click.ClickException as exc:  # bad option, bad value, missing option (UsageError, BadParameter)
        code = error(exc.format_message())
    except (click.Abort, KeyboardInterrupt):
        click.echo("gemmbench: interrupted", err=True)
        code = 130
    except Interrupted as exc:  # a signal before the run began: nothing was written
        code = _interrupted(exc, interrupts)
    except UserError as exc:  # the user's input or environment, raised anywhere below: one line, exit 2
        details = getattr(exc, "details", "")  # a compiler's full message, above its one-line summary
        if details:
            click.echo(printable_lines(details.rstrip()), err=True)
        code = error(str(exc))
    except Exception as exc:  # a signal that Python wrapped in another error (RuntimeError from __set_name__)
        stop = interrupted_cause(exc)
        if stop is None:
            raise
        code = _interrupted(stop, interrupts)
    sys.stdout.flush()  # what is still buffered fails here, inside the guard
    return code if isinstance(code, int) else 0


def _interrupted(stop: Interrupted, interrupts: Interrupts) -> int:
    interrupts.caught()
    interrupts.hold()
    click.echo(f"gemmbench: interrupted by {stop.name}", err=True)
    return stop.exit_code


def _broken_pipe(stdout) -> int:
    """The reader of stdout went away: stop quietly (and let Python's own
    flush at exit find nowhere to fail)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
    except (OSError, ValueError):
        pass
    return BROKEN_PIPE_EXIT


if __name__ == "__main__":
    sys.exit(main())
