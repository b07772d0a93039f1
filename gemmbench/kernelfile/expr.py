"""The integer arithmetic of a kernel file's header lines (block, grid,
smem, constraints): parsed with ``ast`` and checked node by node, evaluated by
walking the tree — never by ``eval``. ``/`` divides as C does.

Bounded by construction: an expression is at most MAX_CHARS characters and
its tree at most MAX_DEPTH levels deep (checked without recursion before the
recursive checks and evaluation run), so a header of 100,000 terms or
``not``s is one line, not a RecursionError. Numbers are ASCII decimal
digits (validate.parse_int, the parser of options and --param too): Python's
own literals such as ``1_6`` or ``0x10`` are refused."""

from __future__ import annotations

import ast
import operator
from typing import Iterable, Mapping

from ..output.text import cut
from ..spec import ceil_div
from ..validate import parse_int

FUNCTIONS = {"ceil_div": ceil_div, "min": min, "max": max}
_LIMIT = 2 ** 63  # values beyond int64 are a mistake, not a launch geometry
# A launch geometry needs a few dozen characters; these leave room for any
# honest header while keeping parsing and the tree walks far from recursion limits.
MAX_CHARS = 1000
MAX_DEPTH = 100


class ExprError(ValueError):
    """An expression that does not parse, uses what is not allowed, or does not evaluate."""


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
        tree = _parse(self.text)
        self.names = tuple(names)
        self._validate(tree)
        self.tree = tree

    def _validate(self, node: ast.AST) -> None:
        if isinstance(node, ast.Constant):
            if type(node.value) not in (int, bool):
                raise ExprError(f"{node.value!r} is not an integer")
            if type(node.value) is int:
                written = ast.get_source_segment(self.text, node) or ""
                try:
                    parse_int(written, signed=False)
                except ValueError as exc:
                    raise ExprError(str(exc)) from None
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


def _shown(text: str) -> str:
    return cut(text, 60)


def _parse(text: str) -> ast.AST:
    """The tree of ``text``, within MAX_CHARS and MAX_DEPTH; ExprError otherwise."""
    if len(text) > MAX_CHARS:
        raise ExprError(f"'{_shown(text)}' is {len(text)} characters long; at most {MAX_CHARS}")
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise ExprError(f"'{_shown(text)}' does not parse ({exc.msg})") from None
    except (RecursionError, MemoryError, ValueError):  # nesting the parser refuses; a NUL byte
        raise ExprError(f"'{_shown(text)}' does not parse (nested too deeply, or a NUL character)") from None
    _check_depth(tree, text)
    return tree


def _check_depth(tree: ast.AST, text: str) -> None:
    """No path from the root longer than MAX_DEPTH (walked with a stack, not recursion)."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ExprError(f"'{_shown(text)}' nests more than {MAX_DEPTH} levels deep")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def parse_dims(text: str, names: Iterable[str]) -> tuple[Expr, ...]:
    """1 to 3 comma-separated expressions (x, y, z), optionally in parentheses."""
    names = tuple(names)
    tree = _parse(text.strip())
    parts = tree.elts if isinstance(tree, ast.Tuple) else [tree]
    if not 1 <= len(parts) <= 3:
        raise ExprError(f"'{_shown(text.strip())}': give 1 to 3 values (x, y, z)")
    return tuple(Expr(ast.get_source_segment(text.strip(), p) or ast.unparse(p), names) for p in parts)
