"""How one value reads in a cell: times, rates, errors, labels, flags, and the
mark that says a figure is not for quoting.

Every view (table, markdown, CSV, diff, several records) formats through
these, so a flagged figure looks the same everywhere: ``(40.0 ms)?``.
"""

from __future__ import annotations

import math

from ..backend import Shape
from ..options import NamedShape
from ..records.results import (BASELINE_SHIFTED, DISTURBED, NOISY, SHIFTED, THROTTLED, UNSETTLED, KernelResult,
                               RunRecord)
from ..stats import MEDIAN_CONFIDENCE, NOISY_RELATIVE_IQR

BASELINE_NAME = {"gpu": "cuBLAS", "cpu": "OpenBLAS"}

# What each flag means, and the letter that marks it in the sizes table.
FLAG_MEANING = {
    NOISY: ("N", f"its samples spread more than {100 * NOISY_RELATIVE_IQR:.0f}% (IQR / median)"),
    UNSETTLED: ("U", f"its median's {100 * MEDIAN_CONFIDENCE:.0f}% confidence interval was still wider than "
                     f"--max-noise when it timed out (or reached --max-samples)"),
    DISTURBED: ("D", "its threads waited for a CPU core while it was timed (another process ran, or more threads "
                     "than cores)"),
    THROTTLED: ("T", "the GPU throttled during its samples (at a power cap its figure moves by several points from "
                     "run to run; --rounds with half a second a round, e.g. --rounds 3 --min-time 1.5, narrows "
                     "that)"),
    SHIFTED: ("S", "this baseline timed differently when measured again after the rungs"),
    BASELINE_SHIFTED: ("B", "its % is against a baseline that shifted during the run"),
}
DOUBTFUL_EXAMPLE = "(40.0 ms)?"
DOUBTFUL_NOTE = (f"A figure written like {DOUBTFUL_EXAMPLE} belongs to a flagged row (or is a % against a flagged "
                 f"baseline): not for quoting; rerun on a quiet machine.")


def format_time(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}" if seconds / scale < 100 else f"{seconds / scale:.0f} {unit}"
    return f"{seconds * 1e9:.0f} ns"


def format_number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}" if math.isfinite(value) else "-"


def format_rate(value: float) -> str:
    """Three significant figures for small numbers, whole numbers for large ones."""
    if not math.isfinite(value):
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def format_error(result: KernelResult) -> str:
    v = result.verification
    if v is None:
        return "-"
    return "non-finite" if v.nonfinite or not math.isfinite(v.max_rel_error) else f"{v.max_rel_error:.1e}"


def status_text(result: KernelResult) -> str:
    if result.status == "pass":
        return "PASS"
    if result.status == "fail":
        return f"FAIL ({result.reason})" if result.reason else "FAIL"
    return f"SKIP ({result.reason})"


def kernel_label(result: KernelResult) -> str:
    label = result.name
    if result.device == "cpu" and result.threads:
        label += f" [{result.threads}T]"
    if result.params_source == "tuned":
        label += " (tuned)"
    return label


def record_shape_set(record: RunRecord) -> list[NamedShape]:
    """The shapes of a ``sizes --shapes`` or ``tune --shapes`` record, in the
    order its files gave them, with their names and groups (empty for any
    other record)."""
    if record.command not in ("sizes", "tune"):
        return []
    return [NamedShape(Shape(e["M"], e["N"], e["K"]), e.get("name"), e.get("group"))
            for e in record.options.get("shapes") or []]


def format_params(params: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items()) or "-"


def format_flags(result: KernelResult) -> str:
    return ", ".join(result.flags)


def flag_letters(result: KernelResult) -> str:
    return "".join(FLAG_MEANING[f][0] for f in result.flags if f in FLAG_MEANING)


def doubtful(text: str, flagged: bool) -> str:
    """A figure as cells show it: marked ``(text)?`` when it is not for quoting."""
    return f"({text})?" if flagged and text not in ("-", "") else text


def percent_doubtful(record: RunRecord, result: KernelResult) -> bool:
    """A % of the baseline is doubtful when either of its two rows is flagged."""
    base = record.baseline_of(result)
    return bool(result.flags) or bool(base is not None and base.flags)


def csv_flags(record: RunRecord, result: KernelResult) -> str:
    """A CSV row's flags: its own, then its baseline's as ``baseline:FLAG``
    (its % is not for quoting either way)."""
    base = record.baseline_of(result)
    inherited = [f"baseline:{f}" for f in base.flags] if base is not None and base is not result else []
    return ";".join([*result.flags, *inherited])


def flag_lines(record: RunRecord, letters: bool = False) -> list[str]:
    """What the flags that appear mean, and how their figures are marked
    (nothing when no row is flagged)."""
    results = record.results
    if not any(r.flags for r in results):
        return []
    seen = [f for f in FLAG_MEANING if any(f in r.flags for r in results)]
    parts = [f"{FLAG_MEANING[f][0] + ' = ' if letters else ''}{f}: {FLAG_MEANING[f][1]}" for f in seen]
    return ["Flags: " + "; ".join(parts) + ". " + DOUBTFUL_NOTE if parts else DOUBTFUL_NOTE]


def plain_number(value: float | int | None, digits: int = 6) -> str:
    """A CSV cell: a plain number (inf for an infinite error), or empty when unknown."""
    if value is None:
        return ""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return ""
    return "inf" if math.isinf(value) else f"{value:.{digits}g}"
