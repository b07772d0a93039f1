"""Faults while saving, with the real CLI in a subprocess: signals at random
(seeded) points, a full disk, a read-only results directory. Whatever
happens, every results/*.json is complete JSON and says if it is incomplete."""

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gemmbench import cli
from gemmbench.records.writer import RECOVERED

FAST = ["--budget", "0", "--warmup", "0", "--min-samples", "1", "--max-samples", "1"]
# many tiny sizes, OpenBLAS only: each row takes milliseconds and nothing is compiled
SWEEP = ["sizes", "--device", "cpu", "--sweep", "1..400:1", "-i", "0", *FAST]


def _block_signals():
    """Hold SIGINT and SIGTERM blocked across exec: CPython's own start-up
    (before gemmbench's first line) is outside gemmbench's control, so a
    signal sent then waits and is delivered when gemmbench unblocks it, at
    its first instruction, with its handlers in place."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def start(tmp_path, args, preexec_fn=None, **kw):
    env = {**os.environ, "GEMMBENCH_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "200"}

    def before_exec():
        _block_signals()
        if preexec_fn:
            preexec_fn()
    return subprocess.Popen([sys.executable, "-m", "gemmbench", *args, "--results-dir", str(tmp_path / "results")],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=before_exec, **kw)


def records(tmp_path) -> dict[Path, dict]:
    """Every *.json in the results dir, parsed (fails the test if one is not JSON)."""
    folder = tmp_path / "results"
    return {p: json.loads(p.read_text()) for p in folder.glob("*.json")} if folder.exists() else {}


def wait_for_first_record(tmp_path, proc, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if records(tmp_path):
            return True
        time.sleep(0.01)
    return False


def visible_files(tmp_path):
    folder = tmp_path / "results"
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) if folder.exists() else []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("trial", range(3))
def test_interrupt_at_a_random_point_saves_an_incomplete_record(tmp_path, signum, trial):
    rng = random.Random(1000 * signum + trial)
    proc = start(tmp_path, SWEEP)
    if trial:  # after some rows; trial 0 interrupts as early as it can
        assert wait_for_first_record(tmp_path, proc)
        time.sleep(rng.uniform(0, 0.5))
    else:
        time.sleep(rng.uniform(0, 0.3))
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    saved = records(tmp_path)
    assert all(p.suffix == ".json" for p in map(Path, visible_files(tmp_path)))
    assert not list((tmp_path / "results").glob(".*.tmp-*"))  # no temp file left
    if proc.returncode == 0:  # the sweep won the race
        assert all(r["complete"] for r in saved.values())
        return
    assert proc.returncode == 128 + signum, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"gemmbench: interrupted by {signum.name}") \
        or "gemmbench: interrupted" in err
    if saved:
        (path, data), = saved.items()
        assert data["complete"] is False and data["incomplete_reason"].startswith(f"interrupted by {signum.name}")
        assert f"saved {path.relative_to(tmp_path)}" in err or f"saved {path}" in err
        assert "gemmbench sizes" in out and len(data["results"]) >= 1  # the table of what finished
        assert not list((tmp_path / "results").glob(".*.journal"))


def test_signals_at_50_random_moments_of_the_first_second(tmp_path):
    """Every moment of a command's first second (imports, option parsing, the
    pre-run checks, the first rows): a signal ends it with 130/143 and one
    line, or it had finished (0); never a traceback, never a broken file.
    Five commands run at a time, so the 50 trials fit in a few seconds of wall
    time; each one's moment is drawn from a seeded generator."""
    rng = random.Random(50)
    command = ["run", "--device", "cpu", "-i", "1", "-m", "24", "-n", "24", "-k", "24", *FAST]
    trials = [(i, rng.choice((signal.SIGINT, signal.SIGTERM)), rng.uniform(0.0, 1.0)) for i in range(50)]
    for batch in range(0, len(trials), 5):
        running = []
        for i, signum, moment in trials[batch:batch + 5]:
            folder = tmp_path / f"t{i}"
            folder.mkdir()
            running.append((folder, signum, moment, time.monotonic(), start(folder, command)))
        for folder, signum, moment, began, proc in sorted(running, key=lambda t: t[2]):
            time.sleep(max(0.0, began + moment - time.monotonic()))
            if proc.poll() is None:
                proc.send_signal(signum)
        for folder, signum, moment, began, proc in running:
            out, err = proc.communicate(timeout=120)
            where = f"{signum.name} at {moment:.3f} s: exit {proc.returncode}: {err}"
            assert proc.returncode in (0, 128 + signum), where
            assert "Traceback" not in err and "Error" not in err.replace("gemmbench: error", ""), where
            if proc.returncode:
                assert err.strip().splitlines()[-1].startswith(f"gemmbench: interrupted by {signum.name}"), where
            assert all(isinstance(data, dict) for data in records(folder).values())  # whole JSON or nothing
            assert not list((folder / "results").glob(".*.tmp-*")) if (folder / "results").exists() else True


@pytest.mark.parametrize("trial", range(3))
def test_sigkill_leaves_valid_json_and_a_later_run_recovers_the_rest(tmp_path, trial):
    rng = random.Random(9 + trial)
    proc = start(tmp_path, SWEEP)
    assert wait_for_first_record(tmp_path, proc)
    end = time.monotonic() + rng.uniform(0, 1.0)
    while time.monotonic() < end:  # every *.json parses at every instant we look
        records(tmp_path)
    proc.kill()
    proc.wait(timeout=30)
    before = records(tmp_path)
    assert len(before) == 1
    (path, data), = before.items()
    if data["complete"]:
        return  # finished before the kill
    journals = list((tmp_path / "results").glob(".*.journal"))
    assert len(journals) == 1
    rows_in_journal = len(journals[0].read_text().splitlines()) - 1
    later = start(tmp_path, ["run", "--device", "cpu", "-i", "0", "-m", "2", "-n", "2", "-k", "2", *FAST])
    out, err = later.communicate(timeout=120)
    assert later.returncode == 0, err
    assert f"recovered {path.relative_to(tmp_path)}" in err or f"recovered {path}" in err
    recovered = json.loads(path.read_text())
    assert recovered["complete"] is False and recovered["incomplete_reason"] == RECOVERED
    assert len(recovered["results"]) >= rows_in_journal - 1 and len(recovered["results"]) >= len(data["results"])
    assert not list((tmp_path / "results").glob(".*.journal")) and len(records(tmp_path)) == 2
    assert not list((tmp_path / "results").glob(".*.tmp-*"))  # a snapshot the kill cut short is cleared too


def _full_disk(limit):
    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    return limit_file_size


def test_full_disk_mid_run_is_one_error_line_after_the_rows_that_ran(tmp_path):
    proc = start(tmp_path, SWEEP[:4] + ["1..60:1"] + SWEEP[5:], preexec_fn=_full_disk(20_000))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert err.count("\n") == 1 and err.startswith("gemmbench: error: could not save ")
    assert "File too large" in err and "Traceback" not in err
    assert "gemmbench sizes" in out  # the rows that ran are shown
    for data in records(tmp_path).values():  # whatever was saved is whole JSON, marked incomplete
        assert data["complete"] is False
    assert all(name.endswith(".json") for name in visible_files(tmp_path))
    assert not list((tmp_path / "results").glob(".*.tmp-*"))


def test_unwritable_results_dir_is_refused_before_any_kernel(capsys, tmp_path):
    (tmp_path / "file").write_text("x")
    for target in (tmp_path / "file" / "results", Path("/proc/gemmbench-results")):
        code = cli.main(["run", "--device", "cpu", "-i", "1", "-m", "8", "-n", "8", "-k", "8", *FAST,
                         "--results-dir", str(target)])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err.startswith(f"gemmbench: error: --results-dir {target}")
    assert os.listdir(tmp_path) == ["file"]


def test_results_dir_turning_read_only_mid_run(capsys, tmp_path, monkeypatch):
    """After three rows every write fails as on a read-only mount (chmod does
    not stop root, so the failure is injected at the writer's two writes)."""
    import errno
    import gemmbench.records.writer as recordfile
    calls = {"n": 0}
    real_write, real_atomic = recordfile.RecordWriter._write, recordfile.write_atomic

    def failing(real):
        def write(*args):
            if calls["n"] >= 3:
                raise OSError(errno.EROFS, os.strerror(errno.EROFS))
            return real(*args)
        return write

    def count(result):
        calls["n"] += 1
    monkeypatch.setattr(recordfile.RecordWriter, "_write", failing(real_write))
    monkeypatch.setattr(recordfile, "write_atomic", failing(real_atomic))
    real_add = recordfile.RecordWriter.add
    monkeypatch.setattr(recordfile.RecordWriter, "add", lambda self, r: (real_add(self, r), count(r)))
    code = cli.main(["sizes", "--device", "cpu", "--sweep", "1..10:1", "-i", "0", *FAST,
                     "--results-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "Read-only file system" in err
    assert err.startswith("gemmbench: error: could not save ")
    (path,) = tmp_path.glob("*.json")
    data = json.loads(path.read_text())
    assert len(data["results"]) == 2 and data["complete"] is False  # the last snapshot that could be written
    sizes_shown = out.split("gemmbench sizes")[1].splitlines()[2].split()
    assert sizes_shown[2:6] == ["1", "2", "3", "4"] and "5" not in sizes_shown  # the run stopped at the error


def _interrupt_after(monkeypatch, rows, exc):
    """Make the run stop (as a signal would) when row ``rows + 1`` starts."""
    import gemmbench.execute.local as bench
    real, seen = bench.run_entry, []

    def run_entry(*args):
        if len(seen) == rows:
            raise exc
        seen.append(1)
        return real(*args)
    monkeypatch.setattr(bench, "run_entry", run_entry)


def test_interrupt_before_the_first_kernel_leaves_nothing(capsys, tmp_path, monkeypatch):
    _interrupt_after(monkeypatch, 0, KeyboardInterrupt())
    code = cli.main([*SWEEP, "--results-dir", str(tmp_path / "results")])
    out, err = capsys.readouterr()
    assert code == 130 and out == "" and not (tmp_path / "results").exists()
    assert err == "gemmbench: interrupted by SIGINT before the first kernel finished: nothing saved\n"


def test_interrupt_mid_run_prints_the_table_and_the_incomplete_record(capsys, tmp_path, monkeypatch):
    from gemmbench.execute.interrupts import Interrupted
    _interrupt_after(monkeypatch, 5, Interrupted(signal.SIGTERM))
    code = cli.main([*SWEEP, "--results-dir", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    (path,) = tmp_path.glob("*.json")
    assert code == 143 and json.loads(out) == json.loads(path.read_text())  # printed = saved
    data = json.loads(out)
    assert data["complete"] is False and len(data["results"]) == 5 and data["planned"] == 400
    assert data["incomplete_reason"] == "interrupted by SIGTERM after 5 of 400 kernels"
    assert err == "gemmbench: interrupted by SIGTERM\n"  # --json: only the alert on stderr


def test_interrupted_json_says_incomplete_without_saving_too(capsys, tmp_path, monkeypatch):
    _interrupt_after(monkeypatch, 2, KeyboardInterrupt())
    code = cli.main([*SWEEP, "--no-save", "--json", "--results-dir", str(tmp_path / "r")])
    data = json.loads(capsys.readouterr().out)
    assert code == 130 and not (tmp_path / "r").exists()
    assert data["complete"] is False and data["incomplete_reason"] == "interrupted by SIGINT after 2 of 400 kernels"
