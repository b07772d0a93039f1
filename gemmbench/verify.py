"""Verification against an FP64 reference: NaN-aware, tolerance scaled to K.

The error of an element is measured against the natural scale of its dot
product, |alpha| * (|A| @ |B|) + |beta| * |C0|, so that elements whose exact
value cancels to near zero are judged fairly. Random-sign data leaves fp32
kernels near a few units of roundoff on that scale; a kernel that drops or
repeats a single term of K is off by about 1/K, far above the tolerance.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

# Unit roundoff of each precision class.
UNIT_ROUNDOFF = {"fp32": 2.0 ** -24}


def tolerance(K: int, precision: str = "fp32") -> float:
    """Largest accepted error: sqrt(K) growth of rounding (random-sign data),
    with a factor 16 of headroom for accumulation order and the epilogue."""
    return 16.0 * max(K, 1) ** 0.5 * UNIT_ROUNDOFF[precision]


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


def expected(ref: np.ndarray, C0: np.ndarray | None, alpha: float, beta: float) -> np.ndarray:
    out = alpha * ref
    if beta != 0:
        out = out + beta * C0.astype(np.float64)
    return out


def error_scale(absref: np.ndarray, C0: np.ndarray | None, alpha: float, beta: float) -> np.ndarray:
    scale = abs(alpha) * absref
    if beta != 0:
        scale = scale + abs(beta) * np.abs(C0.astype(np.float64))
    return scale


def check(C: np.ndarray, ref: np.ndarray, absref: np.ndarray, K: int, *, alpha: float = 1.0,
          beta: float = 0.0, C0: np.ndarray | None = None, precision: str = "fp32") -> Verification:
    """Compare a kernel's C with alpha * ref + beta * C0 (ref = A @ B in float64)."""
    want = expected(ref, C0, alpha, beta)
    scale = error_scale(absref, C0, alpha, beta)
    got = C.astype(np.float64)
    diff = np.abs(got - want)
    nonfinite = int(np.count_nonzero(~np.isfinite(got) & np.isfinite(want)))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, diff / np.where(scale > 0, scale, 1.0), np.where(diff > 0, np.inf, 0.0))
    rel = np.where(np.isnan(rel), np.inf, rel)  # NaN never passes
    max_rel = float(rel.max()) if rel.size else 0.0
    return Verification(max_rel, tolerance(K, precision), nonfinite)


def combine(*checks: Verification) -> Verification:
    """The worst of several checks of one kernel (e.g. beta == 0 and beta != 0)."""
    return Verification(max(v.max_rel_error for v in checks), checks[0].tolerance,
                        max(v.nonfinite for v in checks))
