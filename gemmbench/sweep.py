"""Size lists for ``gemmbench sizes --sweep``.

``a..b`` doubles from a up to b, ``a..b:s`` steps by s, ``a,b,c`` lists.
"""

from __future__ import annotations

import re

from .backend import Shape

MAX_SIZES = 1000
_RANGE = re.compile(r"^\s*(\d+)\s*\.\.\s*(\d+)\s*(?::\s*(\d+)\s*)?$")


def parse_sweep(text: str) -> list[int]:
    """The sizes a sweep names, in order; ValueError with a readable message otherwise."""
    match = _RANGE.match(text)
    if match:
        start, stop = int(match.group(1)), int(match.group(2))
        step = match.group(3)
        if start < 1 or stop < start:
            raise ValueError(f"sweep '{text}': need 1 <= start <= stop")
        if step is not None:
            if int(step) < 1:
                raise ValueError(f"sweep '{text}': step must be >= 1")
            sizes = list(range(start, stop + 1, int(step)))
        else:
            sizes = []
            size = start
            while size <= stop:
                sizes.append(size)
                size *= 2
    else:
        parts = [p.strip() for p in text.split(",")]
        if not all(re.fullmatch(r"\d+", p) for p in parts):
            raise ValueError(f"sweep '{text}': expected a..b, a..b:step or a,b,c with positive integers")
        sizes = [int(p) for p in parts]
        if min(sizes) < 1:
            raise ValueError(f"sweep '{text}': sizes must be >= 1")
    if len(sizes) > MAX_SIZES:
        raise ValueError(f"sweep '{text}' names {len(sizes)} sizes; at most {MAX_SIZES}")
    return sizes


def sweep_shapes(sizes: list[int], M: int | None, N: int | None, K: int | None) -> list[Shape]:
    """Square shapes of each size, except for the dimensions pinned by M/N/K."""
    if M is not None and N is not None and K is not None:
        raise ValueError("-m, -n and -k all pinned: the sweep has no dimension left to vary")
    return [Shape(M or s, N or s, K or s) for s in sizes]
