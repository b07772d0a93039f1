"""Properties of gemmbench's one reader and one number parser (issue 16),
checked over generated cases:

- the record reader: any JSON tree, and any valid record with one field
  replaced by anything, is either a valid record (whose timed rows have
  finite GFLOP/s) or one RecordError line; never another exception;
- the header evaluator: any expression text is either refused with ExprError
  or evaluates (or refuses: ExprError) exactly as an independent reference
  evaluation of the same generated tree does;
- the number parser: ASCII decimal integers only, the same value as int()
  where it accepts, ValueError otherwise; --param refuses repeated names.
"""

from __future__ import annotations

import json
import math

import pytest

from gemmbench import fsutil, validate
from gemmbench.backend import Shape
from gemmbench.errors import UserError
from gemmbench.kernelfile import ExprError, KernelFileError, load as load_kernel, parse_overrides
from gemmbench.kernelfile.expr import Expr
from gemmbench.records.results import KernelResult, RunRecord, to_json
from gemmbench.records.store import RecordError, load as load_record
from gemmbench.verify import Verification

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings, strategies as st  # noqa: E402

SETTINGS = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# --------------------------------------------------------------------------
# the record reader
# --------------------------------------------------------------------------

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
JSON_TREES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                          max_leaves=30)


def _valid_record() -> dict:
    v = Verification(1e-7, 1e-5, 0)
    rows = [KernelResult("gpu", kid, f"rung {kid}", "fp32", Shape(64, 32, 16), status, verification=v,
                         samples=[1e-5, 1.2e-5] if status == "pass" else [], params={"BM": 64} if kid else {},
                         notes={"sm_clock_mhz": 1980.0, "throttle": []}, gpu=0, flags=["noisy"] if kid else [])
            for kid, status in ((0, "pass"), (5, "pass"), (7, "fail"))]
    env = {"gpu": {"name": "G", "compute_capability": "9.0", "sm_count": 132, "max_sm_clock_mhz": 1980.0,
                   "peak_fp32_tflops": 66.9, "driver_version": "580", "cuda_driver_api": "13.0", "index": 0},
           "cpu": {"cpu": "C", "cores": 8, "blas": [{"internal_api": "openblas", "version": "0.3"}]},
           "notes": ["a note"], "sm_clock_mhz": 1980}
    return json.loads(to_json(RunRecord("compare", "gpu", {"seed": 0, "top": 5}, env, rows)))


VALID = _valid_record()


def _paths(tree, prefix=()):
    """Every path to a value inside ``tree``."""
    yield prefix
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from _paths(value, prefix + (i,))


PATHS = [p for p in _paths(VALID) if p]


def _replaced(tree, path, value):
    tree = json.loads(json.dumps(tree))
    holder = tree
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return tree


def _load_text(tmp_path, text: str):
    path = tmp_path / "r.json"
    path.write_text(text)
    try:
        loaded = load_record(path)
    except RecordError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path)), str(exc)
        return None
    for r in loaded.record.results:
        if r.status == "pass":
            assert r.gflops is not None and math.isfinite(r.gflops) and r.gflops > 0
    return loaded


@settings(max_examples=150, **SETTINGS)
@given(JSON_TREES)
def test_any_json_tree_is_a_record_or_one_record_error(tmp_path, tree):
    _load_text(tmp_path, json.dumps(tree))


@settings(max_examples=300, **SETTINGS)
@given(st.sampled_from(PATHS), JSON_TREES)
def test_a_valid_record_with_any_field_replaced_is_a_record_or_one_record_error(tmp_path, path, value):
    _load_text(tmp_path, json.dumps(_replaced(VALID, path, value)))


@settings(max_examples=200, **SETTINGS)
@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.floats(0, 1e-300), st.integers(-5, 10 ** 30)),
       st.dictionaries(st.sampled_from("MNK"), st.integers(-2, 2 ** 64), max_size=3))
def test_any_sample_and_shape_give_finite_gflops_or_one_record_error(tmp_path, sample, shape):
    data = _replaced(VALID, ("results", 1, "samples_s"), [sample] * 3)
    data["results"][1]["shape"].update(shape)
    _load_text(tmp_path, json.dumps(data))


@settings(max_examples=100, **SETTINGS)
@given(st.text(alphabet='[]{}",:0123456789.eE-+ntrufalsNI\\ ', max_size=200))
def test_any_json_like_text_is_a_record_or_one_record_error(tmp_path, text):
    _load_text(tmp_path, text)


@settings(max_examples=60, **SETTINGS)
@given(st.integers(1, 3000), st.sampled_from(["[", "{\"a\":"]))
def test_nesting_of_any_depth_is_refused_above_the_bound(tmp_path, depth, opener):
    closer = "]" if opener == "[" else "}"
    text = opener * depth + "1" + closer * depth
    try:
        fsutil.loads_json(text)
        assert depth <= fsutil.JSON_MAX_DEPTH
    except fsutil.JSONLimitError:
        assert depth > fsutil.JSON_MAX_DEPTH
    assert _load_text(tmp_path, text) is None


# --------------------------------------------------------------------------
# the header evaluator, against a reference evaluation of the generated tree
# --------------------------------------------------------------------------

NAMES = {"BM": 64, "BN": 0, "TM": -3, "K": 7}
LIMIT = 2 ** 63


class Refused(Exception):
    """The reference says the evaluator must raise ExprError."""


def _c_div(a, b):
    if b == 0:
        raise Refused
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _checked(value):
    if abs(value) >= LIMIT:
        raise Refused
    return value


BINARY = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": _c_div,
          "//": lambda a, b: a // b if b else (_ for _ in ()).throw(Refused()),
          "%": lambda a, b: a - b * _c_div(a, b)}
COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _leaf():
    return st.one_of(st.integers(0, 9).map(lambda n: ("num", n)), st.sampled_from(sorted(NAMES)).map(
        lambda n: ("name", n)), st.integers(0, 2 ** 40).map(lambda n: ("num", n)))


def _node(inner):
    arithmetic = st.tuples(st.just("bin"), st.sampled_from(sorted(BINARY)), inner, inner)
    return st.one_of(
        arithmetic, arithmetic, arithmetic,
        st.tuples(st.just("cmp"), st.sampled_from(sorted(COMPARE)), inner, inner),
        st.tuples(st.just("neg"), inner),
        st.tuples(st.just("not"), inner),
        st.tuples(st.just("bool"), st.sampled_from(["and", "or"]), inner, inner),
        st.tuples(st.just("if"), inner, inner, inner),
        st.tuples(st.just("call"), st.sampled_from(["min", "max", "ceil_div"]), inner, inner),
    )


TREES = st.recursive(_leaf(), _node, max_leaves=12)


def render(t) -> str:
    kind = t[0]
    if kind == "num":
        return str(t[1])
    if kind == "name":
        return t[1]
    if kind == "bin" or kind == "cmp":
        return f"({render(t[2])} {t[1]} {render(t[3])})"
    if kind == "neg":
        return f"(-{render(t[1])})"
    if kind == "not":
        return f"(not {render(t[1])})"
    if kind == "bool":
        return f"({render(t[2])} {t[1]} {render(t[3])})"
    if kind == "if":
        return f"({render(t[2])} if {render(t[1])} else {render(t[3])})"
    return f"{t[1]}({render(t[2])}, {render(t[3])})"


def reference(t):
    """The value the header's arithmetic defines: C division and remainder,
    Python's // and comparisons, and/or/not giving 0/1 truth values."""
    kind = t[0]
    if kind == "num":
        return t[1]
    if kind == "name":
        return NAMES[t[1]]
    if kind == "bin":
        return _checked(BINARY[t[1]](reference(t[2]), reference(t[3])))
    if kind == "cmp":
        return COMPARE[t[1]](reference(t[2]), reference(t[3]))
    if kind == "neg":
        return -reference(t[1])
    if kind == "not":
        return not reference(t[1])
    if kind == "bool":
        left = bool(reference(t[2]))
        if t[1] == "and":
            return left and bool(reference(t[3]))
        return left or bool(reference(t[3]))
    if kind == "if":
        return reference(t[2]) if reference(t[1]) else reference(t[3])
    a, b = reference(t[2]), reference(t[3])
    if t[1] == "ceil_div":
        if b == 0:
            raise Refused
        return -(-a // b)
    return min(a, b) if t[1] == "min" else max(a, b)


def subtrees(t):
    yield t
    for part in t[1:]:
        if isinstance(part, tuple):
            yield from subtrees(part)


@settings(max_examples=400, **SETTINGS)
@given(TREES)
def test_an_expression_evaluates_as_the_reference_says(tree):
    for sub in subtrees(tree):  # every part of the expression is itself a case
        _agrees(sub)


def _agrees(tree):
    text = render(tree)
    try:
        expected = reference(tree)
    except Refused:
        expected = Refused
    try:
        expr = Expr(text, NAMES)
    except ExprError as exc:  # only for lengths and depths past the bounds
        assert len(text) > 1000 or "levels deep" in str(exc) or "does not parse" in str(exc), (text, exc)
        return
    try:
        got = expr(NAMES)
    except ExprError:
        assert expected is Refused, text
        return
    assert expected is not Refused and got == expected and type(got) in (int, bool), (text, got, expected)


@settings(max_examples=300, **SETTINGS)
@given(st.text(max_size=60))
def test_any_text_is_an_expression_or_one_expr_error(text):
    try:
        expr = Expr(text, NAMES)
    except ExprError as exc:
        assert "\n" not in str(exc).replace(text, "") or "\n" in text
        return
    try:
        value = expr(NAMES)
    except ExprError:
        return
    assert type(value) in (int, bool)


FIELD_VALUES = st.one_of(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
                                 max_size=40),
                         TREES.map(render))


@settings(max_examples=150, **SETTINGS)
@given(st.sampled_from(["params", "search", "constraints", "block", "grid", "smem", "min_cc", "precision",
                        "name"]), FIELD_VALUES)
def test_any_header_field_loads_or_is_one_kernel_file_error(tmp_path, field, value):
    fields = {"params": "BM=64, TM=4", "block": "BM / TM", "grid": "ceil_div(N, BM), ceil_div(M, BM)"}
    fields[field] = value
    text = "/* gemmbench kernel\n" + "".join(f" * {k}: {v}\n" for k, v in fields.items()) + " */\n"
    path = tmp_path / "mine.cu"
    path.write_text(text, encoding="utf-8")
    try:
        load_kernel(path, 0)
    except KernelFileError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc).replace(value, ""), str(exc)


# --------------------------------------------------------------------------
# the number parser
# --------------------------------------------------------------------------

@settings(max_examples=500, **SETTINGS)
@given(st.text(max_size=24))
def test_parse_int_takes_ascii_decimal_integers_only(text):
    try:
        value = validate.parse_int(text)
    except ValueError as exc:
        assert "\n" not in str(exc).replace(text, "")
        return
    body = text.strip(" \t\r\n")
    assert body.isascii() and body.lstrip("+-").isdigit() and len(body) - len(body.lstrip("+-")) <= 1
    assert "_" not in body and value == int(body)


@settings(max_examples=300, **SETTINGS)
@given(st.integers(-(10 ** 19) + 1, 10 ** 19 - 1), st.sampled_from(["", " ", "\t"]), st.booleans())
def test_parse_int_reads_every_integer_written_plainly(n, space, plus):
    text = f"{space}{'+' if plus and n >= 0 else ''}{n}{space}"
    assert validate.parse_int(text) == n


@settings(max_examples=300, **SETTINGS)
@given(st.integers(0, 10 ** 6), st.sampled_from(["_", "\u0660", "\uff10", "\u00b9", "\u2070", "\u0966", "."]),
       st.integers(0, 6))
def test_parse_int_refuses_any_non_ascii_digit_or_separator(n, intruder, at):
    text = str(n)
    text = text[:at] + intruder + text[at:]
    with pytest.raises(ValueError):
        validate.parse_int(text)


NAME = st.sampled_from(["BM", "BN", "BK", "TM", "KB"])


@settings(max_examples=300, **SETTINGS)
@given(st.lists(st.tuples(NAME, st.one_of(st.integers(-10 ** 6, 10 ** 6).map(str), st.text(max_size=6))),
                max_size=5))
def test_parse_overrides_accepts_each_name_once_in_ascii_digits(pairs):
    items = [f"{name}={value}" for name, value in pairs]
    try:
        out = parse_overrides(items)
    except UserError as exc:
        names = [name for name, _ in pairs]
        bad_number = any(not _plain_int(value) for _, value in pairs)
        assert bad_number or len(set(names)) < len(names), (items, exc)
        assert "--param" in str(exc)
        return
    assert len(out) == len(pairs) and all(out[name] == int(value) for name, value in pairs)


def _plain_int(value: str) -> bool:
    try:
        validate.parse_int(value)
        return True
    except ValueError:
        return False
