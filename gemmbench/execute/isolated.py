"""A user's kernel runs in a child process, so a fault or a hang costs one row.

An illegal memory access poisons a CUDA context for good, a segfault ends a
process, and a kernel that never returns holds it forever. So each user
kernel gets a worker process of its own (multiprocessing "spawn": a fresh
interpreter with its own CUDA context, never a fork of the parent's). For
each row the worker rebuilds the same seeded Problem and the FP64
reference, then runs ``bench.run_entry`` — the very verification and timing
every rung gets — and sends the KernelResult back through a pipe.

Before each step the worker tells the parent how long that step may take:
one kernel call during verification (``--kernel-timeout``, 10 s by
default), the timing phase (its budget plus that limit per sample), set-up
and loading (generous fixed allowances). When a step overruns, the parent
kills the worker and the row FAILs "timed out"; when the worker dies (a
segfault, a CUDA fault that aborts) the row FAILs with how it died. Either
way the parent's own CUDA context never saw the kernel, and the next row
runs. A worker is reused for the next row (shape or parameters) of the same
kernel, and replaced after any failure.

Nothing a kernel starts outlives its row. The worker makes itself a session
(and process group) of its own and a child subreaper, and is started with a
token in its environment (procs.WORKER_TOKEN), so every process the kernel
forks is found by procs.kill_strays: in the worker's session, below it, or
carrying the token. When a row ends, PASS or FAIL, the parent kills them all;
a kernel that left any FAILs its row saying how many ("left 3 processes
running"; its notes keep ``left_processes``), and the worker is replaced.
The group is named by the worker's pid, which the parent holds until it has
reaped the worker, so a kill can never reach gemmbench or a stranger.

The worker never prints a traceback: a lost pipe (a kernel that closed its
file descriptors, or killed gemmbench) ends it quietly, and it watches its
parent: when gemmbench dies, the worker kills what the kernel started and
exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import hashlib
import multiprocessing
import os
import secrets
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing import resource_tracker

from .. import fsutil, procs
from ..backend import Budget, Problem, Shape
from ..cpu.backend import CpuBackend
from ..gpu.backend import GpuBackend
from ..kernelfile import UserKernel
from ..precision import precision as precision_class
from ..records.results import KernelResult
from ..timing import SETTLE_SECONDS
from ..tuning import TuningCache
from .local import Batch, Entry, expectations, run_entry

DEFAULT_CALL_SECONDS = 10.0
START_SECONDS = 120.0  # spawn, imports, CUDA context, the FP64 reference
LOAD_SECONDS = 120.0   # loading (or, on a cache miss, compiling) the kernel
CHECK_SECONDS = 60.0   # comparing a result with the reference on the host
STOP_SECONDS = 5.0
PARENT_POLL_SECONDS = 0.2  # how often the worker checks that gemmbench is still there
WATCH_SECONDS = 0.2  # how often the parent checks that the worker is still there
LOST_PIPE = 3  # the worker's exit status when its pipe to gemmbench broke

_ENVIRON = threading.Lock()  # the token is in os.environ only while a worker is spawned


@dataclass(frozen=True)
class WorkerConfig:
    """What the worker needs to build the backend the parent would use."""

    device: str  # "gpu" or "cpu"
    call_seconds: float = DEFAULT_CALL_SECONDS  # the limit for one kernel call
    threads: int | None = None  # CPU: the thread count of the row
    use_tuning: bool = True  # GPU: read tuned parameters from the tuning cache
    gpu: int = 0  # GPU: the CUDA ordinal of the row (a --gpus worker's own GPU)


def start_seconds(shape: Shape) -> float:
    """The set-up allowance: fixed, plus the FP64 reference at a slow 10 GFLOP/s."""
    return START_SECONDS + 2 * shape.flops / 1e10


def timing_seconds(budget: Budget, call_seconds: float) -> float:
    """The timing phase: warm-up (a settling GPU warm-up is longer) and the sample budget, plus every sample the
    budget may insist on (and the GPU timer's 8 calibration calls) at the call limit."""
    return max(budget.warmup_seconds, SETTLE_SECONDS) + budget.max_seconds + (budget.min_samples + 10) * call_seconds \
        + CHECK_SECONDS


class Isolated:
    """Runs the rows of one user kernel in a worker process (see the module doc)."""

    def __init__(self, kernel: UserKernel, config: WorkerConfig):
        self.kernel = kernel
        self.config = config
        self._process = None
        self._conn = None
        self._token = ""

    # -- the parent side -------------------------------------------------------
    def run(self, entry: Entry, shape: Shape, plan: Batch) -> KernelResult:
        """The row of ``entry`` at ``shape``, measured in the worker; a FAIL row
        when the worker overruns a step, dies, or leaves processes behind."""
        try:
            if self._process is None:
                try:
                    self._start()
                except OSError as exc:  # no process to be had (a fork bomb elsewhere, a limit)
                    outcome = f"crashed: the worker could not start ({exc.strerror or exc})"
            if self._process is not None:
                try:
                    self._conn.send(("run", shape, entry.params, plan.seed, plan.budget, plan.flush_l2))
                    outcome = self._wait(START_SECONDS, "the worker did not start")
                except (OSError, ValueError):  # the pipe broke on the way out: the worker is gone
                    outcome = self._how_it_died()
        except BaseException:  # Ctrl-C, SIGTERM: nothing of the kernel's may outlive gemmbench
            self._stop(ask=False)
            raise
        if isinstance(outcome, KernelResult):
            result = outcome
            left = self._kill_strays()
            if result.status == "fail" or left:
                left += self.close()  # its context may be poisoned: the next row gets a fresh worker
        else:
            left = self._stop(ask=False)  # timed out or dead: nothing to ask
            spec = self.kernel.spec
            result = KernelResult(self.config.device, spec.id, spec.name, spec.precision, shape, "fail", outcome,
                                  dict(entry.params if entry.params is not None else spec.params),
                                  "given" if entry.params is not None else "default", self.config.threads)
        result.notes = {**result.notes, "kernel_file": str(self.kernel.path), "kernel_sha256": self.kernel.digest}
        return _left_behind(result, left) if left else result

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        token = secrets.token_hex(16)
        conn, child_end = context.Pipe()
        process = context.Process(target=serve, args=(child_end, self.kernel, self.config, os.getpid()),
                                  daemon=True, name=f"gemmbench {self.kernel.spec.name}")
        try:
            resource_tracker.ensure_running()  # started now, it would carry the token and count as a stray
            with _ENVIRON:  # the spawned interpreter inherits the environment as it is now
                os.environ[procs.WORKER_TOKEN] = token
                try:
                    process.start()
                finally:
                    del os.environ[procs.WORKER_TOKEN]
        except BaseException:
            conn.close()
            raise
        finally:
            child_end.close()
        self._process, self._conn, self._token = process, conn, token

    def _wait(self, seconds: float, what: str) -> KernelResult | str:
        """The worker's result, or why there is none ("timed out: ...", "crashed ...")."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return f"timed out: {what}"
            try:
                if not self._conn.poll(min(left, WATCH_SECONDS)):
                    if self._exit_status(0) is not None:  # dead, though a child of the kernel may hold the pipe
                        return self._how_it_died()
                    continue
                message = self._conn.recv()
            except (EOFError, OSError):
                return self._how_it_died()
            if message[0] == "expect":
                _, seconds, what = message
                deadline = time.monotonic() + seconds
            else:
                return message[1]

    def _exit_status(self, seconds: float) -> int | None:
        """The worker's exit status (minus the signal that killed it), waiting
        up to ``seconds``; None while it runs. It is left unreaped, so its pid
        (and the session named after it) cannot be reused under us."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                info = os.waitid(os.P_PID, self._process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:  # reaped already (multiprocessing did)
                return self._process.exitcode
            if info is not None:
                return -info.si_status if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED) else info.si_status
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.01)

    def _how_it_died(self) -> str:
        code = self._exit_status(STOP_SECONDS)
        if code is None:
            return "crashed: the worker closed its pipe"
        if code == LOST_PIPE:
            return "crashed: its pipe to gemmbench was closed (by the kernel?)"
        if code < 0:
            return f"crashed: killed by {procs.signal_name(-code)}"
        return f"crashed: exit code {code}"

    def _kill_strays(self) -> int:
        """Kill what the kernel started (the worker itself spared); how many."""
        return procs.kill_strays(self._process.pid, self._token) if self._process is not None else 0

    def close(self) -> int:
        """Stop the worker (kill it if it does not stop at once) and every
        process the kernel started; the number of those."""
        return self._stop(ask=True)

    def _stop(self, ask: bool) -> int:
        """close(); ``ask`` False when the worker is busy with a row (timed out,
        interrupted): it is killed without being asked to stop."""
        process, conn = self._process, self._conn
        if process is None:
            return 0
        left = self._kill_strays()  # first, while the worker still holds the tree together
        try:
            if ask:
                conn.send(("stop",))
        except (OSError, ValueError):
            pass
        if self._exit_status(STOP_SECONDS if ask else 0) is None:
            process.kill()
            self._exit_status(STOP_SECONDS)
        left += self._kill_strays()  # what its death orphaned; its pid is still held (unreaped)
        self._process = self._conn = None
        process.join(STOP_SECONDS)  # reaps it
        conn.close()
        return left


def _left_behind(result: KernelResult, count: int) -> KernelResult:
    """A row whose kernel left processes running: FAIL, saying how many."""
    said = f"left {count} process{'es' if count != 1 else ''} running: killed"
    notes = {**result.notes, "left_processes": count}
    if result.status == "pass":  # correct, but its times shared the cores with what it left: none are kept
        return dataclasses.replace(result, status="fail", reason=said, samples=[], flags=[], notes=notes)
    return dataclasses.replace(result, status="fail", reason=f"{result.reason}; {said}" if result.reason else said,
                               notes=notes)


# -- the worker side ---------------------------------------------------------------

@contextlib.contextmanager
def _quiet_after_a_cuda_error():
    """A CUDA error (an illegal address, a launch failure) leaves this
    worker's context dead: the row becomes a FAIL and the worker is replaced.
    On the way, every buffer, stream and event the row held is freed into
    the dead context, and pycuda prints a two-line warning for each one, on
    the terminal of the user who reads the FAIL row. Nothing the worker could
    still write to stderr is worth that: it goes to /dev/null from here on
    (what the row says goes to the parent through the pipe)."""
    try:
        yield
    except Exception as exc:
        if type(exc).__module__.startswith("pycuda"):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)
            os.close(null)
        raise


class _Watched:
    """The worker's backend: before each step, tells the parent how long it may take."""

    def __init__(self, backend, expect, call_seconds: float):
        self.backend, self.expect, self.call_seconds = backend, expect, call_seconds
        self.device = backend.device

    def prepare(self, spec, shape, params=None):
        self.expect(LOAD_SECONDS + self.call_seconds, f"loading the kernel took over {LOAD_SECONDS + self.call_seconds:g} s")
        with _quiet_after_a_cuda_error():
            prepared = self.backend.prepare(spec, shape, params)
        return dataclasses.replace(prepared, gemm=_LimitedCall(prepared.gemm, self.expect, self.call_seconds))

    def set_c(self, c, output: str = "fp32") -> None:
        with _quiet_after_a_cuda_error():
            self.backend.set_c(c, output)

    def get_c(self, output: str = "fp32"):
        with _quiet_after_a_cuda_error():
            c = self.backend.get_c(output)  # on the GPU the call's wait ends here
        self.expect(CHECK_SECONDS, f"checking the result took over {CHECK_SECONDS:g} s")
        return c

    def measure(self, gemm, alpha, beta, budget, flush_l2=False):
        seconds = timing_seconds(budget, self.call_seconds)
        self.expect(seconds, f"timing took over {seconds:g} s ({self.call_seconds:g} s per call, --kernel-timeout)")
        with _quiet_after_a_cuda_error():  # untouched otherwise: no reporting while timed
            return self.backend.measure(gemm.call, alpha, beta, budget, flush_l2)


class _LimitedCall:
    """A verification call, announced with the per-call limit."""

    def __init__(self, call, expect, seconds: float):
        self.call, self.expect, self.seconds = call, expect, seconds

    def __call__(self, alpha: float, beta: float) -> None:
        self.expect(self.seconds, f"a call ran over {self.seconds:g} s (--kernel-timeout)")
        with _quiet_after_a_cuda_error():
            self.call(alpha, beta)


def _backend(config: WorkerConfig):
    if config.device == "gpu":
        return GpuBackend(tuning=TuningCache() if config.use_tuning else None, ordinal=config.gpu)
    return CpuBackend(threads=config.threads, max_call_seconds=config.call_seconds)


def _detach(parent: int, token: str) -> None:
    """Make the worker a session of its own and a child subreaper (Linux), and
    watch its parent: once gemmbench is gone, kill what the kernel started and exit."""
    try:
        os.setsid()
    except OSError:
        pass
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            pass

    def watch() -> None:  # a thread: a kernel call through ctypes releases the GIL
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        procs.kill_strays(os.getpid(), token)
        os._exit(0)
    threading.Thread(target=watch, name="parent watch", daemon=True).start()


def _reap() -> None:
    """Collect the exit status of every finished child (the kernel's, killed
    by the parent, or orphans handed to this subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(conn, kernel: UserKernel, config: WorkerConfig, parent: int) -> None:
    """The worker: one request per row until told to stop.
    Whatever happens it ends with os._exit, silently: LOST_PIPE when the pipe
    to gemmbench broke, 0 otherwise."""
    try:
        _detach(parent, os.environ.get(procs.WORKER_TOKEN, ""))
        os.dup2(2, 1)  # a kernel's printf must not land in the parent's --json output
        null = os.open(os.devnull, os.O_RDONLY)  # nor may a kernel wait on the terminal
        os.dup2(null, 0)
        os.close(null)
        _serve(conn, kernel, config)
    except (OSError, EOFError):
        os._exit(LOST_PIPE)
    except BaseException:
        os._exit(1)
    os._exit(0)  # skip interpreter clean-up: a poisoned CUDA context only complains there


def _serve(conn, kernel: UserKernel, config: WorkerConfig) -> None:
    worker = os.getpid()

    def send(message: tuple) -> None:
        if os.getpid() != worker:  # a child the kernel forked came back here: it must not speak for the worker
            os._exit(0)
        conn.send(message)

    def expect(seconds: float, what: str) -> None:
        send(("expect", seconds, what))

    backend = None
    spec = kernel.spec
    while True:
        message = conn.recv()
        _reap()
        if message[0] != "run":
            return
        _, shape, params, seed, budget, flush_l2 = message
        try:
            expect(start_seconds(shape), "setting up (CUDA context, FP64 reference) took too long")
            if hashlib.sha256(fsutil.read_text(kernel.path, fsutil.KERNEL_FILE_MAX_BYTES).encode()).hexdigest() \
                    != kernel.digest:
                raise RuntimeError(f"{kernel.given} changed during the run")
            backend = backend or _backend(config)
            problem = Problem.random(shape, seed)
            backend.load(problem)
            passes = expectations(problem, *backend.reference(problem, precision_class(spec.precision).inputs))
            plan = Batch([], [shape], seed, budget, flush_l2)
            result = run_entry(Entry(_Watched(backend, expect, config.call_seconds), spec, params),
                               problem, passes, plan)
        except Exception as exc:  # anything the row raises is that row's failure
            result = KernelResult(config.device, spec.id, spec.name, spec.precision, shape, "fail",
                                  f"{type(exc).__name__}: {exc}".splitlines()[0])
        send(("result", result))  # after a FAIL the parent stops this worker: alive until then, it
        # keeps the processes the kernel orphaned below it, where the parent finds them
