"""C rung source -> shared library -> ctypes function, compiled once and cached.

Each CPU rung is built with the system C compiler (``$CC``, else ``cc``) as
``-O3 -march=native -fPIC -shared`` plus the rung's own ``cflags`` (rung 6 adds
``-fopenmp``). The library is cached under the user cache dir, named by a hash
of everything that decides its machine code: the source text with the local
headers it includes, the full command line, the compiler's version and the
host CPU (``-march=native`` means "this CPU"). A second run loads the cached
library and compiles nothing.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..spec import KernelSpec
from ..sources import source_dir

BASE_FLAGS = ("-O3", "-march=native", "-fPIC", "-shared")

INSTALL_HINT = "install gcc (apt-get install gcc) or set CC"

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# sgemm(M, N, K, alpha, A, B, beta, C); arrays are passed as raw addresses.
SGEMM_ARGTYPES = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_float,
                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_void_p]

Log = Callable[[str], None]


class CompilerNotFound(Exception):
    """No usable C compiler: the message is one line naming what to install."""


class BuildError(Exception):
    """The compiler ran and failed; the message carries its diagnostics."""


def compiler() -> list[str]:
    """The compiler command ($CC may hold arguments, e.g. 'ccache gcc')."""
    cmd = shlex.split(os.environ.get("CC", "").strip() or "cc")
    if not cmd or shutil.which(cmd[0]) is None:
        name = cmd[0] if cmd else "cc"
        raise CompilerNotFound(f"no C compiler found ('{name}' is not on PATH): {INSTALL_HINT}")
    return cmd


@lru_cache(maxsize=None)
def _version(cmd: tuple[str, ...]) -> str:
    try:
        done = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=30)
    except OSError as exc:
        raise CompilerNotFound(f"C compiler '{cmd[0]}' cannot run ({exc.strerror}): {INSTALL_HINT}") from None
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0] if lines else cmd[0]


def compiler_version() -> str:
    """First line of ``$CC --version``, e.g. 'cc (Debian 12.2.0-14) 12.2.0'."""
    return _version(tuple(compiler()))


@lru_cache(maxsize=None)
def _predefined_macros(cmd: tuple[str, ...]) -> frozenset[str]:
    done = subprocess.run([*cmd, "-march=native", "-dM", "-E", "-x", "c", os.devnull],
                          capture_output=True, text=True)
    return frozenset(line.split()[1] for line in done.stdout.splitlines() if line.startswith("#define "))


def simd_level() -> str:
    """The micro-kernel flavour rungs 5-6 compile to here (same test as packed_gemm.h)."""
    macros = _predefined_macros(tuple(compiler()))
    if "__AVX512F__" in macros:
        return "avx512"
    if "__AVX2__" in macros and "__FMA__" in macros:
        return "avx2"
    return "portable"


def cache_dir() -> Path:
    """Where built libraries live: $GEMMBENCH_CACHE_DIR, else <user cache dir>/gemmbench/so."""
    if os.environ.get("GEMMBENCH_CACHE_DIR"):
        return Path(os.environ["GEMMBENCH_CACHE_DIR"])
    try:
        import platformdirs
        root = Path(platformdirs.user_cache_dir("gemmbench"))
    except ImportError:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        root = Path(base) / "gemmbench"
    return root / "so"


def source_text(spec: KernelSpec) -> str:
    """The rung's source followed by every local header it includes (recursively),
    which is what its machine code depends on."""
    parts, seen = [], set()

    def visit(path: Path) -> None:
        if path in seen:
            return
        seen.add(path)
        text = path.read_text()
        parts.append(f"// ---- {path.name}\n{text}")
        for header in _INCLUDE.findall(text):  # the compiler looks beside the including file
            if (path.parent / header).is_file():
                visit(path.parent / header)

    visit(source_dir("cpu_src") / spec.source)
    return "\n".join(parts)


def _cpu_identity() -> str:
    """What -march=native resolves from: the CPU model and feature flags."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        import platform
        return platform.processor() or platform.machine()
    keep = [line for line in info.splitlines()[:40] if line.split(":")[0].strip() in ("model name", "flags", "Features")]
    return "\n".join(keep)


def flags(spec: KernelSpec) -> list[str]:
    return [*BASE_FLAGS, *spec.cflags, *spec.defines()]  # defines: a user kernel's parameters


def compile_command(spec: KernelSpec, output: Path | str) -> list[str]:
    """The exact command that builds ``spec`` into ``output``."""
    src = source_dir("cpu_src") / spec.source
    return [*compiler(), *flags(spec), "-o", str(output), str(src)]


def library_path(spec: KernelSpec) -> Path:
    """The cached library for ``spec`` (whether or not it exists yet)."""
    key = "\0".join([source_text(spec), shlex.join(flags(spec)), shlex.join(compiler()),
                     compiler_version(), _cpu_identity()])
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return cache_dir() / f"{Path(spec.source).stem}-{digest}.so"


_last_compiled = False
_loaded: dict[Path, ctypes.CDLL] = {}


def last_load_compiled() -> bool:
    """Whether the latest ``load`` ran the compiler (False: it came from cache)."""
    return _last_compiled


def build(spec: KernelSpec, log: Log | None = None) -> Path:
    """Compile ``spec`` unless its library is cached; return the library's path."""
    global _last_compiled
    path = library_path(spec)
    if path.is_file():
        _last_compiled = False
        if log:
            log(f"cached {spec.source}: {path}")
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    # build beside the final name, then rename: a concurrent run never sees half a file
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=path.parent)
    os.close(fd)
    cmd = compile_command(spec, tmp)
    if log:
        log(shlex.join(cmd))
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(f"compiling {spec.source} failed:\n{shlex.join(cmd)}\n{done.stderr.strip()}")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _last_compiled = True
    return path


def load(spec: KernelSpec, log: Log | None = None):
    """The rung's entry point as a ctypes function with argtypes set."""
    path = build(spec, log)
    lib = _loaded.get(path)
    if lib is None:
        lib = _loaded[path] = ctypes.CDLL(str(path))
    fn = getattr(lib, spec.entry)
    fn.argtypes = SGEMM_ARGTYPES
    fn.restype = None
    return fn
