"""Files that are never seen half-written, and the directory gemmbench caches in.

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

import os
import re
import secrets
import socket
import stat
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import UserError

# A temporary older than this is abandoned whoever wrote it (a pid may be reused).
STALE_SECONDS = 24 * 3600

_TEMP = re.compile(r"^\..+\.tmp-(?P<host>.+)-(?P<pid>\d+)-[0-9a-f]{8}$")
# Temporaries of earlier versions (tempfile.mkstemp names), removed by age only.
_OLD_TEMP = re.compile(r"^(tmp|\.tuning-|\.tmp-)[a-z0-9_]{8}\.(so|json)$")


class CacheDirError(UserError):
    """The cache directory is unusable; the message names the variable that chose it."""


# --------------------------------------------------------------------------
# atomic writes
# --------------------------------------------------------------------------

def temp_path(path: Path) -> Path:
    """A fresh hidden name beside ``path`` that says who is writing it."""
    return path.with_name(f".{path.name}.tmp-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}")


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` for the caller to fill (the caller
    creates it); on a clean exit it is renamed over ``path``, otherwise removed."""
    tmp = temp_path(Path(path))
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # gone after a successful rename


def write_atomic(path: Path, data: str | bytes) -> int:
    """Write ``data`` to ``path`` so that readers see the old file or the whole
    new one, never a part. The file gets the usual mode (0666 less the umask).
    Returns the bytes written."""
    data = data.encode() if isinstance(data, str) else data
    with replacing(path) as tmp:
        with open(tmp, "xb") as f:
            f.write(data)
    return len(data)


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
    import platformdirs
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
