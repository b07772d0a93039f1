"""Properties of the shape-file reader (issue 18), over generated files:

- any set of shapes with any valid names and groups, written as CSV under a
  header in any column order and case, reads back as the same shapes in the
  same order;
- any text at all is either a list of shapes in range or one ShapeFileError
  line naming the file (and a line number when a line is at fault), never
  another exception;
- a dimension is accepted exactly when it is an integer within RANGES.
"""

from __future__ import annotations

import csv
import io
import re

import pytest

from gemmbench.backend import Shape
from gemmbench.options import RANGES
from gemmbench.shapeset import MAX_LABEL_CHARS, ShapeFileError, read_shape_file

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

SETTINGS = dict(deadline=None, database=None, max_examples=150,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
LOW, HIGH = RANGES["m"]
DIMS = st.one_of(st.integers(LOW, 4096), st.integers(LOW, HIGH))
LABELS = st.one_of(st.none(), st.text(min_size=1, max_size=MAX_LABEL_CHARS).filter(
    lambda t: t.isprintable() and t == t.strip() and "#" not in t))
ENTRIES = st.lists(st.tuples(st.tuples(DIMS, DIMS, DIMS), LABELS, LABELS), min_size=1, max_size=30,
                   unique_by=lambda e: e[0])


def _written(entries, columns) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for (m, n, k), name, group in entries:
        values = {"m": m, "n": n, "k": k, "name": name or "", "group": group or ""}
        writer.writerow([values[c.lower()] for c in columns])
    return out.getvalue()


@settings(**SETTINGS)
@given(entries=ENTRIES, order=st.permutations(["M", "N", "K", "name", "group"]), upper=st.booleans())
def test_written_shapes_read_back_the_same(tmp_path, entries, order, upper):
    path = tmp_path / "set.csv"
    columns = [c.upper() if upper else c.lower() for c in order]
    path.write_text(_written(entries, columns), encoding="utf-8")
    read = [(e.shape, e.name, e.group) for e, _ in read_shape_file(path)]
    assert read == [(Shape(*dims), name, group) for dims, name, group in entries]


LINES = st.one_of(st.text(max_size=40), st.sampled_from(["M,N,K", "M,N,K,name,group", "1,2,3", "4,5,6,x,y", "#",
                                                         "0,1,1", "9,9,9,\"a,b\"", "\ufeffM,N,K"]))


@settings(**SETTINGS)
@given(lines=st.lists(LINES, max_size=8))
def test_any_text_is_shapes_in_range_or_one_error_line(tmp_path, lines):
    path = tmp_path / "any.csv"
    path.write_text("\n".join(lines), encoding="utf-8")
    try:
        shapes = read_shape_file(path)
    except ShapeFileError as exc:
        message = str(exc)
        assert message.startswith(f"{path}") and "\n" not in message
        assert re.match(rf"{re.escape(str(path))}(:\d+)?: ", message)
        return
    assert shapes
    for entry, where in shapes:
        assert all(LOW <= getattr(entry.shape, d) <= HIGH for d in "MNK")
        assert re.fullmatch(rf"{re.escape(str(path))}:\d+", where)


@settings(**SETTINGS)
@given(value=st.integers(-2 ** 40, 2 ** 40))
def test_a_dimension_is_accepted_exactly_within_its_range(tmp_path, value):
    path = tmp_path / "one.csv"
    path.write_text(f"M,N,K\n1,{value},1\n")
    if LOW <= value <= HIGH:
        assert read_shape_file(path)[0][0].shape == Shape(1, value, 1)
    else:
        with pytest.raises(ShapeFileError, match=re.escape(f"{path}:2: N {value} is out of range")):
            read_shape_file(path)
