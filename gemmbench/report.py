"""Tables (rich), markdown and CSV views of a RunRecord; progress bars.

The only module that imports rich. Rows are computed once (``result_rows``,
``sweep_rows``) and rendered by whichever format the user asked for.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import sys

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .spec import KernelSpec
from .results import KernelResult, RunRecord, baseline_for, percent_of_baseline, percent_of_peak

BASELINE_NAME = {"gpu": "cuBLAS", "cpu": "OpenBLAS"}


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


# --------------------------------------------------------------------------
# run / compare
# --------------------------------------------------------------------------

def result_columns(record: RunRecord) -> list[str]:
    base = BASELINE_NAME[record.device]
    cols = ["rung", "kernel", "precision", "time (median)", "spread (IQR)", "GFLOP/s", f"% {base}"]
    if record.device == "gpu":
        cols.append("% FP32 peak")
    return cols + ["max rel err", "check"]


def result_rows(record: RunRecord) -> list[list[str]]:
    rows = []
    for r in record.results:
        s = r.stats
        row = [str(r.kernel_id) if r.device == record.device else f"{r.device}:{r.kernel_id}",
               kernel_label(r), r.precision.upper(), format_time(s.median if s else None),
               f"{100 * s.relative_iqr:.1f}%{' noisy' if s.noisy else ''}" if s else "-",
               format_number(r.gflops), format_number(percent_of_baseline(r, record.results, record.device))]
        if record.device == "gpu":
            row.append(format_number(percent_of_peak(r, record.environment)))
        rows.append(row + [format_error(r), status_text(r)])
    return rows


def header_lines(record: RunRecord) -> list[str]:
    """One line per device: what ran, at which clock, with which libraries."""
    env = record.environment
    lines = []
    gpu = env.get("gpu")
    if gpu:
        clock = env.get("sm_clock_mhz")
        throttle = env.get("throttle")
        lines.append(
            f"GPU {gpu['name']} (sm_{gpu['compute_capability'].replace('.', '')}, {gpu['sm_count']} SMs, "
            f"FP32 peak {gpu['peak_fp32_tflops']:.1f} TFLOP/s at {gpu['max_sm_clock_mhz']:.0f} MHz)"
            + (f", SM clock {clock} MHz" if clock else "")
            + (f" [throttled: {', '.join(throttle)}]" if throttle else "")
            + f", driver {gpu['driver_version']}, CUDA {gpu['cuda_driver_api']}, cuBLAS {env.get('cublas')}")
    cpu = env.get("cpu")
    if cpu:
        blas = ", ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')})"
                         for b in cpu.get("blas") or []) or "none found"
        lines.append(f"CPU {cpu.get('cpu', '?')} ({cpu.get('cores', '?')} cores, C rungs built for "
                     f"{cpu.get('simd', '?')} by {cpu.get('compiler') or 'no compiler'}), numpy BLAS: {blas}")
    for note in env.get("notes", []):
        lines.append(note)
    return lines


def footer_lines(record: RunRecord) -> list[str]:
    opts = record.options
    cold = "cold L2 (flushed before each call)" if opts.get("flush_l2") else "warm caches"
    lines = [f"Timed with alpha=1, beta=0 (C written, not read), {cold}; median of raw samples, "
             f"spread = interquartile range / median. Verified first against an FP64 reference "
             f"(beta=0 over a NaN-filled C, then alpha=0.75, beta=-1.5); seed {opts.get('seed', 0)}."]
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


def results_table(record: RunRecord) -> Table:
    shapes = sorted({str(r.shape) for r in record.results})
    table = Table(title=f"gemmbench {record.command} · {', '.join(shapes)}", box=box.SIMPLE_HEAVY)
    for col in result_columns(record):
        table.add_column(col, justify="left" if col in ("kernel", "check", "precision") else "right")
    for row in result_rows(record):
        style = "red" if row[-1].startswith("FAIL") else "dim" if row[-1].startswith("SKIP") else None
        table.add_row(*row, style=style)
    return table


# --------------------------------------------------------------------------
# sizes
# --------------------------------------------------------------------------

def sweep_rows(record: RunRecord) -> tuple[list[str], list[list[str]]]:
    """Kernels down, shapes across; cells 'GFLOP/s (% of baseline)'."""
    shapes = list(dict.fromkeys(r.shape for r in record.results))
    kernels = list(dict.fromkeys((r.device, r.kernel_id, kernel_label(r)) for r in record.results))
    by_key = {(r.device, r.kernel_id, kernel_label(r), r.shape): r for r in record.results}
    square = all(s.M == s.N == s.K for s in shapes)
    header = ["kernel", "precision"] + [str(s.M) if square else str(s) for s in shapes] + ["max rel err"]
    rows = []
    for device, kid, label in kernels:
        mine = [r for r in record.results if (r.device, r.kernel_id, kernel_label(r)) == (device, kid, label)]
        row = [f"{kid} {label}", mine[0].precision.upper()]
        for shape in shapes:
            r = by_key.get((device, kid, label, shape))
            if r is None:
                row.append("")
            elif r.status != "pass":
                row.append(r.status.upper())
            else:
                pct = percent_of_baseline(r, record.results, record.device)
                own = baseline_for(r, record.results, record.device) is r
                row.append(format_rate(r.gflops) + (f" ({format_rate(pct)}%)" if pct is not None and not own else ""))
        checked = [r for r in mine if r.verification is not None]
        row.append(format_error(max(checked, key=_error_order)) if checked else "-")
        rows.append(row)
    return header, rows


def _error_order(result: KernelResult) -> float:
    v = result.verification
    return math.inf if v.nonfinite or not math.isfinite(v.max_rel_error) else v.max_rel_error


def sweep_table(record: RunRecord) -> Table:
    header, rows = sweep_rows(record)
    table = Table(title=f"gemmbench sizes · GFLOP/s (% of {BASELINE_NAME[record.device]})", box=box.SIMPLE_HEAVY)
    for i, col in enumerate(header):
        table.add_column(col, justify="left" if i < 2 else "right")
    for row in rows:
        table.add_row(*row)
    return table


# --------------------------------------------------------------------------
# tune
# --------------------------------------------------------------------------

def tuning_rows(record: RunRecord, top: int) -> tuple[list[str], list[list[str]], list[str]]:
    """The baselines, then the ``top`` fastest verified candidates; and a
    summary of the candidates that did not make it."""
    header = ["rank", "kernel", "parameters", "time (median)", "GFLOP/s", f"% {BASELINE_NAME[record.device]}",
              "max rel err", "check"]
    base = [r for r in record.results if r.kernel_id == 0]
    tried = [r for r in record.results if r.kernel_id != 0]
    timed = sorted((r for r in tried if r.status == "pass"), key=lambda r: -r.gflops)
    rows = []
    for rank, r in [("-", b) for b in base] + list(enumerate(timed[:top], 1)):
        rows.append([str(rank), kernel_label(r), format_params(r.params) if r.kernel_id else "-",
                     format_time(r.stats.median if r.stats else None), format_number(r.gflops),
                     format_number(percent_of_baseline(r, record.results, record.device)),
                     format_error(r), status_text(r)])
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
# output
# --------------------------------------------------------------------------

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


class Reporter:
    """Where output goes: tables on stdout, notes and progress on stderr."""

    def __init__(self, fmt: str = "table", quiet: bool = False):
        self.fmt = fmt
        self.quiet = quiet
        # piped output (logs, CI) gets wide lines instead of rich's 80 columns
        self.out = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
        self.err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 200)

    def note(self, message: str) -> None:
        if not self.quiet:
            self.err.print(message, markup=False)

    def show(self, table: Table, header: list[str], rows: list[list[str]], lines_before=(), lines_after=()):
        if self.fmt == "markdown":
            text = "\n\n".join([*lines_before, to_markdown(header, rows), *lines_after])
            self.out.print(text, markup=False, soft_wrap=True)
        elif self.fmt == "csv":
            self.out.print(to_csv(header, rows), markup=False, soft_wrap=True)
        else:
            for line in lines_before:
                self.out.print(line, markup=False, style="bold")
            self.out.print(table)
            for line in lines_after:
                self.out.print(line, markup=False, style="dim")

    def show_results(self, record: RunRecord) -> None:
        self.show(results_table(record), result_columns(record), result_rows(record),
                  header_lines(record), footer_lines(record))

    def show_sweep(self, record: RunRecord) -> None:
        header, rows = sweep_rows(record)
        self.show(sweep_table(record), header, rows, header_lines(record), footer_lines(record))

    def show_tuning(self, record: RunRecord, top: int, not_compiled: int = 0) -> None:
        header, rows, summary = tuning_rows(record, top)
        if not_compiled:
            summary.insert(0, f"{not_compiled} candidates did not compile.")
        table = Table(title=f"gemmbench tune · {record.results[-1].name if record.results else ''} · "
                            f"{', '.join(sorted({str(r.shape) for r in record.results}))}", box=box.SIMPLE_HEAVY)
        for col in header:
            table.add_column(col, justify="left" if col in ("kernel", "parameters", "check") else "right")
        for row in rows:
            table.add_row(*row)
        self.show(table, header, rows, header_lines(record), summary + footer_lines(record)[:1])

    def show_ladder(self, specs, device: str) -> None:
        header, rows = ladder_rows(specs)
        self.show(ladder_table(specs, device), header, rows)

    @contextlib.contextmanager
    def progress(self, total: int, description: str):
        """Yields advance(label); draws a bar on stderr unless quiet."""
        if self.quiet or total <= 1:
            yield lambda label: None
            return
        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TextColumn("{task.fields[label]}"), console=self.err,
                       transient=True)
        with bar:
            task = bar.add_task(description, total=total, label="")
            yield lambda label: bar.update(task, advance=1, label=label)
