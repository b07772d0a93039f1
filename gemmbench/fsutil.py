"""Every file gemmbench reads or writes goes through here, and the directory
gemmbench caches in.

Reading (``read_bytes``, ``read_text``, ``loads_json``): regular files only,
opened without blocking (a FIFO, a device such as /dev/zero or /dev/stdin, a
socket or a directory is refused in one line, never read), at most a stated
number of bytes (a file that grows while read is cut at the limit, never
followed), and JSON with bounded nesting and number length (Python's json
recurses per level and its int() refuses 4300+ digits with a traceback).

Writing (``check_target`` before any work, ``write_new`` at the end; ``place``
for a file another program wrote; ``write_atomic`` and ``replacing`` for
gemmbench's own record and cache files): regular files only. A device node,
FIFO, socket or directory at the path is refused in one line and left as it
is. A symlink is written *through*: the file it points to is checked by the
same rules and replaced, the link itself stays (so ``-o link-to-/dev/null``
is refused like ``-o /dev/null``). An existing file is replaced only with
``overwrite`` (the commands' ``--overwrite``); no parent directory is ever
created here (a records directory the user named is created by its writer).

Every record and cache file is written through ``replacing``: the data goes
to a temporary name in the same directory (so the rename stays on one
filesystem) and only a complete file is renamed over the real name. The
temporary name carries the host and the pid of its writer, so a later run can
tell the leftovers of a killed process from a write still in progress
(``remove_stale_temps``). No fsync: this guards against a killed process, not
against a power cut, and records are saved after every kernel.

The cache lives in ``$GEMMBENCH_CACHE_DIR``, else the platform's user cache
directory (``$XDG_CACHE_HOME/gemmbench`` or ``~/.cache/gemmbench`` on Linux).
A location that is not a directory is an error whenever the cache is used. A
location that cannot be created or written is an error only when something
must be written there: a read-only cache still serves what it holds.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import socket
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Union

import platformdirs

from .errors import UserError

# A temporary older than this is abandoned whoever wrote it (a pid may be reused).
STALE_SECONDS = 24 * 3600

_TEMP = re.compile(r"^\..+\.tmp-(?P<host>.+)-(?P<pid>\d+)-[0-9a-f]{8}$")
# Temporaries of earlier versions (tempfile.mkstemp names), removed by age only.
_OLD_TEMP = re.compile(r"^(tmp|\.tuning-|\.tmp-)[a-z0-9_]{8}\.(so|json)$")


class CacheDirError(UserError):
    """The cache directory is unusable; the message names the variable that chose it."""


# --------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------

# Size limits of what gemmbench reads, each far above what it writes itself and
# low enough that a hostile file cannot take the machine's memory (a JSON text
# becomes Python objects of about ten times its size).
RECORD_MAX_BYTES = 64 << 20  # the reference sweeps (results/reference) are 0.6 MB: a hundredfold margin
KERNEL_FILE_MAX_BYTES = 4 << 20  # a kernel source file (and each file it includes)
TUNING_CACHE_MAX_BYTES = 16 << 20  # one small entry per GPU, rung and shape class
# The reference records nest 6 levels deep, with numbers of at most 22
# characters (a float's repr takes up to 24); these bounds keep a reader from
# recursing without end or parsing a number of thousands of digits.
JSON_MAX_DEPTH = 64
JSON_MAX_NUMBER_CHARS = 40

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink loop"))


def kind_of(mode: int) -> str:
    """'a directory', 'a FIFO (named pipe)'...: what a non-regular file is."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


class UnreadableFile(UserError):
    """A file gemmbench will not read; ``problem`` says why without the path."""

    def __init__(self, path, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem


def read_bytes(path, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` (a symlink is followed to its
    target, which must be one), at most ``limit`` of them; UnreadableFile
    otherwise. Opened with O_NONBLOCK so that a FIFO never waits for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UnreadableFile(path, "no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnreadableFile(path, "is a symlink loop, not a regular file") from None
        try:  # a socket cannot be opened at all: say what it is
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise UnreadableFile(path, f"is {kind_of(mode)}, not a regular file") from None
        raise UnreadableFile(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(path, f"is {kind_of(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise UnreadableFile(path, f"is {info.st_size} bytes, more than the {limit >> 20} MiB such a "
                                       f"file may have")
        chunks, size = [], 0
        while size <= limit:  # a file growing while read stops at the limit
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise UnreadableFile(path, f"grew past the {limit >> 20} MiB such a file may have while being read")
        return b"".join(chunks)
    except OSError as exc:
        raise UnreadableFile(path, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_text(path, limit: int) -> str:
    """``read_bytes`` decoded as UTF-8 (a decoding error is UnreadableFile)."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(path, f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


class JSONLimitError(ValueError):
    """JSON beyond the reader's bounds: nesting, a number's length, NaN/Infinity."""


# a JSON string (unrolled so that the regex never backtracks), and the brackets outside strings
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def json_depth(text: str, stop_above: int = JSON_MAX_DEPTH) -> int:
    """How deeply the arrays and objects of ``text`` nest (counting stops
    once past ``stop_above``); linear, and without recursion."""
    depth = deepest = 0
    for match in _JSON_BRACKET.finditer(_JSON_STRING.sub('""', text)):
        depth += 1 if match.group() in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > stop_above:
                break
    return deepest


def _bounded_number(parse):
    def convert(text: str):
        if len(text) > JSON_MAX_NUMBER_CHARS:
            raise JSONLimitError(f"a JSON number of {len(text)} characters ({text[:12]}...; "
                                 f"at most {JSON_MAX_NUMBER_CHARS} are read)")
        return parse(text)
    return convert


def _no_constant(name: str):
    raise JSONLimitError(f"{name} in JSON (not a JSON number)")


def loads_json(text: str):
    """``json.loads`` within bounds: JSONLimitError for nesting deeper than
    JSON_MAX_DEPTH, a number longer than JSON_MAX_NUMBER_CHARS, or NaN and
    Infinity (not JSON); json.JSONDecodeError for text that is not JSON."""
    if json_depth(text) > JSON_MAX_DEPTH:
        raise JSONLimitError(f"JSON nested more than {JSON_MAX_DEPTH} levels deep")
    return json.loads(text, parse_int=_bounded_number(int), parse_float=_bounded_number(float),
                      parse_constant=_no_constant)


# --------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------

Data = Union[str, bytes, Callable[[BinaryIO], None]]


class TargetError(UserError):
    """A path gemmbench will not write to; one line naming the option and the path."""


def _named(path, option: str | None) -> str:
    return f"{option} {path}" if option else str(path)


def _target_kind(path: Path) -> int | None:
    """The mode of what is at ``path`` (not following a symlink), or None."""
    try:
        return os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # the directory is checked apart
        return None


def resolve_target(path, option: str | None = None, follow_symlinks: bool = True) -> Path:
    """Where writing ``path`` writes: the path itself, or the file a symlink
    (chain) points to. TargetError when that is anything but a regular file
    or nothing, and for any symlink without ``follow_symlinks`` (the records
    gemmbench names itself, in a directory others may share); the path's
    directory is not checked here."""
    given = Path(path)
    if not str(path):
        raise TargetError(f"{_named(path, option)}: an empty path; give a file name")
    if os.path.islink(given):
        if not follow_symlinks:
            raise TargetError(f"{_named(path, option)} is a symlink (to {os.readlink(given)}); gemmbench writes "
                              f"the files it names itself only as regular files: remove the link")
        real = Path(os.path.realpath(given))
    else:
        real = given
    try:
        mode = _target_kind(real)
    except OSError as exc:
        raise TargetError(f"{_named(path, option)}: cannot look at it ({exc.strerror or exc})") from None
    if mode is not None and not stat.S_ISREG(mode):
        where = "" if real == given else f" (the symlink's target {real})"
        raise TargetError(f"{_named(path, option)}{where} is {kind_of(mode)}, not a regular file; "
                          f"give the path of a file to write")
    return real


def check_target(path, overwrite: bool = False, option: str | None = None) -> Path:
    """Before any work: ``path`` can be written as a new regular file (or,
    with ``overwrite``, replace an existing one), in an existing writable
    directory. Returns the path written in the end (a symlink's target);
    TargetError (one line, exit 2) otherwise. Nothing is left behind."""
    real = resolve_target(path, option)
    name = _named(path, option)
    if real.exists() and not overwrite:
        hint = "give --overwrite to replace it" if option else "it is kept"
        raise TargetError(f"{name} already exists; {hint}, or choose another name")
    parent = real.parent
    if not parent.is_dir():
        problem = "is not a directory" if parent.exists() else "does not exist"
        raise TargetError(f"{name}: the directory {parent} {problem}; create it first or choose another place")
    try:  # the one honest test of writability (root ignores permission bits; read-only mounts do not)
        fd, probe = tempfile.mkstemp(prefix=".gemmbench-probe-", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise TargetError(f"{name}: cannot write in {parent} ({exc.strerror or exc}); "
                          f"choose a writable place") from None
    return real


def temp_path(path: Path) -> Path:
    """A fresh hidden name beside ``path`` that says who is writing it."""
    return path.with_name(f".{path.name}.tmp-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}")


def _fill(tmp: Path, data: Data) -> int:
    """Create ``tmp`` (O_EXCL) with ``data``; the bytes written."""
    with open(tmp, "xb") as f:
        if callable(data):
            data(f)
        else:
            f.write(data.encode() if isinstance(data, str) else data)
        return f.tell()


def _settle(tmp: Path, real: Path, overwrite: bool, name: str) -> None:
    """Give the complete ``tmp`` the name ``real``: replacing a regular file
    only with ``overwrite``, never anything else."""
    if overwrite:
        resolve_target(real, follow_symlinks=False)  # a FIFO, device or link put there meanwhile stays untouched
        os.replace(tmp, real)
        return
    try:  # a hard link creates the name only if it is free: no window for a file to appear
        os.link(tmp, real)
    except FileExistsError:
        raise TargetError(f"{name} already exists (it appeared while gemmbench worked); "
                          f"give --overwrite to replace it, or choose another name") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise
        if os.path.lexists(real):  # a filesystem without hard links: check, then rename
            raise TargetError(f"{name} already exists; give --overwrite to replace it, "
                              f"or choose another name") from None
        os.replace(tmp, real)


def _write_problem(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full (no space left on device)"
    return exc.strerror or str(exc)


def write_new(path, data: Data, overwrite: bool = False, option: str | None = None) -> int:
    """Write ``data`` (text, bytes, or a function that writes into a binary
    file) to ``path`` as check_target allows, atomically: readers see no file
    (or the old one) until the whole new one takes the name. TargetError, one
    line, for anything that goes wrong (a full disk included), and then
    nothing was changed. Returns the bytes written."""
    name = _named(path, option)
    real = check_target(path, overwrite, option)
    tmp = temp_path(real)
    try:
        size = _fill(tmp, data)
        _settle(tmp, real, overwrite, name)
    except OSError as exc:
        raise TargetError(f"{name}: could not write it: {_write_problem(exc)}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return size


def place(source: Path, path, overwrite: bool = False, option: str | None = None) -> None:
    """Move the complete file ``source`` (written by another program, in the
    same directory) to ``path`` by the rules of write_new; ``source`` is gone
    afterwards whatever happens."""
    name = _named(path, option)
    try:
        real = resolve_target(path, option)
        if os.path.lexists(real) and not overwrite:
            raise TargetError(f"{name} already exists; give --overwrite to replace it, or choose another name")
        _settle(Path(source), real, overwrite, name)
    except OSError as exc:
        raise TargetError(f"{name}: could not write it: {_write_problem(exc)}") from None
    finally:
        Path(source).unlink(missing_ok=True)


@contextmanager
def replacing(path: Path, follow_symlinks: bool = True) -> Iterator[Path]:
    """A temporary path beside ``path`` for the caller to fill (the caller
    creates it); on a clean exit it is renamed over ``path``, otherwise removed.
    For gemmbench's own files: ``path`` (or a symlink's target) must be a
    regular file or nothing (TargetError); without ``follow_symlinks`` a
    symlink at ``path`` is refused too."""
    real = resolve_target(path, follow_symlinks=follow_symlinks)
    tmp = temp_path(real)
    try:
        yield tmp
        _settle(tmp, real, True, str(path))
    finally:
        tmp.unlink(missing_ok=True)  # gone after a successful rename


def write_atomic(path: Path, data: str | bytes, follow_symlinks: bool = True) -> int:
    """Write ``data`` to ``path`` so that readers see the old file or the whole
    new one, never a part: for gemmbench's own files (records, caches), which
    it replaces. The file gets the usual mode (0666 less the umask). Returns
    the bytes written; OSError when the write fails (nothing changed then),
    TargetError when ``path`` is not a regular file (or is a symlink, without
    ``follow_symlinks``)."""
    with replacing(path, follow_symlinks) as tmp:
        size = _fill(tmp, data)
    return size


def remove_stale_temps(directory: Path, max_age: float = STALE_SECONDS) -> list[Path]:
    """Delete temporaries no writer will finish: those of exited processes on
    this host, and any older than ``max_age``. Returns what was removed."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    host, now, removed = socket.gethostname(), time.time(), []
    for name in names:
        match = _TEMP.match(name)
        if not match and not _OLD_TEMP.match(name):
            continue
        path = Path(directory) / name
        try:
            abandoned = match is not None and match["host"] == host and not _process_alive(int(match["pid"]))
            if abandoned or now - path.lstat().st_mtime > max_age:
                path.unlink()
                removed.append(path)
        except OSError:  # removed by another run meanwhile, or not ours to remove
            continue
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, belongs to someone else
        return True
    return True


# --------------------------------------------------------------------------
# the cache directory
# --------------------------------------------------------------------------

def cache_dir(sub: str | None = None, create: bool = False) -> Path:
    """gemmbench's cache directory, or its subdirectory ``sub``.

    Raises CacheDirError when the location (or a parent) is not a directory;
    with ``create``, also when it cannot be created or written. Reading
    callers leave ``create`` off, so a read-only cache still serves lookups.
    """
    root, origin = _cache_root()
    path = root / sub if sub else root
    _check_is_directory(path, origin)
    if create:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _location_error(origin, f"cannot create {path} ({exc.strerror or exc})") from None
        probe = temp_path(path / "write-test")
        try:
            probe.open("x").close()
            probe.unlink()
        except OSError as exc:
            raise _location_error(origin, f"cannot write in {path} ({exc.strerror or exc})") from None
    return path


def _cache_root() -> tuple[Path, str | None]:
    """The cache root and the variable that chose it ('NAME=value'), or None
    for the platform's default."""
    value = os.environ.get("GEMMBENCH_CACHE_DIR", "")
    if value:
        return Path(value), f"GEMMBENCH_CACHE_DIR={value}"
    root = Path(platformdirs.user_cache_dir("gemmbench"))
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and root.is_relative_to(xdg):  # platformdirs honours it on Linux and the BSDs
        return root, f"XDG_CACHE_HOME={xdg}"
    return root, None


def _check_is_directory(path: Path, origin: str | None) -> None:
    """The nearest existing one of ``path`` and its parents must be a directory."""
    for candidate in (path, *path.parents):
        try:
            mode = os.stat(candidate).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:  # cannot look: leave it to the operation that needs it
            return
        if not stat.S_ISDIR(mode):
            raise _location_error(origin, f"{candidate} is not a directory")
        return


def _location_error(origin: str | None, problem: str) -> CacheDirError:
    if origin is None:
        return CacheDirError(f"the cache directory: {problem}; set GEMMBENCH_CACHE_DIR to a writable directory")
    name = origin.split("=", 1)[0]
    fix = "point it at a writable directory or unset it" if name == "GEMMBENCH_CACHE_DIR" else \
        f"point {name} at a writable directory, or set GEMMBENCH_CACHE_DIR"
    return CacheDirError(f"{origin}: {problem}; {fix}")
