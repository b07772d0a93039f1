"""benchmarks/ground_truth.py without a GPU: which kernels and shapes it asks
ncu about, and how it reads ncu's CSV (the timing itself runs on the GPU)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gemmbench.backend import Shape

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("ground_truth", ROOT / "benchmarks" / "ground_truth.py")
gt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gt)


def test_a_rung_id_is_its_rung_and_0_p_the_library_row_of_that_precision():
    assert (gt.kernel_spec("19").id, gt.kernel_spec("19").precision) == (19, "fp32")
    assert gt.kernel_spec("0").name == "cuBLAS"
    assert gt.kernel_spec("0:bf16").name == "cuBLAS BF16"
    assert gt.kernel_spec("0:tf32").name == "cuBLAS TF32"
    assert gt.kernel_spec("32:bf16").id == 32  # a rung's own precision may be named


def test_a_rung_of_another_precision_or_an_unknown_id_is_refused():
    with pytest.raises(ValueError, match="has one precision"):
        gt.kernel_spec("32:fp16")
    with pytest.raises(KeyError, match="no GPU rung 99"):
        gt.kernel_spec("99")


def test_shapes_are_cubes_triples_and_shape_files_once_each(tmp_path):
    f = tmp_path / "mine.csv"
    f.write_text("M,N,K\n127,4096,4096\n3,5,7\n")
    assert gt.parse_shapes("128,256", None) == [Shape(128, 128, 128), Shape(256, 256, 256)]
    assert gt.parse_shapes(None, f"2047x2047x2047, 64,{f},128x4096x4096") == [
        Shape(2047, 2047, 2047), Shape(64, 64, 64), Shape(127, 4096, 4096), Shape(3, 5, 7),
        Shape(128, 4096, 4096)]
    assert gt.parse_shapes("64", "64x64x64") == [Shape(64, 64, 64)]
    assert len(gt.parse_shapes(None, str(ROOT / "benchmarks" / "shapes" / "odd.csv"))) >= 5


def test_ncu_units_scale_to_seconds_and_hertz():
    assert gt.unit_scale("nsecond") == 1e-9
    assert gt.unit_scale("usecond") == 1e-6
    assert gt.unit_scale("cycle/nsecond") == pytest.approx(1e9)
    assert gt.unit_scale("Ghz") == 1e9
    with pytest.raises(ValueError, match="furlong"):
        gt.unit_scale("furlong")


def _ncu_csv(launches):
    """ncu --csv --print-units base: a preamble, then one line per kernel and metric."""
    lines = ["==PROF== Connected to process 1", '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"']
    for i, (name, ns, hz) in enumerate(launches):
        lines.append(f'"{i}","{name}","{gt.TIME}","nsecond","{ns:,}"')
        lines.append(f'"{i}","{name}","{gt.CLOCK}","cycle/second","{hz}"')
    return "\n".join(lines)


def test_two_kernels_a_call_add_up_and_only_the_timed_calls_count():
    calls = 3
    launches = [("warm", 1_000_000, 1.0e9)] * (2 * gt.WARMUP_CALLS)  # the warm-up: two kernels a call
    for t in (100, 120, 110):
        launches += [("gemm", t * 1000, 1.5e9), ("reduce", 10_000, 1.5e9)]
    ncu = gt.ncu_calls(gt.parse_ncu_csv(_ncu_csv(launches)), calls)
    assert ncu["per_call"] == 2
    assert ncu["names"] == ["gemm", "reduce"]
    assert ncu["call_s"] == pytest.approx(120e-6)  # the median of 110, 130, 120 us
    assert ncu["kernel_s"] == pytest.approx([110e-6, 10e-6])
    assert ncu["mhz"] == pytest.approx(1500)  # the warm-up's clock is left out


def test_one_time_launches_before_the_first_call_are_left_out():
    launches = [("zero_counters", 2000, 1e9)] * 2 + [("gemm", 1000, 1e9)] * (gt.WARMUP_CALLS + 3)
    ncu = gt.ncu_calls(gt.parse_ncu_csv(_ncu_csv(launches)), 3)
    assert (ncu["per_call"], ncu["names"], ncu["call_s"]) == (1, ["gemm"], pytest.approx(1e-6))
    assert ncu["once"] == ["zero_counters"] * 2


def test_fewer_launches_than_calls_are_an_error():
    launches = [("gemm", 1000, 1e9)] * (gt.WARMUP_CALLS + 2)
    with pytest.raises(ValueError, match="12 kernel launches for 13 calls"):
        gt.ncu_calls(gt.parse_ncu_csv(_ncu_csv(launches)), 3)
