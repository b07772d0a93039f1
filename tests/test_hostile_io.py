"""Hostile input to gemmbench's one writer, one reader and one number parser
(issue 16): paths that are not regular files, records and kernel-file headers
built to break a parser, and numbers Python's int() would take.

Every case asserts the exit code (2, or the UserError a module raises), one
line naming the value, no traceback, and that nothing in the folder changed
(a snapshot of every entry, device nodes and FIFOs included, taken without
opening them).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import socket
import stat
from pathlib import Path

import pytest

from gemmbench import cli, fsutil, validate
from gemmbench.backend import Shape
from gemmbench.errors import UserError
from gemmbench.kernelfile import KernelFileError, load as load_kernel, parse_overrides
from gemmbench.records import writer as recordfile
from gemmbench.records.results import KernelResult, RunRecord, to_json
from gemmbench.records.store import RecordError, load as load_record
from gemmbench.tuning import TuningCache
from gemmbench.verify import Verification

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def snapshot(folder: Path) -> dict:
    """Every entry under ``folder`` by kind, without opening anything but
    regular files: what a hostile case must leave exactly as it was."""
    out = {}
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in dirs + files:
            path = Path(root) / name
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                kind = ("file", hashlib.sha256(path.read_bytes()).hexdigest(), info.st_ino)
            elif stat.S_ISLNK(info.st_mode):
                kind = ("link", os.readlink(path))
            else:
                kind = (stat.S_IFMT(info.st_mode), info.st_rdev, info.st_ino)
            out[str(path.relative_to(folder))] = kind
    return out


def one_line_error(capsys, code: int, *fragments: str) -> str:
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    assert err.count("\n") == 1 and err.startswith("gemmbench: error: "), err
    assert "Traceback" not in err + out, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    return err


def one_line(exc: BaseException, *fragments: str) -> str:
    message = str(exc)
    assert "\n" not in message and message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def make_socket(path: Path) -> None:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(path))
    finally:
        s.close()  # the socket file stays


# what a hostile path can be; each builder makes it at ``path`` inside ``folder``
def _fifo(folder: Path, path: Path) -> None:
    os.mkfifo(path)


def _directory(folder: Path, path: Path) -> None:
    path.mkdir()
    (path / "inside").write_text("keep\n")


def _socket(folder: Path, path: Path) -> None:
    make_socket(path)


def _link_to_fifo(folder: Path, path: Path) -> None:
    os.mkfifo(folder / "pipe")
    path.symlink_to(folder / "pipe")


def _link_to_dir(folder: Path, path: Path) -> None:
    (folder / "sub").mkdir()
    path.symlink_to(folder / "sub")


def _link_loop(folder: Path, path: Path) -> None:
    path.symlink_to(path)


def _link_to_dev_null(folder: Path, path: Path) -> None:
    path.symlink_to("/dev/null")


def _chain_to_socket(folder: Path, path: Path) -> None:
    make_socket(folder / "sock")
    (folder / "hop").symlink_to(folder / "sock")
    path.symlink_to(folder / "hop")


NOT_REGULAR = {"fifo": (_fifo, "FIFO"), "directory": (_directory, "a directory"), "socket": (_socket, "a socket"),
               "link to a fifo": (_link_to_fifo, "FIFO"), "link to a directory": (_link_to_dir, "a directory"),
               "symlink loop": (_link_loop, "symlink loop"),
               "link to /dev/null": (_link_to_dev_null, "a character device"),
               "link chain to a socket": (_chain_to_socket, "a socket")}


def _existing(folder: Path, path: Path) -> None:
    path.write_text("precious\n")


def _link_to_existing(folder: Path, path: Path) -> None:
    (folder / "real.txt").write_text("precious\n")
    path.symlink_to(folder / "real.txt")


# regular targets that are refused without overwrite, or for their directory
REFUSED_REGULAR = {"existing file": (_existing, "already exists; give --overwrite"),
                   "link to an existing file": (_link_to_existing, "already exists; give --overwrite")}


def char_device(folder: Path, name: str, major_minor=(1, 7)) -> Path:
    """A copy of /dev/full (1, 7) or /dev/null (1, 3) in ``folder``; skips unless root may mknod here."""
    if not IS_ROOT:
        pytest.skip("mknod needs root")
    path = folder / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(*major_minor))
    except OSError as exc:
        pytest.skip(f"mknod not permitted here ({exc.strerror})")
    return path


# --------------------------------------------------------------------------
# the writer: paths and file kinds
# --------------------------------------------------------------------------

@pytest.mark.parametrize("case", NOT_REGULAR, ids=list(NOT_REGULAR))
@pytest.mark.parametrize("overwrite", [False, True], ids=["new", "overwrite"])
def test_write_new_refuses_what_is_not_a_regular_file(tmp_path, case, overwrite):
    build, fragment = NOT_REGULAR[case]
    target = tmp_path / "out.s"
    build(tmp_path, target)
    before = snapshot(tmp_path)
    with pytest.raises(fsutil.TargetError) as caught:
        fsutil.write_new(target, "listing\n", overwrite, "-o")
    one_line(caught.value, f"-o {target}", fragment)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("case", NOT_REGULAR, ids=list(NOT_REGULAR))
def test_asm_output_refuses_what_is_not_a_regular_file_before_building(tmp_path, capsys, case):
    """End to end, with no nvcc needed: the target is checked before anything is built."""
    build, fragment = NOT_REGULAR[case]
    target = tmp_path / "out.s"
    build(tmp_path, target)
    before = snapshot(tmp_path)
    code = cli.main(["asm", "-i", "5", "--arch", "sm_80", "-o", str(target)])
    one_line_error(capsys, code, str(target), fragment.split()[-1])  # click names a directory itself
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("case", REFUSED_REGULAR, ids=list(REFUSED_REGULAR))
def test_an_existing_file_is_never_replaced_without_overwrite(tmp_path, capsys, case):
    build, fragment = REFUSED_REGULAR[case]
    target = tmp_path / "out.s"
    build(tmp_path, target)
    before = snapshot(tmp_path)
    code = cli.main(["asm", "-i", "5", "--arch", "sm_80", "-o", str(target)])
    one_line_error(capsys, code, f"-o {target}", fragment)
    with pytest.raises(fsutil.TargetError):
        fsutil.write_new(target, "new\n", False, "-o")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("where", ["missing", "a file", "missing twice"])
def test_no_parent_folder_is_created(tmp_path, capsys, where):
    (tmp_path / "plain").write_text("x\n")
    parent = {"missing": tmp_path / "nope", "a file": tmp_path / "plain",
              "missing twice": tmp_path / "a" / "b"}[where]
    target = parent / "out.s"
    before = snapshot(tmp_path)
    code = cli.main(["asm", "-i", "5", "--arch", "sm_80", "-o", str(target)])
    one_line_error(capsys, code, f"-o {target}", "create it first")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("device", [(1, 7), (1, 3)], ids=["/dev/full copy", "/dev/null copy"])
@pytest.mark.parametrize("overwrite", [False, True], ids=["new", "overwrite"])
def test_a_device_node_is_never_replaced(tmp_path, capsys, device, overwrite):
    """As root, asm -o /dev/full once replaced the node with a regular file:
    tried on a copy made with mknod, never on /dev itself."""
    node = char_device(tmp_path, "full", device)
    before = snapshot(tmp_path)
    with pytest.raises(fsutil.TargetError) as caught:
        fsutil.write_new(node, "listing\n", overwrite, "-o")
    one_line(caught.value, "a character device")
    with pytest.raises(fsutil.TargetError):
        fsutil.write_atomic(node, "cache\n")
    code = cli.main(["asm", "-i", "5", "--arch", "sm_80", "-o", str(node)])
    one_line_error(capsys, code, f"-o {node} is a character device")
    assert snapshot(tmp_path) == before
    assert stat.S_ISCHR(os.lstat(node).st_mode) and os.lstat(node).st_rdev == os.makedev(*device)


@pytest.mark.parametrize("entry", ["write_atomic", "replacing", "place", "check_target"])
@pytest.mark.parametrize("case", ["fifo", "socket", "link to /dev/null"])
def test_every_writing_entry_point_refuses_the_same_kinds(tmp_path, entry, case):
    build, fragment = NOT_REGULAR[case]
    target = tmp_path / "cache.json"
    build(tmp_path, target)
    source = tmp_path / ".partial"
    source.write_text("complete\n")
    before = snapshot(tmp_path)
    with pytest.raises(fsutil.TargetError) as caught:
        if entry == "write_atomic":
            fsutil.write_atomic(target, "x")
        elif entry == "replacing":
            with fsutil.replacing(target) as tmp:
                tmp.write_text("x")
        elif entry == "place":
            fsutil.place(source, target, True, "--export")
        else:
            fsutil.check_target(target, True, "--export")
    one_line(caught.value, str(target), fragment)
    if entry == "place":  # the partial file is always cleaned up
        before.pop(".partial")
    assert snapshot(tmp_path) == before


def test_a_symlink_is_written_through_and_kept(tmp_path):
    """The documented symlink rule: the file a link points to is written; the link stays."""
    real = tmp_path / "real.s"
    real.write_text("old\n")
    link = tmp_path / "link.s"
    link.symlink_to(real)
    fsutil.write_new(link, "new\n", overwrite=True, option="-o")
    assert link.is_symlink() and os.readlink(link) == str(real) and real.read_text() == "new\n"
    dangling = tmp_path / "dangling.s"
    dangling.symlink_to(tmp_path / "made.s")
    fsutil.write_new(dangling, "made\n", option="-o")
    assert dangling.is_symlink() and (tmp_path / "made.s").read_text() == "made\n"


def test_a_file_that_appears_while_working_is_not_replaced(tmp_path, monkeypatch):
    target = tmp_path / "out.s"

    def appear(f):
        target.write_text("someone else's\n")  # created after check_target said the name was free
        f.write(b"listing\n")
    with pytest.raises(fsutil.TargetError) as caught:
        fsutil.write_new(target, appear, False, "-o")
    one_line(caught.value, "already exists")
    assert target.read_text() == "someone else's\n" and sorted(os.listdir(tmp_path)) == ["out.s"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EIO])
def test_a_failed_write_is_one_line_and_leaves_nothing(tmp_path, code):
    target = tmp_path / "plot.png"

    def fail(f):
        f.write(b"half")
        raise OSError(code, os.strerror(code))
    with pytest.raises(fsutil.TargetError) as caught:
        fsutil.write_new(target, fail, False, "--plot")
    one_line(caught.value, f"--plot {target}: could not write it",
             "disk is full" if code != errno.EIO else os.strerror(code))
    assert os.listdir(tmp_path) == []


def _sizes_record() -> RunRecord:
    v = Verification(1e-7, 1e-5, 0)
    rows = [KernelResult("cpu", kid, f"rung {kid}", "fp32", Shape(n, n, n), "pass", verification=v,
                         samples=[1e-4 * n, 1.1e-4 * n, 1.2e-4 * n], threads=1)
            for kid in (0, 1) for n in (16, 32)]
    return RunRecord("sizes", "cpu", {"seed": 0}, {"cpu": {"cpu": "test CPU", "cores": 2}}, rows)


@pytest.fixture
def sizes_record(tmp_path) -> Path:
    path = tmp_path / "rec" / "sizes.json"
    path.parent.mkdir()
    path.write_text(to_json(_sizes_record()))
    return path


@pytest.mark.parametrize("case", ["fifo", "directory", "link to /dev/null", "existing file", "unknown extension",
                                  "missing folder"])
def test_show_plot_refuses_in_one_line(tmp_path, capsys, sizes_record, case):
    pytest.importorskip("matplotlib")
    target = tmp_path / "out" / ("plot.xyz" if case == "unknown extension" else "plot.png")
    if case != "missing folder":
        target.parent.mkdir()
    if case in NOT_REGULAR:
        NOT_REGULAR[case][0](target.parent, target)
    elif case == "existing file":
        target.write_text("keep\n")
    before = snapshot(tmp_path)
    code = cli.main(["show", str(sizes_record), "--plot", str(target)])
    one_line_error(capsys, code, str(target))  # click names a directory itself
    assert snapshot(tmp_path) == before


def test_show_plot_writes_a_new_file(tmp_path, capsys, sizes_record):
    pytest.importorskip("matplotlib")
    target = tmp_path / "plot.png"
    assert cli.main(["show", str(sizes_record), "--plot", str(target)]) == 0
    assert target.read_bytes().startswith(b"\x89PNG") and not [p for p in os.listdir(tmp_path) if ".tmp-" in p]


# --------------------------------------------------------------------------
# the records writer: a full disk is said as such
# --------------------------------------------------------------------------

def test_a_full_disk_is_never_called_a_crash(tmp_path, monkeypatch):
    record = _sizes_record()
    rows, record.results = record.results, []
    writer = recordfile.RecordWriter(record, tmp_path)
    for row in rows[:2]:
        record.results.append(row)
        writer.add(row)
    real_write = os.write

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(recordfile.os, "write", full)
    monkeypatch.setattr(recordfile, "write_atomic", lambda *a: full(0, b""))
    record.results.append(rows[2])
    with pytest.raises(recordfile.SaveError) as caught:
        writer.add(rows[2])
    one_line(caught.value, "the disk is full")
    with pytest.raises(recordfile.SaveError):
        writer.finish()
    monkeypatch.setattr(recordfile.os, "write", real_write)
    monkeypatch.undo()
    (journal,) = tmp_path.glob(".*.journal")
    assert journal.name.endswith(".disk-full.journal")
    snapshot_text = json.loads(writer.path.read_text())["incomplete_reason"]
    assert "crash or kill" not in snapshot_text and "disk filled up" in snapshot_text
    (recovered,) = recordfile.recover_orphans(tmp_path)
    data = json.loads(recovered.read_text())
    assert recovered == writer.path and data["incomplete_reason"] == recordfile.DISK_FULL
    assert "crash" not in data["incomplete_reason"] and len(data["results"]) == 2
    assert not list(tmp_path.glob(".*.journal"))


# --------------------------------------------------------------------------
# the reader: file kinds and sizes
# --------------------------------------------------------------------------

READ_KINDS = {**NOT_REGULAR, "link to /dev/zero": (lambda f, p: p.symlink_to("/dev/zero"), "a character device"),
              "missing": (lambda f, p: None, "no such file")}


@pytest.mark.parametrize("case", READ_KINDS, ids=list(READ_KINDS))
def test_show_reads_regular_files_only_and_never_blocks(tmp_path, capsys, case):
    build, fragment = READ_KINDS[case]
    path = tmp_path / "r.json"
    build(tmp_path, path)
    before = snapshot(tmp_path)
    code = cli.main(["show", str(path)])
    one_line_error(capsys, code, str(path), fragment)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("case", ["fifo", "link to /dev/zero", "directory"])
def test_diff_reads_regular_files_only(tmp_path, capsys, sizes_record, case):
    build, fragment = READ_KINDS[case]
    path = tmp_path / "new.json"
    build(tmp_path, path)
    code = cli.main(["diff", str(sizes_record), str(path)])
    one_line_error(capsys, code, str(path), fragment)


def test_a_record_past_the_size_limit_is_not_read(tmp_path, capsys):
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:  # sparse: no disk used, no byte read
        f.truncate(fsutil.RECORD_MAX_BYTES + 1)
    code = cli.main(["show", str(path)])
    one_line_error(capsys, code, str(path), "MiB")


@pytest.mark.parametrize("case", ["fifo", "link to /dev/zero", "directory", "socket"])
def test_a_kernel_file_is_read_only_when_regular(tmp_path, case):
    build, fragment = READ_KINDS[case]
    path = tmp_path / "mine.cu"
    build(tmp_path, path)
    with pytest.raises(KernelFileError) as caught:
        load_kernel(path, 0)
    one_line(caught.value, str(path), fragment)


@pytest.mark.parametrize("include", ["/dev/stdin", "/dev/zero", "fifo.cuh", "folder.cuh", "loop.cuh"])
def test_an_include_that_would_block_is_refused_at_load(tmp_path, include):
    """#include "/dev/stdin" used to wait on the terminal when the source was inlined."""
    os.mkfifo(tmp_path / "fifo.cuh")
    (tmp_path / "folder.cuh").mkdir()
    (tmp_path / "loop.cuh").symlink_to(tmp_path / "loop.cuh")
    text = (EXAMPLES / "tiled_sgemm.cu").read_text()
    path = tmp_path / "mine.cu"
    path.write_text(f'#include "{include}"\n' + text)
    with pytest.raises(KernelFileError) as caught:
        load_kernel(path, 0)
    one_line(caught.value, str(path), include, "line 1")


def test_a_nested_include_is_checked_too(tmp_path):
    (tmp_path / "outer.cuh").write_text('#pragma once\n#include "/dev/zero"\n')
    path = tmp_path / "mine.cu"
    path.write_text('#include "outer.cuh"\n' + (EXAMPLES / "tiled_sgemm.cu").read_text())
    with pytest.raises(KernelFileError) as caught:
        load_kernel(path, 0)
    one_line(caught.value, "/dev/zero", "line 2 of outer.cuh", "a character device")


@pytest.mark.parametrize("case", ["fifo", "link to /dev/zero", "directory"])
def test_the_tuning_cache_is_never_read_moved_or_replaced_when_not_regular(tmp_path, monkeypatch, case):
    from gemmbench.rungs import get_spec
    monkeypatch.setenv("GEMMBENCH_CACHE_DIR", str(tmp_path))
    build, fragment = READ_KINDS[case]
    build(tmp_path, tmp_path / "tuning.json")
    before = snapshot(tmp_path)
    spec = get_spec("gpu", 9)
    cache = TuningCache()
    assert cache.lookup("GPU", spec, Shape(64, 64, 64)) is None and fragment in cache.problem
    assert "never replaced" in cache.notes[0]
    with pytest.raises(fsutil.TargetError) as caught:
        cache.store("GPU", spec, Shape(64, 64, 64), dict(spec.params), 1.0, 1)
    one_line(caught.value, "tuning.json")
    with pytest.raises(fsutil.TargetError):
        cache.check_writable()
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"version": 1, "entries": ' + "9" * 5001 + "}"],
                         ids=["100k deep", "5001 digits"])
def test_a_hostile_tuning_cache_is_a_note_not_a_traceback(tmp_path, text):
    from gemmbench.rungs import get_spec
    path = tmp_path / "tuning.json"
    path.write_text(text)
    cache = TuningCache(path)
    assert cache.lookup("GPU", get_spec("gpu", 9), Shape(64, 64, 64)) is None
    assert cache.problem and ("nested" in cache.problem or "characters" in cache.problem)


# --------------------------------------------------------------------------
# the reader: record contents
# --------------------------------------------------------------------------

def _base() -> dict:
    record = _sizes_record()
    record.environment["cpu"]["blas"] = [{"internal_api": "openblas", "version": "0.3", "architecture": "Haswell"}]
    return json.loads(to_json(record))


def _edit(change):
    def build():
        data = _base()
        change(data)
        return json.dumps(data)
    return build


def _row(data, key, value):
    data["results"][0][key] = value


RECORD_CASES = {
    "100k deep nesting": (lambda: "[" * 100_000 + "]" * 100_000, "nested more than"),
    "100k deep objects": (lambda: '{"a":' * 100_000 + "1" + "}" * 100_000, "nested more than"),
    "5001-digit integer": (_edit(lambda d: None), "characters"),  # replaced below
    "5001-digit float": (lambda: '{"schema": 2, "x": 1.' + "5" * 5001 + "}", "characters"),
    "NaN": (lambda: json.dumps(_base()).replace('"seed": 0', '"seed": NaN'), "NaN"),
    "Infinity sample": (lambda: json.dumps(_base()).replace("0.0016", "Infinity", 1), "Infinity"),
    "blas as a string": (_edit(lambda d: d["environment"]["cpu"].update(blas="openblas")),
                         "environment.cpu.blas should be a list"),
    "blas entry as a number": (_edit(lambda d: d["environment"]["cpu"].update(blas=[5])),
                               "environment.cpu.blas[0] should be an object"),
    "blas version as a list": (_edit(lambda d: d["environment"]["cpu"]["blas"][0].update(version=[1])),
                               "environment.cpu.blas[0].version should be a string"),
    "cpu name as a number": (_edit(lambda d: d["environment"]["cpu"].update(cpu=3)), "environment.cpu.cpu"),
    "cores zero": (_edit(lambda d: d["environment"]["cpu"].update(cores=0)), "environment.cpu.cores should be >= 1"),
    "flags as a string": (_edit(lambda d: _row(d, "flags", "noisy")), "results[0].flags should be a list"),
    "flags null": (_edit(lambda d: _row(d, "flags", None)), "results[0].flags should be a list"),
    "flag as a number": (_edit(lambda d: _row(d, "flags", [1])), "results[0].flags[0] should be a string"),
    "flag with markup": (_edit(lambda d: _row(d, "flags", ["[blink]x"])), "results[0].flags[0] should be a word"),
    "denormal sample": (_edit(lambda d: _row(d, "samples_s", [5e-324])), "results[0].samples_s[0]"),
    "huge sample": (_edit(lambda d: _row(d, "samples_s", [1e300])), "results[0].samples_s[0]"),
    "boolean sample": (_edit(lambda d: _row(d, "samples_s", [True])), "results[0].samples_s[0] should be a number"),
    "shape 2**62": (_edit(lambda d: d["results"][0]["shape"].update(M=2 ** 62)), "results[0].shape.M should be"),
    "shape negative": (_edit(lambda d: d["results"][0]["shape"].update(N=-4)), "results[0].shape.N should be >= 1"),
    "shape float": (_edit(lambda d: d["results"][0]["shape"].update(K=16.0)), "results[0].shape.K should be an integer"),
    "threads zero": (_edit(lambda d: _row(d, "threads", 0)), "results[0].threads should be >= 1"),
    "threads huge": (_edit(lambda d: _row(d, "threads", 10 ** 9)), "results[0].threads should be"),
    "gpu negative": (_edit(lambda d: _row(d, "gpu", -1)), "results[0].gpu should be >= 0"),
    "kernel id huge": (_edit(lambda d: _row(d, "kernel_id", 10 ** 15)), "results[0].kernel_id should be"),
    "device unknown": (_edit(lambda d: _row(d, "device", "tpu")), "results[0].device should be"),
    "params value string": (_edit(lambda d: _row(d, "params", {"BM": "64"})), "results[0].params.BM should be an integer"),
    "params odd name": (_edit(lambda d: _row(d, "params", {"a b": 1})), "results[0].params has a key"),
    "notes throttled share 2": (_edit(lambda d: _row(d, "notes", {"throttled_share": 2})),
                                "results[0].notes.throttled_share should be"),
    "notes clock string": (_edit(lambda d: _row(d, "notes", {"sm_clock_mhz": "fast"})),
                           "results[0].notes.sm_clock_mhz should be a number"),
    "notes throttle string": (_edit(lambda d: _row(d, "notes", {"throttle": "power"})),
                              "results[0].notes.throttle should be a list"),
    "tolerance negative": (_edit(lambda d: d["results"][0]["verification"].update(tolerance=-1)),
                           "results[0].verification.tolerance should be >= 0"),
    "nonfinite negative": (_edit(lambda d: d["results"][0]["verification"].update(nonfinite=-1)),
                           "results[0].verification.nonfinite should be >= 0"),
    "duplicate rows": (_edit(lambda d: d["results"].append(d["results"][1])),
                       "results[1] and results[4] are the same row"),
    "gpus key with zeros": (_edit(lambda d: d["environment"].update(gpus={"007": {"error": "x"}})),
                            "environment.gpus has a key"),
    "gpus key not a number": (_edit(lambda d: d["environment"].update(gpus={"x": {}})), "environment.gpus has a key"),
    "gpu sm_count zero": (_edit(lambda d: d["environment"].update(gpu={
        "name": "G", "compute_capability": "9.0", "sm_count": 0, "max_sm_clock_mhz": 1.0, "peak_fp32_tflops": 1.0,
        "driver_version": "1", "cuda_driver_api": "1"})), "environment.gpu.sm_count should be positive"),
    "options top string": (_edit(lambda d: d["options"].update(top="10")), "options.top should be an integer"),
    "env notes string": (_edit(lambda d: d["environment"].update(notes="hello")), "environment.notes should be a list"),
    "planned negative": (_edit(lambda d: d.update(planned=-1)), "planned should be >= 0"),
}
RECORD_CASES["5001-digit integer"] = (lambda: json.dumps(_base()).replace('"seed": 0', '"seed": ' + "7" * 5001),
                                      "characters")


@pytest.mark.parametrize("case", RECORD_CASES, ids=list(RECORD_CASES))
def test_a_hostile_record_is_one_line_naming_the_file_and_field(tmp_path, capsys, case):
    text, fragment = RECORD_CASES[case]
    path = tmp_path / "bad.json"
    path.write_text(text())
    before = snapshot(tmp_path)
    with pytest.raises(RecordError) as caught:
        load_record(path)
    one_line(caught.value, str(path), fragment)
    code = cli.main(["show", str(path)])
    one_line_error(capsys, code, str(path), fragment)
    assert snapshot(tmp_path) == before


def test_the_base_record_of_the_hostile_cases_is_valid(tmp_path):
    path = tmp_path / "good.json"
    path.write_text(json.dumps(_base()))
    assert len(load_record(path).record.results) == 4


# --------------------------------------------------------------------------
# kernel-file headers
# --------------------------------------------------------------------------

def _header_file(tmp_path: Path, **fields) -> Path:
    lines = {"name": "mine", "params": "BM=64, TM=4", "block": "BM / TM", "grid": "ceil_div(N, BM), ceil_div(M, BM)",
             **fields}
    text = "/* gemmbench kernel\n" + "".join(f" * {k}: {v}\n" for k, v in lines.items()) + " */\n"
    path = tmp_path / "mine.cu"
    path.write_text(text + "__global__ void sgemm() {}\n")
    return path


HEADER_CASES = {
    "100k terms": ({"smem": "+".join(["1"] * 100_000)}, "smem", "characters long"),
    "100k nots": ({"constraints": "not " * 100_000 + "1"}, "constraints", "characters long"),
    "deep parentheses": ({"smem": "(" * 300 + "1" + ")" * 300}, "smem", "does not parse"),
    "deep unary minus": ({"smem": "-" * 400 + "1"}, "smem", "levels deep"),
    "deep calls": ({"smem": "min(" * 120 + "1" + ", 1)" * 120}, "smem", "levels deep"),
    "long conditional": ({"smem": "1 if " * 150 + "1" + " else 1" * 150}, "smem", "characters long"),
    "underscore digits": ({"params": "BM=6_4, TM=4"}, "params", "'6_4'"),
    "full-width digits": ({"params": "BM=６４, TM=4"}, "params", "'６４'"),
    "hex in smem": ({"smem": "0x10"}, "smem", "'0x10'"),
    "underscore in grid": ({"grid": "ceil_div(N, 6_4), 1"}, "grid", "'6_4'"),
    "float in block": ({"block": "1e3"}, "block", "not an integer"),
    "full-width search": ({"search": "BM=３２,64"}, "search", "'３２'"),
    "NUL in constraint": ({"constraints": "BM > 0\x00"}, "constraints", ""),
    "min_cc full-width": ({"min_cc": "８.0"}, "min_cc", "compute capability"),
    "params 30 digits": ({"params": "BM=" + "9" * 30 + ", TM=4"}, "params", "too long"),
}


@pytest.mark.parametrize("case", HEADER_CASES, ids=list(HEADER_CASES))
def test_a_hostile_header_is_one_line_naming_the_field(tmp_path, case):
    fields, field, fragment = HEADER_CASES[case]
    path = _header_file(tmp_path, **fields)
    with pytest.raises(KernelFileError) as caught:
        load_kernel(path, 0)
    one_line(caught.value, f"{path}:", f"header field '{field}'", fragment)


def test_a_hostile_header_through_asm_is_exit_2(tmp_path, capsys):
    path = _header_file(tmp_path, smem="not " * 100_000 + "1")
    code = cli.main(["asm", "--kernel-file", str(path), "--arch", "sm_80"])
    one_line_error(capsys, code, str(path), "header field 'smem'")


# --------------------------------------------------------------------------
# the number parser: --param, options, and the parser itself
# --------------------------------------------------------------------------

BAD_PARAMS = {
    "full-width digits": (["BM=１６"], "'１６' is not an integer"),
    "underscore": (["BM=1_6"], "'1_6' is not an integer"),
    "hex": (["BM=0x10"], "'0x10' is not an integer"),
    "float": (["BM=1e3"], "'1e3' is not an integer"),
    "empty value": (["BM="], "'' is not an integer"),
    "no name": (["=16"], "expected NAME=INTEGER"),
    "no equals": (["BM16"], "expected NAME=INTEGER"),
    "space inside": (["BM=1 6"], "'1 6' is not an integer"),
    "Arabic-Indic digits": (["BM=١٦"], "is not an integer"),
    "superscript": (["BM=¹"], "is not an integer"),
    "too long": (["BM=" + "9" * 5001], "too long"),
    "newline in name": (["B\nM=16"], "expected NAME=INTEGER"),
    "repeated": (["BM=16", "BM=32"], "--param BM is given twice"),
    "repeated same value": (["BM=16", "TM=4", "BM=16"], "--param BM is given twice"),
    "repeated with spaces": (["BM=16", " BM =32"], "--param BM is given twice"),
}


@pytest.mark.parametrize("case", BAD_PARAMS, ids=list(BAD_PARAMS))
def test_a_bad_param_is_one_line_naming_it(case):
    items, fragment = BAD_PARAMS[case]
    with pytest.raises(UserError) as caught:
        parse_overrides(items)
    one_line(caught.value, "--param", fragment)


@pytest.mark.parametrize("case", ["full-width digits", "underscore", "repeated"])
def test_a_bad_param_through_the_command_line(tmp_path, capsys, case):
    items, fragment = BAD_PARAMS[case]
    args = ["asm", "--kernel-file", str(EXAMPLES / "tiled_sgemm.cu"), "--arch", "sm_80"]
    for item in items:
        args += ["--param", item]
    code = cli.main(args)
    one_line_error(capsys, code, "--param", fragment)


def test_good_params_parse():
    assert parse_overrides(["BM=16", " TM = -4 ", "BK=+8"]) == {"BM": 16, "TM": -4, "BK": 8}


@pytest.mark.parametrize("option,value", [("--seed", "１６"), ("--seed", "1_6"), ("-m", "٣"), ("--min-samples", "0x10"),
                                          ("--seed", "9" * 5001)])
def test_an_option_number_outside_ascii_digits_is_refused(capsys, option, value):
    code = cli.main(["run", "--device", "cpu", "-i", "1", option, value, "--no-save"])
    one_line_error(capsys, code, option)


@pytest.mark.parametrize("text", ["１６", "1_6", "0x10", "1e3", "", "+", "--1", "1.0", "٣", "1 6", "\u30001"])
def test_parse_int_refuses(text):
    with pytest.raises(ValueError) as caught:
        validate.parse_int(text)
    assert "\n" not in str(caught.value)


# --------------------------------------------------------------------------
# the records directory may be shared: nothing planted there is followed or blocks
# --------------------------------------------------------------------------

def _journal_text(rows: int = 2) -> str:
    record = _sizes_record()
    head = json.dumps({"journal": 1, "head": {k: v for k, v in json.loads(to_json(record)).items()
                                              if k != "results"}})
    lines = [json.dumps({"row": i, "result": json.loads(to_json(record))["results"][i]}) for i in range(rows)]
    return "\n".join([head, *lines]) + "\n"


@pytest.mark.parametrize("case", ["fifo journal", "journal linked outside", "record name linked outside",
                                  "100k deep journal head", "socket journal"])
def test_recovery_in_a_shared_directory_follows_and_blocks_on_nothing(tmp_path, case):
    results, outside = tmp_path / "results", tmp_path / "outside"
    results.mkdir()
    outside.mkdir()
    (outside / "precious").write_text("keep\n")
    journal = results / ".sizes-cpu-1.journal"
    if case == "fifo journal":
        os.mkfifo(journal)
    elif case == "socket journal":
        make_socket(journal)
    elif case == "journal linked outside":
        (outside / "j").write_text(_journal_text())
        journal.symlink_to(outside / "j")
    elif case == "record name linked outside":
        journal.write_text(_journal_text())
        (results / "sizes-cpu-1.json").symlink_to(outside / "precious")
    else:
        journal.write_text("[" * 100_000 + "\n")
    before = snapshot(tmp_path)
    assert recordfile.recover_orphans(results) == []
    after = snapshot(tmp_path)
    if case == "100k deep journal head":  # unreadable: moved aside, never deleted
        assert sorted(os.listdir(results)) == [".sizes-cpu-1.journal.bad"]
    else:
        assert after == before


def test_a_symlink_planted_at_a_record_s_name_is_never_written_through(tmp_path):
    record = _sizes_record()
    rows, record.results = record.results, []
    writer = recordfile.RecordWriter(record, tmp_path / "results")
    record.results.append(rows[0])
    writer.add(rows[0])
    (tmp_path / "precious").write_text("keep\n")
    writer.path.unlink()
    writer.path.symlink_to(tmp_path / "precious")
    record.results.append(rows[1])
    with pytest.raises(recordfile.SaveError) as caught:
        writer.add(rows[1])  # the second row takes a snapshot
    one_line(caught.value, "is a symlink")
    writer.close()
    assert (tmp_path / "precious").read_text() == "keep\n" and writer.path.is_symlink()
