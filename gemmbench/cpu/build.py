"""C rung source -> shared library -> ctypes function, compiled once and cached.

Each CPU rung is built with the system C compiler (``$CC``, else ``cc``) as
``-O3 -march=native -fPIC -shared`` plus the rung's own ``cflags`` (rung 6 adds
``-fopenmp``). The library is cached under the user cache dir, named by a hash
of everything that decides its machine code: the source text with the local
headers it includes, the full command line, the compiler's version and the
host CPU (``-march=native`` means "this CPU"). A second run loads the cached
library and compiles nothing.

The cache verifies what it loads. A library is built under a temporary name
and renamed into place only once the compiler has exited cleanly and written a
shared library; then a sidecar ``<name>.sha256`` records its checksum. A
cached library is loaded only when it matches its sidecar: dlopen of a
truncated file can kill the process with SIGBUS, so a damaged, empty or
foreign file is rebuilt (replaced, not kept: it is derived data), never
loaded. A library that still fails to load is rebuilt once, then reported.

The compiler itself is tried once per process on a one-line library (the
probe), so a compiler that fails, writes nothing or writes garbage is a
one-line CompilerNotFound before the first kernel, not a failure per rung.

Every compiler call goes through ``procs.run``: stdin from /dev/null, a
process group of its own killed whole when it ends, and a time limit
(``COMPILE_SECONDS`` for a build, ``PROBE_SECONDS`` for the probe and the
questions asked of the compiler; ``GEMMBENCH_CC_TIMEOUT`` overrides both). A
compiler that overruns, or dies by a signal, is a one-line error (exit 2):
it is the machine's problem, not the kernel's.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import re
import shlex
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

from .. import fsutil, procs
from ..errors import UserError
from ..spec import KernelSpec
from ..sources import source_dir

BASE_FLAGS = ("-O3", "-march=native", "-fPIC", "-shared")

INSTALL_HINT = "install gcc (apt-get install gcc) or set CC to a working C compiler"

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# sgemm(M, N, K, alpha, A, B, beta, C); arrays are passed as raw addresses.
SGEMM_ARGTYPES = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_float,
                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_void_p]

# First bytes of a shared library: ELF (Linux, BSD), Mach-O 64/32 and universal (macOS).
_LIBRARY_MAGIC = (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe")

_PROBE_SOURCE = "int gemmbench_probe(int x) { return x + 1; }\n"

# Generous: a loaded 2-core machine builds the largest rung in seconds.
COMPILE_SECONDS = 300.0  # one build of a rung or a kernel file
PROBE_SECONDS = 60.0  # the probe library, --version, the predefined macros

Log = Callable[[str], None]


class CompilerNotFound(UserError):
    """No usable C compiler (missing, broken, hanging, killed): one line
    naming $CC (or cc) and what to do."""


def _run(cmd: list[str] | tuple[str, ...], seconds: float) -> procs.Completed:
    """The compiler under the subprocess policy (see the module doc)."""
    return procs.run(cmd, tool="cc", limit=procs.limit("cc", seconds),
                     hint=f"try {_named(cmd[:1])} by hand; {INSTALL_HINT}")


class BuildError(Exception):
    """A rung did not build or load. The first line of the message is the
    summary (a FAIL row's reason); the lines after it carry the command and
    the compiler's diagnostics."""


def _named(cmd: list[str] | tuple[str, ...]) -> str:
    """How a message names the compiler: as the user set it, or the default."""
    value = os.environ.get("CC", "").strip()
    return f"CC={shlex.quote(value)}" if value else f"the default C compiler '{shlex.join(cmd)}'"


def compiler() -> list[str]:
    """The compiler command ($CC may hold arguments, e.g. 'ccache gcc'), once
    it has been seen to build a shared library (see _probe)."""
    try:
        cmd = shlex.split(os.environ.get("CC", "").strip() or "cc")
    except ValueError as exc:  # an unbalanced quote
        raise CompilerNotFound(f"{_named(['cc'])} is not a command ({exc}); {INSTALL_HINT}") from None
    resolved = shutil.which(cmd[0]) if cmd else None
    if resolved is None:
        name = cmd[0] if cmd else "cc"
        raise CompilerNotFound(f"no C compiler found: {_named(cmd)} ('{name}' is not on PATH); {INSTALL_HINT}")
    _probe(tuple(cmd), resolved)
    return cmd


@lru_cache(maxsize=None)
def _probe(cmd: tuple[str, ...], resolved: str) -> None:
    """Build a one-line library with the flags every rung gets, outside the
    cache; raise CompilerNotFound if that fails. Cached per compiler (its
    command and the file it resolves to); a failure is not cached."""
    with tempfile.TemporaryDirectory(prefix="gemmbench-cc-") as tmp:
        source, output = Path(tmp) / "probe.c", Path(tmp) / "probe.so"
        source.write_text(_PROBE_SOURCE)
        hint = INSTALL_HINT
        try:
            done = _run([*cmd, *BASE_FLAGS, "-o", str(output), str(source)], PROBE_SECONDS)
        except procs.ToolError as exc:
            problem, hint = exc.problem, exc.hint
        else:
            problem = _exit_problem(done) or _library_problem(output) or _load_problem(output)
    if problem:
        raise CompilerNotFound(f"{_named(cmd)} cannot build a shared library: it {problem}; {hint}")


def _exit_problem(done: procs.Completed) -> str | None:
    """'exited with status N: <its first error line>', or None for status 0."""
    if done.returncode == 0:
        return None
    said = procs.first_error_line(done.stderr or done.stdout or "")
    return f"exited with status {done.returncode}" + (f": {said[:160]}" if said else " and printed nothing")


def _library_problem(path: Path) -> str | None:
    """Why the file a compiler wrote is not a shared library, or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except FileNotFoundError:
        return "exited with status 0 but wrote no file"
    if not head:
        return "exited with status 0 but wrote an empty file"
    if head not in _LIBRARY_MAGIC:
        return "exited with status 0 but wrote something that is not a shared library"
    return None


def _load_problem(probe: Path) -> str | None:
    """Why this process cannot load the probe library (another architecture,
    an executable instead of a library), or None."""
    try:
        ctypes.CDLL(str(probe)).gemmbench_probe  # the library loads and its symbol resolves
    except (OSError, AttributeError) as exc:
        return f"built a library this Python cannot load ({str(exc).splitlines()[0][:160]})"
    return None


@lru_cache(maxsize=None)
def _version(cmd: tuple[str, ...]) -> str:
    try:
        done = _run([*cmd, "--version"], PROBE_SECONDS)
    except procs.ToolError as exc:
        raise CompilerNotFound(f"{_named(cmd)} --version {exc.problem}; {exc.hint}") from None
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0] if lines else cmd[0]


def compiler_version() -> str:
    """First line of ``$CC --version``, e.g. 'cc (Debian 12.2.0-14) 12.2.0'."""
    return _version(tuple(compiler()))


@lru_cache(maxsize=None)
def _predefined_macros(cmd: tuple[str, ...]) -> frozenset[str]:
    try:
        done = _run([*cmd, "-march=native", "-dM", "-E", "-x", "c", os.devnull], PROBE_SECONDS)
    except procs.ToolError as exc:
        raise CompilerNotFound(f"{_named(cmd)} -dM -E {exc.problem}; {exc.hint}") from None
    return frozenset(line.split()[1] for line in done.stdout.splitlines() if line.startswith("#define "))


def simd_level() -> str:
    """The micro-kernel flavour rungs 5-6 compile to here (same test as packed_gemm.h)."""
    macros = _predefined_macros(tuple(compiler()))
    if "__AVX512F__" in macros:
        return "avx512"
    if "__AVX2__" in macros and "__FMA__" in macros:
        return "avx2"
    return "portable"


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
    return fsutil.cache_dir("so") / f"{Path(spec.source).stem}-{digest}.so"


def _checksum_path(library: Path) -> Path:
    return library.with_name(library.name + ".sha256")


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cached_library(spec: KernelSpec) -> Path | None:
    """The cached library for ``spec`` if it is exactly what a complete build
    wrote (it matches its checksum sidecar), else None."""
    path = library_path(spec)
    try:
        if _checksum_path(path).read_text().strip() == _file_sha256(path):
            return path
    except (OSError, UnicodeDecodeError):
        pass
    return None


def check_ready(specs: Iterable[KernelSpec]) -> None:
    """Before the first kernel runs: raise CompilerNotFound for an unusable
    compiler, and CacheDirError when a rung must be built and the cache
    directory cannot take it (a read-only cache that holds every rung is fine)."""
    compiler()
    if any(cached_library(s) is None for s in specs if not s.is_baseline):
        fsutil.cache_dir("so", create=True)


_last_compiled = False
_loaded: dict[Path, ctypes.CDLL] = {}


def last_load_compiled() -> bool:
    """Whether the latest ``load`` ran the compiler (False: it came from cache)."""
    return _last_compiled


def build(spec: KernelSpec, log: Log | None = None, force: bool = False) -> Path:
    """Compile ``spec`` unless a verified library is cached (or ``force``);
    return the library's path."""
    global _last_compiled
    if not force:
        cached = cached_library(spec)
        if cached is not None:
            _last_compiled = False
            if log:
                log(f"cached {spec.source}: {cached}")
            return cached
    path = library_path(spec)
    fsutil.remove_stale_temps(fsutil.cache_dir("so", create=True))
    # build beside the final name, then rename: no run ever sees half a library
    with fsutil.replacing(path) as tmp:
        cmd = compile_command(spec, tmp)
        if log:
            log(shlex.join(cmd))
        try:
            done = _run(cmd, COMPILE_SECONDS)
        except procs.ToolError as exc:
            raise CompilerNotFound(f"compiling {spec.source}: {_named(cmd[:1])} {exc.problem}; "
                                   f"{exc.hint}") from None
        problem = _exit_problem(done) or _library_problem(tmp)
        if problem:
            raise BuildError(f"compiling {spec.source} failed: the compiler {problem}\n"
                             f"{shlex.join(cmd)}\n{done.stderr.strip()}")
        checksum = _file_sha256(tmp)
    fsutil.write_atomic(_checksum_path(path), checksum + "\n")
    _last_compiled = True
    return path


def load(spec: KernelSpec, log: Log | None = None):
    """The rung's entry point as a ctypes function with argtypes set. A
    library that does not load is rebuilt once; if that one fails too, the
    BuildError says why."""
    path = build(spec, log)
    try:
        return _entry_point(path, spec)
    except (OSError, AttributeError) as exc:
        if log:
            log(f"{path.name} does not load ({exc}): rebuilding it")
    path = build(spec, log, force=True)
    try:
        return _entry_point(path, spec)
    except (OSError, AttributeError) as exc:
        raise BuildError(f"{spec.source}: the library does not load even after a rebuild: {exc}") from None


def _entry_point(path: Path, spec: KernelSpec):
    lib = _loaded.get(path)
    if lib is None:
        lib = _loaded[path] = ctypes.CDLL(str(path))
    fn = getattr(lib, spec.entry)
    fn.argtypes = SGEMM_ARGTYPES
    fn.restype = None
    return fn
