"""Rungs 17 and 18's per-shape choices (gemmbench.rungs.tma_choice): thin
tiles where M is small, rung 17's K splits, the candidates a shape-set tune
tries, and the measured tables shipped beside the rungs."""

from __future__ import annotations

import dataclasses

import pytest

from gemmbench.backend import Shape
from gemmbench.rungs import choice_table, get_spec, tma_choice
from gemmbench.rungs.gpu import R17_CHOICE, R18_CHOICE
from gemmbench.shapeset import read_shapes
from gemmbench.tuning import file_digest, source_digest

RUNG17, RUNG18 = get_spec("gpu", 17), get_spec("gpu", 18)
SMS = 132
SHAPE_SET = [named.shape for named in read_shapes(["benchmarks/shapes"]).shapes]


@pytest.mark.parametrize("M, bm", [(1, 16), (16, 16), (17, 32), (32, 32), (33, 64), (64, 64)])
def test_a_small_m_takes_the_thinnest_tile_that_holds_it_on_the_deeper_ring(M, bm):
    p = R17_CHOICE.rule(M, 8192, 8192, SMS)
    assert (p["BM"], p["STAGES"]) == (bm, tma_choice.THIN_STAGES) and RUNG17.invalid_reason(p) is None
    p = R18_CHOICE.rule(M, 8192, 8192, SMS)
    assert (p["BM"], p["STAGES"]) == (bm, tma_choice.THIN_STAGES) and RUNG18.invalid_reason(p) is None
    p = R18_CHOICE.rule(M, 32768, 8192, SMS)  # 128-wide tiles; with rung 18's two A boxes a slot a 64x128
    assert (p["BN"], p["STAGES"]) == (128, 4 if bm == 64 else 8)  # tile does not fit 8 slots


def test_from_65_rows_the_rule_takes_rung_16s_tiles_and_splits_k_where_tiles_leave_sms_idle():
    assert R17_CHOICE.rule(4096, 4096, 4096, SMS) == RUNG17.params
    assert R18_CHOICE.rule(4096, 4096, 4096, SMS) == {**RUNG18.params, "FLUSH": 2}  # K >= 2048: 64-term sums
    p = R17_CHOICE.rule(128, 128, 65536, SMS)  # 2 tiles, 2048 K tiles: 66 splits fill the SMs
    assert (p["BM"], p["BN"], p["SPLITS"]) == (128, 64, 66)
    assert R17_CHOICE.rule(256, 256, 256, SMS)["SPLITS"] == 1  # 8 K tiles: too short to split
    p = R18_CHOICE.rule(128, 128, 65536, SMS)  # rung 18 the same
    assert (p["BM"], p["BN"], p["SPLITS"]) == (128, 64, 66)
    assert R18_CHOICE.rule(256, 256, 256, SMS)["SPLITS"] == 1


@pytest.mark.parametrize("M, N, swapped", [(4096, 16, True), (4096, 64, True), (8192, 1, True), (4096, 256, True),
                                            (4096, 257, False), (256, 256, False), (16, 4096, False), (16, 16, False)])
def test_rung_18_swaps_a_and_b_where_n_is_small_and_m_is_not(M, N, swapped):
    p = R18_CHOICE.rule(M, N, 4096, SMS)
    assert bool(p["SWAP_AB"]) == swapped and RUNG18.invalid_reason(p) is None
    if swapped and N <= 64:  # the thin tile holds N: C^T's rows
        assert p["BM"] == next(bm for bm in tma_choice.THIN_BMS if N <= bm)
        assert "A and B swapped" in R18_CHOICE.explain(M, N, 4096, SMS, p)
    assert "SWAP_AB" not in R17_CHOICE.rule(M, N, 4096, SMS)


@pytest.mark.parametrize("K, flush", [(256, 1), (2047, 1), (2048, 2), (16384, 2)])
def test_rung_18_sums_64_terms_on_the_tensor_cores_from_k_2048_and_32_below(K, flush):
    for M, N in ((4096, 4096), (4096, 64), (128, 128)):
        assert R18_CHOICE.rule(M, N, K, SMS)["FLUSH"] == flush
        assert {p["FLUSH"] for p in R18_CHOICE.candidates(M, N, K, SMS)} == {flush}
        p = R18_CHOICE.select(M, N, K, SMS)
        if "GEMV" not in p and "SMALL" not in p:
            line = R18_CHOICE.explain(M, N, K, SMS, p)
            assert f"FLUSH={flush}: tensor-core partial sums folded into FP32 every {flush} K tile(s)" in line
    assert "FLUSH" not in R17_CHOICE.rule(4096, 4096, K, SMS)


def test_a_shape_set_tune_tries_rung_18_swapped_where_n_is_at_most_256():
    for M, N in ((4096, 256), (4096, 16), (300, 1)):
        cands = R18_CHOICE.candidates(M, N, 4096, SMS)
        assert any(p["SWAP_AB"] for p in cands) and any(not p["SWAP_AB"] for p in cands)
    assert not any(p["SWAP_AB"] for p in R18_CHOICE.candidates(4096, 512, 4096, SMS))


def test_rung_18_compiles_its_split_loop_only_into_builds_that_split():
    """Its unsplit build is the code it had before split K (a loop with runtime bounds was 6-12% slower)."""
    unsplit, split = RUNG18.defines(), RUNG18.defines({**RUNG18.params, "SPLITS": 3})
    assert "-DSPLIT_K=0" in unsplit and "-DSPLIT_K=1" in split
    assert RUNG18.defines({**RUNG18.params, "SPLITS": 40}) == split  # the count itself is a runtime argument
    assert not any(d.startswith("-DSPLITS=") for d in split)


@pytest.mark.parametrize("spec, choice", [(RUNG17, R17_CHOICE), (RUNG18, R18_CHOICE)], ids=["rung17", "rung18"])
@pytest.mark.parametrize("shape", SHAPE_SET[::7], ids=str)
def test_every_candidate_a_shape_set_tune_tries_is_valid_and_wastes_under_half_a_tile(spec, choice, shape):
    cands = spec.shape_candidates(shape.M, shape.N, shape.K, SMS)
    one_launch = choice.one_launch(shape.M, shape.N, shape.K)
    if one_launch:  # a GEMV or a small product: only that path (tests/test_gemv.py, tests/test_small.py)
        assert cands == [spec.params_for(shape.M, shape.N, shape.K, SMS)] and one_launch.items() <= cands[0].items()
        return
    assert cands and len({tuple(sorted(p.items())) for p in cands}) == len(cands)
    for p in cands:
        assert spec.invalid_reason(p) is None and set(p) == set(spec.params), p
        M, N = (shape.N, shape.M) if p.get("SWAP_AB") else (shape.M, shape.N)  # a swapped tile tiles C^T
        assert p["BM"] == 16 or 2 * M > p["BM"] or p["BM"] == 256 and M > 128
        units = -(-M // p["BM"]) * -(-N // p["BN"]) * p.get("SPLITS", 1)
        assert p.get("SPLITS", 1) == 1 or units <= 4 * SMS


def _tiles(spec, M, N, K):
    return {(p["BM"], p["BN"], p["STAGES"]) for p in spec.shape_candidates(M, N, K, SMS)}


def test_a_tune_tries_rung_17s_192_row_tiles_and_6_slots_only_where_c_is_one_row_of_128_row_tiles():
    wide = _tiles(RUNG17, 2048, 3072, 1024)  # 264 tiles of 192 rows: two whole waves
    assert (192, 128, 4) in wide and (192, 64, 4) not in wide and (128, 128, 4) in wide
    assert not any(stages == tma_choice.ONE_ROW_STAGES for _, _, stages in wide)
    one_row = _tiles(RUNG17, 128, 11008, 4096)  # one row of 86 tiles, each streaming its own B panel
    assert {(128, 128, 4), (128, 128, tma_choice.ONE_ROW_STAGES)} <= one_row
    # rung 18: two A boxes a slot leave no room for 6 slots, and its accumulators cap the tile at 128 rows
    assert _tiles(RUNG18, 128, 11008, 4096) | _tiles(RUNG18, 2048, 3072, 1024) <= {
        (bm, bn, s) for bm in (16, 32, 64, 128) for bn in (64, 128) for s in (4, tma_choice.THIN_STAGES)}


@pytest.mark.parametrize("N, b3d", [(4096, 1), (32, 1), (96, 1), (4000, 1), (1000, 0), (4095, 0), (48, 0)])
def test_rung_17_loads_a_k_tile_of_b_in_one_load_where_n_is_a_multiple_of_32(N, b3d):
    """B3D follows N for the rule and for every candidate a tune tries, so a table measures what runs;
    rung 18 keeps one load per box."""
    assert R17_CHOICE.rule(512, N, 4096, SMS)["B3D"] == b3d
    candidates = R17_CHOICE.candidates(512, N, 4096, SMS)
    assert candidates and {p["B3D"] for p in candidates} == {b3d}
    assert "B3D" not in R18_CHOICE.rule(512, N, 4096, SMS)
    line = R17_CHOICE.explain(512, N, 4096, SMS, R17_CHOICE.rule(512, N, 4096, SMS))
    boxes = R17_CHOICE.rule(512, N, 4096, SMS)["BN"] // 32
    assert (f"B3D=1: each K tile of B in one TMA load of {boxes} 32-column boxes" in line if b3d else
            f"B3D=0: B in {boxes} loads of 32 columns a K tile (N = {N} is not a multiple of 32)" in line)
    assert RUNG17.invalid_reason({**RUNG17.params, "B3D": 2}) == "B3D must be 0 or 1"


def test_a_table_choice_whose_b3d_is_not_the_shapes_is_not_used(tmp_path):
    """A table made before B3D, or with it where N does not allow it, falls back to the rule."""
    rule = R17_CHOICE.rule(512, 4096, 4096, SMS)
    chosen = {**rule, "BM": 64, "STAGES": 8}

    def table_with(params):
        choices = {Shape(512, 4096, 4096): choice_table.Choice(params, 10.0, 5)}
        table = choice_table.ChoiceTable(17, RUNG17.name, "NVIDIA H200", SMS, "2026-11-30", "gemmbench tune -i 17",
                                         source_digest(RUNG17), choices)
        path = tmp_path / f"t{len(list(tmp_path.iterdir()))}.json"
        choice_table.write(path, table)
        return dataclasses.replace(R17_CHOICE, table_path=path)

    assert table_with(chosen).select(512, 4096, 4096, SMS) == chosen
    for stale in ({**chosen, "B3D": 0}, {k: v for k, v in chosen.items() if k != "B3D"}):
        assert table_with(stale).select(512, 4096, 4096, SMS) == rule


@pytest.mark.parametrize("spec, choice, name", [(RUNG17, R17_CHOICE, "tf32_tma_ws_h200.json"),
                                                (RUNG18, R18_CHOICE, "3xtf32_tma_ws_h200.json")],
                         ids=["rung17", "rung18"])
def test_the_shipped_table_is_made_on_the_rungs_current_source_and_covers_the_shape_set(spec, choice, name):
    table, why = choice.shipped_table()
    assert why is None and table.source_digest == source_digest(spec) == file_digest(spec.source)
    assert (table.rung, table.sm_count) == (spec.id, SMS) and table.gpu == "NVIDIA H200"
    assert table.command.startswith(f"gemmbench tune -i {spec.id} --shapes benchmarks/shapes --table "
                                    f"gemmbench/rungs/{name} --overwrite --no-tune-cache")
    assert set(table.choices) == set(SHAPE_SET)
    for shape, entry in table.choices.items():
        M, N, K = shape.M, shape.N, shape.K
        one_launch = choice.one_launch(M, N, K)
        if one_launch:  # a GEMV or small path runs there, whatever the table measured (tests/test_gemv.py,
            assert one_launch.items() <= spec.params_for(M, N, K, SMS).items()  # tests/test_small.py)
            continue
        assert entry.params in [dict(p) for p in spec.shape_candidates(M, N, K, SMS)], shape
        assert spec.params_for(M, N, K, SMS) == entry.params
        assert f"measured the fastest of {entry.candidates} choices" in spec.explain(M, N, K, SMS, entry.params)
    assert spec.params_for(4096, 4096, 4096, 100) == choice.rule(4096, 4096, 4096, 100)  # another SM count: the rule


def test_a_stale_table_is_not_used_and_the_line_says_why(tmp_path, monkeypatch):
    stale = dataclasses.replace(R17_CHOICE.shipped_table()[0], source_digest="0" * 16)
    path = tmp_path / "tf32_tma_ws_h200.json"
    choice_table.write(path, stale)
    choice = dataclasses.replace(R17_CHOICE, table_path=path)
    p = choice.select(16, 4096, 4096, SMS)
    assert p == {**RUNG17.params, "BM": 16, "BN": 64, "STAGES": 8, "SPLITS": 2} == choice.rule(16, 4096, 4096, SMS)
    line = choice.explain(16, 4096, 4096, SMS, p)
    assert "the rule" in line and "measured the fastest" not in line
    assert "another version of rung 17's source" in line and "gemmbench tune -i 17" in line
