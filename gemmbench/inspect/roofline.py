"""The roofline: attainable FLOP/s = min(compute peak, intensity x DRAM bandwidth),
with intensity = FLOPs / DRAM bytes, and profiled kernels placed on it.

Everything comes from the ncu profile, at the clocks the kernel ran at: the
FP32 peak is the FFMA lanes per cycle x 2 x SM clock, the TF32 tensor peak
(drawn when the kernel used tensor cores) the dense wgmma or mma.sync TF32
operations per cycle x SM clock, the bandwidth DRAM bytes per cycle x DRAM
clock. A kernel's FLOPs are those it executed, as ncu counted them: FP32
instructions (an FFMA is two) plus TF32 tensor operations.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..fsutil import write_new
from ..validate import plot_format
from .profile import KernelProfile, dram_bytes

_FP32_OPS = (("ffma", 2), ("fadd", 1), ("fmul", 1))  # FLOPs per thread instruction
# dense TF32 tensor operations: wgmma (sm_90) and mma.sync
_TENSOR_PATHS = ("sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum",
                 "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum")


def _fp32_flops(kernel: KernelProfile, seconds: float) -> float | None:
    """FP32 FLOPs from the SASS thread-instruction counters: their totals when
    collected, else (as in ncu's own roofline) their rates per elapsed cycle
    times the elapsed cycles."""
    total = 0.0
    for op, weight in _FP32_OPS:
        name = f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"
        count = kernel.get(name)
        if count is None:
            rate, hz = kernel.get(name + ".per_cycle_elapsed"), kernel.get("smsp__cycles_elapsed.avg.per_second")
            if rate is None or hz is None:
                return None
            count = rate * hz * seconds
        total += weight * count
    return total


def executed_flops(kernel: KernelProfile) -> tuple[float, float] | None:
    """(FP32 FLOPs, TF32 tensor FLOPs) the kernel executed; None without the counters."""
    duration = kernel.get("gpu__time_duration.sum")
    fp32 = _fp32_flops(kernel, duration * 1e-9) if duration else None
    if fp32 is None:
        return None
    return fp32, sum(kernel.get(path) or 0.0 for path in _TENSOR_PATHS)


@dataclass(frozen=True)
class Roof:
    peak_flops: float  # FP32 FLOP/s
    peak_bandwidth: float  # DRAM bytes/s
    tensor_flops: float | None = None  # TF32 tensor FLOP/s, when the kernel used tensor cores

    def ceiling(self, tensor: bool = False) -> float:
        return self.tensor_flops if tensor and self.tensor_flops else self.peak_flops

    def ridge(self, tensor: bool = False) -> float:
        """The intensity (FLOP/byte) where the memory roof meets the compute roof."""
        return self.ceiling(tensor) / self.peak_bandwidth

    def attainable(self, intensity: float, tensor: bool = False) -> float:
        return min(self.ceiling(tensor), intensity * self.peak_bandwidth)


@dataclass(frozen=True)
class Point:
    label: str
    flops: float
    dram_bytes: float
    seconds: float
    tensor: bool = False  # most of its FLOPs on tensor cores

    @property
    def intensity(self) -> float:
        return self.flops / self.dram_bytes if self.dram_bytes else float("inf")

    @property
    def flops_per_second(self) -> float:
        return self.flops / self.seconds

    def share_of_roof(self, roof: Roof) -> float:
        """Measured FLOP/s over what the roofline allows at this intensity."""
        return self.flops_per_second / roof.attainable(self.intensity, self.tensor)


def roof_from_profile(kernel: KernelProfile) -> Roof | None:
    sm_hz = kernel.get("sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second")
    ffma_per_cycle = kernel.get("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained")
    bytes_per_cycle = kernel.get("dram__bytes.sum.peak_sustained")
    dram_hz = kernel.get("dram__cycles_elapsed.avg.per_second")
    if not (sm_hz and ffma_per_cycle and bytes_per_cycle and dram_hz):
        return None
    tensor = None
    for path in _TENSOR_PATHS:  # the tensor path the kernel used, if any
        if kernel.get(path) and kernel.get(path + ".peak_sustained"):
            tensor = kernel.get(path + ".peak_sustained") * sm_hz
            break
    return Roof(2 * ffma_per_cycle * sm_hz, bytes_per_cycle * dram_hz, tensor)


def point_for(kernel: KernelProfile, label: str) -> Point | None:
    seconds = kernel.get("gpu__time_duration.sum")
    nbytes = dram_bytes(kernel)
    flops = executed_flops(kernel)
    if not seconds or not nbytes or flops is None or not sum(flops):
        return None
    fp32, tensor = flops
    return Point(label, fp32 + tensor, nbytes, seconds * 1e-9, tensor > fp32)


def plot_roofline(roof: Roof, points: list[Point], path: Path, title: str, overwrite: bool = False,
                  option: str = "--plot") -> None:
    """The roofline into ``path``, through gemmbench's one writer (fsutil.write_new)."""
    import matplotlib  # optional (the plot extra): only profile --plot needs it
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    tensor = roof.tensor_flops is not None
    intensities = [p.intensity for p in points] + [roof.ridge(), roof.ridge(tensor)]
    lo, hi = min(intensities) / 16, max(intensities) * 8
    xs = [lo * (hi / lo) ** (i / 400) for i in range(401)]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    ceilings = [(False, f"FP32 roof: {roof.peak_flops / 1e12:.1f} TFLOP/s", "-")]
    if tensor:
        ceilings.append((True, f"TF32 tensor roof: {roof.tensor_flops / 1e12:.0f} TFLOP/s", "--"))
    for use_tensor, label, style in ceilings:
        ax.plot(xs, [roof.attainable(x, use_tensor) / 1e12 for x in xs], color="black", linestyle=style,
                linewidth=2, label=f"{label}, DRAM {roof.peak_bandwidth / 1e12:.2f} TB/s")
        ridge = roof.ridge(use_tensor)
        ax.axvline(ridge, color="grey", linestyle=":", linewidth=1)
        ax.text(ridge * 1.08, roof.ceiling(use_tensor) / 1e12 * 0.8, f"ridge {ridge:.0f} FLOP/B", fontsize=8,
                color="grey")
    for p in points:
        y = p.flops_per_second / 1e12
        ax.scatter([p.intensity], [y], s=60, zorder=3,
                   label=f"{p.label}: {y:.1f} TFLOP/s at {p.intensity:.0f} FLOP/B "
                         f"({100 * p.share_of_roof(roof):.0f}% of its roof)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))  # 1-2-5 labels, plain numbers
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("arithmetic intensity (executed FLOP per DRAM byte)")
    ax.set_ylabel("TFLOP/s (executed, as ncu counted)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    try:
        write_new(path, lambda f: fig.savefig(f, format=plot_format(path, option), dpi=120), overwrite, option)
    finally:
        plt.close(fig)
