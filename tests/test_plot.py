"""The sweep plot: every line tells itself apart, no point vanishes silently."""

import pytest

pytest.importorskip("matplotlib")

from matplotlib.colors import to_rgb  # noqa: E402

from gemmbench.backend import Shape  # noqa: E402
from gemmbench.output.plot import plot_sweep, sweep_figure  # noqa: E402
from gemmbench.records.results import NOISY, KernelResult, RunRecord  # noqa: E402
from gemmbench.verify import Verification  # noqa: E402


def cpu_result(kid, threads, size, status="pass", flags=()):
    name = "OpenBLAS" if kid == 0 else f"rung{kid}"
    return KernelResult("cpu", kid, name, "fp32", Shape(size, size, size), status, threads=threads,
                        reason=None if status == "pass" else "too slow",
                        verification=Verification(1e-7, 1e-4, 0) if status == "pass" else None,
                        samples=[1e-4 * size] * 3 if status == "pass" else [], flags=list(flags))


def cpu_sweep():
    rows = []
    for size in (64, 128, 256):
        rows += [cpu_result(0, 1, size)] + [cpu_result(k, 1, size) for k in range(1, 6)]
        rows += [cpu_result(0, 2, size), cpu_result(6, 2, size, "skip" if size == 256 else "pass",
                                                    [NOISY] if size == 64 else ())]
    return RunRecord("sizes", "cpu", {}, {}, rows)


def test_cpu_plot_title_lines_and_marks():
    fig = sweep_figure(cpu_sweep())
    ax = fig.axes[0]
    title = ax.get_title()
    assert "TF32" not in title and "black: OpenBLAS" in title and "v: skipped" in title and "hollow" in title
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    one, two = lines["0 OpenBLAS [1T]"], lines["0 OpenBLAS [2T]"]
    assert one.get_linestyle() != two.get_linestyle()  # the two baselines differ
    rungs = [lines[f"{k} rung{k} [{1 if k < 6 else 2}T]"] for k in range(1, 7)]
    for a, b in zip(rungs, rungs[1:]):  # neighbours: another colour and another marker
        assert to_rgb(a.get_color()) != to_rgb(b.get_color()) and a.get_marker() != b.get_marker()
    skipped = [line for line in ax.get_lines() if line.get_marker() == "v" and line.get_label().startswith("_")]
    assert len(skipped) == 1 and skipped[0].get_xdata()[0] == pytest.approx(256)


def test_plot_writes_a_png(tmp_path):
    path = tmp_path / "s.png"
    plot_sweep(cpu_sweep(), path)
    assert path.read_bytes()[:4] == b"\x89PNG"
