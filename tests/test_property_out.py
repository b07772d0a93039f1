"""Properties of the one text path and of fitted tables (hypothesis): any
string becomes one printable line, stays literal through markdown and CSV,
and any names and timings render at 80 columns without a cut number."""

from __future__ import annotations

import csv
import io
import unicodedata

from hypothesis import example, given, settings, strategies as st
from rich.cells import cell_len
from rich.console import Console

from gemmbench.backend import Shape
from gemmbench.output.format import format_number
from gemmbench.output.table import results_table
from gemmbench.output.text import markdown_cell, printable, spreadsheet_safe, to_csv
from gemmbench.records.results import KernelResult, RunRecord
from gemmbench.verify import Verification

ESCAPED = {"Cc", "Cf", "Cs", "Zl", "Zp"}
ANY_TEXT = st.text(st.characters(blacklist_categories=()), max_size=60)


@given(ANY_TEXT)
def test_printable_leaves_no_control_or_format_character(text):
    shown = printable(text)
    assert not any(unicodedata.category(c) in ESCAPED for c in shown)
    assert printable(shown) == shown  # once is enough: escaping is stable
    if text.isprintable():
        assert shown == text  # ordinary text is untouched


@given(ANY_TEXT)
def test_a_markdown_cell_never_ends_its_cell_or_opens_markup(text):
    cell = markdown_cell(text)
    for special in "|[]<>*_`":
        # every special character is escaped: preceded by an odd run of backslashes
        for i, c in enumerate(cell):
            if c == special:
                run = len(cell[:i]) - len(cell[:i].rstrip("\\"))
                assert run % 2 == 1, (text, cell)


@given(st.lists(st.lists(ANY_TEXT, min_size=2, max_size=2), max_size=5))
def test_csv_is_one_line_per_row_and_reads_back_as_the_printable_cells(rows):
    text = to_csv(["a", "b"], rows)
    assert len(text.split("\n")) == 1 + len(rows)
    assert list(csv.reader(io.StringIO(text)))[1:] == [[spreadsheet_safe(printable(c)) for c in row] for row in rows]
    for row in list(csv.reader(io.StringIO(text)))[1:]:  # and no cell is a formula a spreadsheet would run
        assert all(not cell.startswith(("=", "+", "-", "@")) or float_or_none(cell) is not None for cell in row)


def float_or_none(text: str):
    try:
        return float(text)
    except ValueError:
        return None


NAMES = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=150)
TIMES = st.floats(min_value=1e-7, max_value=10.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(NAMES, TIMES, st.booleans()), min_size=1, max_size=5), NAMES)
@example([("漢字" * 40, 1e-3, False), ("名前 " * 20, 2e-6, True)], "理由が長い " * 30)
def test_any_names_and_times_fit_80_columns_with_their_numbers_whole(rows, reason):
    shape = Shape(1024, 1024, 1024)
    v = Verification(1e-7, 1e-5, 0)
    results = [KernelResult("gpu", 0, "cuBLAS", "fp32", shape, "pass", verification=v, samples=[1e-3] * 3)]
    results += [KernelResult("gpu", i + 1, name, "fp32", shape, "pass", verification=v, samples=[t] * 3,
                             flags=["noisy"] if flagged else []) for i, (name, t, flagged) in enumerate(rows)]
    results.append(KernelResult("gpu", 99, "broken", "fp32", shape, "fail", reason, verification=v))
    record = RunRecord("compare", "gpu", {"seed": 0}, {}, results)
    console = Console(width=80, record=True, file=io.StringIO())
    table, dropped = results_table(record, console)
    console.print(table)
    lines = console.export_text().splitlines()
    assert all(cell_len(line) <= 80 for line in lines)  # terminal cells: a CJK character takes two
    shown = " ".join(" ".join(lines).split())
    for r in results:
        if r.gflops:
            assert format_number(r.gflops) in shown
