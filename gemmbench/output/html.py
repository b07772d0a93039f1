"""``gemmbench show --html``: saved records as one self-contained HTML file
that a person can send and open anywhere, without a network.

One file, nothing outside it: the CSS inline, the charts inline SVG (``svg``,
``charts``), no script, no font, no image, no URL; a Content-Security-Policy
that allows nothing else, so even a mistake could not load or run anything.

The tables are the terminal's: the views in ``runs`` (``show_record``,
``show_side_by_side``, ``show_diff``) render through a Reporter, and the
``_Sections`` reporter here keeps the rows, header lines and notes each view
hands to ``Reporter.show`` instead of printing them. So the report's rows,
columns and flags are those of ``gemmbench show``, marks of flagged figures
(``(97.1)?``) and their footnote included.

Every string from a record or a profile goes through ``svg.escape``
(printable, then HTML-escaped): a kernel named ``<script>`` is text, an
escape code is written as ``\\x1b``.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from .. import __version__
from ..fsutil import write_new
from ..inspect.profile import summary
from ..records.diff import Diff
from ..records.results import RunRecord
from ..records.store import Loaded
from . import charts
from .format import format_number
from .report import Reporter
from .runrows import gpu_indices, split_by_gpu
from .runs import show_diff, show_record, show_side_by_side
from .svg import escape

# nothing may load or run: inline styles only (the charts are inline SVG, part of the page)
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
COLLAPSED_NOTES = 8  # more "only in old/new" lines than this fold away (a <details>, no script)

STYLE = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: #222; background: #fff; margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 28px 40px; }
h1 { font-size: 24px; margin: 6px 0 2px; }
h2 { font-size: 18px; margin: 30px 0 8px; padding-top: 10px; border-top: 2px solid #e6e6e6; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.lead { color: #555; margin: 0 0 8px; }
p.before { margin: 2px 0; color: #333; }
ul.notes { color: #555; font-size: 13px; padding-left: 18px; margin: 6px 0 0; }
ul.notes li { margin: 2px 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; margin: 6px 0; }
th, td { padding: 3px 9px; border-bottom: 1px solid #ececec; vertical-align: top; }
th { text-align: left; background: #f4f5f7; border-bottom: 2px solid #d9dbe0; white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
td.doubtful { color: #8a8a8a; font-style: italic; text-decoration: underline dotted #b0b0b0; }
td.fail, td.slower, td.failed { color: #b3261e; font-weight: 600; }
td.skip { color: #8a8a8a; }
td.faster { color: #1e7b34; font-weight: 600; }
td.noisy { color: #9a6700; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr) max-content minmax(0, 1fr);
           gap: 0 14px; margin: 6px 0; font-size: 13px; }
dl.facts dt { color: #555; font-weight: 600; white-space: nowrap; padding: 3px 0; border-bottom: 1px solid #ececec; }
dl.facts dd { margin: 0; padding: 3px 0; border-bottom: 1px solid #ececec; overflow-wrap: anywhere; }
@media (max-width: 800px) { dl.facts { grid-template-columns: max-content minmax(0, 1fr); } }
figure { margin: 12px 0 4px; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: #555; font-size: 13px; margin-top: 2px; }
details > summary { cursor: pointer; color: #444; margin: 6px 0; }
footer { color: #777; font-size: 12px; margin-top: 36px; border-top: 1px solid #e6e6e6; padding-top: 8px; }
@media print { main { max-width: none; padding: 0; } h2 { break-after: avoid; } figure, tr { break-inside: avoid; } }
"""

_DOUBTFUL = re.compile(r"\)\?")  # the mark of a flagged figure: (51,234.5)?
_NUMERIC = re.compile(r"[-+(]*[0-9]")
_NO_FIGURE = re.compile(r"(FAIL|SKIP)\b")


# --------------------------------------------------------------------------
# the terminal's views, kept as data
# --------------------------------------------------------------------------

@dataclass
class Section:
    """One view as the terminal prints it: a title, the lines above the table,
    the table, the notes below."""

    title: str
    header: list[str]
    rows: list[list[str]]
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)


class _Sections(Reporter):
    """A Reporter that keeps each view instead of printing it. Its console is
    wide, so the rich tables ``runs`` builds (and this drops) leave no column
    out and no "left out for width" note is written."""

    def __init__(self):
        super().__init__("table", quiet=True)
        self.out = Console(file=io.StringIO(), width=100_000, markup=False, highlight=False, emoji=False)
        self.sections: list[Section] = []

    def show(self, tables, header, rows, lines_before=(), lines_after=(), csv_view=None):
        title = str(tables[0].title) if tables and tables[0].title is not None else ""
        self.sections.append(Section(title, list(header), [list(row) for row in rows], list(lines_before),
                                     list(lines_after)))


def record_sections(record: RunRecord) -> list[Section]:
    sink = _Sections()
    show_record(sink, record)
    return sink.sections


def side_by_side_sections(loaded: list[Loaded]) -> list[Section]:
    sink = _Sections()
    show_side_by_side(sink, [item.record for item in loaded], [item.label for item in loaded],
                      [item.path for item in loaded])
    return sink.sections


def diff_sections(diff: Diff, old: Loaded, new: Loaded) -> list[Section]:
    sink = _Sections()
    show_diff(sink, diff, f"{old.path} ({old.label})", f"{new.path} ({new.label})")
    return sink.sections


# --------------------------------------------------------------------------
# markup
# --------------------------------------------------------------------------

def _cell_class(header: str, text: str, numeric: bool) -> str:
    classes = ["num"] * numeric
    if _DOUBTFUL.search(text):
        classes.append("doubtful")
    first = text.split(" ", 1)[0].lower()
    if first in ("fail", "skip") or (header == "verdict" and first in ("slower", "failed", "faster", "noisy")):
        classes.append(first)
    return " ".join(classes)


def table_html(header: list[str], rows: list[list[str]]) -> str:
    """A table of strings; a column of numbers is right-aligned, a flagged
    figure greyed with a tooltip (its text keeps the ``(...)?`` mark)."""
    def figures(i: int) -> list[str]:  # a column's cells that hold a value (not empty, not FAIL or SKIP)
        return [row[i] for row in rows if i < len(row) and row[i] not in ("", "-") and not _NO_FIGURE.match(row[i])]
    numeric = [i > 0 and bool(figures(i)) and all(_NUMERIC.match(cell) for cell in figures(i))
               for i in range(len(header))]
    heads = "".join(f"<th class=\"num\">{escape(h)}</th>" if numeric[i] else f"<th>{escape(h)}</th>"
                    for i, h in enumerate(header))
    out = ["<div class=\"scroll\"><table>", f"<thead><tr>{heads}</tr></thead>", "<tbody>"]
    for row in rows:
        cells = []
        for i, text in enumerate(row):
            css = _cell_class(header[i] if i < len(header) else "", text, i < len(numeric) and numeric[i])
            tip = ' title="flagged: not for quoting"' if "doubtful" in css else ""
            cells.append(f"<td{f' class={chr(34)}{css}{chr(34)}' if css else ''}{tip}>{escape(text)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


# notes that come many at a time, folded (a <details>, no script) when there are more than COLLAPSED_NOTES
_FOLDED_NOTES = ((re.compile(r"only in (old|new): "), "rows in one record only"),
                 (re.compile(r"rung \d+ at \S+: (tuned|chosen)"), "parameters chosen for a shape or tuned"))


def _notes_html(lines: list[str]) -> str:
    """Notes under a table; long runs of one kind (a diff's rows in one record
    only, a sweep's parameters per shape) fold away."""
    out = []
    for pattern, what in _FOLDED_NOTES:
        many = [line for line in lines if pattern.match(line)]
        if len(many) > COLLAPSED_NOTES:
            out.append(f"<details><summary>{len(many)} {what}</summary><ul class=\"notes\">"
                       + "".join(f"<li>{escape(line)}</li>" for line in many) + "</ul></details>")
            lines = [line for line in lines if not pattern.match(line)]
    if lines:
        out.insert(0, "<ul class=\"notes\">" + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>")
    return "\n".join(out)


def section_html(section: Section, heading: str = "h3", folded: bool = False) -> str:
    body = "\n".join([*(f"<p class=\"before\">{escape(line)}</p>" for line in section.before),
                      table_html(section.header, section.rows), _notes_html(section.after)])
    title = escape(section.title)
    if folded:
        return f"<details><summary>{title} ({len(section.rows)} rows)</summary>\n{body}\n</details>"
    return f"<{heading}>{title}</{heading}>\n{body}"


def figure_html(chart_svg: str, caption: str = "") -> str:
    return f"<figure>{chart_svg}" + (f"<figcaption>{escape(caption)}</figcaption>" if caption else "") + "</figure>"


def facts_html(facts: list[tuple[str, str]]) -> str:
    """Name and value pairs, two pairs a line where the page is wide enough."""
    return "<dl class=\"facts\">" + "".join(
        f"<dt>{escape(name)}</dt><dd>{escape(value)}</dd>" for name, value in facts) + "</dl>"


# --------------------------------------------------------------------------
# the machine and the software
# --------------------------------------------------------------------------

def _bytes(n) -> str:
    if not isinstance(n, (int, float)) or isinstance(n, bool):
        return "?"
    return f"{n / 2 ** 30:.1f} GiB" if n >= 2 ** 30 else f"{n / 2 ** 20:.0f} MiB"


def _gpu_facts(env: dict, prefix: str = "") -> list[tuple[str, str]]:
    gpu = env.get("gpu") or {}
    if not gpu:
        return [(f"{prefix}error", str(env["error"]))] if env.get("error") else []
    cc = str(gpu.get("compute_capability", "?"))
    facts = [(f"{prefix}GPU", f"{gpu.get('name', '?')} (sm_{cc.replace('.', '')}, {gpu.get('sm_count', '?')} SMs, "
                              f"memory {_bytes(gpu.get('memory_bytes'))}, L2 {_bytes(gpu.get('l2_bytes'))})"),
             (f"{prefix}FP32 peak", f"{format_number(gpu.get('peak_fp32_tflops'))} TFLOP/s at "
                                    f"{format_number(gpu.get('max_sm_clock_mhz'), 0)} MHz")]
    ids = [f"{k} {gpu[key]}" for k, key in (("index", "index"), ("UUID", "uuid"), ("PCI", "pci_bus_id"))
           if gpu.get(key) is not None]
    if ids:
        facts.append((f"{prefix}identity", ", ".join(ids)))
    if env.get("sm_clock_mhz") is not None:
        facts.append((f"{prefix}SM clock at start", f"{format_number(env['sm_clock_mhz'], 0)} MHz"))
    facts.append((f"{prefix}throttle at start", ", ".join(map(str, env.get("throttle") or [])) or "none"))
    facts += [(f"{prefix}{name}", str(value)) for name, value in
              (("driver", gpu.get("driver_version")), ("CUDA (driver API)", gpu.get("cuda_driver_api")),
               ("CUDA toolkit", gpu.get("cuda_toolkit")), ("nvcc", env.get("nvcc")), ("cuBLAS", env.get("cublas")))
              if value is not None]
    return facts


def _cpu_facts(cpu: dict) -> list[tuple[str, str]]:
    facts = [("CPU", f"{cpu.get('cpu', '?')} ({cpu.get('cores', '?')} cores, {cpu.get('threads', '?')} threads)")]
    if cpu.get("simd") or cpu.get("compiler"):
        facts.append(("C rungs built", f"for {cpu.get('simd', '?')} by {cpu.get('compiler') or 'no compiler'}"))
    if cpu.get("numpy"):
        facts.append(("numpy", str(cpu["numpy"])))
    blas = [b for b in cpu.get("blas") or [] if isinstance(b, dict)]
    facts.append(("BLAS", "; ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')}, "
                                    f"{b.get('num_threads', '?')} threads)" for b in blas) or "none found"))
    return facts


RECORD_FACTS = ("record", "command", "created", "complete")  # a record's own, shown for each record


def machine_facts(item: Loaded) -> list[tuple[str, str]]:
    """What ran where, as far as the record says: the GPU(s), versions, CPU
    and BLAS, the gemmbench that wrote it, and how it was timed."""
    record, env = item.record, item.record.environment
    facts = [("record", str(item.path)), ("command", f"{record.command} ({record.device.upper()} ladder)"),
             ("created", record.created),
             ("complete", "yes" if item.complete else f"no: {record.incomplete_reason or 'stopped early'}")]
    if gpu_indices(record):
        for index in gpu_indices(record):
            facts += _gpu_facts(env["gpus"][str(index)], f"GPU {index}: ")
    else:
        facts += _gpu_facts(env)
    if env.get("cpu"):
        facts += _cpu_facts(env["cpu"])
    facts.append(("gemmbench", f"{item.version or 'version not recorded'}"
                               + (f", commit {item.git_commit}" if item.git_commit else ", commit not recorded")))
    opts = record.options
    timing = [f"seed {opts.get('seed', 0)}", "cold L2 (flushed before each call)" if opts.get("flush_l2")
              else "warm caches"]
    timing += [f"{name} {opts[key]}" for name, key in (("warm-up", "warmup"), ("min samples", "min_samples"),
                                                       ("max samples", "max_samples"), ("budget", "budget"))
               if opts.get(key) is not None]
    facts.append(("timing", ", ".join(timing)))
    return facts


# --------------------------------------------------------------------------
# the document
# --------------------------------------------------------------------------

def _record_charts(record: RunRecord) -> list[str]:
    """A sweep's curve; the rungs of each precision against their library row."""
    if record.command == "sizes":
        where = (record.environment.get("gpu") or {}).get("name") or record.device.upper()
        return [figure_html(charts.sweep_chart(record, f"GFLOP/s against size · {where}"),
                            "Each point is a median of the record's samples; hover a point for its figure "
                            "(as the table writes it).")]
    if record.command == "tune":
        return []
    parts = split_by_gpu(record) if gpu_indices(record) else [(None, record)]
    return [figure_html(chart) for index, part in parts for chart in charts.baseline_charts(part, index)]


def _metric_text(value) -> str:
    """A CSV cell as ncu wrote it: 0.0 back to 0 (the reader parses every number as a float)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _profile_html(profile: charts.Profile) -> str:
    roof, main, points = charts.roofline_parts(profile)
    where = [f"kernel {main.name}"] + [f"{name} {_metric_text(main.metrics.get(key, '?'))}" for name, key in
                                       (("grid", "Grid Size"), ("block", "Block Size"), ("device", "Device"))]
    hz = main.get("sm__cycles_elapsed.avg.per_second")
    if hz:
        where.append(f"SM clock {hz / 1e6:.0f} MHz")
    parts = [f"<h3>{escape(profile.path.name)}</h3>",
             f"<p class=\"lead\">{escape(', '.join(where))}. The CSV names no rung and no shape (the file's "
             f"name is what tells them); the figures are ncu's, at the clocks the kernel ran at.</p>"]
    if roof is None or not points:
        parts.append("<ul class=\"notes\"><li>No roofline: the profile lacks the peak metrics or the FLOP and "
                     "DRAM counters a roofline needs (ncu --set full has them).</li></ul>")
    else:
        parts.append(figure_html(charts.roofline_chart(profile, roof, points)))
        rows = [[p.label, f"{p.flops_per_second / 1e12:.2f}", f"{p.intensity:.0f}",
                 f"{100 * p.share_of_roof(roof):.0f}%", "tensor" if p.tensor else "FP32"] for p in points]
        parts.append(table_html(["kernel", "TFLOP/s executed", "FLOP per DRAM byte", "of its roof", "roof"], rows))
    measured = [[label, f"{value:,.4g}{(' ' + unit) if unit else ''}"] for label, unit, value in summary(main)]
    if measured:
        parts.append(f"<details><summary>{escape(main.name)}: what ncu measured</summary>"
                     + table_html(["metric", "value"], measured) + "</details>")
    return "\n".join(parts)


def report_html(loaded: list[Loaded], diffs: list[tuple[Loaded, Loaded, Diff]] = (),
                profiles: list[charts.Profile] = ()) -> str:
    """The whole report: ``loaded`` records (validated), each record's diff
    against a baseline (old, new, diff), and profiles for rooflines."""
    names = ", ".join(item.label for item in loaded)
    body = ["<h1>gemmbench report</h1>",
            f"<p class=\"lead\">{escape(names)} · {escape(', '.join(str(i.path) for i in loaded))}</p>",
            "<h2>Machine and software</h2>"]
    first = machine_facts(loaded[0])
    for n, item in enumerate(loaded, 1):
        if len(loaded) > 1:
            body.append(f"<h3>[{n}] {escape(item.label)}</h3>")
        facts = machine_facts(item)
        if n > 1:  # what [1] said already is not said again
            facts = [f for f in facts if f[0] in RECORD_FACTS or f not in first]
            body.append(facts_html(facts) + "<p class=\"lead\">Otherwise as [1].</p>")
        else:
            body.append(facts_html(facts))
    if len(loaded) > 1:
        body.append("<h2>Side by side</h2>")
        body += [section_html(s, folded=True) for s in side_by_side_sections(loaded)]
    for n, item in enumerate(loaded, 1):
        record = item.record
        heading = f"[{n}] " * (len(loaded) > 1) + f"{record.command} · {item.label}"
        body.append(f"<h2>{escape(heading)}</h2>")
        if not item.complete:
            body.append("<p class=\"before\">The run did not finish (complete=false): showing what it saved.</p>")
        body += _record_charts(record)  # the picture first, then the numbers behind it
        body += [section_html(s) for s in record_sections(record)]
    for old, new, diff in diffs:
        body.append(f"<h2>{escape(f'{new.path.name} against the baseline {old.path.name}')}</h2>")
        body += [section_html(s) for s in diff_sections(diff, old, new)]
    if profiles:
        body.append("<h2>Roofline</h2>")
        body += [_profile_html(p) for p in profiles]
    body.append(f"<footer>Written by gemmbench {escape(__version__)} (show --html) from the saved records: every "
                f"figure is the record's own. A figure written like (40.0 ms)? belongs to a flagged row: not for "
                f"quoting. This file loads nothing and runs no script.</footer>")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{escape('gemmbench report · ' + names)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(body) + "\n</main>\n</body>\n</html>\n")


def write_report(path: Path, text: str, overwrite: bool = False) -> None:
    """Through gemmbench's one writer: a new regular file, or with ``overwrite`` an existing one replaced."""
    write_new(path, text.encode("utf-8"), overwrite, "--html")
