import pytest

from gemmbench.backend import Shape
from gemmbench.sweep import parse_sweep, sweep_shapes


@pytest.mark.parametrize("text, sizes", [
    ("128..4096", [128, 256, 512, 1024, 2048, 4096]),
    ("100..1000", [100, 200, 400, 800]),
    ("100..1000:100", list(range(100, 1001, 100))),
    ("7..7", [7]),
    ("128,1000,4096", [128, 1000, 4096]),
    (" 64 .. 256 ", [64, 128, 256]),
    ("5", [5]),
])
def test_valid_sweeps(text, sizes):
    assert parse_sweep(text) == sizes


@pytest.mark.parametrize("text", ["", "abc", "0..8", "8..4", "1..10:0", "1,,2", "1,-2", "1.5,2", "1..", "..4",
                                  "1..100000:1"])
def test_invalid_sweeps(text):
    with pytest.raises(ValueError):
        parse_sweep(text)


def test_shapes_square_unless_pinned():
    assert sweep_shapes([8, 16], None, None, None) == [Shape(8, 8, 8), Shape(16, 16, 16)]
    assert sweep_shapes([8, 16], None, None, 3) == [Shape(8, 8, 3), Shape(16, 16, 3)]
    with pytest.raises(ValueError):
        sweep_shapes([8], 1, 2, 3)


@pytest.mark.parametrize("text, named", [
    ("1..100000000000:1", "stop 100000000000"), ("1..2000000:1", "2000000 sizes"), ("1..x", "stop 'x'"),
    ("０..8", "start '０'"), ("8,٣", "size 2 '٣'"), ("1..10:0", "step must be >= 1"), ("8,0", "size 2 must be >= 1"),
])
def test_invalid_sweeps_name_the_bad_part(text, named):
    with pytest.raises(ValueError, match=named):
        parse_sweep(text)


def test_long_step_sweep_is_refused_without_building_it():
    import time
    t0 = time.process_time()  # CPU time: a busy machine must not fail it
    with pytest.raises(ValueError, match="1000000000 sizes"):
        parse_sweep("1..1000000000:1")
    assert time.process_time() - t0 < 1.0  # building a billion sizes takes minutes
