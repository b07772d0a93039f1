"""RunOptions: what a benchmark command was asked to do, as one typed value.

The command line and the Python API both build a ``RunOptions``; everything
after that (the plan, the executor, the record) reads its fields, never a
dict. Defaults and ranges live here once: the CLI's option types read the
same bounds, and a ``RunOptions`` made from Python is checked the same way
(``UserError``, one line, for a value out of range or options that clash).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from .backend import Budget, Shape
from .errors import UserError
from .precision import PRECISIONS
from .validate import (MAX_BUDGET_SECONDS, MAX_DIMENSION, MAX_SAMPLES, MAX_WARMUP_SECONDS, SEED_MAX,
                       max_threads)

COMMANDS = ("run", "compare", "sizes", "tune", "api")
DEVICES = ("auto", "gpu", "cpu")
FORMATS = ("table", "markdown", "csv")
DEFAULT_SIZE = {"gpu": 4096, "cpu": 1024}
DEFAULT_BUDGET = {"gpu": Budget(0.05, 10, 200, 0.5), "cpu": Budget(0.2, 3, 50, 2.0)}
TUNE_BUDGET_SECONDS = 0.15  # many candidates: a shorter look at each than run's
# Stopping on noise (--max-noise, in percent), per device. The one switch: None
# keeps sampling on time (--budget) unless --max-noise is given; a number (0.5
# for 0.5%) makes run, compare, sizes and the API stop on noise unless
# --budget is given (tune keeps its short time budget unless --max-noise is
# given). Chosen from benchmarks/noise_stop.py (README, "Stopping on noise"):
# on the H200 a 0.5% target costs no more wall time than the budget and
# repeats as well; on a 2-core CPU it took 2.2x the time and most rows never
# reached it, so the CPU stays on time.
DEFAULT_MAX_NOISE: dict[str, float | None] = {"gpu": 0.5, "cpu": None}
# With a noise target: the least seconds of samples before it may stop
# (--min-time), the seconds of samples after which it gives up
# (--noise-timeout), and the most samples (a row's record keeps them all).
# 5000 GPU samples span about a second (a sample is about 200 us of calls),
# so a --min-time the user asks for raises the cap to MAX_SAMPLES instead:
# on an H200 at 4096^3, --min-time 3 stopped at the 5000 after 0.95 s.
DEFAULT_MIN_TIME = {"gpu": 0.1, "cpu": 0.5}
DEFAULT_NOISE_TIMEOUT = {"gpu": 5.0, "cpu": 10.0}
NOISE_MAX_SAMPLES = 5000
# --rounds: each row timed in this many visits taking turns with the other
# rows of its shape (Budget.visit), so that a GPU whose clock drifts under its
# power cap gives every row the same mix of states.
MAX_ROUNDS = 50
DEFAULT_TOP = 10
MAX_KERNEL_TIMEOUT = 3600.0

# (low, high) of every bounded option; high may be a function of the machine.
RANGES = {
    "m": (1, MAX_DIMENSION), "n": (1, MAX_DIMENSION), "k": (1, MAX_DIMENSION),
    "seed": (0, SEED_MAX),
    "threads": (1, max_threads), "jobs": (1, max_threads),
    "warmup": (0.0, MAX_WARMUP_SECONDS), "budget": (0.0, MAX_BUDGET_SECONDS),
    "min_samples": (1, MAX_SAMPLES), "max_samples": (1, MAX_SAMPLES),
    "max_noise": (0.01, 100.0), "min_time": (0.0, MAX_BUDGET_SECONDS), "noise_timeout": (0.0, MAX_BUDGET_SECONDS),
    "kernel_timeout": (0.001, MAX_KERNEL_TIMEOUT), "rounds": (1, MAX_ROUNDS),
    "limit": (1, None), "top": (1, None), "gpu": (0, None),
}


def bounds(name: str) -> tuple:
    """(low, high) of an option, with a machine-dependent high resolved."""
    low, high = RANGES[name]
    return low, high() if callable(high) else high


# -- a shape set (sizes --shapes): each shape with the name and group its file gave it
@dataclass(frozen=True)
class NamedShape:
    """One shape of a shape set: M, N, K and the name and group a shape file
    gave it (None where it gave none). gemmbench.shapeset reads the files."""

    shape: Shape
    name: str | None = None
    group: str | None = None

    @property
    def label(self) -> str:
        """How tables and plots name it: MxNxK, then its name."""
        return f"{self.shape} {self.name}" if self.name else str(self.shape)

    def saved(self) -> dict:
        return {"M": self.shape.M, "N": self.shape.N, "K": self.shape.K, "name": self.name, "group": self.group}


def _named_shape(value) -> NamedShape:
    if isinstance(value, NamedShape):
        return value
    if isinstance(value, Shape):
        return NamedShape(value)
    raise UserError(f"shapes: {value!r} is not a Shape or NamedShape")


@dataclass(frozen=True)
class RunOptions:
    """One benchmark command's options (``run``, ``compare``, ``sizes``, ``tune``, or ``api``).

    ``kernels``: rung ids asked for (0 is the library row); ``all_rungs``:
    every rung; ``precisions``: keep only rungs of these classes (empty: all);
    ``kernel_files`` and ``params`` (``NAME=VALUE``): a user's kernels and
    overrides of their parameters. ``m``, ``n``, ``k``: the shape (None: the
    device's default size); ``sweep``: the sizes of ``sizes``; ``shapes``:
    the shapes of ``sizes --shapes`` and ``tune --shapes`` (and of ``api``), in order,
    each once; ``table``: where ``tune --shapes`` writes its per-shape choice table; ``resume``: the
    record of an earlier such tune, or of a sweep (sizes), whose finished shapes it carries over
    (gemmbench.resume). Sampling:
    ``warmup``, ``min_samples``, ``max_samples``, and either ``budget``
    (seconds of samples) or ``max_noise`` (percent: stop once the median is
    known that well) with ``min_time`` and ``noise_timeout`` (seconds of
    samples); ``rounds``: time the rows of a shape in that many interleaved
    visits (Budget.visit); None: the device's default, see ``budget_for``. ``gpu``: one GPU by CUDA index;
    ``gpus``: several ('all' or '0,2'), one worker process each.
    """

    command: str = "compare"
    kernels: tuple[int, ...] = ()
    all_rungs: bool = False
    precisions: tuple[str, ...] = ()
    kernel_files: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    kernel_timeout: float | None = None
    m: int | None = None
    n: int | None = None
    k: int | None = None
    sweep: str | None = None
    shapes: tuple[NamedShape, ...] = ()
    device: str = "auto"
    threads: int | None = None
    seed: int = 0
    flush_l2: bool = False
    warmup: float | None = None
    min_samples: int | None = None
    max_samples: int | None = None
    budget: float | None = None
    max_noise: float | None = None
    min_time: float | None = None
    noise_timeout: float | None = None
    rounds: int | None = None
    no_tune_cache: bool = False
    gpu: int | None = None
    gpus: str | None = None
    as_json: bool = False
    fmt: str = "table"
    no_save: bool = False
    results_dir: Path = Path("results")
    verbose: bool = False
    baseline: Path | None = None
    plot: Path | None = None
    overwrite: bool = False
    limit: int | None = None
    top: int = DEFAULT_TOP
    jobs: int | None = None
    table: Path | None = None
    resume: Path | None = None

    def __post_init__(self):
        object.__setattr__(self, "results_dir", Path(self.results_dir))
        for name in ("table", "resume"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, Path(getattr(self, name)))
        for name in ("kernels", "precisions", "params"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "kernel_files", tuple(str(f) for f in self.kernel_files))
        object.__setattr__(self, "shapes", tuple(_named_shape(s) for s in self.shapes))
        self._check()

    def _check(self) -> None:
        if self.command not in COMMANDS:
            raise UserError(f"unknown command {self.command!r} (one of {', '.join(COMMANDS)})")
        if self.device not in DEVICES:
            raise UserError(f"--device {self.device}: give one of {', '.join(DEVICES)}")
        if self.fmt not in FORMATS:
            raise UserError(f"--format {self.fmt}: give one of {', '.join(FORMATS)}")
        for name in RANGES:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UserError(f"{_flag(name)} {value!r}: not a number")
            low, high = bounds(name)
            if value != value or value < low or (high is not None and value > high):  # NaN fails too
                span = f"{low} to {high}" if high is not None else f">= {low}"
                raise UserError(f"{_flag(name)} {value} is out of range: give {span}")
        unknown = [p for p in self.precisions if p not in PRECISIONS]
        if unknown:
            raise UserError(f"--precision {unknown[0]}: give one of {', '.join(PRECISIONS)}")
        if any(k < 0 for k in self.kernels):
            raise UserError(f"-i {min(self.kernels)}: rung ids are >= 0 (kernel files are given by --kernel-file)")
        if self.as_json and self.fmt != "table":
            raise UserError(f"--json and --format {self.fmt} conflict: --json prints JSON; give one of them")
        if self.min_samples is not None and self.max_samples is not None and self.min_samples > self.max_samples:
            raise UserError(f"--min-samples {self.min_samples} is larger than --max-samples {self.max_samples}; "
                            "give a minimum no larger than the maximum")
        self._check_stopping()
        if self.gpu is not None and self.device == "cpu":
            raise UserError(f"--gpu {self.gpu} picks a GPU: it does not go with --device cpu")
        if self.gpus is not None and self.gpu is not None:
            raise UserError("give either --gpu or --gpus, not both")
        if self.gpus is not None and self.device == "cpu":
            raise UserError("--gpus runs on GPUs: it does not go with --device cpu")
        if self.all_rungs and self.kernels:
            raise UserError("give either --all or -i, not both")
        self._check_shapes()

    def _check_shapes(self) -> None:
        """A shape set: for sizes, tune (or the API), alone, each shape in range and given once;
        a choice table (--table) comes from one."""
        if self.table is not None and not (self.command == "tune" and self.shapes):
            raise UserError(f"--table {self.table} writes the best of each shape of a shape set: give --shapes too")
        if self.resume is not None and self.command == "tune" and not self.shapes:
            raise UserError(f"--resume {self.resume} carries the shapes an earlier tune of a shape set finished: "
                            "give --shapes too")
        if self.resume is not None and self.command not in ("tune", "sizes", "api"):
            raise UserError(f"--resume {self.resume} carries the shapes an earlier sweep finished: it is for sizes "
                            f"and tune --shapes, not {self.command}")
        if not self.shapes:
            return
        if self.command not in ("sizes", "tune", "api"):
            raise UserError(f"--shapes is for sizes and tune, not {self.command}")
        if self.sweep is not None:
            raise UserError("give either --sweep or --shapes, not both")
        pinned = next((name for name in ("m", "n", "k") if getattr(self, name) is not None), None)
        if pinned:
            raise UserError(f"-{pinned} {getattr(self, pinned)} does not go with --shapes: each shape gives M, N and K")
        seen = set()
        for entry in self.shapes:
            for dim in "MNK":
                value, (low, high) = getattr(entry.shape, dim), bounds(dim.lower())
                if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                    raise UserError(f"shape {entry.label}: {dim} {value!r} is out of range: give {low} to {high}")
            if entry.shape in seen:
                raise UserError(f"shape {entry.shape} is given twice: a sweep measures each shape once")
            seen.add(entry.shape)

    def _check_stopping(self) -> None:
        """One stopping rule: on time (--budget) or on noise (--max-noise, with
        --min-time and --noise-timeout)."""
        if self.min_time is not None and self.noise_timeout is not None and self.min_time > self.noise_timeout:
            raise UserError(f"--min-time {self.min_time:g} is longer than --noise-timeout {self.noise_timeout:g}; "
                            "give a minimum no longer than the time-out")
        if self.max_noise is not None and self.budget is not None:
            raise UserError(f"--max-noise {self.max_noise:g} and --budget {self.budget:g} conflict: "
                            "one stops on the median's noise, the other on time; give one of them")
        given = [name for name in ("min_time", "noise_timeout") if getattr(self, name) is not None]
        devices = ("gpu", "cpu") if self.device == "auto" else (self.device,)
        if given and all(self.noise_target(device) is None for device in devices):
            raise UserError(f"{_flag(given[0])} {getattr(self, given[0]):g} goes with --max-noise "
                            "(without it sampling stops on --budget); give --max-noise too")

    def noise_target(self, device: str) -> float | None:
        """The noise target in percent on ``device``, or None when sampling
        stops on time: --max-noise, else the device's DEFAULT_MAX_NOISE unless
        --budget was given (or the command is tune, which keeps its short budget)."""
        if self.max_noise is not None:
            return self.max_noise
        if self.budget is not None or self.command == "tune":
            return None
        return DEFAULT_MAX_NOISE[device]

    # -- what the options mean on a device ---------------------------------------
    def shape(self, device: str) -> Shape:
        """The -m/-n/-k shape, a missing dimension taking the device's default size."""
        size = DEFAULT_SIZE[device]
        return Shape(self.m or size, self.n or size, self.k or size)

    def budget_for(self, device: str) -> Budget:
        """The sampling budget: the device's defaults, overridden by the options
        given. A default bound gives way to a bound the user gave, so
        ``max_samples=1`` alone lowers the default minimum instead of clashing."""
        base = DEFAULT_BUDGET[device]
        noise = self.noise_target(device)
        if noise is None:
            seconds = self.budget
            if seconds is None:
                seconds = TUNE_BUDGET_SECONDS if self.command == "tune" else base.max_seconds
            default_max = base.max_samples
        else:  # the time-out is the budget's most seconds; the row says which one stopped it
            seconds = DEFAULT_NOISE_TIMEOUT[device] if self.noise_timeout is None else self.noise_timeout
            default_max = NOISE_MAX_SAMPLES if self.min_time is None else MAX_SAMPLES
        low, high = self.min_samples, self.max_samples
        max_samples = high or max(default_max, low or 0)
        budget = Budget(base.warmup_seconds if self.warmup is None else self.warmup,
                        low or min(base.min_samples, max_samples), max_samples, seconds, rounds=self.rounds or 1)
        if noise is None:
            return budget
        min_time = min(DEFAULT_MIN_TIME[device], seconds) if self.min_time is None else self.min_time
        return dataclasses.replace(budget, max_noise=noise / 100, min_seconds=min_time)

    @property
    def use_tuning(self) -> bool:
        """Whether stored tuned parameters are used (never while tuning)."""
        return not self.no_tune_cache and self.command != "tune"

    def saved(self) -> dict:
        """The options as a record keeps them (JSON-safe; paths as text; the
        names records have always used, so older readers find them)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "shapes":
                value = [entry.saved() for entry in value]
            out[_SAVED_NAMES.get(f.name, f.name)] = str(value) if isinstance(value, Path) else list(value) if isinstance(value, tuple) else value
        return out


_SAVED_NAMES = {"all_rungs": "all"}


def _flag(name: str) -> str:
    return f"-{name}" if name in ("m", "n", "k") else f"--{name.replace('_', '-')}"
