"""A user's kernel file: its header, the expression evaluator, compile errors,
and the CPU path end to end (wrong, crashing and hanging kernels in worker
processes while the other rows are measured and saved). No GPU needed."""

import json
import pickle
import shutil
import subprocess
from pathlib import Path

import pytest

from gemmbench import cli, kernelfile
from gemmbench.backend import Shape, SkipKernel
from gemmbench.errors import UserError
from gemmbench.gpu.compile import expand_source, nvcc_options
from gemmbench.tuning import TuningCache
from gemmbench.kernelfile import Expr, ExprError, KernelFileError

ROOT = Path(__file__).resolve().parent.parent
CUDA_EXAMPLE = ROOT / "examples" / "tiled_sgemm.cu"
C_EXAMPLE = ROOT / "examples" / "blocked_sgemm.c"
NVCC = shutil.which("nvcc")
FAST = ["--warmup", "0", "--min-samples", "1", "--max-samples", "3", "--budget", "0"]
ODD = ["-m", "17", "-n", "33", "-k", "9"]

SIGNATURE = "void sgemm(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C)"
GOOD_HEADER = """/* gemmbench kernel
 * name:        good
 * params:      BM=64, BN=32
 * search:      BM=32,64; BN=32,64
 * constraints: BM % 32 == 0 and BN >= 32
 * block:       BN, BM / 32
 * grid:        ceil_div(N, BN), ceil_div(M, BM)
 * smem:        4 * BM
 * precision:   fp32
 * min_cc:      8.0
 */
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def run(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, *fragments):
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("gemmbench: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


# --------------------------------------------------------------------------
# the header
# --------------------------------------------------------------------------

def test_header_becomes_a_kernel_spec(tmp_path):
    kernel = kernelfile.load(write(tmp_path, "mine.cu", GOOD_HEADER), 1)
    spec = kernel.spec
    assert (spec.id, spec.name, spec.device) == (-2, "good", "gpu")
    assert spec.params == {"BM": 64, "BN": 32} and spec.search_space == {"BM": [32, 64], "BN": [32, 64]}
    assert spec.block(spec.params) == (32, 2, 1)
    assert spec.grid(100, 70, 5, spec.params) == (3, 2, 1)
    assert spec.shared_bytes() == 256 and spec.min_cc == (8, 0) and spec.precision == "fp32"
    assert spec.invalid_reason() is None
    assert "is false" in spec.invalid_reason({"BM": 48, "BN": 32})
    assert spec.source == str((tmp_path / "mine.cu").resolve())
    assert len(kernel.digest) == 64


def test_line_comment_header_and_defaults(tmp_path):
    text = "// gemmbench kernel\n// block: 256\n// grid: ceil_div(M * N, 256)\n\n" + SIGNATURE + "{}\n"
    spec = kernelfile.load(write(tmp_path, "flat_kernel.cu", text), 0).spec
    assert spec.name == "flat_kernel" and spec.id == -1  # the file's stem
    assert spec.block({}) == (256, 1, 1) and spec.grid(16, 32, 1, {}) == (2, 1, 1)
    assert spec.shared_bytes() == 0 and spec.params == {}


def test_c_kernel_needs_no_header(tmp_path):
    spec = kernelfile.load(write(tmp_path, "plain.c", SIGNATURE + "{}\n"), 0).spec
    assert spec.device == "cpu" and spec.name == "plain" and not spec.multithreaded


def test_examples_parse():
    cuda = kernelfile.load(CUDA_EXAMPLE, 0).spec
    assert cuda.search_space and cuda.invalid_reason() is None
    c = kernelfile.load(C_EXAMPLE, 0).spec
    assert c.params == {"KB": 128} and c.defines() == ["-DKB=128"]


def test_spec_pickles_for_the_worker_process(tmp_path):
    kernel = kernelfile.load(write(tmp_path, "mine.cu", GOOD_HEADER), 0)
    copy = pickle.loads(pickle.dumps(kernel))
    assert copy.spec.grid(100, 70, 5, copy.spec.params) == (3, 2, 1)
    assert copy.spec.invalid_reason({"BM": 48, "BN": 32}) == kernel.spec.invalid_reason({"BM": 48, "BN": 32})


def test_param_override_and_zero_grid(tmp_path):
    kernel = kernelfile.load(write(tmp_path, "mine.cu", GOOD_HEADER), 0, {"BM": 32, "OTHER": 1})
    assert kernel.spec.params == {"BM": 32, "BN": 32}
    with pytest.raises(UserError, match="no kernel file has a parameter 'OTHER'"):
        kernelfile.check_overrides([kernel], {"OTHER": 1})
    zero = GOOD_HEADER.replace("grid:        ceil_div(N, BN), ceil_div(M, BM)", "grid:        N / BN, M / BM")
    kernel = kernelfile.load(write(tmp_path, "zero.cu", zero), 0)
    kernelfile.check_shapes(kernel, [Shape(64, 64, 64)])
    with pytest.raises(KernelFileError, match=r"zero.cu:7: header field 'grid': \(0, 0, 1\) at 17x31x9 has zero blocks"):
        kernelfile.check_shapes(kernel, [Shape(64, 64, 64), Shape(17, 31, 9)])
    with pytest.raises(SkipKernel, match="grid"):  # a tuner's candidate at such a shape is skipped
        kernel.spec.grid(17, 31, 9, kernel.spec.params)


def _replace(line_start, new_line):
    lines = GOOD_HEADER.splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith(line_start))
    lines[index] = new_line
    return "\n".join(lines) + "\n"


# (header text, fragments of the one-line message): every way a header can be wrong
MALFORMED = {
    "no header": (SIGNATURE + "{}\n", ["no 'gemmbench kernel' header"]),
    "unclosed": ("/* gemmbench kernel\n * block: 32\n", ["never closed"]),
    "not a field": (_replace(" * name:", " * this is prose"), [":2:", "not 'field: value'"]),
    "unknown field": (_replace(" * name:", " * blok: 32"), [":2: header field 'blok'", "unknown field"]),
    "C field in CUDA": (_replace(" * name:", " * threads: all"), ["'threads'", "for C kernels"]),
    "empty value": (_replace(" * name:", " * name:"), ["'name'", "no value"]),
    "twice": (_replace(" * name:", " * grid: 1"), ["'grid'", "given twice"]),
    "missing block": (_replace(" * block:", " *"), ["no 'block:' field"]),
    "missing grid": (_replace(" * grid:", " *"), ["no 'grid:' field"]),
    "param not int": (_replace(" * params:", " * params: BM=64, BN=x"), ["'params'", "integers"]),
    "param no value": (_replace(" * params:", " * params: BM, BN=32"), ["'params'", "NAME=INTEGER"]),
    "param reserved": (_replace(" * params:", " * params: BM=64, BN=32, M=3"), ["'params'", "reserved"]),
    "param twice": (_replace(" * params:", " * params: BM=64, BN=32, BM=4"), ["'params'", "twice"]),
    "search unknown": (_replace(" * search:", " * search: BX=1,2"), ["'search'", "'BX' is not a parameter"]),
    "search not int": (_replace(" * search:", " * search: BM=32,sixty"), ["'search'", "integers"]),
    "search repeated": (_replace(" * search:", " * search: BM=32,32"), ["'search'", "repeated"]),
    "constraint syntax": (_replace(" * constraints:", " * constraints: BM %% 2"), ["'constraints'", "does not parse"]),
    "constraint name": (_replace(" * constraints:", " * constraints: BQ > 1"), ["'constraints'", "unknown name 'BQ'"]),
    "constraint false": (_replace(" * constraints:", " * constraints: BM > 100"),
                         ["'constraints'", "'BM > 100' is false for the parameters BM=64 BN=32"]),
    "constraint divides by zero": (_replace(" * constraints:", " * constraints: BM / (BN - 32) > 0"),
                                   ["'constraints'", "division by zero"]),
    "block uses the shape": (_replace(" * block:", " * block: M"), ["'block'", "unknown name 'M'"]),
    "block too big": (_replace(" * block:", " * block: 1024, 2"), ["'block'", "2048 threads"]),
    "block zero": (_replace(" * block:", " * block: BN - 32"), ["'block'", "(0, 1, 1)"]),
    "block four dims": (_replace(" * block:", " * block: 1, 1, 1, 1"), ["'block'", "1 to 3 values"]),
    "grid call": (_replace(" * grid:", " * grid: open(N)"), ["'grid'", "calls to 'open' are not allowed"]),
    "grid float": (_replace(" * grid:", " * grid: N * 0.5"), ["'grid'", "0.5 is not an integer"]),
    "smem attribute": (_replace(" * smem:", " * smem: BM.bit_length()"), ["'smem'", "not allowed"]),
    "smem negative": (_replace(" * smem:", " * smem: -4 * BM"), ["'smem'", "negative"]),
    "precision": (_replace(" * precision:", " * precision: fp8"), ["'precision'", "'fp8'"]),
    "min_cc": (_replace(" * min_cc:", " * min_cc: hopper"), ["'min_cc'", "compute capability"]),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_malformed_header_is_one_line_naming_the_field(tmp_path, capsys, case):
    text, fragments = MALFORMED[case]
    path = write(tmp_path, "mine.cu", text)
    with pytest.raises(KernelFileError) as caught:
        kernelfile.load(path, 0)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)), message
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize("text, fragments", [
    ("/* gemmbench kernel\n * threads: some\n */\n", ["'threads'", "expected 1"]),
    ("/* gemmbench kernel\n * grid: 1\n */\n", ["'grid'", "for CUDA kernels"]),
    ("/* gemmbench kernel\n * search: X=1\n */\n", ["'search'", "for CUDA kernels"]),
])
def test_malformed_c_header(tmp_path, text, fragments):
    with pytest.raises(KernelFileError) as caught:
        kernelfile.load(write(tmp_path, "mine.c", text + SIGNATURE + "{}\n"), 0)
    for fragment in fragments:
        assert fragment in str(caught.value)


@pytest.mark.parametrize("args, fragments", [
    (["--kernel-file", "missing.c"], ["kernel file 'missing.c' not found"]),
    (["--kernel-file", "notes.txt"], ["expected a .cu (CUDA) or .c (C) file"]),
    (["--kernel-file", C_EXAMPLE, "--param", "KB"], ["--param 'KB'", "NAME=INTEGER"]),
    (["--kernel-file", C_EXAMPLE, "--param", "XX=3"], ["no kernel file has a parameter 'XX'"]),
    (["--kernel-file", C_EXAMPLE, "--param", "KB=0"], ["'constraints'", "'KB >= 1' is false"]),
    (["--kernel-file", C_EXAMPLE, "--kernel-timeout", "0"], ["out of range"]),
    (["--kernel-file", CUDA_EXAMPLE], ["runs with a GPU (a CUDA kernel)"]),
])
def test_bad_kernel_file_options(capsys, args, fragments):
    code, out, err = run(capsys, "run", "--device", "cpu", *ODD, *FAST, "--no-save", *args)
    assert_one_line_error(code, err, *fragments)


def test_cuda_file_without_gpu_needs_a_gpu(capsys, monkeypatch):
    from gemmbench.gpu.device import GpuUnavailable
    import gemmbench.gpu.backend as gpu_backend

    def unavailable(*a, **k):
        raise GpuUnavailable("no CUDA device found")
    monkeypatch.setattr(gpu_backend, "open_device", unavailable)
    code, out, err = run(capsys, "compare", "--kernel-file", CUDA_EXAMPLE, "-i", "0", "-i", "12", "--no-save")
    assert_one_line_error(code, err, "tiled_sgemm.cu is a CUDA kernel: it needs a GPU")


# --------------------------------------------------------------------------
# the expression evaluator
# --------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("7 / 2", 3), ("-7 / 2", -3), ("-7 // 2", -4), ("-7 % 3", -1), ("7 % 3", 1), ("ceil_div(N, 32)", 4),
    ("min(M, N, 5)", 5), ("max(M, 2 * N)", 200), ("N > M and N > 0", True), ("M > N or not N", False),
    ("0 < M <= N < 101", True), ("0 < M <= N < 100", False), ("1 if M == 64 else 2", 2), ("True + 1", 2), ("-(N - 1)", -99),
])
def test_expressions_evaluate_as_documented(text, value):
    assert Expr(text, ["M", "N"])({"M": 70, "N": 100}) == value


@pytest.mark.parametrize("text, fragment", [
    ("__import__('os').system('true')", "are not allowed"),
    ("__import__('os')", "calls to '__import__' are not allowed"),
    ("().__class__", "attribute access"),
    ("N.real", "attribute access"),
    ("[1, 2][0]", "indexing"),
    ("(lambda: 1)()", "calls to"),
    ("lambda: 1", "not allowed"),
    ("'text'", "not an integer"),
    ("2 ** 10", "not allowed"),
    ("N << 2", "not allowed"),
    ("[x for x in (1, 2)]", "not allowed"),
    ("(x := 1)", "not allowed"),
    ("f'{N}'", "not allowed"),
    ("{1: 2}", "not allowed"),
    ("min(*[1, 2])", "positional"),
    ("max(N, key=N)", "positional"),
    ("ceil_div(N)", "takes 2"),
    ("min(N)", "2 or more"),
    ("eval('1')", "calls to 'eval'"),
    ("globals()", "calls to 'globals'"),
    ("N if N else open", "unknown name 'open'"),
    ("Q + 1", "unknown name 'Q'"),
    ("1 +", "does not parse"),
    ("N; N", "does not parse"),
    ("N +" * 30, "'" + ("N +" * 30)[:59] + "…' does not parse"),  # a long expression cut
    ("N in (1, 2)", "not allowed"),
    ("N is 1", "not allowed"),
])
def test_evaluator_refuses_what_it_does_not_know(text, fragment):
    with pytest.raises(ExprError, match=None) as caught:
        Expr(text, ["N"])
    assert fragment in str(caught.value)


@pytest.mark.parametrize("text, fragment", [
    ("N / 0", "division by zero"), ("N % (N - N)", "modulo by zero"), ("N // 0", "division by zero"),
    ("N * N * N * N * N * N * N * N * N * N", "out of range"), ("ceil_div(N, 0)", "division by zero"),
])
def test_evaluation_errors(text, fragment):
    with pytest.raises(ExprError, match=fragment):
        Expr(text, ["N"])({"N": 100000})


# --------------------------------------------------------------------------
# compile errors name the user's file and line
# --------------------------------------------------------------------------

BROKEN_CUDA = GOOD_HEADER + '#include "helper.cuh"\n{gap}extern "C" __global__ void sgemm(int M, int N, int K, float alpha,\n' \
    "    const float* A, const float* B, float beta, float* C) {{\n    C[0] = undefined_thing;\n}}\n"


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("gap", ["", "\n\n"], ids=["next-line", "blank-lines"])
def test_cuda_compile_error_names_the_users_file_and_line(tmp_path, gap):
    """Line numbers survive an inlined local header (the #include is followed by code or by blank lines)."""
    write(tmp_path, "helper.cuh", "// a local header, inlined\n__device__ int helper() { return 1; }\n")
    source = BROKEN_CUDA.format(gap=gap)
    path = write(tmp_path, "broken.cu", source)
    spec = kernelfile.load(path, 0).spec
    text = expand_source(spec)
    assert text.startswith(f'#line 1 "{path.resolve()}"') and "helper()" in text and "#include" not in text
    (tmp_path / "build").mkdir()
    src = write(tmp_path / "build", "kernel.cu", text)  # compiled from elsewhere, as pycuda does
    done = subprocess.run([NVCC, "-cubin", "-arch=sm_80", *nvcc_options(spec), "-o", str(tmp_path / "k.cubin"),
                           str(src)], capture_output=True, text=True)
    assert done.returncode != 0
    line = source.splitlines().index("    C[0] = undefined_thing;") + 1
    assert f"{path.resolve()}({line}): error" in done.stderr, done.stderr
    summary = kernelfile.compile_summary("broken.cu", done.stderr)
    assert summary.startswith(f"broken.cu does not compile: {path.resolve()}({line}): error") and "\n" not in summary


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
def test_cuda_example_compiles_for_sm80_and_sm90(tmp_path):
    spec = kernelfile.load(CUDA_EXAMPLE, 0).spec
    src = write(tmp_path, "example.cu", expand_source(spec))
    for arch in ("sm_80", "sm_90"):
        done = subprocess.run([NVCC, "-cubin", f"-arch={arch}", *nvcc_options(spec), "-Xptxas", "-warn-spills",
                               "-o", str(tmp_path / "k.cubin"), str(src)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "spill" not in done.stderr.lower()


def test_c_compile_error_is_exit_2_with_file_and_line(tmp_path, capsys):
    path = write(tmp_path, "broken.c", "/* gemmbench kernel\n * name: broken\n */\n" + SIGNATURE
                 + " {\n    C[0] = undefined_thing;\n}\n")
    code, out, err = run(capsys, "run", "--device", "cpu", "--kernel-file", path, *ODD, *FAST, "--no-save")
    assert code == 2 and "Traceback" not in err
    *details, last = err.strip().splitlines()
    assert f"{path}:5:" in "\n".join(details)  # the compiler's own message, above
    assert last.startswith(f"gemmbench: error: {path} does not compile: {path}:5:") and "undefined_thing" in last


def test_tuning_cache_knows_a_user_kernel_by_its_file(tmp_path):
    first = kernelfile.load(CUDA_EXAMPLE, 0).spec
    second = kernelfile.load(CUDA_EXAMPLE, 3).spec
    shape = Shape(1024, 1024, 1024)
    assert TuningCache.key("H200", first, shape) == TuningCache.key("H200", second, shape)
    assert str(CUDA_EXAMPLE) in TuningCache.key("H200", first, shape)


# --------------------------------------------------------------------------
# the CPU path end to end: worker processes
# --------------------------------------------------------------------------

DROPS_A_TERM = "/* gemmbench kernel\n * name: drops a term\n */\n" + SIGNATURE + """ {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int p = 0; p < K - 1; p++) s += A[(long)i * K + p] * B[(long)p * N + j];
            C[(long)i * N + j] = beta == 0.0f ? alpha * s : alpha * s + beta * C[(long)i * N + j];
        }
}
"""
SEGFAULTS = SIGNATURE + " { *(volatile float *)0 = alpha; }\n"
HANGS = SIGNATURE + " { volatile int spin = 1; while (spin) {} }\n"


def _saved(results_dir):
    files = list(Path(results_dir).glob("*.json"))
    assert len(files) == 1
    return {r["name"]: r for r in json.loads(files[0].read_text())["results"]}


def test_wrong_crashing_and_hanging_c_kernels_fail_while_the_others_are_saved(tmp_path, capsys):
    wrong = write(tmp_path, "wrong.c", DROPS_A_TERM)
    crash = write(tmp_path, "crash.c", SEGFAULTS)
    hang = write(tmp_path, "hang.c", HANGS)
    code, out, err = run(capsys, "compare", "--device", "cpu", "-i", "2", "--kernel-file", wrong,
                         "--kernel-file", crash, "--kernel-file", hang, "--kernel-file", C_EXAMPLE,
                         "--kernel-timeout", "1", *ODD, *FAST, "--results-dir", tmp_path / "results")
    assert code == 1, err
    rows = _saved(tmp_path / "results")
    assert rows["drops a term"]["status"] == "fail" and rows["drops a term"]["reason"] == "wrong result"
    assert rows["drops a term"]["verification"]["max_rel_error"] > 1e-2
    assert rows["crash"]["status"] == "fail" and rows["crash"]["reason"] == "crashed: killed by SIGSEGV"
    assert rows["hang"]["status"] == "fail" and rows["hang"]["reason"].startswith("timed out: a call ran over 1 s")
    for name in ("OpenBLAS", "loop reorder", "blocked (example)"):
        assert rows[name]["status"] == "pass" and rows[name]["samples_s"], rows[name]
    assert [rows[n]["kernel_id"] for n in ("drops a term", "crash", "hang", "blocked (example)")] == [-1, -2, -3, -4]
    example = rows["blocked (example)"]
    assert example["notes"]["kernel_file"] == str(C_EXAMPLE)
    assert example["notes"]["kernel_sha256"] == kernelfile.load(C_EXAMPLE, 0).digest
    assert "FAIL (wrong result)" in out and "FAIL (crashed: killed by SIGSEGV)" in out and "timed out" in out


def test_c_example_sweep_and_param_override(tmp_path, capsys):
    code, out, err = run(capsys, "sizes", "--device", "cpu", "--sweep", "7,33", "--kernel-file", C_EXAMPLE,
                         "--param", "KB=4", *FAST, "--json", "--no-save")
    assert code == 0, err
    results = json.loads(out)["results"]
    assert [(r["kernel_id"], r["shape"]["M"]) for r in results] == [(0, 7), (-1, 7), (0, 33), (-1, 33)]
    assert all(r["status"] == "pass" for r in results)
    assert results[1]["params"] == {"KB": 4}


QUIET_AFTER = """
import os
from gemmbench.execute.isolated import _quiet_after_a_cuda_error
class LogicError(Exception):
    pass
LogicError.__module__ = {module!r}  # as pycuda's driver errors are
try:
    with _quiet_after_a_cuda_error():
        raise LogicError("cuStreamSynchronize failed: an illegal memory access was encountered")
except LogicError:
    pass
os.write(2, b"freed into a dead context")
"""


@pytest.mark.parametrize("module, silenced", [("pycuda._driver", True), ("builtins", False)])
def test_a_worker_is_quiet_on_stderr_after_a_cuda_error_only(module, silenced):
    """After a CUDA error the worker's later stderr (pycuda's warning per buffer
    freed into the dead context) goes nowhere; after any other error it stays."""
    import sys
    done = subprocess.run([sys.executable, "-c", QUIET_AFTER.format(module=module)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (done.stderr == "") is silenced, done.stderr
