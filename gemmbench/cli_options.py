"""The command line's option types and option groups: every number parsed
as ASCII and checked against its range (gemmbench.options.RANGES) when it is
parsed, so a bad value is one line before anything runs."""

from __future__ import annotations

from pathlib import Path

import click
from click.shell_completion import CompletionItem

from . import validate
from .options import DEFAULT_MIN_TIME, DEFAULT_NOISE_TIMEOUT, MAX_SAMPLES, RANGES, bounds
from .precision import PRECISIONS
from .rungs import ladder
from .timing import SETTLE_SECONDS

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


def percent(name: str) -> Number:
    """A RunOptions field in percent ('0.5' or '0.5%'), with its range from options.RANGES."""
    low, high = RANGES[name]
    return Number(validate.parse_percent, "percent", low, high, " percent (0.5 or 0.5% is half a percent)")


def bounded(name: str, why: str = "") -> Number:
    """The option type of a RunOptions field, with its range from options.RANGES."""
    low, high = RANGES[name]
    if isinstance(low, float):
        return finite_seconds(low, high)
    return ascii_int(low, high, why)


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


# --------------------------------------------------------------------------
# what the shell completes (click's completion: see the README). From the
# ladders' records alone: nothing is built, no GPU is opened, pycuda is not
# imported.
# --------------------------------------------------------------------------

def _ladders(ctx) -> tuple[str, ...]:
    """The ladders the command line so far points to: its --device's; both
    for auto (or a value not parsed yet); the GPU's for a command without
    --device (info, asm, profile look at CUDA kernels)."""
    if not any(p.name == "device" for p in ctx.command.params):
        return ("gpu",)
    device = ctx.params.get("device")
    return (device,) if device in ("gpu", "cpu") else ("gpu", "cpu")


def _rung_help(names: dict[str, str], devices: tuple[str, ...]) -> str:
    """The rung's name; with both ladders, which ladder has which name."""
    if len(devices) == 1:
        return names[devices[0]]
    if len(names) == 2 and len(set(names.values())) == 1:
        return f"{names['gpu']} (GPU and CPU)"
    return "; ".join(f"{device.upper()}: {name}" for device, name in names.items())


class RungId(Number):
    """A rung id (an ASCII integer >= 0), completed from the ladders of the
    command's --device, each id with its rung's name as help."""

    def __init__(self):
        super().__init__(validate.parse_int, "integer", 0)

    def shell_complete(self, ctx, param, incomplete):
        devices = _ladders(ctx)
        names: dict[int, dict[str, str]] = {}
        for device in devices:
            for spec in ladder(device):
                names.setdefault(spec.id, {}).setdefault(device, spec.name)  # id 0: the FP32 library row's name
        return [CompletionItem(str(i), help=_rung_help(by_device, devices))
                for i, by_device in sorted(names.items()) if str(i).startswith(incomplete)]


def _id_ranges(ids: list[int]) -> str:
    """1, 2, 3, 5 -> '1-3, 5'."""
    runs: list[list[int]] = []
    for i in sorted(set(ids)):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


class PrecisionChoice(click.Choice):
    """A precision class (gemmbench.precision), completed with the rungs of
    that class in the command's ladders as help."""

    def __init__(self):
        super().__init__(list(PRECISIONS))

    def shell_complete(self, ctx, param, incomplete):
        devices = _ladders(ctx)
        items = []
        for name, precision in PRECISIONS.items():
            if not name.startswith(incomplete):
                continue
            rungs = [f"{device.upper()} {_id_ranges(ids)}" for device in devices
                     if (ids := [s.id for s in ladder(device) if s.precision == name])]
            items.append(CompletionItem(name, help=f"{precision.label}: rungs " + "; ".join(rungs) if rungs
                                        else f"{precision.label}: no rungs in this ladder"))
        return items


POSITIVE = ascii_int(1)
RUNG_ID = RungId()
GPU_INDEX = ascii_int(0)
SIZE = bounded("m", " (the kernels take int sizes)")
THREADS = bounded("threads", " (4 per core here, at most 1024)")
SAMPLES = bounded("min_samples")


# --------------------------------------------------------------------------
# shared options
# --------------------------------------------------------------------------

def _one_size(ctx, param, values: tuple):
    """-m, -n and -k name one shape: given twice they are an error, not the last value silently."""
    if len(values) > 1:
        raise click.BadParameter(f"given {len(values)} times ({', '.join(map(str, values))}): a command measures "
                                 f"one shape; 'gemmbench sizes' takes several (--sweep, --shapes)")
    return values[0] if values else None


def shape_options(f):
    for name in ("k", "n", "m"):
        f = click.option(f"-{name}", type=SIZE, multiple=True, callback=_one_size,
                         help=f"{name.upper()} (default 4096 on the GPU, 1024 on the CPU).")(f)
    return f


def common_options(f):
    options = [
        click.option("--device", type=click.Choice(["auto", "gpu", "cpu"]), default="auto", show_default=True,
                     help="Which ladder; auto picks the GPU when one is usable."),
        click.option("--threads", type=THREADS, default=None,
                     help="CPU threads for OpenBLAS and OpenMP (default: 1 for rungs 1-5, all cores for rung 6; "
                          "at most 4 per core)."),
        click.option("--seed", type=bounded("seed"), default=0, show_default=True,
                     help="Seed of the random inputs (0 to 2**32-1)."),
        click.option("--flush-l2", is_flag=True, help="Flush the L2 cache before every timed call (cold cache)."),
        click.option("--warmup", type=bounded("warmup"), default=None,
                     help=f"Warm-up seconds per kernel (0 to {bounds('warmup')[1]:g}); on a GPU whose clock is "
                          f"held down meanwhile, at least {SETTLE_SECONDS:g}."),
        click.option("--min-samples", type=SAMPLES, default=None, help="Fewest samples per kernel."),
        click.option("--max-samples", type=SAMPLES, default=None, help="Most samples per kernel."),
        click.option("--budget", type=bounded("budget"), default=None,
                     help=f"Seconds of samples per kernel before stopping (0 to {bounds('budget')[1]:g})."),
        click.option("--max-noise", type=percent("max_noise"), default=None, metavar="PCT",
                     help="Stop sampling a kernel once its median is known within this percent (half the width "
                          "of its 95% confidence interval), instead of after --budget seconds; e.g. 0.5%."),
        click.option("--min-time", type=bounded("min_time"), default=None,
                     help="With --max-noise: seconds of samples per kernel before it may stop "
                          f"(default {DEFAULT_MIN_TIME['gpu']:g} on the GPU, {DEFAULT_MIN_TIME['cpu']:g} on the CPU); "
                          f"given, it lifts the default --max-samples to {MAX_SAMPLES:,} so that the cap does not "
                          "cut it short."),
        click.option("--noise-timeout", type=bounded("noise_timeout"), default=None,
                     help="With --max-noise: seconds of samples per kernel after which it gives up on the target; "
                          f"the row is flagged unsettled (default {DEFAULT_NOISE_TIMEOUT['gpu']:g} on the GPU, "
                          f"{DEFAULT_NOISE_TIMEOUT['cpu']:g} on the CPU)."),
        click.option("--rounds", type=bounded("rounds"), default=None,
                     help="Time the rows of each shape in this many rounds, taking turns (the order reversed "
                          "every other round; an odd count's last round in two halves, one each way), each "
                          "round on its share of the budget; a row's figure is the "
                          "median of all its samples. For GPUs whose clock drifts under a power cap "
                          f"(default 1; at most {bounds('rounds')[1]})."),
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


def kernel_file_options(f):
    """A user's own kernel files (gemmbench.kernelfile.header), run beside the ladder."""
    options = [
        click.option("--kernel-file", "kernel_files", multiple=True, type=click.Path(dir_okay=False),
                     help="Your own kernel: a .cu (GPU) or .c (CPU) file with a 'gemmbench kernel' header "
                          "(repeatable; shown as rows -1, -2, ...)."),
        click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
                     help="Override a parameter of the kernel files (repeatable)."),
        click.option("--kernel-timeout", type=bounded("kernel_timeout"), default=None,
                     help="Seconds one call of a kernel file may run before its row FAILs (default 10)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


# -- which GPUs, and a saved run to compare with (issue 10) -------------------

def gpu_option(f):
    return click.option("--gpu", type=GPU_INDEX, default=None,
                        help="Which GPU, by CUDA's index (default 0; CUDA_VISIBLE_DEVICES is honoured).")(f)


def gpus_option(f):
    return click.option("--gpus", default=None, metavar="all|0,2,3",
                        help="Several GPUs, one worker process each: 'all' or a list of indices.")(f)


def baseline_option(f):
    return click.option("--baseline", type=click.Path(path_type=Path), default=None, metavar="RECORD.json",
                        help="Also diff this run against a saved record (exit 1 on a significant slowdown).")(f)


def precision_option(f):
    return click.option("--precision", "precisions", multiple=True, type=PrecisionChoice(),
                        help="Only rungs of this precision class (repeatable).")(f)


def benchmark_options(gpus: bool = True, baseline: bool = True):
    """The options every benchmark command takes: the shape, kernel files, the
    common ones and the GPU; several GPUs and a baseline record where the
    command takes them."""
    def apply(f):
        for option in reversed([shape_options, kernel_file_options, common_options, gpu_option,
                                *([gpus_option] if gpus else []), *([baseline_option] if baseline else [])]):
            f = option(f)
        return f
    return apply
