"""GFLOP/s against size for each kernel of a sweep (matplotlib, optional).

Neighbouring rungs differ in colour (a qualitative palette) and in marker;
the library baselines are black, one line style per thread count (or
precision); TF32 rows are dashed. Points that carry a flag (noisy, disturbed,
throttled...) are hollow, and a size where a kernel was skipped or failed is
marked on the axis (x = FAIL, v = SKIP) in the kernel's colour, so nothing
silently vanishes.

A shape set (``sizes --shapes``) has no size to put on x: its shapes stand
side by side in their files' order, each labelled MxNxK and its name, the
groups apart (a dotted rule, the group's name above it, lines broken
between groups). Not x = FLOPs: shapes of equal work (1023x1024x1024 and
1024x1024x1023, a transformer layer and a square) would fall on one point
and lines would join unrelated shapes; a shape set is read shape by shape.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import UserError
from ..fsutil import write_new
from ..records.results import RunRecord
from ..validate import check_plot_path, plot_format
from ..options import NamedShape
from .format import record_shape_set
from .report import BASELINE_NAME, kernel_label
from .text import cut, printable

MARKERS = "osD^P*Xph<>d"  # not "v" or "x": those mark skipped and failed sizes
BASELINE_STYLES = ("-", "-.", ":", (0, (5, 1, 1, 1)))
TICK_CHARS = 48  # a shape's tick label is cut here (names may have 64 characters)


def require_matplotlib() -> None:
    """Before a command runs: --plot without matplotlib is the user's one-line error."""
    try:
        import matplotlib  # noqa: F401  (optional: the plot extra)
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install 'gemmbench[plot]'") from None


def _size(shape) -> float:
    return (shape.M * shape.N * shape.K) ** (1 / 3)


def plot_sweep(record: RunRecord, path: Path, overwrite: bool = False, option: str = "--plot") -> None:
    """Draw ``record`` into ``path`` through gemmbench's one writer: a format
    matplotlib writes, a new regular file (or, with ``overwrite``, an
    existing one replaced) in an existing directory; UserError (one line)
    otherwise, checked before drawing and again when the file is written."""
    import matplotlib.pyplot as plt  # optional (the plot extra): imported only to draw
    check_plot_path(path, overwrite, option)
    fig = sweep_figure(record)
    try:
        write_new(path, lambda f: fig.savefig(f, format=plot_format(path, option), dpi=120), overwrite, option)
    finally:
        plt.close(fig)


def sweep_figure(record: RunRecord):
    """The figure (matplotlib's Agg backend: files only, no display needed)."""
    import matplotlib  # optional (the plot extra): imported only to draw
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shape_set = _present(record_shape_set(record), record)
    position = {e.shape: i for i, e in enumerate(shape_set)}
    x_of = (lambda shape: position[shape]) if shape_set else _size
    width = min(40.0, max(10.0, 3.0 + 0.16 * len(shape_set)))
    fig, ax = plt.subplots(figsize=(width, 7.5 if shape_set else 5.5))
    palette = plt.get_cmap("tab10").colors
    lines: dict[tuple, list] = {}
    for r in record.results:
        lines.setdefault((r.device, r.kernel_id, kernel_label(r), r.precision), []).append(r)
    # the edge of the plot where skipped and failed sizes are marked
    axis_mark = matplotlib.transforms.blended_transform_factory(ax.transData, ax.transAxes)
    rungs = baselines = 0
    missing = False
    for (device, kid, label, precision), results in lines.items():
        if kid == 0:
            style = dict(color="black", linewidth=2.2, linestyle=BASELINE_STYLES[baselines % len(BASELINE_STYLES)],
                         marker=".")
            baselines += 1
        else:
            style = dict(color=palette[rungs % len(palette)], linewidth=1.3, marker=MARKERS[rungs % len(MARKERS)])
            rungs += 1
        if precision == "tf32":  # not FP32-accurate: drawn apart
            style["linestyle"] = "--"
        if shape_set:
            style["linewidth"] *= 0.5  # the markers carry a shape set; the lines only guide the eye
        timed = sorted((x_of(r.shape), r.gflops, bool(r.flags)) for r in results if r.status == "pass")
        if timed:
            xs, ys, _ = zip(*timed)
            if shape_set:
                xs, ys = _broken_at_groups(xs, ys, shape_set)
            (line,) = ax.plot(xs, ys, markersize=4, label=f"{kid} {label}", **style)
            flagged = [(x, y) for x, y, f in timed if f]
            if flagged:
                ax.plot(*zip(*flagged), linestyle="none", marker=style["marker"], markersize=8,
                        markerfacecolor="none", markeredgecolor=line.get_color())
        else:
            ax.plot([], [], label=f"{kid} {label} (no timed size)", **style)
        for r in results:
            if r.status != "pass":
                missing = True
                ax.plot(x_of(r.shape), 0.02, transform=axis_mark, linestyle="none", clip_on=False,
                        marker="x" if r.status == "fail" else "v", markersize=7, color=style["color"])
    ax.set_yscale("log")  # rates span three orders of magnitude
    if shape_set:
        _shape_axis(ax, shape_set, axis_mark)
    else:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("size (cube root of M*N*K)")
    ax.set_ylabel("GFLOP/s (median, log scale)")
    gpu = record.environment.get("gpu") or {}
    keys = [f"black: {BASELINE_NAME[record.device]}"]
    if any(p == "tf32" for *_, p in lines):
        keys.append("dashed: TF32")
    if any(r.flags for r in record.results if r.status == "pass"):
        keys.append("hollow: flagged")
    if missing:
        keys.append("x: failed, v: skipped")
    what = "sizes --shapes" if shape_set else "sizes"
    ax.set_title(f"gemmbench {what} on {gpu.get('name') or record.device.upper()} ({'; '.join(keys)})",
                 pad=28 if shape_set else 6)  # a shape set's group names stand between the title and the plot
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig


def _present(shape_set: list, record: RunRecord) -> list:
    """The shape set's shapes the record has results for, in order, then any
    other shape of its results (a hand-edited record), unnamed."""
    if not shape_set:
        return []
    present = dict.fromkeys(r.shape for r in record.results)
    listed = {e.shape for e in shape_set}
    return [e for e in shape_set if e.shape in present] + [NamedShape(s) for s in present if s not in listed]


def _broken_at_groups(xs, ys, shape_set: list) -> tuple[list, list]:
    """The points with a gap (NaN) wherever the group changes, so no line joins two groups."""
    out_x, out_y = [], []
    for x, y in zip(xs, ys):
        if out_x and shape_set[out_x[-1]].group != shape_set[x].group:
            out_x.append(math.nan)
            out_y.append(math.nan)
        out_x.append(x)
        out_y.append(y)
    return out_x, out_y


def _shape_axis(ax, shape_set: list, axis_mark) -> None:
    """One tick per shape, labelled MxNxK and its name; each group's start ruled and named."""
    labels = [printable(cut(e.label, TICK_CHARS)) for e in shape_set]
    ax.set_xticks(range(len(shape_set)))
    for text in ax.set_xticklabels(labels, rotation=90, fontsize=6 if len(shape_set) > 40 else 8):
        text.set_parse_math(False)  # a name is text: '$' is no mathtext here
    ax.set_xlim(-0.6, len(shape_set) - 0.4)
    ax.set_xlabel("shape (M x N x K and its name, in the files' order)")
    for i, entry in enumerate(shape_set):
        if entry.group is not None and (i == 0 or shape_set[i - 1].group != entry.group):
            if i:
                ax.axvline(i - 0.5, color="grey", linestyle=":", linewidth=1)
            ax.text(i - 0.4, 1.01, printable(entry.group), transform=axis_mark, fontsize=7, color="grey",
                    rotation=30, ha="left", va="bottom", parse_math=False)
