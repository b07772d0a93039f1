"""``tune --resume RECORD.json``: carry over the shapes an earlier tune finished.

A remake of a choice table over a shape set can outlast one sitting: a job's
time limit, a signal, a machine taken back. The record of that run, finished
or not, holds every candidate it timed. ``carry`` takes from it the shapes
where it timed every candidate this run would try (and the library row), once
``check`` has found that it measured the same thing: a tune of the same
kernel whose source digests the same (gemmbench.tuning.source_digest), on a
GPU of the same name and SM count, sampled the same way. Those rows go into
this run's record as they were; the plan runs only the other shapes. So the
record of each run holds every shape timed so far, the next run resumes from
it alone, and the run that finishes writes the table from all of them.

A shape the earlier run left part-way (some of its candidates, or with
``--rounds`` a row short of its visits) is run again whole. A candidate that
did not compile there (the record's ``not_built``: the same source, so it
would not now) has no row and needs none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .backend import Shape
from .errors import UserError
from .output.text import cut
from .records.results import KernelResult
from .records.store import Loaded, RecordError, load
from .records.writer import JOURNAL_SUFFIX, recover_orphans
from .spec import params_key

# The saved options (RunOptions.saved) that decide what a tune measures and how:
# a record made with other values timed something else, or timed it otherwise.
MEASURING = ("kernels", "kernel_files", "precisions", "params", "seed", "flush_l2", "warmup", "min_samples",
             "max_samples", "budget", "max_noise", "min_time", "noise_timeout", "rounds")
DIGEST_KEY = "source_digest"  # where a tune's record keeps its kernel's source digest (in its options)
NOT_BUILT_KEY = "not_built"  # and the parameter sets that did not compile


@dataclass(frozen=True)
class Carried:
    """What a resumed tune takes from the earlier record: its rows at the
    shapes it finished (library rows too), those shapes, and the parameter
    sets that did not compile there (params_key)."""

    rows: tuple[KernelResult, ...] = ()
    shapes: frozenset[Shape] = frozenset()
    not_built: frozenset[tuple] = frozenset()


def read(path: Path) -> Loaded:
    """The record at ``path`` (RecordError, one line, if it is not one). A run
    that was killed left its rows in a journal beside it, and its snapshot may
    hold fewer: that journal is recovered into the record first, as the next
    run in that folder would (gemmbench.records.writer)."""
    path = Path(path)
    if (path.parent / f".{path.stem}{JOURNAL_SUFFIX}").is_file():
        recover_orphans(path.parent)  # a journal a live run holds is left alone
    try:
        return load(path)
    except RecordError as exc:
        raise RecordError(f"--resume {exc}") from None


def _flag(name: str) -> str:
    return {"kernels": "-i", "kernel_files": "--kernel-file", "precisions": "--precision",
            "params": "--param"}.get(name, "--" + name.replace("_", "-"))


def check(loaded: Loaded, saved: dict, gpu: dict) -> None:
    """UserError, one line naming the record and the value, unless ``loaded``
    is a GPU tune that measured what this run measures: ``saved``, this run's
    options as its record keeps them (with its kernel's source digest);
    ``gpu``, this run's GPU's name and sm_count."""
    record, where = loaded.record, f"--resume {loaded.path}"
    if record.command != "tune" or record.device != "gpu":
        raise UserError(f"{where} is a record of {record.device} {record.command}: give the record of an "
                        "earlier tune of this kernel")
    for name in MEASURING:
        theirs, ours = record.options.get(name), saved.get(name)
        if theirs != ours:
            raise UserError(f"{where} was measured with {_flag(name)} {_shown(theirs)}, this run with "
                            f"{_shown(ours)}: give the same options to resume it")
    digest = record.options.get(DIGEST_KEY)
    if digest is None:
        raise UserError(f"{where} does not record its kernel's source digest (a gemmbench before --resume "
                        "made it): its rows cannot be tied to this kernel's code")
    if digest != saved[DIGEST_KEY]:
        raise UserError(f"{where} timed another version of the kernel (source digest {digest}, now "
                        f"{saved[DIGEST_KEY]}): its times are not this code's")
    theirs = record.environment.get("gpu") or {}
    for key in ("name", "sm_count"):
        if theirs.get(key) != gpu[key]:
            raise UserError(f"{where} ran on a GPU with {key} {_shown(theirs.get(key))}, this one has "
                            f"{_shown(gpu[key])}: resume it on the same kind of GPU")


def _shown(value, most: int = 60) -> str:
    """A value of either run for the error line: lists as the command line gives them, never longer than ``most``
    (a record is untrusted input)."""
    text = "none" if value is None else (",".join(map(str, value)) or "none") if isinstance(value, list) else str(value)
    return cut(text, most)


def carry(loaded: Loaded, kernel_id: int, library: tuple[str, ...], tried: dict[Shape, list[dict]]) -> Carried:
    """The rows of ``loaded`` (checked) at each shape of ``tried`` where it
    has a row of kernel ``kernel_id`` for every candidate tried there that
    compiled there, whole, and a library row of each precision in ``library``."""
    rounds = loaded.record.options.get("rounds") or 1
    not_built = frozenset(params_key(p) for p in loaded.record.options.get(NOT_BUILT_KEY) or ())
    at: dict[Shape, list[KernelResult]] = {}
    for r in loaded.record.results:
        if r.shape in tried:
            at.setdefault(r.shape, []).append(r)
    rows, shapes = [], set()
    for shape, candidates in tried.items():
        wanted = {params_key(p) for p in candidates} - not_built
        ours = [r for r in at.get(shape, ()) if r.kernel_id == kernel_id and params_key(r.params) in wanted
                and _whole(r, rounds)]
        libs = [r for r in at.get(shape, ()) if r.kernel_id == 0 and r.precision in library and _whole(r, rounds)]
        if {params_key(r.params) for r in ours} == wanted and {r.precision for r in libs} == set(library):
            rows += libs + ours
            shapes.add(shape)
    return Carried(tuple(rows), frozenset(shapes), not_built)


def _whole(row: KernelResult, rounds: int) -> bool:
    """Whether a row had every visit of --rounds (a run stopped mid-shape keeps the visits every row had);
    a row that failed or was skipped is as whole as it gets."""
    return rounds == 1 or row.status != "pass" or len(row.notes.get("rounds") or ()) >= rounds


def note(carried: Carried, path: Path, shapes: int) -> str:
    """What --resume took, in one line."""
    if not carried.shapes:
        return f"--resume {path}: no shape of this run had every candidate timed there; running all {shapes}"
    left = shapes - len(carried.shapes)
    return (f"--resume {path}: carried {len(carried.rows)} rows at the {len(carried.shapes)} shapes it finished; "
            + (f"running the other {left}" if left else "nothing left to run"))
