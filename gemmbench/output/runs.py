"""Views of saved and multi-GPU runs: a record as its command printed it,
records side by side, a diff, and the per-GPU summary of ``compare --gpus``.

Rows come from ``runrows`` (built once, flags marked); this module renders
them through ``table`` (rich, fitted to the console) and the Reporter
(markdown, CSV). ``show_record`` is what a command prints at its end *and*
what ``gemmbench show`` prints, so a saved record renders exactly as its run
did, from the record alone.
"""

from __future__ import annotations

from rich.console import Console

from ..records.diff import Diff
from ..records.results import RunRecord
from .format import DOUBTFUL_NOTE
from .report import Reporter
from .rows import Column
from .runrows import (GPU_SUMMARY_COLUMNS, diff_columns, diff_csv, diff_footer, diff_rows, distinct_labels,
                      flag_legend, gpu_indices, gpu_summary_csv, gpu_summary_rows, side_by_side_columns,
                      side_by_side_csv, side_by_side_rows, split_by_gpu)
from .table import fit_table, left_out_line, split_tables

_VERDICT_STYLE = {"slower": "red", "failed": "red", "faster": "green", "noisy": "yellow"}


def show_record(reporter: Reporter, record: RunRecord) -> None:
    """The tables a command prints, by the record's command."""
    opts = record.options
    if record.command == "sizes":
        reporter.show_sweep(record)
    elif record.command == "tune":
        reporter.show_tuning(record, opts.get("top") or 10, opts.get("not_compiled") or 0)
    elif gpu_indices(record) and record.command == "compare":
        for _, sub in split_by_gpu(record):
            reporter.show_results(sub)
        show_gpu_summary(reporter, record)
    else:
        reporter.show_results(record)


def show_gpu_summary(reporter: Reporter, record: RunRecord) -> None:
    header, rows = gpu_summary_rows(record)
    notes = ["SM MHz: median over kernels of the clock during their samples; throttle: any reason seen then; "
             "temperature and power: read after the GPU's last kernel (NVML). Ratios are over the median of "
             "this host's GPUs: a slow or throttled GPU reads below 1."]
    flagged = [r for r in record.results if r.flags]
    notes += flag_legend(flagged) + [DOUBTFUL_NOTE] * bool(flagged)
    table, dropped = fit_table(reporter.out, "gemmbench compare · per GPU", GPU_SUMMARY_COLUMNS, rows)
    reporter.show([table], header, rows, lines_after=notes + left_out_line(dropped), csv_view=gpu_summary_csv(record))


def _uniform_shape(columns: list[Column], rows: list[list[str]], title: str):
    """Without the shape (or size) column when every row has the same one (the title says it)."""
    names = [c.name for c in columns]
    if len(names) < 3 or names[2] not in ("shape", "size") or not rows:
        return columns, rows, title
    i = 2
    shapes = {row[i] for row in rows}
    if len(shapes) != 1:
        return columns, rows, title
    return (columns[:i] + columns[i + 1:], [row[:i] + row[i + 1:] for row in rows],
            f"{title} · {names[i]} {shapes.pop()}")


def side_by_side_tables(records: list[RunRecord], labels: list[str], console: Console | None = None):
    header, rows = side_by_side_rows(records, labels)
    columns, cells, title = _uniform_shape(side_by_side_columns(header), rows,
                                           "gemmbench show · GFLOP/s (% of each record's library baseline)")
    fixed = len(columns) - 2 * len(labels)
    groups = [[fixed + 2 * n, fixed + 2 * n + 1] for n in range(len(labels))]
    return split_tables(console, title, columns, cells, fixed=list(range(fixed)), groups=groups,
                        optional=tuple(range(1, fixed)))


def show_side_by_side(reporter: Reporter, records: list[RunRecord], labels: list[str], paths=None) -> None:
    """Several records side by side; ``labels`` name them (made distinct when
    two are equal: see runrows.distinct_labels), ``paths`` (optional) too."""
    labels = distinct_labels(records, labels, paths)
    header, rows = side_by_side_rows(records, labels)
    before = [f"[{i + 1}] {label}: {r.command}, {r.device.upper()}" + (f", {paths[i]}" if paths else "")
              for i, (label, r) in enumerate(zip(labels, records))]
    flagged = [r for record in records for r in record.results if r.flags]
    after = flag_legend(flagged) + [DOUBTFUL_NOTE] * bool(flagged)
    reporter.show(side_by_side_tables(records, labels, reporter.out), header, rows, lines_before=before,
                  lines_after=after, csv_view=side_by_side_csv(records, labels))


def diff_table(diff: Diff, console: Console | None = None):
    header, rows = diff_rows(diff)
    columns, cells, title = _uniform_shape(diff_columns(diff), rows, "gemmbench diff · new GFLOP/s against old")
    styles = [_VERDICT_STYLE.get(r.verdict) for r in diff.rows]
    return fit_table(console, title, columns, cells, styles)


def show_diff(reporter: Reporter, diff: Diff, old_label: str, new_label: str) -> None:
    header, rows = diff_rows(diff)
    before = [f"old: {old_label}", f"new: {new_label}"]
    before += [f"differs: {d}" for d in diff.differences] or ["same GPU, clock, driver and gemmbench version"]
    table, dropped = diff_table(diff, reporter.out)
    reporter.show([table], header, rows, lines_before=before, lines_after=diff_footer(diff) + left_out_line(dropped),
                  csv_view=diff_csv(diff))

