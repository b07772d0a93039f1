"""Rung 28's per-shape choice (gemmbench.rungs.any_shape): pure Python."""

import pytest

from gemmbench.rungs import any_shape, get_spec

SPEC = get_spec("gpu", 28)
H200_SMS = 132
SHAPE_SET = [(1, 4096, 4096), (4096, 1, 4096), (3, 5, 7), (64, 64, 131072), (128, 128, 65536), (16, 8192, 8192),
             (801, 1537, 3001), (1024, 1023, 1024), (128, 768, 3072), (256, 256, 256), (4096, 4096, 4096),
             (8192, 8192, 8192), (4097, 4097, 4097), (1, 1, 1)]


@pytest.mark.parametrize("shape", SHAPE_SET, ids=str)
def test_every_choice_is_valid_and_explained(shape):
    params = SPEC.params_for(*shape, H200_SMS)
    assert SPEC.invalid_reason(params) is None
    line = any_shape.explain(*shape, H200_SMS, params)
    if 1 in shape[:2]:  # a GEMV: one launch of gemv.cu, whatever the table or the model chose (test_gemv.py)
        assert params["GEMV"] == 1 and "of cuda_src/gemv.cu" in line
        assert any_shape.shape_candidates(*shape, H200_SMS) == [params]
        return
    assert "GEMV" not in params
    assert any_shape.config_name(params) in line and ("least of" in line or "measured the fastest" in line)


@pytest.mark.parametrize("shape", SHAPE_SET, ids=str)
def test_every_candidate_passes_the_rungs_check(shape):
    for name, splits, pack in any_shape.candidates(*shape, H200_SMS):
        assert SPEC.invalid_reason({**any_shape.CONFIGS[name], "SPLITS": splits, "PACK": pack}) is None


def test_a_long_k_shape_splits_k_until_the_sms_are_busy():
    p = SPEC.params_for(64, 64, 131072, H200_SMS)
    assert p["SPLITS"] >= 64


def test_gemv_shapes_get_no_wide_tiles():
    assert any_shape.model_choice(1, 4096, 4096, H200_SMS)[0] in ("vector rows", "row-major 16x128")
    assert any_shape.model_choice(4096, 1, 4096, H200_SMS)[0] == "row-major 128x16"


def test_a_large_square_takes_the_k_major_loop_unsplit():
    p = SPEC.params_for(8192, 8192, 8192, H200_SMS)
    assert p["KMAJOR_A"] == 1 and p["SPLITS"] == 1 and (p["BM"], p["BN"]) == (128, 128)


@pytest.mark.parametrize("N, tried", [(64, True), (127, True), (128, True), (129, False), (4096, False)])
def test_the_128x64_tiles_are_tried_only_where_n_is_at_most_128(N, tried):
    names = {c for c, _, _ in any_shape.candidates(8192, N, 8192, H200_SMS)}
    assert ("in-kernel k-major 128x64" in names) == tried, sorted(names)


def test_split_and_pack_are_read_at_run_time_not_compiled_in():
    p = SPEC.params_for(64, 64, 131072, H200_SMS)
    assert SPEC.defines(p) == SPEC.defines({**p, "SPLITS": 1, "PACK": 0})
    assert not any(d.startswith(("-DSPLITS", "-DPACK")) for d in SPEC.defines(p))


def test_explain_names_the_pre_passes():
    p = {**any_shape.CONFIGS["row-major 64x64"], "SPLITS": 1, "PACK": 1}
    line = any_shape.explain(100, 61, 50, H200_SMS, p)
    assert "A's rows padded and B's rows padded by a pre-pass" in line and "C's rows" not in line
    split = any_shape.explain(1000, 61, 500, H200_SMS, {**p, "SPLITS": 2})
    assert "C's rows are not 16-byte multiples: the splits' sums stored in padded rows" in split
    assert "4 bytes at a time" in any_shape.explain(100, 61, 50, H200_SMS, {**p, "PACK": 0})
    k_major = {**any_shape.CONFIGS["k-major 64x128"], "SPLITS": 2, "PACK": 1}
    assert "A transposed by a pre-pass" in any_shape.explain(1000, 1000, 1000, H200_SMS, k_major)
    assert "2 K splits of 512" in any_shape.explain(1000, 1000, 1000, H200_SMS, k_major)


@pytest.mark.parametrize("bad, why", [({"KMAJOR_A": 3}, "KMAJOR_A"), ({"SPLITS": 0}, "SPLITS"),
                                      ({"PACK": 3}, "PACK"), ({"TM": 3}, "TM")])
def test_the_check_names_what_is_wrong(bad, why):
    assert why in SPEC.invalid_reason({**any_shape.DEFAULT, **bad})


def test_a_in_place_k_major_tile_splits_a_into_whole_rows_per_thread():
    in_kernel = {**any_shape.CONFIGS["in-kernel k-major 64x128"], "SPLITS": 1, "PACK": 1}
    assert SPEC.invalid_reason(in_kernel) is None
    # 64 rows x 4 quads over 128 threads = 2 rows each; with BK = 8, 64 x 2 quads = 1 row each; BK = 12 is 3 quads
    assert SPEC.invalid_reason({**in_kernel, "BK": 8}) is None
    assert "1, 2 or 4 rows" in SPEC.invalid_reason({**in_kernel, "BK": 12})


def test_the_in_kernel_k_major_tiles_need_no_pre_pass_for_a():
    for shape in [(1024, 1024, 1024), (1000, 1000, 1001), (333, 555, 777)]:
        done = _passes("in-kernel k-major 64x128", shape)
        assert not (done.transpose_a or done.pad_a or done.unaligned)
    assert _passes("in-kernel k-major 64x128", (333, 555, 777)).pad_b  # B is copied by cp.async as before
    line = any_shape.explain(4096, 256, 4096, H200_SMS, {**any_shape.CONFIGS["in-kernel k-major 64x128"],
                                                         "SPLITS": 3, "PACK": 1})
    assert line.startswith("in-kernel k-major 64x128 tiles") and "no pre-pass" in line and "by a pre-pass" not in line
    # the model charges the k-major loop's pre-pass where A is long (N small), the slower loop elsewhere
    big = any_shape.estimate(4096, 4096, 4096, H200_SMS, "in-kernel k-major 64x128", 1)
    assert big > any_shape.estimate(4096, 4096, 4096, H200_SMS, "k-major 64x128", 1)
    skinny = any_shape.estimate(4096, 128, 4096, H200_SMS, "in-kernel k-major 64x128", 4)
    assert skinny < any_shape.estimate(4096, 128, 4096, H200_SMS, "k-major 64x128", 4)


def test_the_model_charges_the_pre_passes_and_the_reduction():
    base = any_shape.estimate(1024, 1024, 1024, H200_SMS, "row-major 64x64", 1)
    assert any_shape.estimate(1024, 1024, 1021, H200_SMS, "row-major 64x64", 1, pack=1) > base
    # N % 4: B padded (a launch); split, the sums go through padded rows and reduce_splits (another)
    assert any_shape.estimate(1024, 1021, 1024, H200_SMS, "row-major 64x64", 1, pack=1) > base + 2.5e-6
    split = any_shape.estimate(1024, 1024, 1024, H200_SMS, "row-major 64x64", 2)
    assert any_shape.estimate(1024, 1021, 1024, H200_SMS, "row-major 64x64", 2, pack=1) > split + 2.5e-6


def test_the_model_charges_one_launch_where_a_and_b_are_both_padded():
    """The driver pads A and B in one launch (copy_rows_pair); A's transpose and B's copy stay two."""
    both = _passes("row-major 64x64", (333, 555, 777))
    assert both.pad_a and both.pad_b and any_shape.pre_pass_launches(both) == 1
    one = _passes("row-major 64x64", (333, 555, 776))
    assert not one.pad_a and one.pad_b and any_shape.pre_pass_launches(one) == 1
    transposed = _passes("k-major 64x128", (1024, 1023, 1024))
    assert transposed.transpose_a and transposed.pad_b and any_shape.pre_pass_launches(transposed) == 2
    assert any_shape.pre_pass_launches(_passes("row-major 64x64", (1024, 1024, 1024))) == 0
    # padding A as well as B adds A's bytes to the model's time, not a second launch
    extra = (any_shape.estimate(333, 555, 777, H200_SMS, "row-major 64x64", 1, pack=1)
             - any_shape.estimate(333, 555, 776, H200_SMS, "row-major 64x64", 1, pack=1))
    assert extra < 1.0e-6


def test_the_models_choice_was_measured_within_5_percent_of_the_best_at_90_of_100_shapes():
    """Where the table does not hold a shape the model chooses, and its picks are not timed there. Here the
    check is what its pick cost where they were: the tune that made the table kept every candidate within 5%
    of each shape's best (Choice.close), and the model's pick must be one of them, or the best, at 90 of the
    100 shapes. (Its picks are the very best at fewer: 77, 71 and 68 with the last three remakes; which of a
    near-tie wins moves from one remake to the next.)"""
    table, unused = any_shape.shipped_table()
    assert unused is None, unused
    near = total = 0
    missed = []
    for shape, entry in table.choices.items():
        if entry.params.get("GEMV"):
            continue
        total += 1
        name, splits, pack = any_shape.model_choice(shape.M, shape.N, shape.K, H200_SMS)
        if entry.time_of({**any_shape.CONFIGS[name], "SPLITS": splits, "PACK": pack}) is not None:
            near += 1
        else:
            missed.append(f"{shape} {name} {splits} {pack}")
    assert total == 100 and near >= 90, f"the model's choice is within 5% at {near} of {total}: {missed}"


def _passes(config, shape, **extra):
    return any_shape.passes(*shape, {**any_shape.CONFIGS[config], "SPLITS": 1, "PACK": 1, **extra})


def test_passes_pad_what_is_unaligned_and_what_the_kernel_reads_in_float4s():
    assert _passes("k-major 64x128", (1024, 1023, 1024)) == any_shape.Passes(
        transpose_a=True, pad_a=False, pad_b=True, pad_c=False, unaligned=False, reduce=False)
    # C's rows are padded only for the splits' sums: unsplit, the tiles store into C itself
    assert _passes("k-major 64x128", (1024, 1023, 1024), SPLITS=3) == any_shape.Passes(
        transpose_a=True, pad_a=False, pad_b=True, pad_c=True, unaligned=False, reduce=True)
    assert _passes("row-major 64x64", (100, 64, 50)) == any_shape.Passes(
        transpose_a=False, pad_a=True, pad_b=False, pad_c=False, unaligned=False, reduce=False)
    unpacked = _passes("row-major 64x64", (100, 61, 50), PACK=0)
    assert unpacked.unaligned and not (unpacked.pad_a or unpacked.pad_b or unpacked.pad_c or unpacked.reduce)
    # the splits' sums are the driver's own buffer: their rows are padded whether the operands' are or not
    split_unpacked = _passes("row-major 64x64", (100, 61, 50), PACK=0, SPLITS=2)
    assert split_unpacked.unaligned and split_unpacked.pad_c and not (split_unpacked.pad_a or split_unpacked.pad_b)
    # the vector kernels read the short operand one value at a time: nothing of it is padded
    assert _passes("vector rows", (1, 4096, 4095)) == any_shape.Passes(False, False, False, False, False, False)
    assert _passes("vector rows", (1, 4095, 4096)).pad_b and not _passes("vector rows", (1, 4095, 4096)).pad_c
    assert _passes("row-major 64x64", (64, 64, 64), SPLITS=4).reduce


def test_the_vector_kernel_takes_only_shapes_of_at_most_8_rows():
    assert "vector rows" in {name for name, _, _ in any_shape.candidates(8, 4096, 4096, H200_SMS)}
    assert "vector rows" not in {name for name, _, _ in any_shape.candidates(9, 4096, 4096, H200_SMS)}
    assert "M <= 8" in any_shape.shape_reason(9, 1, any_shape.CONFIGS["vector rows"])


def test_the_vector_grid_covers_the_columns():
    rows = {**any_shape.CONFIGS["vector rows"], "SPLITS": 5}
    assert SPEC.grid(3, 4097, 100, rows) == (5, 1, 5) and SPEC.block(rows) == (256, 1, 1)
    assert SPEC.shared_bytes(rows) == 0
