"""The one text path to the terminal: every string that comes from a file or a
record (kernel names, reasons, notes, parameters, GPU names, paths) reaches a
console, a markdown table or a CSV cell through ``printable``.

Such strings are data, never markup: they become rich ``Text`` objects (so
``[bold]`` or ``[link=...]`` print as typed, and ``:smile:`` stays words), and
their control and format characters are written as escapes (``\\x1b``,
``\\u202e``), so a record cannot move the cursor, clear the screen, ring the
bell or reorder a line, whatever the output is.
"""

from __future__ import annotations

import csv
import io
import os
import re
import sys
import unicodedata

from rich.console import Console
from rich.text import Text

PIPED_WIDTH = 200  # output to a file or pipe, unless COLUMNS says otherwise
ELLIPSIS = "…"

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0/C1 controls and DEL (Cc), invisible format characters such as bidi overrides
# and zero-width spaces (Cf), lone surrogates from undecodable bytes (Cs), and
# the line and paragraph separators (Zl, Zp)
_ESCAPED_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(value) -> str:
    """``value`` as one line of plain text: control and format characters escaped."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():  # the common case, fast (spaces count as printable; no control character is)
        return text
    return "".join(_escape(c) if unicodedata.category(c) in _ESCAPED_CATEGORIES else c for c in text)


def printable_lines(value) -> str:
    """Prose of several lines (a compiler's message in a note): each line printable, the newlines kept."""
    return "\n".join(printable(line) for line in str(value).split("\n"))


def plain(value, style: str | None = None, **options) -> Text:
    """A rich Text of ``printable(value)``: shown as typed, never parsed as markup or emoji."""
    return Text(printable(value), style=style or "", **options)


def prose(value, style: str | None = None) -> Text:
    """A rich Text of lines (a note, a header line): each line printable, its newlines kept."""
    return Text(printable_lines(value), style=style or "")


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, its end replaced by an ellipsis when longer."""
    return text if len(text) <= width else text[:max(width - 1, 0)] + ELLIPSIS


_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|#~!"})


def markdown_cell(value) -> str:
    """A markdown table cell or line: printable, with every character markdown
    would read as syntax (emphasis, links, HTML, the cell separator) escaped."""
    return printable(value).translate(_MARKDOWN_SPECIAL)


def make_console(stderr: bool = False) -> Console:
    """A console for stdout or stderr: the terminal's width, else $COLUMNS,
    else PIPED_WIDTH for a pipe or file. No markup, emoji or highlighting
    anywhere (strings are shown as given). Escape codes only on a terminal
    (or where FORCE_COLOR asks for them), and none at all with NO_COLOR set
    or TERM=dumb: bold and dim are escape codes too, which rich's own
    no_color would keep."""
    stream = sys.stderr if stderr else sys.stdout
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isascii() and columns.isdigit() and 0 < int(columns) < 100_000 else None
    terminal = _isatty(stream)
    if width is None and not terminal:
        width = PIPED_WIDTH
    return Console(stderr=stderr, highlight=False, markup=False, emoji=False, width=width,
                   **({"color_system": None} if escapes_refused() else {}))


def escapes_refused() -> bool:
    """NO_COLOR is set or TERM is dumb: no escape codes (styles, or a live view's cursor moves)."""
    return bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") in ("dumb", "unknown")


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def to_markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(markdown_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(markdown_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# A spreadsheet runs a cell that starts with one of these as a formula
# (=HYPERLINK(...), =cmd|...): a name from a shared record must stay text.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def spreadsheet_safe(cell: str) -> str:
    """``cell``, with a leading apostrophe when a spreadsheet would read it as a
    formula (numbers such as -1.5e-3 stay numbers)."""
    if cell.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(cell):
        return "'" + cell
    return cell


def to_csv(header: list[str], rows: list[list[str]]) -> str:
    """CSV text; every cell printable (a newline in a name is written \\n, so
    one row stays one line) and never a spreadsheet formula."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([spreadsheet_safe(printable(h)) for h in header])
    writer.writerows([spreadsheet_safe(printable(cell)) for cell in row] for row in rows)
    return out.getvalue().rstrip("\n")
