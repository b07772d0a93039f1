"""One subprocess policy, tried the hostile way: every tool (cc, nvcc, ncu,
cuobjdump, nvdisasm, git) missing, hanging (with a child, ignoring SIGTERM),
killed, printing garbage or failing; and user C kernels that fork, double-fork
a daemon, close their file descriptors, kill their worker or gemmbench, or
hang. Each case asserts the exit code or error, one line and no traceback,
and that no process it started is left (found by a marker unique to the test).
No GPU needed; waits are bounded generously, only forced timeouts are short."""

import json
import os
import signal
import stat
import subprocess
import sys
import time
import uuid
from multiprocessing import resource_tracker
from pathlib import Path

import pytest

from gemmbench import cli, procs
from gemmbench import tuning
from gemmbench.cpu import build
from gemmbench.gpu import compile as gpu_compile
from gemmbench.errors import UserError
from gemmbench.inspect import asm
from gemmbench.records import results
from gemmbench.rungs import get_spec

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--warmup", "0", "--min-samples", "1", "--max-samples", "3", "--budget", "0"]
ODD = ["-m", "17", "-n", "33", "-k", "9"]
MARK = "GEMMBENCH_TEST_MARK"
GENEROUS = 60.0  # seconds a test waits for something that should happen at once
TOOLS = ("cc", "nvcc", "ncu", "cuobjdump", "nvdisasm", "git")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def leftovers(marker: str) -> list[int]:
    """Live processes (not this one) whose command line or environment holds marker."""
    hits, needle = [], marker.encode()
    for pid, info in procs.processes().items():
        if pid == os.getpid() or not info.live:
            continue
        for part in ("cmdline", "environ"):
            try:
                if needle in Path(f"/proc/{pid}/{part}").read_bytes():
                    hits.append(pid)
                    break
            except OSError:
                pass
    return hits


def assert_none_left(marker: str) -> None:
    """None now, or within GENEROUS seconds (a SIGKILLed process takes a moment to go)."""
    deadline = time.monotonic() + GENEROUS
    while leftovers(marker):
        assert time.monotonic() < deadline, f"left running: {leftovers(marker)}"
        time.sleep(0.05)


@pytest.fixture
def marker(monkeypatch):
    """A token in the environment of everything started from here on."""
    resource_tracker.ensure_running()  # multiprocessing's helper must not be started carrying it
    token = f"mark-{uuid.uuid4().hex}"
    monkeypatch.setenv(MARK, token)
    yield token
    assert_none_left(token)


def script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


# A tool that never ends: a child of its own, and SIGTERM/SIGINT ignored by both.
# It writes "ready" once both run, so a test can interrupt it at a known point.
HANGS = 'trap "" TERM INT\nsleep 1000 &\ntouch "$(dirname "$0")/ready"\nwhile :; do sleep 1; done'
BEHAVIOURS = {
    "hangs": HANGS,
    "killed": 'kill -SEGV $$',
    "garbage": "printf '\\377\\376\\000\\033[2J\\nnot text at all\\n'; head -c 3000 /dev/urandom; exit 0",
    "fails": 'echo "error: something broke" >&2; exit 3',
}


def one_line(text: str) -> bool:
    return "\n" not in text.strip() and "Traceback" not in text


# --------------------------------------------------------------------------
# procs.run, each tool under each misbehaviour
# --------------------------------------------------------------------------

@pytest.mark.parametrize("tool", TOOLS)
def test_missing_tool_is_one_line(tool, tmp_path):
    with pytest.raises(procs.ToolNotFound) as info:
        procs.run([str(tmp_path / "nowhere" / tool), "--version"], tool=tool, limit=GENEROUS, hint="install it")
    message = str(info.value)
    assert one_line(message) and message.startswith(f"{tool} cannot be run") and "install it" in message


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_that_is_not_executable_is_one_line(tool, tmp_path):
    path = tmp_path / tool
    path.write_text("#!/bin/sh\nexit 0\n")  # no execute permission
    with pytest.raises(procs.ToolNotFound, match="Permission denied") as info:
        procs.run([str(path)], tool=tool, limit=GENEROUS, hint="fix it")
    assert one_line(str(info.value))


@pytest.mark.parametrize("tool", TOOLS)
def test_hanging_tool_is_killed_whole_at_its_limit(tool, tmp_path, marker):
    path = script(tmp_path, tool, HANGS)
    started = time.monotonic()
    with pytest.raises(procs.ToolTimedOut) as info:
        procs.run([str(path)], tool=tool, limit=0.5, hint="check it")
    assert time.monotonic() - started < GENEROUS
    message = str(info.value)
    assert one_line(message) and message.startswith(f"{tool} timed out after 0.5 s")
    assert procs.limit_variable(tool) in message and info.value.limit == 0.5
    assert not leftovers(marker)  # the group died before run returned


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_killed_by_a_signal_is_one_line(tool, tmp_path, marker):
    path = script(tmp_path, tool, BEHAVIOURS["killed"])
    with pytest.raises(procs.ToolKilled) as info:
        procs.run([str(path)], tool=tool, limit=GENEROUS, hint="check it")
    assert one_line(str(info.value)) and f"{tool} was killed by SIGSEGV" in str(info.value)


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_printing_garbage_is_captured_as_text(tool, tmp_path, marker):
    path = script(tmp_path, tool, BEHAVIOURS["garbage"])
    done = procs.run([str(path)], tool=tool, limit=GENEROUS, hint="")
    assert done.returncode == 0 and "not text at all" in done.stdout and "\ufffd" in done.stdout


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_failing_is_returned_to_its_caller(tool, tmp_path, marker):
    path = script(tmp_path, tool, BEHAVIOURS["fails"])
    done = procs.run([str(path)], tool=tool, limit=GENEROUS, hint="")
    assert done.returncode == 3 and done.stderr == "error: something broke\n"


def test_stdin_is_dev_null(tmp_path):
    path = script(tmp_path, "reader", 'cat; echo "eof"')
    assert procs.run([str(path)], tool="reader", limit=GENEROUS, hint="").stdout == "eof\n"


def test_tool_runs_in_a_session_of_its_own(tmp_path):
    path = script(tmp_path, "where", "ps -o sid= -p $$")
    sid = int(procs.run([str(path)], tool="where", limit=GENEROUS, hint="").stdout)
    assert sid != os.getsid(0)


def test_what_a_tool_leaves_in_its_group_is_killed_when_it_exits(tmp_path, marker):
    path = script(tmp_path, "leaver", "sleep 1000 &\necho done")
    assert procs.run([str(path)], tool="leaver", limit=GENEROUS, hint="").stdout == "done\n"
    assert not leftovers(marker)


def test_flooding_tool_is_stopped(tmp_path, monkeypatch, marker):
    monkeypatch.setattr(procs, "MAX_OUTPUT_BYTES", 1 << 20)
    path = script(tmp_path, "flood", "yes garbage")
    with pytest.raises(procs.ToolOutputTooLarge) as info:
        procs.run([str(path)], tool="flood", limit=GENEROUS, hint="")
    assert one_line(str(info.value)) and "more than 1 MiB" in str(info.value)


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, RuntimeError])
def test_interrupt_while_a_tool_runs_kills_its_group(interrupt, tmp_path, monkeypatch, marker):
    path = script(tmp_path, "slow", HANGS)
    real = procs._exited

    def exited(pid):  # Ctrl-C (or a bug) arrives once the tool and its child both run
        if (tmp_path / "ready").exists():
            raise interrupt()
        return real(pid)
    monkeypatch.setattr(procs, "_exited", exited)
    with pytest.raises(interrupt):
        procs.run([str(path)], tool="slow", limit=GENEROUS, hint="")
    assert (tmp_path / "ready").exists() and not leftovers(marker)


def _ancestors():
    pid, seen = os.getpid(), set()
    while pid > 0 and pid not in seen:
        seen.add(pid)
        info = procs.processes().get(pid)
        pid = info.ppid if info else 0
    return seen


@pytest.mark.parametrize("root", ["pid", "ppid", "pgrp", "sid"])
def test_strays_never_name_this_process_or_its_ancestors(root):
    pid = {"pid": os.getpid(), "ppid": os.getppid(), "pgrp": os.getpgrp(), "sid": os.getsid(0)}[root]
    assert not {p.pid for p in procs.strays(pid, None)} & _ancestors()


def test_a_worker_sweeping_itself_is_spared(tmp_path, marker):
    """kill_strays from inside a session leader: its children die, it does not."""
    child = tmp_path / "sweep.py"
    child.write_text("import os, subprocess, sys\nos.setsid()\nsubprocess.Popen(['sleep', '1000'])\n"
                     "from gemmbench import procs\nprint(procs.kill_strays(os.getpid(), None))\n")
    done = subprocess.run([sys.executable, str(child)], capture_output=True, text=True, timeout=GENEROUS,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout == "1\n", done.stderr


@pytest.mark.parametrize("value", ["abc", "-1", "0", "0.0", "1e3", "\uff11\uff12", "1_0", " 5 s", "inf", "nan"])
def test_bad_limit_variable_is_one_line(value, monkeypatch):
    monkeypatch.setenv("GEMMBENCH_CC_TIMEOUT", value)
    with pytest.raises(UserError) as info:
        procs.limit("cc", 300)
    assert one_line(str(info.value)) and "GEMMBENCH_CC_TIMEOUT" in str(info.value)


@pytest.mark.parametrize("value, seconds", [("", 300.0), ("7", 7.0), ("2.5", 2.5)])
def test_limit_variable(value, seconds, monkeypatch):
    monkeypatch.setenv("GEMMBENCH_CC_TIMEOUT", value)
    assert procs.limit("cc", 300) == seconds


# --------------------------------------------------------------------------
# each tool through the code that runs it
# --------------------------------------------------------------------------

def _fake_cc(tmp_path, monkeypatch, body):
    """$CC: the real compiler for the probe, ``body`` for every other build
    (with fresh_compiler, so the probe runs again)."""
    real = os.environ.get("CC") or "cc"
    path = script(tmp_path / "bin", "fakecc",
                  f'case "$*" in *probe.c*|*--version*|*-dM*) exec {real} "$@";; esac\n{body}')
    monkeypatch.setenv("CC", str(path))
    return path


@pytest.fixture
def fresh_compiler():
    for cached in (build._probe, build._version, build._predefined_macros):
        cached.cache_clear()
    yield
    for cached in (build._probe, build._version, build._predefined_macros):
        cached.cache_clear()


def run_cli(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, *fragments):
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("gemmbench: error: ") and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err


KERNEL_HEADER = "/* gemmbench kernel\n * name: {name}\n */\n#include <unistd.h>\n#include <signal.h>\n"
SIGNATURE = "void sgemm(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C)"
NAIVE = """
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int p = 0; p < K; p++) s += A[(long)i * K + p] * B[(long)p * N + j];
            C[(long)i * N + j] = beta == 0.0f ? alpha * s : alpha * s + beta * C[(long)i * N + j];
        }
"""


def kernel(tmp_path, name, before="", after=""):
    """A correct naive kernel with hostile code before and after its loops."""
    path = tmp_path / f"{name.replace(' ', '_')}.c"
    path.write_text(KERNEL_HEADER.format(name=name) + SIGNATURE + " {\n" + before + NAIVE + after + "}\n")
    return path


@pytest.mark.parametrize("behaviour", ["hangs", "killed"])
def test_compiler_that_misbehaves_on_a_real_build_is_one_line(behaviour, tmp_path, monkeypatch, capsys, marker,
                                                              fresh_compiler):
    _fake_cc(tmp_path, monkeypatch, BEHAVIOURS[behaviour])
    monkeypatch.setattr(build, "COMPILE_SECONDS", 2.0)  # the build's limit alone: the probe keeps its own
    path = kernel(tmp_path, "plain")
    code, out, err = run_cli(capsys, "run", "--device", "cpu", "--kernel-file", path, *ODD, *FAST, "--no-save")
    fragment = "timed out after 2 s" if behaviour == "hangs" else "killed by SIGSEGV"
    assert_one_line_error(code, err, str(path), fragment, "fakecc")


def test_compiler_that_always_hangs_is_one_line_at_its_limit(tmp_path, monkeypatch, capsys, marker, fresh_compiler):
    path = script(tmp_path / "bin", "hangcc", HANGS)
    monkeypatch.setenv("CC", str(path))
    monkeypatch.setenv("GEMMBENCH_CC_TIMEOUT", "1")
    code, out, err = run_cli(capsys, "run", "--device", "cpu", "-i", "1", *ODD, *FAST, "--no-save")
    assert_one_line_error(code, err, "hangcc", "cannot build a shared library", "timed out after 1 s",
                          "GEMMBENCH_CC_TIMEOUT")


@pytest.fixture
def silent_stdin():
    """fd 0 a pipe nobody writes to: whatever reads it waits forever."""
    read, write = os.pipe()
    saved = os.dup(0)
    os.dup2(read, 0)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read, write):
            os.close(fd)


def test_kernel_file_including_dev_stdin_does_not_wait(tmp_path, capsys, marker, silent_stdin):
    path = tmp_path / "stdin.c"
    path.write_text(KERNEL_HEADER.format(name="stdin") + '#include "/dev/stdin"\n' + SIGNATURE + " {" + NAIVE + "}\n")
    code, out, err = run_cli(capsys, "run", "--device", "cpu", "--kernel-file", path, *ODD, *FAST, "--no-save")
    assert code == 0 and "Traceback" not in err  # the compiler read an empty file


def test_kernel_reading_stdin_does_not_wait(tmp_path, capsys, marker, silent_stdin):
    code, out, err = run_kernel(capsys, kernel(tmp_path, "reads stdin", "    char c; while (read(0, &c, 1) > 0) {}\n"))
    assert code == 0 and kernel_row(out)["status"] == "pass"


@pytest.mark.parametrize("tool", ["nvcc", "cuobjdump"])
def test_hanging_asm_tool_is_one_line(tool, tmp_path, monkeypatch, capsys, marker):
    folder = tmp_path / "bin"
    script(folder, tool, HANGS)
    if tool == "cuobjdump":  # nvcc must get as far as the disassembler: a cubin of nothing
        script(folder, "nvcc", 'while [ "$1" != "-o" ]; do shift; done; echo cubin > "$2"')
    else:  # SASS needs a disassembler before nvcc runs; this one is never reached
        script(folder, "cuobjdump", "exit 0")
    monkeypatch.setattr(asm, "find_tool", lambda name: str(folder / name) if (folder / name).exists() else None)
    monkeypatch.setenv(procs.limit_variable(tool), "1")
    code, out, err = run_cli(capsys, "asm", "-i", "3", "--arch", "sm_80")
    assert_one_line_error(code, err, f"{tool} timed out after 1 s")


# the nvcc that builds the GPU ladder's cubins (no GPU needed to build)
@pytest.fixture
def fake_nvcc(tmp_path, monkeypatch):
    """Put a fake nvcc first on PATH; returns a function that writes its body."""
    folder = tmp_path / "bin"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return lambda body: script(folder, "nvcc", body)


@pytest.mark.parametrize("behaviour", ["hangs", "killed"])
def test_nvcc_that_misbehaves_on_a_rung_build_is_one_line(behaviour, fake_nvcc, monkeypatch, marker):
    fake_nvcc(BEHAVIOURS[behaviour])
    monkeypatch.setenv("GEMMBENCH_NVCC_TIMEOUT", "1")
    with pytest.raises(procs.ToolError) as caught:
        gpu_compile.cubin(get_spec("gpu", 3), (9, 0))
    message = str(caught.value)
    assert one_line(message) and message.startswith("nvcc ")
    assert ("timed out after 1 s" if behaviour == "hangs" else "killed by SIGSEGV") in message


def test_nvcc_refusing_a_source_is_a_compile_error_with_its_output(fake_nvcc, marker):
    fake_nvcc('echo "kernel.cu(3): warning: unused" >&2\n'
              'echo "kernel.cu(7): error: identifier x_ is undefined" >&2; exit 2')
    with pytest.raises(gpu_compile.CompileError) as caught:
        gpu_compile.cubin(get_spec("gpu", 3), (9, 0))
    assert str(caught.value) == "nvcc failed: kernel.cu(7): error: identifier x_ is undefined"
    assert "warning: unused" in caught.value.stderr


def test_a_tune_candidate_whose_nvcc_hangs_is_not_compiled_and_the_rest_go_on(fake_nvcc, monkeypatch, marker):
    fake_nvcc('case "$*" in *BM=64*)\n' + HANGS + '\n;; esac\n'
              'while [ "$1" != "-o" ]; do shift; done; echo cubin > "$2"')
    monkeypatch.setenv("GEMMBENCH_NVCC_TIMEOUT", "1")
    spec = get_spec("gpu", 6)
    found = [{**spec.params, "BM": 64}, {**spec.params, "BM": 128}]
    outcome = dict((p["BM"], why) for p, why in tuning.compile_candidates(spec, (9, 0), found, jobs=2))
    assert outcome[128] is None and outcome[64].startswith("nvcc timed out after 1 s")


def test_no_nvcc_stops_a_tune_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    spec = get_spec("gpu", 6)
    with pytest.raises(UserError, match="^nvcc is not on PATH"):
        list(tuning.compile_candidates(spec, (9, 0), [dict(spec.params)]))


def test_hanging_ncu_is_one_line(tmp_path, monkeypatch, capsys, marker):
    script(tmp_path / "bin", "ncu", HANGS)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GEMMBENCH_NCU_TIMEOUT", "1")
    code, out, err = run_cli(capsys, "profile", "-i", "12", "--results-dir", tmp_path / "res")
    lines = err.splitlines()  # a progress note, then the one-line error
    assert code == 2 and lines[-1].startswith("gemmbench: error: ncu timed out after 1 s") and "Traceback" not in err


@pytest.mark.parametrize("behaviour", ["hangs", "killed", "garbage", "fails"])
def test_git_that_misbehaves_leaves_the_commit_out(behaviour, tmp_path, monkeypatch, marker):
    script(tmp_path / "bin", "git", BEHAVIOURS[behaviour])
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GEMMBENCH_GIT_TIMEOUT", "1")
    repo = tmp_path / "repo"
    (repo / "gemmbench" / "records").mkdir(parents=True)
    (repo / ".git").mkdir()
    monkeypatch.setattr(results, "__file__", str(repo / "gemmbench" / "records" / "results.py"))
    assert results.git_commit() is None


def test_git_never_prompts(tmp_path, monkeypatch):
    script(tmp_path / "bin", "git", 'echo "$GIT_TERMINAL_PROMPT$GIT_OPTIONAL_LOCKS" > "$(dirname "$0")/seen"; exit 1')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    repo = tmp_path / "repo"
    (repo / "gemmbench" / "records").mkdir(parents=True)
    (repo / ".git").mkdir()
    monkeypatch.setattr(results, "__file__", str(repo / "gemmbench" / "records" / "results.py"))
    assert results.git_commit() is None and (tmp_path / "bin" / "seen").read_text() == "00\n"


# --------------------------------------------------------------------------
# user kernels that start processes, close descriptors, kill
# --------------------------------------------------------------------------

FORKS = "    for (int n = 0; n < 3; n++) if (fork() == 0) { sleep(1000); _exit(0); }\n"
DAEMON = """    if (fork() == 0) {  /* a daemon: its own session, an empty environment, reparented */
        setsid();
        if (fork() == 0) { char *env[] = {0}; execle("/bin/sh", "sh", "-c", "sleep 1000; : MARKER", (char *)0, env); }
        _exit(0);
    }
"""
KILLS_WORKER = "    if (fork() == 0) { kill(getppid(), SIGKILL); sleep(1000); _exit(0); }\n    sleep(1000);\n"
CLOSES_FDS = "    for (int fd = 0; fd < 1024; fd++) close(fd);\n"
CLOSES_STDIO = "    close(0); close(1); close(2);\n"
HANGS_WITH_CHILD = "    if (fork() == 0) { sleep(1000); _exit(0); }\n    for (volatile int spin = 1; spin;) {}\n"
RETURNS_IN_CHILD = "    fork();\n"  # the child returns into the worker's Python
PRINTS = '    write(1, "\\033[2Jgarbage{\\n", 12); write(2, "noise\\n", 6);\n'


def run_kernel(capsys, path, *extra):
    return run_cli(capsys, "run", "--device", "cpu", "--kernel-file", path, *ODD, *FAST, "--no-save", "--json",
                   *extra)


def kernel_row(out):
    rows = [r for r in json.loads(out)["results"] if r["kernel_id"] < 0]
    assert len(rows) == 1
    return rows[0]


@pytest.mark.parametrize("name, before, after, left", [
    ("forks", FORKS, "", True),
    ("forks after", "", FORKS, True),
    ("daemon", DAEMON, "", True),
    ("returns in child", RETURNS_IN_CHILD, "", False),
])
def test_kernel_that_starts_processes_fails_saying_so_and_none_survive(name, before, after, left, tmp_path, capsys,
                                                                       marker):
    path = kernel(tmp_path, name, before.replace("MARKER", marker), after)
    code, out, err = run_kernel(capsys, path)
    assert "Traceback" not in err
    row = kernel_row(out)
    if left:
        assert code == 1 and row["status"] == "fail", row
        count = row["notes"]["left_processes"]
        assert count >= 1 and row["reason"] == f"left {count} process{'es' if count > 1 else ''} running: killed"
        assert row["samples_s"] == [] and row["verification"]["passed"]
    else:  # the forked copy exits at once, before it can speak for the worker
        assert row["status"] in ("pass", "fail") and "\n" not in (row["reason"] or "")
    assert_none_left(marker)


def test_worker_runs_in_a_session_of_its_own(tmp_path, capsys, marker):
    # a kernel that is correct only when it leads its own session
    code, out, err = run_kernel(capsys, kernel(tmp_path, "session", "    if (getsid(0) != getpid()) return;\n"))
    assert code == 0 and kernel_row(out)["status"] == "pass", err


def test_kernel_that_kills_its_worker_fails_and_its_child_is_killed(tmp_path, capsys, marker):
    code, out, err = run_kernel(capsys, kernel(tmp_path, "kills worker", KILLS_WORKER))
    row = kernel_row(out)
    assert code == 1 and "Traceback" not in err
    assert row["reason"] == "crashed: killed by SIGKILL; left 1 process running: killed", row


def test_kernel_that_closes_every_descriptor_is_one_quiet_fail_row(tmp_path, capsys, marker):
    code, out, err = run_kernel(capsys, kernel(tmp_path, "closes fds", CLOSES_FDS))
    row = kernel_row(out)
    assert code == 1 and row["reason"] == "crashed: its pipe to gemmbench was closed (by the kernel?)"
    assert "Traceback" not in err and err.strip() == ""


def test_kernel_that_closes_stdio_passes_quietly(tmp_path, capsys, marker):
    code, out, err = run_kernel(capsys, kernel(tmp_path, "closes stdio", CLOSES_STDIO))
    assert code == 0 and kernel_row(out)["status"] == "pass" and "Traceback" not in err


def test_kernel_output_stays_out_of_the_json(tmp_path, capsys, marker):
    code, out, err = run_kernel(capsys, kernel(tmp_path, "prints", PRINTS))
    assert code == 0 and kernel_row(out)["status"] == "pass"  # stdout is the record alone


def test_hanging_kernel_with_a_child_times_out_and_both_are_killed(tmp_path, capsys, marker):
    code, out, err = run_kernel(capsys, kernel(tmp_path, "hangs", HANGS_WITH_CHILD), "--kernel-timeout", "1")
    row = kernel_row(out)
    assert code == 1 and "Traceback" not in err
    assert row["reason"].startswith("timed out: a call ran over 1 s") and row["notes"]["left_processes"] == 1, row


def _gemmbench(marker_value, *args):
    """gemmbench in a process of its own (the kernel kills it), bounded."""
    env = {**os.environ, MARK: marker_value,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "gemmbench", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=ROOT, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("sig, code", [("SIGKILL", -signal.SIGKILL), ("SIGTERM", 128 + signal.SIGTERM)])
def test_kernel_that_kills_gemmbench_leaves_no_worker_and_no_traceback(sig, code, tmp_path, marker):
    body = f"    if (fork() == 0) {{ sleep(1000); _exit(0); }}\n    kill(getppid(), {sig});\n    sleep(1000);\n"
    done = _gemmbench(marker, "run", "--device", "cpu", "--kernel-file", kernel(tmp_path, "kills gemmbench", body),
                      *ODD, *FAST, "--no-save")
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    if sig == "SIGTERM":
        assert done.stderr.strip().splitlines()[-1] == "gemmbench: interrupted by SIGTERM"
    assert_none_left(marker)  # the worker saw its parent go, killed the child and left
