"""The BF16 and FP16 classes without a GPU: rounding to the 16-bit types,
the derived tolerance (a correctly rounded 16-bit result passes, a wrong
one fails), the ladder's records and 16-bit tensor maps."""

import ctypes
import shutil
import struct
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from gemmbench import kernelfile
from gemmbench.backend import Problem, Shape, SkipKernel
from gemmbench.execute.local import expectations
from gemmbench.gpu import drivers, tensormap
from gemmbench.gpu.compile import expand_source, nvcc_options
from gemmbench.precision import (BF16_ROUNDOFF, FP16_ROUNDOFF, FP32_ROUNDOFF, PRECISIONS, comparison_precision,
                                 element_dtype, round_to)
from gemmbench.rungs import GPU_LADDER, baselines, get_spec
from gemmbench.rungs.half import split_through_partials
from gemmbench.verify import Expectation, tolerance

HALF = ("bf16", "fp16")


@pytest.mark.parametrize("element, step", [("bf16", 2.0 ** -7), ("fp16", 2.0 ** -10)])
def test_round_to_is_round_to_nearest_even(element, step):
    x = np.array([1 + step / 2, 1 + 3 * step / 2, 1 + step / 4, -(1 + 3 * step / 4)], np.float32)
    got = round_to(x, element)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1.0, 1 + 2 * step, 1.0, -(1 + step)])  # ties go to the even neighbour
    np.testing.assert_array_equal(round_to(got, element), got)


def test_element_dtypes():
    assert element_dtype("fp32") == np.float32 and element_dtype("fp16") == np.float16
    assert element_dtype("bf16").itemsize == 2
    with pytest.raises(ValueError):
        element_dtype("fp8")


@pytest.mark.parametrize("name", HALF)
def test_classes_are_16_bit_and_compared_with_their_own_library_row(name):
    p = PRECISIONS[name]
    assert p.inputs == p.output == name and p.library == name and not p.simt_peak
    assert comparison_precision(name) == name
    assert [b.name for b in baselines("gpu", {name})] == [f"cuBLAS {name.upper()}"]


@pytest.mark.parametrize("name, u", [("bf16", BF16_ROUNDOFF), ("fp16", FP16_ROUNDOFF)])
def test_tolerance_is_the_fp32_bound_plus_two_output_roundings(name, u):
    for K in (1, 129, 4096):
        acc = tolerance(K, "fp32")
        assert tolerance(K, name) == pytest.approx(acc + 2 * u * (1 + acc))
    assert tolerance(1, "fp32") == 16 * FP32_ROUNDOFF


def _kernel_like(problem: Problem, element: str, alpha: float, beta: float, drop_last: bool = False) -> np.ndarray:
    """What a correct 16-bit kernel returns: 16-bit inputs, an FP32 sum, C0 stored in
    the type, the result rounded once. ``drop_last`` leaves out the last term of K."""
    a, b = (round_to(x, element) for x in (problem.A, problem.B))
    if drop_last:
        a, b = a[:, :-1], b[:-1]
    acc = a @ b  # float32 matmul
    c0 = round_to(problem.C0, element)
    return round_to(alpha * acc + beta * c0 if beta else alpha * acc, element)


def _passes(problem: Problem, element: str):
    a, b = (round_to(x, element).astype(np.float64) for x in (problem.A, problem.B))
    return expectations(problem, a @ b, np.abs(a) @ np.abs(b))


@pytest.mark.parametrize("element", HALF)
@pytest.mark.parametrize("shape", [Shape(1, 1, 1), Shape(33, 17, 5), Shape(64, 96, 1000)], ids=str)
def test_a_correctly_rounded_result_passes_both_passes(element, shape):
    problem = Problem.random(shape, seed=3)
    for expect in _passes(problem, element):
        v = expect.check(_kernel_like(problem, element, expect.alpha, expect.beta), element)
        assert v.passed, (v.max_rel_error, v.tolerance)


@pytest.mark.parametrize("element", HALF)
def test_dropping_a_term_at_small_k_fails(element):
    problem = Problem.random(Shape(40, 40, 16), seed=4)
    expect = _passes(problem, element)[0]
    v = expect.check(_kernel_like(problem, element, 1.0, 0.0, drop_last=True), element)
    assert not v.passed


@pytest.mark.parametrize("element", HALF)
def test_the_unrounded_fp32_inputs_are_not_the_reference(element):
    """The reference sees the rounded inputs: an FP32 GEMM of the unrounded ones is off by the inputs'
    rounding, which at K = 4 is far beyond the bound (a kernel that skipped the rounding is caught)."""
    problem = Problem.random(Shape(64, 64, 4), seed=5)
    expect = _passes(problem, element)[0]
    exact = problem.A.astype(np.float64) @ problem.B.astype(np.float64)
    v = expect.check(exact.astype(np.float32), element)
    assert v.max_rel_error > 0.05 * (BF16_ROUNDOFF if element == "bf16" else FP16_ROUNDOFF)


@pytest.mark.parametrize("element", HALF)
@pytest.mark.parametrize("poison", [np.nan, np.inf])
def test_non_finite_never_passes(element, poison):
    problem = Problem.random(Shape(8, 8, 8), seed=6)
    expect = _passes(problem, element)[0]
    c = _kernel_like(problem, element, 1.0, 0.0)
    c[3, 5] = poison
    v = expect.check(c, element)
    assert not v.passed and v.nonfinite == 1


def test_fp16_judges_tiny_elements_against_its_smallest_normal():
    """An element far below FP16's normal range lands on the subnormal grid (steps of 2^-24): within
    the bound on the floored scale, although its error is large against its own scale."""
    want = np.array([[3e-7]])
    expect = Expectation.of(want, want.copy(), K=1)
    got = want.astype(np.float16).astype(np.float32)
    assert abs(got[0, 0] - want[0, 0]) / want[0, 0] > tolerance(1, "fp16")
    assert expect.check(got, "fp16").passed
    assert not expect.check(got, "fp32").passed  # a class without the floor judges it on its own scale


def test_the_ladder_has_both_types_of_each_rung():
    rungs = {s.id: s for s in GPU_LADDER if s.precision in ("bf16", "fp16") and not s.is_baseline}
    assert {i: rungs[i].precision for i in rungs} == {20: "bf16", 21: "fp16", 22: "bf16", 23: "fp16", 24: "bf16",
                                                      25: "fp16", 26: "bf16", 27: "fp16", 30: "bf16", 31: "fp16",
                                                      32: "bf16", 33: "fp16"}
    for even, odd in ((20, 21), (22, 23), (24, 25), (26, 27), (30, 31), (32, 33)):
        assert rungs[even].source == rungs[odd].source
        assert rungs[even].params["BF16"] == 1 and rungs[odd].params["BF16"] == 0
    assert get_spec("gpu", 22).driver == "tma16" and get_spec("gpu", 22).arch_specific
    fallback = get_spec("gpu", 23).fallback
    assert fallback.precision == "fp16" and fallback.params["BF16"] == 0 and fallback.driver == "single"
    assert get_spec("gpu", 27).driver == "tma16_store" and get_spec("gpu", 27).fallback.driver == "single"


def test_the_tma_store_rung_fits_its_staged_boxes_in_shared_memory():
    spec = get_spec("gpu", 26)
    ring = get_spec("gpu", 24).shared_bytes(spec.params)
    # two 8 KiB boxes per consumer warpgroup on top of rung 24's ring (barriers padded to 1 KiB)
    assert spec.shared_bytes(spec.params) == ring - 16 * 4 + 1024 + 2 * 2 * 8192 <= 227 * 1024
    assert "exceed 227 KiB" in spec.invalid_reason({**spec.params, "STAGES": 5})
    assert spec.invalid_reason({**spec.params, "BM": 64, "BN": 128, "STAGES": 6}) is None


@pytest.mark.parametrize("rung, shape, tile", [
    (26, (4096, 4096, 4096), (128, 256, 2)),   # 512 tiles: whole waves of the largest tile
    (26, (2048, 2048, 2048), (128, 256, 2)),   # 128 tiles: one wave
    (26, (3072, 3072, 3072), (192, 128, 2)),   # 288 tiles of 128 x 256 are 2.2 waves; 384 of 192 x 128 are 2.9
    (26, (1536, 1536, 1536), (192, 128, 2)),   # 72 tiles (55% of the SMs) against 96
    (26, (2048, 3072, 1024), (128, 128, 2)),   # 384 tiles, 3 waves: 21% under 128 x 256's 2 waves of 192 tiles
    (26, (512, 11008, 4096), (128, 128, 2)),   # the same: 344 tiles against 172
    (26, (384, 11008, 4096), (192, 128, 2)),   # 2 waves of 172 tiles; 4 of 64 x 128 (at its rate of 0.6) no better
    (26, (4097, 4097, 4097), (128, 256, 2)),   # 192 x 128 estimated 5.3% faster: a near tie keeps the larger tile
    (26, (5888, 5888, 5888), (128, 256, 2)),   # 128 x 128 estimated 0.6% faster: the same
    (22, (2048, 3072, 1024), (192, 128, None)),  # no clusters: 264 tiles, two waves
    (26, (128, 14336, 4096), (64, 128, 2)),    # rung 26 keeps its pairs: 64-row tiles, both rows of a pair inside M
    (32, (128, 14336, 4096), (128, 128, 1)),   # one tile row: no clusters (rungs 30-33)
    (32, (1024, 1024, 1024), (64, 128, 1))])   # one wave of small tiles, no clusters
def test_the_wgmma_tile_is_the_one_with_the_fewest_estimated_waves_of_work(rung, shape, tile):
    spec = get_spec("gpu", rung)
    p = spec.params_for(*shape, 132)
    assert (p["BM"], p["BN"], p.get("CLUSTER")) == tile and spec.invalid_reason(p) is None
    if (p["BM"], p["BN"]) == (128, 128) and p.get("KSPLIT", 1) == 1:  # 6 ring slots, the most beside staged C
        assert p["STAGES"] == 6
    if rung >= 30 and p["CLUSTER"] == 1 and shape[0] <= p["BM"]:
        assert "no clusters: one row of" in spec.explain(*shape, 132, p)


@pytest.mark.parametrize("rung", [30, 31, 32, 33])
@pytest.mark.parametrize("shape, tile, why", [
    ((2048, 2048, 2048), (128, 256, 1), "128 tiles, one wave on 132 SMs, where pairs sharing B by multicast only"),
    ((512, 4096, 4096), (128, 128, 1), "128 tiles, one wave"),
    ((384, 11008, 4096), (128, 256, 1), "129 tiles, one wave"),  # pairs of rows: 4 of 3, in 2 waves of 192 x 128
    ((512, 5120, 4096), (192, 128, 1), "120 tiles, one wave"),   # pairs: one wave of 80 blocks of 128 x 256
    ((896, 28672, 4096), (128, 256, 1), "784 tiles, 6 waves on 132 SMs, where pairs of tile rows would take 7"),
    ((640, 12288, 4096), (128, 256, 1), "240 tiles, 2 waves on 132 SMs, where pairs of tile rows would take 3"),
    ((3072, 3072, 3072), (192, 128, 2), "in clusters of 2 sharing B by multicast: 384 tiles, 3 wave(s)"),
    ((2048, 3072, 1024), (128, 128, 2), "in clusters of 2 sharing B by multicast: 384 tiles, 3 wave(s)"),
    ((4096, 4096, 4096), (128, 256, 2), "in clusters of 2 sharing B by multicast: 512 tiles, 4 wave(s)")])
def test_the_few_tile_rungs_share_b_in_pairs_only_past_one_wave(rung, shape, tile, why):
    """Rungs 30-33 take rung 26's tiles without clusters where they are one wave, or where the pairs' rows past M
    cost a wave (_PAIRS_MIN_WAVES); rung 26 keeps its pairs everywhere."""
    spec = get_spec("gpu", rung)
    p = spec.params_for(*shape, 132)
    assert (p["BM"], p["BN"], p["CLUSTER"]) == tile and spec.invalid_reason(p) is None
    assert why in spec.explain(*shape, 132, p)
    rows = tile[2] * -(-shape[0] // (tile[0] * tile[2]))  # in pairs, whole pairs of tile rows
    assert spec.grid(*shape, p)[0] == rows * -(-shape[1] // tile[1])


def test_tiles_given_without_clusters_get_no_reason_that_does_not_hold():
    """A tuned CLUSTER=1 where pairs would cost no wave: the footer counts the waves and claims nothing more."""
    spec = get_spec("gpu", 32)
    p = {**spec.params_for(4096, 4096, 4096, 132), "CLUSTER": 1}
    line = spec.explain(4096, 4096, 4096, 132, p)
    assert line.startswith("128 x 256 tiles, no clusters: 512 tiles, 4 waves on 132 SMs;") and "would take" not in line


def test_the_footer_counts_the_waves_below_the_pairs_threshold(monkeypatch):
    """Below _PAIRS_MIN_WAVES the footer says how many waves the tiles alone take, whatever the threshold."""
    from gemmbench.rungs import half
    spec = get_spec("gpu", 32)
    p = {**spec.params_for(640, 12288, 4096, 132), "CLUSTER": 1}
    monkeypatch.setattr(half, "_PAIRS_MIN_WAVES", 3)
    assert "240 tiles, 2 waves on 132 SMs, where pairs sharing B by multicast only couple" in \
        spec.explain(640, 12288, 4096, 132, p)


def test_the_few_tile_rung_picks_its_schedule_per_shape():
    spec = get_spec("gpu", 30)
    rung26 = get_spec("gpu", 26)

    def picked(M, N, K):
        p = spec.params_for(M, N, K, 132)
        assert spec.invalid_reason(p) is None
        return p
    # one wave of 64 x 128 tiles, short K: the same tiles without clusters
    p = picked(1024, 1024, 1024)
    assert (p["BM"], p["BN"], p["CLUSTER"], p["KSPLIT"]) == (64, 128, 1, 1)
    assert spec.grid(1024, 1024, 1024, p) == (128, 1, 1)
    assert "no clusters" in spec.explain(1024, 1024, 1024, 132, p)
    # long K (32 K tiles of 64 and more): 128 x 128 tiles, a pair of blocks per tile, not persistent
    for shape in ((1024, 1024, 2048), (1024, 1024, 4096), (256, 4096, 4096), (4096, 256, 4096), (200, 4096, 4096)):
        p = picked(*shape)
        assert (p["BM"], p["BN"], p["CLUSTER"], p["KSPLIT"], p["PERSISTENT"]) == (128, 128, 2, 2, 0)
        assert spec.grid(*shape, p)[0] == 2 * -(-shape[0] // 128) * -(-shape[1] // 128)
        assert "K split in pairs" in spec.explain(*shape, 132, p)
    # 64 x 128 tiles in pairs where they are one wave too (twice the blocks), unless N <= 64 (half-empty tiles),
    # whatever their last row holds (its tile moves up to end at M: half_tail_origin)
    for shape in ((4096, 128, 4096), (512, 1024, 4096), (127, 3072, 4096), (100, 3776, 4096)):
        p = picked(*shape)
        assert (p["BM"], p["BN"], p["CLUSTER"], p["KSPLIT"], p["PERSISTENT"], p["STAGES"]) == (64, 128, 2, 2, 0, 6)
        assert spec.grid(*shape, p)[0] == 2 * -(-shape[0] // 64) * -(-shape[1] // 128) <= 132
        assert "64 x 128 tiles, K split in pairs" in spec.explain(*shape, 132, p)
    # but where C is two rows of 64-row tiles whose 64 x 64 tiles fill 90% of the SMs or more (119 to 132 tiles):
    # those in pairs stacked along M sharing B, K not split, the last row moved up where 16 or more rows lie past M
    for shape, moved in (((128, 4096, 4096), False), ((127, 4096, 4096), False), ((97, 4096, 4096), True),
                         ((65, 4096, 4096), True), ((96, 4001, 2048), True), ((112, 3840, 8192), True),
                         ((113, 4224, 4096), False)):
        p = picked(*shape)
        assert (p["BM"], p["BN"], p["CLUSTER"], p["KSPLIT"], p["PERSISTENT"], p["STAGES"]) == (64, 64, 2, 1, 0, 12)
        assert spec.grid(*shape, p)[0] == 2 * -(-shape[1] // 64) <= 132
        line = spec.explain(*shape, 132, p)
        assert "64 x 64 tiles in pairs stacked along M" in line and "K not split" in line, line
        assert ("moved up to end at M" in line) == moved, line
    assert get_spec("gpu", 32).explain(127, 4096, 4096, 132, get_spec("gpu", 32).params_for(127, 4096, 4096, 132)) \
        .endswith("B's 64-column box in 2 loads of 32 k rows a K tile")
    assert picked(1024, 1024, 1984)["KSPLIT"] == 1  # 31 K tiles
    for shape in ((16, 8192, 8192), (64, 2048, 1024)):  # a pair's 128 rows would be half empty: no clusters
        p = picked(*shape)
        assert (p["KSPLIT"], p["CLUSTER"]) == (1, 1)
    # M <= 64 (one row of 64-row tiles) and fewer than 0.45 tiles per SM (59 of 132), K of 32 K tiles or more, no
    # split through partials that gives 4x the blocks: pairs of 64 x 128 tiles (16 x 8192 x 8192's 64 tiles: alone)
    for shape in ((16, 6144, 4096), (48, 6144, 4096), (7, 5120, 4096), (64, 7424, 2048)):
        p = picked(*shape)
        assert (p["BM"], p["BN"], p["CLUSTER"], p["KSPLIT"], p["PERSISTENT"], p["STAGES"]) == (64, 128, 2, 2, 0, 6)
        assert "64 x 128 tiles, K split in pairs" in spec.explain(*shape, 132, p)
    for shape in ((16, 6144, 1984), (16, 7680, 4096)):  # 31 K tiles; 60 tiles
        assert (picked(*shape)["KSPLIT"], picked(*shape)["CLUSTER"]) == (1, 1)
    # few tiles and long K: 64 x 128 tiles, K in as many parts as keep one wave (each of 8 K tiles or more), where
    # that gives 4x the blocks of the schedule above (512 x 512 x 4096: 128 blocks against 32 in pairs)
    # (64 x 64 tiles where N <= 64)
    for shape, splits in (((16, 4096, 16384), 4), ((512, 512, 4096), 4), ((256, 256, 65536), 16),
                          ((128, 128, 65536), 66), ((64, 64, 131072), 128), ((127, 255, 2051), 4),
                          ((2048, 64, 8192), 4), ((1000, 17, 3001), 5)):
        p = picked(*shape)
        bn = 64 if shape[1] <= 64 else 128
        assert (p["BM"], p["BN"], p["CLUSTER"], p["KSPLIT"], p["PERSISTENT"]) == (64, bn, 1, splits, 1), shape
        tiles = -(-shape[0] // 64) * -(-shape[1] // bn)
        assert spec.grid(*shape, p)[0] == tiles * splits <= 132
        assert f"{64} x {bn} tiles, K split {splits} ways through FP32 sums" in spec.explain(*shape, 132, p)
    # in place of those parts, K split in clusters: of 4 blocks where every cluster of 4 fits at once (30 on 132
    # SMs), the tiles are 16 or more and K is 128 K tiles at most; of 3 where those fit (39), C is one row of tiles
    # and K is 224 K tiles at most
    for shape, ways in (((128, 1024, 4096), 4), ((64, 3072, 4096), 4), ((64, 2048, 8192), 4), ((256, 512, 2048), 4),
                        ((16, 4096, 4096), 3), ((64, 4096, 14336), 3), ((32, 4096, 11008), 3), ((2, 4096, 2048), 3)):
        p = picked(*shape)
        assert (p["BM"], p["BN"], p["CLUSTER"], p["KSPLIT"], p["PERSISTENT"], p["STAGES"]) == (64, 128, ways, ways, 0, 6)
        tiles = -(-shape[0] // 64) * -(-shape[1] // 128)
        assert spec.grid(*shape, p)[0] == ways * tiles <= 132
        assert f"64 x 128 tiles, K split {ways} ways in clusters: a cluster of {ways} blocks per tile" in \
            spec.explain(*shape, 132, p)
    # not: fewer than 16 tiles, a longer K, M above 64 in clusters of 3, more clusters than fit at once
    for shape in ((256, 256, 8192), (64, 2048, 14336), (512, 512, 4096), (32, 4096, 16384), (16, 5120, 4096)):
        assert picked(*shape)["CLUSTER"] in (1, 2), shape
    # from 32 parts on the footer says how many of the reduction's threads share each pair of C's elements
    assert "adds the parts (32 threads to each pair of elements) and" in spec.explain(64, 64, 131072, 132,
                                                                                     picked(64, 64, 131072))
    assert "adds the parts and rounds C" in spec.explain(256, 256, 65536, 132, picked(256, 256, 65536))
    assert picked(512, 512, 1024)["KSPLIT"] == 1  # 16 K tiles: two parts of 8 at most, too few for the partials
    # N at most 64: every tile 64 columns wide (wgmma n64), no clusters and no pairs (one box of B); 128 x 64 tiles
    # in parts where that doubles the blocks of the 64-row tiles in one wave; 8 ring slots
    for shape in ((4096, 16, 4096), (4096, 64, 4096), (4096, 1, 4096)):
        p = picked(*shape)
        assert (p["BM"], p["BN"], p["CLUSTER"], p["KSPLIT"], p["PERSISTENT"], p["STAGES"]) == (128, 64, 1, 4, 1, 8)
        assert spec.grid(*shape, p)[0] == 128
        assert spec.invalid_reason(p) is None
    for shape, tile in (((8192, 64, 8192), (64, 64)), ((16384, 64, 4096), (128, 64)), ((65536, 64, 1024), (128, 64)),
                        ((16, 16, 16), (64, 64))):
        p = picked(*shape)
        assert ((p["BM"], p["BN"]), p["CLUSTER"], p["KSPLIT"]) == (tile, 1, 1), shape
        assert spec.invalid_reason(p) is None
        tiles = -(-shape[0] // tile[0])
        assert f"N = {shape[1]} fits one 64-column tile" in spec.explain(*shape, 132, p)
        assert f"{tiles} tiles, {-(-tiles // 132)} wave(s)" in spec.explain(*shape, 132, p)
    assert picked(4096, 128, 4096)["KSPLIT"] == 2
    # pairs that would not fit in one wave, and shapes with more tiles than SMs: rung 26's choice, past one wave
    # in its pairs, in one wave without clusters (test_the_few_tile_rungs_share_b_in_pairs_only_past_one_wave)
    assert picked(1536, 1536, 4096)["KSPLIT"] == 1
    for shape, cluster in (((2048, 2048, 2048), 1), ((4096, 4096, 4096), 2), ((8192, 8192, 8192), 2)):
        p = picked(*shape)
        assert p == {**rung26.params_for(*shape, 132), "KSPLIT": 1, "CLUSTER": cluster}
        assert ("sharing B by multicast:" in spec.explain(*shape, 132, p)) == (cluster == 2)


def test_the_reduction_shares_an_item_among_threads_where_few_items_meet_many_parts():
    """reduce16_parts on 132 SMs: from 32 parts on, threads share an item while the items' threads fill less
    than half of the 270,336 thread slots and each thread adds at least 4 parts, up to 32 threads an item."""
    from gemmbench.rungs.half import reduce16_parts
    # the shapes it was measured at: (items of C, parts) -> threads per item
    assert reduce16_parts(64 * 64 // 2, 128, 132) == 32
    assert reduce16_parts(64 * 64 // 2, 64, 132) == 16
    assert reduce16_parts(128 * 128 // 2, 66, 132) == 16
    assert reduce16_parts(256 * 256 // 2, 16, 132) == 1
    assert reduce16_parts(128 * 1024 // 2, 8, 132) == 1
    for items in (512 * 512 // 2, 16 * 4096 // 2, 4096 * 64 // 2):
        assert reduce16_parts(items, 4, 132) == 1
    assert reduce16_parts(1000 * 1001 // 2, 128, 132) == 1  # enough items for the GPU's threads
    for items in (1, 91, 4224, 32385, 70000):
        for splits in range(3, 129):
            parts = reduce16_parts(items, splits, 132)
            assert parts & (parts - 1) == 0 and parts <= 32 and (parts == 1 or 32 <= splits and 4 * parts <= splits)


def test_the_k_split_pairs_are_checked():
    spec = get_spec("gpu", 31)
    pair = {**spec.params, "BM": 128, "BN": 128, "STAGES": 4, "KSPLIT": 2, "PERSISTENT": 0}
    assert spec.invalid_reason(pair) is None
    # rung 26's shared memory plus the partial sums sent and received (128 x 64 floats each)
    assert spec.shared_bytes(pair) == get_spec("gpu", 27).shared_bytes(pair) + 2 * 128 * 64 * 4 <= 227 * 1024
    assert "not persistent" in spec.invalid_reason({**pair, "PERSISTENT": 1})
    assert "clusters of 2 blocks" in spec.invalid_reason({**pair, "CLUSTER": 1})
    assert spec.invalid_reason({**pair, "BN": 256, "STAGES": 2}) is not None
    assert spec.invalid_reason({**pair, "KSPLIT": 129}) == "KSPLIT must be 1 to 128"
    assert "takes CLUSTER 1" in spec.invalid_reason({**pair, "KSPLIT": 3})
    assert spec.invalid_reason({**pair, "KSPLIT": 3, "CLUSTER": 1}) is None
    assert "exceed 227 KiB" in spec.invalid_reason({**pair, "STAGES": 5})


def test_the_one_load_rung_is_rung_30_with_b3d_where_n_allows_it():
    spec, rung30 = get_spec("gpu", 32), get_spec("gpu", 30)
    for shape in ((1024, 1024, 1024), (1024, 1024, 4096), (4096, 4096, 4096), (127, 256, 511), (64, 4096, 4096)):
        p = spec.params_for(*shape, 132)
        assert p.pop("B3D") == 1 and p == rung30.params_for(*shape, 132)
        assert "B in one TMA load of 2 64-column boxes" in spec.explain(*shape, 132, spec.params_for(*shape, 132))
    for shape in ((1000, 1000, 1000), (1024, 1001, 1024), (7, 13, 5)):  # past N a 3-D box reads the next row
        p = spec.params_for(*shape, 132)
        assert p["B3D"] == 0 and "is not a multiple of 64" in spec.explain(*shape, 132, p)
    assert spec.invalid_reason({**spec.params, "B3D": 2}) == "B3D must be 0 or 1"
    assert spec.source == "32_half_b_one_load.cu" and "B3D" in spec.search_space


@pytest.mark.parametrize("params, chunks", [
    ({"BN": 128, "CLUSTER": 1, "KSPLIT": 1, "B3D": 1}, 2),   # clusters of one: the block loads every box
    ({"BN": 256, "CLUSTER": 2, "KSPLIT": 1, "B3D": 1}, 2),   # multicast: each block its half
    ({"BN": 128, "CLUSTER": 2, "KSPLIT": 1, "B3D": 1}, 1),   # one box each: a 2-D load
    ({"BN": 256, "CLUSTER": 4, "KSPLIT": 1, "B3D": 1}, 1),
    ({"BN": 128, "CLUSTER": 2, "KSPLIT": 2, "B3D": 1}, 2),   # K split in pairs: each block loads its own B
    ({"BN": 256, "CLUSTER": 2, "KSPLIT": 1, "B3D": 0}, 1),
    ({"BN": 256, "CLUSTER": 2}, 1)])                          # rungs without B3D
def test_b_box_chunks_follow_the_kernels_loads(params, chunks):
    from gemmbench.rungs.half import b_box_chunks
    assert b_box_chunks(params) == chunks


def test_a_chunked_map_is_3_d_and_needs_whole_chunks():
    m = tensormap.matrix_map(1024, 512, 64, 64, 128, pitch=520, element="bf16", box_chunks=2)
    assert m.unsupported_reason() is None
    assert (m.global_dims, m.global_strides, m.box) == ((64, 1024, 8), (1040, 128), (64, 64, 2))
    assert "a multiple of 64" in tensormap.matrix_map(64, 1000, 64, 64, 128, element="bf16",
                                                      box_chunks=2).unsupported_reason()
    assert "1..256" in tensormap.matrix_map(64, 64, 64, 64, 128, element="bf16", box_chunks=0).unsupported_reason()
    assert tensormap.matrix_map(64, 1000, 64, 64, 128, element="bf16").box == (64, 64)  # one chunk: 2-D


@pytest.mark.parametrize("element", HALF)
def test_16_bit_tensor_maps(element):
    assert tensormap.pitch_for_tma(36, 2) == 40 and tensormap.pitch_for_tma(40, 2) == 40
    ok = tensormap.matrix_map(100, 40, 128, 64, 128, pitch=40, element=element)
    assert ok.unsupported_reason() is None and ok.element_bytes == 2 and ok.global_strides == (80,)
    assert "16 bytes" in tensormap.matrix_map(8, 36, 8, 64, element=element).unsupported_reason()
    assert "swizzle" in tensormap.matrix_map(8, 128, 8, 128, element=element).unsupported_reason()
    assert "not supported" in tensormap.matrix_map(8, 64, 8, 8, element="fp8").unsupported_reason()


def test_cluster_grids_are_whole_groups_of_tile_rows():
    spec = get_spec("gpu", 24)
    p = dict(spec.params, BM=128, BN=256, CLUSTER=2)
    assert spec.grid(1, 1, 1, p) == (2, 1, 1)  # one tile row: the second block computes zeros past M
    assert spec.grid(3 * 128, 512, 64, p) == (2 * 2 * 2, 1, 1)  # 3 tile rows -> 2 groups of 2, 2 tile columns
    assert spec.invalid_reason(dict(p, BN=128, CLUSTER=4)) is not None  # 2 B boxes cannot split over 4 blocks
    assert spec.invalid_reason(dict(p, CLUSTER=4)) is None


EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "tiled_bf16.cu"


def test_the_bf16_example_is_a_bf16_kernel_file():
    spec = kernelfile.load(EXAMPLE, 0).spec
    assert spec.precision == "bf16" and spec.min_cc == (8, 0) and spec.invalid_reason() is None
    assert spec.block(spec.params) == (256, 1, 1)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("bf16", [1, 0])
def test_the_bf16_example_compiles_for_either_type(bf16, tmp_path):
    """The text the tool hands pycuda (half.cuh found in cuda_src/), built as BF16 and as FP16."""
    spec = kernelfile.load(EXAMPLE, 0).spec
    src = tmp_path / "kernel.cu"
    src.write_text(expand_source(spec))
    done = subprocess.run([shutil.which("nvcc"), "-cubin", "-arch", "sm_80", *nvcc_options(spec), f"-DBF16={bf16}",
                           "-o", str(tmp_path / "k.cubin"), str(src)], capture_output=True, text=True)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr


class _Function:
    def __init__(self, name, calls):
        self.name, self.calls = name, calls

    def prepare(self, arg_format):
        self.arg_format = arg_format

    def set_attribute(self, attribute, value):
        pass

    def prepared_async_call(self, grid, block, stream, *args, shared_size=0):
        self.calls.append((self.name, grid, block, args))


class _Module:
    def __init__(self):
        self.calls = []

    def get_function(self, name):
        return _Function(name, self.calls)


def _layout(formats: str) -> tensormap.ParamLayout:
    """Where a kernel with these parameters (pack_params' letters) holds them: each at its natural alignment."""
    slots, at = [], 0
    for f in formats:
        size = {"T": 128, "i": 4, "f": 4, "P": 8}[f]
        at = -(-at // min(size, 64)) * min(size, 64)
        slots.append((at, size))
        at += size
    return tensormap.ParamLayout(tuple(slots))


def _tma16(monkeypatch, rung, shape, clusters_that_fit=66, helpers=False, formats="TTiiiffP"):
    """The tma16 driver with pycuda, the driver's map encoder and parameter query stood in for (with
    ``helpers``, the helper files too); ``formats``: the kernel's parameters."""
    maps = []
    monkeypatch.setattr(tensormap, "encode", lambda m, address: maps.append((m, address)) or bytes(128))
    spec = get_spec("gpu", rung)
    params = spec.params_for(shape.M, shape.N, shape.K, 132)
    module, words = _Module(), []
    layout = _layout(formats)

    def workspace(n):
        words.append(n)
        return 0x1000 * len(words)
    ctx = drivers.LaunchContext(spec, params, module, shape, 0x10, 0x20, 0x30, "stream", 132, 227 * 1024, workspace,
                                lambda function, n: None, lambda entry, count: layout,
                                lambda entry, cluster, threads, smem: clusters_that_fit,
                                (lambda source, entry: _Function(entry, module.calls)) if helpers else None)
    drivers.build(ctx)(0.5, 2.0)
    return params, maps, module.calls, words


def test_tma16_pads_rows_that_are_not_8_elements_and_maps_16_bit_boxes(monkeypatch):
    params, maps, calls, words = _tma16(monkeypatch, 23, Shape(5, 37, 9))
    assert [c[0] for c in calls] == ["copy_rows16", "copy_rows16", "sgemm"]
    assert calls[0][3][:2] == (5, 9) and calls[0][3][3] == 16 and calls[1][3][:2] == (9, 37) and calls[1][3][3] == 40
    assert words == [5 * 16 * 2 // 4, 9 * 40 * 2 // 4]  # the padded copies, in 4-byte words
    a, b = maps[0][0], maps[1][0]
    # A's box holds the 5 rows there are, not the tile's BM: TMA would fill the others with zeros a K tile at a time
    assert (a.rows, a.cols, a.pitch, a.box_rows, a.box_cols, a.element) == (5, 9, 16, 5, 64, "fp16")
    assert (b.rows, b.cols, b.pitch, b.box_rows, b.box_cols, b.element) == (9, 37, 40, 64, 64, "fp16")
    assert calls[2][1] == (1, 1, 1) and calls[2][2] == (128 * params["BM"] // 64 + 128, 1, 1)


@pytest.mark.parametrize("rung,shape", [(22, Shape(16, 8192, 8192)), (32, Shape(48, 4096, 4096)),
                                        (32, Shape(100, 4096, 4096)), (32, Shape(127, 4096, 4096)),
                                        (32, Shape(1000, 1000, 1000)), (26, Shape(4096, 4096, 4096))], ids=str)
def test_a_box_is_the_tile_rows_or_m_where_c_fits_one_row_of_tiles(monkeypatch, rung, shape):
    """The kernel expects half_a_rows(M) rows of A a K tile (half_tma.cuh): M where it is below the tile's BM,
    else BM; the driver's map must load exactly that box, or the slot's barrier never completes."""
    chosen = get_spec("gpu", rung).params_for(shape.M, shape.N, shape.K, 132)
    formats = "TTiiiffP" if rung < 26 else "TTTiiiffPi" + "P" * split_through_partials(chosen)
    params, maps, _, _ = _tma16(monkeypatch, rung, shape, formats=formats)
    assert maps[0][0].box_rows == min(shape.M, params["BM"])
    assert (shape.M < params["BM"]) == (maps[0][0].box_rows < params["BM"])


def test_tma16_splits_k_through_partials_then_reduces_to_the_16_bit_c(monkeypatch):
    """Rung 32 at 256 x 256 x 65536: 8 tiles of 64 x 128 in 16 parts of K; the kernel gets a workspace of 16
    FP32 slices of C as its last parameter, then reduce_splits16 adds them with the call's alpha and beta,
    a thread per two elements (16 parts: too few to share an item among threads)."""
    formats = "TTTiiiffPiP"  # the maps of A, B and C, M, N, K, alpha, beta, C, store_c, partials
    params, maps, calls, words = _tma16(monkeypatch, 32, Shape(256, 256, 65536), formats=formats)
    assert (params["BM"], params["BN"], params["CLUSTER"], params["KSPLIT"]) == (64, 128, 1, 16)
    assert words == [16 * 256 * 256]
    (gemm, gemm_grid, _, (block,)), (reduce, reduce_grid, reduce_block, reduce_args) = calls
    assert gemm == "sgemm" and gemm_grid == (128, 1, 1)
    assert struct.unpack_from("<Q", block, _layout(formats).slots[-1][0]) == (0x1000,)
    assert reduce == "reduce_splits16" and reduce_args == (256, 256, 16, 1, 0.5, 0x1000, 2.0, 0x30)
    assert reduce_block == (256, 1, 1) and reduce_grid == (256 * 256 // 512, 1, 1)


def test_tma16_splits_k_in_clusters_without_partials_or_a_second_kernel(monkeypatch):
    """Rung 32 at 64 x 3072 x 4096: 24 tiles of 64 x 128, K split in clusters of 4 blocks (96), summed in
    distributed shared memory: one launch, no workspace, no partials parameter, not capped as a persistent grid."""
    params, _, calls, words = _tma16(monkeypatch, 32, Shape(64, 3072, 4096), formats="TTTiiiffPi",
                                     clusters_that_fit=1)
    assert (params["BM"], params["BN"], params["CLUSTER"], params["KSPLIT"], params["PERSISTENT"]) == (64, 128, 4, 4, 0)
    assert words == []
    assert [(c[0], c[1]) for c in calls] == [("sgemm", (96, 1, 1))]


def test_a_k_split_whose_partials_do_not_fit_in_gpu_memory_is_a_skip_before_anything_runs(monkeypatch):
    """KSPLIT = 128 forced at 16384 x 16384 x 65536 asks for 128 FP32 slices of C (128 GiB): the backend's
    workspace turns the allocator's refusal into a SkipKernel naming the size, and the driver lets it through
    while the call is built, before any kernel is launched."""
    from gemmbench.gpu.backend import GpuBackend

    class Refused(Exception):
        pass

    def mem_alloc(n):
        raise Refused(n)
    backend = object.__new__(GpuBackend)  # no CUDA: only what _workspace touches
    backend.cuda = SimpleNamespace(mem_alloc=mem_alloc, MemoryError=Refused)
    shape = Shape(16384, 16384, 65536)
    spec = get_spec("gpu", 32)
    params = {**spec.params_for(shape.M, shape.N, shape.K, 132), "BM": 64, "BN": 128, "STAGES": 8, "CLUSTER": 1,
              "PERSISTENT": 1, "KSPLIT": 128}
    assert spec.invalid_reason(params) is None
    module = _Module()
    monkeypatch.setattr(tensormap, "encode", lambda m, address: bytes(128))
    ctx = drivers.LaunchContext(spec, params, module, shape, 0x10, 0x20, 0x30, "stream", 132, 227 * 1024,
                                backend._workspace, lambda function, n: None,
                                lambda entry, count: _layout("TTTiiiffPiP"), lambda *a: 66, None)
    with pytest.raises(SkipKernel, match=r"^no GPU memory for a 131072 MiB workspace$"):
        drivers.build(ctx)
    assert module.calls == []


def test_tma16_padding_copies_take_a_thread_per_16_byte_group(monkeypatch):
    _, _, calls, _ = _tma16(monkeypatch, 22, Shape(100, 37, 999))
    # A: 100 x 999 elements, 8 to a group: 12,500 groups (at most), 49 blocks of 256; B: 999 x 37, 19 blocks
    assert [(c[0], c[1], c[2]) for c in calls[:2]] == [("copy_rows16", (49, 1, 1), (256, 1, 1)),
                                                      ("copy_rows16", (19, 1, 1), (256, 1, 1))]


def test_tma16_pads_a_and_b_in_one_launch_where_the_helper_files_load(monkeypatch):
    _, _, calls, words = _tma16(monkeypatch, 23, Shape(5, 37, 9), helpers=True)
    assert [c[0] for c in calls] == ["copy_rows16_pair", "sgemm"]
    assert calls[0][3] == (5, 9, 0x10, 16, 0x1000, 9, 37, 0x20, 40, 0x2000) and calls[0][1] == (1, 2, 1)
    assert words == [5 * 16 * 2 // 4, 9 * 40 * 2 // 4]


def test_tma16_launches_whole_resident_clusters(monkeypatch):
    params, maps, calls, words = _tma16(monkeypatch, 24, Shape(4096, 4096, 64), clusters_that_fit=30)
    assert [c[0] for c in calls] == ["sgemm"] and words == []  # aligned rows: no copies
    assert calls[0][1] == (60, 1, 1)  # 30 clusters of 2, not 132 blocks
    params, maps, calls, words = _tma16(monkeypatch, 24, Shape(100, 128, 64))
    assert [c[0] for c in calls] == ["sgemm"]
    assert calls[0][1] == (2, 1, 1)  # two 64-row tiles of one column: one cluster


def test_cluster_occupancy_query_passes_cudas_launch_config():
    from gemmbench.gpu.clusters import _LaunchConfig
    assert ctypes.sizeof(_LaunchConfig) == 56 and _LaunchConfig.hStream.offset == 32
