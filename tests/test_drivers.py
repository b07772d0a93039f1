"""What one GEMM call launches, per driver, with a stand-in for pycuda."""

import dataclasses

import pytest

from gemmbench.backend import Shape, SkipKernel
from gemmbench.gpu import drivers
from gemmbench.spec import KernelSpec, ceil_div


class FakeFunction:
    def __init__(self, name, calls):
        self.name, self.calls, self.attributes = name, calls, {}

    def prepare(self, arg_format):
        self.arg_format = arg_format

    def set_attribute(self, attribute, value):
        self.attributes[attribute] = value

    def prepared_async_call(self, grid, block, stream, *args, shared_size=0):
        assert len(args) == len(self.arg_format), (self.name, args, self.arg_format)
        self.calls.append((self.name, grid, block, args, shared_size))


class FakeModule:
    def __init__(self):
        self.calls = []

    def get_function(self, name):
        return FakeFunction(name, self.calls)


SPEC = KernelSpec(99, "test", "gpu", "-", source="x.cu", params={"SPLITS": 1},
                  block=lambda p: (128, 1, 1), grid=lambda M, N, K, p: (2, 3, p.get("SPLITS", 1)))


def context(spec=SPEC, params=None, shape=Shape(100, 60, 50)):
    module, allocated = FakeModule(), []

    def workspace(floats):
        allocated.append(floats)
        return 1000 + len(allocated)

    ctx = drivers.LaunchContext(spec, dict(spec.params if params is None else params), module, shape,
                                "A", "B", "C", "stream", 132, 227 * 1024, workspace,
                                lambda function, n: function.set_attribute("max dynamic shared", n))
    return ctx, module.calls, allocated


def test_single_is_one_launch_of_the_common_signature():
    ctx, calls, allocated = context()
    drivers.build(ctx)(0.5, 2.0)
    assert calls == [("sgemm", (2, 3, 1), (128, 1, 1), (100, 60, 50, 0.5, "A", "B", 2.0, "C"), 0)]
    assert allocated == []


def test_split_k_sums_slices_into_a_workspace_then_reduces():
    spec = dataclasses.replace(SPEC, driver="split_k")
    ctx, calls, allocated = context(spec, {"SPLITS": 4})
    drivers.build(ctx)(0.75, -1.5)
    assert allocated == [4 * 100 * 60]
    (name1, grid1, _, args1, _), (name2, grid2, block2, args2, _) = calls
    assert name1 == "sgemm" and grid1 == (2, 3, 4) and args1[-1] == 1001
    assert name2 == "reduce_splits" and args2 == (100, 60, 60, 4, 0.75, 1001, -1.5, "C") and block2 == (256, 1, 1)


def test_split_k_with_one_split_needs_no_workspace():
    spec = dataclasses.replace(SPEC, driver="split_k")
    ctx, calls, allocated = context(spec, {"SPLITS": 1})
    drivers.build(ctx)(1.0, 0.0)
    assert [c[0] for c in calls] == ["sgemm"] and calls[0][3][-1] == 0 and allocated == []


def test_presplit_a_splits_a_then_multiplies():
    spec = dataclasses.replace(SPEC, driver="presplit_a", smem=lambda p: 100 * 1024)
    ctx, calls, allocated = context(spec)
    drivers.build(ctx)(1.0, 0.0)
    assert allocated == [100 * 50, 100 * 50]
    assert calls[0][0] == "split_tf32" and calls[0][3] == (5000, "A", 1001, 1002)
    assert calls[1][0] == "sgemm" and calls[1][3][4:6] == (1001, 1002) and calls[1][4] == 100 * 1024
    assert calls[1][3][-1] == "A"  # A as passed, last: the kernel recomputes in FP32 a sum the split made NaN
    assert ctx.module is not None


def test_transpose_a_writes_a_padded_transpose_then_multiplies_it():
    spec = dataclasses.replace(SPEC, driver="transpose_a", smem=lambda p: 64 * 1024)
    ctx, calls, allocated = context(spec, params={"BM": 64, "BK": 16})  # shape 100 x 60 x 50
    drivers.build(ctx)(0.5, 2.0)
    assert allocated == [64 * 128]  # Kp x Mp = 64 x 128 (K up to BK, M up to BM)
    assert calls[0][0] == "transpose_pad" and calls[0][1] == (1, 2, 1)  # 64 x 64 tiles: K along x, M along y
    assert calls[0][3] == (100, 50, 128, 64, "A", 1001)
    assert calls[1][0] == "sgemm" and calls[1][3] == (100, 60, 50, 0.5, 1001, "B", 2.0, "C") and calls[1][4] == 64 * 1024


def test_too_much_shared_memory_or_grid_is_a_skip():
    spec = dataclasses.replace(SPEC, smem=lambda p: 300 * 1024)
    with pytest.raises(SkipKernel, match="shared memory"):
        drivers.build(context(spec)[0])
    spec = dataclasses.replace(SPEC, grid=lambda M, N, K, p: (1, 70000, 1))
    with pytest.raises(SkipKernel, match="65535"):
        drivers.build(context(spec)[0])


def test_a_persistent_rung_launches_one_block_per_sm_at_most():
    """What `info` reports as the grid is what the tma driver launches (ncu saw 132 blocks for rung 17)."""
    from gemmbench.gpu.drivers import launched_grid
    assert launched_grid((512, 1, 1), {"PERSISTENT": 1}, 132) == (132, 1, 1)
    assert launched_grid((100, 1, 1), {"PERSISTENT": 1}, 132) == (100, 1, 1)
    assert launched_grid((512, 1, 1), {"PERSISTENT": 0}, 132) == (512, 1, 1)
    assert launched_grid((16, 8, 1), {}, 132) == (16, 8, 1)


def _any_shape(params, shape):
    spec = dataclasses.replace(SPEC, driver="any_shape", smem=lambda p: 64 * 1024)
    ctx, calls, allocated = context(spec, {"BM": 64, "BK": 16, "SPLITS": 1, "PACK": 1, "VECTOR": 0, **params}, shape)
    drivers.build(ctx)(0.5, 2.0)
    return calls, allocated


def test_any_shape_aligned_row_major_is_one_launch_with_the_strides():
    calls, allocated = _any_shape({"KMAJOR_A": 0}, Shape(100, 60, 52))
    assert calls == [("sgemm", (2, 3, 1), (128, 1, 1), (100, 60, 52, 0.5, "A", 52, "B", 60, 2.0, "C", 0, 60),
                      64 * 1024)]
    assert allocated == []


def test_any_shape_pads_unaligned_rows_of_a_and_b_and_stores_c_in_place_unsplit():
    calls, allocated = _any_shape({"KMAJOR_A": 0}, Shape(100, 61, 50))  # K = 50, N = 61: rows of 200 and 244 B
    assert allocated == [100 * 52, 50 * 64]  # A and B padded to 52 and 64 columns; C is written as it is
    assert [c[0] for c in calls] == ["copy_rows", "copy_rows", "sgemm"]
    assert calls[0][3] == (100, 50, "A", 52, 1001) and calls[1][3] == (50, 61, "B", 64, 1002)
    assert calls[2][3] == (100, 61, 50, 0.5, 1001, 52, 1002, 64, 2.0, "C", 0, 61)


def test_any_shape_pads_a_and_b_in_one_launch_where_the_helper_files_load():
    """Both copies in one grid (cuda_src/pad_pair.cu): blocks with y = 0 copy A, y = 1 copy B."""
    spec = dataclasses.replace(SPEC, driver="any_shape", smem=lambda p: 64 * 1024)
    ctx, calls, allocated = context(spec, {"BM": 64, "BK": 16, "SPLITS": 1, "PACK": 1, "VECTOR": 0, "KMAJOR_A": 0},
                                    Shape(100, 61, 50))
    helpers = []

    def helper(source, entry):
        helpers.append((source, entry))
        return FakeFunction(entry, calls)
    drivers.build(dataclasses.replace(ctx, helper=helper))(0.5, 2.0)
    assert helpers == [("pad_pair.cu", "copy_rows_pair")]
    assert allocated == [100 * 52, 50 * 64]
    assert [c[0] for c in calls] == ["copy_rows_pair", "sgemm"]
    assert calls[0][1] == (ceil_div(100 * 50, 1024), 2, 1)  # a thread per 4 floats of the larger copy (A)
    assert calls[0][3] == (100, 50, "A", 52, 1001, 50, 61, "B", 64, 1002)
    assert calls[1][3] == (100, 61, 50, 0.5, 1001, 52, 1002, 64, 2.0, "C", 0, 61)


def test_any_shape_pads_one_operand_with_copy_rows_even_with_the_helper_files():
    spec = dataclasses.replace(SPEC, driver="any_shape", smem=lambda p: 64 * 1024)
    ctx, calls, allocated = context(spec, {"BM": 64, "BK": 16, "SPLITS": 1, "PACK": 1, "VECTOR": 0, "KMAJOR_A": 0},
                                    Shape(100, 61, 52))  # K = 52: A's rows are 16-byte multiples
    drivers.build(dataclasses.replace(ctx, helper=lambda source, entry: pytest.fail("a helper was loaded")))(1, 0)
    assert [c[0] for c in calls] == ["copy_rows", "sgemm"] and allocated == [52 * 64]


def test_any_shape_split_gives_unaligned_c_padded_partials_reduced_four_floats_a_thread():
    calls, allocated = _any_shape({"KMAJOR_A": 0, "SPLITS": 2}, Shape(1000, 61, 50))
    assert allocated == [1000 * 52, 50 * 64, 2 * 1000 * 64]  # A, B, and the two splits' sums in rows of 64
    assert [c[0] for c in calls] == ["copy_rows", "copy_rows", "sgemm", "reduce_splits"]
    assert calls[2][3][-2:] == (1003, 64)
    # reduce_splits takes the padded rows four floats a thread: a thread per 4 of the 1000 x 64 floats
    assert calls[3][1] == (ceil_div(1000 * 64, 1024), 1, 1) and calls[3][3] == (1000, 61, 64, 2, 0.5, 1003, 2.0, "C")


def test_an_unpadded_reduction_of_an_odd_element_count_goes_two_elements_a_thread():
    spec = dataclasses.replace(SPEC, driver="split_k")
    ctx, calls, _ = context(spec, {"SPLITS": 2}, Shape(101, 61, 50))  # 6161 elements: no float4 view
    drivers.build(ctx)(1.0, 0.0)
    assert calls[1][0] == "reduce_splits" and calls[1][1] == (ceil_div(101 * 61, 512), 1, 1)


def test_any_shape_without_pack_reads_unaligned_rows_in_place():
    calls, allocated = _any_shape({"KMAJOR_A": 0, "PACK": 0}, Shape(100, 61, 50))
    assert [c[0] for c in calls] == ["sgemm"] and calls[0][3][4:8] == ("A", 50, "B", 61) and allocated == []


def test_any_shape_k_major_transposes_a_and_splits_k():
    calls, allocated = _any_shape({"KMAJOR_A": 1, "SPLITS": 3}, Shape(100, 60, 50))
    assert allocated == [64 * 128, 3 * 100 * 60]  # At: Kp x Mp; the partials
    assert [c[0] for c in calls] == ["transpose_pad", "sgemm", "reduce_splits"]
    assert calls[1][1] == (2, 3, 3) and calls[1][3] == (100, 60, 50, 0.5, 1001, 128, "B", 60, 2.0, "C", 1002, 60)
    assert calls[2][3] == (100, 60, 60, 3, 0.5, 1002, 2.0, "C")


def test_any_shape_refuses_a_vector_kernel_for_a_long_short_side():
    with pytest.raises(SkipKernel, match="M <= 8"):
        _any_shape({"KMAJOR_A": 0, "VECTOR": 1}, Shape(100, 60, 50))


def test_many_splits_get_a_block_per_32_elements_for_the_reduction():
    spec = dataclasses.replace(SPEC, driver="split_k")
    ctx, calls, _ = context(spec, {"SPLITS": 32})  # 100 x 60 = 6000 elements
    drivers.build(ctx)(1.0, 0.0)
    assert calls[1][0] == "reduce_splits" and calls[1][1] == (188, 1, 1)
    ctx, calls, _ = context(spec, {"SPLITS": 31})
    drivers.build(ctx)(1.0, 0.0)
    assert calls[1][1] == (ceil_div(6000, 1024), 1, 1)  # grid-stride, 4 elements a thread
