"""Python API: run a plan from a notebook or a script, get the records back.

    >>> from gemmbench import api
    >>> record = api.run(kernels=[12, "examples/tiled_sgemm.cu"], shapes=[(1024, 1024, 1024)])
    >>> record = api.run(kernels=[0, 17], shapes="benchmarks/shapes/odd.csv")  # a shape file
    >>> record.results[0].samples            # raw seconds per call
    >>> import pandas as pd
    >>> pd.DataFrame(api.rows(record))       # one flat dict per row
    >>> record = api.tune(28, "benchmarks/shapes/odd.csv", table="odd.json")  # gemmbench tune --shapes
    >>> record.best_by_shape(28)             # the fastest verified candidate per shape

The same Session, verification and timing as the command line (``run`` is
``gemmbench compare`` without the printing): the library baselines come
first, a failing kernel is a row with status "fail", bad input raises
``gemmbench.errors.UserError``. A kernel file runs in its own worker process,
as on the command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

from .backend import Shape
from .errors import UserError
from .execute.recording import record_run
from .options import NamedShape, RunOptions
from .output.report import Reporter
from .records.results import RunRecord, percent_of_baseline, percent_of_peak
from .shapeset import ShapeSet, read_shapes

__all__ = ["run", "tune", "rows", "RunOptions", "RunRecord", "UserError"]

# the RunOptions fields ``run`` takes by name (the rest it sets itself, or they are the CLI's business)
_OPTIONS = ("seed", "warmup", "min_samples", "max_samples", "max_noise", "min_time", "noise_timeout", "rounds",
            "threads", "flush_l2", "kernel_timeout", "no_tune_cache", "results_dir", "precisions", "gpu", "verbose")


def _shape(value) -> Shape | NamedShape:
    if isinstance(value, (Shape, NamedShape)):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Shape(value, value, value)
    try:
        M, N, K = (int(v) for v in value)
    except (TypeError, ValueError):
        raise UserError(f"shape {value!r}: expected (M, N, K), one size or a shape file's path") from None
    if min(M, N, K) < 1:
        raise UserError(f"shape {value!r}: M, N and K must be >= 1")
    return Shape(M, N, K)


def _shapes(shapes) -> tuple[list, ShapeSet]:
    """The shapes ``run`` was given, in order: the paths of shape files and
    folders read together as ``sizes --shapes`` reads them (their shapes
    where the first path is), the rest as shapes."""
    given = [shapes] if isinstance(shapes, (str, Path)) else list(shapes)
    is_path = [isinstance(s, (str, Path)) for s in given]
    shape_set = read_shapes(s for s, path in zip(given, is_path) if path) if any(is_path) else ShapeSet(())
    out = []
    for i, (value, path) in enumerate(zip(given, is_path)):
        if not path:
            out.append(_shape(value))
        elif i == is_path.index(True):
            out.extend(shape_set.shapes)
    return out, shape_set


def run(kernels: Sequence[int | str | Path] = (0,), shapes: Iterable = ((1024, 1024, 1024),), *,
        device: str = "auto", budget: float | None = None, params: dict | None = None,
        save: bool = False, progress: bool = False, resume: str | Path | None = None, **options) -> RunRecord:
    """Verify and time ``kernels`` at every shape; return the RunRecord.

    ``kernels``: rung ids (0 = the library baseline, always included) and
    paths of kernel files (.cu on the GPU, .c with ``device="cpu"``).
    ``shapes``: (M, N, K) tuples, single sizes, and paths of shape files or
    folders (read as ``gemmbench sizes --shapes`` reads them: their names
    and groups are kept in the record), in order. ``budget``: seconds of
    samples per kernel (the CLI's ``--budget``); ``params``: overrides of the
    kernel files' parameters (``--param``). Other options of ``gemmbench
    compare`` by their RunOptions names: ``seed``, ``warmup``,
    ``min_samples``, ``max_samples``, ``max_noise`` (percent: 0.5 stops a
    kernel once its median is known within 0.5%, instead of after ``budget``
    seconds), ``min_time``, ``noise_timeout``, ``rounds``, ``threads``, ``flush_l2``,
    ``kernel_timeout``, ``no_tune_cache``, ``results_dir``, ``precisions``,
    ``gpu``. ``save=True`` writes the record under ``results_dir`` as the CLI does. ``resume``: an
    earlier record of this function's or of ``gemmbench sizes`` (``sizes --resume``): the shapes it
    finished are carried over, the rest run.
    """
    opts, reporter = _options("api", kernels, shapes, options, device=device, budget=budget, params=params,
                              save=save, progress=progress, resume=None if resume is None else Path(resume))
    from .commands import plan_benchmark  # deferred: the commands module pulls in the CLI's printing
    planned = plan_benchmark(opts, reporter)
    return record_run(planned.plan, planned.devices, planned.saved, None if opts.no_save else opts.results_dir,
                      reporter, carried=planned.carried).record


def tune(kernel: int | str | Path, shapes: Iterable = ((4096, 4096, 4096),), *, limit: int | None = None,
         table: str | Path | None = None, overwrite: bool = False, resume: str | Path | None = None,
         budget: float | None = None,
         params: dict | None = None, save: bool = False, progress: bool = False, **options) -> RunRecord:
    """``gemmbench tune`` on the GPU: verify and time ``kernel``'s candidates
    (a rung id, or a kernel file with a search space) at every shape, beside
    cuBLAS; return the RunRecord (``record.best_by_shape(id)``: the fastest
    verified candidate per shape). As on the command line, the best go into
    the tuning cache unless ``no_tune_cache=True`` (a run that did not finish
    stores only the shapes where every candidate ran), and with ``table`` the
    best of each shape is written as a choice table (an existing file only
    with ``overwrite``). ``resume``: an earlier tune's record (``tune
    --resume``): its finished shapes are carried over, the rest run.
    ``limit``: candidates a shape; other options as ``run``'s."""
    opts, reporter = _options("tune", [kernel], shapes, options, budget=budget, params=params, save=save,
                              progress=progress, limit=limit, overwrite=overwrite,
                              table=None if table is None else Path(table),
                              resume=None if resume is None else Path(resume))
    from .commands import plan_tune  # deferred: the commands module pulls in the CLI's printing
    call = f"gemmbench.api.tune({kernel!r}, {shapes!r}, table={str(table)!r}" + ", overwrite=True" * overwrite + ")"
    planned = plan_tune(opts, reporter, call)  # the table records the call that made it
    outcome = record_run(planned.plan, planned.devices, planned.saved, None if opts.no_save else opts.results_dir,
                         reporter, carried=planned.carried)
    planned.keep_the_best(outcome.record)
    return outcome.record


def _options(command: str, kernels, shapes, options: dict, *, params, save, progress, **fixed):
    """RunOptions from ``run``'s or ``tune``'s arguments, and a reporter (quiet unless ``progress``)."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise UserError(f"unknown option {unknown[0]!r} (options: {', '.join(sorted(_OPTIONS))})")
    ids = [k for k in kernels if isinstance(k, int) and not isinstance(k, bool)]
    files = [str(k) for k in kernels if isinstance(k, (str, Path))]
    if len(ids) + len(files) != len(kernels):
        raise UserError(f"kernels {list(kernels)!r}: give rung ids (int) and kernel file paths (str)")
    shapes, shape_set = _shapes(shapes)
    if not shapes:
        raise UserError("no shapes given")
    opts = RunOptions(command=command, kernels=tuple(ids) or ((0,) if command == "api" else ()),
                      kernel_files=tuple(files), shapes=tuple(shapes), no_save=not save,
                      params=tuple(f"{name}={value}" for name, value in (params or {}).items()), **fixed, **options)
    reporter = Reporter(quiet=not progress)
    for note in shape_set.notes:
        reporter.note(note)
    return opts, reporter


def rows(record: RunRecord) -> list[dict]:
    """One flat dict per result (pandas: ``pd.DataFrame(rows(record))``):
    what ran, where, how it checked and how fast; raw samples stay on
    ``record.results[i].samples``."""
    out = []
    for r in record.results:
        s, v = r.stats, r.verification
        out.append({
            "device": r.device, "kernel_id": r.kernel_id, "name": r.name, "precision": r.precision,
            "M": r.shape.M, "N": r.shape.N, "K": r.shape.K, "status": r.status, "reason": r.reason,
            "params": " ".join(f"{k}={v}" for k, v in r.params.items()), "params_source": r.params_source,
            "threads": r.threads,
            "max_rel_error": v.max_rel_error if v else None, "tolerance": v.tolerance if v else None,
            "samples": s.n if s else 0, "median_s": s.median if s else None,
            "q1_s": s.q1 if s else None, "q3_s": s.q3 if s else None,
            "min_s": s.min if s else None, "max_s": s.max if s else None,
            "gflops": r.gflops, "stopped": r.notes.get("stopped"), "median_noise": r.notes.get("median_noise"),
            "percent_of_baseline": percent_of_baseline(r, record.results, record.device),
            "percent_of_peak": percent_of_peak(r, record.environment),
            "kernel_file": r.notes.get("kernel_file"), "kernel_sha256": r.notes.get("kernel_sha256"),
        })
    return out
