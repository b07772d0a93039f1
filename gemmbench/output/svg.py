"""A small SVG writer for the HTML report: scales (linear, log2, log10),
axes with ticks and grid lines, lines with markers, horizontal bars, a
legend, and a tooltip (``<title>``) on every mark. No dependency: the report
must draw without matplotlib (the optional ``plot`` extra), and inline SVG
needs no script and no network to show.

Every string that reaches the SVG (titles, labels, tooltips) goes through
``escape``: printable (control characters written as escapes, as on the
terminal) and then HTML-escaped, so a kernel named ``<script>`` is text.
Numbers are written by this module, never taken as text from a caller.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

from .text import cut, printable

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
INK = "#222222"
GRID = "#e3e3e3"
MUTED = "#777777"
# Tableau 10: neighbouring rungs differ in colour (and marker)
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")
MARKERS = ("circle", "square", "diamond", "triangle")
DASHES = {"solid": None, "dashed": "7 4", "dotted": "2 3", "dashdot": "8 3 2 3"}
CHAR_WIDTH = 0.58  # of the font size: a safe average for the sans-serif fonts above


def escape(value) -> str:
    """Any string from a record or a file, as SVG/HTML text or an attribute value."""
    return html.escape(printable(value), quote=True)


def _num(value: float) -> str:
    """A coordinate: two decimals at most, no exponent."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def text_width(text: str, size: float) -> float:
    return len(printable(text)) * size * CHAR_WIDTH


# --------------------------------------------------------------------------
# scales and ticks
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Scale:
    """Data in [low, high] to pixels in [start, end]; ``base`` 2 or 10 for a
    logarithmic scale (then low > 0), None for a linear one."""

    low: float
    high: float
    start: float
    end: float
    base: int | None = None

    def _t(self, value: float) -> float:
        return math.log(value, self.base) if self.base else value

    def __call__(self, value: float) -> float:
        lo, hi = self._t(self.low), self._t(self.high)
        span = (hi - lo) or 1.0
        return self.start + (self._t(value) - lo) / span * (self.end - self.start)

    def holds(self, value: float) -> bool:
        """A value this scale can place (a log scale cannot place 0 or less)."""
        return math.isfinite(value) and (self.base is None or value > 0)


def padded_range(values: list[float], base: int | None, pad: float = 0.06) -> tuple[float, float]:
    """A range around ``values`` with a margin (on a log scale, in decades or octaves)."""
    lo, hi = min(values), max(values)
    if base:
        lo_t, hi_t = math.log(lo, base), math.log(hi, base)
        margin = max((hi_t - lo_t) * pad, 0.25)
        return base ** (lo_t - margin), base ** (hi_t + margin)
    if lo == hi:
        return (lo - 1, hi + 1) if lo else (0.0, 1.0)
    margin = (hi - lo) * pad
    return lo - margin, hi + margin


def linear_ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Round values (1, 2, 2.5 or 5 times a power of ten apart) within [low, high]."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9)
    return [round(i * step, 10) for i in range(first, int(math.floor(high / step + 1e-9)) + 1)]


def log_ticks(low: float, high: float, base: int) -> list[float]:
    """Powers of ``base`` within [low, high]; for base 10 over three decades
    or fewer, 1-2-5 steps too, so a short range still has labels."""
    first, last = math.floor(math.log(low, base) - 1e-9), math.ceil(math.log(high, base) + 1e-9)
    steps = (1, 2, 5) if base == 10 and math.log10(high / low) <= 3 else (1,)
    ticks = [m * base ** e for e in range(first, last + 1) for m in steps]
    return [t for t in ticks if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]


def tick_label(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1:  # a size from a cube root (256.00000000000006) is a whole number
        return f"{value:,.0f}" if abs(value - round(value)) < 1e-6 * abs(value) else f"{value:,.1f}"
    return f"{value:.3g}"


# --------------------------------------------------------------------------
# the canvas
# --------------------------------------------------------------------------

class Svg:
    """An SVG element built from primitives; ``str(svg)`` is the markup."""

    def __init__(self, width: float, height: float, label: str):
        self.width, self.height, self.label = width, height, label
        self.parts: list[str] = []

    def add(self, markup: str) -> None:
        self.parts.append(markup)

    @staticmethod
    def _tip(tooltip: str | None) -> str:
        return f"<title>{escape(tooltip)}</title>" if tooltip else ""

    def line(self, x1, y1, x2, y2, stroke=INK, width=1.0, dash: str | None = None) -> None:
        self.add(f'<line x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" y2="{_num(y2)}" stroke="{stroke}" '
                 f'stroke-width="{_num(width)}"' + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")

    def polyline(self, points, stroke, width=1.5, dash: str | None = None, tooltip: str | None = None) -> None:
        coords = " ".join(f"{_num(x)},{_num(y)}" for x, y in points)
        self.add(f'<polyline points="{coords}" fill="none" stroke="{stroke}" stroke-width="{_num(width)}" '
                 f'stroke-linejoin="round"' + (f' stroke-dasharray="{dash}"' if dash else "")
                 + (f">{self._tip(tooltip)}</polyline>" if tooltip else "/>"))

    def marker(self, shape: str, x, y, color, hollow=False, size=4.0, tooltip: str | None = None,
               css: str | None = None) -> None:
        """A data point; hollow (white inside) for a figure not for quoting."""
        fill = "#ffffff" if hollow else color
        style = f'fill="{fill}" stroke="{color}" stroke-width="{1.6 if hollow else 1}"' + \
            (f' class="{css}"' if css else "")
        s = size
        if shape == "circle":
            tag = f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{_num(s)}" {style}'
        elif shape == "square":
            tag = f'<rect x="{_num(x - s)}" y="{_num(y - s)}" width="{_num(2 * s)}" height="{_num(2 * s)}" {style}'
        else:
            if shape == "diamond":
                pts = [(x, y - 1.3 * s), (x + 1.3 * s, y), (x, y + 1.3 * s), (x - 1.3 * s, y)]
            elif shape == "triangle-down":
                pts = [(x - 1.2 * s, y - s), (x + 1.2 * s, y - s), (x, y + 1.2 * s)]
            else:  # triangle
                pts = [(x, y - 1.3 * s), (x + 1.2 * s, y + s), (x - 1.2 * s, y + s)]
            tag = f'<polygon points="{" ".join(f"{_num(a)},{_num(b)}" for a, b in pts)}" {style}'
        self.add(tag + (f">{self._tip(tooltip)}</{tag[1:tag.index(' ')]}>" if tooltip else "/>"))

    def cross(self, x, y, color, size=4.5, tooltip: str | None = None) -> None:
        """An x: a failed point."""
        d = f"M{_num(x - size)},{_num(y - size)}L{_num(x + size)},{_num(y + size)}" \
            f"M{_num(x - size)},{_num(y + size)}L{_num(x + size)},{_num(y - size)}"
        self.add(f'<path d="{d}" stroke="{color}" stroke-width="2" fill="none">{self._tip(tooltip)}</path>')

    def rect(self, x, y, w, h, fill, stroke: str | None = None, dash: str | None = None,
             tooltip: str | None = None, css: str | None = None) -> None:
        attrs = f'x="{_num(x)}" y="{_num(y)}" width="{_num(max(w, 0))}" height="{_num(max(h, 0))}" fill="{fill}"'
        if stroke:
            attrs += f' stroke="{stroke}" stroke-width="1.2"' + (f' stroke-dasharray="{dash}"' if dash else "")
        if css:
            attrs += f' class="{css}"'
        self.add(f"<rect {attrs}>{self._tip(tooltip)}</rect>" if tooltip else f"<rect {attrs}/>")

    def text(self, x, y, value, size=12.0, anchor="start", fill=INK, weight: str | None = None,
             rotate: float | None = None, baseline: str | None = None, css: str | None = None,
             halo: bool = False) -> None:
        """``halo``: a white outline under the letters, so a line it crosses does not hide them."""
        attrs = f'x="{_num(x)}" y="{_num(y)}" font-size="{_num(size)}" fill="{fill}"'
        if halo:
            attrs += ' stroke="#ffffff" stroke-width="3" paint-order="stroke"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if weight:
            attrs += f' font-weight="{weight}"'
        if baseline:
            attrs += f' dominant-baseline="{baseline}"'
        if rotate is not None:
            attrs += f' transform="rotate({_num(rotate)} {_num(x)} {_num(y)})"'
        if css:
            attrs += f' class="{css}"'
        self.add(f"<text {attrs}>{escape(value)}</text>")

    def __str__(self) -> str:
        # no xmlns: inline in HTML the parser puts <svg> in the SVG namespace, and the report names no URL
        return (f'<svg viewBox="0 0 {_num(self.width)} {_num(self.height)}" '
                f'width="{_num(self.width)}" height="{_num(self.height)}" role="img" '
                f'aria-label="{escape(self.label)}" font-family="{FONT}">'
                f"<title>{escape(self.label)}</title>" + "".join(self.parts) + "</svg>")


# --------------------------------------------------------------------------
# charts
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Point:
    x: float
    y: float
    tooltip: str
    hollow: bool = False  # a flagged figure: drawn open, not for quoting


@dataclass(frozen=True)
class Missing:
    """An x where a series has no value (failed or skipped), marked on the axis."""

    x: float
    failed: bool
    tooltip: str


@dataclass
class Series:
    label: str
    points: list[Point]
    color: str = INK
    dash: str = "solid"  # a key of DASHES
    marker: str | None = "circle"  # None: a line alone
    line: bool = True  # False: markers alone
    width: float = 1.6
    missing: list[Missing] = field(default_factory=list)


@dataclass(frozen=True)
class Guide:
    """A vertical reference line with a label (a roofline's ridge)."""

    x: float
    label: str


LEGEND_FONT = 11.5
LEGEND_ROW = 17
LEGEND_CHARS = 46


def line_chart(series: list[Series], *, title: str, x_label: str, y_label: str, x_base: int | None = 2,
               y_base: int | None = 10, x_ticks: list[float] | None = None, guides: list[Guide] = (),
               width: float = 1080, plot_height: float = 420, keys: list[str] = ()) -> str:
    """Lines (and markers) over x, a legend on the right; failed and skipped
    x values of a series are marked on the x axis in its colour (x: failed,
    open triangle: skipped). ``keys`` are short lines under the legend that say
    how to read the marks."""
    xs = [p.x for s in series for p in s.points] + [m.x for s in series for m in s.missing] + [g.x for g in guides]
    ys = [p.y for s in series for p in s.points]
    x_probe, y_probe = Scale(1, 2, 0, 1, x_base), Scale(1, 2, 0, 1, y_base)
    xs, ys = [x for x in xs if x_probe.holds(x)], [y for y in ys if y_probe.holds(y)]
    legend_width = max([text_width(cut(s.label, LEGEND_CHARS), LEGEND_FONT) for s in series] +
                       [text_width(k, LEGEND_FONT - 1) for k in keys] + [120]) + 40
    left, right, top, bottom = 78, 16 + legend_width, 34, 54
    legend_height = LEGEND_ROW * (len(series) + len(keys)) + 30
    height = top + max(plot_height, legend_height) + bottom
    svg = Svg(width, height, title)
    svg.text(1, 20, title, size=14, weight="600")
    if not xs or not ys:
        svg.text(left, top + 40, "nothing to draw: no timed value", fill=MUTED)
        return str(svg)
    plot_bottom = height - bottom
    x = Scale(*padded_range(xs, x_base, 0.04), left, width - right, x_base)
    y = Scale(*padded_range(ys, y_base), plot_bottom, top, y_base)
    _axes(svg, x, y, x_ticks if x_ticks is not None else _auto_ticks(x), _auto_ticks(y), x_label, y_label)
    for guide in guides:
        if x.holds(guide.x):
            svg.line(x(guide.x), top, x(guide.x), plot_bottom, stroke=MUTED, dash="2 3")
            svg.text(x(guide.x) + 4, top + 12, guide.label, size=10.5, fill=MUTED)
    for s in series:
        placed = [(x(p.x), y(p.y), p) for p in s.points if x.holds(p.x) and y.holds(p.y)]
        if s.line and len(placed) > 1:
            svg.polyline([(a, b) for a, b, _ in placed], s.color, s.width, DASHES[s.dash], tooltip=s.label)
        if s.marker:
            for a, b, p in placed:
                svg.marker(s.marker, a, b, s.color, p.hollow, tooltip=p.tooltip, css="point")
        for m in s.missing:
            if x.holds(m.x):
                if m.failed:
                    svg.cross(x(m.x), plot_bottom - 7, s.color, tooltip=m.tooltip)
                else:
                    svg.marker("triangle-down", x(m.x), plot_bottom - 7, s.color, hollow=True, tooltip=m.tooltip)
    _legend(svg, series, keys, width - right + 22, top + 4)
    return str(svg)


def _auto_ticks(scale: Scale) -> list[float]:
    lo, hi = sorted((scale.low, scale.high))
    return log_ticks(lo, hi, scale.base) if scale.base else linear_ticks(lo, hi)


def _axes(svg: Svg, x: Scale, y: Scale, x_ticks, y_ticks, x_label: str, y_label: str) -> None:
    left, right, bottom, top = x.start, x.end, y.start, y.end
    for t in y_ticks:
        if min(y.low, y.high) <= t <= max(y.low, y.high):
            svg.line(left, y(t), right, y(t), stroke=GRID)
            svg.text(left - 6, y(t) + 4, tick_label(t), size=11, anchor="end", fill=MUTED)
    for t in x_ticks:
        if x.holds(t) and min(x.low, x.high) <= t <= max(x.low, x.high):
            svg.line(x(t), top, x(t), bottom, stroke=GRID)
            svg.text(x(t), bottom + 16, tick_label(t), size=11, anchor="middle", fill=MUTED)
    svg.line(left, bottom, right, bottom, stroke=INK)
    svg.line(left, top, left, bottom, stroke=INK)
    svg.text((left + right) / 2, bottom + 38, x_label, size=12, anchor="middle")
    svg.text(18, (top + bottom) / 2, y_label, size=12, anchor="middle", rotate=-90)


def _legend(svg: Svg, series: list[Series], keys: list[str], x0: float, y0: float) -> None:
    for i, s in enumerate(series):
        yy = y0 + i * LEGEND_ROW
        if s.line:
            svg.line(x0, yy, x0 + 26, yy, stroke=s.color, width=s.width, dash=DASHES[s.dash])
        if s.marker:
            svg.marker(s.marker, x0 + 13, yy, s.color, size=3.5)
        svg.text(x0 + 34, yy + 4, cut(printable(s.label), LEGEND_CHARS), size=LEGEND_FONT)
    for j, key in enumerate(keys):
        svg.text(x0, y0 + (len(series) + j) * LEGEND_ROW + 10, key, size=LEGEND_FONT - 1, fill=MUTED)


@dataclass(frozen=True)
class Bar:
    """One horizontal bar: ``value`` None draws none (a failed or skipped row),
    ``text`` is written beside it as the table writes the figure."""

    label: str
    value: float | None
    text: str
    hollow: bool = False  # a flagged figure: an open, dashed bar
    tooltip: str = ""
    color: str = PALETTE[0]


BAR_ROW = 22
BAR_LABEL_CHARS = 40


def bar_chart(bars: list[Bar], *, title: str, axis_label: str, reference: float | None = 100.0,
              reference_label: str = "", width: float = 1080) -> str:
    """Horizontal bars, one row each, from 0; a dashed line at ``reference``."""
    label_width = max([text_width(cut(printable(b.label), BAR_LABEL_CHARS), 12) for b in bars] + [60]) + 16
    left, top, bottom, right = label_width, 34, 48, 96
    height = top + BAR_ROW * max(len(bars), 1) + bottom
    svg = Svg(width, height, title)
    svg.text(1, 20, title, size=14, weight="600")
    values = [b.value for b in bars if b.value is not None and math.isfinite(b.value)]
    high = max(values + [reference or 0, 1e-9]) * 1.04
    ticks = linear_ticks(0, high, 8)
    high = max(high, ticks[-1])
    x = Scale(0, high, left, width - right)
    plot_bottom = top + BAR_ROW * max(len(bars), 1)
    for t in ticks:
        svg.line(x(t), top, x(t), plot_bottom, stroke=GRID)
        svg.text(x(t), plot_bottom + 15, tick_label(t), size=11, anchor="middle", fill=MUTED)
    if reference is not None:  # under the bars and their figures
        svg.line(x(reference), top - 6, x(reference), plot_bottom, stroke=INK, width=1.3, dash="5 3")
        svg.text(x(reference), top - 9, reference_label, size=11, anchor="middle")
    for i, b in enumerate(bars):
        mid = top + i * BAR_ROW + BAR_ROW / 2
        svg.text(left - 8, mid + 4, cut(printable(b.label), BAR_LABEL_CHARS), size=12, anchor="end")
        if b.value is None or not math.isfinite(b.value):
            svg.text(left + 6, mid + 4, b.text, size=11.5, fill=MUTED, css="bar-text")
            continue
        end = x(max(b.value, 0))
        if b.hollow:
            svg.rect(left, mid - 7, end - left, 14, "#ffffff", stroke=b.color, dash="4 3", tooltip=b.tooltip,
                     css="bar flagged")
        else:
            svg.rect(left, mid - 7, end - left, 14, b.color, tooltip=b.tooltip, css="bar")
        svg.text(end + 6, mid + 4, b.text, size=11.5, fill=MUTED if b.hollow else INK, css="bar-text", halo=True)
    svg.line(left, top, left, plot_bottom, stroke=INK)
    svg.text((left + width - right) / 2, plot_bottom + 36, axis_label, size=12, anchor="middle")
    return str(svg)
