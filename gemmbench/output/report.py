"""Where output goes: tables on stdout, notes, alerts and progress on stderr.

Rows are built in ``rows`` (formatting in ``format``), rendered as rich
tables in ``table`` and as markdown or CSV in ``text``; every string reaches a
console as data, through ``text.printable`` (never markup, control
characters escaped). The names other modules import from here before the
split stay importable from here.
"""

from __future__ import annotations

import contextlib

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..records.results import RunRecord
from .format import BASELINE_NAME, flag_lines, format_number, format_rate, format_time, kernel_label
from .rows import (footer_lines, header_lines, ladder_rows, result_columns, result_csv_rows, result_rows, sweep_rows,
                   tuning_rows, tuning_view)
from .table import ladder_table, left_out_line, results_table, sweep_tables, tuning_table
from .live import LiveRows
from .text import escapes_refused, make_console, markdown_cell, printable, prose, to_csv, to_markdown

# names callers imported from here before the split (plot.py, the tests): kept importable
__all__ = ["Reporter", "BASELINE_NAME", "kernel_label", "format_number", "format_rate", "format_time",
           "footer_lines", "ladder_rows", "result_columns", "result_csv_rows", "result_rows", "results_table",
           "sweep_rows", "sweep_tables", "to_csv", "to_markdown", "tuning_rows"]

class Reporter:
    """Where output goes: tables on stdout, notes and progress on stderr."""

    def __init__(self, fmt: str = "table", quiet: bool = False, live_rows: bool = False):
        self.fmt = fmt
        self.quiet = quiet
        self.live_rows = live_rows  # a run's rows drawn as they land, where a terminal can show them (see progress)
        self.out = make_console()
        self.err = make_console(stderr=True)

    def note(self, message: str) -> None:
        if not self.quiet:
            self._text(self.err, message)

    def alert(self, message: str) -> None:
        """A note that --json does not silence (stdout holds the JSON, not this)."""
        self._text(self.err, message)

    def _text(self, console, line: str, style: str | None = None, data: bool = False) -> None:
        # data (csv, markdown) and anything piped go out whole; prose on a terminal wraps at words.
        # Data is already printable line by line (its newlines are its own); prose is one line.
        text = prose(line, style) if not data else Text(line, style=style or "")
        console.print(text, soft_wrap=data or not console.is_terminal)

    def _render(self, renderable) -> None:
        """A table; to a pipe or file without rich's trailing padding."""
        if self.out.is_terminal:
            self.out.print(renderable)
            return
        with self.out.capture() as captured:
            self.out.print(renderable)
        self.out.file.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))

    def show(self, tables: list[Table], header: list[str], rows: list[list[str]], lines_before=(), lines_after=(),
             csv_view: tuple[list[str], list[list[str]]] | None = None):
        if self.fmt == "markdown":
            text = "\n\n".join([*map(markdown_cell, lines_before), to_markdown(header, rows),
                                *map(markdown_cell, lines_after)])
            self._text(self.out, text, data=True)
        elif self.fmt == "csv":
            self._text(self.out, to_csv(*(csv_view or (header, rows))), data=True)
        else:
            for line in lines_before:
                self._text(self.out, line, style="bold")
            for table in tables:
                self._render(table)
            for line in lines_after:
                self._text(self.out, line, style="dim")

    def show_results(self, record: RunRecord) -> None:
        table, dropped = results_table(record, self.out)
        self.show([table], [c.name for c in result_columns(record)], result_rows(record), header_lines(record),
                  footer_lines(record) + flag_lines(record) + left_out_line(dropped), result_csv_rows(record))

    def show_sweep(self, record: RunRecord) -> None:
        header, rows, notes = sweep_rows(record)
        self.show(sweep_tables(record, self.out), header, rows, header_lines(record),
                  notes + flag_lines(record, letters=True) + footer_lines(record, per_cycle=False),
                  result_csv_rows(record))

    def show_tuning(self, record: RunRecord, top: int, not_compiled: int = 0) -> None:
        columns, rows, summary = tuning_view(record, top)
        if not_compiled:
            summary.insert(0, f"{not_compiled} candidates did not compile.")
        table, dropped = tuning_table(record, columns, rows, self.out)
        self.show([table], [c.name for c in columns], rows, header_lines(record),
                  summary + flag_lines(record) + footer_lines(record)[:1] + left_out_line(dropped),
                  result_csv_rows(record))

    def show_ladder(self, specs, device: str) -> None:
        header, rows = ladder_rows(specs)
        table, dropped = ladder_table(specs, device, self.out)
        self.show([table], header, rows, lines_after=left_out_line(dropped))

    @contextlib.contextmanager
    def progress(self, total: int, description: str, record: RunRecord | None = None,
                 shield=contextlib.nullcontext):
        """Yields advance(label), called as each step lands. On a terminal's
        stderr (unless quiet; elsewhere rich would leave a blank line and
        nothing useful) a progress bar; with ``record``, the run's record
        whose rows grow, and a live table that applies (``_live_table``),
        the table of its rows so far above the bar (output.live). Labels are
        data: shown as text. The display starts and stops inside ``shield()``
        (record_run passes interrupts.deferred), so a signal cannot leave the
        terminal half restored; an interrupted run stops it on its way out."""
        if self.quiet or total <= 1 or not self.err.is_terminal:
            yield lambda label: None
            return
        bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TextColumn("{task.fields[label]}", markup=False), console=self.err,
                       transient=True)
        task = bar.add_task(printable(description), total=total, label="")
        view = LiveRows(self.err, record, bar) if record is not None and self._live_table() else None

        def advance(label):
            bar.update(task, advance=1, label=printable(label))
            if view is not None:
                view.landed()
        shown = view or bar
        try:
            with shield():
                shown.start()
            yield advance
        finally:
            with shield():
                shown.stop()

    def _live_table(self) -> bool:
        """A live table is drawn where it was asked for (commands, not --json),
        the format is the table, and stdout and stderr are both terminals
        that take escape codes (not NO_COLOR, not TERM=dumb). It goes to
        stderr and is erased before the final table: stdout is the same
        with it or without."""
        return (self.live_rows and self.fmt == "table" and self.out.is_terminal and self.err.is_terminal
                and not escapes_refused())
