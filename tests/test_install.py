"""The README's set-up commands against pyproject.toml and .ci/run: a machine
without CUDA never builds pycuda, and CI installs what the README installs."""

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
NEEDS_CUDA_TO_BUILD = {"pycuda", "scikit-cuda"}


def requirement_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower()


def readme_commands() -> list[str]:
    """The indented set-up commands at the top of the README (before its first rule)."""
    top = (ROOT / "README.md").read_text().split("\n---", 1)[0]
    return [line.strip() for line in top.splitlines() if line.startswith("    python3 -m venv")]


def installed_extras(command: str) -> set[str]:
    match = re.search(r"pip\"? install (?:-q )?-e '?\.(?:\[([\w,]+)\])?'?", command)
    assert match, f"no editable install in {command!r}"
    return set(match.group(1).split(",")) if match.group(1) else set()


def test_the_base_install_builds_nothing_against_cuda():
    assert not {requirement_name(r) for r in PROJECT["dependencies"]} & NEEDS_CUDA_TO_BUILD


def test_readme_gives_a_gpu_command_then_one_that_needs_no_cuda():
    gpu, cpu, tests = readme_commands()
    assert "cuda" in installed_extras(gpu) and gpu.endswith("gemmbench compare --all")
    cpu_packages = {requirement_name(r) for r in PROJECT["dependencies"]}
    for extra in installed_extras(cpu):
        cpu_packages |= {requirement_name(r) for r in PROJECT["optional-dependencies"][extra]}
    assert not cpu_packages & NEEDS_CUDA_TO_BUILD and "--device cpu" in cpu
    assert "pytest" in tests


def test_every_extra_the_readme_installs_exists():
    for command in readme_commands():
        assert installed_extras(command) <= set(PROJECT["optional-dependencies"])


def test_ci_installs_and_runs_what_the_readme_test_command_does():
    tests = readme_commands()[-1]
    ci = (ROOT / ".ci" / "run").read_text()
    ci_install = next(line for line in ci.splitlines() if "pip\" install" in line)
    assert installed_extras(ci_install) == installed_extras(tests)
    assert "-m pytest -q" in ci and "-m pytest -q" in tests


def test_every_package_of_the_source_is_in_the_wheel():
    """A plain (not editable) install copies only the packages pyproject lists:
    a subpackage left out installs a gemmbench that cannot import it."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "gemmbench").rglob("__init__.py")}
    assert on_disk - listed == set()
