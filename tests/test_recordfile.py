"""Saving a record while it grows: lazily, atomically, linearly, recoverably."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import gemmbench.records.results as results
from gemmbench.backend import Shape
from gemmbench.errors import UserError
from gemmbench.records.writer import RECOVERED, RUNNING, RecordWriter, recover_orphans
from gemmbench.validate import check_output_dir
from gemmbench.records.store import load as load_record
from gemmbench.records.results import KernelResult, RunRecord
from gemmbench.verify import Verification


def result(kid=0, seconds=1e-6, size=8):
    return KernelResult("cpu", kid, f"k{kid}", "fp32", Shape(size, size, size), "pass", threads=1,
                        verification=Verification(1e-7, 1e-4, 0), samples=[seconds] * 3, flags=[])


def new_record():
    return RunRecord("sizes", "cpu", {"seed": 0}, {"cpu": {"cores": 2}}, planned=100)


def add(writer, r):
    writer.record.results.append(r)
    writer.add(r)


def json_files(directory):
    return sorted(p for p in directory.iterdir() if p.suffix == ".json")


def test_nothing_is_created_before_the_first_row(tmp_path):
    writer = RecordWriter(new_record(), tmp_path / "results")
    writer.finish()
    assert not (tmp_path / "results").exists() and writer.path is None


def test_every_snapshot_is_json_and_says_whether_the_run_finished(tmp_path):
    writer = RecordWriter(new_record(), tmp_path)
    for i in range(5):
        add(writer, result(size=i + 1))
        assert sorted(os.listdir(tmp_path)) == sorted([writer.path.name, writer.journal_path.name])
        data = json.loads(writer.path.read_text())
        assert data["complete"] is False and data["incomplete_reason"] == RUNNING
        assert len(data["results"]) == 1 << (i + 1).bit_length() - 1  # snapshots after rows 1, 2, 4
    writer.finish()
    assert os.listdir(tmp_path) == [writer.path.name]  # journal gone, no temp file
    data = json.loads(writer.path.read_text())
    assert data["complete"] is True and len(data["results"]) == 5 and data["schema"] == results.SCHEMA
    assert load_record(writer.path).record.results[4].shape == Shape(5, 5, 5)


def test_an_interrupted_record_says_why(tmp_path):
    writer = RecordWriter(new_record(), tmp_path)
    add(writer, result())
    writer.record.complete, writer.record.incomplete_reason = False, "interrupted by SIGINT after 1 of 100 kernels"
    writer.finish()
    again = load_record(writer.path).record
    assert not again.complete and again.incomplete_reason.startswith("interrupted by SIGINT")


def test_names_are_never_reused(tmp_path):
    paths = set()
    for _ in range(3):
        writer = RecordWriter(new_record(), tmp_path)
        add(writer, result())
        writer.finish()
        paths.add(writer.path)
    assert len(paths) == 3 and set(json_files(tmp_path)) == paths


def test_an_orphaned_journal_is_recovered_into_an_incomplete_record(tmp_path):
    writer = RecordWriter(new_record(), tmp_path)
    rows = [result(size=i + 1) for i in range(6)]
    for r in rows:
        add(writer, r)
    rows[2].flags.append("baseline-shifted")
    writer.update(rows[2])
    assert len(json.loads(writer.path.read_text())["results"]) == 4  # last snapshot: after event 4
    assert recover_orphans(tmp_path) == []  # the writer is alive: its journal is locked
    writer.close()  # as a SIGKILL would leave it: journal in place, lock released
    with open(writer.journal_path, "a") as f:
        f.write('{"row": 6, "result": {"device": "cp')  # a line cut short by the kill
    assert recover_orphans(tmp_path) == [writer.path]
    data = json.loads(writer.path.read_text())
    assert data["complete"] is False and data["incomplete_reason"] == RECOVERED
    assert [r["shape"]["M"] for r in data["results"]] == [1, 2, 3, 4, 5, 6]
    assert data["results"][2]["flags"] == ["baseline-shifted"]  # the update wins
    assert os.listdir(tmp_path) == [writer.path.name]


def test_an_unreadable_journal_is_moved_aside(tmp_path):
    (tmp_path / ".run-cpu-1.journal").write_text("garbage\n")
    assert recover_orphans(tmp_path) == []
    assert os.listdir(tmp_path) == [".run-cpu-1.journal.bad"]


def test_saving_is_linear_in_rows(tmp_path, monkeypatch):
    """Bytes written, rows serialised and git runs: all counted, none may grow
    faster than the rows (the old saver rewrote everything per row)."""
    git_runs, serialised = [], []
    monkeypatch.setattr(results, "git_commit", lambda: git_runs.append(1) or "abc")
    real_to_dict = KernelResult.to_dict
    monkeypatch.setattr(KernelResult, "to_dict", lambda self: serialised.append(1) or real_to_dict(self))
    writer = RecordWriter(new_record(), tmp_path)
    n = 700
    for i in range(n):
        add(writer, result(kid=i % 3, size=i // 3 + 1))
    writer.finish()
    final = writer.path.stat().st_size
    # the journal holds each row once (~1x), the snapshots 1+2+...+512 rows and
    # the final 700 (~2.5x); rewriting the record per row would be ~350x
    assert writer.bytes_written < 4 * final
    assert len(serialised) == n and len(git_runs) == 1


def test_save_cost_per_row_does_not_grow(tmp_path):
    # The bytes each row's save writes (journal and snapshots), not its time: timed by wall clock, and
    # later by this process's CPU time, the test still failed under load (4.5x and 4.3x with two busy
    # processes on both cores), so its verdict depended on the machine, not on the saver. The serialising
    # work follows the bytes (each row is serialised once: test_saving_is_linear_in_rows above).
    writer = RecordWriter(new_record(), tmp_path)
    spent = []
    for i in range(2048):
        r = result(kid=i % 4, size=i // 4 + 1)
        before = writer.bytes_written
        add(writer, r)
        spent.append(writer.bytes_written - before)
    writer.finish()
    first, last = sum(spent[:512]), sum(spent[-512:])
    # linear saving: the last quarter costs about as much as the first (plus one big snapshot); saving the
    # whole record per row would be ~7x more
    assert last < 4 * first, (first, last)
    assert first > 0


def test_writable_check_leaves_nothing(tmp_path):
    target = tmp_path / "a" / "b"
    check_output_dir("--results-dir", target)
    assert os.listdir(tmp_path) == []
    check_output_dir("--results-dir", tmp_path)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("where", ["below-a-file", "proc"])
def test_unwritable_results_dir_is_a_user_error(tmp_path, where):
    if where == "below-a-file":
        (tmp_path / "file").write_text("x")
        target = tmp_path / "file" / "results"
    else:
        target = Path("/proc/gemmbench-results")
    with pytest.raises(UserError, match="--results-dir .*(not a directory|cannot write)"):
        check_output_dir("--results-dir", target)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permission bits")
def test_read_only_results_dir_is_a_user_error(tmp_path):
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(UserError, match="Permission denied"):
            check_output_dir("--results-dir", tmp_path / "results")
    finally:
        tmp_path.chmod(0o755)


def test_schema_1_records_still_load(tmp_path):
    row = {"device": "cpu", "kernel_id": 0, "name": "OpenBLAS", "precision": "fp32",
           "shape": {"M": 8, "N": 8, "K": 8}, "status": "pass", "reason": None, "params": {},
           "params_source": "default", "threads": 1,
           "verification": {"max_rel_error": 1e-7, "tolerance": 1e-4, "nonfinite": 0, "passed": True},
           "samples_s": [1.0, 2.0, 3.0, 4.0], "stats": None, "gflops": 0.0, "notes": {}}
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"schema": 1, "command": "run", "device": "cpu", "created": "x", "options": {},
                                "environment": {}, "results": [row]}))
    record = load_record(path).record
    assert record.complete and record.results[0].flags == ["noisy"]  # derived from the samples' spread


def test_temporaries_of_dead_writers_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = socket.gethostname()
    (tmp_path / f".run.json.tmp-{host}-{dead.stdout.strip()}-abcd1234").write_text("{")
    live = tmp_path / f".run.json.tmp-{host}-{os.getpid()}-abcd1234"
    live.write_text("{")
    recover_orphans(tmp_path)
    assert os.listdir(tmp_path) == [live.name]
