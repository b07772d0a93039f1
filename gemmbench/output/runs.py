"""Views of saved and multi-GPU runs: a record as its command printed it,
records side by side, a diff, and the per-GPU summary of ``compare --gpus``.

Built on report.py's rows and formatting (with report.py, the only modules
importing rich). ``show_record`` is what a command prints at its end *and*
what ``gemmbench show`` prints, so a saved record renders exactly as its
run did, from the record alone.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from rich import box
from rich.table import Table

from ..records.diff import Diff, row_key
from .report import (BASELINE_NAME, Reporter, format_number, format_params, kernel_label, plain_number)
from ..records.results import KernelResult, RunRecord, percent_of_baseline


# --------------------------------------------------------------------------
# one record
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


def identity_line(gpu: dict) -> str:
    """How a header names one GPU: index, name, UUID and PCI bus id."""
    mask = gpu.get("cuda_visible_devices")
    return (f"GPU {gpu.get('index')}: {gpu.get('name')}, UUID {gpu.get('uuid') or 'unknown (no NVML)'}, "
            f"PCI {gpu.get('pci_bus_id')}" + (f" (CUDA_VISIBLE_DEVICES={mask})" if mask is not None else ""))


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


# --------------------------------------------------------------------------
# compare --gpus: one line per GPU
# --------------------------------------------------------------------------

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
        throttle = sorted({t for r in mine for t in r.notes.get("throttle") or []} | set(after.get("throttle") or []))
        out.append(GpuSummary(index, env.get("gpu") or {}, after, env.get("error"), base, best,
                              run_clock(mine) or after.get("sm_clock_mhz"), throttle,
                              ratio(base, base_median), ratio(best, best_median)))
    return out


def gpu_summary_rows(record: RunRecord) -> tuple[list[str], list[list[str]]]:
    header = ["GPU", "name", "PCI", f"{BASELINE_NAME['gpu']} GFLOP/s", "best rung", "GFLOP/s",
              "SM MHz", "temp C", "power W", "throttle", f"{BASELINE_NAME['gpu']} / median", "best / median"]
    table = []
    for g in gpu_summaries(record):
        name, pci = g.gpu.get("name") or "?", g.gpu.get("pci_bus_id") or "?"
        if g.error:
            table.append([str(g.index), name, pci, f"worker failed: {g.error}"] + [""] * (len(header) - 4))
            continue
        table.append([
            str(g.index), name, pci, format_number(g.base.gflops if g.base else None),
            f"{g.best.kernel_id} {kernel_label(g.best)}" if g.best else "-",
            format_number(g.best.gflops if g.best else None),
            format_number(g.clock, 0), str(g.after.get("temperature_c", "-")),
            format_number(g.after.get("power_w"), 0), ", ".join(g.throttle) or "none",
            "-" if g.base_ratio is None else f"{g.base_ratio:.3f}",
            "-" if g.best_ratio is None else f"{g.best_ratio:.3f}"])
    return header, table


def run_clock(results: list[KernelResult]) -> float | None:
    """The median SM clock read right after each kernel's samples: the clock
    the kernels ran at (a reading before the run may see an idle GPU)."""
    return _median(r.notes["sm_clock_mhz"] for r in results
                   if r.device == "gpu" and isinstance(r.notes.get("sm_clock_mhz"), (int, float)))


def _median(values) -> float | None:
    values = list(values)
    return statistics.median(values) if values else None


def show_gpu_summary(reporter: Reporter, record: RunRecord) -> None:
    header, rows = gpu_summary_rows(record)
    notes = ["SM MHz: median over kernels of the clock during their samples; throttle: any reason seen then; "
             "temperature and power: read after the GPU's last kernel (NVML). Ratios are over the median of "
             "this host's GPUs: a slow or throttled GPU reads below 1."]
    reporter.show([_table("gemmbench compare · per GPU", header, rows, left=("name", "best rung", "throttle", "PCI"))],
                  header, rows, lines_after=notes, csv_view=gpu_summary_csv(record))


def gpu_summary_csv(record: RunRecord) -> tuple[list[str], list[list[str]]]:
    """The per-GPU summary as plain numbers, one value per column."""
    header = ["gpu", "name", "pci_bus_id", "cublas_gflops", "best_kernel_id", "best_gflops", "sm_clock_mhz",
              "temperature_c", "power_w", "throttle", "cublas_ratio", "best_ratio", "error"]
    rows = [[str(g.index), g.gpu.get("name") or "", g.gpu.get("pci_bus_id") or "",
             plain_number(g.base.gflops if g.base else None), plain_number(g.best.kernel_id if g.best else None),
             plain_number(g.best.gflops if g.best else None), plain_number(g.clock),
             plain_number(g.after.get("temperature_c")), plain_number(g.after.get("power_w")), " ".join(g.throttle),
             plain_number(g.base_ratio), plain_number(g.best_ratio), g.error or ""]
            for g in gpu_summaries(record)]
    return header, rows


# --------------------------------------------------------------------------
# several records side by side
# --------------------------------------------------------------------------

def _side_key(result: KernelResult, multi_gpu: bool) -> tuple:
    return row_key(result), result.gpu if multi_gpu else None


def side_by_side_rows(records: list[RunRecord], labels: list[str]) -> tuple[list[str], list[list[str]]]:
    """Rows: every (kernel, precision, shape) any record holds; one column
    group (GFLOP/s, % of the baseline) per record."""
    header = ["kernel", "precision", "shape"]
    for label in labels:
        header += [f"{label} GFLOP/s", f"{label} %"]
    keyed, order = [], {}
    for record in records:
        multi = bool(gpu_indices(record))
        mine = {}
        for r in record.results:
            key = _side_key(r, multi)
            mine.setdefault(key, r)
            order.setdefault(key, r)
        keyed.append(mine)
    rows = []
    for key, first in order.items():
        name = f"{first.kernel_id} {kernel_label(first)}"
        if first.params_source == "given":
            name += f" {format_params(first.params)}"
        if key[1] is not None:
            name += f" (GPU {key[1]})"
        row = [name, first.precision.upper(), str(first.shape)]
        for record, mine in zip(records, keyed):
            r = mine.get(key)
            if r is None:
                row += ["", ""]
            elif r.status != "pass":
                row += [r.status.upper(), ""]
            else:
                row += [format_number(r.gflops), format_number(percent_of_baseline(r, record.results, record.device))]
        rows.append(row)
    return header, rows


def show_side_by_side(reporter: Reporter, records: list[RunRecord], labels: list[str]) -> None:
    header, rows = side_by_side_rows(records, labels)
    table = Table(title="gemmbench show · GFLOP/s (% of each record's library baseline)", box=box.SIMPLE_HEAVY)
    for col in header[:3]:
        table.add_column(col, justify="left")
    for label in labels:
        table.add_column(f"{label}\nGFLOP/s", justify="right")
        table.add_column("%", justify="right")
    for row in rows:
        table.add_row(*row)
    before = [f"[{i + 1}] {label}: {r.command}, {r.device.upper()}" for i, (label, r) in
              enumerate(zip(labels, records))]
    reporter.show([table], header, rows, lines_before=before)


# --------------------------------------------------------------------------
# diff
# --------------------------------------------------------------------------

def diff_rows(diff: Diff) -> tuple[list[str], list[list[str]]]:
    gpus = any(r.old.gpu is not None or r.new.gpu is not None for r in diff.rows)
    threads = any(r.new.threads for r in diff.rows)
    header = ["kernel", "precision", "shape"] + (["threads"] if threads else []) + (["GPU"] if gpus else []) + \
        ["old GFLOP/s", "new GFLOP/s", "change", "95% CI", "verdict"]
    rows = []
    for r in diff.rows:
        name = f"{_rung(r.new, diff.device)} {kernel_label(r.new)}"
        if r.new.params_source == "given":
            name += f" {format_params(r.new.params)}"
        row = [name, r.new.precision.upper(), str(r.new.shape)]
        if threads:
            row.append(str(r.new.threads or "-"))
        if gpus:
            row.append(f"{_gpu(r.old.gpu)} -> {_gpu(r.new.gpu)}")
        row += [format_number(r.old.gflops), format_number(r.new.gflops),
                "-" if r.change is None else f"{100 * r.change:+.1f}%",
                "-" if r.low is None else f"{100 * (r.low - 1):+.1f}% .. {100 * (r.high - 1):+.1f}%",
                r.verdict + (f" ({r.reason})" if r.reason else "")]
        rows.append(row)
    return header, rows


def _rung(result: KernelResult, device: str | None) -> str:
    """A rung id as results tables write it: 'cpu:0' for OpenBLAS beside a GPU ladder."""
    return str(result.kernel_id) if result.device == (device or result.device) else f"{result.device}:{result.kernel_id}"


def _gpu(index) -> str:
    return "-" if index is None else str(index)


def show_diff(reporter: Reporter, diff: Diff, old_label: str, new_label: str) -> None:
    header, rows = diff_rows(diff)
    before = [f"old: {old_label}", f"new: {new_label}"]
    before += [f"differs: {d}" for d in diff.differences] or ["same GPU, clock, driver and gemmbench version"]
    after = [f"only in old: {_one_side(r, diff.device)}" for r in diff.only_old] + \
            [f"only in new: {_one_side(r, diff.device)}" for r in diff.only_new]
    counts = {v: sum(r.verdict == v for r in diff.rows) for v in ("slower", "faster", "same", "noisy", "failed")}
    after.append(", ".join(f"{n} {v}" for v, n in counts.items() if n) + f" (threshold {100 * diff.threshold:g}%); "
                 "verdicts from a seeded 95% bootstrap interval of the ratio of median times; "
                 + ("REGRESSION: exit 1" if diff.exit_code else "no regression"))
    table = _table("gemmbench diff · new GFLOP/s against old", header, rows, left=("kernel", "precision", "verdict"))
    reporter.show([table], header, rows, lines_before=before, lines_after=after, csv_view=diff_csv(diff))


def diff_csv(diff: Diff) -> tuple[list[str], list[list[str]]]:
    """The diff as plain numbers, one value per column (changes in percent)."""
    header = ["device", "kernel_id", "kernel", "precision", "M", "N", "K", "threads", "params", "gpu_old", "gpu_new",
              "old_gflops", "new_gflops", "change_pct", "ci_low_pct", "ci_high_pct", "verdict", "reason"]
    pct = lambda x: plain_number(None if x is None else 100 * (x - 1))  # noqa: E731 (a ratio as a change in %)
    rows = [[r.new.device, str(r.new.kernel_id), r.new.name, r.new.precision, str(r.new.shape.M),
             str(r.new.shape.N), str(r.new.shape.K), plain_number(r.new.threads),
             format_params(r.new.params) if r.new.params_source == "given" else "",
             plain_number(r.old.gpu), plain_number(r.new.gpu), plain_number(r.old.gflops),
             plain_number(r.new.gflops), pct(r.ratio), pct(r.low), pct(r.high), r.verdict, r.reason or ""]
            for r in diff.rows]
    return header, rows


def _one_side(r: KernelResult, device: str | None = None) -> str:
    text = f"{_rung(r, device)} {kernel_label(r)} {r.precision.upper()} {r.shape}"
    if r.params_source == "given":
        text += f" {format_params(r.params)}"
    return text + (f" (GPU {r.gpu})" if r.gpu is not None else "")


_VERDICT_STYLE = {"slower": "red", "failed": "red", "faster": "green", "noisy": "yellow"}


def _table(title: str, header: list[str], rows: list[list[str]], left=()) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAVY)
    for col in header:
        table.add_column(col, justify="left" if col in left else "right")
    for row in rows:
        verdict = row[-1].split(" ")[0] if row else ""
        table.add_row(*row, style=_VERDICT_STYLE.get(verdict))
    return table
