"""A user's kernel file -> KernelSpec, through the header block in the file.

A CUDA (``.cu``) or C (``.c``) file with the ladder's entry point
``sgemm(int M, int N, int K, float alpha, const float* A, const float* B,
float beta, float* C)`` (row-major) carries its record in one comment that
opens with the line ``gemmbench kernel``::

    /* gemmbench kernel
     * name:        tiled 2D
     * params:      BM=64, BN=64, BK=16, TM=4, TN=4
     * search:      BM=32,64,128; BN=32,64,128; BK=8,16,32
     * constraints: BM % TM == 0 and BN % TN == 0
     * block:       (BM / TM) * (BN / TN)
     * grid:        ceil_div(N, BN), ceil_div(M, BM)
     * smem:        4 * BK * (BM + BN)
     * precision:   fp32
     * min_cc:      7.0
     */

(``//`` lines work too). Every field is ``field: value`` on one line;
``params``, ``search``, ``constraints`` and ``cflags`` may repeat. Block,
grid, dynamic shared memory and constraints are expressions of the
parameters (the grid also of M, N and K), read by a small evaluator of
integer arithmetic (``/`` divides integers as in C), comparisons,
``and``/``or``/``not``, ``x if c else y`` and ``ceil_div``/``min``/``max`` —
never by ``eval``. Parameters reach the source as ``-DNAME=value``.

A user kernel gets id -1, -2, ... in the order the files were given, and the
header's ``name`` (default: the file's stem) as its label.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .. import fsutil, procs
from ..backend import Shape, SkipKernel
from ..errors import UserError
from ..sources import source_dir
from ..validate import parse_int
from ..spec import KernelSpec, Params
from ..precision import PRECISIONS
from .expr import FUNCTIONS, Expr, ExprError, parse_dims

MARK = "gemmbench kernel"
SHAPE_NAMES = ("M", "N", "K")
MAX_THREADS_PER_BLOCK = 1024

COMMON_FIELDS = ("name", "summary", "params", "constraints")
FIELDS = {"gpu": COMMON_FIELDS + ("search", "block", "grid", "smem", "precision", "min_cc"),
          "cpu": COMMON_FIELDS + ("threads", "cflags")}
REPEATABLE = ("params", "search", "constraints", "cflags")
REQUIRED = {"gpu": ("block", "grid"), "cpu": ()}
SUFFIXES = {".cu": "gpu", ".c": "cpu"}


class KernelFileError(UserError):
    """A kernel file that cannot be used; ``details`` holds the compiler's
    full message when it does not compile (printed above the one-line error)."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


# --------------------------------------------------------------------------
# the callables a KernelSpec holds (classes, so a spec pickles into a child process)
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Field:
    """Where a header field was written, for messages."""

    name: str
    line: int


class Dims:
    """block(params) or grid(M, N, K, params) from the header; a value that does
    not evaluate or is not positive makes the kernel skip at that shape."""

    def __init__(self, field: Field, exprs: Sequence[Expr], with_shape: bool):
        self.field, self.exprs, self.with_shape = field, tuple(exprs), with_shape

    def evaluate(self, params: Params, shape: Shape | None = None) -> tuple[int, int, int]:
        env = dict(params)
        if shape is not None:
            env.update(M=shape.M, N=shape.N, K=shape.K)
        dims = tuple(int(e(env)) for e in self.exprs)
        return dims + (1,) * (3 - len(dims))

    def __call__(self, *args) -> tuple[int, int, int]:
        params, shape = (args[3], Shape(*args[:3])) if self.with_shape else (args[0], None)
        try:
            dims = self.evaluate(params, shape)
        except ExprError as exc:
            raise SkipKernel(f"{self.field.name}: {exc}") from None
        if min(dims) < 1:
            raise SkipKernel(f"{self.field.name} {dims} has a dimension below 1")
        return dims


class Scalar:
    """smem(params) from the header."""

    def __init__(self, field: Field, expr: Expr):
        self.field, self.expr = field, expr

    def __call__(self, params: Params) -> int:
        try:
            return int(self.expr(dict(params)))
        except ExprError as exc:
            raise SkipKernel(f"{self.field.name}: {exc}") from None


class Check:
    """KernelSpec.check: the header's constraints, then a block of 1..1024
    threads and non-negative shared memory (so a tuner skips what cannot launch)."""

    def __init__(self, constraints: Sequence[tuple[Field, Expr]], block: Dims | None, smem: Scalar | None):
        self.constraints, self.block, self.smem = tuple(constraints), block, smem

    def problems(self, params: Params) -> Iterable[tuple[Field, str]]:
        for field, expr in self.constraints:
            try:
                if not expr(dict(params)):
                    yield field, f"'{expr.text}' is false"
            except ExprError as exc:
                yield field, f"'{expr.text}': {exc}"
        if self.block is not None:
            try:
                dims = self.block.evaluate(params)
            except ExprError as exc:
                yield self.block.field, str(exc)
            else:
                threads = dims[0] * dims[1] * dims[2]
                if min(dims) < 1 or threads > MAX_THREADS_PER_BLOCK:
                    yield self.block.field, f"{dims} is {threads} threads; need 1 to {MAX_THREADS_PER_BLOCK}, each dimension >= 1"
        if self.smem is not None:
            try:
                if self.smem.expr(dict(params)) < 0:
                    yield self.smem.field, "is negative"
            except ExprError as exc:
                yield self.smem.field, str(exc)

    def __call__(self, params: Params) -> str | None:
        for field, problem in self.problems(params):
            return f"{field.name}: {problem}"
        return None


# --------------------------------------------------------------------------
# the header
# --------------------------------------------------------------------------

_FIELD_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def header_lines(text: str) -> list[tuple[int, str]] | None:
    """The (line number, text) of each line of the header block, comment
    markers stripped; None when the file has no header."""
    lines = text.splitlines()
    mark = re.compile(r"^\s*(//|/\*+|\*)\s*" + re.escape(MARK) + r"\s*$", re.IGNORECASE)
    for start, line in enumerate(lines):
        found = mark.match(line)
        if found:
            break
    else:
        return None
    style = "//" if found.group(1) == "//" else "/*"
    if style == "/*" and found.group(1) == "*" and not _inside_block_comment(lines, start):
        return None
    body = []
    for number, line in enumerate(lines[start + 1:], start + 2):
        stripped = line.strip()
        if style == "//":
            if not stripped.startswith("//"):
                break
            body.append((number, stripped[2:].strip()))
        else:
            end = stripped.find("*/")
            content = stripped if end < 0 else stripped[:end]
            content = content.lstrip("*").strip() if content.startswith("*") else content
            body.append((number, content))
            if end >= 0:
                break
    else:
        if style == "/*":
            raise KernelFileError(f"header from line {start + 1}: the '/*' comment is never closed")
    return body


def _inside_block_comment(lines: list[str], index: int) -> bool:
    before = "\n".join(lines[:index])
    return before.rfind("/*") > before.rfind("*/")


def _parse_assignments(value: str, many: bool) -> list[tuple[str, list[int]]]:
    """``A=1, B=2`` (params) or ``A=1,2,3; B=4,5`` (search)."""
    groups = [g for g in re.split(r";" if many else r"[;,\s]+(?=[A-Za-z_])", value) if g.strip()]
    if not groups:
        raise ExprError("is empty")
    out = []
    for group in groups:
        name, eq, values = group.partition("=")
        name = name.strip()
        if not eq or not _IDENT.fullmatch(name):
            raise ExprError(f"'{group.strip()}': expected NAME={'v1,v2,...' if many else 'INTEGER'}")
        items = [v.strip() for v in values.strip().rstrip(",").split(",")] if many else [values.strip().rstrip(",")]
        try:
            numbers = [parse_int(v) for v in items]
        except ValueError as exc:
            raise ExprError(f"'{group.strip()}': values must be integers: {exc}") from None
        if len(numbers) != len(set(numbers)):
            raise ExprError(f"'{group.strip()}': a value is repeated")
        out.append((name, numbers))
    return out


@dataclass(frozen=True)
class UserKernel:
    """A kernel file and the record its header describes."""

    path: Path  # resolved
    given: str  # as the user wrote it, for messages
    digest: str  # sha256 of the file's text, stored with every result
    spec: KernelSpec

    def error(self, field: Field | None, message: str) -> KernelFileError:
        where = f"{self.given}:{field.line}: header field '{field.name}'" if field else self.given
        return KernelFileError(f"{where}: {message}")


def device_of(path: str | Path) -> str:
    suffix = Path(path).suffix
    if suffix not in SUFFIXES:
        raise KernelFileError(f"kernel file '{path}': expected a .cu (CUDA) or .c (C) file")
    return SUFFIXES[suffix]


def parse_overrides(items: Iterable[str]) -> dict[str, int]:
    """``--param NAME=INTEGER`` options: the value in ASCII digits
    (validate.parse_int, as every number), each NAME at most once (a repeated
    one is an error naming it, never the last one silently)."""
    out: dict[str, int] = {}
    given: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or not _IDENT.fullmatch(name):
            raise UserError(f"--param {item!r}: expected NAME=INTEGER")
        try:
            out_value = parse_int(value)
        except ValueError as exc:
            raise UserError(f"--param {item!r}: {exc}; expected NAME=INTEGER") from None
        if name in out:
            raise UserError(f"--param {name} is given twice ({given[name]!r} and {item!r}); give each parameter once")
        out[name], given[name] = out_value, item
    return out


def load(path: str | Path, index: int, overrides: Mapping[str, int] | None = None) -> UserKernel:
    """Read, parse and check a kernel file; ``index`` (0, 1, ...) gives the id
    -1, -2, .... Raises KernelFileError (one line naming the field)."""
    given = str(path)
    device = device_of(given)
    file = Path(path)
    text = read_source(file, f"kernel file {given!r}")
    if device == "gpu":
        check_includes(file, text, given)
    try:
        lines = header_lines(text)
    except KernelFileError as exc:
        raise KernelFileError(f"{given}: {exc}") from None
    if lines is None and REQUIRED[device]:
        raise KernelFileError(f"{given}: no '{MARK}' header comment (a CUDA kernel needs one with "
                              f"block and grid; see examples/)")
    kernel = UserKernel(file.resolve(), given, hashlib.sha256(text.encode()).hexdigest(),
                        KernelSpec(-(index + 1), file.stem, device, "", source=str(file.resolve())))
    spec = _spec_from_header(kernel, device, lines or [], dict(overrides or {}))
    return replace(kernel, spec=spec)


def read_source(path: Path, what: str) -> str:
    """A kernel file or a file it includes, as text: a regular file of at
    most fsutil.KERNEL_FILE_MAX_BYTES (never a FIFO or /dev/stdin, which would
    wait for input); KernelFileError (one line) otherwise."""
    try:
        return fsutil.read_text(path, fsutil.KERNEL_FILE_MAX_BYTES)
    except fsutil.UnreadableFile as exc:
        problem = "not found" if exc.problem == "no such file" else exc.problem
        raise KernelFileError(f"{what} {problem}") from None


_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.MULTILINE)


def check_includes(file: Path, text: str, given: str) -> None:
    """Every ``#include "..."`` that gemmbench.gpu.compile inlines into a
    CUDA kernel file must be a regular, readable file of bounded size (an
    include of /dev/stdin or a FIFO would wait forever); found as it finds
    them: beside the including file first, then in cuda_src."""
    root = source_dir("cuda_src")
    seen: set[str] = set()

    def visit(path: Path, body: str) -> None:
        for match in _INCLUDE.finditer(body):
            name = match.group(1)
            if name in seen:
                continue
            seen.add(name)
            found = path.parent / name if (path.parent / name).is_file() else root / name
            line = body.count("\n", 0, match.start()) + 1
            visit(found, read_source(found, f"{given}: '#include \"{name}\"' (line {line} of {path.name}):"))

    visit(file, text)


def _spec_from_header(kernel: UserKernel, device: str, lines: list[tuple[int, str]],
                      overrides: dict[str, int]) -> KernelSpec:
    fields: dict[str, list[tuple[Field, str]]] = {}
    for number, line in lines:
        if not line:
            continue
        found = _FIELD_LINE.match(line)
        if not found:
            raise KernelFileError(f"{kernel.given}:{number}: header line '{line}' is not 'field: value'")
        name, value = found.group(1).lower(), found.group(2).strip()
        if name not in FIELDS[device]:
            other = "gpu" if device == "cpu" else "cpu"
            hint = f" (it is for {'CUDA' if other == 'gpu' else 'C'} kernels)" if name in FIELDS[other] else \
                f" (fields: {', '.join(FIELDS[device])})"
            raise kernel.error(Field(name, number), f"unknown field{hint}")
        if name in fields and name not in REPEATABLE:
            raise kernel.error(Field(name, number), f"given twice (first on line {fields[name][0][0].line})")
        if not value:
            raise kernel.error(Field(name, number), "has no value")
        fields.setdefault(name, []).append((Field(name, number), value))
    for name in REQUIRED[device]:
        if name not in fields:
            raise kernel.error(None, f"the header has no '{name}:' field (a CUDA kernel needs block and grid)")

    def one(name):
        return fields[name][0] if name in fields else (None, None)

    def attempt(field, parse):
        try:
            return parse()
        except ExprError as exc:
            raise kernel.error(field, str(exc)) from None

    # params first: every expression may use them
    params: dict[str, int] = {}
    for field, value in fields.get("params", []):
        for name, (number,) in attempt(field, lambda: _parse_assignments(value, many=False)):
            if name in SHAPE_NAMES or name in FUNCTIONS:
                raise kernel.error(field, f"'{name}' is reserved (M, N, K are the shape; ceil_div, min, max functions)")
            if name in params:
                raise kernel.error(field, f"'{name}' is given twice")
            params[name] = number
    for name, value in overrides.items():
        if name in params:
            params[name] = value
    names = tuple(params)

    search: dict[str, list[int]] = {}
    for field, value in fields.get("search", []):
        for name, values in attempt(field, lambda: _parse_assignments(value, many=True)):
            if name not in params:
                raise kernel.error(field, f"'{name}' is not a parameter (params: {', '.join(names) or 'none'})")
            search[name] = values

    constraints = []
    for field, value in fields.get("constraints", []):
        for part in value.split(";"):
            if part.strip():
                constraints.append((field, attempt(field, lambda: Expr(part, names))))

    block = grid = smem = None
    field, value = one("block")
    if field:
        block = Dims(field, attempt(field, lambda: parse_dims(value, names)), with_shape=False)
    field, value = one("grid")
    if field:
        grid = Dims(field, attempt(field, lambda: parse_dims(value, (*SHAPE_NAMES, *names))), with_shape=True)
    field, value = one("smem")
    if field:
        smem = Scalar(field, attempt(field, lambda: Expr(value, names)))

    precision = "fp32"
    field, value = one("precision")
    if field:
        precision = value.lower()
        if precision not in PRECISIONS:
            raise kernel.error(field, f"'{value}' is not one of {', '.join(PRECISIONS)}")

    min_cc = (7, 0)
    field, value = one("min_cc")
    if field:
        major, dot, minor = value.partition(".")
        try:
            min_cc = (parse_int(major, signed=False), parse_int(minor, signed=False) if dot else 0)
        except ValueError:
            raise kernel.error(field, f"'{value}' is not a compute capability like 8.0") from None
        if max(min_cc) > 999 or major != major.strip() or minor != minor.strip():
            raise kernel.error(field, f"'{value}' is not a compute capability like 8.0")

    multithreaded = False
    field, value = one("threads")
    if field:
        if value.lower() not in ("1", "all"):
            raise kernel.error(field, f"'{value}': expected 1 (one thread) or all (every core, e.g. OpenMP)")
        multithreaded = value.lower() == "all"
    cflags = tuple(flag for _, value in fields.get("cflags", []) for flag in value.split())

    check = Check(constraints, block, smem)
    name, summary = one("name")[1], one("summary")[1]
    spec = KernelSpec(
        kernel.spec.id, name or kernel.spec.name, device, summary or f"user kernel {kernel.given}",
        source=kernel.spec.source, params=params, search_space=search, check=check,
        constraints="; ".join(e.text for _, e in constraints), block=block, grid=grid, smem=smem,
        precision=precision, min_cc=min_cc, multithreaded=multithreaded, cflags=cflags)
    for field, problem in check.problems(params):
        shown = " ".join(f"{k}={v}" for k, v in params.items())
        raise kernel.error(field, f"{problem} for the parameters {shown}")
    return spec


def check_shapes(kernel: UserKernel, shapes: Iterable[Shape]) -> None:
    """The grid of the default parameters at every shape of a plan: it must
    evaluate and have at least one block in each dimension."""
    grid = kernel.spec.grid
    if not isinstance(grid, Dims):
        return
    for shape in shapes:
        try:
            dims = grid.evaluate(kernel.spec.params, shape)
        except ExprError as exc:
            raise kernel.error(grid.field, f"{exc} at {shape}") from None
        if min(dims) < 1:
            raise kernel.error(grid.field, f"{dims} at {shape} has zero blocks")


def check_overrides(kernels: Sequence[UserKernel], overrides: Mapping[str, int]) -> None:
    """Every ``--param`` must name a parameter of at least one kernel file."""
    for name in overrides:
        if not any(name in k.spec.params for k in kernels):
            known = sorted({p for k in kernels for p in k.spec.params})
            raise UserError(f"--param {name}: no kernel file has a parameter '{name}' "
                            f"(parameters: {', '.join(known) or 'none'})")


def compile_summary(given: str, message: str) -> str:
    """The one-line summary of a compiler's message: its first error line."""
    first = procs.first_error_line(message)
    return f"{given} does not compile: {first}" if first else f"{given} does not compile"
