"""The tuning cache and the candidates a tuner tries.

``gemmbench tune`` stores the best parameters per (GPU model, rung, shape
class) in one JSON file in the user's cache directory; ``run``, ``compare``
and ``sizes`` use them unless ``--no-tune-cache``. An entry remembers a digest
of the rung's source: when the kernel changes, its old best is ignored rather
than trusted. A file that cannot be read is never overwritten in place: it is
moved aside first, so nothing a user saved is lost.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import json
import math
import os
import random
import tempfile
from pathlib import Path
from typing import Iterator

from .backend import Shape
from .spec import KernelSpec, Params

CACHE_VERSION = 1


def default_path() -> Path:
    """$GEMMBENCH_CACHE_DIR/tuning.json, else the platform's user cache dir."""
    root = os.environ.get("GEMMBENCH_CACHE_DIR")
    if not root:
        import platformdirs
        root = platformdirs.user_cache_dir("gemmbench")
    return Path(root) / "tuning.json"


def shape_class(shape: Shape) -> str:
    """Each dimension rounded to the nearest power of two (in log scale):
    1000 and 1024 share a class, 4096 and 2048 do not."""
    def bucket(n: int) -> int:
        return 1 << max(0, round(math.log2(n)))
    return f"{bucket(shape.M)}x{bucket(shape.N)}x{bucket(shape.K)}"


def source_digest(spec: KernelSpec) -> str:
    """The text nvcc compiles for the rung (its file with everything it
    inlines), hashed: any edit of the kernel invalidates its tuned entries."""
    from .gpu.compile import expand_source  # plain text work: no CUDA needed
    return hashlib.sha256(expand_source(spec).encode()).hexdigest()[:16]


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
    total = len(valid) + 1
    if limit is not None and len(valid) > limit - 1:
        valid = random.Random(seed).sample(valid, max(0, limit - 1))
    return [default, *valid], total


def compile_candidates(spec: KernelSpec, compute_capability: tuple[int, int], found: list[dict],
                       jobs: int | None = None) -> Iterator[tuple[dict, str | None]]:
    """nvcc for every candidate, ``jobs`` at a time (default: one per core),
    into the disk cache; yields (params, None) or (params, nvcc's first line)
    in the order given."""
    from concurrent.futures import ThreadPoolExecutor
    from .gpu.compile import compile_only

    def build(params: dict) -> str | None:
        try:
            compile_only(spec, compute_capability, params)
            return None
        except Exception as exc:  # pycuda's CompileError carries nvcc's output
            text = str(exc).strip()
            return text.splitlines()[0] if text else type(exc).__name__

    with ThreadPoolExecutor(jobs or os.cpu_count() or 1) as pool:
        yield from zip(found, pool.map(build, found))


class TuningCache:
    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path is not None else default_path()
        self._data: dict | None = None
        self.problem: str | None = None  # why the file could not be read, if it could not

    @staticmethod
    def key(gpu_name: str, spec: KernelSpec, shape: Shape) -> str:
        # a user's kernel (id < 0) is known by its file: its id depends on the order files were given
        kernel = f"file {spec.source}" if spec.id < 0 else f"rung {spec.id} {spec.name}"
        return f"{gpu_name} | {kernel} | {shape_class(shape)}"

    def _entries(self) -> dict:
        if self._data is None:
            self._data = {}
            try:
                data = json.loads(self.path.read_text())
                if data.get("version") != CACHE_VERSION or not isinstance(data.get("entries"), dict):
                    raise ValueError(f"not a version-{CACHE_VERSION} tuning cache")
                self._data = data["entries"]
            except FileNotFoundError:
                pass
            except (OSError, ValueError, AttributeError) as exc:
                self.problem = f"{self.path}: {exc}"
        return self._data

    def lookup(self, gpu_name: str, spec: KernelSpec, shape: Shape) -> dict | None:
        """The stored best for this GPU, rung and shape class, if it is still
        valid for the rung as it is now (same source, parameters accepted)."""
        entry = self._entries().get(self.key(gpu_name, spec, shape))
        if not isinstance(entry, dict) or entry.get("source_digest") != source_digest(spec):
            return None
        params = entry.get("params")
        if not isinstance(params, dict) or set(params) != set(spec.params) or spec.invalid_reason(params):
            return None
        return dict(params)

    def store(self, gpu_name: str, spec: KernelSpec, shape: Shape, params: Params, gflops: float,
              candidates_timed: int) -> str | None:
        """Record a best; returns a note when an unreadable file had to be moved aside."""
        note = None
        entries = self._entries()
        if self.problem is not None and self.path.exists():
            stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
            aside = self.path.with_name(f"{self.path.name}.unreadable-{stamp}")
            os.replace(self.path, aside)
            note = f"the tuning cache could not be read ({self.problem}); it was moved to {aside}"
            self.problem = None
        entries[self.key(gpu_name, spec, shape)] = {
            "params": dict(params), "gflops": gflops, "shape": str(shape), "candidates": candidates_timed,
            "source_digest": source_digest(spec),
            "tuned": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        self._write({"version": CACHE_VERSION, "entries": entries})
        return note

    def _write(self, data: dict) -> None:
        """Atomic: a crash mid-write leaves the previous file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tuning-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __iter__(self) -> Iterator[tuple[str, dict]]:
        return iter(self._entries().items())
