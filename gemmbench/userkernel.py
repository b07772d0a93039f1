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

import ast
import hashlib
import operator
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .backend import Shape, SkipKernel
from .errors import UserError
from .spec import KernelSpec, Params, ceil_div
from .precision import PRECISIONS

MARK = "gemmbench kernel"
SHAPE_NAMES = ("M", "N", "K")
FUNCTIONS = {"ceil_div": ceil_div, "min": min, "max": max}
MAX_THREADS_PER_BLOCK = 1024
_LIMIT = 2 ** 63  # values beyond int64 are a mistake, not a launch geometry

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


class ExprError(ValueError):
    """An expression that does not parse, uses what is not allowed, or does not evaluate."""


# --------------------------------------------------------------------------
# expressions
# --------------------------------------------------------------------------

def _c_div(a: int, b: int) -> int:
    """C's integer division (truncates toward zero)."""
    if b == 0:
        raise ExprError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _floor_div(a: int, b: int) -> int:
    if b == 0:
        raise ExprError("division by zero")
    return a // b


def _mod(a: int, b: int) -> int:
    if b == 0:
        raise ExprError("modulo by zero")
    return a - b * _c_div(a, b)  # C's remainder: the sign of a


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: _c_div, ast.FloorDiv: _floor_div, ast.Mod: _mod}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_ALLOWED = "numbers, names, + - * / // %, comparisons, and/or/not, x if c else y, ceil_div/min/max"


class Expr:
    """One integer or boolean expression over a fixed set of names, checked
    when parsed (only the nodes the evaluator knows, only known names) and
    evaluated by walking the tree."""

    def __init__(self, text: str, names: Iterable[str]):
        self.text = text.strip()
        try:
            tree = ast.parse(self.text, mode="eval").body
        except SyntaxError as exc:
            raise ExprError(f"'{self.text}' does not parse ({exc.msg})") from None
        self.names = tuple(names)
        self._validate(tree)
        self.tree = tree

    def _validate(self, node: ast.AST) -> None:
        if isinstance(node, ast.Constant):
            if type(node.value) not in (int, bool):
                raise ExprError(f"{node.value!r} is not an integer")
        elif isinstance(node, ast.Name):
            if node.id not in self.names:
                known = ", ".join(self.names) or "none"
                raise ExprError(f"unknown name '{node.id}' (names here: {known})")
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            self._validate(node.left)
            self._validate(node.right)
        elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            self._validate(node.operand)
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                self._validate(value)
        elif isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            for value in (node.left, *node.comparators):
                self._validate(value)
        elif isinstance(node, ast.IfExp):
            for value in (node.test, node.body, node.orelse):
                self._validate(value)
        elif isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else None
            if name not in FUNCTIONS:
                raise ExprError(f"calls to '{ast.unparse(node.func)}' are not allowed (only ceil_div, min, max)")
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                raise ExprError(f"'{ast.unparse(node)}': plain positional arguments only")
            if (name == "ceil_div" and len(node.args) != 2) or len(node.args) < 2:
                raise ExprError(f"'{ast.unparse(node)}': {name} takes {'2' if name == 'ceil_div' else '2 or more'} arguments")
            for arg in node.args:
                self._validate(arg)
        elif isinstance(node, ast.Attribute):
            raise ExprError(f"'{ast.unparse(node)}': attribute access is not allowed")
        elif isinstance(node, ast.Subscript):
            raise ExprError(f"'{ast.unparse(node)}': indexing is not allowed")
        else:
            raise ExprError(f"'{ast.unparse(node)}' is not allowed (allowed: {_ALLOWED})")

    def __call__(self, env: Mapping[str, int]) -> int:
        return _evaluate(self.tree, env)

    def __repr__(self) -> str:
        return f"Expr({self.text!r})"


def _evaluate(node: ast.AST, env: Mapping[str, int]) -> int:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.BinOp):
        value = _BINARY[type(node.op)](_evaluate(node.left, env), _evaluate(node.right, env))
        if abs(value) >= _LIMIT:
            raise ExprError(f"'{ast.unparse(node)}' is out of range ({value})")
        return value
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, env))
    if isinstance(node, ast.BoolOp):  # short-circuit, as Python and C do
        is_and = isinstance(node.op, ast.And)
        for value in node.values:
            if bool(_evaluate(value, env)) != is_and:
                return not is_and
        return is_and
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = _evaluate(right_node, env)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _evaluate(node.body if _evaluate(node.test, env) else node.orelse, env)
    if isinstance(node, ast.Call):
        args = [_evaluate(a, env) for a in node.args]
        if node.func.id == "ceil_div" and args[1] == 0:
            raise ExprError("division by zero")
        return FUNCTIONS[node.func.id](*args)
    raise ExprError(f"cannot evaluate '{ast.unparse(node)}'")  # unreachable: _validate refused it


def parse_dims(text: str, names: Iterable[str]) -> tuple[Expr, ...]:
    """1 to 3 comma-separated expressions (x, y, z), optionally in parentheses."""
    names = tuple(names)
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ExprError(f"'{text.strip()}' does not parse ({exc.msg})") from None
    parts = tree.elts if isinstance(tree, ast.Tuple) else [tree]
    if not 1 <= len(parts) <= 3:
        raise ExprError(f"'{text.strip()}': give 1 to 3 values (x, y, z)")
    return tuple(Expr(ast.unparse(p), names) for p in parts)


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
        if not eq or not _IDENT.match(name):
            raise ExprError(f"'{group.strip()}': expected NAME={'v1,v2,...' if many else 'INTEGER'}")
        items = [v.strip() for v in values.strip().rstrip(",").split(",")] if many else [values.strip().rstrip(",")]
        try:
            numbers = [int(v) for v in items]
        except ValueError:
            raise ExprError(f"'{group.strip()}': values must be integers") from None
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
    """``--param NAME=INTEGER`` options."""
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        try:
            if not eq or not _IDENT.match(name.strip()):
                raise ValueError
            out[name.strip()] = int(value)
        except ValueError:
            raise UserError(f"--param '{item}': expected NAME=INTEGER") from None
    return out


def load(path: str | Path, index: int, overrides: Mapping[str, int] | None = None) -> UserKernel:
    """Read, parse and check a kernel file; ``index`` (0, 1, ...) gives the id
    -1, -2, .... Raises KernelFileError (one line naming the field)."""
    given = str(path)
    device = device_of(given)
    file = Path(path)
    if not file.is_file():
        raise KernelFileError(f"kernel file '{given}' not found")
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise KernelFileError(f"kernel file '{given}' cannot be read: {exc}") from None
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
        found = re.fullmatch(r"(\d+)(?:\.(\d+))?", value)
        if not found:
            raise kernel.error(field, f"'{value}' is not a compute capability like 8.0")
        min_cc = (int(found.group(1)), int(found.group(2) or 0))

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
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    first = next((line for line in lines if re.search(r"\berror\b", line, re.IGNORECASE)), lines[0] if lines else "")
    return f"{given} does not compile: {first}" if first else f"{given} does not compile"
