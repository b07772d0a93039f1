"""Rung 17's per-shape choice (gemmbench.rungs.tma_choice): thin tiles where
M is small, the rule's K splits, the candidates a shape-set tune tries, and
the measured table shipped beside the rung."""

from __future__ import annotations

import dataclasses

import pytest

from gemmbench.rungs import choice_table, get_spec, tma_choice
from gemmbench.shapeset import read_shapes
from gemmbench.tuning import file_digest, source_digest

RUNG17 = get_spec("gpu", 17)
SMS = 132
SHAPE_SET = [named.shape for named in read_shapes(["benchmarks/shapes"]).shapes]


@pytest.mark.parametrize("M, bm", [(1, 16), (16, 16), (17, 32), (32, 32), (33, 64), (64, 64)])
def test_a_small_m_takes_the_thinnest_tile_that_holds_it_on_the_deeper_ring(M, bm):
    p = tma_choice.rule_17(M, 8192, 8192, SMS, {"BK": 32, "STAGES": 4})
    assert (p["BM"], p["STAGES"]) == (bm, tma_choice.THIN_STAGES)
    assert RUNG17.invalid_reason({**RUNG17.params, **p}) is None


def test_from_65_rows_the_rule_takes_rung_16s_tiles_and_splits_k_where_tiles_leave_sms_idle():
    rest = {"BK": 32, "STAGES": 4}
    assert tma_choice.rule_17(4096, 4096, 4096, SMS, rest) == {**rest, "BM": 256, "BN": 128, "SPLITS": 1}
    p = tma_choice.rule_17(128, 128, 65536, SMS, rest)  # 2 tiles, 2048 K tiles: 66 splits fill the SMs
    assert (p["BM"], p["BN"], p["SPLITS"]) == (128, 64, 66)
    assert tma_choice.rule_17(256, 256, 256, SMS, rest)["SPLITS"] == 1  # 8 K tiles: too short to split


@pytest.mark.parametrize("shape", SHAPE_SET[::7], ids=str)
def test_every_candidate_a_shape_set_tune_tries_is_valid_and_wastes_under_half_a_tile(shape):
    cands = RUNG17.shape_candidates(shape.M, shape.N, shape.K, SMS)
    assert cands and len({tuple(sorted(p.items())) for p in cands}) == len(cands)
    for p in cands:
        assert RUNG17.invalid_reason(p) is None, p
        assert p["BM"] == 16 or 2 * shape.M > p["BM"] or p["BM"] == 256 and shape.M > 128
        units = -(-shape.M // p["BM"]) * -(-shape.N // p["BN"]) * p["SPLITS"]
        assert p["SPLITS"] == 1 or units <= 4 * SMS


def test_the_shipped_table_is_made_on_the_rungs_current_source_and_covers_the_shape_set():
    table, why = tma_choice.shipped_table_17()
    assert why is None and table.source_digest == source_digest(RUNG17) == file_digest(tma_choice.SOURCE_17)
    assert (table.rung, table.sm_count) == (17, SMS) and table.gpu.startswith("NVIDIA H100")
    assert table.command.startswith("gemmbench tune -i 17 --shapes benchmarks/shapes --table "
                                    "gemmbench/rungs/tf32_tma_ws_h100.json")
    assert set(table.choices) == set(SHAPE_SET)
    for shape, choice in table.choices.items():
        M, N, K = shape.M, shape.N, shape.K
        assert choice.params in [dict(p) for p in RUNG17.shape_candidates(M, N, K, SMS)], shape
        assert RUNG17.params_for(M, N, K, SMS) == choice.params
        assert f"measured the fastest of {choice.candidates} choices" in RUNG17.explain(M, N, K, SMS, choice.params)
    assert RUNG17.params_for(4096, 4096, 4096, 100) == {**RUNG17.params, "SPLITS": 1}  # another SM count: the rule


def test_a_stale_table_is_not_used_and_the_line_says_why(tmp_path, monkeypatch):
    stale = dataclasses.replace(tma_choice.shipped_table_17()[0], source_digest="0" * 16)
    path = tmp_path / "tf32_tma_ws_h100.json"
    choice_table.write(path, stale)
    monkeypatch.setattr(tma_choice, "TABLE_17", path)
    tma_choice.shipped_table_17.cache_clear()
    try:
        p = RUNG17.params_for(16, 4096, 4096, SMS)
        assert p == {**RUNG17.params, "BM": 16, "BN": 64, "STAGES": 8, "SPLITS": 2}  # the rule
        line = RUNG17.explain(16, 4096, 4096, SMS, p)
        assert "the rule" in line and "measured the fastest" not in line
        assert "another version of rung 17's source" in line and "gemmbench tune -i 17" in line
    finally:
        tma_choice.shipped_table_17.cache_clear()
