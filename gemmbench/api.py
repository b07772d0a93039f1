"""Python API: run a plan from a notebook or a script, get the records back.

    >>> from gemmbench import api
    >>> record = api.run(kernels=[12, "examples/tiled_sgemm.cu"], shapes=[(1024, 1024, 1024)])
    >>> record.results[0].samples            # raw seconds per call
    >>> import pandas as pd
    >>> pd.DataFrame(api.rows(record))       # one flat dict per row

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
from .output.report import Reporter
from .records.results import RunRecord, percent_of_baseline, percent_of_peak
from .session import Session

__all__ = ["run", "rows", "RunRecord", "UserError"]


def _defaults() -> dict:
    """The options ``gemmbench compare`` starts from (one list of defaults: the CLI's)."""
    from .cli import compare
    return dict(compare.make_context("compare", [], resilient_parsing=True).params)


def _shape(value) -> Shape:
    if isinstance(value, Shape):
        return value
    if isinstance(value, int):
        return Shape(value, value, value)
    try:
        M, N, K = (int(v) for v in value)
    except (TypeError, ValueError):
        raise UserError(f"shape {value!r}: expected (M, N, K) or one size") from None
    if min(M, N, K) < 1:
        raise UserError(f"shape {value!r}: M, N and K must be >= 1")
    return Shape(M, N, K)


def run(kernels: Sequence[int | str | Path] = (0,), shapes: Iterable = ((1024, 1024, 1024),), *,
        device: str = "auto", budget: float | None = None, params: dict | None = None,
        save: bool = False, progress: bool = False, **options) -> RunRecord:
    """Verify and time ``kernels`` at every shape; return the RunRecord.

    ``kernels``: rung ids (0 = the library baseline, always included) and
    paths of kernel files (.cu on the GPU, .c with ``device="cpu"``).
    ``shapes``: (M, N, K) tuples or single sizes. ``budget``: seconds of
    samples per kernel (the CLI's ``--budget``); ``params``: overrides of the
    kernel files' parameters (``--param``). Any other option of ``gemmbench
    compare`` by its Python name: ``seed``, ``warmup``, ``min_samples``,
    ``max_samples``, ``threads``, ``flush_l2``, ``kernel_timeout``,
    ``no_tune_cache``, ``results_dir``. ``save=True`` writes the record under
    ``results_dir`` as the CLI does.
    """
    opts = _defaults()
    unknown = sorted(set(options) - set(opts))
    if unknown:
        raise UserError(f"unknown option {unknown[0]!r} (options: {', '.join(sorted(opts))})")
    ids = [k for k in kernels if isinstance(k, int) and not isinstance(k, bool)]
    files = [str(k) for k in kernels if isinstance(k, (str, Path))]
    if len(ids) + len(files) != len(kernels):
        raise UserError(f"kernels {list(kernels)!r}: give rung ids (int) and kernel file paths (str)")
    opts.update(options, device=device, budget=budget, kernel_files=files, no_save=not save,
                params=[f"{name}={value}" for name, value in (params or {}).items()],
                kernels=ids, all=False, as_json=False)
    opts["results_dir"] = Path(opts["results_dir"])
    shapes = [_shape(s) for s in shapes]
    if not shapes:
        raise UserError("no shapes given")
    session = Session(opts, Reporter(quiet=not progress))
    record = session.run("api", session.entries([0, *ids]), shapes).record
    return record


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
            "gflops": r.gflops,
            "percent_of_baseline": percent_of_baseline(r, record.results, record.device),
            "percent_of_peak": percent_of_peak(r, record.environment),
            "kernel_file": r.notes.get("kernel_file"), "kernel_sha256": r.notes.get("kernel_sha256"),
        })
    return out
