"""``gemmbench show --summary``: a fleet's records, one line per GPU.

The figures and the outlier rule are ``records.fleet``'s; this module makes
the rows (a table per shape; markdown and CSV through the Reporter, as every
view) and the JSON. Every string from a record reaches the output through
the one text path (``text.printable``, by the Reporter and the tables).
"""

from __future__ import annotations

import statistics
from collections import Counter

import click

from ..errors import UserError
from ..precision import PRECISIONS
from ..records.fleet import LIBRARY_CLASSES, OUTLIER_Z, FleetSummary, GpuLine, rule_text, summarize
from ..records.results import KernelResult, strict_json
from ..records.store import Loaded
from .format import BASELINE_NAME, DOUBTFUL_NOTE, doubtful, format_number, format_rate, plain_number
from .report import Reporter
from .rows import Column, text_column
from .runrows import flag_legend
from .table import fit_table, left_out_line

LIBRARY = BASELINE_NAME["gpu"]


def _library_column(name: str) -> Column:
    label = PRECISIONS[name].label
    return Column(f"{LIBRARY} {label}", f"{LIBRARY[:2]} {label}", 7)


def _best_column(name: str) -> Column:
    label = PRECISIONS[name].label
    return Column(f"best {label} (% {LIBRARY})", f"best {label}", 7)


def _classes(summary: FleetSummary) -> tuple[list[str], list[str]]:
    """The library classes and the rung classes some GPU has a timed row of."""
    lines = summary.lines
    return ([c for c in LIBRARY_CLASSES if any(c in line.library for line in lines)],
            [c for c in PRECISIONS if any(c in line.best for line in lines)])


def summary_columns(summary: FleetSummary) -> list[Column]:
    """The columns of a table; a table holds one model at one shape (its title names them)."""
    libraries, rungs = _classes(summary)
    return ([text_column("host", "host", 10), Column("GPU", "GPU", 9), text_column("PCI", "PCI", 3),
             text_column("UUID", "UUID", 2), Column("driver", "driver", 4, "left")]
            + [_library_column(c) for c in libraries] + [_best_column(c) for c in rungs]
            + [Column("SM MHz", "MHz", 5), Column("throttled", "thr", 6), Column("/ median", "/med", 9),
               text_column("outlier", "outlier", 10, limit=40)])  # listed whole under the table


def _figure(row: KernelResult | None, percent: float | None = None, base: KernelResult | None = None) -> str:
    """GFLOP/s (and % of its library row), marked not for quoting when a row behind it is flagged."""
    if row is None:
        return "-"
    text = format_rate(row.gflops) + (f" ({format_rate(percent)}%)" if percent is not None else "")
    return doubtful(text, bool(row.flags) or bool(base is not None and base.flags))


def _line_cells(line: GpuLine, libraries: list[str], rungs: list[str]) -> list[str]:
    g = line.gpu
    share = line.throttled_share
    cells = [g.host or "?", "?" if g.index is None else str(g.index), g.pci_bus_id or "-", g.uuid or "-",
             g.driver or "-"]
    cells += [_figure(line.library.get(c)) for c in libraries]
    cells += [_figure(line.best.get(c), line.percent_of_library(c),
                      line.library.get(PRECISIONS[c].library)) for c in rungs]
    return cells + [format_number(line.clock, 0), "-" if share is None else f"{100 * share:.0f}%",
                    "-" if line.ratio is None else f"{line.ratio:.3f}", "; ".join(line.reasons) or "-"]


def _header_lines(summary: FleetSummary) -> list[str]:
    models = Counter(g.model for g in summary.gpus)
    lines = [f"{summary.records} record{'s' * (summary.records != 1)}: {len(summary.gpus)} GPUs on "
             f"{summary.hosts} host{'s' * (summary.hosts != 1)} ("
             + ", ".join(f"{n} {model}" for model, n in models.most_common()) + ")"]
    merged = sum(len(g.paths) > 1 for g in summary.gpus)
    if merged:
        lines.append(f"{merged} GPU{'s' * (merged != 1)} in several records: merged, the newest record's row wins "
                     f"for each kernel, precision and shape")
    if len(summary.shapes) > 1:
        lines.append(f"{len(summary.shapes)} shapes ({', '.join(map(str, summary.shapes))}): GPUs are compared "
                     f"within their model and shape")
    for group in summary.groups:
        if group.shape is None:
            continue
        bases = [line.library["fp32"].gflops for line in group.lines if "fp32" in line.library]
        median_base = f", median {LIBRARY} FP32 {format_rate(statistics.median(bases))} GFLOP/s" if bases else ""
        reach = OUTLIER_Z * group.sigma if group.judged else 0
        rule = (f"; ratio MAD {100 * group.mad:.2f}%, outside {group.median_ratio - reach:.3f}.."
                f"{group.median_ratio + reach:.3f} is an outlier" if group.judged else "")
        lines.append(f"{group.model} at {group.shape}: {len(group.lines)} GPUs{median_base}{rule}")
    return lines


def _footer_lines(summary: FleetSummary, flagged: list[KernelResult]) -> list[str]:
    lines = [f"/ median: the GPU's GFLOP/s over the median of its model's GPUs, row by row (kernel, precision, "
             f"shape), geometric mean; best: the fastest rung of the class and its % of {LIBRARY} of its precision; "
             f"SM MHz: median over its rows of the clock the SMs ran at; throttled: share of its timed rows "
             f"flagged throttled.", f"Rule: {rule_text()}."]
    outliers = summary.outliers
    lines.append(f"{len(outliers)} outlier{'s' * (len(outliers) != 1)} of {len(summary.lines)} GPU lines"
                 + (":" if outliers else "."))
    for line in outliers:
        g = line.gpu
        where = f" at {line.shape}" if len(summary.shapes) > 1 and line.shape else ""
        lines.append(f"  {g.host or '?'} GPU {'?' if g.index is None else g.index} ({g.uuid or g.pci_bus_id or '?'}, "
                     f"{g.model}){where}: {'; '.join(line.reasons)}")
    lines += summary.notes()
    return lines + flag_legend(flagged) + [DOUBTFUL_NOTE] * bool(flagged)


def _csv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return plain_number(value)
    if isinstance(value, list):
        return "; ".join(map(str, value))
    return str(value)


def summary_csv(summary: FleetSummary) -> tuple[list[str], list[list[str]]]:
    """One row per GPU line, every precision class's columns whatever the
    records hold (the same columns for every fleet); units in the names."""
    dicts = [line.to_dict() for line in summary.lines]
    header = list(dicts[0]) if dicts else []
    return header, [[_csv_cell(d[k]) for k in header] for d in dicts]


def show_summary(reporter: Reporter, summary: FleetSummary) -> None:
    """A table per model and shape; markdown has one table, with the model
    (and the shape, when there are several) in a column."""
    columns = summary_columns(summary)
    libraries, rungs = _classes(summary)
    several = len(summary.shapes) > 1
    tables, rows, dropped = [], [], []
    for group in summary.groups:
        cells = [_line_cells(line, libraries, rungs) for line in group.lines]
        styles = ["red" if line.outlier else None for line in group.lines]
        title = f"gemmbench show --summary · {group.model} · {group.shape or 'no rows'} · GFLOP/s"
        table, dropped_here = fit_table(reporter.out, title, columns, cells, styles)
        tables.append(table)
        dropped += [c for c in dropped_here if c not in dropped]
        rows += [[str(group.shape or "-")] * several + [group.model, *row] for row in cells]
    header = ["shape"] * several + ["model"] + [c.name for c in columns]
    flagged = [r for line in summary.lines for r in [*line.library.values(), *line.best.values()] if r.flags]
    reporter.show(tables, header, rows, lines_before=_header_lines(summary),
                  lines_after=_footer_lines(summary, flagged) + left_out_line(dropped),
                  csv_view=summary_csv(summary))


def show_fleet(loaded: list[Loaded], fmt: str, as_json: bool, fail_on_outlier: bool) -> int:
    """``show --summary``: the summary in ``fmt`` (or JSON); exit 1 when
    ``fail_on_outlier`` and a GPU is flagged, else 0."""
    if as_json and fmt != "table":
        raise UserError(f"--json prints JSON alone; it conflicts with --format {fmt}")
    summary = summarize(loaded)
    if not summary.lines:
        raise UserError(f"no GPU rows in the {len(loaded)} record{'s' * (len(loaded) != 1)} given: "
                        f"--summary compares GPUs")
    if as_json:
        click.echo(strict_json(summary.to_dict(), indent=1))
    else:
        show_summary(Reporter(fmt), summary)
    return 1 if fail_on_outlier and summary.outliers else 0
