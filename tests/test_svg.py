"""The HTML report's SVG writer: scales and ticks, lines, bars, and every
string from a record written as text."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from gemmbench.output import svg

HOSTILE = "<script>alert(1)</script>\x1b[2J\"'&"


def parse(markup: str) -> ET.Element:
    """The SVG as XML: parsing proves it well formed (tags closed, attributes quoted and escaped)."""
    return ET.fromstring(markup)


def elements(root: ET.Element, tag: str, css: str | None = None) -> list[ET.Element]:
    return [e for e in root.iter(tag) if css is None or css in (e.get("class") or "").split()]


# --------------------------------------------------------------------------
# scales and ticks
# --------------------------------------------------------------------------

def test_log2_scale_places_each_doubling_an_equal_step():
    x = svg.Scale(256, 8192, 100, 600, base=2)  # five doublings over 500 pixels
    assert [x(v) for v in (256, 512, 1024, 8192)] == pytest.approx([100, 200, 300, 600])
    assert not x.holds(0) and not x.holds(-1) and not x.holds(math.inf) and x.holds(3)


def test_linear_scale_and_a_flipped_pixel_range():
    y = svg.Scale(0, 200, 400, 0)  # SVG's y grows downwards: larger values higher up
    assert y(0) == 400 and y(200) == 0 and y(50) == pytest.approx(300) and y.holds(-5)


def test_ticks():
    assert svg.linear_ticks(0, 230) == [0, 50, 100, 150, 200]
    assert svg.linear_ticks(0, 9.3) == [0, 2, 4, 6, 8] and svg.linear_ticks(0, 9.3, most=10) == list(range(10))
    assert svg.log_ticks(200, 300_000, 10) == [1_000, 10_000, 100_000]  # over three decades: powers only
    assert svg.log_ticks(150, 40_000, 10) == [200, 500, 1_000, 2_000, 5_000, 10_000, 20_000]
    assert svg.log_ticks(200, 9000, 2) == [256, 512, 1024, 2048, 4096, 8192]
    assert svg.tick_label(256.00000000000006) == "256" and svg.tick_label(8192) == "8,192"
    assert svg.tick_label(0.25) == "0.25" and svg.tick_label(12.5) == "12.5"


# --------------------------------------------------------------------------
# lines
# --------------------------------------------------------------------------

def two_series() -> list[svg.Series]:
    fast = svg.Series("fast", [svg.Point(256, 1000, "fast 256"), svg.Point(512, 4000, "fast 512", hollow=True)],
                      color="#4e79a7", marker="square",
                      missing=[svg.Missing(1024, True, "fast 1024 FAIL"), svg.Missing(2048, False, "fast 2048 SKIP")])
    slow = svg.Series("slow", [svg.Point(256, 100, "slow 256"), svg.Point(512, 200, "slow 512"),
                               svg.Point(1024, 300, "slow 1024"), svg.Point(2048, 400, "slow 2048")],
                      color="#222222", dash="dashed", marker=None)
    return [fast, slow]


def test_line_chart_draws_each_point_where_its_value_says():
    root = parse(svg.line_chart(two_series(), title="t", x_label="size", y_label="GFLOP/s"))
    points = elements(root, "rect", "point")
    assert [p.findtext("title") for p in points] == ["fast 256", "fast 512"]
    (low, high) = [float(p.get("y")) for p in points]
    assert high < low  # 4000 is drawn above 1000
    assert points[0].get("fill") == "#4e79a7" and points[1].get("fill") == "#ffffff"  # flagged: open
    lines = elements(root, "polyline")
    assert [l.findtext("title") for l in lines] == ["fast", "slow"]
    assert lines[1].get("stroke-dasharray") == svg.DASHES["dashed"] and lines[0].get("stroke-dasharray") is None
    slow_xs = [float(pair.split(",")[0]) for pair in lines[1].get("points").split()]
    steps = [b - a for a, b in zip(slow_xs, slow_xs[1:])]
    assert steps == pytest.approx([steps[0]] * 3)  # log2 x: each doubling the same width
    # the failed and skipped sizes are marked on the axis, with their reasons
    assert [p.findtext("title") for p in elements(root, "path")] == ["fast 1024 FAIL"]
    assert "fast 2048 SKIP" in [p.findtext("title") for p in elements(root, "polygon")]
    legend = [t.text for t in elements(root, "text")]
    assert "fast" in legend and "slow" in legend and "t" in legend


def test_line_chart_without_a_value_says_so():
    root = parse(svg.line_chart([svg.Series("none", [])], title="t", x_label="x", y_label="y"))
    assert "nothing to draw: no timed value" in [t.text for t in elements(root, "text")]


def test_guides_and_given_ticks():
    chart = svg.line_chart([svg.Series("s", [svg.Point(1, 1, "a"), svg.Point(100, 50, "b")])], title="t",
                           x_label="x", y_label="y", x_base=10, x_ticks=[1, 10, 100], guides=[svg.Guide(20, "ridge")])
    texts = [t.text for t in elements(parse(chart), "text")]
    assert {"1", "10", "100", "ridge"} <= set(texts)


# --------------------------------------------------------------------------
# bars
# --------------------------------------------------------------------------

def test_bars_are_as_long_as_their_values_and_flagged_ones_are_open():
    bars = [svg.Bar("half", 50.0, "50.0"), svg.Bar("whole", 100.0, "100.0"),
            svg.Bar("doubtful", 150.0, "(150.0)?", hollow=True, tooltip="tip"),
            svg.Bar("failed", None, "FAIL")]
    root = parse(svg.bar_chart(bars, title="% of cuBLAS", axis_label="%", reference_label="cuBLAS = 100%"))
    rects = elements(root, "rect", "bar")
    widths = [float(r.get("width")) for r in rects]
    assert len(rects) == 3  # coordinates are written to 0.01 pixel
    assert widths[1] == pytest.approx(2 * widths[0], abs=0.03) and widths[2] == pytest.approx(3 * widths[0], abs=0.03)
    assert rects[2].get("fill") == "#ffffff" and rects[2].get("stroke-dasharray") and rects[2].findtext("title") == "tip"
    assert [t.text for t in elements(root, "text", "bar-text")] == ["50.0", "100.0", "(150.0)?", "FAIL"]
    # the 100% line stands where the bar of 100 ends
    left = float(rects[0].get("x"))
    reference = next(l for l in elements(root, "line") if l.get("stroke-dasharray") == "5 3")
    assert float(reference.get("x1")) == pytest.approx(left + widths[1], abs=0.02)


# --------------------------------------------------------------------------
# strings are text
# --------------------------------------------------------------------------

def test_every_string_is_escaped():
    series = [svg.Series(HOSTILE, [svg.Point(1, 1, HOSTILE), svg.Point(2, 2, HOSTILE)])]
    for markup in (svg.line_chart(series, title=HOSTILE, x_label=HOSTILE, y_label=HOSTILE, keys=[HOSTILE]),
                   svg.bar_chart([svg.Bar(HOSTILE, 1.0, HOSTILE, tooltip=HOSTILE)], title=HOSTILE,
                                 axis_label=HOSTILE, reference_label=HOSTILE)):
        assert "<script" not in markup.lower() and "\x1b" not in markup
        root = parse(markup)  # quotes and ampersands escaped in attributes too
        assert root.get("aria-label") == svg.printable(HOSTILE)
        texts = [t.text for t in root.iter("text")] + [t.text for t in root.iter("title")]
        assert "<script>alert(1)</script>\\x1b[2J\"'&" in texts


def test_no_url_in_a_chart():
    chart = svg.line_chart(two_series(), title="t", x_label="x", y_label="y")
    assert "http" not in chart and "href" not in chart and "url(" not in chart
