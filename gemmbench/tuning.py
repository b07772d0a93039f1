"""The tuning cache and the candidates a tuner tries.

``gemmbench tune`` stores the best parameters per (GPU model, rung, shape
class) in one JSON file in the user's cache directory; ``run``, ``compare``
and ``sizes`` use them unless ``--no-tune-cache``. An entry remembers a digest
of the rung's source: when the kernel changes, its old best is ignored rather
than trusted.

Nothing read from the file is trusted: an entry whose parameters are not the
rung's names with integer values >= 0, or that the rung's ``check``
rejects, is treated as absent (with a note), never used. The file is read by
gemmbench.fsutil's reader (a regular file of at most
fsutil.TUNING_CACHE_MAX_BYTES, JSON of bounded nesting and number length). A
file that cannot be read as a version-1 cache (bad UTF-8, bad or too deeply
nested JSON, another layout, too large) is moved aside before the next write,
never overwritten in place, so nothing a user saved is lost; writes are
atomic. Something other than a regular file at its path (a FIFO, a device, a
directory) is never read, moved or replaced: ``store`` refuses it in one line.
A symlink is followed (the file it points to is read and replaced). A
read-only cache directory still serves lookups; only ``store`` needs to write.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import json
import math
import os
import random
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

from . import fsutil, procs
from .backend import Shape
from .gpu import compile as kernels
from .spec import KernelSpec, Params

CACHE_VERSION = 1


def default_path() -> Path:
    """tuning.json in gemmbench's cache directory (see gemmbench.fsutil.cache_dir)."""
    return fsutil.cache_dir() / "tuning.json"


def shape_class(shape: Shape) -> str:
    """Each dimension rounded to the nearest power of two (in log scale):
    1000 and 1024 share a class, 4096 and 2048 do not."""
    def bucket(n: int) -> int:
        return 1 << max(0, round(math.log2(n)))
    return f"{bucket(shape.M)}x{bucket(shape.N)}x{bucket(shape.K)}"


def source_digest(spec: KernelSpec) -> str:
    """The text nvcc compiles for the rung (its file with everything it
    inlines), hashed without its comments and layout: any edit of the code
    invalidates its tuned entries (and the choice tables measured on it); an
    edit of a comment, an indent or a blank line does not."""
    return file_digest(spec.source)


def file_digest(source: str) -> str:
    """``source_digest`` of a kernel source named by its file (as a KernelSpec names it)."""
    return code_digest(kernels.expand_file(source))


def code_digest(text: str) -> str:
    """16 hex digits of C/C++ source as ``code_only`` leaves it."""
    return hashlib.sha256(code_only(text).encode()).hexdigest()[:16]


# A comment, or a literal that may hold comment-like text (kept as it is). An
# unterminated one runs to the end of the text (a comment) or of the line (a
# literal, a lone backslash at the very end included), so every match that
# starts succeeds at once: linear time on any input.
_COMMENT_OR_LITERAL = re.compile(r'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*(?:"|(?=\n)|\\?\Z)'
                                 r'|\'(?:\\.|[^\'\\\n])*(?:\'|(?=\n)|\\?\Z)', re.S)
_LINE_DIRECTIVE = re.compile(r"#\s*line\b")  # a #line directive (a user's file is framed by them)


def code_only(text: str) -> str:
    """C/C++ source without its comments (each is a space, as for the
    compiler) and without layout: every line stripped of its indent and
    trailing spaces, blank lines dropped (but for one that ends a
    backslash-continued line, which it changes), and ``#line`` directives
    dropped (they only renumber lines for nvcc's messages: the ones
    expand_file puts around a user's headers move when a comment is added)."""
    text = _COMMENT_OR_LITERAL.sub(lambda m: " " if m.group(0)[0] == "/" else m.group(0), text)
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if _LINE_DIRECTIVE.match(line):
            continue
        if line or (lines and lines[-1].endswith("\\")):
            lines.append(line)
    return "\n".join(lines)


def candidates(spec: KernelSpec, limit: int | None = None, seed: int = 0) -> tuple[list[dict], int]:
    """Valid parameter combinations of the rung's search space (the defaults
    first), at most ``limit`` of them drawn at random; also how many are valid."""
    names = list(spec.search_space)
    valid = []
    for values in itertools.product(*(spec.search_space[n] for n in names)):
        p = {**spec.params, **dict(zip(names, values))}
        if spec.invalid_reason(p) is None:
            valid.append(p)
    default = dict(spec.params)
    valid = [p for p in valid if p != default]
    return _limited([default, *valid], limit, seed), len(valid) + 1


def candidates_at(spec: KernelSpec, shapes, sm_count: int, limit: int | None = None,
                  seed: int = 0) -> tuple[dict[Shape, list[dict]], dict[Shape, int]]:
    """What tune tries at each shape, and how many valid candidates each shape
    had before ``limit``: the rung's own list for the shape
    (``KernelSpec.shape_candidates``, its usual choice there first), or its
    search space, the same at every shape (``candidates``), except where its
    usual choice is a GEMV path (``one_launch_path``): a tile from the search
    space would replace that path with a slower one, so only it is tried."""
    if spec.shape_candidates is None:
        found, valid = candidates(spec, limit, seed)
        tried, counts = {}, {}
        for shape in shapes:
            usual = spec.params_for(shape.M, shape.N, shape.K, sm_count)
            tried[shape], counts[shape] = ([usual], 1) if one_launch_path(usual) else (found, valid)
        return tried, counts
    tried, valid = {}, {}
    for shape in shapes:
        listed = [dict(p) for p in spec.shape_candidates(shape.M, shape.N, shape.K, sm_count)]
        own = [p for i, p in enumerate(listed) if p not in listed[:i] and spec.invalid_reason(p) is None]
        usual = spec.params_for(shape.M, shape.N, shape.K, sm_count)
        own.sort(key=lambda p: p != usual)  # stable: the usual choice first, the rest in the rung's order
        tried[shape], valid[shape] = _limited(own, limit, seed), len(own)
    return tried, valid


def one_launch_path(params: dict) -> bool:
    """Whether these parameters run a rung's GEMV path (GEMV = 1, gemmbench.rungs.gemv) instead of its tiles."""
    return bool(params.get("GEMV"))


def _limited(found: list[dict], limit: int | None, seed: int) -> list[dict]:
    """At most ``limit`` of ``found``: its first (the defaults, or the rung's
    usual choice) and a sample of the rest drawn by ``seed``."""
    if limit is None or len(found) <= limit:
        return found
    return [found[0], *random.Random(seed).sample(found[1:], max(0, limit - 1))]


def compile_candidates(spec: KernelSpec, compute_capability: tuple[int, int], found: list[dict],
                       jobs: int | None = None) -> Iterator[tuple[dict, str | None]]:
    """nvcc for every candidate, ``jobs`` at a time (default: one per core),
    into the disk cache, once per set of compile-time parameters (candidates
    that differ only in runtime ones share a build); yields (params, None) or
    (params, nvcc's first line) in the order given."""

    def build(params: dict) -> str | None:
        try:
            kernels.cubin(spec, compute_capability, params)
            return None
        except kernels.CompileError as exc:
            return str(exc)
        except (procs.ToolTimedOut, procs.ToolKilled, procs.ToolOutputTooLarge) as exc:
            return f"nvcc {exc.problem}"  # this candidate's build; nvcc missing stops the tune instead

    keys = [tuple(spec.defines(p)) for p in found]
    with ThreadPoolExecutor(jobs or os.cpu_count() or 1) as pool:
        builds = {}
        for key, params in zip(keys, found):
            if key not in builds:
                builds[key] = pool.submit(build, params)
        for key, params in zip(keys, found):
            yield params, builds[key].result()


class UnreadableCache(ValueError):
    """The tuning file is not a version-1 tuning cache."""


class TuningCache:
    """The tuned parameters on disk. ``problem`` says why the file could not be
    read (if it could not); ``notes`` collect one line per entry ignored, for
    the user to see."""

    def __init__(self, path: Path | None = None):
        self._in_cache_dir = path is None
        self.path = default_path() if path is None else Path(path)
        self._data: dict | None = None
        self.problem: str | None = None
        self.notes: list[str] = []

    @staticmethod
    def key(gpu_name: str, spec: KernelSpec, shape: Shape) -> str:
        # a user's kernel (id < 0) is known by its file: its id depends on the order files were given
        kernel = f"file {spec.source}" if spec.id < 0 else f"rung {spec.id} {spec.name}"
        return f"{gpu_name} | {kernel} | {shape_class(shape)}"

    def _entries(self) -> dict:
        if self._data is None:
            self._data = {}
            try:
                self._data = _read_entries(self.path)
            except FileNotFoundError:
                pass
            except (OSError, UnreadableCache) as exc:
                self.problem = f"{self.path}: {getattr(exc, 'strerror', None) or exc}"
                later = "it is never replaced: remove it, or point GEMMBENCH_CACHE_DIR elsewhere" \
                    if "not a regular file" in self.problem else "the next 'gemmbench tune' moves it aside"
                self._note(f"the tuning cache cannot be read ({self.problem}): tuned parameters are not used; {later}")
        return self._data

    def _note(self, line: str) -> None:
        if line not in self.notes:
            self.notes.append(line)

    def lookup(self, gpu_name: str, spec: KernelSpec, shape: Shape) -> dict | None:
        """The stored best for this GPU, rung and shape class, if it is still
        valid for the rung as it is now (same source, parameters accepted);
        otherwise None, with a note saying why a stored entry was ignored."""
        key = self.key(gpu_name, spec, shape)
        entry = self._entries().get(key)
        if entry is None:
            return None
        reason = _entry_problem(entry, spec)
        if reason is not None:
            self._note(f"tuning cache entry '{key}' ignored: {reason}")
            return None
        return dict(entry["params"])

    def check_writable(self) -> None:
        """Raise CacheDirError now if ``store`` could not write (for 'tune',
        before any candidate runs), and TargetError if the file's path holds
        something other than a regular file."""
        fsutil.resolve_target(self.path)
        self._directory()

    def _directory(self) -> Path:
        if self._in_cache_dir:
            return fsutil.cache_dir(create=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return self.path.parent

    def store(self, gpu_name: str, spec: KernelSpec, shape: Shape, params: Params, gflops: float,
              candidates_timed: int) -> str | None:
        """Record a best; returns a note when an unreadable file had to be moved aside.
        Raises CacheDirError for an unusable cache directory, OSError when writing fails."""
        note = None
        entries = self._entries()
        real = fsutil.resolve_target(self.path)  # TargetError for a FIFO, device or directory: left alone
        directory = self._directory()
        fsutil.remove_stale_temps(directory)
        if self.problem is not None and os.path.lexists(real):
            stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
            aside = real.with_name(f"{real.name}.unreadable-{stamp}")
            os.replace(real, aside)
            note = f"the tuning cache could not be read ({self.problem}); it was moved to {aside}"
            self.problem = None
        entries[self.key(gpu_name, spec, shape)] = {
            "params": dict(params), "gflops": gflops, "shape": str(shape), "candidates": candidates_timed,
            "source_digest": source_digest(spec),
            "tuned": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        text = json.dumps({"version": CACHE_VERSION, "entries": entries}, indent=1, sort_keys=True)
        fsutil.write_atomic(self.path, text + "\n")
        return note

    def __iter__(self) -> Iterator[tuple[str, dict]]:
        return iter(self._entries().items())


def _read_entries(path: Path) -> dict:
    """The entries of a version-1 cache file; UnreadableCache when it is not one."""
    try:
        raw = fsutil.read_bytes(path, fsutil.TUNING_CACHE_MAX_BYTES)
    except fsutil.UnreadableFile as exc:
        if exc.problem == "no such file":
            raise FileNotFoundError(path) from None
        raise UnreadableCache(exc.problem) from None
    try:
        data = fsutil.loads_json(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UnreadableCache(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except fsutil.JSONLimitError as exc:
        raise UnreadableCache(str(exc)) from None
    except ValueError as exc:  # bad JSON
        raise UnreadableCache(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION or not isinstance(data.get("entries"), dict):
        raise UnreadableCache(f"not a version-{CACHE_VERSION} tuning cache")
    return data["entries"]


def _entry_problem(entry, spec: KernelSpec) -> str | None:
    """Why a stored entry must not be used for ``spec`` as it is now, or None."""
    if not isinstance(entry, dict) or not isinstance(entry.get("params"), dict):
        return "not a tuning entry"
    if entry.get("source_digest") != source_digest(spec):
        return f"the kernel's source changed since it was tuned (run 'gemmbench tune -i {spec.id}' again)"
    params = entry["params"]
    unknown, missing = set(params) - set(spec.params), set(spec.params) - set(params)
    if unknown or missing:
        return "parameter names differ from the rung's" + \
            (f" (unknown: {', '.join(sorted(unknown))})" if unknown else "") + \
            (f" (missing: {', '.join(sorted(missing))})" if missing else "")
    # 0 is a value too: switches such as PERSISTENT (rung 17) and KMAJOR_A, VECTOR, PACK (rung 28)
    bad = [f"{k}={v!r}" for k, v in sorted(params.items()) if type(v) is not int or v < 0]
    if bad:
        return f"parameters must be integers >= 0: {', '.join(bad)}"
    try:
        reason = spec.invalid_reason(params)
    except (ArithmeticError, LookupError, TypeError, ValueError) as exc:
        reason = f"{type(exc).__name__}: {exc}"
    return f"the rung rejects its parameters ({reason})" if reason else None
