"""CUDA source -> cubin (nvcc, cached on disk) -> loaded module (pycuda).

nvcc runs here, not inside pycuda's SourceModule, so that it runs under the
one subprocess policy (procs.run): a time limit (``NVCC_SECONDS``,
``GEMMBENCH_NVCC_TIMEOUT`` overrides it), stdin from /dev/null, its whole
process group killed on timeout or Ctrl-C. The cubin cache is gemmbench's
own: one file per build, named by a hash of what went into it (source,
options, target and the nvcc binary), written atomically, so workers and
tuner threads that build the same thing at once cannot tear it. Building
needs no GPU and no pycuda; loading does.

Every local ``#include "..."`` of a source (common.cuh, ptx.cuh,
multistage_loop.cuh, the wgmma, TMA and mma.sync headers, a user kernel's
own headers: any file, once each, nested ones too) is inlined here as text
rather than by nvcc: pycuda hashes plain source for its cache but
preprocesses (runs nvcc) whenever the text holds an ``#include``, which would
cost a second per rung even when cached. Tests compile the very same text
with nvcc (see nvcc_options).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from .. import fsutil, procs
from ..errors import UserError
from ..spec import KernelSpec, Params, runs_sm90a
from ..sources import source_dir

_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.MULTILINE)

# Options every rung is built with, on top of its -D defines and -arch.
BASE_OPTIONS = ("-O3", "-lineinfo")

# One nvcc build; the largest rung builds in well under a minute on 2 cores.
NVCC_SECONDS = 600.0
CUBIN_MAX_BYTES = 64 << 20  # a cached cubin read back (the largest rung's is well under 1 MB)
# Part of every cache key: bump it when the way a cubin is built changes.
_CACHE_FORMAT = "1"
NVCC_HINT = "install the CUDA toolkit and put nvcc on PATH"


class CompileError(Exception):
    """nvcc refused the source. ``str()`` is one line (nvcc's first error);
    ``stderr`` holds all it printed (a kernel file's author reads that)."""

    def __init__(self, message: str, stderr: str):
        super().__init__(message)
        self.stderr = stderr


def expand_source(spec: KernelSpec) -> str:
    """The rung's source with local ``#include "..."`` lines inlined (once each): ``expand_file``."""
    return expand_file(spec.source)


def expand_file(source: str) -> str:
    """A kernel source (a file name in ``cuda_src``, or a user's absolute
    path) with local ``#include "..."`` lines inlined (once each).

    A user's kernel finds its headers beside it first, then in ``cuda_src``,
    and is framed by ``#line`` directives, so nvcc's messages name the
    user's file and line rather than a temporary file.
    """
    root = source_dir("cuda_src")
    top = root / source
    user = Path(source).is_absolute()
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
        raise ValueError(f"{source}: '#include' left after inlining (system headers are not supported)")
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
    if spec.arch_specific and runs_sm90a(compute_capability):
        return "compute_90a", "sm_90a"
    return arch_for(compute_capability), None


def describe_target(target: tuple[str, str | None]) -> str:
    arch, code = target
    return f"-arch {arch}" + (f" -code {code}" if code else "")


def cache_dir() -> Path:
    """The cubin cache: ``cubin/`` in gemmbench's cache directory (a
    CacheDirError names the variable when it cannot be written)."""
    return fsutil.cache_dir("cubin", create=True)


def find_nvcc() -> str:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise UserError(f"nvcc is not on PATH: the GPU ladder compiles its kernels with it; {NVCC_HINT}")
    return nvcc


def _nvcc_identity(nvcc: str) -> str:
    """What names this nvcc in a cache key: the file it resolves to, its size
    and modification time (a toolkit upgrade changes them; no process to start)."""
    real = os.path.realpath(nvcc)
    st = os.stat(real)
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


def build_command(nvcc: str, options: tuple[str, ...], arch: str, code: str | None,
                  source: str, output: str) -> list[str]:
    """The nvcc command line of one cubin build (also what asm runs for SASS)."""
    return [nvcc, "-cubin", "-arch", arch, *(["-code", code] if code else []), *options, "-o", output, source]


def compile_cubin(source: str, options: tuple[str, ...], arch: str, code: str | None = None) -> bytes:
    """The cubin of ``source``: from the cache, or built by nvcc under the
    subprocess policy and then cached. CompileError when nvcc refuses the
    source; procs.ToolError (one line, a UserError) when nvcc cannot run,
    overruns its limit or is killed."""
    nvcc = find_nvcc()
    key = hashlib.sha256("\0".join((_CACHE_FORMAT, _nvcc_identity(nvcc), arch, code or "", *options, source))
                         .encode()).hexdigest()
    path = cache_dir() / f"{key}.cubin"
    if os.path.lexists(path):
        return fsutil.read_bytes(path, CUBIN_MAX_BYTES)  # a regular file, bounded (one reader)
    with tempfile.TemporaryDirectory(prefix="gemmbench-nvcc-") as tmp:
        src, out = os.path.join(tmp, "kernel.cu"), os.path.join(tmp, "kernel.cubin")
        Path(src).write_text(source)
        cmd = build_command(nvcc, options, arch, code, src, out)
        done = procs.run(cmd, tool="nvcc", limit=procs.limit("nvcc", NVCC_SECONDS),
                         hint="a kernel that takes this long to compile may be too large; " + NVCC_HINT)
        if done.returncode != 0 or not os.path.isfile(out):
            output = (done.stderr + done.stdout).strip()
            first = procs.first_error_line(output) or f"exit {done.returncode}, nothing printed"
            raise CompileError(f"nvcc failed: {first}", output)
        image = Path(out).read_bytes()
    fsutil.write_atomic(path, image)  # the same key always holds the same bytes: replacing is harmless
    return image


@lru_cache(maxsize=None)
def _load(source: str, options: tuple[str, ...], arch: str, code: str | None = None):
    import pycuda.driver as cuda  # here, not at the top: pycuda is optional
    return cuda.module_from_buffer(compile_cubin(source, options, arch, code))


def load_source(source: str, entry: str, compute_capability: tuple[int, int]):
    """A small helper kernel of the tool itself (blocking kernel, conversions)."""
    return _load(source, tuple(BASE_OPTIONS), arch_for(compute_capability)).get_function(entry)


def load_helper(source: str, entry: str, compute_capability: tuple[int, int]):
    """A kernel of a helper file in cuda_src (not a rung: e.g. gemv.cu), built as load_source builds."""
    return load_source(expand_file(source), entry, compute_capability)


def _build(spec: KernelSpec, compute_capability: tuple[int, int], params: Params | None):
    """(source, options, arch, code): one place, so that cubin() fills
    exactly the cache entry load_module later reads."""
    return (expand_source(spec), tuple(nvcc_options(spec, params)), *target_for(spec, compute_capability))


def load_module(spec: KernelSpec, compute_capability: tuple[int, int], params: Params | None = None):
    """Compile (or fetch from cache) the rung; its kernels by name via get_function."""
    return _load(*_build(spec, compute_capability, params))


def cubin(spec: KernelSpec, compute_capability: tuple[int, int], params: Params | None = None) -> bytes:
    """The rung's cubin, the very image load_module loads, through the disk
    cache, without touching the CUDA context: a tuner builds many candidates
    in threads, load_module then hits the cache. CompileError with nvcc's
    message when the source does not compile."""
    return compile_cubin(*_build(spec, compute_capability, params))
