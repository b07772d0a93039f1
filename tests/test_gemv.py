"""The GEMV path of rungs 17, 18 and 28 (gemmbench.rungs.gemv, cuda_src/gemv.cu)
and of rungs 30-33 (gemv_bf16.cu, gemv_fp16.cu: gemv16.cuh): chosen by the
shape alone, one launch of the right kernel with the right arguments (a
stand-in for pycuda), not compiled into the rung, and the helper files build
without spills."""

import dataclasses
import re
import shutil

import pytest

from gemmbench.backend import Shape, SkipKernel
from gemmbench.spec import ceil_div
from gemmbench.gpu import drivers
from gemmbench.gpu.compile import BASE_OPTIONS, build_command, expand_file, nvcc_options
from gemmbench.rungs import gemv, get_spec
from test_drivers import FakeFunction, context

TOP_RUNGS = [get_spec("gpu", r) for r in (17, 18, 28)]
HALF_TOPS = [get_spec("gpu", r) for r in (30, 31, 32, 33)]
NVCC = shutil.which("nvcc")


@pytest.mark.parametrize("shape, expected", [((1, 1, 1), True), ((1, 4096, 4096), True), ((4096, 1, 4096), True),
                                              ((2, 2, 1), False), ((3, 5, 7), False), ((4096, 4096, 1), False)])
def test_a_gemv_is_one_row_or_one_column_of_c(shape, expected):
    assert gemv.applies(shape[0], shape[1]) is expected


@pytest.mark.parametrize("spec", TOP_RUNGS, ids=lambda s: f"rung{s.id}")
def test_top_rungs_take_the_gemv_path_exactly_at_gemv_shapes(spec):
    for M, N, K in [(1, 1, 1), (1, 4096, 4096), (4096, 1, 4096), (1, 3, 100000)]:
        p = spec.params_for(M, N, K, 132)
        assert p["GEMV"] == 1 and spec.invalid_reason(p) is None
        assert f"{gemv.kernel_name(M, N, 132)} of cuda_src/gemv.cu" in spec.explain(M, N, K, 132, p)
        assert spec.shape_candidates(M, N, K, 132) == [p]  # a tune tries no tile there
    for M, N, K in [(2, 2, 2), (3, 5, 7), (4096, 4096, 4096), (4096, 16, 4096)]:
        p = spec.params_for(M, N, K, 132)
        assert "GEMV" not in p and "gemv" not in spec.explain(M, N, K, 132, p)
        assert all("GEMV" not in c for c in spec.shape_candidates(M, N, K, 132))


@pytest.mark.parametrize("spec", HALF_TOPS, ids=lambda s: f"rung{s.id}")
def test_the_16_bit_tops_take_their_gemv_path_exactly_at_gemv_shapes(spec):
    helper = gemv.source(spec.precision)
    assert helper == {"bf16": "gemv_bf16.cu", "fp16": "gemv_fp16.cu"}[spec.precision]
    for M, N, K, name in [(1, 1, 1, "gemv16_rows"), (1, 4096, 4096, "gemv16_cols_wide"), (4096, 1, 4096, "gemv16_rows"),
                          (1, 3, 100000, "gemv16_cols_wide"), (1, 14336, 4096, "gemv16_cols")]:
        p = spec.params_for(M, N, K, 132)
        assert p["GEMV"] == 1 and spec.invalid_reason(p) is None
        assert f"{name} of cuda_src/{helper}" in spec.explain(M, N, K, 132, p)
        assert drivers.helper_source(p, spec.precision) == helper
    for M, N, K in [(2, 2, 2), (4096, 16, 4096), (16, 4096, 4096)]:
        p = spec.params_for(M, N, K, 132)
        assert "GEMV" not in p and "gemv" not in spec.explain(M, N, K, 132, p)
    assert "GEMV" not in get_spec("gpu", 26 + spec.id % 2).params_for(1, 4096, 4096, 132)  # rungs 22-27: tiles


@pytest.mark.parametrize("spec", TOP_RUNGS + HALF_TOPS, ids=lambda s: f"rung{s.id}")
def test_gemv_is_read_by_the_driver_not_compiled_into_the_rung(spec):
    p = spec.params_for(4096, 1, 4096, 132)
    assert not any(o.startswith("-DGEMV") for o in nvcc_options(spec, p))
    assert nvcc_options(spec, p) == nvcc_options(spec, {k: v for k, v in p.items() if k != "GEMV"})


def _gemv_context(shape, A=4096, B=8192, C=12288, params=None):
    ctx, calls, _ = context(params={"GEMV": 1} if params is None else params, shape=shape)
    helpers = []

    def helper(source, entry):
        helpers.append((source, entry))
        return FakeFunction(entry, calls)
    return dataclasses.replace(ctx, A=A, B=B, C=C, helper=helper), calls, helpers


def test_a_column_of_c_is_one_launch_of_gemv_rows_with_float4_loads_where_rows_allow():
    ctx, calls, helpers = _gemv_context(Shape(1031, 1, 4096))
    drivers.build(ctx)(0.5, -2.0)
    assert helpers == [("gemv.cu", "gemv_rows")]
    assert calls == [("gemv_rows", (1031, 1, 1), (256, 1, 1), (1031, 4096, 0.5, 4096, 8192, -2.0, 12288, 1), 0)]
    for shape, pointers in [(Shape(1031, 1, 4098), (4096, 8192)), (Shape(1031, 1, 4096), (4100, 8192))]:
        ctx, calls, _ = _gemv_context(shape, *pointers)
        drivers.build(ctx)(1.0, 0.0)
        assert calls[0][3][-1] == 0  # K not a multiple of 4, or A not 16-byte aligned: one float per load


@pytest.mark.parametrize("N, name, block", [(4096, "gemv_cols_wide", 1024), (8448, "gemv_cols_wide", 1024),
                                             (8452, "gemv_cols", 512), (11008, "gemv_cols", 512)])
def test_a_row_of_c_is_one_launch_over_32_columns_a_block_of_1024_threads_while_two_a_sm_hold_them_all(N, name,
                                                                                                       block):
    ctx, calls, helpers = _gemv_context(Shape(1, N, 777))
    drivers.build(ctx)(1.0, 0.0)
    assert helpers == [("gemv.cu", name)] and gemv.kernel_name(1, N, 132) == name
    assert calls == [(name, (ceil_div(N, 32), 1, 1), (block, 1, 1), (N, 777, 1.0, 4096, 8192, 0.0, 12288, 1), 0)]


def test_rows_that_are_not_16_byte_multiples_take_8_columns_a_block_and_one_float_per_load():
    for shape, pointers in [(Shape(1, 4099, 777), (4096, 8192)), (Shape(1, 4096, 777), (4096, 8196))]:
        ctx, calls, _ = _gemv_context(shape, *pointers)
        drivers.build(ctx)(1.0, 0.0)  # rows of B not 16-byte multiples, or B not aligned: 513 blocks of 8 columns
        assert calls == [("gemv_cols", (ceil_div(shape.N, 8), 1, 1), (512, 1, 1),
                          (shape.N, 777, 1.0, *pointers, 0.0, 12288, 0), 0)]
    ctx, calls, _ = _gemv_context(Shape(1, 2000, 777), 4096, 8196)
    drivers.build(ctx)(1.0, 0.0)  # 250 blocks of 8 columns: two to an SM hold them all
    assert calls[0][:3] == ("gemv_cols_wide", (250, 1, 1), (1024, 1, 1))


def test_rows_beyond_the_grid_are_walked_by_a_grid_stride():
    ctx, calls, _ = _gemv_context(Shape(100000, 1, 8))
    drivers.build(ctx)(1.0, 0.0)
    assert calls[0][1] == (32 * 132, 1, 1)


def _gemv16_context(shape, A=4096, B=8192, C=12288, precision="bf16"):
    spec = get_spec("gpu", 32 if precision == "bf16" else 33)
    ctx, calls, helpers = _gemv_context(shape, A, B, C)
    return dataclasses.replace(ctx, spec=spec), calls, helpers


def test_a_16_bit_column_of_c_is_one_launch_of_gemv16_rows_a_warp_a_row_8_values_a_load_where_rows_allow():
    ctx, calls, helpers = _gemv16_context(Shape(1031, 1, 4096))
    drivers.build(ctx)(0.5, -2.0)
    assert helpers == [("gemv_bf16.cu", "gemv16_rows")]
    assert calls == [("gemv16_rows", (129, 1, 1), (256, 1, 1), (1031, 4096, 0.5, 4096, 8192, -2.0, 12288, 1), 0)]
    for shape, pointers in [(Shape(1031, 1, 4100), (4096, 8192)), (Shape(1031, 1, 4096), (4104, 8192))]:
        ctx, calls, _ = _gemv16_context(shape, *pointers, precision="fp16")
        drivers.build(ctx)(1.0, 0.0)  # K not a multiple of 8, or A not 16-byte aligned: one value per load
        assert calls[0][0] == "gemv16_rows" and calls[0][3][-1] == 0
    ctx, calls, _ = _gemv16_context(Shape(100000, 1, 8))
    drivers.build(ctx)(1.0, 0.0)
    assert calls[0][1] == (32 * 132, 1, 1)  # rows past the grid's warps: a grid stride


@pytest.mark.parametrize("N, name, block", [(4096, "gemv16_cols_wide", 1024), (8448, "gemv16_cols_wide", 1024),
                                             (8456, "gemv16_cols", 512), (14336, "gemv16_cols", 512)])
def test_a_16_bit_row_of_c_is_one_launch_over_32_columns_a_block_of_1024_threads_while_two_a_sm_hold_them_all(
        N, name, block):
    ctx, calls, helpers = _gemv16_context(Shape(1, N, 777), precision="fp16")
    drivers.build(ctx)(1.0, 0.0)
    assert helpers == [("gemv_fp16.cu", name)]
    assert calls == [(name, (ceil_div(N, 32), 1, 1), (block, 1, 1), (N, 777, 1.0, 4096, 8192, 0.0, 12288, 1), 0)]


def test_16_bit_rows_that_are_not_16_byte_multiples_take_one_value_a_load_in_the_same_blocks():
    for shape, pointers in [(Shape(1, 4100, 777), (4096, 8192)), (Shape(1, 4096, 777), (4096, 8200))]:
        ctx, calls, _ = _gemv16_context(shape, *pointers)
        drivers.build(ctx)(1.0, 0.0)
        assert calls[0][:3] == ("gemv16_cols_wide", (ceil_div(shape.N, 32), 1, 1), (1024, 1, 1))
        assert calls[0][3][-1] == 0


def test_gemv_at_a_shape_that_is_no_gemv_is_refused():
    ctx, calls, _ = _gemv_context(Shape(2, 2, 2))
    with pytest.raises(SkipKernel, match="GEMV = 1 needs M == 1 or N == 1"):
        drivers.build(ctx)
    assert calls == []


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("helper_file, entries", [("gemv.cu", {"gemv_rows", "gemv_cols", "gemv_cols_wide"}),
                                                  ("gemv_bf16.cu", {"gemv16_rows", "gemv16_cols", "gemv16_cols_wide",
                                                                    "copy_rows16"}),
                                                  ("gemv_fp16.cu", {"gemv16_rows", "gemv16_cols", "gemv16_cols_wide",
                                                                    "copy_rows16"}),
                                                  ("small_gemm.cu", {"small_gemm"}),
                                                  ("pad_pair.cu", {"copy_rows_pair", "copy_rows16_pair", "copy_rows",
                                                                  "copy_rows16", "transpose_pad"})])
def test_the_one_launch_helper_files_compile_without_spills(tmp_path, helper_file, entries):
    """gemv.cu and gemv_bf16.cu / gemv_fp16.cu (here), small_gemm.cu (tests/test_small.py) and pad_pair.cu
    (tests/test_drivers.py): the helper files of rungs 16-18, 22-33 and 28 (pad_pair.cu includes pack.cuh and
    half.cuh, the 16-bit GEMV files half.cuh, whose kernels come along)."""
    src = tmp_path / helper_file
    src.write_text(expand_file(helper_file))
    cmd = build_command(NVCC, (*BASE_OPTIONS, "-Xptxas", "-warn-spills"), "sm_80", None, str(src),
                        str(tmp_path / "helper.cubin"))
    import subprocess
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "spill" not in out.stderr
    code = re.sub(r"//[^\n]*", "", src.read_text())  # not the contract quoted in common.cuh's comments
    kernels = set(re.findall(r'extern "C" __global__ void(?: __launch_bounds__\([^)]*\))?\s+(\w+)\(', code))
    assert kernels == entries
