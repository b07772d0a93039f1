"""Rows rendered as rich tables that fit the console.

When a table is too wide its headers shorten, then columns leave by priority
(with a line naming them), or a table with column groups (sizes, several
records) splits into several tables that repeat the key columns. Numbers are
never cut and never wrap inside; names and reasons wrap between words and are
cut with an ellipsis where a word (or the whole cell) is too long. Every cell
and title goes through ``text.plain``: data, never markup.
"""

from __future__ import annotations


from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from ..records.results import RunRecord
from ..spec import KernelSpec
from .format import BASELINE_NAME
from .rows import (LADDER_COLUMNS, Column, ladder_rows, result_columns, result_rows, results_title, row_style,
                   sweep_columns, sweep_rows, tuning_title, tuning_view)
from .runrows import gpu_indices, split_by_gpu
from .text import PIPED_WIDTH, cut, plain, printable

def _texts(column: Column, header: str, cells: list[str]) -> list[str]:
    """The header and the cells as a table shows them (printable; cut columns' cells at their limit)."""
    shown = [printable(c) for c in cells]
    if column.cut and column.limit:
        shown = [cut(t, column.limit) for t in shown]
    return [header, *shown]


def _cells_width(column: Column, header: str, cells: list[str]) -> int:
    """A column's narrowest width in terminal cells (a CJK character takes
    two): its longest cell, or its longest word if it wraps; a cut column's
    at most its floor (or its header)."""
    texts = _texts(column, header, cells)
    if not (column.wrap or column.cut):
        return max(cell_len(t) for t in texts)
    longest = max(cell_len(word) for t in texts for word in (t.split() or [""]))
    return min(longest, max(column.floor, cell_len(header))) if column.cut else longest


def _min_width(columns: list[Column], rows: list[list[str]], short: bool) -> int:
    """The narrowest the table can be without cutting a number or a word that
    may not be cut: rich's padding and rule are 3 per column, 1 per table."""
    return 1 + sum(3 + _cells_width(c, printable(c.header(short)), [row[i] for row in rows]) for i, c in enumerate(columns))


def _full_width(columns: list[Column], rows: list[list[str]], short: bool) -> int:
    """The width of the table with every cell on one line, whole (up to a cut column's limit)."""
    return 1 + sum(3 + max(cell_len(t) for t in _texts(c, printable(c.header(short)), [row[i] for row in rows]))
                   for i, c in enumerate(columns))


def column_widths(columns: list[Column], rows: list[list[str]], short: bool, width: int) -> list[int]:
    """Each column's content width: every column its longest cell when the
    table fits; else the narrowest (numbers whole, words of wrap columns
    whole), and what room is left shared among the wrapping columns by how
    much more they would take."""
    least, most = [], []
    for i, c in enumerate(columns):
        header = printable(c.header(short))
        cells = [row[i] for row in rows]
        least.append(_cells_width(c, header, cells))
        most.append(max(least[-1], max(cell_len(t) for t in _texts(c, header, cells))))
    room = width - 1 - 3 * len(columns)
    if sum(most) <= room:
        return most
    widths = list(least)
    spare = room - sum(widths)
    while spare > 0:
        wanting = [i for i in range(len(columns)) if widths[i] < most[i]]
        if not wanting:
            break
        total = sum(most[i] - widths[i] for i in wanting)
        share = {i: (most[i] - widths[i]) * spare // total for i in wanting}
        if not any(share.values()):  # less than one each: the hungriest first
            share = {max(wanting, key=lambda i: most[i] - widths[i]): 1}
        for i, extra in share.items():
            widths[i] += extra
            spare -= extra
    return widths


def _cell(column: Column, text: str):
    if column.cut:
        return plain(cut(printable(text), column.limit) if column.limit else text, overflow="ellipsis")
    return plain(text, no_wrap=not column.wrap)


def make_table(title: str, columns: list[Column], rows: list[list[str]], short: bool = False,
               styles=None, width: int = PIPED_WIDTH) -> Table:
    """The table with each column's width fixed by ``column_widths`` (rich's
    own sharing may squeeze a column below its longest word)."""
    table = Table(title=plain(title), box=box.SIMPLE_HEAVY)
    for c, w in zip(columns, column_widths(columns, rows, short, width)):
        table.add_column(plain(c.header(short)), justify=c.justify, no_wrap=not (c.wrap or c.cut), width=w,
                         overflow="ellipsis" if c.cut else "fold")
    for i, row in enumerate(rows):
        table.add_row(*(_cell(c, cell) for c, cell in zip(columns, row)), style=styles[i] if styles else None)
    return table


def fit_table(console: Console | None, title: str, columns: list[Column], rows: list[list[str]],
              styles=None) -> tuple[Table, list[Column]]:
    """The table with as many columns as fit the console (full headers if
    they fit, else short ones): the least needed leave first, and any that
    left come back where they fit with no cell of the others wrapped or cut;
    returns the table and the columns left out."""
    width = (console or Console(width=PIPED_WIDTH)).width
    for short in (False, True):
        if _min_width(columns, rows, short) <= width:
            return make_table(title, columns, rows, short, styles, width), []
    kept = list(range(len(columns)))

    def subset(i_list):
        return [columns[i] for i in i_list], [[row[i] for i in i_list] for row in rows]
    for drop in sorted(range(len(columns)), key=lambda i: columns[i].keep):
        if len(kept) <= 2 or _min_width(*subset(kept), short=True) <= width:
            break
        kept.remove(drop)
    for back in sorted(set(range(len(columns))) - set(kept), key=lambda i: -columns[i].keep):
        if _full_width(*subset(sorted(kept + [back])), short=True) <= width:
            kept = sorted(kept + [back])
    table = make_table(title, *subset(kept), short=True, styles=styles, width=width)
    return table, [c for i, c in enumerate(columns) if i not in kept]


def split_tables(console: Console | None, title: str, columns: list[Column], rows: list[list[str]],
                 fixed: list[int], groups: list[list[int]], optional: tuple[int, ...] = (), styles=None) -> list[Table]:
    """One table, or several that each repeat the ``fixed`` columns and take
    as many column ``groups`` (kept together) as fit the console; short
    headers when they save a table; ``optional`` fixed columns leave first
    when even one group does not fit beside them."""
    width = (console or Console(width=PIPED_WIDTH)).width

    def layout(short: bool):
        def need(indices: list[int]) -> int:
            return 1 + sum(3 + _cells_width(columns[i], printable(columns[i].header(short)), [row[i] for row in rows])
                           for i in indices)
        keep = list(fixed)
        widest = max(groups, key=lambda g: need(g) - 1, default=[])
        while len(keep) > 1 and need(keep + widest) > width and any(i in optional for i in keep):
            keep.remove(next(j for j in reversed(keep) if j in optional))
        chunks, current = [], []
        for group in groups:
            if current and need(keep + current + group) > width:
                chunks.append(current)
                current = []
            current = current + group
        chunks.append(current)
        return keep, chunks
    short = False
    keep, chunks = layout(False)
    if len(chunks) > 1 or len(keep) < len(fixed):
        shorter = layout(True)
        if (len(shorter[1]), -len(shorter[0])) < (len(chunks), -len(keep)):
            short, (keep, chunks) = True, shorter
    tables = []
    for n, chunk in enumerate(chunks):
        shown = keep + chunk
        part = f" ({n + 1}/{len(chunks)})" if len(chunks) > 1 else ""
        tables.append(make_table(title + part, [columns[i] for i in shown], [[row[i] for i in shown] for row in rows],
                                 short=short, styles=styles, width=width))
    return tables


def left_out_line(dropped: list[Column]) -> list[str]:
    if not dropped:
        return []
    return [f"Left out for width: {', '.join(c.name for c in dropped)} (a wider terminal, or --format csv, "
            f"shows every column)."]


# --------------------------------------------------------------------------
# the views of a record
# --------------------------------------------------------------------------

def results_table(record: RunRecord, console: Console | None = None) -> tuple[Table, list[Column]]:
    """The run/compare table fitted to ``console`` (default: 200 columns)."""
    return fit_table(console, results_title(record), result_columns(record), result_rows(record),
                     [row_style(r) for r in record.results])


def sweep_tables(record: RunRecord, console: Console | None = None) -> list[Table]:
    """The sizes table, split into as many tables (each repeating the kernel
    column, and the precision where it fits) as the console's width needs,
    so no number is cut."""
    header, rows, _ = sweep_rows(record)
    title = f"gemmbench sizes · GFLOP/s (% of {BASELINE_NAME[record.device]})"
    columns = sweep_columns(header)
    fixed = [0] if header[0] == "shape" else [0, 1]  # a shape set's kernels are its columns
    return split_tables(console, title, columns, rows, fixed=fixed,
                        groups=[[i] for i in range(len(fixed), len(columns))], optional=(1,))


def tuning_table(record: RunRecord, columns: list[Column], rows: list[list[str]],
                 console: Console | None = None) -> tuple[Table, list[Column]]:
    return fit_table(console, tuning_title(record), columns, rows)


def record_tables(record: RunRecord, console: Console | None = None) -> list:
    """The tables ``runs.show_record`` prints for ``record`` (by its command),
    without the lines around them (a run on several GPUs: each GPU's table
    under a line naming it): what a run's live view draws as rows land."""
    if record.command == "sizes":
        return sweep_tables(record, console)
    if record.command == "tune":
        columns, rows, _ = tuning_view(record, record.options.get("top") or 10)
        return [tuning_table(record, columns, rows, console)[0]]
    if gpu_indices(record) and record.command == "compare":
        return [part for index, sub in split_by_gpu(record)
                for part in (plain(f"GPU {index}", style="bold"), results_table(sub, console)[0])]
    return [results_table(record, console)[0]]


def ladder_table(specs: tuple[KernelSpec, ...], device: str,
                 console: Console | None = None) -> tuple[Table, list[Column]]:
    header, rows = ladder_rows(specs)
    return fit_table(console, f"gemmbench {device.upper()} ladder", LADDER_COLUMNS, rows)
