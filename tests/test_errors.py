"""The one error path for bad input, as a matrix generated from tables.

Every case goes through the real entry point and must end the same way:
exit 2, exactly one stderr line ``gemmbench: error: ...`` that names the
offending option or value, no traceback, nothing on stdout, no kernel run,
and the sandbox it ran in (the results directory with an earlier record in
it) unchanged. Options and paths run in-process through ``cli.main``;
environment faults (caches, compilers) in a subprocess, as a user meets them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gemmbench import cli, validate
from gemmbench.execute import recording
from gemmbench.backend import Shape
from gemmbench.cpu import build
from gemmbench.gpu.device import GpuUnavailable

# Tiny, quick defaults: a case that wrongly passed validation would still end fast.
QUICK = {"--device": "cpu", "--warmup": "0", "--budget": "0", "--min-samples": "1", "--max-samples": "2"}
SHAPE = {"-m": "8", "-n": "8", "-k": "8"}
COMMANDS = {
    "run": ["run", "-i", "1"],
    "compare": ["compare", "-i", "1"],
    "sizes": ["sizes", "--sweep", "8"],  # the sweep sets the shape
    "tune": ["tune", "-i", "9"],  # parse errors only: on the CPU tune stops at "needs a GPU"
}
RUNNING = ("run", "compare", "sizes")

# option -> values that must be refused (each tried on every command)
BAD_VALUES = {
    "--warmup": ["nan", "inf", "-inf", "1e9", "-1", "1e400", "61", "x", "１", "0x10", ""],
    "--budget": ["nan", "NaN", "inf", "1e400", "-0.5", "601", "1_0"],
    "--seed": ["-1", "4294967296", "1.5", "９", "1_0", "1e3"],
    "--threads": ["0", "10000", "-3", "two", "1025"],
    "--min-samples": ["0", "100001", "nan"],
    "--max-samples": ["0", "-2", "1e3"],
    "--max-noise": ["0", "0%", "nan", "inf%", "-0.5", "101", "0.5%%", "%", "half", "5e-3%x"],
    "--min-time": ["nan", "-1", "601", "1s"],
    "--noise-timeout": ["inf", "-0.1", "601", "10%"],
    "-m": ["0", "９", "-5", "2147483648", "99999999999", "1e3", ""],
    "-n": ["0", "٣", "2147483648", "1.5"],
    "-k": ["-1", "4294967296", "k", "2147483647"],
    "-i": ["x", "٣", "-1"],
    "--device": ["tpu", ""],
    "--format": ["xml"],
    "--results-dir": ["", "   "],
}
TUNE_BAD_VALUES = {"--limit": ["0", "x"], "--top": ["0", "-1"], "--jobs": ["0", "100000"]}

# option combinations that must be refused: (arguments, what the message names)
CONFLICTS = [
    (["--json", "--format", "csv"], "--format csv"),
    (["--json", "--format", "markdown"], "--format markdown"),
    (["--min-samples", "9", "--max-samples", "3"], "--min-samples 9"),
    (["--max-noise", "0.5%", "--budget", "1"], "--max-noise 0.5 and --budget 1 conflict"),
    (["--min-time", "1"], "--min-time 1 goes with --max-noise"),
    (["--noise-timeout", "2"], "--noise-timeout 2 goes with --max-noise"),
    (["--max-noise", "1", "--min-time", "3", "--noise-timeout", "2"], "--min-time 3 is longer"),
]

# sweeps that must be refused: (sweep, the part the message names)
BAD_SWEEPS = [
    ("1..100000000000:1", "100000000000"), ("1..100000:1", "100000 sizes"), ("8..4", "8..4"),
    ("a,b", "'a'"), ("1,,2", "size 2"), ("1..x", "'x'"), ("０..8", "'０'"), ("1..2147483648", "2147483648"),
    ("1..10:0", "step"), ("", "size 1"), (",", "size 1"), ("8;16", "'8;16'"), ("1..8:-1", "'-1'"),
    ("3000000000", "3000000000"), ("2,0", "size 2"), (",".join(["8"] * 1001), "1001 sizes"),
]


def _snapshot(root: Path) -> dict:
    """Every file and directory under root, with file contents."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(root.rglob("*")) if not p.is_symlink()}


def _args(command: str, overrides: list[str]) -> list[str]:
    """The command with quick defaults, except those the case sets itself."""
    defaults = dict(QUICK)
    if command != "sizes":
        defaults.update(SHAPE)
    given = set(overrides)
    args = list(COMMANDS[command])
    if "-i" in given and "-i" in args:  # the case's own kernel replaces the command's (run takes one -i)
        del args[args.index("-i"):args.index("-i") + 2]
    for option, value in defaults.items():
        if option not in given:
            args += [option, value]
    return args + overrides


def assert_one_line_error(code: int, out: str, err: str, *names: str) -> None:
    assert code == 2, (code, out, err)
    assert err.startswith("gemmbench: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and out == ""
    for name in names:
        assert name in err, (name, err)


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A working directory with an earlier record in ./results, a regular file
    and a place for plots; no kernel may run while it is in use."""
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "old.json").write_text('{"schema": 1}\n')
    (tmp_path / "file").write_text("not a directory\n")
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "old.png").write_bytes(b"\x89PNG old")
    monkeypatch.chdir(tmp_path)

    def no_kernels(*args, **kwargs):
        raise AssertionError("a kernel ran: validation let a bad input through")
    monkeypatch.setattr(recording, "run_plan", no_kernels)
    return tmp_path


@pytest.fixture
def read_only_dir(tmp_path):
    """An empty directory nobody can write in: permission bits for a normal
    user; root ignores those, so for root a read-only tmpfs mount."""
    path = tmp_path / "read-only"
    path.mkdir()
    if os.geteuid() != 0:
        path.chmod(0o555)
        yield path
        path.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(path)],
                             capture_output=True).returncode == 0
    if not mounted:
        pytest.skip("running as root without permission to mount a read-only filesystem")
    yield path
    subprocess.run(["umount", str(path)], check=True)


def check_refused(capsys, sandbox, args: list[str], *names: str) -> None:
    before = _snapshot(sandbox)
    code = cli.main(args)
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err, *names)
    assert _snapshot(sandbox) == before, "a refused command changed its directory"


# --------------------------------------------------------------------------
# options x bad values, on every command
# --------------------------------------------------------------------------

VALUE_CASES = [(command, option, value)
               for option, values in BAD_VALUES.items() for value in values for command in COMMANDS] + \
              [("tune", option, value) for option, values in TUNE_BAD_VALUES.items() for value in values]


@pytest.mark.parametrize("command, option, value", VALUE_CASES,
                         ids=[f"{c}{o}={v!r}" for c, o, v in VALUE_CASES])
def test_bad_option_value(capsys, sandbox, command, option, value):
    names = [f"'{option}'" if option != "-i" else "'-i'"] + ([value.strip()] if value.strip() else [])
    check_refused(capsys, sandbox, _args(command, [option, value]), *names)


CONFLICT_CASES = [(command, args, name) for args, name in CONFLICTS for command in RUNNING] + \
                 [("tune", args, name) for args, name in CONFLICTS if "--json" in args]


@pytest.mark.parametrize("command, args, name", CONFLICT_CASES, ids=[f"{c}:{' '.join(a)}" for c, a, _ in CONFLICT_CASES])
def test_conflicting_options(capsys, sandbox, command, args, name):
    check_refused(capsys, sandbox, _args(command, args), name)


@pytest.mark.parametrize("sweep, name", BAD_SWEEPS, ids=[s[:20] for s, _ in BAD_SWEEPS])
def test_bad_sweep(capsys, sandbox, sweep, name):
    check_refused(capsys, sandbox, _args("sizes", ["--sweep", sweep]), "sweep", name)


# --------------------------------------------------------------------------
# shapes against memory, before anything is allocated
# --------------------------------------------------------------------------

HUGE = ["-m", "1000000", "-n", "1000000", "-k", "1000000"]  # ~90 TiB of host memory to verify


@pytest.mark.parametrize("command", RUNNING)
def test_shape_too_large_for_host_memory(capsys, sandbox, command):
    args = _args(command, ["--sweep", "1000000"] if command == "sizes" else HUGE)
    check_refused(capsys, sandbox, args, "1000000x1000000x1000000", "host memory")


def test_memory_check_uses_what_is_available(capsys, sandbox, monkeypatch):
    monkeypatch.setattr(validate, "available_host_bytes", lambda: 50 * 2 ** 20)
    check_refused(capsys, sandbox, _args("run", ["-m", "1024", "-n", "1024", "-k", "1024"]),
                  "1024x1024x1024", "0.0 GiB is available")
    check_refused(capsys, sandbox, _args("sizes", ["--sweep", "64..2048"]), "2048x2048x2048")


def test_host_estimate_counts_the_float64_reference():
    n = 4096
    need = validate.host_bytes_needed(Shape(n, n, n))
    assert 4 * 3 * n * n + 32 * 2 * n * n <= need <= 120 * n * n  # inputs + float64 copies, not wildly more
    assert validate.host_bytes_needed(Shape(1, 1, 1)) < 1024


def test_gpu_tiles_int_offsets_bound_n_and_k():
    limit = validate.INT32_MAX // validate.GPU_TILE_ROWS_MAX
    validate.check_index_range([Shape(10 ** 9, limit, limit)], "gpu")
    for shape in (Shape(8, limit + 1, 8), Shape(8, 8, limit + 1)):
        with pytest.raises(validate.UserError, match=f"at most {limit}"):
            validate.check_index_range([Shape(8, 8, 8), shape], "gpu")
        validate.check_index_range([shape], "cpu")  # the C rungs offset in 64 bits


def test_address_space_limit_counts(monkeypatch):
    limit = 2 ** 30
    monkeypatch.setattr(validate.resource, "getrlimit", lambda which: (limit, validate.resource.RLIM_INFINITY))
    available = validate.available_host_bytes()
    assert available is not None and available <= limit


# --------------------------------------------------------------------------
# path faults x path options, checked before the sweep runs
# --------------------------------------------------------------------------

PATH_FAULTS = {  # fault -> the place, from the sandbox
    "below a regular file": lambda box, request: box / "file" / "sub",
    "a regular file": lambda box, request: box / "file",
    "under /proc": lambda box, request: Path("/proc/gemmbench-test/sub"),
    "in /sys": lambda box, request: Path("/sys/gemmbench-test"),
    "read-only": lambda box, request: request.getfixturevalue("read_only_dir"),
}
PATH_OPTIONS = {  # option -> command line for a place
    "--results-dir": lambda place: _args("run", ["--results-dir", str(place)]),
    "--plot": lambda place: _args("sizes", ["--plot", str(place / "sweep.png")]),
}


@pytest.mark.parametrize("option", PATH_OPTIONS)
@pytest.mark.parametrize("fault", PATH_FAULTS)
def test_unusable_path(capsys, sandbox, request, option, fault):
    if option == "--plot":
        pytest.importorskip("matplotlib")
    place = PATH_FAULTS[fault](sandbox, request)
    check_refused(capsys, sandbox, PATH_OPTIONS[option](place), option, str(place))


def test_full_disk_is_refused_before_running(capsys, sandbox, monkeypatch):
    real = os.statvfs

    class Full:
        def __init__(self, path):
            stat = real(path)
            self.f_frsize, self.f_bavail = stat.f_frsize, 0
    monkeypatch.setattr(validate.os, "statvfs", Full)
    check_refused(capsys, sandbox, _args("run", []), "--results-dir results", "is full")


PLOT_FAULTS = [  # (plot name, what the message names)
    ("missing/sweep.png", "does not exist"),
    ("plots/sweep.xyz", ".xyz"),
    ("plots/sweep", "(none)"),
    ("plots/sweep.pgf", ".pgf"),
    ("plots/old.png", "--overwrite"),
    ("plots", "is a directory"),
]


@pytest.mark.parametrize("name, fragment", PLOT_FAULTS)
def test_bad_plot_path(capsys, sandbox, name, fragment):
    pytest.importorskip("matplotlib")
    check_refused(capsys, sandbox, _args("sizes", ["--plot", name]), "--plot", name, fragment)


def test_plot_may_replace_a_file_with_overwrite(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sweep.png"
    png.write_bytes(b"old")
    code = cli.main(_args("sizes", ["--plot", str(png), "--overwrite", "-i", "2", "--no-save"]))
    assert code == 0, capsys.readouterr().err
    assert png.read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------
# environment faults, in a subprocess as a user meets them
# --------------------------------------------------------------------------

def _has_compiler_probe() -> bool:
    """The compiler is tried on a one-line library (cpu/build.py, caches work)."""
    return hasattr(build, "_probe")


needs_probe = pytest.mark.skipif(not _has_compiler_probe(),
                                 reason="cpu/build.py does not try the compiler before building yet")

ENV_FAULTS = [  # (name, environment changes, what the message names); None unsets
    ("cache is a file", {"GEMMBENCH_CACHE_DIR": "{box}/file"}, "GEMMBENCH_CACHE_DIR={box}/file"),
    ("cache below a file", {"GEMMBENCH_CACHE_DIR": "{box}/file/cache"}, "GEMMBENCH_CACHE_DIR"),
    ("cache under /proc", {"GEMMBENCH_CACHE_DIR": "/proc/gemmbench-cache"}, "GEMMBENCH_CACHE_DIR"),
    ("cache read-only", {"GEMMBENCH_CACHE_DIR": "{ro}"}, "GEMMBENCH_CACHE_DIR"),
    ("xdg is a file", {"GEMMBENCH_CACHE_DIR": None, "XDG_CACHE_HOME": "{box}/file"}, "XDG_CACHE_HOME"),
    ("xdg read-only", {"GEMMBENCH_CACHE_DIR": None, "XDG_CACHE_HOME": "{ro}"}, "XDG_CACHE_HOME"),
    ("CC missing", {"CC": "/nonexistent/cc"}, "/nonexistent/cc"),
    ("CC not on PATH", {"CC": "no-such-compiler-gemmbench"}, "no-such-compiler-gemmbench"),
    pytest.param("CC false", {"CC": "/bin/false"}, "/bin/false", marks=needs_probe),
    pytest.param("CC true", {"CC": "true"}, "CC=true", marks=needs_probe),
    pytest.param("CC python3", {"CC": "python3"}, "python3", marks=needs_probe),
    pytest.param("CC unbalanced quote", {"CC": "gcc '-O2"}, "CC=", marks=needs_probe),
]


@pytest.mark.parametrize("name, changes, fragment", ENV_FAULTS)
def test_environment_fault(sandbox, request, tmp_path_factory, name, changes, fragment):
    places = {"box": str(sandbox)}
    if any("{ro}" in (v or "") for v in changes.values()):
        places["ro"] = str(request.getfixturevalue("read_only_dir"))
    env = dict(os.environ)
    # a fresh cache for this case, so the rung is not built yet and must be
    env["GEMMBENCH_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value.format(**places)
    before = _snapshot(sandbox)
    done = subprocess.run([sys.executable, "-m", "gemmbench", *_args("run", ["-i", "2"])],
                          capture_output=True, text=True, env=env, cwd=sandbox, timeout=120)
    assert_one_line_error(done.returncode, done.stdout, done.stderr, fragment.format(**places))
    assert _snapshot(sandbox) == before


# --------------------------------------------------------------------------
# --device auto on a machine without a GPU: one line, nothing claimed to run
# --------------------------------------------------------------------------

@pytest.fixture
def no_gpu(monkeypatch):
    def unavailable(*a, **k):
        raise GpuUnavailable("no CUDA device found")
    import gemmbench.gpu.backend as gpu_backend
    import gemmbench.gpu.device as gpu_device
    monkeypatch.setattr(gpu_backend, "open_device", unavailable)
    monkeypatch.setattr(gpu_device, "open_device", unavailable)


@pytest.mark.parametrize("args, names", [
    (["run", "-i", "10"], ["rung 10 is a GPU rung", "no CUDA device found", "--device cpu", "rungs 0-6"]),
    (["compare", "-i", "2", "-i", "12"], ["rung 12 is a GPU rung"]),
    (["sizes", "--sweep", "8", "-i", "14"], ["rung 14 is a GPU rung"]),
    (["tune", "-i", "3"], ["tune needs a GPU", "no CUDA device found"]),
    (["run", "-i", "1", *HUGE], ["1000000x1000000x1000000"]),  # no "running the CPU ladder" before it
])
def test_auto_without_gpu_errors_in_one_line(capsys, sandbox, no_gpu, args, names):
    check_refused(capsys, sandbox, args + ["--warmup", "0"], *names)


def test_list_without_gpu_shows_the_cpu_ladder(capsys, no_gpu):
    for args in (["list"], ["list", "--device", "auto"]):
        assert cli.main([*args, "--format", "csv"]) == 0
        out, err = capsys.readouterr()
        assert "packed micro-kernel" in out and "warptiling" not in out
        assert "No GPU" in err and err.count("\n") == 1
    assert cli.main(["list", "--device", "gpu", "--format", "csv"]) == 0
    assert "warptiling" in capsys.readouterr().out


# --------------------------------------------------------------------------
# conventions
# --------------------------------------------------------------------------

def test_bare_command_shows_help_and_succeeds(capsys):
    assert cli.main([]) == 0
    out, err = capsys.readouterr()
    assert "Usage: gemmbench" in out and "run" in out and err == ""


def test_verbose_log_reaches_stderr_with_json(capsys):
    code = cli.main(_args("run", ["-i", "2", "--json", "-v", "--no-save"]))
    out, err = capsys.readouterr()
    assert code == 0
    assert json.loads(out)["command"] == "run"  # stdout: the JSON alone
    assert "verify" in err and "reference 8x8x8" in err


def test_json_alone_keeps_stderr_quiet(capsys):
    assert cli.main(_args("run", ["-i", "2", "--json", "--no-save"])) == 0
    assert capsys.readouterr().err == ""


def test_max_samples_alone_lowers_the_default_minimum(capsys):
    """The CPU's default minimum is 3 samples: --max-samples 1 alone is not a clash."""
    args = ["run", "-i", "2", "--device", "cpu", "-m", "8", "-n", "8", "-k", "8", "--warmup", "0",
            "--max-samples", "1", "--json", "--no-save"]
    assert cli.main(args) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert results and all(len(r["samples_s"]) == 1 for r in results)


def test_min_above_max_names_both_values(capsys):
    code = cli.main(_args("run", ["--min-samples", "5", "--max-samples", "2"]))
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err, "--min-samples 5", "--max-samples 2")


def test_bounds_follow_the_machine():
    from gemmbench.cpu.backend import core_count
    assert validate.max_threads() == min(1024, 4 * core_count())


def test_full_width_and_underscore_numbers_are_not_numbers():
    for text in ("９", "1_000", "+", "", " 1 2"):
        with pytest.raises(ValueError):
            validate.parse_int(text)
    assert validate.parse_int(" 42 ") == 42 and validate.parse_int("-3") == -3
    for text in ("nan", "-inf", "Infinity", "1e400", "１.５", "1_0", "0x1p3", "."):
        with pytest.raises(ValueError):
            validate.parse_finite_float(text)
    assert validate.parse_finite_float("1e-3") == 0.001 and validate.parse_finite_float(".5") == 0.5
    assert validate.parse_percent(" 0.5% ") == 0.5 == validate.parse_percent("0.5")  # percent, never a fraction
    for text in ("%", "0.5%%", "%0.5", "nan%", "0,5%"):
        with pytest.raises(ValueError):
            validate.parse_percent(text)


def test_the_matrix_is_large_enough():
    """The issue asks for at least 60 distinct bad inputs and faults."""
    distinct = {(o, v) for o, values in {**BAD_VALUES, **TUNE_BAD_VALUES}.items() for v in values}
    distinct |= {tuple(a) for a, _ in CONFLICTS} | {s for s, _ in BAD_SWEEPS}
    distinct |= {(f, o) for f in PATH_FAULTS for o in PATH_OPTIONS} | {n for n, _ in PLOT_FAULTS}
    distinct |= {p.values[0] if hasattr(p, "values") else p[0] for p in ENV_FAULTS}
    assert len(distinct) >= 60, len(distinct)
