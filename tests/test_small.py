"""The small-product path of rungs 17 and 18 (gemmbench.rungs.small,
cuda_src/small_gemm.cu): where it applies (the measured limits), that the
rungs take it exactly there and say so, that it is one launch of the right
kernel with the right arguments (a stand-in for pycuda), that it is not
compiled into the rung, and that the rung's own module is then never built."""

import dataclasses

import pytest

from gemmbench.backend import Shape
from gemmbench.gpu import drivers
from gemmbench.gpu.backend import _OnFirstUse
from gemmbench.gpu.compile import nvcc_options
from gemmbench.rungs import get_spec, small
from gemmbench.rungs.gpu import R17_CHOICE, R18_CHOICE
from test_drivers import FakeFunction, context

RUNG17, RUNG18 = get_spec("gpu", 17), get_spec("gpu", 18)


@pytest.mark.parametrize("shape, prepasses, expected", [
    ((3, 5, 7), True, True), ((200, 200, 201), True, True), ((512, 512, 32), True, True),
    ((64, 64, 256), True, True), ((1 << 23, 1, 1), True, True), ((64, 64, 512), True, False),
    ((256, 256, 256), True, False), ((1 << 23, 1, 2), True, False),  # K past 256, or past 2^23 multiply-adds
    ((256, 256, 64), False, True), ((8, 8, 8), False, True),
    ((128, 128, 128), False, False), ((64, 64, 65), False, False)])  # no pre-pass to save: K at most 64
def test_the_path_applies_within_the_measured_limits(shape, prepasses, expected):
    assert small.applies(*shape, prepasses) is expected


def test_rung_18_always_runs_a_pre_pass_and_rung_17_where_rows_need_padding_or_b_is_transposed():
    assert all(R18_CHOICE.prepasses(*s) for s in [(128, 128, 128), (3, 5, 7), (64, 64, 64)])
    assert not R17_CHOICE.prepasses(128, 128, 128) and not R17_CHOICE.prepasses(64, 8, 4)
    assert R17_CHOICE.prepasses(128, 128, 127) and R17_CHOICE.prepasses(128, 126, 128)


@pytest.mark.parametrize("spec, shape, expected", [
    (RUNG18, (128, 128, 128), True), (RUNG18, (3, 5, 7), True), (RUNG18, (256, 256, 256), False),
    (RUNG18, (64, 64, 512), False), (RUNG17, (3, 5, 7), True), (RUNG17, (100, 100, 101), True),
    (RUNG17, (512, 512, 32), True), (RUNG17, (128, 128, 128), False), (RUNG17, (4096, 4096, 4096), False)],
    ids=str)
def test_top_rungs_take_the_small_path_exactly_where_it_applies(spec, shape, expected):
    p = spec.params_for(*shape, 132)
    line = spec.explain(*shape, 132, p)
    assert spec.invalid_reason(p) is None
    if expected:
        assert p["SMALL"] == 1 and "GEMV" not in p
        assert "small_gemm of cuda_src/small_gemm.cu" in line and f"K = {shape[2]}" in line
        assert spec.shape_candidates(*shape, 132) == [p]  # a tune tries no tile there
    else:
        assert "SMALL" not in p and "small_gemm" not in line
        assert all("SMALL" not in c for c in spec.shape_candidates(*shape, 132))


def test_a_gemv_takes_the_gemv_path_not_the_small_one():
    assert RUNG18.params_for(1, 5, 7, 132).get("GEMV") == 1 and "SMALL" not in RUNG18.params_for(1, 5, 7, 132)


@pytest.mark.parametrize("spec", [RUNG17, RUNG18], ids=lambda s: f"rung{s.id}")
def test_small_is_read_by_the_driver_not_compiled_into_the_rung(spec):
    p = spec.params_for(3, 5, 7, 132)
    assert nvcc_options(spec, p) == nvcc_options(spec, {k: v for k, v in p.items() if k != "SMALL"})


@pytest.mark.parametrize("shape, grid", [(Shape(3, 5, 7), (1, 1, 1)), (Shape(33, 65, 100), (3, 2, 1)),
                                         (Shape(200, 200, 201), (7, 7, 1))], ids=str)
def test_a_small_product_is_one_launch_of_small_gemm_over_32x32_tiles(shape, grid):
    ctx, calls, allocated = context(params={"SMALL": 1}, shape=shape)
    helpers = []

    def helper(source, entry):
        helpers.append((source, entry))
        return FakeFunction(entry, calls)
    drivers.build(dataclasses.replace(ctx, helper=helper))(0.5, -2.0)
    assert helpers == [("small_gemm.cu", "small_gemm")] and allocated == []
    assert calls == [("small_gemm", grid, (256, 1, 1), (shape.M, shape.N, shape.K, 0.5, "A", "B", -2.0, "C"), 0)]


def test_the_rungs_own_module_is_built_only_when_a_driver_asks_it_for_a_kernel():
    loads = []

    class Module:
        def get_function(self, name):
            return name

    module = _OnFirstUse(lambda: loads.append(1) or Module())
    assert loads == []
    assert module.get_function("sgemm") == "sgemm" and module.get_function("split_tf32") == "split_tf32"
    assert loads == [1]


def test_the_verbose_compile_line_names_the_file_nvcc_builds():
    """At a GEMV or small product the rung's own file is never compiled: the line names the helper instead."""
    from gemmbench.gpu.backend import compile_line
    rung28 = get_spec("gpu", 28)
    tiles = rung28.params_for(1000, 1000, 1000, 132)
    line = compile_line(rung28, tiles, (9, 0))
    assert line.startswith("nvcc -cubin 28_any_shape.cu ") and "-DBM=" in line and "-arch sm_90" in line
    gemv_line = compile_line(rung28, rung28.params_for(1, 4096, 4096, 132), (9, 0))
    assert gemv_line.startswith("nvcc -cubin gemv.cu -O3 -lineinfo -arch sm_90 ") and "-DBM" not in gemv_line
    assert "in place of 28_any_shape.cu" in gemv_line
    small_line = compile_line(RUNG17, RUNG17.params_for(3, 5, 7, 132), (9, 0))
    assert small_line.startswith(f"nvcc -cubin {small.SOURCE} ") and "in place of 17_tf32_tma_ws.cu" in small_line
