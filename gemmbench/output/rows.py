"""The rows of every view of a record, built once as plain strings, flags
included: run/compare, sizes, tune, the ladder, and the CSV form.

Renderers (``table`` for rich, ``text`` for markdown and CSV) take these
rows as they are; a figure of a flagged row is already marked here
(``format.doubtful``), so every format shows it the same way.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ..execute.rounds import turns
from ..precision import PRECISIONS
from ..records.results import KernelResult, RunRecord, is_unsettled, percent_of_peak, rounds_spread, sm_clock_mhz
from ..spec import KernelSpec
from ..stats import MEDIAN_CONFIDENCE
from ..timing import STOP_REASONS
from .format import (BASELINE_NAME, csv_flags, doubtful, flag_letters, format_error, format_flags, format_number,
                     format_params, format_rate, format_time, kernel_label, percent_doubtful, plain_number,
                     record_shape_set, status_text)
from .text import cut


@dataclass(frozen=True)
class Column:
    """A column: its header, a shorter one for narrow terminals, and how long
    it stays when space runs out (higher stays longer). A plain column
    (numbers) neither wraps nor is cut; a ``wrap`` column (flags, a range of
    numbers) wraps between words and never cuts one; a ``cut`` column (names,
    reasons) wraps between words and is cut with an ellipsis when too long."""

    name: str
    short: str
    keep: int
    justify: str = "right"
    wrap: bool = False
    cut: bool = False
    floor: int = 12  # a cut column is never squeezed below this (or its header)
    limit: int | None = 120  # a cut column's cells are cut to this many characters in tables (None: never)

    def header(self, short: bool) -> str:
        return self.short if short else self.name


def text_column(name: str, short: str, keep: int, floor: int = 12, limit: int | None = 120) -> Column:
    """A name or reason: left-aligned, wraps, cut when too long (CSV, markdown and JSON keep it whole)."""
    return Column(name, short, keep, "left", wrap=True, cut=True, floor=floor, limit=limit)


def words_column(name: str, short: str, keep: int) -> Column:
    """Words that are each whole values (flags, parameters): wraps, never cut."""
    return Column(name, short, keep, "left", wrap=True)


# --------------------------------------------------------------------------
# run / compare
# --------------------------------------------------------------------------

def result_columns(record: RunRecord) -> list[Column]:
    base = BASELINE_NAME[record.device]
    cols = [Column("rung", "rung", 10), text_column("kernel", "kernel", 10),
            Column("precision", "prec", 4, "left"), Column("time (median)", "time", 7),
            Column("spread (IQR)", "IQR", 5), Column("GFLOP/s", "GFLOP/s", 9), Column(f"% {base}", f"% {base}", 9)]
    if record.device == "gpu":
        cols += [Column("% FP32 peak", "% peak", 4), Column("SM MHz", "MHz", 2)]
    return cols + [Column("max rel err", "err", 3), words_column("flags", "flags", 8),
                   text_column("check", "check", 10)]


def result_rows(record: RunRecord) -> list[list[str]]:
    rows = []
    for r in record.results:
        s = r.stats
        flagged = bool(r.flags)
        row = [str(r.kernel_id) if r.device == record.device else f"{r.device}:{r.kernel_id}",
               kernel_label(r), r.precision.upper(), doubtful(format_time(s.median if s else None), flagged),
               f"{100 * s.relative_iqr:.1f}%" if s else "-",
               doubtful(format_number(r.gflops), flagged),
               doubtful(format_number(record.percent_of_baseline(r)), percent_doubtful(record, r))]
        if record.device == "gpu":
            clock = sm_clock_mhz(r) if r.device == "gpu" and s else None
            row += [doubtful(format_number(percent_of_peak(r, record.environment, at_clock=True)), flagged),
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
                         for b in cpu.get("blas") or [] if isinstance(b, dict)) or "none found"
        lines.append(f"CPU {cpu.get('cpu', '?')} ({cpu.get('cores', '?')} cores, C rungs built for "
                     f"{cpu.get('simd', '?')} by {cpu.get('compiler') or 'no compiler'}), numpy BLAS: {blas}")
    for note in env.get("notes", []):
        lines.append(note)
    if not record.complete:
        lines.append(f"INCOMPLETE: {record.incomplete_reason or 'stopped early'}")
    return lines


def footer_lines(record: RunRecord, per_cycle: bool = True) -> list[str]:
    """What a results table's figures mean; with ``per_cycle``, the rows compared per SM cycle as well
    (per_cycle_lines: for a table of rows, not a sweep's grid of shapes, where they would be one a cell)."""
    opts = record.options
    cold = "cold L2 (flushed before each call)" if opts.get("flush_l2") else "warm caches"
    lines = [f"Timed with alpha=1, beta=0 (C written, not read), {cold}; median of raw samples, "
             f"spread = interquartile range / median. Verified first against an FP64 reference "
             f"(beta=0 over a NaN-filled C, then alpha=0.75, beta=-1.5); seed {opts.get('seed', 0)}."]
    if record.device == "gpu":
        lines.append("% FP32 peak is of the peak at the SM clock each kernel ran at (its mean over the samples "
                     "where measured), so a throttled kernel is not blamed for the clock; SM MHz is that clock.")
        lines += per_cycle_lines(record) if per_cycle else []
    notes = [PRECISIONS[name].note for name in dict.fromkeys(r.precision for r in record.results)
             if name in PRECISIONS and PRECISIONS[name].note]
    if notes:
        lines.append("Precision: " + "; ".join(notes) + "; max rel err is |C - ref| over "
                     "|alpha|*|A|@|B| + |beta|*|C0|.")
    lines += stop_lines(record) + rounds_lines(record) + settle_lines(record) + resume_lines(record)
    shown = set()
    for r in record.results:
        key = (r.kernel_id, r.name, r.shape, tuple(r.params.items()))
        if r.params_source in ("tuned", "selected") and key not in shown:
            shown.add(key)
            how = "tuned (gemmbench tune)" if r.params_source == "tuned" else "chosen for the shape"
            why = f" — {r.notes['choice']}" if r.notes.get("choice") else ""
            lines.append(f"rung {r.kernel_id} at {r.shape}: {how}: {format_params(r.params)}{why}")
    return lines


CLOCK_GAP = 0.02  # clocks this far apart (relative) get a per-cycle comparison


def per_cycle_lines(record: RunRecord) -> list[str]:
    """Where a row and its baseline ran at clocks CLOCK_GAP or more apart (a
    power cap lowers the clock more for one kernel than another), the % of the
    baseline per SM cycle as well as in time: time x clock is the cycles a
    call took, so the two figures tell a slower kernel from a lower clock."""
    lines, heated = [], False
    for r in record.results:
        per_cycle = record.percent_of_baseline_per_cycle(r)
        if per_cycle is None:
            continue
        base, percent = record.baseline_of(r), record.percent_of_baseline(r)
        clock, base_clock = sm_clock_mhz(r), sm_clock_mhz(base)
        if abs(clock / base_clock - 1) < CLOCK_GAP:
            continue
        flagged = percent_doubtful(record, r)
        heat, base_heat = _heat(r), _heat(base)
        heated = heated or bool(heat or base_heat)
        lines.append(f"rung {r.kernel_id} at {r.shape}: "
                     f"{doubtful(format_number(per_cycle), flagged)}% of {base.name} per SM cycle, "
                     f"{doubtful(format_number(percent), flagged)}% in time ({clock:,.0f} MHz{heat} against "
                     f"{base_clock:,.0f}{' MHz' + base_heat if base_heat else ''})")
    if lines:
        lines.insert(0, f"Per SM cycle (time x the SM clock it ran at), where a row and its baseline ran at clocks "
                        f"{100 * CLOCK_GAP:.0f}% or more apart" + (
                            " (with the GPU's temperature as its samples began and ended: a clock gap between "
                            "rows at the same temperature is not the chip's heat)"
                            if heated else "") + ":")
    return lines


def _heat(result: KernelResult) -> str:
    """' at 58-63 °C': the GPU's temperature range over a row's samples (gpu_temp_range_c), or ''."""
    temps = result.notes.get("gpu_temp_range_c")
    if not temps:
        return ""
    low, high = temps
    return f" at {low:.0f} °C" if low == high else f" at {low:.0f}-{high:.0f} °C"


def stop_lines(record: RunRecord) -> list[str]:
    """With a noise target (--max-noise): why the rows stopped, and how many
    stopped short of it (nothing for a run that stopped on time)."""
    targeted = [r for r in record.results if r.notes.get("max_noise") is not None and r.notes.get("stopped")]
    if not targeted:
        return []
    counts = [f"{n} on {reason}" for reason in STOP_REASONS
              if (n := sum(r.notes["stopped"] == reason for r in targeted))]
    unsettled = sum(is_unsettled(r.notes) for r in targeted)
    return [f"Sampling stopped once the median's {100 * MEDIAN_CONFIDENCE:.0f}% confidence interval was within "
            f"+-{100 * targeted[0].notes['max_noise']:.3g}% (--max-noise), after --min-time: {', '.join(counts)} "
            f"of {len(targeted)} timed rows" + (f"; {unsettled} short of it (unsettled)." if unsettled else ".")]


def rounds_lines(record: RunRecord) -> list[str]:
    """With --rounds: how the rows were timed, and the row whose round medians were furthest apart."""
    rounds = record.options.get("rounds") or 1
    if rounds <= 1:
        return []
    spreads = [(spread, r) for r in record.results if (spread := rounds_spread(r)) is not None]
    halves = "; the last in two halves, one each way" if rounds % 2 else ""
    line = (f"Timed in {rounds} rounds per shape, the rows taking turns (the order reversed every other round"
            f"{halves}), each round warming up again and sampling on its share of the budget; a row's figure is "
            f"the median of the samples of all its rounds")
    if spreads:
        spread, widest = max(spreads, key=lambda item: item[0])
        line += (f"; its round medians were furthest apart for {widest.name} at {widest.shape}: "
                 f"{100 * spread:.3g}% (each row's are in its record's notes)")
    visits = len(turns(rounds))
    cut = {}  # an interrupted shape: its rows kept the visits every row had (execute.local.measured_rows)
    for r in record.results:
        if r.status == "pass" and 0 < len(r.notes.get("rounds") or []) < visits:
            cut.setdefault(str(r.shape), len(r.notes["rounds"]))
    return [line + "."] + [f"Interrupted at {shape}: its rows keep the {n} visit{'s' * (n != 1)} every row had "
                           f"(of {visits})." for shape, n in cut.items()]


def resume_lines(record: RunRecord) -> list[str]:
    """Where a resumed run's rows come from (--resume: some were timed by the run it resumed)."""
    earlier = record.options.get("resume")
    if not earlier:
        return []
    return [f"Resumed from {cut(str(earlier), 200)}: the rows at the shapes it had finished are its own, carried "
            "over as they were timed; this run timed the other shapes."]


def settle_lines(record: RunRecord) -> list[str]:
    """Which rows' warm-up went on because their clock was held down (gpu.timing's settling warm-up)."""
    timed = [r for r in record.results if r.status == "pass" and r.device == "gpu"]
    settled = [r for r in timed if r.notes.get("warmup_settled_s")]
    if not settled:
        return []
    seconds = max(r.notes["warmup_settled_s"] for r in settled)
    return [f"Warm-up went on to {seconds:g} s for {len(settled)} of {len(timed)} timed GPU rows: the SMs' clock "
            f"was held down (power or heat) during their --warmup, and a held-down clock takes tenths of a second "
            f"to settle after what ran before."]


def results_title(record: RunRecord) -> str:
    shapes = list(dict.fromkeys(str(r.shape) for r in record.results))
    return f"gemmbench {record.command} · {', '.join(shapes)}"


# --------------------------------------------------------------------------
# sizes
# --------------------------------------------------------------------------

def sweep_rows(record: RunRecord) -> tuple[list[str], list[list[str]], list[str]]:
    """Kernels down, shapes across; cells 'GFLOP/s (% of baseline)' and the
    letters of their flags (the figures marked doubtful when flagged); SKIP
    and FAIL cells point to a numbered note with the reason. A shape set
    (sizes --shapes) is drawn the other way round: shapes down, each named
    MxNxK and the name its file gave it, kernels across. Returns the
    header, the rows and the notes."""
    named = {e.shape: e.label for e in record_shape_set(record)}
    present = dict.fromkeys(r.shape for r in record.results)
    shapes = list(dict.fromkeys([*(s for s in named if s in present), *present]))  # a shape set in its files' order
    kernels = list(dict.fromkeys((r.device, r.kernel_id, kernel_label(r)) for r in record.results))
    by_key = {(r.device, r.kernel_id, kernel_label(r), r.shape): r for r in record.results}
    square = all(s.M == s.N == s.K for s in shapes) and not named
    label = {s: named.get(s) or (str(s.M) if square else str(s)) for s in shapes}
    reasons: dict[tuple[str, str], list[str]] = {}  # (status, reason) -> where
    title, precision, cells, worst = {}, {}, {}, {}
    for kernel in kernels:
        _, kid, name = kernel
        mine = [r for r in record.results if (r.device, r.kernel_id, kernel_label(r)) == kernel]
        title[kernel], precision[kernel] = f"{kid} {name}", mine[0].precision.upper()
        for shape in shapes:
            r = by_key.get((*kernel, shape))
            where = f"{kid} {name} at {label[shape]}"
            cells[kernel, shape] = "" if r is None else _sweep_cell(record, r, reasons, where)
        checked = [r for r in mine if r.verification is not None]
        worst[kernel] = format_error(max(checked, key=_error_order)) if checked else "-"
    if named:
        header = ["shape"] + [title[k] for k in kernels]
        rows = [["precision"] + [precision[k] for k in kernels]]
        rows += [[label[s]] + [cells[k, s] for k in kernels] for s in shapes]
        rows.append(["max rel err"] + [worst[k] for k in kernels])
    else:
        header = ["kernel", "precision"] + [label[s] for s in shapes] + ["max rel err"]
        rows = [[title[k], precision[k]] + [cells[k, s] for s in shapes] + [worst[k]] for k in kernels]
    notes = [f"[{i}] {status}: {reason} ({', '.join(where)})"
             for i, ((status, reason), where) in enumerate(reasons.items(), 1)]
    return header, rows, notes


def _sweep_cell(record: RunRecord, r: KernelResult, reasons: dict, where: str) -> str:
    """One kernel at one shape: its rate and % of its baseline, or a pointer to why it has none."""
    if r.status != "pass":
        key = (r.status.upper(), r.reason or "no reason given")
        reasons.setdefault(key, []).append(where)
        return f"{key[0]} [{list(reasons).index(key) + 1}]"
    pct = record.percent_of_baseline(r)
    shown = pct is not None and record.baseline_of(r) is not r
    letters = flag_letters(r)
    figure = format_rate(r.gflops) + (f" ({format_rate(pct)}%)" if shown else "")
    flagged = bool(r.flags) or (shown and percent_doubtful(record, r))
    return doubtful(figure, flagged) + (f" {letters}" if letters else "")


def sweep_columns(header: list[str]) -> list[Column]:
    if header[0] == "shape":  # a shape set: shapes down, a column per kernel, named in full (more tables, no key)
        return [text_column("shape", "shape", 10, floor=14)] + [Column(h, h, 5) for h in header[1:]]
    return [text_column("kernel", "kernel", 10), Column("precision", "prec", 1, "left")] + \
        [Column(h, h, 5) for h in header[2:-1]] + [Column("max rel err", "err", 2)]


def _error_order(result: KernelResult) -> float:
    v = result.verification
    return math.inf if v.nonfinite or not math.isfinite(v.max_rel_error) else v.max_rel_error


# --------------------------------------------------------------------------
# tune
# --------------------------------------------------------------------------

TUNING_COLUMNS = [Column("rank", "rank", 10), text_column("kernel", "kernel", 6),
                  words_column("parameters", "params", 9), Column("time (median)", "time", 7),
                  Column("GFLOP/s", "GFLOP/s", 9), Column("% baseline", "% base", 8),
                  Column("max rel err", "err", 3), words_column("flags", "flags", 7),
                  text_column("check", "check", 10)]


def tuning_rows(record: RunRecord, top: int) -> tuple[list[str], list[list[str]], list[str]]:
    """The baselines, then the ``top`` fastest verified candidates; and a
    summary of the candidates that did not make it."""
    header = [c.name for c in TUNING_COLUMNS]
    header[5] = f"% {BASELINE_NAME[record.device]}"
    base = [r for r in record.results if r.kernel_id == 0]
    tried = [r for r in record.results if r.kernel_id != 0]
    timed = sorted((r for r in tried if r.status == "pass"), key=lambda r: -r.gflops)
    whose = _gpu_suffix(record)
    rows = []
    for rank, r in [("-", b) for b in base] + list(enumerate(timed[:top], 1)):
        flagged = bool(r.flags)
        label = kernel_label(r) + whose(r)
        rows.append([str(rank), label, format_params(r.params) if r.kernel_id else "-",
                     doubtful(format_time(r.stats.median if r.stats else None), flagged),
                     doubtful(format_number(r.gflops), flagged),
                     doubtful(format_number(record.percent_of_baseline(r)), percent_doubtful(record, r)),
                     format_error(r), format_flags(r), status_text(r)])
    failed = [r for r in tried if r.status == "fail"]
    skipped = [r for r in tried if r.status == "skip"]
    summary = [f"{len(tried)} candidates ran: {len(timed)} verified and timed, {len(failed)} failed "
               f"verification, {len(skipped)} skipped."]
    summary += [f"FAIL {format_params(r.params)}: {r.reason}" for r in failed[:5]]
    return header, rows, summary


def _gpu_suffix(record: RunRecord):
    """For a tune record measured on several GPUs (--gpus), the label suffix naming a row's GPU
    (" · GPU 1"); "" for a one-GPU record, or no row."""
    several = len({r.gpu for r in record.results if r.gpu is not None}) > 1
    return lambda r: f" · GPU {r.gpu}" if several and r is not None and r.gpu is not None else ""


def shape_tuning_columns(device: str) -> list[Column]:
    base = BASELINE_NAME[device]
    return [text_column("shape", "shape", 10, floor=14), Column("timed", "timed", 6),
            words_column("best parameters", "params", 9), Column("time (median)", "time", 7),
            Column("GFLOP/s", "GFLOP/s", 9), Column(f"{base} GFLOP/s", base, 8), Column(f"% {base}", f"% {base}", 9),
            Column("max rel err", "err", 3), words_column("flags", "flags", 7), text_column("check", "check", 10)]


def shape_tuning_rows(record: RunRecord) -> tuple[list[list[str]], list[str]]:
    """A tune across a shape set: each shape (in its files' order) with how
    many candidates were verified and timed of those that ran, the fastest
    beside the library baseline of that shape and its % of it; and a summary
    of the candidates that did not make it."""
    tried = [r for r in record.results if r.kernel_id != 0]
    best = record.best_by_shape(tried[0].kernel_id) if tried else {}
    named = {e.shape: e.label for e in record_shape_set(record)}
    present = dict.fromkeys(r.shape for r in record.results)
    whose = _gpu_suffix(record)  # say whose the best is
    rows = []
    for shape in dict.fromkeys([*(s for s in named if s in present), *present]):
        mine = [r for r in tried if r.shape == shape]
        failed = sum(r.status == "fail" for r in mine)
        r = best.get(shape)
        base = record.baseline_of(r or mine[0]) if r or mine else None
        label = named.get(shape, str(shape)) + whose(r)
        base_rate = doubtful(format_number(base.gflops if base else None), bool(base and base.flags))
        timed = f"{sum(x.status == 'pass' for x in mine)}/{len(mine)}"
        if r is None:
            rows.append([label, timed, "-", "-", "-", base_rate, "-", "-", "",
                         "no candidate passed" if mine else "no candidate ran"])
            continue
        flagged = bool(r.flags)
        rows.append([label, timed, format_params(r.params), doubtful(format_time(r.stats.median), flagged),
                     doubtful(format_number(r.gflops), flagged), base_rate,
                     doubtful(format_number(record.percent_of_baseline(r)), percent_doubtful(record, r)),
                     format_error(r), format_flags(r), status_text(r) + (f" ({failed} failed)" if failed else "")])
    failed = [r for r in tried if r.status == "fail"]
    summary = [f"{len(tried)} candidates ran at {_count(len(rows), 'shape')}: {sum(r.status == 'pass' for r in tried)} verified "
               f"and timed, {len(failed)} failed verification, {sum(r.status == 'skip' for r in tried)} skipped; "
               f"each shape's fastest is beside {BASELINE_NAME[record.device]} at that shape."]
    summary += [f"FAIL at {r.shape}: {format_params(r.params)}: {r.reason}" for r in failed[:5]]
    return rows, summary


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + "s" * (n != 1)


def tuning_view(record: RunRecord, top: int) -> tuple[list[Column], list[list[str]], list[str]]:
    """The columns, rows and summary of a tune record: the best of each shape
    for a shape set (tune --shapes), else the ``top`` fastest candidates."""
    if record_shape_set(record):
        rows, summary = shape_tuning_rows(record)
        return shape_tuning_columns(record.device), rows, summary
    header, rows, summary = tuning_rows(record, top)
    return [dataclasses.replace(c, name=h) for h, c in zip(header, TUNING_COLUMNS)], rows, summary


def tuning_title(record: RunRecord) -> str:
    name = record.results[-1].name if record.results else ""
    shape_set = record_shape_set(record)
    if shape_set:
        return f"gemmbench tune · {name} · the fastest candidate at each of {_count(len(shape_set), 'shape')}"
    return f"gemmbench tune · {name} · {', '.join(dict.fromkeys(str(r.shape) for r in record.results))}"


# --------------------------------------------------------------------------
# list
# --------------------------------------------------------------------------

LADDER_COLUMNS = [Column("rung", "rung", 10), text_column("name", "name", 9, floor=10),
                  text_column("what changed", "what changed", 8, floor=14, limit=None), Column("precision", "prec", 5, "left"),
                  words_column("parameters", "params", 6), text_column("constraints", "constraints", 4, limit=None)]


def ladder_rows(specs: tuple[KernelSpec, ...]) -> tuple[list[str], list[list[str]]]:
    header = [c.name for c in LADDER_COLUMNS]
    rows = [[str(s.id), s.name, s.summary, s.precision.upper(),
             " ".join(f"{k}={v}" for k, v in s.params.items()) or "-",
             s.constraints or ("multithreaded" if s.multithreaded else "-")] for s in specs]
    return header, rows


# --------------------------------------------------------------------------
# csv
# --------------------------------------------------------------------------

def result_csv_rows(record: RunRecord) -> tuple[list[str], list[list[str]]]:
    """One row per result, one value per column, units in the column names;
    for pandas.read_csv as is. A flagged row's figures stay plain numbers:
    its ``flags`` column says they are not for quoting. A shape set's rows
    end with the name and group its file gave the shape."""
    base = BASELINE_NAME[record.device].lower()
    gpu = record.device == "gpu"
    header = ["device", "kernel_id", "kernel", "precision", "threads", "M", "N", "K", "params",
              "params_source", "status", "reason", "samples", "time_us", "q1_us", "q3_us", "spread_pct",
              "gflops", f"pct_{base}"]
    if gpu:
        header += [f"pct_{base}_per_cycle", "pct_fp32_peak", "pct_fp32_peak_max_clock", "sm_clock_mhz",
                   "throttled_share"]
    header += ["max_rel_err", "flags"]
    named = {e.shape: e for e in record_shape_set(record)}
    if named:  # a shape set: each shape's name and group from its file
        header += ["shape_name", "shape_group"]
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
            share = r.notes.get("throttled_share")
            row += [plain_number(record.percent_of_baseline_per_cycle(r)),
                    plain_number(percent_of_peak(r, record.environment, at_clock=True)),
                    plain_number(percent_of_peak(r, record.environment)),
                    plain_number(sm_clock_mhz(r) if r.device == "gpu" else None),
                    plain_number(share if isinstance(share, (int, float)) else None)]
        row += [plain_number(err), csv_flags(record, r)]
        if named:
            entry = named.get(r.shape)
            row += [entry.name or "", entry.group or ""] if entry else ["", ""]
        rows.append(row)
    return header, rows
