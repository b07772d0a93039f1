"""The one path a benchmark takes from its checks to its saved record.

``record_run`` checks the plan's inputs, builds its rows, runs them (in
this process, a kernel file in its worker, or one worker per GPU) and saves
each result as it lands. Signals are owned by the caller's ``Interrupts``,
entered at the command's first instruction (gemmbench.cli.main): inside a
row's save a signal waits until the row is whole; while the run is being
finished it is noted, never raised. A run stopped by a signal or a failed
save still returns its Outcome: what finished, marked incomplete.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..plan import Plan
from ..records.results import KernelResult, RunRecord
from ..records.writer import RecordWriter, SaveError, recover_orphans
from .devices import Devices
from .gpus import gpu_worker, run_on_gpus
from .interrupts import Interrupted, Interrupts, interrupted_cause
from .local import Batch, run_plan


@dataclass
class Outcome:
    """What a run leaves: the record, where it was saved, the exit code of
    its rows, and why it stopped early (a signal, a failed save)."""

    record: RunRecord
    path: Path | None
    code: int
    stop: Interrupted | SaveError | None = None
    save_error: SaveError | None = None


class Recording:
    """The record of one run and the file it is saved in, row by row."""

    def __init__(self, record: RunRecord, results_dir: Path | None, interrupts: Interrupts,
                 note: Callable[[str], None], gpu: int | None = None):
        self.record, self.interrupts, self.gpu = record, interrupts, gpu
        self.writer = None
        if results_dir is not None:  # the directory was checked (validate.check_output_dir)
            for path in recover_orphans(results_dir):
                note(f"recovered {path} (incomplete) from the journal of a run that was killed")
            self.writer = RecordWriter(record, results_dir)

    def keep(self, result: KernelResult) -> None:
        with self.interrupts.deferred():  # a row is saved whole or not at all
            if result.device == "gpu" and result.gpu is None:
                result.gpu = self.gpu
            self.record.results.append(result)
            if self.writer:
                self.writer.add(result)

    def update(self, result: KernelResult) -> None:
        with self.interrupts.deferred():
            if self.writer:
                self.writer.update(result)

    def finish(self, stop: Interrupted | SaveError | None, workers_failed: bool = False) -> Outcome:
        self.interrupts.hold()  # finishing: a second Ctrl-C must not lose the record
        record = self.record
        done = f"{len(record.results)} of {record.planned} kernels"
        reason = None if stop is None else f"interrupted by {stop.name} after {done}" \
            if isinstance(stop, Interrupted) else f"stopped after {done}: {stop}"
        save_error = stop if isinstance(stop, SaveError) else None
        record.complete, record.incomplete_reason = stop is None, reason
        if self.writer:
            try:
                self.writer.finish()
            except SaveError as exc:
                save_error = save_error or exc
        code = 1 if record.failed or workers_failed else 0
        return Outcome(record, self.writer.path if self.writer else None, code, stop, save_error)


def record_run(plan: Plan, devices: Devices, options: dict, results_dir: Path | None, reporter,
               interrupts: Interrupts | None = None, worker=None, carried=()) -> Outcome:
    """Check, run and save ``plan`` (see the module doc); ``options`` is what
    the record keeps of the command's options; ``carried``: rows of an earlier
    record that this one starts with (tune --resume), saved as they were. Without ``interrupts`` (the
    Python API) no signal handler is involved and rows are still saved whole."""
    interrupts = interrupts or Interrupts()
    devices.check(plan.shapes, results_dir)
    entries = devices.entries(plan.rows)
    if plan.no_gpu_reason:  # told only once the plan is known to run
        reporter.note(f"No GPU ({plan.no_gpu_reason}): running the CPU ladder.")
    environment = devices.environment()
    if plan.gpus:
        environment["gpus"] = {}  # each worker's GPU, filled as they report
    record = RunRecord(plan.command, plan.device, options, environment, planned=plan.steps + len(carried))
    recording = Recording(record, results_dir, interrupts, reporter.note,
                          plan.gpu if plan.device == "gpu" else None)
    for result in carried:
        recording.keep(result)
    stop: Interrupted | SaveError | None = None
    workers_failed = False
    try:
        interrupts.checkpoint()
        if plan.gpus:
            workers_failed = run_on_gpus(plan, devices, entries, recording, reporter, worker or gpu_worker)
        else:
            with reporter.progress(plan.steps, plan.command, record, interrupts.deferred) as advance:
                def on_result(result):
                    recording.keep(result)
                    advance(f"{result.name} {result.shape}")
                run_plan(Batch(entries, list(plan.shapes), plan.seed, plan.budget, plan.flush_l2,
                               devices.log or (lambda message: None), plan.device), on_result, recording.update)
        interrupts.checkpoint()  # one that Python swallowed during the run
    except KeyboardInterrupt:  # a SIGINT that came before a handler was installed
        stop = Interrupted(signal.SIGINT)
    except (Interrupted, SaveError) as exc:
        stop = exc
    except Exception as exc:  # a signal that Python wrapped in another error
        stop = interrupted_cause(exc)
        if stop is None:
            raise
    if isinstance(stop, Interrupted):
        interrupts.caught()
        for result in stop.rows:
            recording.keep(result)
    return recording.finish(stop, workers_failed)
