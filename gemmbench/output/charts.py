"""The HTML report's charts, drawn by ``svg``: a sweep's GFLOP/s against size,
each precision's rungs as % of their library row, and a profile's roofline.

The figures are the record's own, through the same functions the tables use
(``RunRecord.percent_of_baseline``, ``format``'s number formats and its
doubtful mark), so a chart never says a number the table does not; a flagged
figure is drawn open (a hollow point, a dashed empty bar) and written as the
table writes it, ``(97.1)?``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..fsutil import read_text
from ..inspect.profile import KernelProfile, parse_raw_csv
from ..inspect.roofline import Roof, point_for, roof_from_profile
from ..records.results import KernelResult, RunRecord
from . import svg
from .format import (BASELINE_NAME, doubtful, flag_letters, format_number, format_rate, kernel_label,
                     percent_doubtful)
from .runrows import gpu_indices

# --------------------------------------------------------------------------
# a sweep: GFLOP/s against size
# --------------------------------------------------------------------------

BASELINE_DASHES = ("solid", "dashdot", "dotted", "dashed")
MOST_SIZE_TICKS = 12  # more sizes than this: ticks at the powers of two


def _size(result: KernelResult) -> float:
    s = result.shape
    return (s.M * s.N * s.K) ** (1 / 3)


def _rung(result: KernelResult, record: RunRecord) -> str:
    """The rung as the tables name it: 'cpu:0' for OpenBLAS beside a GPU ladder."""
    kid = str(result.kernel_id) if result.device == record.device else f"{result.device}:{result.kernel_id}"
    return f"{kid} {kernel_label(result)}"


def _with_precision(name: str, precision: str, usual: str) -> str:
    """A kernel's name, and its precision where it is not the usual one and the name does not say it."""
    return name if precision == usual or precision.lower() in name.lower() else f"{name} {precision.upper()}"


def sweep_series(record: RunRecord) -> list[svg.Series]:
    """One series per kernel (and precision, and GPU) of a sweep, in the record's order."""
    groups: dict[tuple, list[KernelResult]] = {}
    for r in record.results:
        groups.setdefault((r.device, r.kernel_id, kernel_label(r), r.precision, r.gpu), []).append(r)
    several_gpus = bool(gpu_indices(record))
    series, rungs, baselines = [], 0, 0
    for (device, kid, _, precision, gpu), results in groups.items():
        label = _with_precision(_rung(results[0], record), precision, "fp32") + \
            (f" (GPU {gpu})" if several_gpus and gpu is not None else "")
        if kid == 0:
            style = dict(color=svg.INK, dash=BASELINE_DASHES[baselines % len(BASELINE_DASHES)], marker="circle",
                         width=2.4)
            baselines += 1
        else:
            style = dict(color=svg.PALETTE[rungs % len(svg.PALETTE)], marker=svg.MARKERS[rungs % len(svg.MARKERS)],
                         dash="solid")
            rungs += 1
        if precision != "fp32" and kid != 0:
            style["dash"] = "dashed"
        points, missing = [], []
        for r in sorted(results, key=_size):
            where = f"{label} at {r.shape}"
            if r.status == "pass" and r.gflops:
                letters = flag_letters(r)
                shown = doubtful(format_rate(r.gflops), bool(r.flags)) + (f" {letters}" if letters else "")
                points.append(svg.Point(_size(r), r.gflops, f"{where}: {shown} GFLOP/s", hollow=bool(r.flags)))
            else:
                missing.append(svg.Missing(_size(r), r.status == "fail",
                                           f"{where}: {r.status.upper()}" + (f" ({r.reason})" if r.reason else "")))
        series.append(svg.Series(label, points, missing=missing, **style))
    return series


def sweep_chart(record: RunRecord, title: str) -> str:
    series = sweep_series(record)
    sizes = sorted({_size(r) for r in record.results})
    square = all(r.shape.M == r.shape.N == r.shape.K for r in record.results)
    keys = [f"black: {BASELINE_NAME[record.device]} (library)"]
    if any(r.precision != "fp32" and r.kernel_id != 0 for r in record.results):
        keys.append("dashed: a precision other than FP32")
    if any(p.hollow for s in series for p in s.points):
        keys.append("open point: flagged, not for quoting")
    if any(s.missing for s in series):
        keys.append("on the axis: x failed, open triangle skipped")
    return svg.line_chart(series, title=title, x_label="size (M = N = K)" if square else "size (cube root of M·N·K)",
                          y_label="GFLOP/s (median, log scale)", x_base=2, y_base=10,
                          x_ticks=sizes if len(sizes) <= MOST_SIZE_TICKS else None, keys=keys)


# --------------------------------------------------------------------------
# each precision's rungs against its library row
# --------------------------------------------------------------------------

@dataclass
class BarGroup:
    """The rungs compared with one library row (one precision, shape and GPU)."""

    baseline: KernelResult
    bars: list[svg.Bar]


def baseline_groups(record: RunRecord) -> list[BarGroup]:
    """Each row that has a library row to be compared with, as the results
    table's ``% cuBLAS`` cell writes it; the library rows of the record's own
    ladder are the groups' 100% lines, not bars."""
    groups: dict[int, BarGroup] = {}
    for r in record.results:
        base = record.baseline_of(r)
        if base is None or base is r or (r.kernel_id == 0 and r.device == record.device):
            continue
        group = groups.setdefault(id(base), BarGroup(base, []))
        name = _with_precision(_rung(r, record), r.precision, base.precision)
        if r.status != "pass":
            group.bars.append(svg.Bar(name, None, r.status.upper(), tooltip=f"{name}: {r.status.upper()}"))
            continue
        pct = record.percent_of_baseline(r)
        shown = doubtful(format_number(pct), percent_doubtful(record, r))
        group.bars.append(svg.Bar(name, pct, shown, hollow=percent_doubtful(record, r),
                                  tooltip=f"{name}: {doubtful(format_number(r.gflops), bool(r.flags))} GFLOP/s, "
                                          f"{shown}% of {kernel_label(base)}",
                                  color=svg.PALETTE[0] if r.device == record.device else svg.PALETTE[1]))
    return [g for g in groups.values() if g.bars]


def baseline_charts(record: RunRecord, gpu: int | None = None) -> list[str]:
    """One bar chart per library row; ``gpu``: the GPU of one GPU's part of a multi-GPU record, for the titles."""
    groups = baseline_groups(record)
    shapes = {g.baseline.shape for g in groups}
    out = []
    for g in groups:
        base = g.baseline
        where = (f" at {base.shape}" if len(shapes) > 1 else "") + (f" on GPU {gpu}" if gpu is not None else "")
        title = f"% of {kernel_label(base)} ({base.precision.upper()}){where}: " \
                f"{doubtful(format_number(base.gflops), bool(base.flags))} GFLOP/s = 100%"
        out.append(svg.bar_chart(g.bars, title=title, axis_label=f"% of {kernel_label(base)} (higher is faster)",
                                 reference=100.0, reference_label=f"{kernel_label(base)} = 100%"))
    return out


# --------------------------------------------------------------------------
# a profile's roofline
# --------------------------------------------------------------------------

PROFILE_MAX_BYTES = 64 << 20  # ncu's raw page of --set full: some 160 kB a kernel


@dataclass
class Profile:
    """The raw CSV that ``gemmbench profile`` keeps beside its .ncu-rep."""

    path: Path
    kernels: list[KernelProfile]


def load_profile(path: Path) -> Profile:
    """The profile at ``path`` (regular file, through fsutil's reader); UserError, one line, otherwise."""
    if path.suffix == ".ncu-rep":
        raise UserError(f"--profile {path}: an .ncu-rep is read by ncu only; give the raw CSV gemmbench profile "
                        f"saved beside it ({path.with_suffix('.csv').name}), or make one with "
                        f"ncu --import {path} --csv --page raw --print-units base")
    text = read_text(path, PROFILE_MAX_BYTES)
    try:
        kernels = parse_raw_csv(text)
    except ValueError as exc:
        raise UserError(f"--profile {path}: not a raw ncu CSV ({exc})") from None
    if not kernels:
        raise UserError(f"--profile {path}: the CSV holds no profiled kernel")
    return Profile(path, kernels)


def roofline_parts(profile: Profile) -> tuple[Roof | None, KernelProfile, list]:
    """The roof (from the longest kernel: the GEMM, not a helper it launched),
    that kernel, and a point per kernel that has the counters."""
    main = max(profile.kernels, key=lambda k: k.get("gpu__time_duration.sum") or 0.0)
    points = [p for p in (point_for(k, k.name) for k in profile.kernels) if p]
    return roof_from_profile(main), main, points


def roofline_chart(profile: Profile, roof: Roof, points: list) -> str:
    """The compute roofs (FP32, and TF32 tensor when the kernel used it) over
    the DRAM slope, and the kernels placed by their executed FLOPs per DRAM byte."""
    intensities = [p.intensity for p in points] + [roof.ridge(), roof.ridge(roof.tensor_flops is not None)]
    lo, hi = min(intensities) / 16, max(intensities) * 8
    series = []
    ceilings = [(False, f"FP32 roof {roof.peak_flops / 1e12:.1f} TFLOP/s", "solid")]
    if roof.tensor_flops:
        ceilings.append((True, f"TF32 tensor roof {roof.tensor_flops / 1e12:.0f} TFLOP/s", "dashed"))
    guides = []
    for tensor, label, dash in ceilings:
        ridge = roof.ridge(tensor)
        line = [svg.Point(x, roof.attainable(x, tensor) / 1e12, label) for x in (lo, ridge, hi)]
        series.append(svg.Series(f"{label}, DRAM {roof.peak_bandwidth / 1e12:.2f} TB/s", line, svg.INK, dash,
                                 marker=None, width=2.2))
        guides.append(svg.Guide(ridge, f"ridge {ridge:.0f} FLOP/B"))
    for i, p in enumerate(points):
        short = f"{p.label}: {p.flops_per_second / 1e12:.1f} TFLOP/s at {p.intensity:.0f} FLOP/B"
        tip = f"{short} ({100 * p.share_of_roof(roof):.0f}% of its roof)"
        series.append(svg.Series(short, [svg.Point(p.intensity, p.flops_per_second / 1e12, tip)],
                                 svg.PALETTE[i % len(svg.PALETTE)], marker=svg.MARKERS[i % len(svg.MARKERS)],
                                 line=False))
    return svg.line_chart(series, title=f"Roofline: {profile.path.name}", guides=guides, x_base=10, y_base=10,
                          x_label="arithmetic intensity (executed FLOP per DRAM byte)",
                          y_label="TFLOP/s (executed, as ncu counted)", plot_height=360)
