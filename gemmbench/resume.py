"""``--resume RECORD.json``: carry over the shapes an earlier run finished.

A remake of a choice table over a shape set, or a sweep over one, can
outlast one sitting: a job's time limit, a signal, a machine taken back.
The record of that run, finished or not, holds every row it timed. Once
``check`` (tune) or ``check_sweep`` (sizes) has found that it measured the
same thing, ``carry`` and ``carry_sweep`` take from it the shapes where it
timed every row this run plans there; those rows go into this run's record
as they were, and the plan runs only the other shapes. So the record of each
run holds every shape timed so far, the next run resumes from it alone, and
the run that finishes holds them all.

*The same thing*, for a tune: a tune of the same kernel whose source digests
the same (gemmbench.tuning.source_digest), on a GPU of the same name and SM
count, sampled the same way; its candidates at a shape are the rows. For
sizes: the same sampling, the same kernel files and ``--param`` values,
every kernel's source as it is now (``SOURCES_KEY``), the same GPU model,
cuBLAS and nvcc (or CPU, compiler and BLAS), and at each shape a row of
every kernel this run plans there, with the parameters it would run with now
(the shipped choice tables and the tuning cache may have changed since).

A shape the earlier run left part-way (some of its rows, or with
``--rounds`` a row short of its visits) is run again whole, so that the
rows of one shape are always timed together. A tune's candidate that did
not compile there (the record's ``not_built``: the same source, so it would
not now) has no row and needs none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .backend import Shape
from .errors import UserError
from .output.text import cut
from .plan import Row
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
    _same_options(loaded, saved, MEASURING)
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


def _same_options(loaded: Loaded, saved: dict, names: tuple[str, ...]) -> None:
    for name in names:
        theirs, ours = loaded.record.options.get(name), saved.get(name)
        if theirs != ours:
            raise UserError(f"--resume {loaded.path} was measured with {_flag(name)} {_shown(theirs)}, this run "
                            f"with {_shown(ours)}: give the same options to resume it")


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


def note(carried: Carried, path: Path, shapes: int, rows: str = "every candidate") -> str:
    """What --resume took, in one line (``rows``: what a shape needs timed to carry: a tune's candidates)."""
    if not carried.shapes:
        return f"--resume {path}: no shape of this run had {rows} timed there; running all {shapes}"
    left = shapes - len(carried.shapes)
    return (f"--resume {path}: carried {len(carried.rows)} rows at the {len(carried.shapes)} shapes it finished; "
            + (f"running the other {left}" if left else "nothing left to run"))


# -- sizes ------------------------------------------------------------------------------------------

SOURCES_KEY = "source_digests"  # where a sweep's record keeps each kernel's source digest (in its options)
SWEEPS = ("sizes", "api")  # the commands whose records a sweep resumes from (the API's run measures as sizes does)
# The saved options that decide how a sweep's rows are measured (which kernels run is decided shape by
# shape: a shape carries where the record has every row this run plans there).
SWEEP_MEASURING = ("kernel_files", "params", "seed", "flush_l2", "warmup", "min_samples", "max_samples", "budget",
                   "max_noise", "min_time", "noise_timeout", "rounds")


def machine(environment: dict) -> dict:
    """What a sweep's rows depend on beside their code and options, from a record's environment: the GPU
    model, cuBLAS and nvcc; the CPU, its cores, C compiler and BLAS."""
    gpu, cpu = environment.get("gpu"), environment.get("cpu")
    out: dict = {}
    if isinstance(gpu, dict):
        out.update({"GPU": gpu.get("name"), "SM count": gpu.get("sm_count"), "cuBLAS": environment.get("cublas"),
                    "nvcc": environment.get("nvcc")})
    if isinstance(cpu, dict):
        blas = cpu.get("blas") if isinstance(cpu.get("blas"), list) else []
        out.update({"CPU": cpu.get("cpu"), "core count": cpu.get("cores"), "C compiler": cpu.get("compiler"),
                    "BLAS": ", ".join(f"{b.get('internal_api')} {b.get('version')}" for b in blas
                                      if isinstance(b, dict)) or None})
    return out


def check_sweep(loaded: Loaded, saved: dict, device: str, environment: dict) -> None:
    """UserError, one line naming the record and the value, unless ``loaded``
    is a sweep (sizes) on this ``device`` that measured as this run does:
    ``saved``, this run's options as its record keeps them (with each of its
    kernels' source digests, ``SOURCES_KEY``); ``environment``, this run's
    machine as a record keeps it (``machine`` picks what must agree)."""
    record, where = loaded.record, f"--resume {loaded.path}"
    if record.command not in SWEEPS or record.device != device:
        raise UserError(f"{where} is a record of {record.device} {record.command}: give the record of an earlier "
                        f"sizes run on the {device.upper()}")
    _same_options(loaded, saved, SWEEP_MEASURING)
    theirs = record.options.get(SOURCES_KEY)
    if not isinstance(theirs, dict):
        raise UserError(f"{where} does not record its kernels' source digests (a gemmbench before sizes --resume "
                        "made it): its rows cannot be tied to this code")
    for kernel, digest in saved[SOURCES_KEY].items():
        if kernel in theirs and theirs[kernel] != digest:
            raise UserError(f"{where} timed another version of {kernel} (source digest "
                            f"{_shown(theirs[kernel])}, now {digest}): its times are not this code's")
    then = machine(record.environment)
    for fact, value in machine(environment).items():
        if then.get(fact) != value:
            raise UserError(f"{where} ran with {fact} {_shown(then.get(fact))}, this run has {_shown(value)}: "
                            "resume it on the same kind of machine, with the same libraries and compiler")


def carry_sweep(loaded: Loaded, rows: tuple[Row, ...], shapes: tuple[Shape, ...],
                expected: Callable[[Row, Shape], dict]) -> Carried:
    """The rows of ``loaded`` (checked) at each of ``shapes`` where it has, for
    every one of ``rows`` that runs there, a whole row of that kernel, precision
    and thread count with the parameters ``expected(row, shape)`` says this run
    would use (a row skipped before it chose any is as good). In the plan's order."""
    rounds = loaded.record.options.get("rounds") or 1
    at: dict[tuple, list[KernelResult]] = {}
    for r in loaded.record.results:
        at.setdefault((r.shape, r.device, r.kernel_id, r.precision, r.threads), []).append(r)
    kept, done = [], set()
    for shape in shapes:
        found = []
        for row in (r for r in rows if r.runs_at(shape)):
            want = expected(row, shape)
            match = next((r for r in at.get((shape, row.device, row.kernel_id, row.precision, row.threads), ())
                          if _whole(r, rounds) and (r.params == want or (r.status == "skip" and not r.params))), None)
            if match is None:
                break
            found.append(match)
        else:
            kept += found
            done.add(shape)
    return Carried(tuple(kept), frozenset(done))
