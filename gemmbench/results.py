"""Typed result records and their JSON form; saving is atomic and incremental."""

from __future__ import annotations

import datetime as _dt
import json
import math
import subprocess
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from . import __version__
from .backend import Shape
from .fsutil import write_atomic
from .spec import comparison_precision
from .stats import Stats, gflops, summarize
from .verify import Verification

SCHEMA = 1


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
            "gflops": self.gflops, "notes": self.notes, "gpu": self.gpu,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "KernelResult":
        v = d.get("verification")
        return cls(d["device"], d["kernel_id"], d["name"], d["precision"], Shape(**d["shape"]),
                   d["status"], d.get("reason"), d.get("params") or {}, d.get("params_source", "default"),
                   d.get("threads"),
                   Verification(_inf_if_none(v["max_rel_error"]), v["tolerance"], v["nonfinite"]) if v else None,
                   list(d.get("samples_s") or []), d.get("notes") or {}, d.get("gpu"))


def baseline_for(result: KernelResult, results: list[KernelResult], ladder_device: str) -> KernelResult | None:
    """The library baseline that ``result`` is compared with: rung 0 of the
    command's ladder at the same shape (on the CPU, at the same thread count),
    in the precision the result is compared at (TF32 rows with cuBLAS TF32),
    on the same GPU for a GPU row;
    library rows themselves are compared with the FP32 one."""
    precision = "fp32" if result.kernel_id == 0 else comparison_precision(result.precision)
    for base in results:
        if (base.kernel_id == 0 and base.device == ladder_device and base.shape == result.shape
                and (result.gpu is None or base.gpu == result.gpu)
                and base.precision == precision and base.status == "pass" and base.gflops
                and (ladder_device != "cpu" or base.threads == result.threads)):
            return base
    return None


def percent_of_baseline(result: KernelResult, results: list[KernelResult], ladder_device: str) -> float | None:
    base = baseline_for(result, results, ladder_device)
    if base is None or result.gflops is None:
        return None
    return 100.0 * result.gflops / base.gflops


def percent_of_peak(result: KernelResult, environment: dict) -> float | None:
    """Of the FP32 (non-tensor-core) peak, for results of FP32 accuracy."""
    peak = (environment.get("gpu") or {}).get("peak_fp32_tflops")
    if result.device != "gpu" or not peak or result.gflops is None or result.precision == "tf32":
        return None
    return 100.0 * result.gflops / (peak * 1e3)


@dataclass
class RunRecord:
    """Everything one command measured, with the machine it ran on."""

    command: str
    device: str  # the ladder: "gpu" or "cpu"
    options: dict
    environment: dict = field(default_factory=dict)
    results: list[KernelResult] = field(default_factory=list)
    created: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))

    @property
    def failed(self) -> bool:
        return any(r.status == "fail" for r in self.results)

    def best_result(self, kernel_id: int) -> KernelResult | None:
        """The fastest verified result of this rung (a tuner's winner)."""
        timed = [r for r in self.results if r.kernel_id == kernel_id and r.status == "pass" and r.gflops]
        return max(timed, key=lambda r: r.gflops, default=None)

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "gemmbench": {"version": __version__, "git_commit": git_commit()},
            "command": self.command, "device": self.device, "created": self.created,
            "options": self.options, "environment": self.environment,
            "results": [{**r.to_dict(),
                         "percent_of_baseline": percent_of_baseline(r, self.results, self.device),
                         "percent_of_peak": percent_of_peak(r, self.environment)}
                        for r in self.results],
        }

    @classmethod
    def from_dict(cls, d: dict) -> "RunRecord":
        if d.get("schema") != SCHEMA:
            raise ValueError(f"unknown result schema {d.get('schema')!r}")
        return cls(d["command"], d["device"], d["options"], d["environment"],
                   [KernelResult.from_dict(r) for r in d["results"]], d["created"])


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


def to_json(record: RunRecord, indent: int | None = 1) -> str:
    return json.dumps(_strict(record.to_dict()), indent=indent, allow_nan=False)


def git_commit() -> str | None:
    """The checkout's commit when gemmbench runs from one, else None; with
    "+dirty" when tracked files differ from it (the numbers then come from
    code that commit does not hold)."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        commit = out.stdout.strip()
        if commit:
            dirty = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD", "--"],
                                   capture_output=True, timeout=30).returncode == 1
            commit += "+dirty" if dirty else ""
    except (OSError, subprocess.SubprocessError):
        return None
    return commit or None


def new_result_path(directory: Path, command: str, device: str) -> Path:
    """A file name no earlier run used: nothing saved before is overwritten."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        path = directory / f"{command}-{device}-{stamp}{f'-{n}' if n else ''}.json"
        try:
            path.open("x").close()  # reserve the name
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free result file name in {directory}")


def save(record: RunRecord, path: Path) -> None:
    """Write the record atomically: a crash mid-write leaves the last good copy."""
    write_atomic(path, to_json(record) + "\n")


def load(path: Path) -> RunRecord:
    return RunRecord.from_dict(json.loads(Path(path).read_text()))
