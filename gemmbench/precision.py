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

import numpy as np

# Unit roundoffs: FP32, and TF32 (10 of FP32's 23 mantissa bits).
FP32_ROUNDOFF = 2.0 ** -24
TF32_ROUNDOFF = 2.0 ** -11
# ... and of the 16-bit storage types: BF16 keeps 7 mantissa bits, FP16 10.
BF16_ROUNDOFF = 2.0 ** -8
FP16_ROUNDOFF = 2.0 ** -11
FP16_SMALLEST_NORMAL = 2.0 ** -14  # below it FP16 rounds to a fixed step of 2^-24 (subnormals)


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
    output_roundoff: float = 0.0  # unit roundoff of C's element type when narrower than FP32
    scale_floor: float = 0.0  # smallest normal of C's type where FP32's is not small enough to ignore
    note: str = ""  # what a table's footnote says of the class's rows

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

        A 16-bit class (BF16, FP16) has A and B already in its type: the
        reference is computed from those rounded inputs, so their rounding is
        no error; the products of two 16-bit values are exact in FP32 and the
        sum is FP32, so the accumulation bound is FP32's. Then C is rounded
        twice to the type: C0 when it is stored for the beta != 0 pass (the
        expected value uses C0 unrounded), off by at most u |beta C0|, and the
        result r, off by at most u |r|; both are within u of the scale, r
        itself within (1 + bound) of it. So the bound is acc + 2u (1 + acc),
        with acc the FP32 accumulation bound: no factor, it is a worst case.
        With BF16's u = 2^-8 this is loose: a kernel that drops one of K
        terms (about 1/K of the scale) is caught only for K below about 128
        (1000 for FP16), which is why the 16-bit tests include small K.
        """
        K = max(K, 1)
        bound = 16.0 * K ** 0.5 * FP32_ROUNDOFF
        if self.input_roundoff:
            bound += 16.0 * self.input_roundoff / K ** 0.5
        if self.output_roundoff:
            bound += 2.0 * self.output_roundoff * (1.0 + bound)
        return bound


PRECISIONS: dict[str, Precision] = {p.name: p for p in (
    Precision("fp32", "FP32", "fp32"),
    Precision("tf32", "TF32", "tf32", simt_peak=False, input_roundoff=TF32_ROUNDOFF,
              note="TF32 rows round inputs to 10 mantissa bits, are checked against a bound that adds "
                   "16*2^-11/sqrt(K) for that rounding, and are compared with cuBLAS TF32"),
    # FP32 accuracy from TF32 tensor cores: held to the FP32 bound, compared with SGEMM
    Precision("3xtf32", "3xTF32", "fp32",
              note="3xTF32 rows must meet the FP32 bound and are compared with cuBLAS SGEMM"),
    # 16-bit A, B and C, FP32 accumulation and alpha/beta: what a framework's bf16/fp16 matmul computes
    Precision("bf16", "BF16", "bf16", inputs="bf16", output="bf16", simt_peak=False,
              output_roundoff=BF16_ROUNDOFF,
              note="BF16 rows take A, B and C in bfloat16 (FP32 accumulation), are checked against the FP64 "
                   "product of the rounded inputs with a bound that adds C's rounding (2*2^-8), and are "
                   "compared with cuBLAS BF16"),
    # FP16's exponent range is narrow: an element whose scale is below the smallest normal is
    # rounded on a fixed grid, so its error is judged against that normal instead
    Precision("fp16", "FP16", "fp16", inputs="fp16", output="fp16", simt_peak=False,
              output_roundoff=FP16_ROUNDOFF, scale_floor=FP16_SMALLEST_NORMAL,
              note="FP16 rows likewise in half precision (C's rounding 2*2^-11, errors judged on at least "
                   "FP16's smallest normal) and are compared with cuBLAS FP16"),
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


def element_dtype(element: str):
    """The numpy dtype of an element type: float32, float16, or ml_dtypes'
    bfloat16 (imported only when asked for)."""
    if element == "fp32":
        return np.dtype(np.float32)
    if element == "fp16":
        return np.dtype(np.float16)
    if element == "bf16":
        import ml_dtypes  # only the 16-bit classes need it: deferred until one is used
        return np.dtype(ml_dtypes.bfloat16)
    raise ValueError(f"unknown element type {element!r} (known: fp32, fp16, bf16)")


def round_to(x: np.ndarray, element: str) -> np.ndarray:
    """``x`` rounded to the element type (round to nearest even, as the
    device's cvt.rn does) and given back as float32: the values a kernel
    with that element type sees."""
    return np.asarray(x, dtype=np.float32).astype(element_dtype(element)).astype(np.float32)
