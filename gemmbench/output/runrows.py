"""The rows of the views of saved and multi-GPU runs, built once as plain
strings: records side by side, a diff, and the per-GPU summary of
``compare --gpus``; with their CSV forms. Rendering is ``runs``'s job.

A figure of a flagged row is marked ``(figure)?`` here, as in ``rows``, with
the letters of its flags where the view has no flags column.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from ..records.diff import Diff, row_key
from ..records.results import KernelResult, RunRecord, percent_of_baseline
from .format import (BASELINE_NAME, FLAG_MEANING, doubtful, format_number, format_params,
                     kernel_label, plain_number)
from .rows import Column, text_column, words_column


# --------------------------------------------------------------------------
# multi-GPU records
# --------------------------------------------------------------------------

def gpu_indices(record: RunRecord) -> list[int]:
    """The GPUs a multi-GPU record's rows ran on (empty for a one-GPU record)."""
    return sorted(int(i) for i in record.environment.get("gpus") or {})


def split_by_gpu(record: RunRecord) -> list[tuple[int, RunRecord]]:
    """One sub-record per GPU of a multi-GPU record: that GPU's rows (and the
    CPU's) with that GPU's environment, so each renders as a one-GPU run."""
    env = {k: v for k, v in record.environment.items() if k != "gpus"}
    subs = []
    for index in gpu_indices(record):
        mine = record.environment["gpus"][str(index)]
        rows = [r for r in record.results if r.gpu == index or r.gpu is None]
        if any(r.gpu == index for r in rows):
            subs.append((index, replace(record, environment={**env, **mine}, results=rows)))
    return subs


@dataclass
class GpuSummary:
    """One GPU's line of ``compare --gpus``: its cuBLAS and best rung, the
    clock its kernels ran at, its state after the run, and both rates over the
    host's median (below 1: slower than the host's other GPUs)."""

    index: int
    gpu: dict
    after: dict
    error: str | None
    base: KernelResult | None
    best: KernelResult | None
    clock: float | None
    throttle: list[str]
    base_ratio: float | None
    best_ratio: float | None


def gpu_summaries(record: RunRecord) -> list[GpuSummary]:
    per_gpu = {}
    for index in gpu_indices(record):
        rows = [r for r in record.results if r.gpu == index and r.status == "pass" and r.gflops]
        base = next((r for r in rows if r.kernel_id == 0 and r.precision == "fp32"), None)
        best = max((r for r in rows if r.kernel_id != 0), key=lambda r: r.gflops, default=None)
        per_gpu[index] = (base, best)
    base_median = _median(b.gflops for b, _ in per_gpu.values() if b)
    best_median = _median(b.gflops for _, b in per_gpu.values() if b)

    def ratio(result, median):
        return result.gflops / median if result is not None and median else None
    out = []
    for index, (base, best) in per_gpu.items():
        env = record.environment["gpus"][str(index)]
        after = env.get("after") or {}
        mine = [r for r in record.results if r.gpu == index]
        throttle = sorted({str(t) for r in mine for t in r.notes.get("throttle") or []}
                          | {str(t) for t in after.get("throttle") or []})
        out.append(GpuSummary(index, env.get("gpu") or {}, after, env.get("error"), base, best,
                              run_clock(mine) or after.get("sm_clock_mhz"), throttle,
                              ratio(base, base_median), ratio(best, best_median)))
    return out


def _marked(result: KernelResult | None) -> str:
    """A GFLOP/s figure with its flags' letters: ``(51,234.5)? D`` when flagged."""
    if result is None:
        return "-"
    letters = _letters(result)
    return doubtful(format_number(result.gflops), bool(result.flags)) + (f" {letters}" if letters else "")


GPU_SUMMARY_COLUMNS = [Column("GPU", "GPU", 10), text_column("name", "name", 6), text_column("PCI", "PCI", 2),
                       Column(f"{BASELINE_NAME['gpu']} GFLOP/s", BASELINE_NAME["gpu"], 9),
                       text_column("best rung", "best", 7), Column("GFLOP/s", "GFLOP/s", 9),
                       Column("SM MHz", "MHz", 5), Column("temp C", "C", 3), Column("power W", "W", 3),
                       words_column("throttle", "throttle", 4),
                       Column(f"{BASELINE_NAME['gpu']} / median", "base/med", 8),
                       Column("best / median", "best/med", 8)]


def gpu_summary_rows(record: RunRecord) -> tuple[list[str], list[list[str]]]:
    header = [c.name for c in GPU_SUMMARY_COLUMNS]
    table = []
    for g in gpu_summaries(record):
        name, pci = str(g.gpu.get("name") or "?"), str(g.gpu.get("pci_bus_id") or "?")
        if g.error:
            table.append([str(g.index), name, pci, "-", f"worker failed: {g.error}"] + [""] * (len(header) - 5))
            continue
        table.append([
            str(g.index), name, pci, _marked(g.base),
            f"{g.best.kernel_id} {kernel_label(g.best)}" if g.best else "-", _marked(g.best),
            format_number(g.clock, 0), str(g.after.get("temperature_c", "-")),
            format_number(g.after.get("power_w"), 0), ", ".join(g.throttle) or "none",
            "-" if g.base_ratio is None else doubtful(f"{g.base_ratio:.3f}", bool(g.base and g.base.flags)),
            "-" if g.best_ratio is None else doubtful(f"{g.best_ratio:.3f}", bool(g.best and g.best.flags))])
    return header, table


def gpu_summary_csv(record: RunRecord) -> tuple[list[str], list[list[str]]]:
    """The per-GPU summary as plain numbers, one value per column."""
    header = ["gpu", "name", "pci_bus_id", "cublas_gflops", "best_kernel_id", "best_gflops", "sm_clock_mhz",
              "temperature_c", "power_w", "throttle", "cublas_ratio", "best_ratio", "cublas_flags", "best_flags",
              "error"]
    rows = [[str(g.index), str(g.gpu.get("name") or ""), str(g.gpu.get("pci_bus_id") or ""),
             plain_number(g.base.gflops if g.base else None), plain_number(g.best.kernel_id if g.best else None),
             plain_number(g.best.gflops if g.best else None), plain_number(g.clock),
             plain_number(_number(g.after.get("temperature_c"))), plain_number(_number(g.after.get("power_w"))),
             " ".join(g.throttle), plain_number(g.base_ratio), plain_number(g.best_ratio),
             ";".join(g.base.flags) if g.base else "", ";".join(g.best.flags) if g.best else "", str(g.error or "")]
            for g in gpu_summaries(record)]
    return header, rows


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def run_clock(results: list[KernelResult]) -> float | None:
    """The median SM clock read right after each kernel's samples: the clock
    the kernels ran at (a reading before the run may see an idle GPU)."""
    return _median(r.notes["sm_clock_mhz"] for r in results
                   if r.device == "gpu" and isinstance(r.notes.get("sm_clock_mhz"), (int, float)))


def _median(values) -> float | None:
    values = list(values)
    return statistics.median(values) if values else None


# --------------------------------------------------------------------------
# several records side by side
# --------------------------------------------------------------------------

def shape_column(shapes) -> tuple[str, object]:
    """How views of several shapes name them: "size" and M when every shape
    is square (as the sizes table does), else "shape" and MxNxK."""
    if all(s.M == s.N == s.K for s in shapes):
        return "size", lambda s: str(s.M)
    return "shape", str


def distinct_labels(records: list[RunRecord], labels: list[str], paths=None) -> list[str]:
    """``labels`` made distinct: where two are equal (records of the same
    minute), the seconds of their creation are added; where still equal, the
    file's name (``paths``), else a number."""
    labels = [str(label) for label in labels]

    def repeated(items):
        return {x for x in items if items.count(x) > 1}
    clash = repeated(labels)
    labels = [f"{label}:{r.created[17:19]}" if label in clash and len(r.created) >= 19 else label
              for label, r in zip(labels, records)]
    clash = repeated(labels)
    if clash and paths is not None:
        labels = [f"{label} {getattr(p, 'stem', p)}" if label in clash else label for label, p in zip(labels, paths)]
    clash = repeated(labels)
    return [f"{label} #{i + 1}" if label in clash else label for i, label in enumerate(labels)]


def _side_key(result: KernelResult, multi_gpu: bool) -> tuple:
    return row_key(result), result.gpu if multi_gpu else None


def _side_by_side(records: list[RunRecord]):
    """(key, first result of that key, [each record's result or None]) for
    every (kernel, precision, shape) any record holds."""
    keyed, order = [], {}
    for record in records:
        multi = bool(gpu_indices(record))
        mine = {}
        for r in record.results:
            key = _side_key(r, multi)
            mine.setdefault(key, r)
            order.setdefault(key, r)
        keyed.append(mine)
    return [(key, first, [mine.get(key) for mine in keyed]) for key, first in order.items()]


def _side_name(key, first: KernelResult) -> str:
    name = f"{first.kernel_id} {kernel_label(first)}"
    if first.params_source == "given":
        name += f" {format_params(first.params)}"
    return name + (f" (GPU {key[1]})" if key[1] is not None else "")


def side_by_side_rows(records: list[RunRecord], labels: list[str]) -> tuple[list[str], list[list[str]]]:
    """Rows: every (kernel, precision, shape) any record holds; one column
    group (GFLOP/s, % of the baseline) per record, headed ``[n]`` (the
    legend names each record). Flagged figures are marked, with their flags'
    letters."""
    found_rows = _side_by_side(records)
    shape_name, shape_text = shape_column([first.shape for _, first, _ in found_rows])
    header = ["kernel", "precision", shape_name]
    for n in range(1, len(labels) + 1):
        header += [f"[{n}] GFLOP/s", f"[{n}] %"]
    rows = []
    for key, first, found in found_rows:
        row = [_side_name(key, first), first.precision.upper(), shape_text(first.shape)]
        for record, r in zip(records, found):
            if r is None:
                row += ["", ""]
            elif r.status != "pass":
                row += [r.status.upper(), ""]
            else:
                base = record.baseline_of(r)
                pct = percent_of_baseline(r, record.results, record.device)
                row += [_marked(r), doubtful(format_number(pct), bool(r.flags or (base and base.flags)))]
        rows.append(row)
    return header, rows


def side_by_side_columns(header: list[str]) -> list[Column]:
    cols = [text_column("kernel", "kernel", 10), Column("precision", "prec", 6, "left"), Column(header[2], header[2], 8)]
    return cols + [Column(h, h, 5) for h in header[3:]]


def side_by_side_csv(records: list[RunRecord], labels: list[str]) -> tuple[list[str], list[list[str]]]:
    """Side by side as data: per record GFLOP/s, % of its baseline and flags,
    headed by the record's label."""
    header = ["kernel", "precision", "shape"]
    for label in labels:
        header += [f"{label} GFLOP/s", f"{label} %", f"{label} flags"]
    rows = []
    for key, first, found in _side_by_side(records):
        row = [_side_name(key, first), first.precision.upper(), str(first.shape)]
        for record, r in zip(records, found):
            if r is None:
                row += ["", "", ""]
            elif r.status != "pass":
                row += [r.status.upper(), "", ";".join(r.flags)]
            else:
                row += [format_number(r.gflops), format_number(percent_of_baseline(r, record.results, record.device)),
                        ";".join(r.flags)]
        rows.append(row)
    return header, rows


def flag_legend(results: list[KernelResult]) -> list[str]:
    """What the letters of the flags that appear mean (nothing when none)."""
    seen = [f for f in FLAG_MEANING if any(f in r.flags for r in results)]
    other = sorted({f for r in results for f in r.flags if f not in FLAG_MEANING})
    if not seen and not other:
        return []
    parts = [f"{FLAG_MEANING[f][0]} = {f}: {FLAG_MEANING[f][1]}" for f in seen] + \
        [f"? = {', '.join(other)} (flags this gemmbench does not know)"] * bool(other)
    return ["Flags: " + "; ".join(parts) + "."]


# --------------------------------------------------------------------------
# diff
# --------------------------------------------------------------------------

def _rung(result: KernelResult, device: str | None) -> str:
    """A rung id as results tables write it: 'cpu:0' for OpenBLAS beside a GPU ladder."""
    return str(result.kernel_id) if result.device == (device or result.device) else f"{result.device}:{result.kernel_id}"


def _gpu(index) -> str:
    return "-" if index is None else str(index)


def _letters(result: KernelResult) -> str:
    """A row's flags as letters (the legend says what each means); ? for a flag this gemmbench does not know."""
    return "".join(FLAG_MEANING[f][0] if f in FLAG_MEANING else "?" for f in result.flags)


def _row_flags(row) -> str:
    return " ".join(f"{side}:{_letters(r)}" for side, r in (("old", row.old), ("new", row.new)) if r.flags)


def diff_columns(diff: Diff) -> list[Column]:
    """The diff's columns: threads, GPU and flags only when some row has them,
    the shape only when rows differ in it (else the title says it)."""
    gpus = any(r.old.gpu is not None or r.new.gpu is not None for r in diff.rows)
    threads = any(r.new.threads for r in diff.rows)
    flags = any(r.old.flags or r.new.flags for r in diff.rows)
    shape = shape_column([r.new.shape for r in diff.rows])[0]
    cols = [text_column("kernel", "kernel", 10), Column("precision", "prec", 5, "left"), Column(shape, shape, 9)]
    cols += [Column("threads", "T", 3)] * threads + [Column("GPU", "GPU", 3)] * gpus
    cols += [Column("old GFLOP/s", "old", 8), Column("new GFLOP/s", "new", 9), Column("change", "change", 9),
             words_column("95% CI", "95% CI", 4), text_column("verdict", "verdict", 10)]
    return cols + [words_column("flags", "flags", 7)] * flags


def diff_rows(diff: Diff) -> tuple[list[str], list[list[str]]]:
    columns = diff_columns(diff)
    header = [c.name for c in columns]
    shape_text = shape_column([r.new.shape for r in diff.rows])[1]
    rows = []
    for r in diff.rows:
        name = f"{_rung(r.new, diff.device)} {kernel_label(r.new)}"
        if r.new.params_source == "given":
            name += f" {format_params(r.new.params)}"
        either = bool(r.old.flags or r.new.flags)
        cells = {"kernel": name, "precision": r.new.precision.upper(), header[2]: shape_text(r.new.shape),
                 "threads": str(r.new.threads or "-"), "GPU": f"{_gpu(r.old.gpu)} -> {_gpu(r.new.gpu)}",
                 "old GFLOP/s": doubtful(format_number(r.old.gflops), bool(r.old.flags)),
                 "new GFLOP/s": doubtful(format_number(r.new.gflops), bool(r.new.flags)),
                 "change": doubtful("-" if r.change is None else f"{100 * r.change:+.1f}%", either),
                 "95% CI": doubtful("-" if r.low is None else f"{100 * (r.low - 1):+.1f}% .. {100 * (r.high - 1):+.1f}%",
                                    either),
                 "verdict": r.verdict + (f" ({r.reason})" if r.reason else ""), "flags": _row_flags(r)}
        rows.append([cells[h] for h in header])
    return header, rows


def diff_csv(diff: Diff) -> tuple[list[str], list[list[str]]]:
    """The diff as plain numbers, one value per column (changes in percent)."""
    header = ["device", "kernel_id", "kernel", "precision", "M", "N", "K", "threads", "params", "gpu_old", "gpu_new",
              "old_gflops", "new_gflops", "change_pct", "ci_low_pct", "ci_high_pct", "verdict", "reason",
              "old_flags", "new_flags"]
    pct = lambda x: plain_number(None if x is None else 100 * (x - 1))  # noqa: E731 (a ratio as a change in %)
    rows = [[r.new.device, str(r.new.kernel_id), r.new.name, r.new.precision, str(r.new.shape.M),
             str(r.new.shape.N), str(r.new.shape.K), plain_number(r.new.threads),
             format_params(r.new.params) if r.new.params_source == "given" else "",
             plain_number(r.old.gpu), plain_number(r.new.gpu), plain_number(r.old.gflops),
             plain_number(r.new.gflops), pct(r.ratio), pct(r.low), pct(r.high), r.verdict, r.reason or "",
             ";".join(r.old.flags), ";".join(r.new.flags)]
            for r in diff.rows]
    return header, rows


def one_side(r: KernelResult, device: str | None = None) -> str:
    """A row found in one record only, as one line names it."""
    text = f"{_rung(r, device)} {kernel_label(r)} {r.precision.upper()} {r.shape}"
    if r.params_source == "given":
        text += f" {format_params(r.params)}"
    return text + (f" (GPU {r.gpu})" if r.gpu is not None else "")


def diff_footer(diff: Diff) -> list[str]:
    after = [f"only in old: {one_side(r, diff.device)}" for r in diff.only_old] + \
            [f"only in new: {one_side(r, diff.device)}" for r in diff.only_new]
    counts = {v: sum(r.verdict == v for r in diff.rows) for v in ("slower", "faster", "same", "noisy", "failed",
                                                                 "skipped")}
    flagged = sum(bool(r.old.flags or r.new.flags) for r in diff.rows)
    after.append(", ".join(f"{n} {v}" for v, n in counts.items() if n) + f" (threshold {100 * diff.threshold:g}%); "
                 "verdicts from a seeded 95% bootstrap interval of the ratio of median times; "
                 + ("REGRESSION: exit 1" if diff.exit_code else "no regression"))
    if flagged:
        after += flag_legend([r for row in diff.rows for r in (row.old, row.new)])
        after.append(f"{flagged} row(s) flagged on a side (flags column: old:LETTERS new:LETTERS): their figures, "
                     f"written like (+1.0%)?, and verdicts are not for quoting; rerun on a quiet machine.")
    return after
