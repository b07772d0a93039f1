"""The roofline: attainable FLOP/s = min(peak FLOP/s, intensity x DRAM bandwidth),
with intensity = FLOPs / DRAM bytes, and profiled kernels placed on it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .profile import KernelProfile, counted_fp32_flops, dram_bytes


@dataclass(frozen=True)
class Roof:
    peak_flops: float  # FLOP/s
    peak_bandwidth: float  # DRAM bytes/s

    @property
    def ridge(self) -> float:
        """The intensity (FLOP/byte) where the memory roof meets the compute roof."""
        return self.peak_flops / self.peak_bandwidth

    def attainable(self, intensity: float) -> float:
        return min(self.peak_flops, intensity * self.peak_bandwidth)


@dataclass(frozen=True)
class Point:
    label: str
    flops: float
    dram_bytes: float
    seconds: float

    @property
    def intensity(self) -> float:
        return self.flops / self.dram_bytes if self.dram_bytes else float("inf")

    @property
    def flops_per_second(self) -> float:
        return self.flops / self.seconds

    def share_of_roof(self, roof: Roof) -> float:
        """Measured FLOP/s over what the roofline allows at this intensity."""
        return self.flops_per_second / roof.attainable(self.intensity)


def roof_from_profile(kernel: KernelProfile, fallback_peak_flops: float | None = None) -> Roof | None:
    """Peaks at the clocks the kernel ran at, from ncu's roofline metrics:
    FFMA lanes per cycle x 2 x SM clock, DRAM bytes per cycle x DRAM clock."""
    ffma_per_cycle = kernel.get("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained")
    sm_hz = kernel.get("sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second")
    bytes_per_cycle = kernel.get("dram__bytes.sum.peak_sustained")
    dram_hz = kernel.get("dram__cycles_elapsed.avg.per_second")
    peak_flops = 2 * ffma_per_cycle * sm_hz if ffma_per_cycle and sm_hz else fallback_peak_flops
    if not peak_flops or not bytes_per_cycle or not dram_hz:
        return None
    return Roof(peak_flops, bytes_per_cycle * dram_hz)


def point_for(kernel: KernelProfile, label: str, gemm_flops: float | None) -> Point | None:
    """A profiled kernel on the roofline. The GEMM kernel itself is credited
    with 2*M*N*K (tensor-core FLOPs never reach ncu's FP32 counters); helper
    kernels (reductions, splits) with the FP32 operations ncu counted."""
    seconds = kernel.get("gpu__time_duration.sum")
    nbytes = dram_bytes(kernel)
    flops = gemm_flops if gemm_flops is not None else counted_fp32_flops(kernel)
    if not seconds or not nbytes or not flops:
        return None
    return Point(label, flops, nbytes, seconds * 1e-9)


def plot_roofline(roof: Roof, points: list[Point], path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    intensities = [p.intensity for p in points] + [roof.ridge]
    lo, hi = min(intensities) / 8, max(intensities) * 8
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    ax.plot(xs, [roof.attainable(x) / 1e12 for x in xs], color="black", linewidth=2,
            label=f"roof: {roof.peak_flops / 1e12:.1f} TFLOP/s FP32, {roof.peak_bandwidth / 1e12:.2f} TB/s DRAM")
    ax.axvline(roof.ridge, color="grey", linestyle=":", linewidth=1)
    ax.annotate(f"ridge {roof.ridge:.1f} FLOP/B", (roof.ridge, roof.peak_flops / 1e12 / 30), rotation=90,
                fontsize=8, color="grey", ha="right")
    for p in points:
        y = p.flops_per_second / 1e12
        ax.scatter([p.intensity], [y], s=50, zorder=3,
                   label=f"{p.label}: {y:.2f} TFLOP/s at {p.intensity:.1f} FLOP/B "
                         f"({100 * p.share_of_roof(roof):.0f}% of roof)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    tmp.replace(path)
