"""A run's live view on a terminal: the table of the rows so far, growing as
each lands, with the progress line under it.

It is drawn on stderr, where the progress bar it extends is drawn, and it is
transient: when the run ends (or is interrupted) it is erased, and the
command prints its final table on stdout as it always has. So stdout never
carries a frame of it, and the screen shows the final table once. Its tables
are built by ``table.record_tables`` from the run's record as it grows: the
code that builds the final table, so a live row and a final row agree.
"""

from __future__ import annotations

import time

from rich.console import Console, ConsoleOptions, Group
from rich.live import Live
from rich.progress import Progress
from rich.segment import Segment
from rich.style import Style

from ..records.results import RunRecord
from .table import record_tables

# Drawing the table again costs time that grows with its rows: after a draw
# that took t, the next waits until COST_FACTOR * t has passed (rows that
# land meanwhile show at the next one, and all of them in the final table),
# so the live table takes at most about 1 / COST_FACTOR of a run's time.
COST_FACTOR = 10.0
REFRESH_PER_SECOND = 2  # redraws for the progress line's clock and count; a drawn row shows at once
_HIDDEN = Style(dim=True)


class _NewestLines:
    """The tables as rendered lines, cut to the screen: when they are taller
    than ``room``, their heading (title, column headers and the rule under
    them) stays, then a line saying rows are hidden, then the newest rows."""

    def __init__(self, reserve: int):
        self.reserve = reserve  # lines kept free under the tables (the progress line and one spare)
        self.lines: list[list[Segment]] = []

    def show(self, console: Console, tables: list) -> None:
        lines = console.render_lines(Group(*tables), console.options, pad=False) if tables else []
        room = console.height - self.reserve
        if len(lines) > room:
            head = _heading_height(lines)
            keep = room - head - 1
            if keep < 1:
                head, keep = 0, max(room - 1, 0)
            hidden = len(lines) - head - keep
            marker = [Segment(f"… {hidden} earlier lines hidden: the whole table prints when the run ends", _HIDDEN)]
            lines = lines[:head] + [marker] + (lines[-keep:] if keep else [])
        self.lines = lines  # one assignment: the refresh thread sees the old lines or the new, whole

    def __rich_console__(self, console: Console, options: ConsoleOptions):
        for line in self.lines:
            yield from line
            yield Segment.line()


def _heading_height(lines: list[list[Segment]]) -> int:
    """The lines up to and including the rule under the first table's column
    headers (table.make_table draws it with SIMPLE_HEAVY's '━'); 0 if none."""
    for i, line in enumerate(lines):
        text = "".join(s.text for s in line).strip()
        if text and set(text) == {"━"}:
            return i + 1
    return 0


class LiveRows:
    """The live view of ``record``'s rows above ``bar`` (a rich Progress,
    not started: it is drawn as part of this view) on ``console``."""

    def __init__(self, console: Console, record: RunRecord, bar: Progress):
        self.console, self.record = console, record
        self.rows = _NewestLines(reserve=2)
        self.live = Live(Group(self.rows, bar), console=console, transient=True,
                         refresh_per_second=REFRESH_PER_SECOND)
        self._next_draw = 0.0

    def start(self) -> None:
        self.live.start(refresh=True)

    def stop(self) -> None:
        self.live.stop()

    def landed(self) -> None:
        """A row landed in the record: draw the table again, unless the last
        draw was too recent for its cost (COST_FACTOR); the progress line is
        redrawn by the refresh thread either way."""
        began = time.monotonic()
        if began < self._next_draw:
            return
        self.rows.show(self.console, record_tables(self.record, self.console) if self.record.results else [])
        self.live.refresh()
        self._next_draw = time.monotonic() + COST_FACTOR * (time.monotonic() - began)
