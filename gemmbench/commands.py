"""The bodies of the benchmark commands: options -> plan -> run -> report.

``benchmark`` is what ``run``, ``compare`` and ``sizes`` do; ``tune`` adds
the search of a kernel's parameters around it. Both return the exit code:
0 ok, 1 a kernel failed (its row says FAIL) or a baseline diff found a
slowdown, 128 + the signal's number when a signal stopped the run. Bad
input or environment raises UserError (one line, exit 2) before the first
kernel runs. No click here: the command line (gemmbench.cli) and the
Python API (gemmbench.api) both come through these with a RunOptions.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from dataclasses import dataclass
from typing import Callable

from . import fsutil, resume, validate
from .errors import UserError
from .execute.devices import Devices, verbose_log
from .execute.interrupts import Interrupted, Interrupts
from .execute.recording import Outcome, record_run
from .options import RunOptions
from .output.plot import plot_sweep, require_matplotlib
from .output.report import Reporter
from .output.runs import show_diff, show_record
from .plan import Plan, build_plan
from .records.diff import NothingCompared, diff_records
from .records.results import to_json
from .records.store import current_writer, load, record_label
from .rungs import choice_table, ladder
from .spec import params_key
from .tuning import TuningCache, candidates_at, compile_candidates, one_launch_path, shape_class, source_digest


def reporter_for(options: RunOptions) -> Reporter:
    """Where output goes: with --json, stdout holds the JSON alone and notes
    stay off stderr too, unless -v asks for the log; without it, rows show
    as they land where a terminal can show them (Reporter.progress)."""
    return Reporter(options.fmt, quiet=options.as_json and not options.verbose, live_rows=not options.as_json)


def _check_plot(options: RunOptions) -> None:
    if options.plot is None:
        return
    require_matplotlib()
    validate.check_plot_path(options.plot, options.overwrite)


def benchmark(options: RunOptions, interrupts: Interrupts | None = None, reporter: Reporter | None = None) -> int:
    """run, compare and sizes: plan, measure, print, save; the exit code."""
    reporter = reporter or reporter_for(options)
    _check_plot(options)
    baseline = load(options.baseline) if options.baseline else None  # validated before anything runs
    planned = plan_benchmark(options, reporter)
    return finish(options, planned.plan, planned.devices, reporter, interrupts, baseline, saved=planned.saved,
                  carried=planned.carried)


@dataclass(frozen=True)
class Planned:
    """Everything a command decided before running: the plan (without the
    shapes --resume carried), the devices, the options as the record keeps
    them, the rows carried from --resume's record, and (tune) what to do with
    the finished record: the table and the tuning cache."""

    plan: Plan
    devices: Devices
    saved: dict
    carried: tuple = ()
    keep_the_best: Callable = lambda record: None


def plan_benchmark(options: RunOptions, reporter: Reporter) -> Planned:
    """run, compare and sizes before running (Planned). A sweep's record (sizes,
    and the Python API's run) keeps each kernel's source digest, so that a
    later sizes --resume can tie its rows to the code; with --resume, the
    shapes the earlier record finished are carried over (gemmbench.resume)."""
    earlier = resume.read(options.resume) if options.resume is not None else None  # before anything is compiled
    plan = build_plan(options)
    devices = Devices(plan, verbose_log(reporter.note) if options.verbose else None)
    saved = options.saved()
    if options.command not in resume.SWEEPS:
        return Planned(plan, devices, saved)
    saved[resume.SOURCES_KEY] = devices.source_digests()
    if earlier is None:
        return Planned(plan, devices, saved)
    resume.check_sweep(earlier, saved, plan.device, devices.environment())
    carried = resume.carry_sweep(earlier, plan.rows, plan.shapes, devices.expected_params)
    reporter.note(resume.note(carried, options.resume, len(plan.shapes), "a row of every kernel"))
    return Planned(plan.without_shapes(carried.shapes), devices, saved, carried.rows)


def finish(options: RunOptions, plan: Plan, devices: Devices, reporter: Reporter, interrupts: Interrupts | None,
           baseline=None, after_show=None, saved: dict | None = None, carried=()) -> int:
    """Run the plan through the one recording path, then print what ran (and
    its diff against ``baseline``, a loaded record); the exit code. ``saved``:
    the options as the record keeps them (default: ``options.saved()``);
    ``carried``: rows the record starts with (--resume)."""
    saved = dict(options.saved() if saved is None else saved)
    if plan.not_compiled:
        saved["not_compiled"] = plan.not_compiled  # 'show' prints the same tuning summary
    results_dir = None if options.no_save else options.results_dir
    outcome = record_run(plan, devices, saved, results_dir, reporter, interrupts, carried=carried)
    record, code = outcome.record, outcome.code
    diff = nothing = None
    if baseline is not None and record.results:
        try:
            diff = diff_records(baseline.record, record, versions=(baseline.writer, current_writer()))
            code = max(code, diff.exit_code)
        except NothingCompared as exc:  # said after this run's own table and where it was saved
            nothing = UserError(f"--baseline {baseline.path}: {exc}")
    if record.results or outcome.stop is None:
        if options.as_json:
            data = json.loads(to_json(record))
            if diff is not None:
                data["baseline_diff"] = {"baseline": str(baseline.path), **diff.to_dict()}
            sys.stdout.write(json.dumps(data, indent=2) + "\n")
        else:
            show_record(reporter, record)
            if diff is not None:
                show_diff(reporter, diff, f"{baseline.path} ({baseline.label})", f"this run ({record_label(record)})")
        if options.plot is not None and record.results:
            plot_sweep(record, options.plot, options.overwrite)
            reporter.note(f"plot written to {options.plot}")
        if after_show is not None:
            after_show(record)
    return _closing(outcome, reporter, devices, code, nothing)


def _closing(outcome: Outcome, reporter: Reporter, devices: Devices, code: int,
             nothing: UserError | None = None) -> int:
    record = outcome.record
    if outcome.save_error:
        raise UserError(str(outcome.save_error))
    if outcome.path:
        reason = record.incomplete_reason
        reporter.note(f"saved {outcome.path}" + (f" (incomplete: {reason})" if reason else ""))
    for note in devices.tuning_notes():
        reporter.note(note)  # tuning cache entries that were ignored, and why
    if isinstance(outcome.stop, Interrupted):
        reporter.alert(f"gemmbench: interrupted by {outcome.stop.name}"
                       + ("" if record.results else " before the first kernel finished: nothing saved"))
        return outcome.stop.exit_code
    if nothing is not None:
        raise nothing
    return code


# --------------------------------------------------------------------------
# tune
# --------------------------------------------------------------------------

def tune(options: RunOptions, interrupts: Interrupts | None = None, reporter: Reporter | None = None,
         command_line: str | None = None) -> int:
    """Search one kernel's parameters at one shape, or at every shape of a
    shape set (--shapes), in one record: each candidate verified and timed at
    the shape it is proposed for. The best goes into the tuning cache (the
    best of the largest shape of each shape class; none with --no-tune-cache)
    and, with --table, the best of every shape into a choice table that
    records ``command_line``."""
    reporter = reporter or reporter_for(options)
    planned = plan_tune(options, reporter, command_line)
    return finish(options, planned.plan, planned.devices, reporter, interrupts, after_show=planned.keep_the_best,
                  saved=planned.saved, carried=planned.carried)


def plan_tune(options: RunOptions, reporter: Reporter, command_line: str | None = None) -> Planned:
    """Everything ``tune`` does before running (Planned). The Python API runs the plan itself."""
    if options.table is not None:
        fsutil.check_target(options.table, options.overwrite, "--table")  # refused before anything runs
    earlier = resume.read(options.resume) if options.resume is not None else None  # before anything is compiled
    plan = build_plan(options)
    devices = Devices(plan, verbose_log(reporter.note) if options.verbose else None)
    gpu = devices.gpu
    row = plan.tuned_row
    spec = devices.user_kernels()[row.kernel_id].spec if row.kernel_file else \
        next(s for s in ladder("gpu") if s.id == row.kernel_id and s.precision == row.precision)
    run_spec = spec.for_device(gpu.info.compute_capability)
    if row.kernel_file and not spec.search_space:
        raise UserError(f"{row.kernel_file} has no search space: add a 'search:' line to its header")
    if not run_spec.search_space and run_spec.shape_candidates is None:
        tunable = ", ".join(str(s.id) for s in ladder("gpu") if s.search_space or s.shape_candidates)
        raise UserError(f"rung {spec.id} has no tunable parameters (tunable rungs: {tunable})")
    devices.check(plan.shapes, None)  # before nvcc fills the cache with candidates
    cache = None if options.no_tune_cache else TuningCache()
    if cache is not None:
        cache.check_writable()
    saved = {**options.saved(), resume.DIGEST_KEY: source_digest(run_spec)}
    if earlier is not None:
        resume.check(earlier, saved, {"name": gpu.info.name, "sm_count": gpu.info.sm_count})
    found, valid = candidates_at(run_spec, plan.shapes, gpu.info.sm_count, options.limit, options.seed)
    reporter.note(_candidates_note(run_spec, found, valid))
    carried = resume.Carried()  # nothing, without --resume
    if earlier is not None:
        library = tuple(r.precision for r in plan.rows if r.is_library)
        carried = resume.carry(earlier, spec.id, library, found)
        reporter.note(resume.note(carried, options.resume, len(found)))
    to_run = {shape: tried for shape, tried in found.items() if shape not in carried.shapes}
    distinct = list({params_key(p): p for tried in to_run.values() for p in tried}.values())
    built = {params_key(p) for p in _compile_candidates(gpu, run_spec, distinct, options.jobs, reporter)}
    kept = {shape: [p for p in tried if params_key(p) not in carried.not_built] if shape in carried.shapes
            else [p for p in tried if params_key(p) in built] for shape, tried in found.items()}
    not_built = (carried.not_built - built) | {params_key(p) for p in distinct if params_key(p) not in built}
    if not_built:  # so that a run resumed from this record knows they have no rows
        saved[resume.NOT_BUILT_KEY] = [dict(key) for key in sorted(not_built)]
    plan = plan.without_shapes(carried.shapes).with_candidates(
        kept, sum(map(len, to_run.values())) - sum(len(kept[shape]) for shape in to_run))

    def keep_the_best(record):
        best = record.best_by_shape(spec.id)
        if not best:
            reporter.note("no candidate passed verification: nothing stored")
            return
        if options.table is not None:
            _write_table(options, record, spec, run_spec, gpu.info, best, command_line, reporter)
        if cache is not None:
            whole = _fully_tried(record, spec.id, best, kept, reporter)
            if whole:
                _store_best(cache, gpu.info.name, run_spec, whole, {s: len(p) for s, p in kept.items()}, reporter)
        else:
            reporter.note("--no-tune-cache: nothing stored in the tuning cache")

    return Planned(plan, devices, saved, carried.rows, keep_the_best)


def _shape_count(shapes: list, found: dict) -> str:
    """``shapes`` (not empty) of the run's ``found``: '1024x1024x1024' where it is the run's one shape, else 'each of
    N shapes' (or 'N of its M shapes')."""
    if len(found) == 1:
        return str(shapes[0])
    return f"each of {len(shapes)} shapes" if len(shapes) == len(found) else f"{len(shapes)} of its {len(found)} shapes"


def _candidates_note(spec, found: dict, valid: dict) -> str:
    """What tune is about to try, in one line."""
    if spec.shape_candidates is None:
        gemv = [shape for shape, t in found.items() if len(t) == 1 and one_launch_path(t[0])]
        tiles = [shape for shape in found if shape not in gemv]
        parts = [f"{valid[tiles[0]]} valid configurations; trying {len(found[tiles[0]])} at "
                 f"{_shape_count(tiles, found)}"] if tiles else []
        if gemv:
            parts.append(f"only its GEMV path (M or N is 1; no tile to choose) at {_shape_count(gemv, found)}")
        return f"{spec.name}: " + "; ".join(parts)
    counts = sorted(set(valid.values()))
    many = str(counts[0]) if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    return (f"{spec.name}: {many} candidates of its own at {_shape_count(list(found), found)}; trying "
            f"{sum(map(len, found.values()))}" + " in all" * (len(found) > 1))


def _write_table(options: RunOptions, record, spec, run_spec, gpu_info, best: dict, command_line: str | None,
                 reporter: Reporter) -> None:
    """--table: the best of each shape as a choice table (gemmbench.rungs.choice_table), from a whole run only."""
    if not record.complete:
        reporter.note(f"the run did not finish: {options.table} not written")
        return
    def us(r) -> float:  # a row's median per call, as the table keeps it
        return round(r.stats.median * 1e6, 2)

    timed: dict = {shape: [] for shape in best}  # every verified candidate of each shape: one pass over the rows
    for r in record.results:
        if r.kernel_id == spec.id and r.status == "pass" and r.shape in timed:
            timed[r.shape].append((dict(r.params), us(r)))
    table = choice_table.ChoiceTable(
        spec.id, spec.name, gpu_info.name, gpu_info.sm_count, _dt.date.today().isoformat(),
        command_line or "gemmbench tune", source_digest(run_spec),
        {shape: choice_table.choice_of(best[shape].params, us(best[shape]), timed[shape])
         for shape in [e.shape for e in options.shapes] if shape in best})  # the set's order, however it ran
    choice_table.write(options.table, table, options.overwrite)
    missing = len(record.options.get("shapes") or []) - len(best)
    reporter.note(f"wrote the best of each shape to {options.table} ({len(best)} shapes"
                  + (f"; {missing} without a verified candidate are left out" if missing > 0 else "") + ")")


def _fully_tried(record, kernel_id: int, best: dict, kept: dict, reporter: Reporter) -> dict:
    """The bests worth caching: all of them from a whole run; from a run that
    did not finish, only those of shapes where every candidate ran (a partial
    search's best would replace a whole one)."""
    if record.complete:
        return best
    ran = {shape: sum(r.kernel_id == kernel_id and r.shape == shape for r in record.results) for shape in best}
    whole = {shape: result for shape, result in best.items() if ran[shape] >= len(kept[shape])}
    reporter.note("the run did not finish: " + (
        f"the tuning cache takes only the {len(whole)} of {len(best)} shapes where every candidate ran" if whole
        else "nothing stored in the tuning cache (no shape had every candidate run)"))
    return whole


def _store_best(cache: TuningCache, gpu_name: str, run_spec, best: dict, tried: dict, reporter: Reporter) -> None:
    """The tuning cache keeps one entry per shape class: the best of the largest shape tuned in each."""
    largest: dict = {}
    for shape, result in best.items():
        key = shape_class(shape)
        if key not in largest or shape.flops > largest[key].shape.flops:
            largest[key] = result
    try:
        for result in largest.values():
            note = cache.store(gpu_name, run_spec, result.shape, result.params, result.gflops, tried[result.shape])
            if note:
                reporter.note(note)
    except OSError as exc:
        raise UserError(f"could not write the tuning cache {cache.path}: {exc.strerror or exc}") from None
    if len(best) == 1:
        reporter.note(f"stored the best for {gpu_name}, rung {run_spec.id}, shapes like {next(iter(best))} "
                      f"in {cache.path}")
    else:
        reporter.note(f"stored in {cache.path}, for {gpu_name}, rung {run_spec.id}: per shape class (each dimension "
                      f"rounded to a power of two) the best of its largest shape, {len(largest)} classes from "
                      f"{len(best)} shapes")


def _compile_candidates(gpu, spec, found: list[dict], jobs: int | None, reporter) -> list[dict]:
    """The candidates that compile (in parallel, with a progress bar); the others are reported."""
    built = []
    with reporter.progress(len(found), "compile") as advance:
        for params, error in compile_candidates(spec, gpu.info.compute_capability, found, jobs):
            advance(" ".join(f"{k}={v}" for k, v in params.items()))
            if error is None:
                built.append(params)
            else:
                reporter.note(f"does not compile: {params}: {error}")
    return built
