"""Work spread over several GPUs: one worker process per GPU.

A CUDA context belongs to one process, and a GPU is driven best by one
process of its own, so each GPU gets a worker started with 'spawn' (a fork
would copy a parent's CUDA state, which CUDA does not allow). A worker gets
a ``WorkOrder`` (plain data: rung ids, parameters, shapes, options), builds
its own Session on its GPU, runs the plan and sends each result back as it
lands; the parent merges them into one record and saves after each. A worker
that fails (GPU lost, out of memory, killed) is reported for its GPU while
the others finish.
"""

from __future__ import annotations

import multiprocessing
import queue as queue_module
from dataclasses import dataclass, field
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")

# Row of a plan, as data a process can receive: (rung id, precision, params or None).
RowSpec = tuple[int, str, "dict | None"]


@dataclass(frozen=True)
class WorkOrder:
    """What one GPU's worker runs: rows at shapes, with the command's options."""

    gpu: int
    opts: dict
    rows: list[RowSpec]
    shapes: list[tuple[int, int, int]]
    extra: dict = field(default_factory=dict)


def parse_gpus(text: str, count: int) -> list[int]:
    """'all' or a comma list of CUDA ordinals (as CUDA_VISIBLE_DEVICES leaves
    them) -> distinct ordinals in the order given; ValueError naming the value."""
    if count < 1:
        raise ValueError("--gpus: no GPU is visible")
    if text.strip().lower() == "all":
        return list(range(count))
    try:
        wanted = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"--gpus {text!r}: give 'all' or GPU indices like 0,2,3") from None
    bad = [i for i in wanted if not 0 <= i < count]
    if bad:
        raise ValueError(f"--gpus {text!r}: no GPU {bad[0]} ({count} visible, numbered 0-{count - 1})")
    if len(set(wanted)) != len(wanted):
        raise ValueError(f"--gpus {text!r} names a GPU twice")
    return wanted


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


def gpu_worker(order: WorkOrder, outbox) -> None:
    """A worker's whole life (runs in the child process): open the GPU, run
    the order, send ("environment" | "result" | "state" | "error" | "done")."""
    def send(kind: str, payload=None):
        outbox.put((order.gpu, kind, payload))

    try:
        from .bench import Plan, run_plan
        from .gpu.nvml import gpu_state, sm_clock_now
        from .report import Reporter
        from .session import Session
        opts = {**order.opts, "gpu": order.gpu, "gpus": None, "device": "gpu", "no_save": True}
        session = Session(opts, Reporter(quiet=True))
        entries = session.entries_from(order.rows)
        shapes = [session.shape(*s) for s in order.shapes]
        session.check(shapes)
        send("environment", session.environment(entries))
        plan = Plan(entries, shapes, opts["seed"], session.budget(), opts["flush_l2"])

        def on_result(result):
            result.gpu = order.gpu
            send("result", result.to_dict())
        run_plan(plan, on_result)
        send("state", {**sm_clock_now(), **gpu_state()})
    except BaseException as exc:  # reported for this GPU; the other workers go on
        send("error", _one_line(exc))
        return
    send("done")


def run_workers(orders: list[WorkOrder], on_message: Callable[[int, str, object], None],
                worker: Callable = gpu_worker, poll_seconds: float = 0.5) -> None:
    """Start one 'spawn' process per order and pass every message to
    ``on_message(gpu, kind, payload)`` until each worker said "done" or
    "error"; a worker that dies silently is reported as an "error"."""
    ctx = multiprocessing.get_context("spawn")
    inbox = ctx.Queue()
    procs = {o.gpu: ctx.Process(target=worker, args=(o, inbox), name=f"gemmbench-gpu{o.gpu}", daemon=True)
             for o in orders}
    finished: set[int] = set()
    silent: dict[int, int] = {}
    try:
        for p in procs.values():
            p.start()
        while len(finished) < len(procs):
            try:
                gpu, kind, payload = inbox.get(timeout=poll_seconds)
            except queue_module.Empty:
                for gpu, p in procs.items():
                    # dead with no last word: give its queued messages one more poll, then report it
                    if gpu not in finished and not p.is_alive():
                        silent[gpu] = silent.get(gpu, 0) + 1
                        if silent[gpu] >= 2:
                            finished.add(gpu)
                            on_message(gpu, "error", f"worker process ended without finishing (exit code {p.exitcode})")
                continue
            if gpu in finished:
                continue
            if kind in ("done", "error"):
                finished.add(gpu)
            on_message(gpu, kind, payload)
    finally:
        for p in procs.values():
            if p.is_alive():
                p.terminate()
            p.join(timeout=5)


# --------------------------------------------------------------------------
# the parent: share the plan out, merge what comes back into one record
# --------------------------------------------------------------------------

def plan_orders(gpus: list[int], opts: dict, rows: list[RowSpec], shapes: list, spread: str) -> list[WorkOrder]:
    """Each GPU's share: "same" runs everything everywhere; "shapes" shares
    the shapes out by their flops; "candidates" shares out the rows with
    given parameters, the library rows running on every GPU (each GPU's
    candidates are compared with its own cuBLAS)."""
    dims = [(s.M, s.N, s.K) for s in shapes]
    if spread == "same":
        return [WorkOrder(g, opts, rows, dims) for g in gpus]
    if spread == "shapes":
        parts = split(dims, len(gpus), cost=lambda d: float(d[0]) * d[1] * d[2])
        return [WorkOrder(g, opts, rows, part) for g, part in zip(gpus, parts) if part]
    if spread == "candidates":
        fixed = [r for r in rows if r[2] is None]
        parts = split([r for r in rows if r[2] is not None], len(gpus))
        return [WorkOrder(g, opts, fixed + part, dims) for g, part in zip(gpus, parts) if part]
    raise ValueError(f"unknown spread {spread!r}")


def run_on_gpus(session, record, entries: list, shapes: list, spread: str, keep, worker=gpu_worker) -> bool:
    """Run ``entries`` at ``shapes`` on the session's GPUs (--gpus), one worker
    each; the CPU rows (OpenBLAS beside compare) run here afterwards. Each
    result goes to ``keep`` (the session saves it into ``record``), then the
    record's rows are put in plan order. Returns whether a worker failed."""
    from .bench import Plan, run_plan
    from .report_runs import identity_line
    from .results import KernelResult

    reporter, opts, command = session.reporter, session.opts, record.command
    gpu_entries = [e for e in entries if e.backend.device == "gpu"]
    cpu_entries = [e for e in entries if e.backend.device != "gpu"]
    rows = [(e.spec.id, e.spec.precision, e.params) for e in gpu_entries]
    orders = plan_orders(session.gpus, session.saved_options(), rows, shapes, spread)
    env = record.environment
    failed_workers = []

    def refresh_notes():
        gpus = env["gpus"]
        env["notes"] = [identity_line(gpus[k].get("gpu") or {"index": int(k)}) for k in sorted(gpus, key=int)]
        if spread == "shapes":
            env["notes"].append("shapes shared out: " + "; ".join(
                f"GPU {o.gpu}: {', '.join('x'.join(map(str, d)) for d in o.shapes)}" for o in orders))
        elif spread == "candidates":
            env["notes"].append("candidates shared out: " + ", ".join(
                f"{sum(r[2] is not None for r in o.rows)} on GPU {o.gpu}" for o in orders))

    def landed(result, advance):
        keep(result)
        advance(f"GPU {result.gpu if result.gpu is not None else '-'}: {result.name} {result.shape}")

    if getattr(session, "gpu", None) is not None:
        _warm_compile_cache(session.gpu, gpu_entries, shapes)
    steps = sum(len(o.rows) * len(o.shapes) for o in orders) + len(cpu_entries) * len(shapes)
    reporter.note(f"{command} on GPUs {', '.join(map(str, session.gpus))}: one worker process each")
    with reporter.progress(steps, command) as advance:
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
            refresh_notes()
        run_workers(orders, on_message, worker)
        if cpu_entries:
            plan = Plan(cpu_entries, shapes, opts["seed"], session.budget(), opts["flush_l2"])
            run_plan(plan, lambda result: landed(result, advance))

    # one order however the rows arrived: by shape, then GPU, then plan row
    rank = {(kid, precision, repr(params)): i for i, (kid, precision, params) in enumerate(rows)}
    shape_rank = {s: i for i, s in enumerate(shapes)}
    record.results.sort(key=lambda r: (shape_rank.get(r.shape, 0), r.gpu is None, r.gpu or 0,
                                       rank.get((r.kernel_id, r.precision, repr(r.params) if r.params_source == "given"
                                                 else repr(None)), 0)))
    return bool(failed_workers)


def _warm_compile_cache(gpu, entries: list, shapes: list) -> None:
    """nvcc for every rung at every shape once, here, in parallel threads, so
    the workers load from the disk cache instead of each compiling the same
    kernels at the same time. A kernel that does not compile is left to its
    worker, which reports it as a FAIL row."""
    from concurrent.futures import ThreadPoolExecutor
    from .gpu.compile import cubin
    cc = gpu.info.compute_capability
    jobs = {}
    for e in entries:
        if e.spec.is_baseline or cc < e.spec.min_cc:
            continue
        run_spec = e.spec.for_device(cc)
        for shape in shapes:
            params = e.params if e.params is not None else gpu.resolved_params(run_spec, shape)[0]
            jobs[(e.spec.id, e.spec.precision, repr(sorted(params.items())))] = (run_spec, params)

    def build(job):
        try:
            cubin(job[0], cc, job[1])
        except Exception:
            pass
    with ThreadPoolExecutor() as pool:
        list(pool.map(build, jobs.values()))
