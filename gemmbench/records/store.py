"""Reading saved records back: load, validate against the record schema, and
accept every schema version this gemmbench has written.

A record is checked before anything uses it: the schema version, every
required field and the type of every field the readers use. Required fields
are checked strictly; optional ones may be missing, and fields this version
does not know (a newer writer's additions) are ignored. What is wrong is one
line naming the file and the field (``RecordError``, a ``UserError``: exit 2).
Derived numbers (stats, GFLOP/s, percentages) are recomputed from the raw
samples, never trusted from the file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..errors import UserError
from ..precision import PRECISIONS
from .results import READABLE_SCHEMAS, KernelResult, RunRecord, git_commit

STATUSES = ("pass", "fail", "skip")


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
    if path.is_dir():
        raise RecordError(f"{path} is a directory, not a record: give a .json file saved by gemmbench")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path} is not a gemmbench record: not UTF-8 text") from None
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not text.strip():
        raise RecordError(f"{path} is empty: not a gemmbench record")
    try:
        return json.loads(text)
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
    return text if len(text) <= 30 else text[:27] + "..."


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
    for key in ("top", "not_compiled"):  # what show_tuning reads
        _optional(options, key, int, None, "options.")
    environment = _environment(_required(data, "environment", dict), "environment.")
    raw = _required(data, "results", list)
    writer = _optional(data, "gemmbench", dict, {})
    complete = _optional(data, "complete", bool, True) if schema >= 2 else True
    results = [_result(r, f"results[{i}].") for i, r in enumerate(raw)]
    record = RunRecord(command, device, options, environment, results, created, complete,
                       _optional(data, "incomplete_reason", str, None), _optional(data, "planned", int, None),
                       writer or None)
    return Loaded(path, record, schema, _check(writer.get("version"), str, "gemmbench.version", True),
                  _check(writer.get("git_commit"), str, "gemmbench.git_commit", True), complete)


# what the table headers read from a GPU's facts
_GPU_FACTS = (("name", str), ("compute_capability", str), ("sm_count", int), ("max_sm_clock_mhz", float),
              ("peak_fp32_tflops", float), ("driver_version", str), ("cuda_driver_api", str))


def _environment(env: dict, where: str) -> dict:
    gpu = _optional(env, "gpu", dict, None, where)
    if gpu is not None:
        for key, kind in _GPU_FACTS:
            _required(gpu, key, kind, f"{where}gpu.")
        _optional(gpu, "index", int, None, f"{where}gpu.")
    for i, note in enumerate(_optional(env, "notes", list, [], where)):
        _check(note, str, f"{where}notes[{i}]")
    for i, reason in enumerate(_optional(env, "throttle", list, [], where)):
        _check(reason, str, f"{where}throttle[{i}]")
    _optional(env, "sm_clock_mhz", float, None, where)
    _optional(env, "cpu", dict, None, where)
    for key, sub in _optional(env, "gpus", dict, {}, where).items():
        if not key.isdigit():
            raise _Invalid(f"{where}gpus has a key {key!r}, not a GPU index")
        _check(sub, dict, f"{where}gpus.{key}")
        if not sub.get("error"):  # a failed worker may not have told its facts
            _environment(sub, f"{where}gpus.{key}.")
    return env


def _result(r, where: str) -> KernelResult:
    if not isinstance(r, dict):
        raise _Invalid(f"{where[:-1]} should be an object, not {_describe(r)}")
    for key, kind in (("device", str), ("kernel_id", int), ("name", str), ("precision", str), ("status", str)):
        _required(r, key, kind, where)
    if r["precision"] not in PRECISIONS:
        raise _Invalid(f"{where}precision should be one of {', '.join(PRECISIONS)}, not {_describe(r['precision'])}")
    if r["status"] not in STATUSES:
        raise _Invalid(f"{where}status should be one of {', '.join(STATUSES)}, not {_describe(r['status'])}")
    shape = _required(r, "shape", dict, where)
    for dim in "MNK":
        if _required(shape, dim, int, f"{where}shape.") < 1:
            raise _Invalid(f"{where}shape.{dim} should be >= 1, not {shape[dim]}")
    _optional(r, "reason", str, None, where)
    _optional(r, "params", dict, {}, where)
    _optional(r, "params_source", str, "default", where)
    _optional(r, "threads", int, None, where)
    _optional(r, "notes", dict, {}, where)
    _optional(r, "gpu", int, None, where)
    for i, s in enumerate(_optional(r, "samples_s", list, [], where)):
        if _check(s, float, f"{where}samples_s[{i}]") <= 0:
            raise _Invalid(f"{where}samples_s[{i}] should be a positive number of seconds, not {s}")
    v = _optional(r, "verification", dict, None, where)
    if v is not None:
        _check(v.get("max_rel_error"), float, f"{where}verification.max_rel_error", optional=True)
        _required(v, "tolerance", float, f"{where}verification.")
        _required(v, "nonfinite", int, f"{where}verification.")
    if r["status"] == "pass" and not r.get("samples_s"):
        raise _Invalid(f"{where}samples_s is empty, but the result passed: a timed result keeps its samples")
    return KernelResult.from_dict({**r, "shape": {d: shape[d] for d in "MNK"}})
