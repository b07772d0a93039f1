"""Verification against an FP64 reference: NaN-aware, tolerance scaled to K.

The error of an element is measured against the natural scale of its dot
product, |alpha| * (|A| @ |B|) + |beta| * |C0|, so that elements whose exact
value cancels to near zero are judged fairly. Random-sign data leaves fp32
kernels near a few units of roundoff on that scale; a kernel that drops or
repeats a single term of K is off by about 1/K, far above the tolerance.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from .precision import precision as precision_class


def tolerance(K: int, precision: str = "fp32") -> float:
    """Largest accepted error for ``precision`` at this K (see Precision.tolerance);
    ValueError for an unknown class."""
    return precision_class(precision).tolerance(K)


@dataclass(frozen=True)
class Verification:
    max_rel_error: float  # inf when an output is NaN/inf or was never written
    tolerance: float
    nonfinite: int  # elements that are NaN or inf where the reference is finite

    @property
    def passed(self) -> bool:
        return self.nonfinite == 0 and self.max_rel_error <= self.tolerance

    def to_dict(self) -> dict:
        return {**asdict(self), "passed": self.passed}


def _by_row_blocks(work: Callable[[slice], object], rows: int) -> list:
    """Run ``work`` over blocks of rows on all cores (numpy releases the GIL),
    so checking a 4096^2 result takes a fraction of a second."""
    blocks = max(1, min(os.cpu_count() or 1, 16, rows // 256))
    edges = [rows * i // blocks for i in range(blocks + 1)]
    slices = [slice(a, b) for a, b in zip(edges, edges[1:])]
    if blocks == 1:
        return [work(slices[0])]
    with ThreadPoolExecutor(blocks) as pool:
        return list(pool.map(work, slices))


@dataclass
class Expectation:
    """What every kernel must produce for one (alpha, beta) at one shape.

    Built once per shape and shared by every kernel, so checking a kernel is
    a handful of passes over C instead of rebuilding the target each time.
    """

    K: int
    alpha: float
    beta: float
    C0: np.ndarray | None  # the C a kernel starts from (None: filled with NaN)
    want: np.ndarray  # alpha * A@B + beta * C0, float64
    scale: np.ndarray  # |alpha| * |A|@|B| + |beta| * |C0|, zeros replaced by the tiniest double

    @classmethod
    def of(cls, ref: np.ndarray, absref: np.ndarray, K: int, alpha: float = 1.0, beta: float = 0.0,
           C0: np.ndarray | None = None) -> "Expectation":
        want, scale = np.empty_like(ref), np.empty_like(absref)

        def fill(rows: slice) -> None:
            w, s = want[rows], scale[rows]
            np.multiply(ref[rows], alpha, out=w)
            np.multiply(absref[rows], abs(alpha), out=s)
            if beta != 0:
                c0 = C0[rows].astype(np.float64)
                w += beta * c0
                s += abs(beta) * np.abs(c0)
            # an exactly-zero scale accepts only an exact result: diff / tiny is 0 or huge
            s[s == 0] = np.finfo(np.float64).tiny

        _by_row_blocks(fill, ref.shape[0])
        return cls(K, alpha, beta, C0 if beta != 0 else None, want, scale)

    def check(self, C: np.ndarray, precision: str = "fp32") -> Verification:
        """Compare a kernel's C with the expected values (NaN never passes).
        A class whose C type has a coarse smallest normal (FP16) is judged
        against at least that normal (see Precision.scale_floor)."""
        floor = precision_class(precision).scale_floor

        def block(rows: slice) -> tuple[float, int]:
            c = C[rows]
            rel = c.astype(np.float64)
            rel -= self.want[rows]
            np.abs(rel, out=rel)
            rel /= np.maximum(self.scale[rows], floor) if floor else self.scale[rows]
            finite = np.isfinite(c)
            bad = 0 if finite.all() else int(np.count_nonzero(~finite & np.isfinite(self.want[rows])))
            return (float(rel.max()) if rel.size else 0.0), bad

        parts = _by_row_blocks(block, C.shape[0])
        max_rel = max(p[0] for p in parts)  # NaN compares false: look for it explicitly
        if any(math.isnan(p[0]) for p in parts):
            max_rel = math.inf
        return Verification(max_rel, tolerance(self.K, precision), sum(p[1] for p in parts))


def combine(*checks: Verification) -> Verification:
    """The worst of several checks of one kernel (e.g. beta == 0 and beta != 0)."""
    return Verification(max(v.max_rel_error for v in checks), checks[0].tolerance,
                        max(v.nonfinite for v in checks))
