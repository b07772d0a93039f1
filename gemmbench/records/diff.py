"""Two records compared row by row, with a verdict from the raw samples.

Rows are matched on (kernel, precision, shape, CPU threads, and for tuning
candidates their parameters). For each pair the ratio of the medians,
new GFLOP/s over old (= old median time / new median time), gets a 95%
confidence interval from a seeded percentile bootstrap: both sample sets are
resampled with replacement and the ratio of the resampled medians is taken,
many times. The verdict, with threshold t:

- slower: the ratio is below 1 - t and the whole interval is below 1;
- faster: the ratio is above 1 + t and the whole interval is above 1;
- same:   the whole interval lies within [1 - t, 1 + t];
- noisy:  none of these (the samples cannot tell), or fewer than
  MIN_SAMPLES samples on a side.

A bootstrap of the ratio of medians fits timing samples better than a mean
test: they are skewed (a slow tail from clocks and interrupts), and the
median is what the tables report. It is seeded, so the same two records
always get the same verdicts. The gate fails (exit 1) on any "slower" row,
and on any row that verified before and fails now (a broken kernel must not
pass a regression gate by being skipped from it).

A gate must be able to fail: two records with no row in common (another
shape, another command, an empty record), or whose common rows were timed on
one side only, raise ``NothingCompared`` (a UserError: one line saying what
differs, exit 2) instead of an empty "no regression". A record holding the
same row twice (same kernel, precision, shape, threads, parameters and GPU)
raises ``DuplicateRows`` naming them: it would be counted twice.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from ..errors import UserError
from ..spec import params_key
from .results import KernelResult, RunRecord

RESAMPLES = 2000
CONFIDENCE = 0.95
MIN_SAMPLES = 3
SEED = 0
DEFAULT_THRESHOLD = 0.03


class NothingCompared(UserError):
    """No row was compared: the records share no row, or none timed on both sides."""


class DuplicateRows(UserError):
    """A record holds the same row more than once."""


def parse_threshold(text: str) -> float:
    """'3%' or '3' (percent) as a fraction; ValueError naming the value otherwise."""
    raw = text.strip().removesuffix("%").strip()
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"--threshold {text!r} is not a percentage (like 3%)") from None
    if not 0 <= value < 100:
        raise ValueError(f"--threshold {text!r} should be between 0% and 100%")
    return value / 100


def bootstrap_ratio(old: list[float], new: list[float], resamples: int = RESAMPLES,
                    seed: int = SEED, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(ratio, low, high): new GFLOP/s over old, from samples in seconds, and
    the percentile-bootstrap interval of that ratio of medians."""
    a, b = np.asarray(old, np.float64), np.asarray(new, np.float64)
    ratio = float(np.median(a) / np.median(b))
    rng = np.random.default_rng(seed)
    med_a = np.median(a[rng.integers(0, a.size, (resamples, a.size))], axis=1)
    med_b = np.median(b[rng.integers(0, b.size, (resamples, b.size))], axis=1)
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(med_a / med_b, [tail, 100 - tail])
    return ratio, float(low), float(high)


def verdict(ratio: float, low: float, high: float, threshold: float) -> str:
    if ratio < 1 - threshold and high < 1:
        return "slower"
    if ratio > 1 + threshold and low > 1:
        return "faster"
    if low >= 1 - threshold and high <= 1 + threshold:
        return "same"
    return "noisy"


@dataclass
class Row:
    """One kernel at one shape in both records."""

    old: KernelResult
    new: KernelResult
    verdict: str  # slower | faster | same | noisy | failed | skipped
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    reason: str | None = None

    @property
    def change(self) -> float | None:
        return None if self.ratio is None else self.ratio - 1

    def to_dict(self) -> dict:
        return {**describe(self.new), "gpu_old": self.old.gpu, "gpu_new": self.new.gpu,
                "old_flags": list(self.old.flags), "new_flags": list(self.new.flags),
                "old_gflops": self.old.gflops, "new_gflops": self.new.gflops, "change": self.change,
                "ci_low": self.low, "ci_high": self.high, "verdict": self.verdict, "reason": self.reason}


@dataclass
class Diff:
    threshold: float
    differences: list[str]
    device: str | None = None  # the new record's ladder, for naming rows
    rows: list[Row] = field(default_factory=list)
    only_old: list[KernelResult] = field(default_factory=list)
    only_new: list[KernelResult] = field(default_factory=list)

    @property
    def compared(self) -> list[Row]:
        """Rows with a verdict from both sides (every verdict but "skipped")."""
        return [r for r in self.rows if r.verdict != "skipped"]

    @property
    def regressions(self) -> list[Row]:
        return [r for r in self.rows if r.verdict in ("slower", "failed")]

    @property
    def exit_code(self) -> int:
        return 1 if self.regressions else 0

    def to_dict(self) -> dict:
        return {"threshold": self.threshold,
                "method": f"{CONFIDENCE:.0%} percentile-bootstrap interval of the ratio of medians "
                          f"({RESAMPLES} resamples, seed {SEED})",
                "differences": self.differences, "rows": [r.to_dict() for r in self.rows],
                "only_old": [describe(r) for r in self.only_old],
                "only_new": [describe(r) for r in self.only_new],
                "regressions": len(self.regressions), "exit_code": self.exit_code}


def describe(result: KernelResult) -> dict:
    return {"device": result.device, "kernel_id": result.kernel_id, "name": result.name,
            "precision": result.precision, "shape": str(result.shape), "threads": result.threads,
            "params": result.params if result.params_source == "given" else None}


def row_key(result: KernelResult) -> tuple:
    """What makes two results the same row; the GPU index is not part of it
    (the same plan on another GPU is what a diff compares)."""
    params = params_key(result.params) if result.params_source == "given" else None
    return (result.device, result.kernel_id, result.name, result.precision, result.shape, result.threads, params)


def compare_rows(old: KernelResult, new: KernelResult, threshold: float) -> Row:
    if new.status == "fail" and old.status == "pass":
        return Row(old, new, "failed", reason=new.reason)
    if old.status != "pass" or new.status != "pass":
        which = "old" if old.status != "pass" else "new"
        result = old if which == "old" else new
        return Row(old, new, "skipped", reason=f"{which}: {result.status} {result.reason or ''}".strip())
    ratio, low, high = bootstrap_ratio(old.samples, new.samples)
    if min(len(old.samples), len(new.samples)) < MIN_SAMPLES:
        return Row(old, new, "noisy", ratio, low, high, f"fewer than {MIN_SAMPLES} samples")
    return Row(old, new, verdict(ratio, low, high, threshold), ratio, low, high)


def _pairs(old: list[KernelResult], new: list[KernelResult]):
    """Pairs of one key: one to one; by GPU index when both records hold
    several GPUs; else the single row against each of the other side's.
    Returns (pairs, rows only in old, rows only in new)."""
    if not old or not new:
        return [], old, new
    if len(old) == 1 or len(new) == 1:
        return [(o, n) for o in old for n in new], [], []
    by_gpu = {n.gpu: n for n in new}
    pairs = [(o, by_gpu[o.gpu]) for o in old if o.gpu in by_gpu]
    matched = {o.gpu for o, _ in pairs}
    return pairs, [o for o in old if o.gpu not in matched], [n for n in new if n.gpu not in matched]


def diff_records(old: RunRecord, new: RunRecord, threshold: float = DEFAULT_THRESHOLD,
                 versions: tuple = (None, None)) -> Diff:
    """Every row of ``new`` against ``old``; ``versions``: the (old, new)
    gemmbench version strings, for the header. Raises DuplicateRows when a
    record holds a row twice, NothingCompared when no row was compared (the
    exception's ``diff`` holds what was found)."""
    refuse_duplicates(old, "old")
    refuse_duplicates(new, "new")
    result = Diff(threshold, environment_differences(old, new, versions), new.device)
    groups_old, groups_new = defaultdict(list), defaultdict(list)
    for r in old.results:
        groups_old[row_key(r)].append(r)
    for r in new.results:
        groups_new[row_key(r)].append(r)
    for key in dict.fromkeys([*groups_old, *groups_new]):
        pairs, lone_old, lone_new = _pairs(groups_old.get(key, []), groups_new.get(key, []))
        result.rows += [compare_rows(o, n, threshold) for o, n in pairs]
        result.only_old += lone_old
        result.only_new += lone_new
    if not result.compared:
        error = NothingCompared(nothing_compared(old, new, result))
        error.diff = result
        raise error
    return result


def row_name(result: KernelResult) -> str:
    """A row as one line names it: rung, name, precision, shape, threads, parameters, GPU."""
    text = f"{result.device}:{result.kernel_id} {result.name} {result.precision.upper()} {result.shape}"
    if result.threads:
        text += f" [{result.threads}T]"
    if result.params_source == "given":
        text += " " + (" ".join(f"{k}={v}" for k, v in result.params.items()) or "-")
    return text + (f" (GPU {result.gpu})" if result.gpu is not None else "")


def refuse_duplicates(record: RunRecord, side: str) -> None:
    """DuplicateRows naming the rows ``record`` holds more than once."""
    seen: dict[tuple, list[KernelResult]] = defaultdict(list)
    for r in record.results:
        seen[row_key(r), r.gpu].append(r)
    twice = [rows for rows in seen.values() if len(rows) > 1]
    if twice:
        names = "; ".join(f"{row_name(rows[0])} ({len(rows)} times)" for rows in twice[:5])
        more = f"; and {len(twice) - 5} more" if len(twice) > 5 else ""
        raise DuplicateRows(f"the {side} record holds the same row more than once: {names}{more}; "
                            f"a diff would count it twice")


def _span(values) -> str:
    values = list(dict.fromkeys(values))
    return ", ".join(values[:4]) + (f", ... ({len(values)} in all)" if len(values) > 4 else "") if values else "none"


def nothing_compared(old: RunRecord, new: RunRecord, diff: Diff) -> str:
    """One line: why no row was compared, and what differs between the two records."""
    if not old.results or not new.results:
        empty = " and ".join(side for side, r in (("old", old), ("new", new)) if not r.results)
        why = f"the {empty} record{'s hold' if ' and ' in empty else ' holds'} no rows"
    elif diff.rows:
        why = (f"the {len(diff.rows)} row(s) in common were not timed on both sides "
               f"({'; '.join(f'{row_name(r.new)}: {r.reason}' for r in diff.rows[:3])})")
    else:
        why = "no rows in common"
    facts = (("command", lambda r: [r.command]), ("device", lambda r: [r.device]),
             ("shapes", lambda r: [str(x.shape) for x in r.results]),
             ("precisions", lambda r: [x.precision.upper() for x in r.results]),
             ("kernels", lambda r: [f"{x.device}:{x.kernel_id} {x.name}" for x in r.results]),
             ("threads", lambda r: [str(x.threads) for x in r.results if x.threads]),
             ("parameters", lambda r: [" ".join(f"{k}={v}" for k, v in x.params.items()) for x in r.results
                                       if x.params_source == "given"]))
    differs = [f"{name}: {_span(get(old))} -> {_span(get(new))}" for name, get in facts
               if set(get(old)) != set(get(new))]
    return f"nothing compared: {why}" + (f"; differs: {'; '.join(differs)}" if differs else "") + \
        " (a diff gates only rows both records timed)"


def _facts(record: RunRecord, version) -> dict:
    env = record.environment
    gpu = env.get("gpu") or {}
    cpu = env.get("cpu") or {}
    blas = ", ".join(f"{b.get('internal_api')} {b.get('version')}" for b in cpu.get("blas") or [])
    facts = {"device": record.device, "GPU": gpu.get("name"), "GPU UUID": gpu.get("uuid"),
             "SM clock (MHz)": _clock(record), "driver": gpu.get("driver_version"),
             "CUDA": gpu.get("cuda_driver_api"), "cuBLAS": env.get("cublas"), "CPU": cpu.get("cpu"),
             "BLAS": blas or None, "gemmbench": version,
             "cache": "cold L2" if record.options.get("flush_l2") else "warm"}
    return facts


def _clock(record: RunRecord):
    """The median SM clock the GPU rows ran at (NVML, after each kernel's
    samples); the record's start-up reading only when rows have none."""
    clocks = sorted(r.notes["sm_clock_mhz"] for r in record.results
                    if r.device == "gpu" and isinstance(r.notes.get("sm_clock_mhz"), (int, float)))
    return round(float(np.median(clocks))) if clocks else record.environment.get("sm_clock_mhz")


def environment_differences(old: RunRecord, new: RunRecord, versions=(None, None)) -> list[str]:
    """'GPU: A -> B' for each fact of the machine or the tool that differs
    (facts one side does not record are not counted as differences)."""
    a, b = _facts(old, versions[0]), _facts(new, versions[1])
    return [f"{name}: {a[name]} -> {b[name]}" for name in a
            if a[name] is not None and b[name] is not None and a[name] != b[name]]
