"""One row from the rounds it was timed in (``--rounds``).

Under a power cap a GPU's clock drifts from one second to the next, so a row
timed once is measured in whatever state the rows before it left: on an H200
at 4096^3 the same cuBLAS row timed twice in one run differed by up to 18%.
With rounds, run_plan times every row of a shape several times, the rows
taking turns in the order ``turns`` gives (the footer counts the same
visits), and this module makes each row's result from its visits: all
its samples (its figure is their median), the clock and throttling over all
of them, and each visit's median in ``notes["rounds"]`` (an odd count's last
round is two half visits: turns) so that a record shows how far
the rounds were apart.
"""

from __future__ import annotations

import dataclasses
import math

from ..records.results import DISTURBED, KernelResult, measurement_flags
from ..stats import median_noise
from ..timing import STOPPED_NOISE

# notes averaged over the rounds (as over one round's samples): each round weighted by the time its samples span
_WEIGHTED = ("sm_clock_mhz", "nvml_sm_clock_mhz", "throttled_share", "cpu_wait_fraction")


def turns(rounds: int) -> list[tuple[bool, int, str]]:
    """The visits of ``--rounds``: (rows in reverse order?, the share's divisor of the budget, its name). The
    order is reversed every other round, so that a steady drift of the clock reaches every row alike; an odd
    count's last round goes in two halves, forward then reversed (each on half a round's share), so that
    every row's samples still sit at the same mean place in the run (with 3 rounds, forward, reversed and
    forward, the first row would take the early places twice)."""
    out = [(r % 2 == 1, rounds, f"round {r + 1} of {rounds}") for r in range(rounds - rounds % 2)]
    if rounds % 2:
        out += [(reverse, 2 * rounds, f"round {rounds} of {rounds}, {half} half")
                for reverse, half in ((False, "first"), (True, "second"))]
    return out


def merge_rounds(visits: list[KernelResult]) -> KernelResult:
    """The row of one kernel at one shape from its visits, in round order. A
    visit that did not pass (a later round's failure) is the row's result."""
    failed = next((v for v in visits if v.status != "pass"), None)
    if failed is not None:
        return failed
    first = visits[0]
    samples = [s for v in visits for s in v.samples]
    merged = dataclasses.replace(first, samples=samples, notes=_merged_notes(visits, samples), flags=[])
    merged.flags = measurement_flags(merged) + ([DISTURBED] if any(DISTURBED in v.flags for v in visits) else [])
    return merged


def _merged_notes(visits: list[KernelResult], samples: list[float]) -> dict:
    notes = dict(visits[0].notes)
    every = [v.notes for v in visits]
    weights = [sum(v.samples) * v.notes.get("calls_per_sample", 1) for v in visits]
    for key in _WEIGHTED:
        value = _weighted([(n.get(key), w) for n, w in zip(every, weights)])
        if value is not None:
            notes[key] = round(value, 4 if key in ("throttled_share", "cpu_wait_fraction") else 1)
    for key in ("sm_clock_range_mhz", "gpu_temp_range_c"):  # [lowest, highest] over every round
        ranges = [n[key] for n in every if n.get(key)]
        if ranges:
            notes[key] = [min(r[0] for r in ranges), max(r[1] for r in ranges)]
    if any("clock_readings" in n for n in every):
        notes["clock_readings"] = sum(n.get("clock_readings", 0) for n in every)
    reasons = sorted({reason for n in every for reason in n.get("throttle") or []})
    if reasons:
        notes["throttle"] = reasons
    names = dict.fromkeys(name for n in every for name in n.get("violation_share") or {})
    if names:
        notes["violation_share"] = {name: round(_weighted([((n.get("violation_share") or {}).get(name), w)
                                                            for n, w in zip(every, weights)]), 4) for name in names}
    stops = [n.get("stopped") for n in every if n.get("stopped")]
    if stops:  # the row stopped on noise only if every round did
        notes["stopped"] = next((s for s in stops if s != STOPPED_NOISE), STOPPED_NOISE)
    if "median_noise" in notes:
        noise = median_noise(samples)
        notes["median_noise"] = noise if math.isfinite(noise) else None
    settled = [n["warmup_settled_s"] for n in every if n.get("warmup_settled_s")]
    notes.pop("warmup_settled_s", None)
    if settled:  # any round whose warm-up had to settle a held-down clock
        notes["warmup_settled_s"] = max(settled)
    notes["rounds"] = [_round_note(v) for v in visits]
    return notes


def _weighted(pairs: list[tuple[float | None, float]]) -> float | None:
    """The mean of the known values, each weighted by the time its round's samples span."""
    known = [(x, w) for x, w in pairs if x is not None]
    if not known:
        return None
    total = sum(w for _, w in known)
    return sum(x * w for x, w in known) / total if total > 0 else sum(x for x, _ in known) / len(known)


def _round_note(visit: KernelResult) -> dict:
    note = {"median_s": visit.stats.median, "samples": len(visit.samples)}
    if visit.notes.get("sm_clock_mhz") is not None:
        note["sm_clock_mhz"] = visit.notes["sm_clock_mhz"]
    for key in ("gpu_temp_range_c", "warmup_settled_s"):
        if visit.notes.get(key):
            note[key] = visit.notes[key]
    return note

