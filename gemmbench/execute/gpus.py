"""Work spread over several GPUs: one worker process per GPU.

A CUDA context belongs to one process, and a GPU is driven best by one
process of its own, so each GPU gets a worker started with 'spawn' (a fork
would copy a parent's CUDA state, which CUDA does not allow). A worker gets
a ``WorkOrder``: its GPU and its share of the Plan, the same plain-data
value the parent runs (kernel files included: a worker loads and compiles a
file as the parent does, and runs it in its own isolated worker). It builds
its rows with ``Devices``, runs them and sends each result back as it
lands; the parent merges them into one record and saves after each. A
worker that fails (GPU lost, out of memory, killed) is reported for its GPU
while the others finish.

Signals: the workers are started with SIGINT and SIGTERM blocked, and then
ignore SIGINT, so a terminal's Ctrl-C, which reaches every process of the
group, stops the parent alone; the parent sends each worker SIGTERM, which
the worker takes as ``Interrupted``, as the parent does: it sends back the
rows it finished (with --rounds, those of the shape it was on, each with the
visits every row had), says "interrupted" and ends. The parent keeps what
arrives for a few seconds, then stops whoever is left, and the run ends as
an interrupted one does. A worker stopped by a SIGTERM of its own (not from
the parent) ends the same way, and the run is then interrupted too: its
share of the rows did not finish.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue as queue_module
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from ..gpu.compile import cubin
from ..gpu.nvml import gpu_state, sm_clock_now
from ..plan import Plan, Row
from ..records.results import KernelResult, identity_line
from ..spec import params_key
from .devices import Devices
from .interrupts import SIGNALS, Interrupted, Interrupts
from .local import Batch, run_plan

T = TypeVar("T")


@dataclass(frozen=True)
class WorkOrder:
    """What one GPU's worker runs: its share of the plan."""

    gpu: int
    plan: Plan


def split(items: Sequence[T], parts: int, cost: Callable[[T], float] = lambda item: 1.0) -> list[list[T]]:
    """``items`` in ``parts`` groups of about equal total cost: the costliest
    first, each to the group with the least so far (longest-processing-time
    rule); each group keeps the items' original order."""
    loads = [0.0] * parts
    groups: list[list[int]] = [[] for _ in range(parts)]
    for i in sorted(range(len(items)), key=lambda i: -cost(items[i])):
        least = loads.index(min(loads))
        groups[least].append(i)
        loads[least] += cost(items[i])
    return [[items[i] for i in sorted(group)] for group in groups]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


@contextlib.contextmanager
def _signals_blocked():
    """SIGINT and SIGTERM held back while the workers start: each starts with
    them blocked (a child inherits the mask) until ``serve`` has set its own
    handling, and one that comes to this process meanwhile is delivered here
    right after."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def serve(order: WorkOrder, outbox, run_share: Callable) -> None:
    """A worker's whole life (runs in the child process): ``run_share(order,
    send, on_result)`` runs its share, and everything goes back as (gpu,
    kind, payload), kind "environment" | "result" | "state" | "error" |
    "done" | "interrupted" (with the signal's name)."""
    def send(kind: str, payload=None):
        outbox.put((order.gpu, kind, payload))

    def on_result(result):
        result.gpu = order.gpu
        send("result", result.to_dict())

    # its signals: SIGINT ignored (the parent gets a terminal's and sends SIGTERM), SIGTERM raised as
    # Interrupted, once; then the ones held back since the start (_signals_blocked) are let through, inside
    # the try, so that one that was waiting is answered like any other
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with Interrupts(signals=(signal.SIGTERM,)) as interrupts:
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
            run_share(order, send, on_result)
        except Interrupted as stop:  # the rows it finished go back; a second SIGTERM is only noted
            interrupts.hold()
            for result in stop.rows:
                on_result(result)
            send("interrupted", stop.name)
            return
        except BaseException as exc:  # reported for this GPU; the other workers go on
            send("error", _one_line(exc))
            return
    send("done")


def gpu_share(order: WorkOrder, send: Callable, on_result: Callable) -> None:
    """Open the worker's GPU and run its share of the plan."""
    plan = order.plan
    devices = Devices(plan)
    devices.check(plan.shapes, None)
    entries = devices.entries(plan.rows)
    send("environment", devices.environment())
    run_plan(Batch(entries, list(plan.shapes), plan.seed, plan.budget, plan.flush_l2, device="gpu"), on_result)
    send("state", {**sm_clock_now(), **gpu_state()})


def gpu_worker(order: WorkOrder, outbox) -> None:
    """The worker each GPU gets (run_on_gpus' default)."""
    serve(order, outbox, gpu_share)


GRACE_SECONDS = 10.0  # how long an interrupted run waits for the workers' last rows


def run_workers(orders: list[WorkOrder], on_message: Callable[[int, str, object], None],
                worker: Callable = gpu_worker, poll_seconds: float = 0.5,
                on_interrupt: Callable[[], None] = lambda: None, grace_seconds: float = GRACE_SECONDS,
                deferred: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext) -> None:
    """Start one 'spawn' process per order and pass every message to
    ``on_message(gpu, kind, payload)`` until each worker said "done",
    "error" or "interrupted"; a worker that dies silently is reported as an
    "error". Interrupted itself, it calls ``on_interrupt`` (the caller stops
    raising signals), sends each worker SIGTERM, passes on what they send
    for up to ``grace_seconds`` and raises the Interrupted again. Each
    message is read and handed on inside ``deferred()`` (Interrupts.deferred:
    a signal waits for the block's end): raised in the middle of a read, it
    would leave half a message in the pipe, and the next read would fail."""
    ctx = multiprocessing.get_context("spawn")
    inbox = ctx.Queue()
    # not daemonic: a worker starts a kernel file's own worker process, which a daemon may not;
    # the finally below stops every worker however this ends
    procs = {o.gpu: ctx.Process(target=worker, args=(o, inbox), name=f"gemmbench-gpu{o.gpu}")
             for o in orders}
    finished: set[int] = set()
    silent: dict[int, int] = {}

    def pump(deadline: float | None = None) -> None:
        while len(finished) < len(procs) and (deadline is None or time.monotonic() < deadline):
            with deferred():
                try:
                    gpu, kind, payload = _receive(inbox, poll_seconds)
                except queue_module.Empty:
                    for gpu, p in procs.items():
                        # dead with no last word: give its queued messages one more poll, then report it
                        if gpu not in finished and not p.is_alive():
                            silent[gpu] = silent.get(gpu, 0) + 1
                            if silent[gpu] >= 2:
                                finished.add(gpu)
                                on_message(gpu, "error",
                                           f"worker process ended without finishing (exit code {p.exitcode})")
                    continue
                if gpu in finished:
                    continue
                if kind in ("done", "error", "interrupted"):
                    finished.add(gpu)
                on_message(gpu, kind, payload)

    try:
        try:
            with _signals_blocked():
                for p in procs.values():
                    p.start()
            pump()
        except Interrupted:
            on_interrupt()
            for gpu, p in procs.items():
                if gpu not in finished and p.is_alive():
                    os.kill(p.pid, signal.SIGTERM)
            pump(time.monotonic() + grace_seconds)
            raise
    finally:
        for p in procs.values():
            if p.is_alive():
                p.terminate()
        for p in procs.values():
            p.join(timeout=5)
            if p.is_alive():  # one that holds SIGTERM (it is sending its last rows) past the grace
                p.kill()
                p.join()


def _receive(inbox, timeout: float) -> tuple:
    """The next (gpu, kind, payload) from the workers; queue.Empty after ``timeout`` seconds."""
    return inbox.get(timeout=timeout)


# --------------------------------------------------------------------------
# the parent: share the plan out, merge what comes back into one record
# --------------------------------------------------------------------------

def plan_orders(plan: Plan) -> list[WorkOrder]:
    """Each GPU's share of the plan's GPU rows (see Plan.spread): "same" runs
    everything everywhere; "shapes" shares the shapes out by their flops;
    "candidates" shares out the rows with given parameters, the library rows
    running on every GPU at the shapes of its candidates (each GPU's
    candidates are compared with its own cuBLAS)."""
    rows = [r for r in plan.rows if r.device == "gpu"]
    if plan.spread == "same":
        return [WorkOrder(g, plan.share(g, rows, plan.shapes)) for g in plan.gpus]
    if plan.spread == "shapes":
        parts = split(list(plan.shapes), len(plan.gpus), cost=lambda s: float(s.flops))
        return [WorkOrder(g, plan.share(g, rows, part)) for g, part in zip(plan.gpus, parts) if part]
    if plan.spread == "candidates":
        fixed = [r for r in rows if r.params is None]
        parts = _candidate_parts([r for r in rows if r.params is not None], len(plan.gpus))
        return [WorkOrder(g, plan.share(g, fixed + part, [s for s in plan.shapes if any(r.runs_at(s) for r in part)]))
                for g, part in zip(plan.gpus, parts) if part]
    raise ValueError(f"unknown spread {plan.spread!r}")


def _candidate_parts(tuned: list[Row], gpus: int) -> list[list[Row]]:
    """The candidate rows in ``gpus`` shares. A shape set with a shape for
    every GPU keeps each shape's candidates on one GPU (by candidates x
    flops), so that its best is chosen among times taken on one GPU; one
    shape (or fewer than GPUs) shares its candidates out one by one."""
    shapes = list(dict.fromkeys(r.shape for r in tuned))
    if None in shapes or len(shapes) < gpus:
        return split(tuned, gpus)
    count = {shape: sum(r.shape == shape for r in tuned) for shape in shapes}
    groups = split(shapes, gpus, cost=lambda s: float(s.flops) * count[s])
    return [[r for r in tuned if r.shape in group] for group in groups]


def _row_key(row: Row) -> tuple:
    return row.kernel_id, row.precision, row.params, row.shape


def _row_rank(rank: dict, result) -> int:
    """Where a result's row stands in the plan: a row tied to the result's shape, else one of every shape."""
    params = params_key(result.params) if result.params_source == "given" else None
    key = (result.kernel_id, result.precision, params)
    return rank.get((*key, result.shape), rank.get((*key, None), 0))


def run_on_gpus(plan: Plan, devices, entries: list, recording, reporter, worker=gpu_worker) -> bool:
    """Run the plan's GPU rows on its GPUs (--gpus), one worker each; the CPU
    rows (OpenBLAS beside compare) run here afterwards. Each result goes to
    the recording, then the record's rows are put in plan order. Returns
    whether a worker failed."""

    record = recording.record
    carried = len(record.results)  # rows the record started with (tune --resume): they stay first, as they were
    cpu_entries = [e for e in entries if e.backend.device != "gpu"]
    orders = plan_orders(plan)
    env = record.environment
    failed_workers = []

    def refresh_notes():
        gpus = env["gpus"]
        env["notes"] = [identity_line(gpus[k].get("gpu") or {"index": int(k)}) for k in sorted(gpus, key=int)]
        if plan.spread == "shapes":
            env["notes"].append("shapes shared out: " + "; ".join(
                f"GPU {o.gpu}: {', '.join(map(str, o.plan.shapes))}" for o in orders))
        elif plan.spread == "candidates":
            env["notes"].append("candidates shared out: " + ", ".join(
                f"{sum(r.params is not None for r in o.plan.rows)} on GPU {o.gpu}" for o in orders))

    def landed(result, advance):
        recording.keep(result)
        advance(f"GPU {result.gpu if result.gpu is not None else '-'}: {result.name} {result.shape}")

    if devices.gpu is not None:
        _warm_compile_cache(devices.gpu, [e for e in entries if e.backend.device == "gpu"], plan.shapes)
    steps = sum(o.plan.steps for o in orders) + len(cpu_entries) * len(plan.shapes)
    record.planned = steps  # every GPU's share: "after 15 of 42 kernels" counts the rows of all of them
    reporter.note(f"{plan.command} on GPUs {', '.join(map(str, plan.gpus))}: one worker process each")
    with reporter.progress(steps, plan.command, record, recording.interrupts.deferred) as advance:
        def on_message(gpu: int, kind: str, payload):
            mine = env["gpus"].setdefault(str(gpu), {})
            if kind == "environment":
                mine.update(payload)
            elif kind == "result":
                landed(KernelResult.from_dict(payload), advance)
            elif kind == "state":
                mine["after"] = payload
            elif kind == "error":
                mine["error"] = payload
                mine.setdefault("gpu", {"index": gpu})
                failed_workers.append(gpu)
                reporter.note(f"GPU {gpu}: worker failed: {payload}")
            elif kind == "interrupted":
                mine["interrupted"] = payload
                reporter.note(f"GPU {gpu}: stopped by {payload}; the rows it finished are kept")
            refresh_notes()
        run_workers(orders, on_message, worker, on_interrupt=recording.interrupts.hold,
                    deferred=recording.interrupts.deferred)
        stopped = [mine["interrupted"] for mine in env["gpus"].values() if "interrupted" in mine]
        if stopped:  # a worker was stopped, this process was not: its share did not finish
            raise Interrupted(signal.Signals[stopped[0]])
        if cpu_entries:
            run_plan(Batch(cpu_entries, list(plan.shapes), plan.seed, plan.budget, plan.flush_l2, device="gpu"),
                     lambda result: landed(result, advance))

    # one order however the rows arrived: by shape, then GPU, then plan row
    rank = {_row_key(r): i for i, r in enumerate(plan.rows)}
    shape_rank = {s: i for i, s in enumerate(plan.shapes)}
    record.results[carried:] = sorted(record.results[carried:], key=lambda r: (
        shape_rank.get(r.shape, 0), r.gpu is None, r.gpu or 0, _row_rank(rank, r)))
    return bool(failed_workers)


def _warm_compile_cache(gpu, entries: list, shapes: list) -> None:
    """nvcc for every rung at every shape once, here, in parallel threads, so
    the workers load from the disk cache instead of each compiling the same
    kernels at the same time (once per set of compile-time parameters: the
    runtime ones compile nothing). A kernel that does not compile is left to
    its worker, which reports it as a FAIL row."""
    cc = gpu.info.compute_capability
    jobs = {}
    for e in entries:
        if e.spec.is_baseline or cc < e.spec.min_cc:
            continue
        for shape in [s for s in shapes if e.runs_at(s)]:
            run_spec, params, _ = gpu.chosen(e.spec, shape, e.params)
            jobs[(e.spec.id, e.spec.precision, tuple(run_spec.defines(params)))] = (run_spec, params)

    def build(job):
        try:
            cubin(job[0], cc, job[1])
        except Exception:
            pass
    with ThreadPoolExecutor() as pool:
        list(pool.map(build, jobs.values()))
