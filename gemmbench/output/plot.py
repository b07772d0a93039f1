"""GFLOP/s against size for each kernel of a sweep (matplotlib, optional).

Neighbouring rungs differ in colour (a qualitative palette) and in marker;
the library baselines are black, one line style per thread count (or
precision); TF32 rows are dashed. Points that carry a flag (noisy, disturbed,
throttled...) are hollow, and a size where a kernel was skipped or failed is
marked on the axis (x = FAIL, v = SKIP) in the kernel's colour, so nothing
silently vanishes.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..fsutil import write_new
from ..records.results import RunRecord
from ..validate import check_plot_path, plot_format
from .report import BASELINE_NAME, kernel_label

MARKERS = "osD^P*Xph<>d"  # not "v" or "x": those mark skipped and failed sizes
BASELINE_STYLES = ("-", "-.", ":", (0, (5, 1, 1, 1)))


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

    fig, ax = plt.subplots(figsize=(10, 5.5))
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
        timed = sorted((_size(r.shape), r.gflops, bool(r.flags)) for r in results if r.status == "pass")
        if timed:
            xs, ys, _ = zip(*timed)
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
                ax.plot(_size(r.shape), 0.02, transform=axis_mark, linestyle="none", clip_on=False,
                        marker="x" if r.status == "fail" else "v", markersize=7, color=style["color"])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")  # rates span three orders of magnitude
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
    ax.set_title(f"gemmbench sizes on {gpu.get('name') or record.device.upper()} ({'; '.join(keys)})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig
