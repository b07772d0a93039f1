"""Size lists for ``gemmbench sizes --sweep``.

``a..b`` doubles from a up to b, ``a..b:s`` steps by s, ``a,b,c`` lists.
A sweep's length is known from its text before any list is built, so
``1..100000000000:1`` is refused at once instead of filling memory.
"""

from __future__ import annotations

import re

from .backend import Shape
from .validate import MAX_DIMENSION, parse_int

MAX_SIZES = 1000
_RANGE = re.compile(r"^(?P<start>[^.:]*)\.\.(?P<stop>[^:]*)(?::(?P<step>.*))?$", re.DOTALL)


def _size(text: str, part: str, sweep: str) -> int:
    """One positive size of the sweep, named by ``part`` in the message when it is bad."""
    value = text.strip()
    try:
        number = parse_int(value, signed=False)
    except ValueError as exc:
        raise ValueError(f"sweep '{sweep}': {part} '{value[:20]}' is not a positive integer (ASCII digits): "
                         f"{exc}") from None
    if number < 1:
        raise ValueError(f"sweep '{sweep}': {part} must be >= 1, got {number}")
    if number > MAX_DIMENSION:
        raise ValueError(f"sweep '{sweep}': {part} {number} is above {MAX_DIMENSION}, the largest size the kernels take")
    return number


def _too_long(sweep: str, count: int) -> ValueError:
    return ValueError(f"sweep '{sweep}' names {count} sizes; at most {MAX_SIZES}: use a larger step or a shorter range")


def parse_sweep(text: str) -> list[int]:
    """The sizes a sweep names, in order; ValueError naming the bad part otherwise."""
    match = _RANGE.match(text)
    if match:
        start = _size(match["start"], "start", text)
        stop = _size(match["stop"], "stop", text)
        if stop < start:
            raise ValueError(f"sweep '{text}': need start <= stop, got {start}..{stop}")
        if match["step"] is not None:
            step = _size(match["step"], "step", text)
            count = (stop - start) // step + 1
            if count > MAX_SIZES:
                raise _too_long(text, count)
            return list(range(start, stop + 1, step))
        sizes = []  # doubling: at most 31 sizes below MAX_DIMENSION
        size = start
        while size <= stop:
            sizes.append(size)
            size *= 2
        return sizes
    parts = text.split(",")
    if len(parts) > MAX_SIZES:
        raise _too_long(text, len(parts))
    return [_size(p, f"size {i}", text) for i, p in enumerate(parts, 1)]


def sweep_shapes(sizes: list[int], M: int | None, N: int | None, K: int | None) -> list[Shape]:
    """Square shapes of each size, except for the dimensions pinned by M/N/K."""
    if M is not None and N is not None and K is not None:
        raise ValueError("-m, -n and -k all pinned: the sweep has no dimension left to vary")
    return [Shape(M or s, N or s, K or s) for s in sizes]
