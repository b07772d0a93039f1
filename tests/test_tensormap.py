"""TMA tensor maps on the launch path: what is encoded, how the parameter
block is packed, and which operands need a padded copy. The parameter
offsets are checked against nvcc's own record of them (the cubin's
EIATTR_KPARAM_INFO), so no GPU is needed; GPU tests below check the driver."""

import dataclasses
import shutil
import struct
import subprocess

import numpy as np
import pytest

from gemmbench.backend import Problem, Shape, SkipKernel
from gemmbench.gpu import drivers, tensormap
from gemmbench.gpu.compile import expand_source, nvcc_options, target_for
from gemmbench.rungs import get_spec

NVCC = shutil.which("nvcc")


def kparam_layout(cubin: bytes, entry: str) -> tensormap.ParamLayout:
    """(offset, size) per parameter from the cubin's .nv.info.<entry> section (EIATTR_KPARAM_INFO)."""
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = sections[shstrndx][4]

    def name(offset):
        start = names + offset
        return cubin[start:cubin.index(b"\0", start)].decode()

    info = next(s for s in sections if name(s[0]) == f".nv.info.{entry}")
    data, i, slots = cubin[info[4]:info[4] + info[5]], 0, {}
    while i < len(data):
        fmt, attr = data[i], data[i + 1]
        if fmt == 4:  # EIFMT_SVAL: u16 size, then the payload
            size = struct.unpack_from("<H", data, i + 2)[0]
            if attr == 0x17:  # EIATTR_KPARAM_INFO: index, ordinal, offset, size in bits 18..31
                _, ordinal, offset, word = struct.unpack_from("<IHHI", data, i + 4)
                slots[ordinal] = (offset, (word >> 18) & 0x3FFF)
            i += 4 + size
        else:  # EIFMT_NVAL (2 bytes) / EIFMT_HVAL (4 bytes)
            i += 4 if fmt == 3 else 2
    return tensormap.ParamLayout(tuple(slots[k] for k in sorted(slots)))


@pytest.fixture(scope="module")
def rung16_cubin(tmp_path_factory):
    if NVCC is None:
        pytest.skip("nvcc not on PATH")
    spec, tmp = get_spec("gpu", 16), tmp_path_factory.mktemp("tma")
    arch, code = target_for(spec, (9, 0))
    (tmp / "k.cu").write_text(expand_source(spec))
    subprocess.run([NVCC, "-cubin", "-arch", arch, "-code", code, *nvcc_options(spec), "-o", str(tmp / "k.cubin"),
                    str(tmp / "k.cu")], check=True, capture_output=True)
    return (tmp / "k.cubin").read_bytes()


# --- what is encoded ---------------------------------------------------------

def test_matrix_map_is_innermost_first():
    m = tensormap.matrix_map(rows=100, cols=36, box_rows=256, box_cols=32)
    assert m.global_dims == (36, 100) and m.global_strides == (144,) and m.box == (32, 256)
    assert m.unsupported_reason() is None


def test_row_pitch_not_a_multiple_of_16_bytes_is_refused_with_the_reason():
    reason = tensormap.matrix_map(rows=8, cols=70, box_rows=8, box_cols=32).unsupported_reason()
    assert "row pitch of 70 floats (280 bytes)" in reason and "16 bytes" in reason
    # the same matrix in padded rows is fine: the map stops at 70 columns, the pitch is 72
    assert tensormap.matrix_map(rows=8, cols=70, box_rows=8, box_cols=32, pitch=72).unsupported_reason() is None
    with pytest.raises(tensormap.TensorMapError, match="16 bytes"):
        tensormap.encode(tensormap.matrix_map(rows=8, cols=70, box_rows=8, box_cols=32), 0x10000)


@pytest.mark.parametrize("kwargs, words", [
    (dict(box_rows=300, box_cols=32), "1..256"),
    (dict(box_rows=8, box_cols=64), "exceeds the 128-byte swizzle"),
    (dict(box_rows=8, box_cols=16, swizzle=32), "exceeds the 32-byte swizzle"),
    (dict(box_rows=8, box_cols=2, swizzle=0), "multiple of 16"),
    (dict(box_rows=8, box_cols=32, swizzle=48), "swizzle 48"),
    (dict(box_rows=8, box_cols=32, pitch=16), "shorter than a row"),
])
def test_invalid_maps_say_why(kwargs, words):
    assert words in tensormap.matrix_map(rows=64, cols=64, **kwargs).unsupported_reason()


def test_unaligned_device_address_is_refused():
    with pytest.raises(tensormap.TensorMapError, match="16-byte aligned"):
        tensormap.encode(tensormap.matrix_map(rows=8, cols=64, box_rows=8, box_cols=32), 0x10004)


@pytest.mark.parametrize("cols, pitch", [(1, 4), (4, 4), (5, 8), (70, 72), (4096, 4096)])
def test_pitch_for_tma(cols, pitch):
    assert tensormap.pitch_for_tma(cols) == pitch


# --- the parameter block -----------------------------------------------------

def test_rung16_maps_sit_where_nvcc_put_them(rung16_cubin):
    """The maps come first in the signature, yet not at offset 0: nvcc aligns
    them to 64 bytes of the parameter bank, whose base is not 64-aligned. A
    struct-style packing from offset 0 would hand the kernel garbage."""
    layout = kparam_layout(rung16_cubin, "sgemm")
    assert [size for _, size in layout.slots] == [128, 128, 4, 4, 4, 4, 4, 8]
    assert layout.slots[0][0] != 0 and layout.slots[1][0] - layout.slots[0][0] == 128
    map_a, map_b = bytes(range(128)), bytes(range(128, 256))
    block = tensormap.pack_params(layout, "TTiiiffP", (map_a, map_b, 127, 255, 511, 0.75, -1.5, 0xABCDEF00))
    (oa, _), (ob, _), (om, _), (on, _), (ok, _), (oal, _), (obe, _), (oc, _) = layout.slots
    assert len(block) == layout.size == oc + 8
    assert block[oa:oa + 128] == map_a and block[ob:ob + 128] == map_b
    assert struct.unpack_from("<iii", block, om) == (127, 255, 511) and on == om + 4 and ok == om + 8
    assert struct.unpack_from("<f", block, oal)[0] == 0.75 and struct.unpack_from("<f", block, obe)[0] == -1.5
    assert struct.unpack_from("<Q", block, oc)[0] == 0xABCDEF00
    assert block[:oa] == bytes(oa)  # padding is zero
    tensormap.set_scalar(block, layout, 5, "f", 2.0)
    assert struct.unpack_from("<f", block, oal)[0] == 2.0 and block[oa:oa + 128] == map_a


def test_pack_params_refuses_a_signature_mismatch():
    layout = tensormap.ParamLayout(((48, 128), (176, 4)))
    with pytest.raises(ValueError, match="2 parameters"):
        tensormap.pack_params(layout, "Ti", (bytes(128),))
    with pytest.raises(ValueError, match="4 bytes in the kernel, 8"):
        tensormap.pack_params(layout, "TP", (bytes(128), 5))
    with pytest.raises(ValueError, match="128 bytes, got 64"):
        tensormap.pack_params(layout, "Ti", (bytes(64), 5))


# --- the tma driver, with a stand-in for pycuda ------------------------------

class FakeFunction:
    def __init__(self, name, calls):
        self.name, self.calls = name, calls

    def prepare(self, arg_format):
        self.arg_format = arg_format

    def set_attribute(self, attribute, value):
        pass

    def prepared_async_call(self, grid, block, stream, *args, shared_size=0):
        self.calls.append((self.name, self.arg_format, grid, args, shared_size))


class FakeModule:
    def __init__(self):
        self.calls = []

    def get_function(self, name):
        return FakeFunction(name, self.calls)


def fake_layout(count, split=False, operands=False):
    """What nvcc does for `count - 6` maps then (int M, N, K, float alpha, beta, float* C), and with `split`
    (rungs 17-18, two of the count) then (float* partials, int splits), and with `operands` (3xTF32, two of the
    count) then (const float* A, B): maps 64-aligned in the bank (here: from offset 48), then natural alignment."""
    maps = count - 6 - 2 * split - 2 * operands
    slots = [(48 + 128 * i, 128) for i in range(maps)]
    end = 48 + 128 * maps
    slots += [(end + 4 * i, 4) for i in range(5)] + [(end + 24, 8)]
    if split:
        slots += [(end + 32, 8), (end + 40, 4)]
    if operands:
        slots += [(end + 48, 8), (end + 56, 8)]
    return tensormap.ParamLayout(tuple(slots))


LAYOUT = fake_layout(8)


def tma_context(shape, monkeypatch, rung=16, **params):
    encoded = []
    monkeypatch.setattr(tensormap, "encode", lambda m, address: encoded.append((m, address)) or bytes([len(encoded)]) * 128)
    spec = get_spec("gpu", rung)
    module, allocated = FakeModule(), []

    def workspace(floats):
        allocated.append(floats)
        return 0x100000 * (1 + len(allocated))

    ctx = drivers.LaunchContext(spec, {**spec.params, **params}, module, shape, 0x1000, 0x2000, 0x3000, "stream",
                                132, 227 * 1024, workspace, lambda f, n: None,
                                lambda entry, count: fake_layout(count, "SPLITS" in spec.params,
                                                                 spec.precision == "3xtf32"))
    return ctx, module.calls, allocated, encoded


def test_tma_driver_packs_one_parameter_block(monkeypatch):
    ctx, calls, allocated, encoded = tma_context(Shape(300, 200, 64), monkeypatch)
    drivers.build(ctx)(0.5, 2.0)
    (m_a, addr_a), (m_b, addr_b) = encoded
    assert (addr_a, addr_b) == (0x1000, 0x2000) and allocated == []
    assert (m_a.rows, m_a.cols, m_a.pitch, m_a.box_rows, m_a.box_cols, m_a.swizzle) == (300, 64, 64, 256, 32, 128)
    assert (m_b.rows, m_b.cols, m_b.pitch, m_b.box_rows, m_b.box_cols, m_b.swizzle) == (64, 200, 200, 32, 32, 128)
    [(name, fmt, grid, args, smem)] = calls
    assert name == "sgemm" and fmt == "336s" and smem == ctx.spec.shared_bytes()
    block = args[0]
    assert block[48:176] == bytes([1]) * 128 and block[176:304] == bytes([2]) * 128
    assert struct.unpack_from("<iiiff", block, 304) == (300, 200, 64, 0.5, 2.0)
    assert struct.unpack_from("<Q", block, 328)[0] == 0x3000


def test_tma_driver_copies_operands_whose_rows_tma_cannot_take(monkeypatch):
    ctx, calls, allocated, encoded = tma_context(Shape(10, 7, 5), monkeypatch)  # K = 5 and N = 7 floats per row
    drivers.build(ctx)(1.0, 0.0)
    assert allocated == [10 * 8, 5 * 8]
    (m_a, addr_a), (m_b, addr_b) = encoded
    assert (m_a.cols, m_a.pitch, addr_a) == (5, 8, 0x200000) and (m_b.cols, m_b.pitch, addr_b) == (7, 8, 0x300000)
    assert [c[0] for c in calls] == ["copy_rows", "copy_rows", "sgemm"]  # every call pays for its copies
    assert calls[0][3] == (10, 5, 0x1000, 8, 0x200000) and calls[1][3] == (5, 7, 0x2000, 8, 0x300000)


def test_tma_driver_copies_both_operands_in_one_launch_where_the_helper_files_load(monkeypatch):
    ctx, calls, allocated, encoded = tma_context(Shape(10, 7, 5), monkeypatch)
    ctx = dataclasses.replace(ctx, helper=lambda source, entry: FakeFunction(entry, calls))
    drivers.build(ctx)(1.0, 0.0)
    assert allocated == [10 * 8, 5 * 8]
    assert [address for _, address in encoded] == [0x200000, 0x300000]
    assert [c[0] for c in calls] == ["copy_rows_pair", "sgemm"]  # every call pays for its copies, in one launch
    assert calls[0][2][1:] == (2, 1) and calls[0][3] == (10, 5, 0x1000, 8, 0x200000, 5, 7, 0x2000, 8, 0x300000)


def test_3xtf32_tma_driver_splits_a_and_passes_both_halves(monkeypatch):
    ctx, calls, allocated, encoded = tma_context(Shape(300, 200, 64), monkeypatch, rung=18)
    drivers.build(ctx)(0.5, 2.0)
    assert allocated == [300 * 64, 300 * 64]
    assert [address for _, address in encoded] == [0x200000, 0x300000, 0x2000]  # A_big, A_small, B
    [(split, _, _, split_args, _), (name, fmt, grid, args, _)] = calls
    assert split == "split_tf32" and split_args == (300 * 64, 0x1000, 0x200000, 0x300000)
    block, layout = args[0], fake_layout(13, split=True, operands=True)
    assert name == "sgemm" and fmt == f"{layout.size}s" and grid == (6, 1, 1)  # 3 x 2 tiles of 128 x 128
    assert struct.unpack_from("<iiiff", block, layout.slots[3][0]) == (300, 200, 64, 0.5, 2.0)
    assert struct.unpack_from("<Qi", block, layout.slots[9][0]) == (0, 1)  # unsplit: no partials
    # A and B as passed, last: the kernel sums again in FP32 a sum the split turned into NaN
    assert struct.unpack_from("<QQ", block, layout.slots[11][0]) == (0x1000, 0x2000)


def test_3xtf32_tma_driver_with_a_and_b_swapped_transposes_and_splits_b_and_maps_a_as_the_register_operand(
        monkeypatch):
    """SWAP_AB: C^T = B^T A^T. B (K x N) is transposed into rows of K padded to 16 bytes, then split; the
    kernel takes the swapped problem (its M = N, its N = M), A in boxes of 32 rows x 32 floats."""
    ctx, calls, allocated, encoded = tma_context(Shape(300, 20, 50), monkeypatch, rung=18, BM=32, BN=128,
                                                 STAGES=8, SWAP_AB=1, SPLITS=3)
    drivers.build(ctx)(0.5, 2.0)
    assert allocated == [20 * 52, 300 * 52, 20 * 52, 20 * 52, 3 * 300 * 20]  # B^T, A padded, B^T's halves, partials
    names = [c[0] for c in calls]
    assert names == ["transpose_pad", "copy_rows", "split_tf32", "sgemm", "reduce_splits"]
    assert calls[0][2] == (1, 1, 1) and calls[0][3] == (50, 20, 52, 20, 0x2000, 0x200000)  # B^T: N x 52
    assert calls[1][3] == (300, 50, 0x1000, 52, 0x300000)  # A's rows padded to 52 floats
    assert calls[2][3] == (20 * 52, 0x200000, 0x400000, 0x500000)
    (big, _), (small, _), (a, a_address) = encoded
    assert (big.rows, big.cols, big.pitch, big.box_rows, big.box_cols) == (20, 50, 52, 32, 32)  # B^T, BM rows
    assert (a.rows, a.cols, a.pitch, a.box_rows, a.box_cols, a.swizzle) == (300, 50, 52, 32, 32, 128)
    assert [address for _, address in encoded] == [0x400000, 0x500000, 0x300000]
    _, _, grid, args, _ = calls[3]
    layout = fake_layout(13, split=True, operands=True)
    assert grid == (9, 1, 1)  # C^T in 32 x 128 tiles: 1 x 3, x 3 splits
    assert struct.unpack_from("<iiiff", args[0], layout.slots[3][0]) == (20, 300, 50, 0.5, 2.0)
    assert struct.unpack_from("<QQ", args[0], layout.slots[11][0]) == (0x1000, 0x2000)  # A and B, not swapped
    assert calls[4][3] == (300, 20, 20, 3, 0.5, 0x600000, 2.0, 0x3000)  # the reduction in C's own shape


def test_split_k_tma_rung_sums_into_partials_then_reduces(monkeypatch):
    ctx, calls, allocated, _ = tma_context(Shape(300, 200, 1024), monkeypatch, rung=17, BM=128, BN=128, SPLITS=3)
    drivers.build(ctx)(0.5, 2.0)
    assert allocated == [3 * 300 * 200]
    (name, _, grid, args, _), (reduce, _, _, reduce_args, _) = calls
    layout = fake_layout(10, split=True)
    assert name == "sgemm" and grid == (18, 1, 1)  # 6 tiles x 3 splits (fewer than the SMs)
    assert struct.unpack_from("<Qi", args[0], layout.slots[8][0]) == (0x200000, 3)
    assert reduce == "reduce_splits" and reduce_args == (300, 200, 200, 3, 0.5, 0x200000, 2.0, 0x3000)


@pytest.mark.parametrize("N, b3d, dims, box", [(256, 1, (32, 1024, 8), (32, 32, 2)), (200, 0, (200, 1024), (32, 32))])
def test_rung_17_maps_b_as_32_column_chunks_where_one_load_takes_a_k_tiles_boxes(monkeypatch, N, b3d, dims, box):
    """B3D follows N (a multiple of 32): the B map views the matrix as 32-column chunks side by side, so one
    3-D box of BN / 32 chunks is the K tile's B; elsewhere the 2-D map of one box per 32 columns."""
    from gemmbench.rungs.gpu import R17_CHOICE
    p = R17_CHOICE.rule(300, N, 1024, 132)
    assert (p["BN"], p["B3D"]) == (64, b3d)  # 128 x 64 tiles: two 32-column boxes a K tile
    ctx, calls, _, encoded = tma_context(Shape(300, N, 1024), monkeypatch, rung=17, **p)
    drivers.build(ctx)(1.0, 0.0)
    (_, _), (m_b, address) = encoded
    assert address == 0x2000 and m_b.global_dims == dims and m_b.box == box and m_b.unsupported_reason() is None
    assert drivers.tma_b_map(300, 200, 1024, {**p, "B3D": 1}, 200).unsupported_reason() == (
        "a load of 2 chunks of 32 columns needs the 200 columns to be a multiple of 32")


def test_rung_17s_rule_splits_k_only_where_the_tiles_leave_sms_idle():
    """The rule (off the measured table's shapes; the table is tests/test_tma_choice.py's)."""
    from gemmbench.rungs.gpu import R17_CHOICE
    spec, rule = get_spec("gpu", 17), R17_CHOICE.rule
    assert rule(64, 64, 131072, 132)["SPLITS"] == 128
    assert rule(4096, 4096, 4096, 132)["SPLITS"] == 1
    assert rule(128, 128, 256, 132)["SPLITS"] == 1  # 8 K tiles: too few to split
    assert rule(128, 128, 640, 132)["SPLITS"] == 5  # 20 K tiles: 4 a split
    assert spec.defines(rule(64, 64, 131072, 132)) == spec.defines(rule(64, 64, 4096, 132))


def test_3xtf32_tma_driver_splits_the_padded_copy(monkeypatch):
    ctx, calls, allocated, _ = tma_context(Shape(10, 8, 5), monkeypatch, rung=18)
    drivers.build(ctx)(1.0, 0.0)
    assert allocated == [10 * 8, 10 * 8, 10 * 8]  # the padded copy of A, then its two halves
    assert [c[0] for c in calls] == ["copy_rows", "split_tf32", "sgemm"]
    assert calls[1][3] == (80, 0x200000, 0x300000, 0x400000)


def test_persistent_rung_launches_one_block_per_sm_at_most(monkeypatch):
    ctx, calls, _, _ = tma_context(Shape(4096, 4096, 64), monkeypatch, rung=17)
    drivers.build(ctx)(1.0, 0.0)
    assert calls[0][2] == (132, 1, 1)  # 512 tiles of 256 x 128, walked by 132 blocks
    ctx, calls, _, _ = tma_context(Shape(256, 256, 64), monkeypatch, rung=17)
    drivers.build(ctx)(1.0, 0.0)
    assert calls[0][2] == (2, 1, 1)


@pytest.mark.parametrize("size, tile", [(1024, (128, 64)), (2048, (256, 128)), (4096, (256, 128)), (128, (128, 64)),
                                        (1536, (128, 128))])
def test_tma_rungs_pick_the_largest_tile_that_fills_the_gpu(size, tile):
    """Rung 16's choice, and rung 17's rule (at these squares its measured table may choose otherwise)."""
    from gemmbench.rungs.gpu import R17_CHOICE
    for spec, p in ((get_spec("gpu", 16), get_spec("gpu", 16).params_for(size, size, size, 132)),
                    (get_spec("gpu", 17), R17_CHOICE.rule(size, size, size, 132))):
        assert (p["BM"], p["BN"]) == tile and spec.invalid_reason(p) is None


def test_tma_driver_turns_a_refused_map_into_a_skip(monkeypatch):
    ctx, *_ = tma_context(Shape(64, 64, 64), monkeypatch)

    def refuse(m, address):
        raise tensormap.TensorMapError("cuTensorMapEncodeTiled refused it: CUDA_ERROR_INVALID_VALUE")
    monkeypatch.setattr(tensormap, "encode", refuse)
    with pytest.raises(SkipKernel, match="INVALID_VALUE"):
        drivers.build(ctx)


# --- on the GPU ----------------------------------------------------------------

@pytest.mark.gpu
def test_driver_reports_the_offsets_nvcc_recorded(rung16_cubin):
    import pycuda.autoprimaryctx  # noqa: F401  (a current context)
    assert tensormap.param_layout(rung16_cubin, "sgemm", 8) == kparam_layout(rung16_cubin, "sgemm")


@pytest.mark.gpu
def test_encode_through_the_driver():
    import pycuda.autoprimaryctx  # noqa: F401
    import pycuda.driver as cuda
    buf = cuda.mem_alloc(64 * 72 * 4)
    m = tensormap.matrix_map(rows=64, cols=70, box_rows=64, box_cols=32, pitch=72)
    one, two = tensormap.encode(m, int(buf)), tensormap.encode(m, int(buf))
    assert len(one) == 128 and one == two and any(one)


@pytest.mark.gpu
@pytest.mark.parametrize("rung", [16, 17, 18])
@pytest.mark.parametrize("shape", [Shape(127, 255, 511), Shape(33, 70, 37), Shape(256, 128, 64),
                                   Shape(1000, 600, 300)], ids=str)
def test_tma_rungs_through_the_tma_launch_path(shape, rung):
    """A wrong map or a misplaced parameter faults or gives garbage; this checks the numbers."""
    from gemmbench.execute.local import expectations, verify_kernel
    from gemmbench.gpu.backend import GpuBackend
    gpu = GpuBackend()
    if gpu.info.compute_capability != (9, 0):
        pytest.skip("the TMA path is built for sm_90a")
    problem = Problem.random(shape, seed=5)
    gpu.load(problem)
    spec = get_spec("gpu", rung)
    v = verify_kernel(gpu, gpu.prepare(spec, problem.shape).gemm, expectations(problem, *gpu.reference(problem)),
                      spec.precision)
    assert v.nonfinite == 0 and v.passed, v
    assert np.isfinite(v.max_rel_error)
