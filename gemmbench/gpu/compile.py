"""CUDA source -> loaded module, through pycuda's SourceModule, cached.

Every local ``#include "..."`` of a source (common.cuh, ptx.cuh,
multistage_loop.cuh, the wgmma, TMA and mma.sync headers, a user kernel's
own headers: any file, once each, nested ones too) is inlined here as text
rather than by nvcc: pycuda hashes plain source for its cache but
preprocesses (runs nvcc) whenever the text holds an ``#include``, which would
cost a second per rung even when cached. Tests compile the very same text
with nvcc (see nvcc_options).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .. import fsutil
from ..spec import KernelSpec, Params
from ..sources import source_dir

_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.MULTILINE)

# Options every rung is built with, on top of its -D defines and -arch.
BASE_OPTIONS = ("-O3", "-lineinfo")


def expand_source(spec: KernelSpec) -> str:
    """The rung's source with local ``#include "..."`` lines inlined (once each).

    A user's kernel (an absolute ``source``) finds its headers beside it
    first, then in ``cuda_src``, and is framed by ``#line`` directives, so
    nvcc's messages name the user's file and line rather than a temporary file.
    """
    root = source_dir("cuda_src")
    top = root / spec.source
    user = Path(spec.source).is_absolute()
    seen: set[str] = set()

    def inline(path: Path) -> str:
        text = fsutil.read_text(path, fsutil.KERNEL_FILE_MAX_BYTES)  # a regular file, bounded (one reader)

        def replace(match: re.Match) -> str:
            name = match.group(1)
            if name in seen:
                return ""
            seen.add(name)
            found = path.parent / name if user and (path.parent / name).is_file() else root / name
            if not user:
                return inline(found)
            # the directive ends with the #include's own newline (or one of its own when the
            # match took it); the line after it is the one after the #include
            ends_line = match.group(0).endswith("\n")
            resume = text.count("\n", 0, match.end()) + (1 if ends_line else 2)
            return f"{_line(1, found)}\n{inline(found)}\n{_line(resume, path)}" + ("\n" if ends_line else "")
        body = _INCLUDE.sub(replace, text)
        return f"{_line(1, path)}\n{body}" if user and path == top else body

    text = inline(top)
    if "#include" in text:  # even in a comment: pycuda would preprocess on every load
        raise ValueError(f"{spec.source}: '#include' left after inlining (system headers are not supported)")
    return text


def _line(number: int, path: Path) -> str:
    quoted = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'#line {number} "{quoted}"'


def nvcc_options(spec: KernelSpec, params: Params | None = None) -> list[str]:
    """The options handed to nvcc (besides -arch), identical in tool and tests."""
    return [*BASE_OPTIONS, *spec.defines(params)]


def arch_for(compute_capability: tuple[int, int]) -> str:
    return "sm_%d%d" % tuple(compute_capability)


def target_for(spec: KernelSpec, compute_capability: tuple[int, int]) -> tuple[str, str | None]:
    """nvcc's (-arch, -code) for a rung. Architecture-specific rungs (wgmma)
    need the sm_90a target on compute capability 9.0; the plain sm_90 target
    lacks those instructions (and the source then compiles its fallback)."""
    if spec.arch_specific and tuple(compute_capability) == (9, 0):
        return "compute_90a", "sm_90a"
    return arch_for(compute_capability), None


def describe_target(target: tuple[str, str | None]) -> str:
    arch, code = target
    return f"-arch {arch}" + (f" -code {code}" if code else "")


def cache_dir() -> str:
    """pycuda's cubin cache: ``cubin/`` in gemmbench's cache directory. pycuda
    writes there on every miss, so the directory must be writable: a
    CacheDirError names the variable otherwise."""
    return str(fsutil.cache_dir("cubin", create=True))


@lru_cache(maxsize=None)
def _load(source: str, options: tuple[str, ...], arch: str, code: str | None = None):
    from pycuda.compiler import SourceModule  # here, not at the top: pycuda is optional
    return SourceModule(source, options=list(options), arch=arch, code=code, no_extern_c=True,
                        cache_dir=cache_dir())


def load_source(source: str, entry: str, compute_capability: tuple[int, int]):
    """A small helper kernel of the tool itself (blocking kernel, conversions)."""
    return _load(source, tuple(BASE_OPTIONS), arch_for(compute_capability)).get_function(entry)


def _build(spec: KernelSpec, compute_capability: tuple[int, int], params: Params | None):
    """(source, options, arch, code): one place, so that cubin() fills
    exactly the cache entry load_module later reads."""
    return (expand_source(spec), tuple(nvcc_options(spec, params)), *target_for(spec, compute_capability))


def load_module(spec: KernelSpec, compute_capability: tuple[int, int], params: Params | None = None):
    """Compile (or fetch from cache) the rung; its kernels by name via get_function."""
    return _load(*_build(spec, compute_capability, params))


def cubin(spec: KernelSpec, compute_capability: tuple[int, int], params: Params) -> bytes:
    """The rung's cubin, the very image load_module loads, through the disk
    cache (nvcc runs only on a miss), without touching the CUDA context: a
    tuner builds many candidates in threads, load_module then hits the cache.
    Raises pycuda's CompileError with nvcc's message."""
    from pycuda.compiler import compile as nvcc_compile  # here, not at the top: pycuda is optional
    source, options, arch, code = _build(spec, compute_capability, params)
    return nvcc_compile(source, options=list(options), no_extern_c=True, arch=arch, code=code, cache_dir=cache_dir())
