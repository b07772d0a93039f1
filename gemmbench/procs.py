"""One way to run an outside tool, and to make sure nothing it started survives.

Every compiler and tool gemmbench starts (cc, nvcc, ncu, cuobjdump, nvdisasm,
git) goes through ``run``:

- stdin is ``/dev/null``: a tool that asks a question, or a kernel file with
  ``#include "/dev/stdin"``, reads end-of-file instead of waiting on the terminal;
- it gets a session and process group of its own, so Ctrl-C at the terminal
  reaches gemmbench alone, and gemmbench can stop the tool and everything the
  tool started with one signal to the group;
- it has a time limit (``GEMMBENCH_<TOOL>_TIMEOUT`` seconds overrides each
  default). When the limit passes, or gemmbench is interrupted or fails while
  the tool runs, the whole group is killed (SIGKILL: a tool that ignores
  SIGTERM stops too) and reaped before ``run`` returns or raises;
- when the tool exits, whatever it left running in its group is killed too;
- its output is captured (bytes that are not UTF-8 are replaced, and a tool
  that prints more than ``MAX_OUTPUT_BYTES`` is stopped);
- what goes wrong is one line, a UserError that names the tool, the limit and
  what to do: not found, timed out after N s, killed by a signal, too much output.

A tool that exits with a non-zero status is not an error here: its caller
reads the status and the output (a compile error is the user's to read).

The second half serves the user kernel's worker (execute/isolated.py):
``kill_strays`` finds and kills every live process a worker started, by
three marks that need no cooperation from the kernel: membership of the
worker's session or group, descent from the worker (which is a child
subreaper, so orphans stay its descendants), and a token in the environment
the worker was started with. Process discovery reads ``/proc`` (Linux);
elsewhere only the group is killed.
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

from .errors import UserError

MAX_OUTPUT_BYTES = 256 << 20  # per stream; SASS of the largest rung and ncu's raw CSV are a few MB
DRAIN_SECONDS = 2.0  # reading what is left in the pipes once the group is dead
_POLL_SECONDS = 0.05  # how often the leader's exit is checked while it prints nothing


class ToolError(UserError):
    """A tool could not do its job: one line naming it, why, and what to do.
    ``problem`` is the why alone ("timed out after 120 s"), for callers that
    word their own line."""

    def __init__(self, tool: str, problem: str, hint: str, limit: float | None = None):
        super().__init__(f"{tool} {problem}; {hint}" if hint else f"{tool} {problem}")
        self.tool, self.problem, self.hint, self.limit = tool, problem, hint, limit


class ToolNotFound(ToolError):
    """The program is missing or cannot be executed."""


class ToolTimedOut(ToolError):
    """It ran past its limit; it and everything it started were killed."""


class ToolKilled(ToolError):
    """A signal ended it (not one of gemmbench's)."""


class ToolOutputTooLarge(ToolError):
    """It printed more than MAX_OUTPUT_BYTES; it was stopped."""


@dataclass(frozen=True)
class Completed:
    """A tool that exited by itself: its status and its output as text."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")


def limit_variable(name: str) -> str:
    """The environment variable that overrides a tool's limit: GEMMBENCH_CC_TIMEOUT."""
    return f"GEMMBENCH_{re.sub(r'[^A-Z0-9]', '_', name.upper())}_TIMEOUT"


def limit(name: str, default: float) -> float:
    """The time limit for tool ``name``: ``GEMMBENCH_<NAME>_TIMEOUT`` (seconds,
    ASCII digits, above 0) when set, else ``default``."""
    variable = limit_variable(name)
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    if not _SECONDS.fullmatch(text) or float(text) <= 0:
        raise UserError(f"{variable}={text[:40]!r} is not a number of seconds above 0 (like 120 or 2.5); "
                        "set it to one, or unset it for gemmbench's own limits")
    return float(text)


def run(cmd: Sequence[str], *, tool: str, limit: float, hint: str, env: Mapping[str, str] | None = None,
        cwd: str | None = None) -> Completed:
    """Run ``cmd`` under the policy of the module doc; raise ToolError for a
    tool that cannot start, overruns ``limit`` seconds, dies by a signal or
    floods its output. ``hint`` says what the user can do about it."""
    cmd = [os.fspath(part) for part in cmd]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, env=None if env is None else dict(env), cwd=cwd)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ToolNotFound(tool, f"cannot be run ({cmd[0]!r}: {reason})", hint) from None
    streams = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    outcome = "running"
    try:
        outcome = _follow(proc.pid, streams, time.monotonic() + limit)
    finally:
        # whatever happened (an exit, the limit, Ctrl-C, an error here): the
        # group dies before the leader is reaped, so its id cannot be reused yet
        _kill_group(proc.pid)
        if outcome != "flooded":
            _drain(streams, time.monotonic() + DRAIN_SECONDS)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    if outcome == "timeout":
        raise ToolTimedOut(tool, f"timed out after {limit:g} s (it and every process it started were killed)",
                           f"{hint}; a slower machine may need a higher {limit_variable(tool)}"
                           if hint else f"a slower machine may need a higher {limit_variable(tool)}", limit)
    if outcome == "flooded":
        raise ToolOutputTooLarge(tool, f"printed more than {MAX_OUTPUT_BYTES >> 20} MiB and was stopped", hint, limit)
    if proc.returncode < 0:
        raise ToolKilled(tool, f"was killed by {signal_name(-proc.returncode)}", hint, limit)
    out, err = (bytes(b).decode("utf-8", "replace") for b in streams.values())
    return Completed(tuple(cmd), proc.returncode, out, err)


def first_error_line(output: str) -> str:
    """A compiler's message in one line: its first line naming an error, else
    its first line, else "" (why a build failed, said the same way for nvcc,
    cc and kernel files)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return next((line for line in lines if re.search(r"\berror\b", line, re.IGNORECASE)),
                lines[0] if lines else "")


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _exited(pid: int) -> bool:
    """Whether the child has exited, leaving it unreaped (a zombie keeps its pid,
    and with it the group id, from being reused)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _follow(pid: int, streams: dict[int, bytearray], deadline: float) -> str:
    """Read the pipes until the leader exits ("exited"), the deadline passes
    ("timeout") or the output passes the cap ("flooded")."""
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        while True:
            if _exited(pid):
                return "exited"
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            if not selector.get_map():  # both pipes closed: only the exit is left to see
                time.sleep(min(left, _POLL_SECONDS))
                continue
            for key, _ in selector.select(min(left, _POLL_SECONDS)):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                streams[key.fd] += chunk
                if len(streams[key.fd]) > MAX_OUTPUT_BYTES:
                    return "flooded"


def _drain(streams: dict[int, bytearray], deadline: float) -> None:
    """What the dead group left in the pipes. A process that left the group
    (setsid) may hold them open: stop reading at the deadline."""
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk or len(streams[key.fd]) > MAX_OUTPUT_BYTES:
                    selector.unregister(key.fd)
                else:
                    streams[key.fd] += chunk


def _kill_group(pgid: int) -> None:
    """SIGKILL to the group ``pgid`` (a child's own), never to gemmbench's."""
    if pgid <= 1 or pgid == os.getpgrp():
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# --------------------------------------------------------------------------
# the processes a worker started
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    pgrp: int
    session: int
    state: str  # R, S, D, Z, ...
    start: int  # start time in clock ticks since boot: with pid, names one process

    @property
    def live(self) -> bool:
        return self.state not in ("Z", "X", "x")


def _stat(pid: int) -> Process | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # the name may hold spaces and parentheses
    try:
        return Process(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0], int(fields[19]))
    except (IndexError, ValueError):
        return None


def processes() -> dict[int, Process]:
    """Every process this host shows in /proc (empty where there is no /proc)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    found = {}
    for name in names:
        if name.isdigit():
            info = _stat(int(name))
            if info is not None:
                found[info.pid] = info
    return found


def has_token(pid: int, token: str) -> bool:
    """Whether ``pid`` was started with ``WORKER_TOKEN=token`` in its environment."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f"{WORKER_TOKEN}={token}".encode() in f.read().split(b"\0")
    except OSError:
        return False


WORKER_TOKEN = "GEMMBENCH_WORKER_TOKEN"


def _ancestors(table: dict[int, Process], pid: int) -> set[int]:
    seen = set()
    while pid > 0 and pid not in seen:
        seen.add(pid)
        pid = table[pid].ppid if pid in table else 0
    return seen


def strays(root: int, token: str | None, table: dict[int, Process] | None = None) -> list[Process]:
    """Live processes started under the worker ``root``: in the session or
    group named after it, descended from it, or carrying ``token``. Never
    ``root`` itself, this process or any of its ancestors. The caller must
    hold ``root``'s pid (the worker alive, or dead but not yet reaped): a
    reused pid would name someone else's group."""
    table = processes() if table is None else table
    spared = _ancestors(table, os.getpid()) | {root}
    children: dict[int, list[int]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info.pid)
    below, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in below:
                below.add(child)
                todo.append(child)
    own_group = os.getpgrp() if root != os.getpid() else None  # the caller's group is spared, unless it is root's
    found = []
    for info in table.values():
        if info.pid in spared or not info.live:
            continue
        if (info.pid in below or (root != own_group and root in (info.session, info.pgrp))
                or (token and has_token(info.pid, token))):
            found.append(info)
    return found


def kill_strays(root: int, token: str | None, seconds: float = 10.0) -> int:
    """SIGKILL every stray of ``root`` (see ``strays``) until none is left or
    ``seconds`` pass (a kernel may fork while it is being killed); the number
    of distinct processes killed. Zombies are their parents' to reap."""
    killed: set[tuple[int, int]] = set()
    deadline = time.monotonic() + seconds
    while True:
        found = strays(root, token)
        if not found or time.monotonic() > deadline:
            return len(killed)
        for info in found:
            again = _stat(info.pid)
            if again is None or again.start != info.start:
                continue  # gone, or its pid already names another process
            try:
                os.kill(info.pid, signal.SIGKILL)
                killed.add((info.pid, info.start))
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)

