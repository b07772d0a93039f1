"""Hostile input at the command line's own edges: output streams, the
environment, options that clash, instruments asked the wrong way.

Every case states the contract: its exit code; for exit 2 exactly one stderr
line that names the value; never a traceback; and the folder it ran in
exactly as it was (every file's bytes hashed before and after). Streams run
the real program in a subprocess (a closed or full stdout is a property of
the process); the rest run in-process through ``cli.main``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gemmbench import cli

HERE = Path(__file__).resolve().parent
RECORD = HERE.parent / "results" / "reference" / "ci-cpu-sizes-1024-2048.json"
ODD_SHAPES = HERE.parent / "benchmarks" / "shapes" / "odd.csv"
QUICK = ["--device", "cpu", "--warmup", "0", "--budget", "0", "--min-samples", "1", "--max-samples", "1",
         "-m", "8", "-n", "8", "-k", "8"]


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A working folder holding a record, a results folder with an older record, and a plot."""
    shutil.copy(RECORD, tmp_path / "r.json")
    (tmp_path / "results").mkdir()
    shutil.copy(RECORD, tmp_path / "results" / "old.json")
    (tmp_path / "keep.png").write_bytes(b"\x89PNG the user's own picture")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMMBENCH_CACHE_DIR", str(tmp_path.parent / (tmp_path.name + "-cache")))
    return tmp_path


def launch(args, folder, env=None, **kw) -> subprocess.CompletedProcess:
    environment = {**os.environ, "GEMMBENCH_CACHE_DIR": str(folder.parent / (folder.name + "-cache")), **(env or {})}
    return subprocess.run([sys.executable, "-m", "gemmbench", *args], cwd=folder, env=environment,
                          stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300, **kw)


def one_error_line(err: str, *names: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gemmbench: error: "), err
    for name in names:
        assert name in lines[0], (name, err)


# -- output streams ---------------------------------------------------------------------

WRITERS = {  # commands that write to stdout, none of which may change a file
    "show table": ["show", "r.json"],
    "show csv": ["show", "r.json", "--format", "csv"],
    "show markdown": ["show", "r.json", "--format", "markdown"],
    "show two": ["show", "r.json", "results/old.json"],
    "diff": ["diff", "r.json", "results/old.json"],
    "diff json": ["diff", "r.json", "results/old.json", "--json"],
    "list": ["list", "--device", "cpu"],
    "list csv": ["list", "--device", "cpu", "--format", "csv"],
    "version": ["--version"],
    "help": ["--help"],
    "run json": ["run", "-i", "1", *QUICK, "--no-save", "--json"],
}


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_full_stdout_is_one_line(sandbox, name):
    before = snapshot(sandbox)
    with open("/dev/full", "w") as full:
        done = launch(WRITERS[name], sandbox, stdout=full, text=True)
    assert done.returncode == 2, done.stderr
    one_error_line(done.stderr, "cannot write to standard output", "No space left on device")
    assert snapshot(sandbox) == before


@pytest.mark.parametrize("name", ["show table", "show csv", "show two", "diff", "list", "run json"])
def test_a_reader_that_went_away_ends_quietly_with_141(sandbox, name):
    before = snapshot(sandbox)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write is a broken pipe
    try:
        done = launch(WRITERS[name], sandbox, stdout=write_end, text=True)
    finally:
        os.close(write_end)
    assert done.returncode == cli.BROKEN_PIPE_EXIT and done.stderr == "", done.stderr
    assert snapshot(sandbox) == before


@pytest.mark.parametrize("name", ["show table", "list", "version"])
def test_a_closed_stdout_is_one_line(sandbox, name):
    before = snapshot(sandbox)
    done = launch(WRITERS[name], sandbox, stdout=None, text=True, preexec_fn=lambda: os.close(1))
    assert done.returncode == 2
    one_error_line(done.stderr, "standard output is closed")
    assert snapshot(sandbox) == before


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "LANG": "C"},
                                 {"TERM": "dumb"}, {"NO_COLOR": "1"}, {"COLUMNS": "20"}, {"COLUMNS": "x"}])
@pytest.mark.parametrize("name", ["show table", "show markdown", "diff", "list"])
def test_odd_terminals_and_encodings_print_without_a_traceback(sandbox, env, name):
    before = snapshot(sandbox)
    done = launch(WRITERS[name], sandbox, env=env, stdout=subprocess.PIPE)
    assert done.returncode in (0, 1) and b"Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip()
    assert snapshot(sandbox) == before


# -- options that clash, instruments asked the wrong way ----------------------------------

CLASHES = [
    (["run", "-i", "1", *QUICK, "--json", "--format", "csv"], "--json"),
    (["run", "-i", "1", *QUICK, "--min-samples", "5", "--max-samples", "2"], "--min-samples 5"),
    (["run", "-i", "1", "--gpu", "0", "--device", "cpu"], "--gpu 0"),
    (["compare", "--all", "-i", "1", "--device", "cpu"], "--all"),
    (["compare", "--all", "--precision", "fp64", "--device", "cpu"], "fp64"),
    (["compare", "--all", "--precision", "tf32", "--device", "cpu"], "tf32"),
    (["sizes", "--sweep", "", "--device", "cpu"], "sweep"),
    (["sizes", "--sweep", "8..4:1", "--device", "cpu"], "8..4"),
    (["run", *QUICK], "-i"),
    (["compare", *QUICK], "--all"),
    (["tune", "--device", "cpu"], "-i"),
    (["tune", "-i", "12", "-i", "13", "--device", "cpu"], "one kernel"),
    (["tune", "--kernel-file", str(HERE.parent / "examples" / "blocked_sgemm.c")], "blocked_sgemm.c is a C kernel"),
    (["tune", "-i", "12", "--device", "cpu"], "--device cpu"),
    (["tune", "-i", "28", "--shapes", "missing.csv"], "missing.csv"),
    (["tune", "-i", "28", "--shapes", "r.json"], "r.json"),
    (["tune", "-i", "28", "--shapes", str(ODD_SHAPES), "-m", "8"], "-m 8 does not go with --shapes"),
    (["tune", "-i", "28", "--table", "t.json"], "--shapes"),
    (["tune", "-i", "28", "--shapes", str(ODD_SHAPES), "--table", "keep.png"], "keep.png already exists"),
    (["tune", "-i", "28", "--shapes", str(ODD_SHAPES), "--table", "results"], "File 'results' is a directory"),
    (["tune", "-i", "28", "--shapes", str(ODD_SHAPES), "--table", "nowhere/t.json"], "nowhere"),
    (["asm", "-i", "5", "-i", "6", "--arch", "sm_80"], "give one kernel"),
    (["asm", "-i", "5", "--param", "BM=64", "--arch", "sm_80"], "--param"),
    (["asm", "--arch", "sm_80"], "give one kernel"),
    (["profile", "-i", "5", "-i", "6"], "give one kernel"),
    (["info", "-i", "5", "--param", "BM=64"], "--param"),
    (["show", "r.json", "--plot", "keep.png"], "keep.png"),
    (["show", "r.json", "--format", "xml"], "xml"),
    (["diff", "r.json"], "NEW"),
    (["run", "-i", "99", *QUICK], "99"),
    (["compare", "--all", *QUICK, "-m", "96"], "-m': given 2 times (8, 96)"),
    (["info", "-i", "28", "-k", "5", "-k", "5"], "-k': given 2 times (5, 5)"),
    (["run", "-i", "1", *QUICK, "--results-dir", "r.json"], "r.json"),
    (["run", "-i", "1", *QUICK, "--baseline", "missing.json"], "missing.json"),
    (["run", "-i", "1", *QUICK, "--baseline", "keep.png"], "keep.png"),
]


@pytest.mark.parametrize("args, names", CLASHES, ids=[" ".join(a[:4]) for a, _ in CLASHES])
def test_clashing_or_wrong_options_are_one_line(capsys, sandbox, args, names):
    if "--plot" in args:
        pytest.importorskip("matplotlib")
    before = snapshot(sandbox)
    code = cli.main(args)
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    one_error_line(err, names)
    assert "Traceback" not in err and out == ""
    assert snapshot(sandbox) == before


# -- the environment ------------------------------------------------------------------------

def test_a_cache_dir_that_is_a_file_is_one_line(sandbox):
    before = snapshot(sandbox)
    done = launch(["run", "-i", "1", *QUICK, "--no-save"], sandbox,
                  env={"GEMMBENCH_CACHE_DIR": str(sandbox / "r.json")}, stdout=subprocess.PIPE, text=True)
    assert done.returncode == 2
    one_error_line(done.stderr, "GEMMBENCH_CACHE_DIR")
    assert snapshot(sandbox) == before


def test_no_gpu_visible_when_one_is_demanded_is_one_line(sandbox):
    before = snapshot(sandbox)
    done = launch(["run", "-i", "1", "--device", "gpu", "--no-save"], sandbox,
                  env={"CUDA_VISIBLE_DEVICES": ""}, stdout=subprocess.PIPE, text=True)
    assert done.returncode == 2
    one_error_line(done.stderr, "no usable GPU")
    assert snapshot(sandbox) == before
