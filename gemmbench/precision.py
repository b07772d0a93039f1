"""Precision classes: one record per class, the axis every command reads.

A rung's record names its class. The class says which library row the rung
is compared with, what element type A, B and C have as the kernel sees them,
how far from the FP64 reference a correct result may land, and whether the
FP32 SIMT peak is a fair yardstick. Adding a precision means one entry here,
its rungs' records, its library row and the backend's element type: no
command changes.
"""

from __future__ import annotations

from dataclasses import dataclass

# Unit roundoffs: FP32, and TF32 (10 of FP32's 23 mantissa bits).
FP32_ROUNDOFF = 2.0 ** -24
TF32_ROUNDOFF = 2.0 ** -11


@dataclass(frozen=True)
class Precision:
    """One class. ``inputs`` and ``output`` name the element types of A/B and
    of C ("fp32", or a 16-bit type); ``library`` the class of the library row
    its rungs are compared with; ``simt_peak``: whether "% of FP32 peak" means
    something for its rows (not for tensor-core math of lower precision)."""

    name: str
    label: str
    library: str
    inputs: str = "fp32"
    output: str = "fp32"
    simt_peak: bool = True
    input_roundoff: float = 0.0  # unit roundoff of the products' inputs beyond FP32 (TF32: 2^-11)

    def tolerance(self, K: int) -> float:
        """Largest accepted error, on the |A|@|B| scale of each element.

        Every class accumulates in FP32: random-sign rounding errors grow as
        sqrt(K), and a factor 16 covers accumulation order and the epilogue.
        A class that rounds its inputs (TF32) adds each product's rounding:
        up to ~2u of itself with a random sign, so a dot product of K of them
        is off by about u / sqrt(K) of its scale (the max over millions of
        elements stays near 6 sigma); the same factor 16 again. Either way a
        kernel that drops one of K terms, about 1/K of the scale, fails for K
        up to thousands.
        """
        K = max(K, 1)
        bound = 16.0 * K ** 0.5 * FP32_ROUNDOFF
        if self.input_roundoff:
            bound += 16.0 * self.input_roundoff / K ** 0.5
        return bound


PRECISIONS: dict[str, Precision] = {p.name: p for p in (
    Precision("fp32", "FP32", "fp32"),
    Precision("tf32", "TF32", "tf32", simt_peak=False, input_roundoff=TF32_ROUNDOFF),
    # FP32 accuracy from TF32 tensor cores: held to the FP32 bound, compared with SGEMM
    Precision("3xtf32", "3xTF32", "fp32"),
)}


def precision(name: str) -> Precision:
    """The class called ``name``; ValueError naming it otherwise."""
    try:
        return PRECISIONS[name]
    except KeyError:
        raise ValueError(f"unknown precision class {name!r} (known: {', '.join(PRECISIONS)})") from None


def comparison_precision(name: str) -> str:
    """The class of the library row a rung of class ``name`` is compared with."""
    return precision(name).library
