"""Per-shape choice tables (gemmbench.rungs.choice_table): the file round-trips,
a hostile file is refused with a reason and never a traceback, an existing
file is kept without --overwrite; rung 28 reads its shipped table and
chooses from it exactly as from the table the one-off script wrote."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from gemmbench.backend import Shape
from gemmbench.fsutil import TargetError
from gemmbench.rungs import any_shape, choice_table, gemv, get_spec
from gemmbench.rungs.choice_table import Choice, ChoiceTable, Close, UnusableTable
from gemmbench.tuning import file_digest, source_digest

RUNG28 = get_spec("gpu", 28)
H200_SMS = 132
TABLE = ChoiceTable(12, "multistage cp.async", "NVIDIA H200", 132, "2026-11-24",
                    "gemmbench tune -i 12 --shapes s.csv --table t.json", "0123456789abcdef",
                    {Shape(64, 64, 64): Choice({"BM": 64, "PACK": 0}, 5.25, 3, (Close({"PACK": 1}, 5.4),)),
                     Shape(1, 4096, 4096): Choice({"BM": 128, "PACK": 1}, 27.37, 73)})


def test_a_table_round_trips_one_line_per_shape(tmp_path):
    path = tmp_path / "t.json"
    choice_table.write(path, TABLE)
    assert choice_table.read(path) == TABLE
    text = path.read_text()
    assert ('  "64x64x64": {"params": {"BM": 64, "PACK": 0}, "time_us": 5.25, "candidates": 3, '
            '"close": [{"changed": {"PACK": 1}, "time_us": 5.4}]},') in text.splitlines()
    assert '  "1x4096x4096": {"params": {"BM": 128, "PACK": 1}, "time_us": 27.37, "candidates": 73}' in text
    assert json.loads(text)["version"] == choice_table.VERSION


def test_a_choice_keeps_the_candidates_within_five_percent_of_it_fastest_first():
    timed = [({"BM": 64, "SPLITS": 1}, 10.0), ({"BM": 64, "SPLITS": 2}, 10.5), ({"BM": 128, "SPLITS": 2}, 10.2),
             ({"BM": 128, "SPLITS": 1}, 10.51), ({"BM": 32, "SPLITS": 1}, 10.0),
             ({"BM": 64, "SPLITS": 1, "GEMV": 1}, 10.1)]  # other names: not written as a change of the best
    choice = choice_table.choice_of({"BM": 64, "SPLITS": 1}, 10.0, timed)
    assert choice.candidates == 6 and choice.close == (
        Close({"BM": 32}, 10.0), Close({"BM": 128, "SPLITS": 2}, 10.2), Close({"SPLITS": 2}, 10.5))
    assert choice.time_of({"BM": 64, "SPLITS": 1}) == 10.0 and choice.time_of({"BM": 128, "SPLITS": 2}) == 10.2
    assert choice.time_of({"BM": 128, "SPLITS": 1}) is None  # 5.1% slower: not kept
    assert choice.time_of({"BM": 128}) is None  # not a candidate's whole parameters


def test_the_measured_line_names_the_near_ties_where_the_table_kept_them():
    with_close, without = TABLE.choices[Shape(64, 64, 64)], TABLE.choices[Shape(1, 4096, 4096)]
    assert choice_table.measured_line(TABLE, with_close, "t.json") == (
        "measured the fastest of 3 choices on the NVIDIA H200 (5.2 us; 1 other within 5%; t.json)")
    assert choice_table.measured_line(TABLE, without, "t.json") == (
        "measured the fastest of 73 choices on the NVIDIA H200 (27.4 us; t.json)")


def test_an_existing_file_is_kept_without_overwrite(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("mine")
    with pytest.raises(TargetError, match="--table .*already exists; give --overwrite"):
        choice_table.write(path, TABLE)
    assert path.read_text() == "mine" and os.listdir(tmp_path) == ["t.json"]
    choice_table.write(path, TABLE, overwrite=True)
    assert choice_table.read(path) == TABLE


def _with(**changes) -> dict:
    data = TABLE.to_dict()
    for key, value in changes.items():
        if value is _DROP:
            data.pop(key)
        else:
            data[key] = value
    return data


_DROP = object()
_GOOD = {"params": {"BM": 64}, "time_us": 5.0, "candidates": 3}
_NEAR = {"changed": {"BM": 32}, "time_us": 5.1}


@pytest.mark.parametrize("data, fragment", [
    ([1, 2], "not a gemmbench choice table"),
    (_with(format="something else"), "not a gemmbench choice table"),
    (_with(version=2), "version int 2 is not one this gemmbench reads (1)"),
    (_with(version="1"), "version str"),
    (_with(version=True), "version bool"),
    (_with(version=_DROP), "version NoneType"),
    (_with(rung=_DROP), "missing field 'rung'"),
    (_with(rung="28"), "rung should be int, not str"),
    (_with(rung="x" * 100), 'rung should be int, not str "' + "x" * 38 + "…"),  # a long value cut
    (_with(sm_count=0), "sm_count should be > 0"),
    (_with(sm_count=132.0), "sm_count should be int"),
    (_with(gpu=None), "gpu should be str"),
    (_with(command=["gemmbench"]), "command should be str"),
    (_with(source_digest="abc"), "source_digest should be 16 hex digits"),
    (_with(choices=[]), "choices should be dict"),
    (_with(choices={"64x64": _GOOD}), "is not a shape MxNxK"),
    (_with(choices={"0x64x64": _GOOD}), "is not a shape MxNxK"),
    (_with(choices={"６４x64x64": _GOOD}), "is not a shape MxNxK"),
    (_with(choices={"64x64x64": 5}), "choices['64x64x64'] should be an object"),
    (_with(choices={"64x64x64": {**_GOOD, "params": {"BM": -1}}}), "params.BM should be an integer >= 0"),
    (_with(choices={"64x64x64": {**_GOOD, "params": {"BM": True}}}), "params.BM should be an integer >= 0"),
    (_with(choices={"64x64x64": {**_GOOD, "params": {"BM": 6.4}}}), "params.BM should be an integer >= 0"),
    (_with(choices={"64x64x64": {**_GOOD, "params": None}}), "params should be dict"),
    (_with(choices={"64x64x64": {**_GOOD, "time_us": 0}}), "time_us should be > 0"),
    (_with(choices={"64x64x64": {**_GOOD, "time_us": "5"}}), "time_us should be float"),
    (_with(choices={"64x64x64": {k: v for k, v in _GOOD.items() if k != "candidates"}}), "missing field"),
    (_with(choices={"64x64x64": {**_GOOD, "close": {}}}), "close should be list"),
    (_with(choices={"64x64x64": {**_GOOD, "close": [_NEAR] * 3}}), "close holds 3 candidates of 3"),
    (_with(choices={"64x64x64": {**_GOOD, "close": [5]}}), "close[0] should be an object"),
    (_with(choices={"64x64x64": {**_GOOD, "close": [{"time_us": 5.1}]}}),
     "missing field choices['64x64x64'].close[0].'changed'"),
    (_with(choices={"64x64x64": {**_GOOD, "close": [{**_NEAR, "changed": {}}]}}), "should name some of the choice's"),
    (_with(choices={"64x64x64": {**_GOOD, "close": [{**_NEAR, "changed": {"BN": 64}}]}}), "should name some of the"),
    (_with(choices={"64x64x64": {**_GOOD, "close": [{**_NEAR, "changed": {"BM": -2}}]}}), "changed.BM should be an"),
    (_with(choices={"64x64x64": {**_GOOD, "close": [{**_NEAR, "time_us": 4.9}]}}), "within 5% above the choice's 5.0"),
    (_with(choices={"64x64x64": {**_GOOD, "close": [{**_NEAR, "time_us": 5.3}]}}), "not 5.3"),
    (_with(choices={"64x64x64": {**_GOOD, "close": [{**_NEAR, "time_us": "5"}]}}), "time_us should be float"),
])
def test_a_hostile_table_is_refused_naming_the_field(tmp_path, data, fragment):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UnusableTable) as caught:
        choice_table.read(path)
    message = str(caught.value)
    assert fragment in message and message.startswith(str(path)) and "\n" not in message
    table, why = choice_table.load(path, TABLE.source_digest)
    assert table is None and fragment in why


@pytest.mark.parametrize("content, fragment", [
    (b"{not json", "not JSON"),
    (b"\xff\xfe", "not UTF-8"),
    (b"[" * 100 + b"]" * 100, "nested more than"),
    (b'{"version": 1e999999999999999999999999999999999999999999}', "number"),
    (b'{"version": NaN}', "NaN"),
    (b"", "not JSON"),
])
def test_a_file_that_is_not_json_is_refused(tmp_path, content, fragment):
    path = tmp_path / "t.json"
    path.write_bytes(content)
    table, why = choice_table.load(path, TABLE.source_digest)
    assert table is None and fragment in why and str(path) in why


def test_what_is_not_a_regular_file_is_never_read(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for name, fragment in (("fifo", "FIFO"), ("dir", "directory"), ("missing", "no such file")):
        table, why = choice_table.load(tmp_path / name, TABLE.source_digest)
        assert table is None and fragment in why
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (choice_table.MAX_BYTES + 1))
    assert "more than" in choice_table.load(big, TABLE.source_digest)[1]


def test_a_table_of_another_source_is_not_used_and_says_how_to_remake_it(tmp_path):
    path = tmp_path / "t.json"
    choice_table.write(path, TABLE)
    assert choice_table.load(path, TABLE.source_digest) == (TABLE, None)
    table, why = choice_table.load(path, "fedcba9876543210")
    assert table is None and "another version of rung 12's source" in why and TABLE.command in why


# -- rung 28's shipped table -------------------------------------------------------------

def test_the_shipped_table_is_read_and_made_on_the_rungs_current_source():
    table, why = any_shape.shipped_table()
    assert why is None and table.source_digest == source_digest(RUNG28) == file_digest(any_shape.SOURCE)
    assert (table.rung, table.gpu, table.sm_count) == (28, "NVIDIA H200", 132)
    assert table.command.startswith("gemmbench tune -i 28 --shapes benchmarks/shapes --table "
                                    "gemmbench/rungs/any_shape_h200.json --overwrite --no-tune-cache")


def test_rung_28_chooses_what_the_shipped_table_holds_and_says_so():
    table, _ = any_shape.shipped_table()
    assert len(table.choices) == 103
    for shape, choice in table.choices.items():
        M, N, K = shape.M, shape.N, shape.K
        chosen = RUNG28.params_for(M, N, K, H200_SMS)
        if gemv.applies(M, N):  # a GEMV runs gemv.cu whatever the table says; the tile parameters are unused
            assert chosen["GEMV"] == 1 == choice.params["GEMV"], shape
            continue
        assert chosen == choice.params, shape
        line = any_shape.explain(M, N, K, H200_SMS, choice.params)
        assert f"measured the fastest of {choice.candidates} choices" in line, shape


def test_without_a_usable_table_rung_28_takes_the_models_choice_and_says_why(tmp_path, monkeypatch):
    stale = dataclasses.replace(any_shape.shipped_table()[0], source_digest="0" * 16)
    path = tmp_path / "any_shape_h200.json"
    choice_table.write(path, stale)
    monkeypatch.setattr(any_shape, "TABLE_PATH", path)  # another path: read afresh (tables are cached by path)
    shape = (64, 64, 131072)
    name, splits, pack = any_shape.model_choice(*shape, H200_SMS)
    params = RUNG28.params_for(*shape, H200_SMS)
    assert params == {**any_shape.CONFIGS[name], "SPLITS": splits, "PACK": pack}
    line = any_shape.explain(*shape, H200_SMS, params)
    assert "measured the fastest" not in line and "the measured table is not used" in line
    assert "another version of rung 28's source" in line and "gemmbench tune -i 28" in line


def test_a_table_entry_the_rung_refuses_is_not_used():
    table = dataclasses.replace(TABLE, choices={Shape(64, 64, 64): Choice({**any_shape.DEFAULT, "KMAJOR_A": 3}, 1.0, 1),
                                                Shape(9, 64, 64): Choice(dict(any_shape.CONFIGS["vector rows"],
                                                                              SPLITS=1, PACK=1), 1.0, 1),
                                                Shape(8, 64, 64): Choice({"BM": 64}, 1.0, 1),
                                                Shape(7, 64, 64): Choice({**any_shape.DEFAULT, "TM": 0}, 1.0, 1)})
    for M in (64, 9, 8, 7):
        assert any_shape.measured_choice(M, 64, 64, 132, table) is None
    assert any_shape.measured_choice(64, 64, 64, 100, dataclasses.replace(
        TABLE, choices={Shape(64, 64, 64): Choice(dict(any_shape.DEFAULT), 1.0, 1)})) is None  # another SM count
