"""Typed result records, their flags, baseline comparison and JSON form.

Saving a record while it grows (atomic snapshots and a journal) lives in
``recordfile``; this module only says what a record holds.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .. import __version__, procs
from ..errors import UserError
from ..backend import Shape
from ..precision import comparison_precision, precision as precision_class
from ..stats import Stats, gflops, summarize
from ..verify import Verification

SCHEMA = 2  # 2 added flags, complete/incomplete_reason, planned, percent_of_peak_at_clock
READABLE_SCHEMAS = (1, 2)

# Flags a result can carry; each says its numbers are less trustworthy.
NOISY = "noisy"  # the spread of its samples exceeds NOISY_RELATIVE_IQR
DISTURBED = "disturbed"  # its threads waited for a core while it was timed (bench.CpuWait)
THROTTLED = "throttled"  # the GPU throttled during its samples
SHIFTED = "shifted"  # a baseline that timed differently when measured again after the rungs
BASELINE_SHIFTED = "baseline-shifted"  # its "% of baseline" is against a shifted baseline
UNSETTLED = "unsettled"  # sampled towards a noise target (--max-noise) and stopped before reaching it
# A GPU row counts as throttled when this share of its sampling time was throttled.
THROTTLED_FRACTION = 0.05


@dataclass
class KernelResult:
    """One kernel at one shape: verification outcome and raw timing samples."""

    device: str
    kernel_id: int
    name: str
    precision: str
    shape: Shape
    status: str  # "pass" | "fail" | "skip"
    reason: str | None = None
    params: dict = field(default_factory=dict)
    params_source: str = "default"  # default | selected (per shape) | tuned (tuning cache) | given
    threads: int | None = None
    verification: Verification | None = None
    samples: list[float] = field(default_factory=list)  # seconds per call
    notes: dict = field(default_factory=dict)  # calls_per_sample, sm clock, ...
    gpu: int | None = None  # which GPU ran it (CUDA's ordinal); None on the CPU
    flags: list[str] = field(default_factory=list)  # NOISY, DISTURBED, ... (set by the bench)

    @cached_property
    def stats(self) -> Stats | None:
        """Computed once: samples are final when a result is published (bench
        sets them last), and reports and saves ask for these many times."""
        return summarize(self.samples) if self.samples else None

    @cached_property
    def gflops(self) -> float | None:
        s = self.stats
        return gflops(self.shape.flops, s.median) if s else None

    def to_dict(self) -> dict:
        s = self.stats
        return {
            "device": self.device, "kernel_id": self.kernel_id, "name": self.name,
            "precision": self.precision, "shape": {"M": self.shape.M, "N": self.shape.N, "K": self.shape.K},
            "status": self.status, "reason": self.reason, "params": self.params,
            "params_source": self.params_source, "threads": self.threads,
            "verification": self.verification.to_dict() if self.verification else None,
            "samples_s": self.samples, "stats": s.to_dict() if s else None,
            "gflops": self.gflops, "notes": self.notes, "gpu": self.gpu, "flags": self.flags,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "KernelResult":
        v = d.get("verification")
        r = cls(d["device"], d["kernel_id"], d["name"], d["precision"], Shape(**d["shape"]),
                d["status"], d.get("reason"), d.get("params") or {}, d.get("params_source", "default"),
                d.get("threads"),
                Verification(_inf_if_none(v["max_rel_error"]), v["tolerance"], v["nonfinite"]) if v else None,
                list(d.get("samples_s") or []), d.get("notes") or {}, d.get("gpu"))
        # schema 1 had no flags: derive the ones its numbers still show
        r.flags = list(d["flags"]) if "flags" in d else measurement_flags(r)
        return r


def sm_clock_mhz(result: KernelResult) -> float | None:
    """The SM clock the kernel ran at: the mean over its samples when the
    backend sampled it, else the one reading taken after them."""
    return result.notes.get("sm_clock_mhz")


def rounds_spread(result: KernelResult) -> float | None:
    """How far a row's round medians were apart: (largest - smallest) / smallest;
    None for a row timed in one round."""
    medians = [r["median_s"] for r in result.notes.get("rounds") or [] if r.get("median_s")]
    if len(medians) < 2:
        return None
    return max(medians) / min(medians) - 1


def is_throttled(notes: dict) -> bool:
    """From the notes of a GPU measurement: the share of the samples' time
    spent throttled where known, else whether any throttle reason was seen."""
    fraction = notes.get("throttled_share")
    if fraction is not None:
        return fraction > THROTTLED_FRACTION
    return bool(notes.get("throttle"))


def is_unsettled(notes: dict) -> bool:
    """From the notes of a measurement: it had a noise target and stopped
    short of it (timed out, or reached --max-samples first; median_noise is
    None where too few samples gave no confidence interval at all)."""
    target = notes.get("max_noise")
    if target is None or notes.get("stopped") is None:
        return False
    noise = notes.get("median_noise")
    return noise is None or noise > target


def measurement_flags(result: KernelResult) -> list[str]:
    """The flags a result's own samples and notes show (noisy, unsettled, throttled)."""
    flags = []
    if result.stats is not None and result.stats.noisy:
        flags.append(NOISY)
    if is_unsettled(result.notes):
        flags.append(UNSETTLED)
    if is_throttled(result.notes):
        flags.append(THROTTLED)
    return flags


def _wanted_baseline(result: KernelResult, ladder_device: str) -> tuple:
    """What a result is compared with: rung 0 of the command's ladder at the
    same shape (on the CPU, at the same thread count), in the precision the
    result is compared at (TF32 rows with cuBLAS TF32), on the same GPU for a
    GPU row; library rows themselves are compared with the FP32 one."""
    precision = "fp32" if result.kernel_id == 0 else comparison_precision(result.precision)
    return result.shape, precision, result.threads if ladder_device == "cpu" else None, result.gpu


def _offered_baseline(base: KernelResult, ladder_device: str) -> tuple | None:
    """The comparison key a timed library row serves, or None."""
    if base.kernel_id == 0 and base.device == ladder_device and base.status == "pass" and base.gflops:
        return base.shape, base.precision, base.threads if ladder_device == "cpu" else None, base.gpu
    return None


def baseline_for(result: KernelResult, results: list[KernelResult], ladder_device: str) -> KernelResult | None:
    """The library baseline that ``result`` is compared with (see _wanted_baseline)."""
    want = _wanted_baseline(result, ladder_device)
    return next((b for b in results if _serves(_offered_baseline(b, ladder_device), want)), None)


def _serves(offered: tuple | None, want: tuple) -> bool:
    """A row with no GPU (OpenBLAS beside a GPU ladder) takes any GPU's baseline."""
    return offered is not None and offered[:3] == want[:3] and (want[3] is None or offered[3] == want[3])


def _percent(result: KernelResult, base: KernelResult | None) -> float | None:
    if base is None or result.gflops is None:
        return None
    return 100.0 * result.gflops / base.gflops


def percent_of_baseline(result: KernelResult, results: list[KernelResult], ladder_device: str) -> float | None:
    return _percent(result, baseline_for(result, results, ladder_device))


def percent_of_peak(result: KernelResult, environment: dict, at_clock: bool = False) -> float | None:
    """Of the FP32 (non-tensor-core) peak, for results of FP32 accuracy: the
    peak at the GPU's maximum clock, or with ``at_clock`` the peak at the SM
    clock the kernel ran at (where the backend recorded it)."""
    gpu = environment.get("gpu") or {}
    peak = gpu.get("peak_fp32_tflops")
    if result.device != "gpu" or not peak or result.gflops is None \
            or not precision_class(result.precision).simt_peak:
        return None
    clock, top = sm_clock_mhz(result), gpu.get("max_sm_clock_mhz")
    if at_clock and clock and top:
        peak *= clock / top
    return 100.0 * result.gflops / (peak * 1e3)


def software() -> dict:
    """Which gemmbench made a record: computed once per run (git is slow)."""
    return {"version": __version__, "git_commit": git_commit()}


@dataclass
class RunRecord:
    """Everything one command measured, with the machine it ran on.

    ``results`` only grows (rows are appended as they land); ``complete`` is
    False while the run goes on and when it stopped early, with the reason.
    """

    command: str
    device: str  # the ladder: "gpu" or "cpu"
    options: dict
    environment: dict = field(default_factory=dict)
    results: list[KernelResult] = field(default_factory=list)
    created: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    complete: bool = True
    incomplete_reason: str | None = None
    planned: int | None = None  # how many kernel rows the plan had
    gemmbench: dict | None = None  # software(), filled in by head() on first use
    _baselines: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _indexed: int = field(default=0, init=False, repr=False, compare=False)

    @property
    def failed(self) -> bool:
        return any(r.status == "fail" for r in self.results)

    def best_result(self, kernel_id: int) -> KernelResult | None:
        """The fastest verified result of this rung (a tuner's winner)."""
        timed = [r for r in self.results if r.kernel_id == kernel_id and r.status == "pass" and r.gflops]
        return max(timed, key=lambda r: r.gflops, default=None)

    def best_by_shape(self, kernel_id: int) -> dict[Shape, KernelResult]:
        """The fastest verified result of this rung at each shape (a tuner's
        winners across a shape set), shapes in the record's order."""
        best: dict[Shape, KernelResult] = {}
        for r in self.results:
            if r.kernel_id == kernel_id and r.status == "pass" and r.gflops and \
                    (r.shape not in best or r.gflops > best[r.shape].gflops):
                best[r.shape] = r
        return best

    def baseline_of(self, result: KernelResult) -> KernelResult | None:
        """baseline_for over this record's results, through an index that grows
        with them: a sweep of thousands of rows stays linear."""
        for base in self.results[self._indexed:]:
            key = _offered_baseline(base, self.device)
            if key is not None:
                self._baselines.setdefault(key, base)
        self._indexed = len(self.results)
        want = _wanted_baseline(result, self.device)
        if want[3] is None:
            return next((b for key, b in self._baselines.items() if _serves(key, want)), None)
        return self._baselines.get(want)

    def percent_of_baseline(self, result: KernelResult) -> float | None:
        return _percent(result, self.baseline_of(result))

    def percent_of_baseline_per_cycle(self, result: KernelResult) -> float | None:
        """percent_of_baseline per SM cycle (time x the SM clock each ran at: the cycles a call took), for a
        GPU rung against a GPU baseline where both clocks are known; under a power cap that grants kernels
        different clocks it tells a slower kernel from a lower clock."""
        base = self.baseline_of(result)
        percent = _percent(result, base)
        if result.device != "gpu" or result.kernel_id == 0 or base is None or base.device != "gpu" \
                or percent is None:
            return None
        clock, base_clock = sm_clock_mhz(result), sm_clock_mhz(base)
        return percent * base_clock / clock if clock and base_clock else None

    def row_dict(self, result: KernelResult) -> dict:
        """One result as saved: its own fields and the figures relative to others."""
        return {**result.to_dict(), "percent_of_baseline": self.percent_of_baseline(result),
                "percent_of_peak": percent_of_peak(result, self.environment),
                "percent_of_peak_at_clock": percent_of_peak(result, self.environment, at_clock=True),
                "percent_of_baseline_per_cycle": self.percent_of_baseline_per_cycle(result)}

    def head(self) -> dict:
        """Every field but the results."""
        if self.gemmbench is None:
            self.gemmbench = software()
        return {"schema": SCHEMA, "gemmbench": self.gemmbench, "command": self.command, "device": self.device,
                "created": self.created, "complete": self.complete, "incomplete_reason": self.incomplete_reason,
                "planned": self.planned, "options": self.options, "environment": self.environment}

    def to_dict(self) -> dict:
        return {**self.head(), "results": [self.row_dict(r) for r in self.results]}


def _strict(value):
    """JSON has no NaN or infinity: write them as null (an error of null with
    passed=false means the kernel produced non-finite or unwritten output)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    return value


def _inf_if_none(value):
    return math.inf if value is None else value


def strict_json(value, indent: int | None = None) -> str:
    """Standard JSON (no NaN or Infinity tokens) of a plain value."""
    return json.dumps(_strict(value), indent=indent, allow_nan=False)


def to_json(record: RunRecord, indent: int | None = 1) -> str:
    return strict_json(record.to_dict(), indent)


GIT_SECONDS = 10.0  # each git call; git answers these in milliseconds
_COMMIT = re.compile(r"[0-9a-f]{7,64}")


def git_commit() -> str | None:
    """The checkout's commit when gemmbench runs from one, else None; with
    "+dirty" when tracked files differ from it (the numbers then come from
    code that commit does not hold). git runs under the subprocess policy
    (procs.run): a short limit, no prompt, no lock taken; any trouble is None."""
    root = Path(__file__).resolve().parents[2]  # gemmbench/records/results.py -> the checkout
    if not (root / ".git").exists():
        return None
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}

    def git(*args: str) -> procs.Completed:
        return procs.run(["git", "-C", str(root), *args], tool="git", limit=procs.limit("git", GIT_SECONDS),
                         hint="", env=env)
    try:
        head = git("rev-parse", "HEAD")
        commit = head.stdout.strip()
        if head.returncode != 0 or not _COMMIT.fullmatch(commit):
            return None
        return commit + ("+dirty" if git("diff", "--quiet", "HEAD", "--").returncode == 1 else "")
    except UserError:  # git missing, hung, killed, or its limit set wrong: the record goes without
        return None


def identity_line(gpu: dict) -> str:
    """How a record's notes (and a table's header) name one GPU: index, name, UUID and PCI bus id."""
    mask = gpu.get("cuda_visible_devices")
    return (f"GPU {gpu.get('index')}: {gpu.get('name')}, UUID {gpu.get('uuid') or 'unknown (no NVML)'}, "
            f"PCI {gpu.get('pci_bus_id')}" + (f" (CUDA_VISIBLE_DEVICES={mask})" if mask is not None else ""))
