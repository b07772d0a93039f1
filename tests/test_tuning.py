"""The tuning cache and candidate enumeration (no GPU needed)."""

import dataclasses
import json

import pytest

from gemmbench.backend import Shape
from gemmbench.rungs import get_spec
from gemmbench.tuning import TuningCache, candidates, code_only, shape_class, source_digest

RUNG9 = get_spec("gpu", 9)
SHAPE = Shape(4096, 4096, 4096)


def test_shape_class_rounds_each_dimension_to_a_power_of_two():
    assert shape_class(Shape(1000, 1024, 1100)) == "1024x1024x1024"
    assert shape_class(Shape(4096, 3000, 2800)) == "4096x4096x2048"  # the log-scale midpoint is 2896
    assert shape_class(Shape(1, 3, 7)) == "1x4x8"


def test_candidates_are_valid_and_start_with_the_defaults():
    found, valid = candidates(RUNG9)
    assert found[0] == dict(RUNG9.params) and len(found) == valid > 10
    assert all(RUNG9.invalid_reason(p) is None for p in found)
    assert len({tuple(sorted(p.items())) for p in found}) == len(found)


def test_candidate_limit_is_a_seeded_sample():
    a, valid = candidates(RUNG9, limit=5, seed=3)
    b, _ = candidates(RUNG9, limit=5, seed=3)
    assert len(a) == 5 and a == b and a[0] == dict(RUNG9.params) and valid > 5


def test_store_then_lookup_round_trip(tmp_path):
    cache = TuningCache(tmp_path / "tuning.json")
    best = {**RUNG9.params, "BK": 8}
    assert cache.store("NVIDIA H200", RUNG9, SHAPE, best, 40000.0, 12) is None
    again = TuningCache(tmp_path / "tuning.json")
    assert again.lookup("NVIDIA H200", RUNG9, Shape(4000, 4000, 4100)) == best  # same shape class
    assert again.lookup("NVIDIA H200", RUNG9, Shape(1024, 1024, 1024)) is None
    assert again.lookup("NVIDIA A100", RUNG9, SHAPE) is None


def test_entries_of_a_changed_kernel_or_invalid_params_are_ignored(tmp_path):
    path = tmp_path / "tuning.json"
    TuningCache(path).store("GPU", RUNG9, SHAPE, dict(RUNG9.params), 1.0, 1)
    data = json.loads(path.read_text())
    (entry,) = data["entries"].values()
    entry["source_digest"] = "0" * 16  # the source changed since
    path.write_text(json.dumps(data))
    assert TuningCache(path).lookup("GPU", RUNG9, SHAPE) is None
    entry["source_digest"] = source_digest(RUNG9)
    entry["params"] = {**RUNG9.params, "TM": 3}  # no longer accepted by check()
    path.write_text(json.dumps(data))
    assert TuningCache(path).lookup("GPU", RUNG9, SHAPE) is None


def test_an_unreadable_cache_is_moved_aside_not_overwritten(tmp_path):
    path = tmp_path / "tuning.json"
    path.write_text("{not json")
    cache = TuningCache(path)
    assert cache.lookup("GPU", RUNG9, SHAPE) is None and cache.problem
    note = cache.store("GPU", RUNG9, SHAPE, dict(RUNG9.params), 1.0, 1)
    assert "moved to" in note
    (aside,) = tmp_path.glob("tuning.json.unreadable-*")
    assert aside.read_text() == "{not json"
    assert TuningCache(path).lookup("GPU", RUNG9, SHAPE) == dict(RUNG9.params)


def test_digest_follows_the_source_and_what_it_inlines(tmp_path, monkeypatch):
    import gemmbench.gpu.compile as compile
    (tmp_path / "x.cu").write_text('#include "y.cuh"\na')
    (tmp_path / "y.cuh").write_text("b")
    monkeypatch.setattr(compile, "source_dir", lambda name: tmp_path)
    spec = dataclasses.replace(RUNG9, source="x.cu")
    before = source_digest(spec)
    (tmp_path / "y.cuh").write_text("c")
    assert source_digest(spec) != before


def test_digest_ignores_comments_and_layout_but_not_code(tmp_path, monkeypatch):
    import gemmbench.gpu.compile as compile
    monkeypatch.setattr(compile, "source_dir", lambda name: tmp_path)
    spec = dataclasses.replace(RUNG9, source="x.cu")

    def digest(text):
        (tmp_path / "x.cu").write_text(text)
        return source_digest(spec)
    base = digest("int a = 1;\nint b = 2;\n")
    assert digest("// why a is 1\n  int a = 1;  /* and\n b */\n\n\tint b = 2;\n") == base
    assert digest("int a = 1;\nint b = 3;\n") != base
    assert digest("int a = 1; int b = 2;\n") != base  # a line break is kept (it ends a directive)


def test_code_only_keeps_literals_and_what_a_comment_or_blank_line_changes():
    assert code_only('s = "a // b"; c = \'/\'; // gone') == 's = "a // b"; c = \'/\';'
    # a comment is a space, as for the compiler: one over two lines joins them
    assert code_only("#define X 1 /* a\nb */ + 2") == "#define X 1   + 2"
    # a blank line ends a continued #define: it stays
    assert code_only("#define X \\\n\nint y;") == "#define X \\\n\nint y;"
    assert code_only("#define X \\\nint y;") == "#define X \\\nint y;"
    assert code_only('#line 7 "/home/me/k.cu"\nint y;\n  # line 1 "h.cuh"') == "int y;"
    assert code_only("#linear\nint y;") == "#linear\nint y;"


def test_an_unterminated_comment_or_literal_runs_to_the_end():
    assert code_only("int a; /* open\nint b;") == "int a;"
    assert code_only("x = 'a\\") == "x = 'a\\"
    assert code_only('s = "open\nint b; // c') == 's = "open\nint b;'


@pytest.mark.parametrize("opener", ["'", '"', "/*"])
def test_every_comment_or_literal_that_starts_matches_at_once(opener):
    # the digest's scan stays linear on any input (a hostile kernel file included) because a match
    # that starts at a quote or "/*" never fails and so is never retried from the next position
    from gemmbench.tuning import _COMMENT_OR_LITERAL
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @hypothesis.given(st.text(alphabet="'\"\\/*\nax ", max_size=60))
    def check(rest):
        assert _COMMENT_OR_LITERAL.match(opener + rest)
    check()


def test_a_kernel_files_digest_survives_a_comment_above_its_include(tmp_path):
    # a user's file is expanded with #line directives around what it inlines; adding a comment line
    # above the #include moves them, but the code is the same
    from gemmbench.tuning import file_digest
    (tmp_path / "h.cuh").write_text("int h;\n")
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include "h.cuh"\nint k;\n')
    before = file_digest(str(kernel))
    kernel.write_text('// my kernel\n#include "h.cuh"\nint k;\n')
    assert file_digest(str(kernel)) == before
    kernel.write_text('#include "h.cuh"\nint k2;\n')
    assert file_digest(str(kernel)) != before


def test_compile_candidates_keeps_order_and_reports_nvcc_errors(monkeypatch):
    import gemmbench.gpu.compile as compile
    from gemmbench.tuning import compile_candidates

    def fake(spec, cc, params):
        if params["BK"] == 32:
            raise compile.CompileError("nvcc failed: too many resources", "nvcc failed: too many resources\nmore detail")
    monkeypatch.setattr(compile, "cubin", fake)
    found = [{"BK": 8}, {"BK": 32}, {"BK": 16}]
    assert list(compile_candidates(RUNG9, (9, 0), found, jobs=2)) == [
        ({"BK": 8}, None), ({"BK": 32}, "nvcc failed: too many resources"), ({"BK": 16}, None)]


def test_switches_of_zero_are_stored_and_used(tmp_path):
    """Rung 28's KMAJOR_A, VECTOR and PACK (and rung 17's PERSISTENT) are 0 or 1: an entry holding 0 is used."""
    rung28 = get_spec("gpu", 28)
    best = {**rung28.params, "KMAJOR_A": 0, "BM": 64, "BN": 64, "TM": 4, "TN": 4, "NUM_THREADS": 256, "PACK": 0}
    assert rung28.invalid_reason(best) is None
    cache = TuningCache(tmp_path / "tuning.json")
    cache.store("GPU", rung28, SHAPE, best, 1.0, 1)
    again = TuningCache(tmp_path / "tuning.json")
    assert again.lookup("GPU", rung28, SHAPE) == best and not again.notes
