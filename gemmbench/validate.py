"""Checks of the user's input and environment, made before the first kernel runs.

Every check raises ``UserError`` with one line that names the value and what
to do. None of them writes anything that stays: a directory is tested by
creating and removing a temporary file in it, so a refused command leaves the
results directory, the plot's directory and the caches as they were.
"""

from __future__ import annotations

import math
import os
import re
import resource
import tempfile
from pathlib import Path

from .backend import Shape
from .cpu.backend import core_count
from .errors import UserError
from .fsutil import check_target

# The kernels' entry points take ``int M, N, K`` (the C and CUDA ladders and
# cuBLAS alike) and round sizes up to whole tiles (at most 256) in int, so a
# dimension stays that far below 2**31. Offsets such as i*K are 64-bit inside.
INT32_MAX = 2 ** 31 - 1
MAX_DIMENSION = 2 ** 31 - 1024
# Except in the GPU tiles: rungs 4-15 address a row of their tile, up to 256
# rows from its corner, as the int r * N (or r * K) -- see common.cuh.
GPU_TILE_ROWS_MAX = 256
SEED_MAX = 2 ** 32 - 1  # numpy takes larger seeds; this keeps records portable
MAX_WARMUP_SECONDS = 60.0
MAX_BUDGET_SECONDS = 600.0
MAX_SAMPLES = 100_000
MAX_THREADS = 1024
# A directory with less free space than this cannot take a record.
MIN_FREE_BYTES = 1 << 20
# matplotlib lists pgf, but it needs a LaTeX installation to write one.
_PLOT_FORMATS_NEEDING_MORE = {"pgf"}

_ASCII_INT = re.compile(r"[+-]?[0-9]+")
_ASCII_UNSIGNED = re.compile(r"[0-9]+")
_ASCII_SPACE = " \t\r\n"
# int64 has 19 digits: longer is never a size, a seed or a parameter
MAX_INT_DIGITS = 19
_ASCII_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


# --------------------------------------------------------------------------
# numbers
# --------------------------------------------------------------------------

def max_threads() -> int:
    """The most CPU threads a run may ask for: 4 per core here, at most 1024."""
    return min(MAX_THREADS, 4 * core_count())


def parse_int(text: str, signed: bool = True) -> int:
    """An integer written in ASCII digits, an optional sign first (with
    ``signed``), spaces around allowed: the one number parser of options,
    --param and kernel-file headers. Python's int() also takes '１６', '1_6'
    and spaces inside Unicode; those are refused here, as are numbers of more
    than MAX_INT_DIGITS digits (no option or parameter needs them).
    ValueError names the text."""
    stripped = text.strip(_ASCII_SPACE)
    if not (_ASCII_INT if signed else _ASCII_UNSIGNED).fullmatch(stripped):
        raise ValueError(f"{stripped!r} is not an integer (ASCII digits 0-9 only)")
    if len(stripped.lstrip("+-")) > MAX_INT_DIGITS:
        raise ValueError(f"{stripped[:12]!r}... is too long ({len(stripped)} characters): "
                         f"at most {MAX_INT_DIGITS} digits")
    return int(stripped)


def parse_finite_float(text: str) -> float:
    """A finite decimal number in ASCII (no nan, inf, or values that overflow to inf)."""
    text = text.strip(_ASCII_SPACE)
    if not _ASCII_FLOAT.fullmatch(text):
        if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise ValueError(f"{text!r} is not a finite number")
        raise ValueError(f"{text!r} is not a number")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is too large (not a finite number)")
    return value


def parse_percent(text: str) -> float:
    """A percentage: a finite ASCII number, with or without a trailing '%'
    ('0.5' and '0.5%' are both half a percent, never a fraction)."""
    stripped = text.strip(_ASCII_SPACE)
    try:
        return parse_finite_float(stripped[:-1] if stripped.endswith("%") else stripped)
    except ValueError:
        raise ValueError(f"{stripped!r} is not a percentage (a finite number, '%' after it or not)") from None


# --------------------------------------------------------------------------
# memory
# --------------------------------------------------------------------------

def check_index_range(shapes: list[Shape], device: str) -> None:
    """Refuse shapes whose offsets would overflow the GPU tiles' int arithmetic."""
    if device != "gpu":
        return
    limit = INT32_MAX // GPU_TILE_ROWS_MAX
    for shape in shapes:
        if max(shape.N, shape.K) > limit:
            raise UserError(f"shape {shape}: N and K must be at most {limit} on the GPU ladder (its tiles "
                            f"index up to {GPU_TILE_ROWS_MAX} rows of them with int arithmetic); "
                            "use smaller N and K, or --device cpu")


def host_bytes_needed(shape: Shape) -> int:
    """Peak host memory of one shape, in bytes, as bench and verify use it.

    Always held: the float32 inputs A, B and the starting C (4 bytes an
    element), the backend's C and the copy of it a check reads back (4 + 4 per
    element of C). On top, the larger of two phases: the float64 reference,
    built from float64 copies of A and B and of their absolute values (4 x 8
    bytes per element of A and B) with its two float64 products (16 per
    element of C); or verification, with those two products, the two passes'
    float64 targets (want and scale: 32) and a check's float64 difference (8).
    """
    a, b, c = shape.M * shape.K, shape.K * shape.N, shape.M * shape.N
    held = 4 * (a + b + c) + 8 * c
    reference = 32 * (a + b) + 16 * c
    verification = (16 + 32 + 8) * c
    return held + max(reference, verification)


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _meminfo_kib(field: str, path: str = "/proc/meminfo") -> int | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def available_host_bytes() -> int | None:
    """What this process can still allocate: the least of the kernel's
    MemAvailable, the room left under a cgroup (v2) memory limit and under an
    address-space limit (ulimit -v). None when none of them can be read."""
    limits = []
    available = _meminfo_kib("MemAvailable")
    if available is not None:
        limits.append(available * 1024)
    else:
        try:
            limits.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    cgroup_max, cgroup_now = _read_int("/sys/fs/cgroup/memory.max"), _read_int("/sys/fs/cgroup/memory.current")
    if cgroup_max is not None and cgroup_now is not None:  # memory.max reads "max" when unlimited
        limits.append(cgroup_max - cgroup_now)
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    mapped = _meminfo_kib("VmSize", "/proc/self/status")
    if soft != resource.RLIM_INFINITY and mapped is not None:
        limits.append(soft - mapped * 1024)
    return max(0, min(limits)) if limits else None


def check_host_memory(shapes: list[Shape]) -> None:
    """Refuse a shape whose verification and timing cannot fit in host memory."""
    available = available_host_bytes()
    if available is None or not shapes:
        return
    shape = max(shapes, key=host_bytes_needed)
    need = host_bytes_needed(shape)
    if need > available:
        raise UserError(f"shape {shape} needs about {_gib(need)} of host memory (inputs, the float64 "
                        f"reference and verification); {_gib(available)} is available: choose a smaller shape")


def _gib(n: int) -> str:
    return f"{n / 2 ** 30:.1f} GiB"


# --------------------------------------------------------------------------
# paths
# --------------------------------------------------------------------------

def _nearest_existing(path: Path, what: str, fix: str) -> Path:
    """``path`` or its nearest existing parent, which must be a directory."""
    for candidate in (path, *path.parents):
        try:
            is_dir = candidate.is_dir()
            exists = is_dir or candidate.exists()
        except OSError as exc:
            raise UserError(f"{what}: cannot look at {candidate} ({exc.strerror or exc}); {fix}") from None
        if exists and not is_dir:
            raise UserError(f"{what}: {candidate} is not a directory; {fix}")
        if exists:
            return candidate
    return Path(".")


def _probe_write(directory: Path, what: str, fix: str) -> None:
    """Create and remove a temporary file in ``directory``: the one honest test
    of writability (root ignores permission bits; /proc and read-only mounts
    refuse whatever the bits say)."""
    try:
        fd, name = tempfile.mkstemp(prefix=".gemmbench-probe-", dir=directory)
        os.close(fd)
        os.unlink(name)
        free = os.statvfs(directory)
    except OSError as exc:
        raise UserError(f"{what}: cannot write in {directory} ({exc.strerror or exc}); {fix}") from None
    if free.f_bavail * free.f_frsize < MIN_FREE_BYTES:
        raise UserError(f"{what}: the filesystem of {directory} is full; {fix}")


def check_output_dir(option: str, path: Path) -> None:
    """A directory that a command may create (if missing) and write files in."""
    what, fix = f"{option} {path}", "give a writable directory"
    _probe_write(_nearest_existing(path, what, fix), what, fix)


def plot_formats() -> list[str]:
    """File extensions matplotlib can write here, without the dot."""
    from matplotlib.backend_bases import FigureCanvasBase  # matplotlib is optional (the plot extra): only --plot needs it
    return sorted(set(FigureCanvasBase.get_supported_filetypes()) - _PLOT_FORMATS_NEEDING_MORE)


def check_plot_path(path: Path, overwrite: bool, option: str = "--plot") -> None:
    """A new (or, with --overwrite, replaceable) regular file of a format
    matplotlib writes, in an existing writable directory (fsutil.check_target)."""
    plot_format(path, option)
    check_target(path, overwrite, option)


def plot_format(path: Path, option: str = "--plot") -> str:
    """The format matplotlib writes ``path`` in, from its extension; UserError
    for one it cannot write."""
    formats = plot_formats()
    suffix = Path(path).suffix
    if suffix.lower().lstrip(".") not in formats:
        raise UserError(f"{option} {path}: unsupported file type {suffix or '(none)'!r}; "
                        f"end the name with one of {', '.join('.' + f for f in formats)}")
    return suffix.lower().lstrip(".")
