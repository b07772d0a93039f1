"""A fleet's records read back together: one line per GPU and shape, each
GPU's speed as a ratio to the median GPU of its model, and the GPUs to look at.

A fleet is run by the cluster's scheduler (one gemmbench per GPU, records in
one folder); this module only reads what those runs saved. The view is
``gemmbench.output.fleet``.

- **Which GPU.** A GPU is its NVML UUID; without one (no NVML), its host and
  PCI bus id. Records of the same GPU are merged, *newest wins*: for each
  kernel, precision and shape, the rows of the newest record (by ``created``)
  that has it. A rerun after a repair replaces the numbers it measured again
  instead of blending with them; rows it did not measure again stay. A
  multi-GPU record (``--gpus``) gives each of its GPUs its own rows.
- **Which peers.** GPUs are compared only with GPUs of the same model (the
  name CUDA reports) at the same shape: an H100 is never an outlier among
  H200s. Records of several shapes give one group per shape.
- **The key figure** of a GPU is its speed relative to its peers: for each
  row it shares with them (kernel, precision, shape; the fastest row where a
  tuning record holds several), its GFLOP/s over the median of its model's
  GPUs (itself included) for that row; the geometric mean of these ratios.
  1.0 is the median GPU; 0.85 is 15% slower on a typical row.
- **Outliers** (flagged, each with its reason): a key figure with
  ``|x - median| / (1.4826 * MAD) > 3.5`` within its model and shape (the
  MAD rule of Iglewicz and Hoaglin; 1.4826 makes the MAD a normal
  distribution's standard deviation), judged only where at least MIN_PEERS
  GPUs have a key figure, the scale never below SIGMA_FLOOR of the median (a
  fleet of identical figures does not flag a 0.1% difference); a failed row
  (verification or a crash); a share of throttled rows more than
  THROTTLE_MARGIN above the median GPU of its model (the H200 throttles every
  TF32 row under its power cap: throttling its peers share is not a fault); a
  hardware or thermal slowdown in any row; a worker that failed; a newest
  record that did not finish.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ..backend import Shape
from ..precision import PRECISIONS, comparison_precision
from .results import THROTTLED, THROTTLED_FRACTION, KernelResult, sm_clock_mhz
from .store import Loaded

OUTLIER_Z = 3.5  # robust z-score beyond which a key figure is an outlier
MAD_SCALE = 1.4826  # the MAD times this estimates a normal distribution's standard deviation
MIN_PEERS = 5  # GPUs of a model (at a shape) with a key figure, before speed is judged
SIGMA_FLOOR = 0.005  # the scale is at least this share of the median key figure
THROTTLE_MARGIN = 0.25  # a GPU throttled in this much larger a share of its rows than its model's median
# clock-event reasons a healthy GPU does not show (gemmbench.gpu.nvml's names); the power cap is not one
HARDWARE_SLOWDOWNS = ("HwSlowdown", "SwThermalSlowdown", "HwThermalSlowdown", "HwPowerBrakeSlowdown")
LIBRARY_CLASSES = tuple(dict.fromkeys(p.library for p in PRECISIONS.values()))  # fp32, tf32, bf16, fp16


def rule_text() -> str:
    return (f"outlier: |ratio - median| / (1.4826 MAD) > {OUTLIER_Z} among GPUs of the same model and shape "
            f"(judged from {MIN_PEERS} GPUs; scale at least {100 * SIGMA_FLOOR:g}% of the median), a failed row, "
            f"a share of throttled rows more than {100 * THROTTLE_MARGIN:.0f} points above the model's median GPU, "
            f"a hardware or thermal slowdown, a failed worker or an unfinished record")


@dataclass
class FleetGpu:
    """One physical GPU over every record that measured it (merged, newest wins)."""

    identity: tuple
    host: str | None = None
    index: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    visible: str | None = None  # CUDA_VISIBLE_DEVICES of the run
    model: str = "unknown"
    driver: str | None = None
    paths: list[Path] = field(default_factory=list)
    rows: dict[tuple, list[KernelResult]] = field(default_factory=dict)  # (kernel, name, precision, shape) -> rows
    error: str | None = None  # the newest record's worker failed on this GPU
    incomplete: str | None = None  # the newest record did not finish: why


def _dims(shape: Shape | None) -> dict:
    return {d: getattr(shape, d) if shape else None for d in "MNK"}


@dataclass
class GpuLine:
    """One GPU at one shape: its library and best rows per precision class,
    clock and throttling, its key figure among its model's GPUs and the
    reasons it is flagged (none: it looks like its peers)."""

    gpu: FleetGpu
    shape: Shape | None  # None: no rows at all
    library: dict[str, KernelResult]  # library class -> its cuBLAS row
    best: dict[str, KernelResult]  # rung class -> its fastest rung
    fastest: dict[tuple, KernelResult]  # row key -> the fastest timed row (what peers are compared on)
    timed: int
    failed: list[KernelResult]
    clock: float | None
    throttled_share: float | None
    slowdowns: list[str]
    ratio: float | None = None
    robust_z: float | None = None
    reasons: list[str] = field(default_factory=list)

    @property
    def outlier(self) -> bool:
        return bool(self.reasons)

    def percent_of_library(self, precision: str) -> float | None:
        best, base = self.best.get(precision), self.library.get(comparison_precision(precision))
        return 100.0 * best.gflops / base.gflops if best and base else None

    def to_dict(self) -> dict:
        """Plain values, units in the names (the CSV and JSON views)."""
        g = self.gpu
        out = {"host": g.host, "gpu_index": g.index, "uuid": g.uuid, "pci_bus_id": g.pci_bus_id,
               "cuda_visible_devices": g.visible, "model": g.model, "driver": g.driver,
               **_dims(self.shape), "records": len(g.paths),
               "timed_rows": self.timed, "failed_rows": len(self.failed)}
        for name in LIBRARY_CLASSES:
            row = self.library.get(name)
            out[f"cublas_gflops_{name}"] = row.gflops if row else None
        for name in PRECISIONS:
            row = self.best.get(name)
            out[f"best_gflops_{name}"] = row.gflops if row else None
            out[f"best_kernel_id_{name}"] = row.kernel_id if row else None
            out[f"best_pct_cublas_{name}"] = self.percent_of_library(name)
        out.update({"sm_clock_mhz": self.clock, "throttled_share": self.throttled_share,
                    "ratio_to_model_median": self.ratio, "robust_z": self.robust_z, "outlier": self.outlier,
                    "reasons": list(self.reasons)})
        return out


@dataclass
class PeerGroup:
    """The GPUs of one model at one shape, and the yardsticks of its rule."""

    model: str
    shape: Shape | None
    lines: list[GpuLine]
    median_ratio: float | None
    mad: float | None
    sigma: float | None  # the scale the robust z divides by (None: too few GPUs to judge)
    median_throttled_share: float | None

    @property
    def judged(self) -> bool:
        return self.sigma is not None

    def to_dict(self) -> dict:
        return {"model": self.model, **_dims(self.shape),
                "gpus": len(self.lines), "median_ratio": self.median_ratio, "mad": self.mad, "sigma": self.sigma,
                "judged": self.judged, "median_throttled_share": self.median_throttled_share,
                "outliers": sum(line.outlier for line in self.lines)}


@dataclass
class FleetSummary:
    records: int
    gpus: list[FleetGpu]
    groups: list[PeerGroup]  # by shape (most GPUs first), then model
    left_out: list[str]  # records with no GPU rows, and why

    @property
    def lines(self) -> list[GpuLine]:
        return [line for group in self.groups for line in group.lines]

    @property
    def shapes(self) -> list[Shape]:
        return [s for s in dict.fromkeys(group.shape for group in self.groups) if s is not None]

    @property
    def outliers(self) -> list[GpuLine]:
        return [line for line in self.lines if line.outlier]

    @property
    def hosts(self) -> int:
        return len({g.host for g in self.gpus})

    def notes(self) -> list[str]:
        """What a reader should know beyond the table: groups too small to
        judge, drivers that differ within a model, records left out."""
        notes = [f"{g.model} at {g.shape}: {len(g.lines)} GPU{'s' * (len(g.lines) != 1)}, too few to judge "
                 f"speed (the MAD rule needs {MIN_PEERS})" for g in self.groups if not g.judged and g.shape]
        drivers: dict[str, set] = defaultdict(set)
        for gpu in self.gpus:
            drivers[gpu.model].add(gpu.driver or "unknown")
        notes += [f"{model}: drivers differ ({', '.join(sorted(d))}): a slow GPU may be its driver"
                  for model, d in drivers.items() if len(d) > 1]
        return notes + self.left_out

    def to_dict(self) -> dict:
        return {"records": self.records, "gpus": len(self.gpus), "hosts": self.hosts,
                "shapes": [{"M": s.M, "N": s.N, "K": s.K} for s in self.shapes], "merge": "newest record wins per row",
                "rule": {"text": rule_text(), "robust_z": OUTLIER_Z, "mad_scale": MAD_SCALE, "min_peers": MIN_PEERS,
                         "sigma_floor": SIGMA_FLOOR, "throttle_margin": THROTTLE_MARGIN},
                "groups": [g.to_dict() for g in self.groups], "outliers": len(self.outliers),
                "lines": [line.to_dict() for line in self.lines], "notes": self.notes()}


# --------------------------------------------------------------------------
# records -> GPUs
# --------------------------------------------------------------------------

def _created(loaded: Loaded) -> tuple:
    """Sort key: when the record was made (naive times read as UTC), then its path."""
    try:
        when = _dt.datetime.fromisoformat(loaded.record.created)
    except ValueError:
        when = _dt.datetime.min
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return when, str(loaded.path)


def _gpus_of(loaded: Loaded):
    """(environment, GPU rows, worker error) for each GPU a record measured."""
    record = loaded.record
    env = record.environment
    subs = env.get("gpus")
    if subs:
        common = {k: v for k, v in env.items() if k != "gpus"}
        for key in sorted(subs, key=int):
            index = int(key)
            sub = {**common, **subs[key]}
            if not isinstance(sub.get("gpu"), dict):  # a worker that failed before telling its facts
                sub["gpu"] = {"index": index}
            yield sub, [r for r in record.results if r.device == "gpu" and r.gpu == index], _fact(sub, "error", str)
    elif env.get("gpu"):
        yield env, [r for r in record.results if r.device == "gpu"], None


def _fact(facts: dict, key: str, kind: type):
    """A fact of the environment, or None. The loader checked its type,
    except in the facts of a worker that failed: those are taken as found."""
    value = facts.get(key)
    return value if isinstance(value, kind) and not isinstance(value, bool) else None


def _identity(env: dict) -> tuple:
    gpu = env["gpu"]
    uuid = _fact(gpu, "uuid", str)
    if uuid:
        return ("uuid", uuid)
    return ("host", _fact(env, "host", str), _fact(gpu, "pci_bus_id", str), _fact(gpu, "index", int))


def row_key(result: KernelResult) -> tuple:
    """What newest-wins merging and peer comparison match rows on."""
    return result.kernel_id, result.name, result.precision, result.shape


def merge(loaded: list[Loaded]) -> tuple[list[FleetGpu], list[str]]:
    """The GPUs the records measured, each merged over its records (newest
    wins per row); and a line for each record that measured no GPU."""
    gpus: dict[tuple, FleetGpu] = {}
    left_out = []
    for item in sorted(loaded, key=_created):  # oldest first: a newer record overwrites
        found = False
        for env, rows, error in _gpus_of(item):
            found = True
            gpu = gpus.setdefault(_identity(env), FleetGpu(_identity(env)))
            facts = env["gpu"]
            gpu.host, gpu.index, gpu.uuid = _fact(env, "host", str), _fact(facts, "index", int), _fact(facts, "uuid", str)
            gpu.pci_bus_id, gpu.visible = _fact(facts, "pci_bus_id", str), _fact(facts, "cuda_visible_devices", str)
            gpu.model = _fact(facts, "name", str) or gpu.model
            gpu.driver = _fact(facts, "driver_version", str) or gpu.driver
            gpu.paths.append(item.path)
            gpu.error = error
            gpu.incomplete = None if item.complete else (item.record.incomplete_reason or "stopped early")
            by_key: dict[tuple, list[KernelResult]] = defaultdict(list)
            for r in rows:
                by_key[row_key(r)].append(r)
            gpu.rows.update(by_key)
        if not found:
            why = "a CPU record" if item.record.device == "cpu" else "no GPU in its environment"
            left_out.append(f"{item.path}: left out ({why})")
    return list(gpus.values()), left_out


# --------------------------------------------------------------------------
# one GPU at one shape
# --------------------------------------------------------------------------

def _faster(a: KernelResult | None, b: KernelResult) -> KernelResult:
    return b if a is None or b.gflops > a.gflops else a


def _thermal(result: KernelResult) -> bool:
    """A thermal violation share above the throttled threshold (the loader does not check these notes)."""
    shares = result.notes.get("violation_share")
    share = shares.get("thermal") if isinstance(shares, dict) else None
    return isinstance(share, (int, float)) and not isinstance(share, bool) and share > THROTTLED_FRACTION


def gpu_line(gpu: FleetGpu, shape: Shape | None) -> GpuLine:
    """``shape`` None: a GPU with no rows at all (its worker failed first)."""
    rows = [r for key, rs in gpu.rows.items() if key[3] == shape for r in rs]
    timed = [r for r in rows if r.status == "pass" and r.gflops]
    library: dict[str, KernelResult] = {}
    best: dict[str, KernelResult] = {}
    fastest: dict[tuple, KernelResult] = {}
    for r in timed:
        target = library if r.kernel_id == 0 else best
        target[r.precision] = _faster(target.get(r.precision), r)
        fastest[row_key(r)] = _faster(fastest.get(row_key(r)), r)
    clocks = [c for r in timed if isinstance(c := sm_clock_mhz(r), (int, float))]
    slowdowns = sorted({str(t) for r in rows for t in r.notes.get("throttle") or [] if t in HARDWARE_SLOWDOWNS}
                       | ({"thermal violation"} if any(_thermal(r) for r in rows) else set()))
    return GpuLine(gpu, shape, library, best, fastest, len(timed), [r for r in rows if r.status == "fail"],
                   statistics.median(clocks) if clocks else None,
                   sum(THROTTLED in r.flags for r in timed) / len(timed) if timed else None, slowdowns)


# --------------------------------------------------------------------------
# peers: key figures and the rule
# --------------------------------------------------------------------------

def _median(values) -> float | None:
    values = list(values)
    return statistics.median(values) if values else None


def _key_figures(lines: list[GpuLine]) -> None:
    """Each line's ratio: the geometric mean, over the rows at least two of
    the group's GPUs timed, of its GFLOP/s over their median."""
    by_key: dict[tuple, list[float]] = defaultdict(list)
    for line in lines:
        for key, r in line.fastest.items():
            by_key[key].append(r.gflops)
    medians = {key: statistics.median(v) for key, v in by_key.items() if len(v) >= 2}
    for line in lines:
        logs = [math.log(r.gflops / medians[key]) for key, r in line.fastest.items() if key in medians]
        line.ratio = math.exp(sum(logs) / len(logs)) if logs else None


def _failed_text(failed: list[KernelResult]) -> str:
    names = ", ".join(f"{r.kernel_id} {r.name} ({r.precision})" + (f": {r.reason}" if r.reason else "")
                      for r in failed[:3])
    more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
    return f"{len(failed)} failed row{'s' * (len(failed) != 1)}: {names}{more}"


def judge(model: str, shape: Shape, lines: list[GpuLine]) -> PeerGroup:
    """The group's key figures, yardsticks and each line's reasons."""
    _key_figures(lines)
    ratios = [line.ratio for line in lines if line.ratio is not None]
    median = _median(ratios)
    mad = _median(abs(r - median) for r in ratios) if ratios else None
    sigma = max(MAD_SCALE * mad, SIGMA_FLOOR * median) if len(ratios) >= MIN_PEERS else None
    shares = _median(line.throttled_share for line in lines if line.throttled_share is not None)
    for line in lines:
        gpu = line.gpu
        if gpu.error:
            line.reasons.append(f"worker failed: {gpu.error}")
        if gpu.incomplete:
            line.reasons.append(f"record incomplete: {gpu.incomplete}")
        if line.failed:
            line.reasons.append(_failed_text(line.failed))
        if sigma and line.ratio is not None:
            line.robust_z = (line.ratio - median) / sigma
            if abs(line.robust_z) > OUTLIER_Z:
                line.reasons.append(f"{'slow' if line.robust_z < 0 else 'fast'}: {line.ratio:.3f} of the median "
                                    f"{model} (robust z {line.robust_z:+.1f})")
        if line.throttled_share is not None and shares is not None \
                and line.throttled_share - shares > THROTTLE_MARGIN:
            line.reasons.append(f"throttled in {100 * line.throttled_share:.0f}% of its rows "
                                f"(the median {model}: {100 * shares:.0f}%)")
        if line.slowdowns:
            line.reasons.append(f"hardware slowdown: {', '.join(line.slowdowns)}")
    return PeerGroup(model, shape, lines, median, mad, sigma, shares)


_DIGITS = re.compile(r"(\d+)")


def _natural(text: str | None) -> tuple:
    """node2 before node10."""
    return tuple(int(p) if p.isdigit() else p for p in _DIGITS.split(text or ""))


def _line_order(line: GpuLine) -> tuple:
    g = line.gpu
    return _natural(g.host), g.pci_bus_id or "", -1 if g.index is None else g.index, g.uuid or ""


def summarize(loaded: list[Loaded]) -> FleetSummary:
    """The fleet summary of validated records (gemmbench.records.store.load)."""
    gpus, left_out = merge(loaded)
    shapes = defaultdict(list)  # shape -> GPUs that have rows at it
    for gpu in gpus:
        for shape in dict.fromkeys(key[3] for key in gpu.rows):
            shapes[shape].append(gpu)
        if not gpu.rows:  # a worker that failed before any row still gets its line
            shapes[None].append(gpu)
    groups = []
    for shape, members in sorted(shapes.items(), key=lambda kv: (kv[0] is None, -len(kv[1]), str(kv[0]))):
        models = defaultdict(list)
        for gpu in members:
            models[gpu.model].append(gpu_line(gpu, shape))
        for model in sorted(models):
            groups.append(judge(model, shape, sorted(models[model], key=_line_order)))
    return FleetSummary(len(loaded), gpus, groups, left_out)
