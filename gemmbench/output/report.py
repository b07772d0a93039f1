"""Tables (rich), markdown and CSV views of a RunRecord; progress bars.

The only module that imports rich. Display rows are computed once
(``result_rows``, ``sweep_rows``) and rendered as a table or markdown; CSV is
built from the results themselves, one value per column in stated units.

Tables fit the terminal: when a table is too wide its headers shorten, then
columns leave by priority (and the sizes table splits its sizes over several
tables), so a number is never cut.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import sys
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..spec import KernelSpec
from ..records.results import (BASELINE_SHIFTED, DISTURBED, NOISY, SHIFTED, THROTTLED, KernelResult, RunRecord,
                      percent_of_peak, sm_clock_mhz)
from ..stats import NOISY_RELATIVE_IQR

BASELINE_NAME = {"gpu": "cuBLAS", "cpu": "OpenBLAS"}
PIPED_WIDTH = 200  # output to a file or pipe, unless COLUMNS says otherwise

# What each flag means, and the letter that marks it in the sizes table.
FLAG_MEANING = {
    NOISY: ("N", f"its samples spread more than {100 * NOISY_RELATIVE_IQR:.0f}% (IQR / median)"),
    DISTURBED: ("D", "its threads waited for a CPU core while it was timed (another process ran, or more threads "
                     "than cores)"),
    THROTTLED: ("T", "the GPU throttled during its samples"),
    SHIFTED: ("S", "this baseline timed differently when measured again after the rungs"),
    BASELINE_SHIFTED: ("B", "its % is against a baseline that shifted during the run"),
}


def format_time(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}" if seconds / scale < 100 else f"{seconds / scale:.0f} {unit}"
    return f"{seconds * 1e9:.0f} ns"


def format_number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def format_rate(value: float) -> str:
    """Three significant figures for small numbers, whole numbers for large ones."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def format_error(result: KernelResult) -> str:
    v = result.verification
    if v is None:
        return "-"
    return "non-finite" if v.nonfinite or not math.isfinite(v.max_rel_error) else f"{v.max_rel_error:.1e}"


def status_text(result: KernelResult) -> str:
    if result.status == "pass":
        return "PASS"
    if result.status == "fail":
        return f"FAIL ({result.reason})" if result.reason else "FAIL"
    return f"SKIP ({result.reason})"


def kernel_label(result: KernelResult) -> str:
    label = result.name
    if result.device == "cpu" and result.threads:
        label += f" [{result.threads}T]"
    if result.params_source == "tuned":
        label += " (tuned)"
    return label


def format_params(params: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items()) or "-"


def format_flags(result: KernelResult) -> str:
    return ", ".join(result.flags)


def flag_letters(result: KernelResult) -> str:
    return "".join(FLAG_MEANING[f][0] for f in result.flags if f in FLAG_MEANING)


def flag_lines(record: RunRecord, letters: bool = False) -> list[str]:
    """What the flags that appear mean (nothing when no row is flagged)."""
    seen = [f for f in FLAG_MEANING if any(f in r.flags for r in record.results)]
    if not seen:
        return []
    parts = [f"{FLAG_MEANING[f][0] + ' = ' if letters else ''}{f}: {FLAG_MEANING[f][1]}" for f in seen]
    return ["Flags: " + "; ".join(parts) + ". Flagged figures are not for quoting: rerun on a quiet machine."]


# --------------------------------------------------------------------------
# tables that fit
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Column:
    """A table column: its header, a shorter one for narrow terminals, and how
    long it stays when space runs out (higher stays longer). Numbers never
    wrap; ``wrap`` columns (names, reasons) may."""

    name: str
    short: str
    keep: int
    justify: str = "right"
    wrap: bool = False


def _table(title: str, columns: list[Column], rows: list[list[str]], short: bool, styles=None) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAVY)
    for i, c in enumerate(columns):
        header = c.short if short else c.name
        # a wrapping column keeps room for its longest word: it wraps between words, never inside one
        least = _cells_width(header, [row[i] for row in rows], wrap=True) if c.wrap else None
        table.add_column(header, justify=c.justify, no_wrap=not c.wrap, min_width=least,
                         overflow="fold" if c.wrap else "ellipsis")
    for i, row in enumerate(rows):
        table.add_row(*row, style=styles[i] if styles else None)
    return table


def _min_width(columns: list[Column], rows: list[list[str]], short: bool) -> int:
    """The narrowest the table can be without cutting a cell or a word: each
    column's longest cell (longest word where it wraps), plus rich's padding
    and rule (3 per column, 1 per table)."""
    return 1 + sum(3 + _cells_width(c.short if short else c.name, [row[i] for row in rows], c.wrap)
                   for i, c in enumerate(columns))


def fit_table(console: Console, title: str, columns: list[Column], rows: list[list[str]],
              styles=None) -> tuple[Table, list[Column]]:
    """The table with as many columns as fit the console (full headers if
    they fit, else short ones); returns it and the columns left out."""
    width = console.width
    for short in (False, True):
        if _min_width(columns, rows, short) <= width:
            return _table(title, columns, rows, short, styles), []
    kept = list(range(len(columns)))

    def subset(i_list):
        return [columns[i] for i in i_list], [[row[i] for i in i_list] for row in rows]
    for drop in sorted(range(len(columns)), key=lambda i: columns[i].keep):
        if len(kept) <= 2 or _min_width(*subset(kept), short=True) <= width:
            break
        kept.remove(drop)
    table = _table(title, *subset(kept), short=True, styles=styles)
    return table, [c for i, c in enumerate(columns) if i not in kept]


def left_out_line(dropped: list[Column]) -> list[str]:
    if not dropped:
        return []
    return [f"Left out for width: {', '.join(c.name for c in dropped)} (a wider terminal, or --format csv, "
            f"shows every column)."]


# --------------------------------------------------------------------------
# run / compare
# --------------------------------------------------------------------------

def result_columns(record: RunRecord) -> list[Column]:
    base = BASELINE_NAME[record.device]
    cols = [Column("rung", "rung", 10), Column("kernel", "kernel", 10, "left", wrap=True),
            Column("precision", "prec", 4, "left"), Column("time (median)", "time", 7),
            Column("spread (IQR)", "IQR", 5), Column("GFLOP/s", "GFLOP/s", 9), Column(f"% {base}", f"% {base}", 9)]
    if record.device == "gpu":
        cols += [Column("% FP32 peak", "% peak", 4), Column("SM MHz", "MHz", 2)]
    return cols + [Column("max rel err", "err", 3), Column("flags", "flags", 8, "left", wrap=True),
                   Column("check", "check", 10, "left", wrap=True)]


def result_rows(record: RunRecord) -> list[list[str]]:
    rows = []
    for r in record.results:
        s = r.stats
        row = [str(r.kernel_id) if r.device == record.device else f"{r.device}:{r.kernel_id}",
               kernel_label(r), r.precision.upper(), format_time(s.median if s else None),
               f"{100 * s.relative_iqr:.1f}%" if s else "-",
               format_number(r.gflops), format_number(record.percent_of_baseline(r))]
        if record.device == "gpu":
            clock = sm_clock_mhz(r) if r.device == "gpu" and s else None
            row += [format_number(percent_of_peak(r, record.environment, at_clock=True)),
                    format_number(clock, 0)]
        rows.append(row + [format_error(r), format_flags(r), status_text(r)])
    return rows


def row_style(result: KernelResult) -> str | None:
    return "red" if result.status == "fail" else "dim" if result.status == "skip" else None


def header_lines(record: RunRecord) -> list[str]:
    """One line per device: what ran, at which clock, with which libraries."""
    env = record.environment
    lines = []
    gpu = env.get("gpu")
    if gpu:
        clock = env.get("sm_clock_mhz")
        lines.append(
            f"GPU {gpu['name']} (sm_{gpu['compute_capability'].replace('.', '')}, {gpu['sm_count']} SMs, "
            f"FP32 peak {gpu['peak_fp32_tflops']:.1f} TFLOP/s at {gpu['max_sm_clock_mhz']:.0f} MHz)"
            + (f", SM clock {clock} MHz at start" if clock else "")
            + f", driver {gpu['driver_version']}, CUDA {gpu['cuda_driver_api']}, cuBLAS {env.get('cublas')}")
    cpu = env.get("cpu")
    if cpu:
        blas = ", ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')})"
                         for b in cpu.get("blas") or []) or "none found"
        lines.append(f"CPU {cpu.get('cpu', '?')} ({cpu.get('cores', '?')} cores, C rungs built for "
                     f"{cpu.get('simd', '?')} by {cpu.get('compiler') or 'no compiler'}), numpy BLAS: {blas}")
    for note in env.get("notes", []):
        lines.append(note)
    if not record.complete:
        lines.append(f"INCOMPLETE: {record.incomplete_reason or 'stopped early'}")
    return lines


def footer_lines(record: RunRecord) -> list[str]:
    opts = record.options
    cold = "cold L2 (flushed before each call)" if opts.get("flush_l2") else "warm caches"
    lines = [f"Timed with alpha=1, beta=0 (C written, not read), {cold}; median of raw samples, "
             f"spread = interquartile range / median. Verified first against an FP64 reference "
             f"(beta=0 over a NaN-filled C, then alpha=0.75, beta=-1.5); seed {opts.get('seed', 0)}."]
    if record.device == "gpu":
        lines.append("% FP32 peak is of the peak at the SM clock each kernel ran at (its mean over the samples "
                     "where measured), so a throttled kernel is not blamed for the clock; SM MHz is that clock.")
    if any(r.precision != "fp32" for r in record.results):
        lines.append("Precision: TF32 rows round inputs to 10 mantissa bits, are checked against a bound that "
                     "adds 16*2^-11/sqrt(K) for that rounding, and are compared with cuBLAS TF32; 3xTF32 rows must "
                     "meet the FP32 bound and are compared with cuBLAS SGEMM; max rel err is |C - ref| over "
                     "|alpha|*|A|@|B| + |beta|*|C0|.")
    shown = set()
    for r in record.results:
        key = (r.kernel_id, r.name, r.shape, tuple(r.params.items()))
        if r.params_source in ("tuned", "selected") and key not in shown:
            shown.add(key)
            how = "tuned (gemmbench tune)" if r.params_source == "tuned" else "chosen for the shape"
            lines.append(f"rung {r.kernel_id} at {r.shape}: {how}: {format_params(r.params)}")
    return lines


def _title(record: RunRecord) -> str:
    shapes = list(dict.fromkeys(str(r.shape) for r in record.results))
    return f"gemmbench {record.command} · {', '.join(shapes)}"


def results_table(record: RunRecord, console: Console | None = None) -> tuple[Table, list[Column]]:
    """The run/compare table fitted to ``console`` (default: 200 columns)."""
    console = console or Console(width=PIPED_WIDTH)
    return fit_table(console, _title(record), result_columns(record), result_rows(record),
                     [row_style(r) for r in record.results])


# --------------------------------------------------------------------------
# sizes
# --------------------------------------------------------------------------

def sweep_rows(record: RunRecord) -> tuple[list[str], list[list[str]], list[str]]:
    """Kernels down, shapes across; cells 'GFLOP/s (% of baseline)' and the
    letters of their flags; SKIP and FAIL cells point to a numbered note with
    the reason. Returns the header, the rows and the notes."""
    shapes = list(dict.fromkeys(r.shape for r in record.results))
    kernels = list(dict.fromkeys((r.device, r.kernel_id, kernel_label(r)) for r in record.results))
    by_key = {(r.device, r.kernel_id, kernel_label(r), r.shape): r for r in record.results}
    square = all(s.M == s.N == s.K for s in shapes)
    header = ["kernel", "precision"] + [str(s.M) if square else str(s) for s in shapes] + ["max rel err"]
    reasons: dict[tuple[str, str], list[str]] = {}  # (status, reason) -> where
    rows = []
    for device, kid, label in kernels:
        mine = [r for r in record.results if (r.device, r.kernel_id, kernel_label(r)) == (device, kid, label)]
        row = [f"{kid} {label}", mine[0].precision.upper()]
        for shape in shapes:
            r = by_key.get((device, kid, label, shape))
            if r is None:
                row.append("")
            elif r.status != "pass":
                key = (r.status.upper(), r.reason or "no reason given")
                reasons.setdefault(key, []).append(f"{kid} {label} at {shape.M if square else shape}")
                row.append(f"{key[0]} [{list(reasons).index(key) + 1}]")
            else:
                pct = record.percent_of_baseline(r)
                own = record.baseline_of(r) is r
                letters = flag_letters(r)
                row.append(format_rate(r.gflops) + (f" ({format_rate(pct)}%)" if pct is not None and not own else "")
                           + (f" {letters}" if letters else ""))
        checked = [r for r in mine if r.verification is not None]
        row.append(format_error(max(checked, key=_error_order)) if checked else "-")
        rows.append(row)
    notes = [f"[{i}] {status}: {reason} ({', '.join(where)})"
             for i, ((status, reason), where) in enumerate(reasons.items(), 1)]
    return header, rows, notes


def _error_order(result: KernelResult) -> float:
    v = result.verification
    return math.inf if v.nonfinite or not math.isfinite(v.max_rel_error) else v.max_rel_error


def _cells_width(header: str, cells: list[str], wrap: bool) -> int:
    """A column's narrowest width: its longest cell, or its longest word if it wraps."""
    texts = [header, *cells]
    if wrap:
        return max(len(word) for t in texts for word in (t.split() or [""]))
    return max(len(t) for t in texts)


def sweep_tables(record: RunRecord, console: Console | None = None) -> list[Table]:
    """The sizes table, split into as many tables (each repeating the kernel
    column) as the console's width needs, so no number is cut."""
    console = console or Console(width=PIPED_WIDTH)
    header, rows, _ = sweep_rows(record)
    title = f"gemmbench sizes · GFLOP/s (% of {BASELINE_NAME[record.device]})"
    columns = [Column("kernel", "kernel", 10, "left"), Column("precision", "prec", 1, "left")]
    columns += [Column(h, h, 5) for h in header[2:-1]] + [Column("max rel err", "err", 2)]
    widths = [_cells_width(c.name, [row[i] for row in rows], c.wrap) + 3 for i, c in enumerate(columns)]
    # kernel names on one line, with the precision, when a size column still fits beside them
    fixed = [0, 1] if widths[0] + widths[1] + max(widths[2:]) + 1 <= console.width else [0]
    if widths[0] + max(widths[2:]) + 1 > console.width:
        columns[0] = Column("kernel", "kernel", 10, "left", wrap=True)
        widths[0] = _cells_width("kernel", [row[0] for row in rows], True) + 3
    chunks, current = [], []
    for i in range(2, len(columns)):
        if current and sum(widths[j] for j in fixed + current + [i]) + 1 > console.width:
            chunks.append(current)
            current = []
        current.append(i)
    chunks.append(current)
    tables = []
    for n, chunk in enumerate(chunks):
        keep = fixed + chunk
        part = f" ({n + 1}/{len(chunks)})" if len(chunks) > 1 else ""
        tables.append(_table(title + part, [columns[i] for i in keep], [[row[i] for i in keep] for row in rows],
                             short=False))
    return tables


# --------------------------------------------------------------------------
# tune
# --------------------------------------------------------------------------

TUNING_COLUMNS = [Column("rank", "rank", 10), Column("kernel", "kernel", 6, "left", wrap=True),
                  Column("parameters", "params", 9, "left", wrap=True), Column("time (median)", "time", 7),
                  Column("GFLOP/s", "GFLOP/s", 9), Column("% baseline", "% base", 8),
                  Column("max rel err", "err", 3), Column("flags", "flags", 7, "left", wrap=True),
                  Column("check", "check", 10, "left", wrap=True)]


def tuning_rows(record: RunRecord, top: int) -> tuple[list[str], list[list[str]], list[str]]:
    """The baselines, then the ``top`` fastest verified candidates; and a
    summary of the candidates that did not make it."""
    header = [c.name for c in TUNING_COLUMNS]
    header[5] = f"% {BASELINE_NAME[record.device]}"
    base = [r for r in record.results if r.kernel_id == 0]
    tried = [r for r in record.results if r.kernel_id != 0]
    timed = sorted((r for r in tried if r.status == "pass"), key=lambda r: -r.gflops)
    rows = []
    for rank, r in [("-", b) for b in base] + list(enumerate(timed[:top], 1)):
        rows.append([str(rank), kernel_label(r), format_params(r.params) if r.kernel_id else "-",
                     format_time(r.stats.median if r.stats else None), format_number(r.gflops),
                     format_number(record.percent_of_baseline(r)), format_error(r), format_flags(r),
                     status_text(r)])
    failed = [r for r in tried if r.status == "fail"]
    skipped = [r for r in tried if r.status == "skip"]
    summary = [f"{len(tried)} candidates ran: {len(timed)} verified and timed, {len(failed)} failed "
               f"verification, {len(skipped)} skipped."]
    summary += [f"FAIL {format_params(r.params)}: {r.reason}" for r in failed[:5]]
    return header, rows, summary


# --------------------------------------------------------------------------
# list
# --------------------------------------------------------------------------

def ladder_rows(specs: tuple[KernelSpec, ...]) -> tuple[list[str], list[list[str]]]:
    header = ["rung", "name", "what changed", "precision", "parameters", "constraints"]
    rows = [[str(s.id), s.name, s.summary, s.precision.upper(),
             " ".join(f"{k}={v}" for k, v in s.params.items()) or "-",
             s.constraints or ("multithreaded" if s.multithreaded else "-")] for s in specs]
    return header, rows


def ladder_table(specs: tuple[KernelSpec, ...], device: str) -> Table:
    header, rows = ladder_rows(specs)
    table = Table(title=f"gemmbench {device.upper()} ladder", box=box.SIMPLE_HEAVY, show_lines=False)
    for col in header:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


# --------------------------------------------------------------------------
# csv and markdown
# --------------------------------------------------------------------------

def plain_number(value: float | int | None, digits: int = 6) -> str:
    """A CSV cell: a plain number (inf for an infinite error), or empty when unknown."""
    if value is None:
        return ""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return ""
    return "inf" if math.isinf(value) else f"{value:.{digits}g}"


def result_csv_rows(record: RunRecord) -> tuple[list[str], list[list[str]]]:
    """One row per result, one value per column, units in the column names;
    for pandas.read_csv as is."""
    base = BASELINE_NAME[record.device].lower()
    gpu = record.device == "gpu"
    header = ["device", "kernel_id", "kernel", "precision", "threads", "M", "N", "K", "params",
              "params_source", "status", "reason", "samples", "time_us", "q1_us", "q3_us", "spread_pct",
              "gflops", f"pct_{base}"]
    if gpu:
        header += ["pct_fp32_peak", "pct_fp32_peak_max_clock", "sm_clock_mhz", "throttled_share"]
    header += ["max_rel_err", "flags"]
    rows = []
    for r in record.results:
        s = r.stats
        err = r.verification.max_rel_error if r.verification else None
        us = (lambda x: plain_number(x * 1e6)) if s else (lambda x: "")
        row = [r.device, str(r.kernel_id), r.name, r.precision, plain_number(r.threads), str(r.shape.M), str(r.shape.N),
               str(r.shape.K), format_params(r.params) if r.params else "", r.params_source, r.status,
               r.reason or "", plain_number(s.n if s else None), us(s.median if s else 0), us(s.q1 if s else 0),
               us(s.q3 if s else 0), plain_number(100 * s.relative_iqr if s else None), plain_number(r.gflops),
               plain_number(record.percent_of_baseline(r))]
        if gpu:
            row += [plain_number(percent_of_peak(r, record.environment, at_clock=True)),
                    plain_number(percent_of_peak(r, record.environment)),
                    plain_number(sm_clock_mhz(r) if r.device == "gpu" else None),
                    plain_number(r.notes.get("throttled_share"))]
        rows.append(row + [plain_number(err), ";".join(r.flags)])
    return header, rows


def to_markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def to_csv(header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().rstrip("\n")


# --------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------

def make_console(stderr: bool = False) -> Console:
    """A console for stdout or stderr: the terminal's width, else $COLUMNS,
    else PIPED_WIDTH for a pipe or file; with NO_COLOR set, no ANSI styles at
    all (bold and dim included, which rich's own no_color keeps)."""
    stream = sys.stderr if stderr else sys.stdout
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and int(columns) > 0 else None
    if width is None and not stream.isatty():
        width = PIPED_WIDTH
    plain = bool(os.environ.get("NO_COLOR"))
    return Console(stderr=stderr, highlight=False, width=width, **({"color_system": None} if plain else {}))


class Reporter:
    """Where output goes: tables on stdout, notes and progress on stderr."""

    def __init__(self, fmt: str = "table", quiet: bool = False):
        self.fmt = fmt
        self.quiet = quiet
        self.out = make_console()
        self.err = make_console(stderr=True)

    def note(self, message: str) -> None:
        if not self.quiet:
            self._text(self.err, message)

    def alert(self, message: str) -> None:
        """A note that --json does not silence (stdout holds the JSON, not this)."""
        self._text(self.err, message)

    def _text(self, console: Console, line: str, style: str | None = None, data: bool = False) -> None:
        # data (csv, markdown) and anything piped go out whole; prose on a terminal wraps at words
        console.print(line, markup=False, style=style, soft_wrap=data or not console.is_terminal)

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
            text = "\n\n".join([*lines_before, to_markdown(header, rows), *lines_after])
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
                  notes + flag_lines(record, letters=True) + footer_lines(record), result_csv_rows(record))

    def show_tuning(self, record: RunRecord, top: int, not_compiled: int = 0) -> None:
        header, rows, summary = tuning_rows(record, top)
        if not_compiled:
            summary.insert(0, f"{not_compiled} candidates did not compile.")
        title = (f"gemmbench tune · {record.results[-1].name if record.results else ''} · "
                 f"{', '.join(dict.fromkeys(str(r.shape) for r in record.results))}")
        columns = [Column(h, c.short, c.keep, c.justify, c.wrap) for h, c in zip(header, TUNING_COLUMNS)]
        table, dropped = fit_table(self.out, title, columns, rows)
        self.show([table], header, rows, header_lines(record),
                  summary + flag_lines(record) + footer_lines(record)[:1] + left_out_line(dropped),
                  result_csv_rows(record))

    def show_ladder(self, specs, device: str) -> None:
        header, rows = ladder_rows(specs)
        self.show([ladder_table(specs, device)], header, rows)

    @contextlib.contextmanager
    def progress(self, total: int, description: str):
        """Yields advance(label); draws a bar on a terminal's stderr unless
        quiet (elsewhere rich would leave a blank line and nothing useful)."""
        if self.quiet or total <= 1 or not self.err.is_terminal:
            yield lambda label: None
            return
        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TextColumn("{task.fields[label]}"), console=self.err,
                       transient=True)
        with bar:
            task = bar.add_task(description, total=total, label="")
            yield lambda label: bar.update(task, advance=1, label=label)
