"""The live table of a run on a terminal (output/live.py, Reporter.progress):
rows drawn as they land, by the code that draws the final table, erased
before it; nothing of it where it does not apply (pipes, NO_COLOR,
TERM=dumb, markdown, CSV, JSON), and a clean stop on Ctrl-C. Fake results
stand in for the kernels where the bytes must be the same twice; the
terminal tests run the real command in a pseudo-terminal and assert on the
order of what it wrote, never on times."""

import io
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import fcntl
import time

import pytest
from rich.console import Console

from gemmbench import cli, commands
from gemmbench.backend import Shape
from gemmbench.execute.interrupts import Interrupted
from gemmbench.options import RunOptions
from gemmbench.output import live, report
from gemmbench.output.report import Reporter
from gemmbench.records.results import KernelResult, RunRecord
from gemmbench.verify import Verification

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SHOW_CURSOR, HIDE_CURSOR = "\x1b[?25h", "\x1b[?25l"
FAST = ["--budget", "0", "--warmup", "0", "--min-samples", "1", "--max-samples", "1"]
COMPARE = ["compare", "--device", "cpu", "-m", "16", "-n", "16", "-k", "16", "-i", "0", "-i", "1", "-i", "2",
           "--no-save"]


def plain(text: str) -> str:
    """What a terminal shows of ``text``'s characters (escape codes and carriage returns out)."""
    return ANSI.sub("", text).replace("\r", "")


def result(kid: int, name: str, shape=Shape(64, 64, 64)) -> KernelResult:
    return KernelResult("cpu", kid, name, "fp32", shape, "pass", threads=1,
                        verification=Verification(1e-7, 1e-5, 0), samples=[1e-4 * (kid + 1)] * 3)


def cpu_record(command="compare") -> RunRecord:
    return RunRecord(command, "cpu", {"seed": 0}, {"cpu": {"cpu": "Test CPU", "cores": 2}})


def terminal_reporter(width=120, height=40, **kw) -> Reporter:
    reporter = Reporter("table", live_rows=True, **kw)
    reporter.out = Console(file=io.StringIO(), force_terminal=True, width=width, height=height, highlight=False)
    reporter.err = Console(file=io.StringIO(), force_terminal=True, width=width, height=height, highlight=False)
    return reporter


def fake_results(monkeypatch):
    """Kernels that 'run' instantly with fixed figures (nothing compiled or timed): two runs print the same bytes."""
    import gemmbench.execute.local as local

    def run_entry(entry, problem, passes, plan):
        spec = entry.spec
        return KernelResult(entry.backend.device, spec.id, spec.name, spec.precision, problem.shape, "pass",
                            threads=1, verification=Verification(1e-7, 1e-5, 0), samples=[1e-4 * (spec.id + 1)] * 3)
    monkeypatch.setattr(local, "run_entry", run_entry)
    monkeypatch.setattr(local, "recheck_baselines", lambda rows, plan, on_update: None)


# --------------------------------------------------------------------------
# the live view itself, on rich consoles that are terminals
# --------------------------------------------------------------------------

def test_each_row_is_drawn_as_it_lands_by_the_final_tables_code(monkeypatch):
    monkeypatch.setattr(live, "COST_FACTOR", 0.0)  # a draw for every row
    reporter = terminal_reporter()
    record = cpu_record()
    names = ["OpenBLAS", "naive", "reorder"]
    frames = []
    with reporter.progress(len(names), "compare", record) as advance:
        for kid, name in enumerate(names):
            seen = len(reporter.err.file.getvalue())
            record.results.append(result(kid, name))
            advance(f"{name} 64x64x64")
            frames.append(plain(reporter.err.file.getvalue()[seen:]))
    for kid, frame in enumerate(frames):
        assert "gemmbench compare · 64x64x64" in frame  # the table's title, drawn with the row
        for other, name in enumerate(names):
            assert (f"{name} [1T]" in frame) == (other <= kid)  # the rows so far, none to come
    assert f"{len(names)}/{len(names)}" in frames[-1]  # the progress line under the table

    erased = reporter.err.file.getvalue()
    assert erased.rindex(SHOW_CURSOR) > erased.rindex(HIDE_CURSOR)  # stopped: the cursor is back
    assert erased.endswith("\x1b[2K")  # transient: its lines are erased (the final table replaces it)

    # the last frame's table is the final table, line for line
    reporter.show_results(record)
    final = [line.rstrip() for line in plain(reporter.out.file.getvalue()).splitlines()]
    table = final[final.index(next(line for line in final if "gemmbench compare ·" in line)):]
    last = [line.rstrip() for line in frames[-1].splitlines()]
    start = last.index(table[0])
    assert last[start:start + 5] == table[:5] and all(line in last for line in table if "[1T]" in line)


@pytest.mark.parametrize("command", ["compare", "sizes", "tune"])
def test_the_live_tables_are_the_tables_the_command_prints(command):
    from gemmbench.output.runs import show_record
    from gemmbench.output.table import record_tables
    record = cpu_record(command)
    record.options["top"] = 1
    shapes = [Shape(64, 64, 64), Shape(128, 128, 128)] if command == "sizes" else [Shape(64, 64, 64)]
    for shape in shapes:
        record.results += [result(0, "OpenBLAS", shape), result(1, "naive", shape), result(2, "reorder", shape)]
    console = Console(file=io.StringIO(), width=150, color_system=None)
    for table in record_tables(record, console):
        console.print(table)
    reporter = terminal_reporter(width=150)
    show_record(reporter, record)
    drawn, printed = plain(console.file.getvalue()), plain(reporter.out.file.getvalue())
    assert drawn.strip() and drawn.strip() in printed
    assert ("reorder [1T]" in drawn) == (command != "tune")  # tune: the library row, then the --top 1 fastest


# Where a live display rubs out its last frame to draw the next (cursor up a line, erase it, ...).
_NEXT_FRAME = re.compile(r"\r?(?:\x1b\[2K\x1b\[1A)+\x1b\[2K")


def frames(text: str) -> list[list[str]]:
    """The frames drawn in ``text``, each as the lines a terminal shows."""
    return [plain(part).splitlines() for part in _NEXT_FRAME.split(text) if plain(part).strip()]


def test_a_table_taller_than_the_screen_keeps_its_heading_and_the_newest_rows(monkeypatch):
    monkeypatch.setattr(live, "COST_FACTOR", 0.0)
    reporter = terminal_reporter(height=14)
    record = cpu_record()
    with reporter.progress(30, "compare", record) as advance:
        for kid in range(30):
            seen = len(reporter.err.file.getvalue())
            record.results.append(result(kid, f"kernel{kid:02d}"))
            advance("")
            # the row's frame, and any the refresh thread drew meanwhile (a loaded machine lets it in)
            drawn = frames(reporter.err.file.getvalue()[seen:])
            assert drawn and all(len(f) <= 14 for f in drawn), drawn
            frame = drawn[-1]
    assert any("gemmbench compare" in line for line in frame) and any("max rel err" in line for line in frame)
    assert any("earlier lines hidden" in line for line in frame)
    assert any("kernel29" in line for line in frame) and not any("kernel05" in line for line in frame)


CASES = {
    "markdown": dict(fmt="markdown"),
    "csv": dict(fmt="csv"),
    "json or the API": dict(live_rows=False),
    "quiet": dict(quiet=True),
    "NO_COLOR": dict(env=("NO_COLOR", "1")),
    "TERM=dumb": dict(env=("TERM", "dumb")),
    "stdout piped": dict(out_terminal=False),
    "stderr piped": dict(err_terminal=False),
}


@pytest.mark.parametrize("case", CASES)
def test_no_live_table_where_it_does_not_apply(case, monkeypatch):
    given = CASES[case]
    if "env" in given:
        monkeypatch.setenv(*given["env"])
    reporter = terminal_reporter()
    reporter.fmt = given.get("fmt", "table")
    reporter.quiet = given.get("quiet", False)
    reporter.live_rows = given.get("live_rows", True)
    for stream in ("out", "err"):
        if not given.get(f"{stream}_terminal", True):
            setattr(reporter, stream, Console(file=io.StringIO(), width=120))
    monkeypatch.setattr(report, "LiveRows", lambda *a: pytest.fail("a live table was started"))
    record = cpu_record()
    with reporter.progress(2, "compare", record) as advance:
        for kid in range(2):
            record.results.append(result(kid, "naive"))
            advance("naive 64x64x64")
    assert "naive [1T]" not in reporter.err.file.getvalue()


def test_an_interrupted_run_stops_the_live_table_before_its_final_table(monkeypatch):
    """Stopped by a signal mid-run: the live view is gone (the streams are
    given back, nothing is left on the console) and the table of what
    finished prints on stdout."""
    import gemmbench.execute.local as local
    monkeypatch.setattr(live, "COST_FACTOR", 0.0)
    fake_results(monkeypatch)
    real, calls = local.run_entry, []

    def run_entry(*args):
        if len(calls) == 2:
            raise Interrupted(signal.SIGINT)
        calls.append(1)
        return real(*args)
    monkeypatch.setattr(local, "run_entry", run_entry)
    streams = sys.stdout, sys.stderr
    reporter = terminal_reporter()
    code = commands.benchmark(RunOptions(command="compare", device="cpu", m=16, n=16, k=16, kernels=(0, 1, 2),
                                         no_save=True), reporter=reporter)
    assert code == 130 and (sys.stdout, sys.stderr) == streams
    assert not reporter.err._live_stack
    err = reporter.err.file.getvalue()
    assert "naive [1T]" in plain(err) and err.rindex(SHOW_CURSOR) > err.rindex(HIDE_CURSOR)
    out = plain(reporter.out.file.getvalue())
    assert "INCOMPLETE: interrupted by SIGINT after 2 of 3 kernels" in out and "naive [1T]" in out
    assert "loop reorder" not in out


# --------------------------------------------------------------------------
# the bytes of piped output are those of the same run without the live path
# --------------------------------------------------------------------------

VARIANTS = {
    "table": ([], {}),
    "markdown": (["--format", "markdown"], {}),
    "csv": (["--format", "csv"], {}),
    "json": (["--json"], {}),
    "NO_COLOR": ([], {"NO_COLOR": "1"}),
    "TERM=dumb": ([], {"TERM": "dumb"}),
}


def _run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, re.sub(r'"created": "[^"]*"', '"created": ""', out), err


@pytest.mark.parametrize("variant", VARIANTS)
def test_piped_output_is_byte_for_byte_the_same(variant, capsys, monkeypatch):
    args, env = VARIANTS[variant]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    fake_results(monkeypatch)
    with_live = _run(COMPARE + args, capsys)
    monkeypatch.setattr(Reporter, "_live_table", lambda self: False)  # the live path disabled
    without = _run(COMPARE + args, capsys)
    assert with_live == without
    assert with_live[0] == 0 and "naive" in with_live[1] and "loop reorder" in with_live[1]


@pytest.mark.parametrize("variant", VARIANTS)
def test_stdout_is_the_same_where_rich_sees_terminals(variant, capsys, monkeypatch):
    """TTY_COMPATIBLE=1 makes rich treat both streams as terminals: the live
    table shows (on stderr) where it applies, and stdout is still byte for
    byte that of the run without it."""
    args, env = VARIANTS[variant]
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(live, "COST_FACTOR", 0.0)
    fake_results(monkeypatch)
    code, out, err = _run(COMPARE + args, capsys)
    monkeypatch.setattr(Reporter, "_live_table", lambda self: False)
    without = _run(COMPARE + args, capsys)
    assert (code, out) == without[:2]
    assert ("gemmbench compare ·" in plain(err)) == (variant == "table")  # drawn only for a plain table


# --------------------------------------------------------------------------
# a real terminal: the command in a pseudo-terminal
# --------------------------------------------------------------------------

def _in_terminal(argv, interrupt_after=None, rows=30, columns=150, limit=300.0):
    """Run ``argv`` with a pseudo-terminal as its stdin, stdout and stderr;
    send Ctrl-C once ``interrupt_after`` has been written. Returns the exit
    code and all it wrote. ``limit`` only keeps a broken run from hanging
    the suite."""
    # os.environ, not the process's own environment: readline (imported by some test tool) may have
    # put COLUMNS and LINES there, and they would override the terminal's size
    env = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES")}
    pid, fd = pty.fork()
    if pid == 0:  # the child: its terminal's size set before it can be read, then exec
        try:
            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
            os.execve(sys.executable, [sys.executable, *argv], env)
        finally:
            os._exit(127)
    written, sent = b"", False
    end = time.monotonic() + limit
    try:
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            written += chunk
            if interrupt_after and not sent and interrupt_after in plain(written.decode(errors="replace")):
                os.write(fd, b"\x03")  # Ctrl-C, as typed: the terminal sends SIGINT
                sent = True
        else:
            os.kill(pid, signal.SIGKILL)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return os.waitstatus_to_exitcode(status), written.decode(errors="replace")


def _env_for_terminal(monkeypatch):
    for name in ("NO_COLOR", "TTY_COMPATIBLE", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def test_rows_appear_in_a_real_terminal_before_the_run_ends(monkeypatch):
    _env_for_terminal(monkeypatch)
    code, written = _in_terminal(["-m", "gemmbench", "compare", "--device", "cpu", "-m", "64", "-n", "64", "-k", "64",
                                  "-i", "0", "-i", "1", "--no-save"])
    assert code == 0, written
    stop = written.rindex(SHOW_CURSOR)  # the live view ends here; the final output follows
    during, after = plain(written[:stop]), plain(written[stop:])
    # the first row was drawn on its own, in a table, before the second landed
    first = during.index("OpenBLAS [1T]")
    assert "gemmbench compare · 64x64x64" in during[:first] and "naive" not in during[:first]
    # then the live view was erased, and the final table printed once, as ever
    assert re.match(r"\r?(\x1b\[1A\x1b\[2K)+", written[stop + len(SHOW_CURSOR):])
    assert after.count("gemmbench compare · 64x64x64") == 1 and after.count("naive [1T]") == 1
    assert after.index("CPU ") < after.index("gemmbench compare ·") < after.index("OpenBLAS [1T]") \
        < after.index("naive [1T]") < after.index("Timed with alpha=1")


SLOW_SECOND_ROW = """
import sys, time
import gemmbench.execute.local as local
real = local.run_entry
calls = []
def run_entry(*args):
    calls.append(1)
    if len(calls) == 2:  # the second row never ends: only Ctrl-C stops the run
        while True:
            time.sleep(60)
    return real(*args)
local.run_entry = run_entry
from gemmbench.__main__ import main
sys.argv[0] = "gemmbench"
sys.exit(main())
"""


def test_ctrl_c_during_the_live_table_prints_what_finished_and_exits_130(monkeypatch):
    _env_for_terminal(monkeypatch)
    code, written = _in_terminal(["-c", SLOW_SECOND_ROW, "sizes", "--device", "cpu", "--sweep", "16,32,48", "-i", "0",
                                  *FAST, "--no-save"], interrupt_after="0 OpenBLAS [1T]")
    assert code == 130, written
    assert written.rindex(SHOW_CURSOR) > written.rindex(HIDE_CURSOR)  # the cursor is shown again
    after = plain(written[written.rindex(SHOW_CURSOR):])
    assert "INCOMPLETE: interrupted by SIGINT after 1 of 3 kernels" in after
    assert after.count("gemmbench sizes ·") == 1 and "0 OpenBLAS [1T]" in after
    assert after.rstrip().endswith("gemmbench: interrupted by SIGINT")
