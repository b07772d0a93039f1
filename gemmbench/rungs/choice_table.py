"""Per-shape choice tables: a rung's measured best parameters at each shape
of a shape set, written by ``gemmbench tune -i N --shapes ... --table
OUT.json`` and shipped beside the rung that reads them (rung 28:
``any_shape_h200.json``). This module is the one writer and the one reader.

The file is JSON::

    {"format": "gemmbench choice table", "version": 1,
     "rung": 28, "kernel": "any shape", "gpu": "NVIDIA H200", "sm_count": 132,
     "created": "2026-11-23", "command": "gemmbench tune -i 28 --shapes ...",
     "source_digest": "<16 hex digits>",
     "choices": {"1024x1023x1024": {"params": {"BM": 64, ...}, "time_us": 66.9,
                                    "candidates": 60,
                                    "close": [{"changed": {"SPLITS": 4}, "time_us": 67.3}, ...]},
                 ...}}

``command`` is what made it (run it again on that GPU to remake it);
``source_digest`` is the rung's code as nvcc got it, comments and layout
aside (gemmbench.tuning), so a table measured on another version of the
kernel is not used for this one; per shape, ``time_us`` is the median of one call of the choice and
``candidates`` how many were verified and timed there; ``close`` (left out
when empty) the other candidates timed within CLOSE of the best, fastest
first, each as the parameters in which it differs from the choice: the
near-ties, whose order the next remake may swap, and what a rung's own
model of its choice is checked against (it need not pick the very best).

Nothing read is trusted: ``read`` takes the file through gemmbench.fsutil's
reader (a regular file, bounded size, nesting and numbers) and checks every
field's type and range; a file it cannot use is UnusableTable, one line
naming the file and the field. ``load`` turns that, and a table made for
another source, into a reason the rung can state (it then chooses without
the table), never a traceback. The parameters' meaning is the rung's to
check.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .. import fsutil
from ..backend import Shape
from ..output.text import cut
from ..validate import MAX_DIMENSION

FORMAT = "gemmbench choice table"
VERSION = 1
MAX_BYTES = 4 << 20  # a thousand shapes (a shape set's most) take about 1 MiB
CLOSE = 0.05  # a candidate this much slower than the best, or less, is kept beside it
_SHAPE = re.compile(r"([0-9]{1,10})x([0-9]{1,10})x([0-9]{1,10})")
_DIGEST = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class Close:
    """A candidate timed within CLOSE of a shape's best: the parameters in
    which it differs from the best, and its median time per call (us)."""

    changed: dict[str, int]
    time_us: float


@dataclass(frozen=True)
class Choice:
    """The best candidate at one shape: its parameters, its median time per
    call (microseconds), how many candidates were timed there, and the others
    timed within CLOSE of it."""

    params: dict[str, int]
    time_us: float
    candidates: int
    close: tuple[Close, ...] = ()

    def time_of(self, params: dict) -> float | None:
        """The measured time (us) of ``params`` here: the best's, a close one's, or None (slower than CLOSE
        allows, or not a candidate)."""
        if params == self.params:
            return self.time_us
        return next((c.time_us for c in self.close if {**self.params, **c.changed} == params), None)

    def to_dict(self) -> dict:
        out = {"params": dict(self.params), "time_us": self.time_us, "candidates": self.candidates}
        if self.close:
            out["close"] = [{"changed": dict(c.changed), "time_us": c.time_us} for c in self.close]
        return out


def choice_of(best: dict, best_us: float, timed: list[tuple[dict, float]]) -> Choice:
    """The Choice of a shape whose candidates were timed as ``timed`` ((params, us), the best among them):
    the best, with those within CLOSE of it, fastest first (those with the best's parameter names: a close
    one is written as the values it changes)."""
    close = sorted((us, i, {k: v for k, v in p.items() if best[k] != v}) for i, (p, us) in enumerate(timed)
                   if us <= best_us * (1 + CLOSE) and p != best and p.keys() == best.keys())
    return Choice(dict(best), best_us, len(timed), tuple(Close(changed, us) for us, _, changed in close))


@dataclass(frozen=True)
class ChoiceTable:
    """A rung's choices per shape, and where and how they were measured."""

    rung: int
    kernel: str
    gpu: str
    sm_count: int
    created: str  # ISO date
    command: str
    source_digest: str
    choices: dict[Shape, Choice]

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "rung": self.rung, "kernel": self.kernel, "gpu": self.gpu,
                "sm_count": self.sm_count, "created": self.created, "command": self.command,
                "source_digest": self.source_digest,
                "choices": {str(shape): c.to_dict() for shape, c in self.choices.items()}}

    def to_json(self) -> str:
        """The file's text: one line per shape, so that a remade table diffs shape by shape."""
        head = self.to_dict()
        lines = [f"  {json.dumps(key)}: {json.dumps(choice)}" for key, choice in head.pop("choices").items()]
        return json.dumps(head, indent=1)[:-2] + ',\n "choices": {\n' + ",\n".join(lines) + "\n }\n}\n"

    def choice(self, M: int, N: int, K: int) -> Choice | None:
        return self.choices.get(Shape(M, N, K))


class UnusableTable(ValueError):
    """A file that is not a choice table this gemmbench reads; one line naming the file and the field."""


def write(path, table: ChoiceTable, overwrite: bool = False) -> None:
    """The one writer (gemmbench.fsutil): a new regular file, an existing
    one replaced only with ``overwrite`` (TargetError otherwise)."""
    fsutil.write_new(path, table.to_json(), overwrite, "--table")


def read(path) -> ChoiceTable:
    """The table in the file at ``path``, every field checked (UnusableTable)."""
    try:
        data = fsutil.loads_json(fsutil.read_text(path, MAX_BYTES))
    except fsutil.UnreadableFile as exc:
        raise UnusableTable(str(exc)) from None
    except ValueError as exc:  # bad JSON, or beyond the reader's bounds
        raise UnusableTable(f"{path}: not JSON ({exc})") from None
    try:
        return _table(data)
    except _Invalid as exc:
        raise UnusableTable(f"{path}: {exc}") from None


def load(path, source_digest: str) -> tuple[ChoiceTable | None, str | None]:
    """(the table, None) when the file holds one made for the rung's source
    as it is now (``source_digest``: gemmbench.tuning.source_digest), else
    (None, why it is not used)."""
    try:
        table = read(path)
    except UnusableTable as exc:
        return None, str(exc)
    if table.source_digest != source_digest:
        return None, (f"{Path(path).name} was measured on another version of rung {table.rung}'s source (digest "
                      f"{table.source_digest}, now {source_digest}): remake it on the {table.gpu} with "
                      f"'{table.command}'")
    return table, None


@lru_cache(maxsize=None)
def shipped(path: Path, source: str) -> tuple[ChoiceTable | None, str | None]:
    """A table shipped beside a rung, read once: ``load`` against the digest
    of the rung's source (``source``, its file in cuda_src) as it is now."""
    from ..tuning import file_digest  # deferred: reading the ladder (shell completion) needs no digest
    return load(path, file_digest(source))


def measured_line(table: ChoiceTable, choice: Choice, path: Path) -> str:
    """The part of a rung's ``explain`` line that says its choice came from the table."""
    close = f"; {len(choice.close)} other{'s' * (len(choice.close) != 1)} within {CLOSE:.0%}" if choice.close else ""
    return (f"measured the fastest of {choice.candidates} choices on the {table.gpu} "
            f"({choice.time_us:.1f} us{close}; {Path(path).name})")


def usable_choice(table: ChoiceTable | None, M: int, N: int, K: int, sm_count: int, names,
                  problem) -> Choice | None:
    """The table's choice at the shape, on a GPU with the table's SM count,
    when its parameter names are the rung's (``names``) and ``problem(M, N,
    params)`` (the rung's rules) finds nothing wrong with them; else None."""
    if table is None or table.sm_count != sm_count:
        return None
    choice = table.choice(M, N, K)
    if choice is None or set(choice.params) != set(names):
        return None
    try:  # values from a file: a zero where the rules divide is a refusal, not a traceback
        return choice if problem(M, N, choice.params) is None else None
    except (ArithmeticError, LookupError, TypeError, ValueError):
        return None


# --------------------------------------------------------------------------
# checking what was read
# --------------------------------------------------------------------------

class _Invalid(ValueError):
    pass


def _describe(value) -> str:
    text = json.dumps(value)
    return type(value).__name__ + " " + cut(text, 40)


def _field(data: dict, key: str, kind, where: str = ""):
    if key not in data:
        raise _Invalid(f"missing field {where}{key!r}")
    value = data[key]
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok:
        raise _Invalid(f"{where}{key} should be {kind.__name__}, not {_describe(value)}")
    return value


def _positive(value, where: str):
    if value <= 0:
        raise _Invalid(f"{where} should be > 0, not {value}")
    return value


def _table(data) -> ChoiceTable:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _Invalid(f"not a {FORMAT} (no \"format\": \"{FORMAT}\")")
    version = data.get("version")
    if version != VERSION or isinstance(version, bool):
        raise _Invalid(f"version {_describe(version)} is not one this gemmbench reads ({VERSION})")
    digest = _field(data, "source_digest", str)
    if not _DIGEST.fullmatch(digest):
        raise _Invalid(f"source_digest should be 16 hex digits, not {_describe(digest)}")
    choices = {}
    for key, entry in _field(data, "choices", dict).items():
        choices[_shape(key)] = _choice(entry, f"choices[{key!r}].")
    return ChoiceTable(_field(data, "rung", int), _field(data, "kernel", str), _field(data, "gpu", str),
                       _positive(_field(data, "sm_count", int), "sm_count"), _field(data, "created", str),
                       _field(data, "command", str), digest, choices)


def _shape(key: str) -> Shape:
    match = _SHAPE.fullmatch(key)
    dims = [int(d) for d in match.groups()] if match else []
    if not dims or not all(1 <= d <= MAX_DIMENSION for d in dims):
        raise _Invalid(f"choices: {_describe(key)} is not a shape MxNxK (each 1 to {MAX_DIMENSION})")
    return Shape(*dims)


def _params(params: dict, where: str) -> dict:
    for name, value in params.items():
        if type(value) is not int or value < 0:
            raise _Invalid(f"{where}.{name} should be an integer >= 0, not {_describe(value)}")
    return dict(params)


def _choice(entry, where: str) -> Choice:
    if not isinstance(entry, dict):
        raise _Invalid(f"{where[:-1]} should be an object, not {_describe(entry)}")
    params = _params(_field(entry, "params", dict, where), f"{where}params")
    time_us = _positive(_field(entry, "time_us", float, where), f"{where}time_us")
    candidates = _positive(_field(entry, "candidates", int, where), f"{where}candidates")
    close = _field(entry, "close", list, where) if "close" in entry else []
    if len(close) >= candidates:
        raise _Invalid(f"{where}close holds {len(close)} candidates of {candidates}")
    kept = []
    for i, other in enumerate(close):
        at = f"{where}close[{i}]"
        if not isinstance(other, dict):
            raise _Invalid(f"{at} should be an object, not {_describe(other)}")
        changed = _params(_field(other, "changed", dict, at + "."), f"{at}.changed")
        if not changed or not set(changed) <= set(params):
            raise _Invalid(f"{at}.changed should name some of the choice's parameters, not {_describe(changed)}")
        us = _field(other, "time_us", float, at + ".")
        if not time_us <= us <= time_us * (1 + CLOSE) + 0.01:  # 0.01: both rounded to hundredths
            raise _Invalid(f"{at}.time_us should be within {CLOSE:.0%} above the choice's {time_us}, not {us}")
        kept.append(Close(changed, us))
    return Choice(params, time_us, candidates, tuple(kept))
