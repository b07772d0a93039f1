"""Building a C rung: the compiler command, the cache, a missing compiler."""

import dataclasses

import pytest

from gemmbench.cpu import build
from gemmbench.rungs import CPU_LADDER

RUNG5 = CPU_LADDER[5]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMBENCH_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_second_load_compiles_nothing(cache):
    commands = []
    build.load(CPU_LADDER[2], log=commands.append)
    assert build.last_load_compiled()
    assert len(commands) == 1 and "-march=native" in commands[0] and "02_loop_reorder.c" in commands[0]

    build.load(CPU_LADDER[2], log=commands.append)
    assert not build.last_load_compiled()
    assert commands[1].startswith("cached ")
    assert len(list(cache.glob("so/*.so"))) == 1


def test_openmp_rung_gets_its_flag():
    assert "-fopenmp" in build.flags(CPU_LADDER[6])
    assert "-fopenmp" not in build.flags(RUNG5)


def test_cache_key_covers_included_header_and_flags():
    """Rungs 5 and 6 include packed_gemm.h: editing it must rebuild them."""
    assert "packed_gemm.h" in build.source_text(RUNG5)
    assert "static void pack_a(" in build.source_text(RUNG5)  # the header's text itself
    other = dataclasses.replace(RUNG5, cflags=("-DKC=128",))
    assert build.library_path(other) != build.library_path(RUNG5)


def test_missing_compiler_is_a_one_line_error(cache, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/bin/no-such-cc")
    with pytest.raises(build.CompilerNotFound) as info:
        build.load(RUNG5)
    message = str(info.value)
    assert "\n" not in message
    assert "install gcc" in message and "no-such-cc" in message


def test_compile_failure_shows_the_command(cache):
    broken = dataclasses.replace(RUNG5, cflags=("--no-such-option",))
    with pytest.raises(build.BuildError, match="compiling 05_packed_microkernel.c failed") as info:
        build.load(broken)
    assert "--no-such-option" in str(info.value)
