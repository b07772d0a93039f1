"""Reading saved records back: load, validate against the record schema, and
accept every schema version this gemmbench has written.

A record is checked before anything uses it: the schema version, every
required field and the type and range of every field the readers use.
Required fields are checked strictly; optional ones may be missing, and
fields this version does not know (a newer writer's additions) are ignored.
What is wrong is one line naming the file and the field (``RecordError``, a
``UserError``: exit 2). Derived numbers (stats, GFLOP/s, percentages) are
recomputed from the raw samples, never trusted from the file.

The file itself is read by gemmbench.fsutil's reader: a regular file (never a
FIFO or a device such as /dev/zero) of at most fsutil.RECORD_MAX_BYTES, JSON
nested at most fsutil.JSON_MAX_DEPTH deep with numbers of at most
fsutil.JSON_MAX_NUMBER_CHARS characters. Ranges: sizes as the kernels take
them (1 to validate.MAX_DIMENSION), samples from MIN_SAMPLE_SECONDS (no timer
here resolves less; a smaller one would make GFLOP/s infinite) to
MAX_SAMPLE_SECONDS. A record holds each row (kernel, precision, shape,
threads, GPU, parameters) once: a repeated row is an error naming both.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from .. import __version__, fsutil
from ..errors import UserError
from ..output.text import cut
from ..precision import PRECISIONS
from ..spec import params_key
from ..timing import STOP_REASONS
from ..validate import MAX_DIMENSION, MAX_THREADS
from .results import READABLE_SCHEMAS, KernelResult, RunRecord, git_commit

STATUSES = ("pass", "fail", "skip")
MIN_SAMPLE_SECONDS = 1e-9
MAX_SAMPLE_SECONDS = 1e6
MAX_KERNEL_ID = 10 ** 6
MAX_GPU_INDEX = 1023
_FLAG = re.compile(r"[a-z][a-z0-9-]{0,39}")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


class RecordError(UserError):
    """A file that is not a valid gemmbench record; the message says why."""


@dataclass(frozen=True)
class Loaded:
    """A validated record and the facts about its writer that diff reports."""

    path: Path
    record: RunRecord
    schema: int
    version: str | None
    git_commit: str | None
    complete: bool

    @property
    def writer(self) -> str | None:
        """The gemmbench that wrote it: version and commit, as far as recorded."""
        return writer_text(self.version, self.git_commit)

    @property
    def label(self) -> str:
        """GPU (or CPU) and date: how side-by-side columns name a record."""
        return record_label(self.record)


def writer_text(version: str | None, commit: str | None) -> str | None:
    if version is None:
        return None
    return f"{version} ({commit[:12]}{'+dirty' if commit.endswith('+dirty') else ''})" if commit else version


def current_writer() -> str | None:
    """This gemmbench, as writer_text names a record's writer."""
    return writer_text(__version__, git_commit())


def record_label(record: RunRecord) -> str:
    gpu = record.environment.get("gpu") or {}
    where = gpu.get("name") if record.device == "gpu" else (record.environment.get("cpu") or {}).get("cpu")
    gpus = record.environment.get("gpus")
    if gpus and record.device == "gpu":
        where = f"{where} #{','.join(sorted(gpus, key=int))}"
    elif gpu.get("index") is not None and record.device == "gpu":
        where = f"{where} #{gpu['index']}"
    return f"{where or record.device.upper()} {record.created[:16].replace('T', ' ')}"


def load(path) -> Loaded:
    """The record at ``path``, validated; RecordError (one line) otherwise."""
    path = Path(path)
    data = _read_json(path)
    try:
        return _build(path, data)
    except _Invalid as exc:
        raise RecordError(f"{path}: {exc}") from None


def _read_json(path: Path):
    try:
        data = fsutil.read_bytes(path, fsutil.RECORD_MAX_BYTES)
    except fsutil.UnreadableFile as exc:
        hint = ": give a .json file saved by gemmbench" if "not a regular file" in exc.problem else ""
        raise RecordError(f"{path}: {exc.problem}{hint}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{path} is not a gemmbench record: not UTF-8 text") from None
    if not text.strip():
        raise RecordError(f"{path} is empty: not a gemmbench record")
    try:
        return fsutil.loads_json(text)
    except fsutil.JSONLimitError as exc:
        raise RecordError(f"{path} is not a gemmbench record: {exc}") from None
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()):
            raise RecordError(f"{path} is truncated: its JSON ends early (line {exc.lineno}); "
                              f"the run that wrote it may have been interrupted") from None
        raise RecordError(f"{path} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


class _Invalid(Exception):
    """One thing wrong with a record: the field's path and what is wrong."""


_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", dict: "an object", list: "a list",
               bool: "true or false"}


def _describe(value) -> str:
    if value is None:
        return "null"
    text = json.dumps(value)
    return cut(text, 30)


def _check(value, kind, where: str, optional: bool = False):
    """``value`` if it is of ``kind`` (a number accepts int and float; bool is
    never a number); null allowed when ``optional``."""
    if value is None and optional:
        return None
    kinds = (int, float) if kind is float else (kind,)
    ok = isinstance(value, kinds) and not (kind is not bool and isinstance(value, bool))
    if not ok:
        raise _Invalid(f"{where} should be {_TYPE_NAMES[kind]}, not {_describe(value)}")
    if kind is float and not math.isfinite(value):
        raise _Invalid(f"{where} should be a finite number, not {value}")
    return value


def _required(d: dict, key: str, kind, where: str = ""):
    if key not in d:
        raise _Invalid(f"missing field {where}{key!r}")
    return _check(d[key], kind, f"{where}{key}")


def _optional(d: dict, key: str, kind, default, where: str = ""):
    value = _check(d.get(key), kind, f"{where}{key}", optional=True)
    return default if value is None else value


def _in_range(value, low, high, where: str):
    """``value`` (already type-checked; None passes) within [low, high]."""
    if value is not None and not low <= value <= high:
        bounds = f">= {low}" + (f" and <= {high}" if high != math.inf else "")
        raise _Invalid(f"{where} should be {bounds}, not {_describe(value)}")
    return value


def _params(params: dict, where: str) -> dict:
    """A parameter set (names to integers), as a row or a tune's options hold one."""
    for name, value in params.items():
        if not _IDENT.fullmatch(name):
            raise _Invalid(f"{where} has a key {_describe(name)}, not a parameter name")
        _in_range(_check(value, int, f"{where}.{name}"), -2 ** 63, 2 ** 63 - 1, f"{where}.{name}")
    return params


def _strings(d: dict, key: str, where: str, pattern: re.Pattern | None = None) -> list:
    """An optional list of strings (each matching ``pattern`` when given)."""
    items = _optional(d, key, list, [], where)
    for i, item in enumerate(items):
        _check(item, str, f"{where}{key}[{i}]")
        if pattern is not None and not pattern.fullmatch(item):
            raise _Invalid(f"{where}{key}[{i}] should be a word such as \"noisy\", not {_describe(item)}")
    return items


def _build(path: Path, data) -> Loaded:
    if not isinstance(data, dict):
        raise _Invalid(f"not a gemmbench record (the file holds a JSON {type(data).__name__}, not an object)")
    if "schema" not in data:
        raise _Invalid("not a gemmbench record (no 'schema' field)")
    schema = data["schema"]
    if not isinstance(schema, int) or isinstance(schema, bool) or schema not in READABLE_SCHEMAS:
        newer = isinstance(schema, int) and not isinstance(schema, bool) and schema > max(READABLE_SCHEMAS)
        hint = ": written by a newer gemmbench, upgrade to read it" if newer else ""
        raise _Invalid(f"record schema {_describe(schema)} is not one this gemmbench reads "
                       f"({', '.join(map(str, READABLE_SCHEMAS))}){hint}")
    command = _required(data, "command", str)
    device = _required(data, "device", str)
    if device not in ("gpu", "cpu"):
        raise _Invalid(f"device should be \"gpu\" or \"cpu\", not {_describe(device)}")
    created = _required(data, "created", str)
    options = _required(data, "options", dict)
    _in_range(_optional(options, "top", int, None, "options."), 1, 10 ** 6, "options.top")
    _in_range(_optional(options, "not_compiled", int, None, "options."), 0, 10 ** 9, "options.not_compiled")
    for i, params in enumerate(_optional(options, "not_built", list, [], "options.")):
        _params(_check(params, dict, f"options.not_built[{i}]"), f"options.not_built[{i}]")
    _optional(options, "seed", int, None, "options.")
    _optional(options, "flush_l2", bool, None, "options.")
    _in_range(_optional(options, "rounds", int, None, "options."), 1, 10 ** 6, "options.rounds")
    _shape_set(options)
    environment = _environment(_required(data, "environment", dict), "environment.")
    raw = _required(data, "results", list)
    writer = _optional(data, "gemmbench", dict, {})
    complete = _optional(data, "complete", bool, True) if schema >= 2 else True
    planned = _in_range(_optional(data, "planned", int, None), 0, 10 ** 9, "planned")
    results = [_result(r, f"results[{i}].") for i, r in enumerate(raw)]
    _no_duplicates(results)
    record = RunRecord(command, device, options, environment, results, created, complete,
                       _optional(data, "incomplete_reason", str, None), planned, writer or None)
    return Loaded(path, record, schema, _check(writer.get("version"), str, "gemmbench.version", True),
                  _check(writer.get("git_commit"), str, "gemmbench.git_commit", True), complete)


def _shape_set(options: dict) -> None:
    """The shapes of sizes --shapes, whose names the sizes table and plot show."""
    for i, entry in enumerate(_optional(options, "shapes", list, [], "options.")):
        where = f"options.shapes[{i}]"
        _check(entry, dict, where)
        for dim in "MNK":
            _in_range(_required(entry, dim, int, f"{where}."), 1, MAX_DIMENSION, f"{where}.{dim}")
        for key in ("name", "group"):
            _optional(entry, key, str, None, f"{where}.")


def row_identity(result: KernelResult) -> tuple:
    """What a record holds once: a kernel (with its parameters) in a
    precision at a shape, thread count and GPU."""
    return (result.device, result.kernel_id, result.name, result.precision, result.shape, result.threads,
            result.gpu, params_key(result.params))


def _no_duplicates(results: list[KernelResult]) -> None:
    first: dict[tuple, int] = {}
    for i, r in enumerate(results):
        j = first.setdefault(row_identity(r), i)
        if j != i:
            where = f" on GPU {r.gpu}" if r.gpu is not None else ""
            raise _Invalid(f"results[{j}] and results[{i}] are the same row ({r.device} kernel {r.kernel_id} "
                           f"{_describe(r.name)} {r.precision} at {r.shape}{where}): a record holds each row once")


# what the table headers read from a GPU's facts
_GPU_FACTS = (("name", str), ("compute_capability", str), ("sm_count", int), ("max_sm_clock_mhz", float),
              ("peak_fp32_tflops", float), ("driver_version", str), ("cuda_driver_api", str))
_CPU_FACTS = (("cpu", str), ("cores", int), ("simd", str), ("compiler", str))
_BLAS_FACTS = ("internal_api", "version", "architecture", "filepath", "prefix", "user_api")
_AFTER_FACTS = ("sm_clock_mhz", "temperature_c", "power_w")


def _environment(env: dict, where: str) -> dict:
    _optional(env, "host", str, None, where)  # records before the fleet summary have none
    gpu = _optional(env, "gpu", dict, None, where)
    if gpu is not None:
        for key, kind in _GPU_FACTS:
            _required(gpu, key, kind, f"{where}gpu.")
        for key in ("sm_count", "max_sm_clock_mhz", "peak_fp32_tflops"):
            if gpu[key] <= 0:
                raise _Invalid(f"{where}gpu.{key} should be positive, not {_describe(gpu[key])}")
        _in_range(_optional(gpu, "index", int, None, f"{where}gpu."), 0, MAX_GPU_INDEX, f"{where}gpu.index")
        for key in ("uuid", "pci_bus_id"):
            _optional(gpu, key, str, None, f"{where}gpu.")
    _strings(env, "notes", where)
    _strings(env, "throttle", where)
    _in_range(_optional(env, "sm_clock_mhz", float, None, where), 0, 1e6, f"{where}sm_clock_mhz")
    _optional(env, "cublas", str, None, where)
    cpu = _optional(env, "cpu", dict, None, where)
    if cpu is not None:
        for key, kind in _CPU_FACTS:
            _optional(cpu, key, kind, None, f"{where}cpu.")
        _in_range(cpu.get("cores"), 1, 10 ** 6, f"{where}cpu.cores")
        for i, blas in enumerate(_optional(cpu, "blas", list, [], f"{where}cpu.")):
            _check(blas, dict, f"{where}cpu.blas[{i}]")
            for key in _BLAS_FACTS:
                _optional(blas, key, str, None, f"{where}cpu.blas[{i}].")
            _optional(blas, "num_threads", int, None, f"{where}cpu.blas[{i}].")
    after = _optional(env, "after", dict, None, where)
    if after is not None:
        _strings(after, "throttle", f"{where}after.")
        for key in _AFTER_FACTS:
            _optional(after, key, float, None, f"{where}after.")
    _optional(env, "error", str, None, where)
    for key, sub in _optional(env, "gpus", dict, {}, where).items():
        if not (key.isascii() and key.isdigit() and str(int(key)) == key and int(key) <= MAX_GPU_INDEX):
            raise _Invalid(f"{where}gpus has a key {_describe(key)}, not a GPU index")
        _check(sub, dict, f"{where}gpus.{key}")
        if sub.get("error"):  # a failed worker may not have told its facts
            _optional(sub, "error", str, None, f"{where}gpus.{key}.")
        else:
            _environment(sub, f"{where}gpus.{key}.")
    return env


def _result(r, where: str) -> KernelResult:
    if not isinstance(r, dict):
        raise _Invalid(f"{where[:-1]} should be an object, not {_describe(r)}")
    for key, kind in (("device", str), ("kernel_id", int), ("name", str), ("precision", str), ("status", str)):
        _required(r, key, kind, where)
    if r["device"] not in ("gpu", "cpu"):
        raise _Invalid(f"{where}device should be \"gpu\" or \"cpu\", not {_describe(r['device'])}")
    _in_range(r["kernel_id"], -MAX_KERNEL_ID, MAX_KERNEL_ID, f"{where}kernel_id")
    if r["precision"] not in PRECISIONS:
        raise _Invalid(f"{where}precision should be one of {', '.join(PRECISIONS)}, not {_describe(r['precision'])}")
    if r["status"] not in STATUSES:
        raise _Invalid(f"{where}status should be one of {', '.join(STATUSES)}, not {_describe(r['status'])}")
    shape = _required(r, "shape", dict, where)
    for dim in "MNK":
        _in_range(_required(shape, dim, int, f"{where}shape."), 1, MAX_DIMENSION, f"{where}shape.{dim}")
    _optional(r, "reason", str, None, where)
    _params(_optional(r, "params", dict, {}, where), f"{where}params")
    _optional(r, "params_source", str, "default", where)
    _in_range(_optional(r, "threads", int, None, where), 1, MAX_THREADS, f"{where}threads")
    _in_range(_optional(r, "gpu", int, None, where), 0, MAX_GPU_INDEX, f"{where}gpu")
    _notes(_optional(r, "notes", dict, {}, where), f"{where}notes.")
    if "flags" in r:
        _check(r["flags"], list, f"{where}flags")
        _strings(r, "flags", where, _FLAG)
    samples = _optional(r, "samples_s", list, [], where)
    # the common case in one pass (a fleet summary reads millions of samples); the loop names what is wrong
    valid = all(type(s) is float and MIN_SAMPLE_SECONDS <= s <= MAX_SAMPLE_SECONDS for s in samples)
    for i, s in enumerate(() if valid else samples):
        if not MIN_SAMPLE_SECONDS <= _check(s, float, f"{where}samples_s[{i}]") <= MAX_SAMPLE_SECONDS:
            raise _Invalid(f"{where}samples_s[{i}] should be a positive number of seconds, from "
                           f"{MIN_SAMPLE_SECONDS:g} to {MAX_SAMPLE_SECONDS:g}, not {s!r}")
    v = _optional(r, "verification", dict, None, where)
    if v is not None:
        error = _check(v.get("max_rel_error"), float, f"{where}verification.max_rel_error", optional=True)
        _in_range(error, 0, math.inf, f"{where}verification.max_rel_error")
        _in_range(_required(v, "tolerance", float, f"{where}verification."), 0, math.inf,
                  f"{where}verification.tolerance")
        _in_range(_required(v, "nonfinite", int, f"{where}verification."), 0, 2 ** 63,
                  f"{where}verification.nonfinite")
    if r["status"] == "pass" and not r.get("samples_s"):
        raise _Invalid(f"{where}samples_s is empty, but the result passed: a timed result keeps its samples")
    return KernelResult.from_dict({**r, "shape": {d: shape[d] for d in "MNK"}})


def _notes(notes: dict, where: str) -> None:
    """The notes a display reads: clocks, throttling, why sampling stopped, the kernel file."""
    _in_range(_optional(notes, "sm_clock_mhz", float, None, where), 0, 1e6, f"{where}sm_clock_mhz")
    _in_range(_optional(notes, "throttled_share", float, None, where), 0, 1, f"{where}throttled_share")
    _in_range(_optional(notes, "cpu_wait_fraction", float, None, where), 0, math.inf, f"{where}cpu_wait_fraction")
    _in_range(_optional(notes, "calls_per_sample", int, None, where), 1, 2 ** 63, f"{where}calls_per_sample")
    _in_range(_optional(notes, "warmup_settled_s", float, None, where), 0, math.inf, f"{where}warmup_settled_s")
    temps = _optional(notes, "gpu_temp_range_c", list, None, where)
    if temps is not None:
        low, high = [_check(t, float, f"{where}gpu_temp_range_c[{i}]") for i, t in enumerate(temps)] \
            if len(temps) == 2 else (math.nan, math.nan)
        if not -100 <= low <= high <= 1000:
            raise _Invalid(f"{where}gpu_temp_range_c should be [lowest, highest] in C, not {_describe(temps)}")
    _strings(notes, "throttle", where)
    stopped = _optional(notes, "stopped", str, None, where)
    if stopped is not None and stopped not in STOP_REASONS:
        raise _Invalid(f"{where}stopped should be one of {', '.join(STOP_REASONS)}, not {_describe(stopped)}")
    _in_range(_optional(notes, "median_noise", float, None, where), 0, math.inf, f"{where}median_noise")
    max_noise = _in_range(_optional(notes, "max_noise", float, None, where), 0, 1, f"{where}max_noise")
    if max_noise == 0:
        raise _Invalid(f"{where}max_noise should be > 0, not 0")
    for key in ("kernel_file", "kernel_sha256", "choice"):
        _optional(notes, key, str, None, where)
    for i, visit in enumerate(_optional(notes, "rounds", list, [], where)):  # --rounds: each round's median
        at = f"{where}rounds[{i}]."
        _check(visit, dict, at[:-1])
        _in_range(_required(visit, "median_s", float, at), MIN_SAMPLE_SECONDS, MAX_SAMPLE_SECONDS, f"{at}median_s")
        _in_range(_required(visit, "samples", int, at), 1, 2 ** 63, f"{at}samples")
