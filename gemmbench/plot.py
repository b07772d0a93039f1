"""GFLOP/s against size for each kernel of a sweep (matplotlib, optional)."""

from __future__ import annotations

from pathlib import Path

from .report import BASELINE_NAME, kernel_label
from .results import RunRecord


def require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install 'gemmbench[plot]'") from None


def plot_sweep(record: RunRecord, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5.5))
    ax.set_prop_cycle(color=plt.cm.tab20.colors)  # a dozen rungs need a dozen distinct colours
    lines: dict[tuple, list] = {}
    for r in record.results:
        if r.status == "pass":
            lines.setdefault((r.device, r.kernel_id, kernel_label(r), r.precision), []).append(
                (r.shape.flops ** (1 / 3) / 2 ** (1 / 3), r.gflops))
    for (device, kid, label, precision), points in lines.items():
        xs, ys = zip(*sorted(points))
        style = dict(linewidth=2.5, color="black") if kid == 0 else dict(linewidth=1.2)
        if precision == "tf32":  # not FP32-accurate: drawn apart
            style["linestyle"] = "--"
        ax.plot(xs, ys, marker="o", markersize=3, label=f"{kid} {label}", **style)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")  # rates span three orders of magnitude
    ax.set_xlabel("size (cube root of M*N*K)")
    ax.set_ylabel("GFLOP/s (median, log scale)")
    gpu = record.environment.get("gpu") or {}
    ax.set_title(f"gemmbench sizes on {gpu.get('name') or record.device.upper()} "
                 f"(black: {BASELINE_NAME[record.device]}; dashed: TF32)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
