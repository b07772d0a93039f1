"""Shell completion (click's: ``_GEMMBENCH_COMPLETE=bash_source gemmbench``,
see the README): rung ids from the ladder of the command's --device with
their names, precision classes with their rungs, and nothing of the GPU
touched to say so."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemmbench import cli
from gemmbench.precision import PRECISIONS
from gemmbench.rungs import CPU_LADDER, GPU_LADDER


def complete(line: str, shell: str = "zsh") -> dict[str, str]:
    """What the shell is offered for the last word of ``line`` (a trailing
    space: a new word), by value, with its help text."""
    words = line.split() + ([""] if line.endswith(" ") else [])
    env = {"_GEMMBENCH_COMPLETE": f"{shell}_complete", "COMP_WORDS": " ".join(words),
           "COMP_CWORD": str(len(words) - 1)}
    result = CliRunner().invoke(cli.cli, [], prog_name="gemmbench", env=env)
    assert result.exit_code == 0, result.output
    if shell == "bash":
        return {line.split(",", 1)[1]: "" for line in result.output.splitlines()}
    fields = result.output.split("\n")
    return {fields[i + 1]: fields[i + 2] for i in range(0, len(fields) - 2, 3)}  # type, value, help ("_": none)


def ids(ladder) -> set[str]:
    return {str(s.id) for s in ladder}


@pytest.mark.parametrize("command", ["run", "compare", "sizes", "tune"])
def test_rung_ids_come_from_the_ladder_of_the_chosen_device(command):
    assert set(complete(f"gemmbench {command} --device cpu -i ")) == ids(CPU_LADDER)
    assert set(complete(f"gemmbench {command} --device gpu --kernel ")) == ids(GPU_LADDER)
    assert set(complete(f"gemmbench {command} -i ")) == ids(GPU_LADDER) | ids(CPU_LADDER)  # auto: both


def test_a_rung_id_is_offered_with_its_name():
    cpu = complete("gemmbench compare --device cpu -i ")
    assert cpu["0"] == "OpenBLAS" and cpu["2"] == "loop reorder"
    gpu = complete("gemmbench compare --device gpu -i 1")
    assert set(gpu) == {"1", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19"}
    assert gpu["12"] == "multistage cp.async" and gpu["1"] == "naive"
    both = complete("gemmbench compare -i ")
    assert both["0"] == "GPU: cuBLAS; CPU: OpenBLAS" and both["1"] == "naive (GPU and CPU)"
    assert both["12"] == "GPU: multistage cp.async"


def test_the_gpu_only_commands_complete_gpu_rungs():
    for command in ("info", "asm", "profile"):
        assert set(complete(f"gemmbench {command} -i ")) == ids(GPU_LADDER)


def test_precisions_are_offered_with_their_rungs():
    offered = complete("gemmbench compare --precision ")
    assert list(offered) == list(PRECISIONS) == ["fp32", "tf32", "3xtf32", "bf16", "fp16"]
    assert offered["3xtf32"] == "3xTF32: rungs GPU 15, 18"
    assert offered["fp32"] == "FP32: rungs GPU 0-13, 19, 28; CPU 0-6"
    assert set(complete("gemmbench sizes --precision t")) == {"tf32"}
    assert complete("gemmbench sizes --device cpu --precision ")["bf16"] == "BF16: no rungs in this ladder"


def test_bash_gets_plain_values():
    assert set(complete("gemmbench compare --device cpu -i ", shell="bash")) == ids(CPU_LADDER)
    assert set(complete("gemmbench compare --precision b", shell="bash")) == {"bf16"}


def test_other_numbers_are_not_completed_as_rungs():
    assert complete("gemmbench compare --gpu ") == {}
    assert complete("gemmbench compare --seed ") == {}


def _gemmbench_env(**extra) -> dict:
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", **extra}


# Any import of pycuda (or NVML's bindings), or a CUDA or NVML library loaded
# through ctypes, is written to stderr and refused.
GUARDED = """
import ctypes, runpy, sys
class Guard:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pycuda", "pynvml", "skcuda"):
            sys.stderr.write(f"IMPORTED {name}\\n")
            raise ImportError(name)
sys.meta_path.insert(0, Guard())
real_init = ctypes.CDLL.__init__
def init(self, name, *args, **kw):
    if name and any(lib in str(name) for lib in ("cuda", "nvidia-ml", "cublas")):
        sys.stderr.write(f"LOADED {name}\\n")
        raise OSError(name)
    real_init(self, name, *args, **kw)
ctypes.CDLL.__init__ = init
sys.argv = ["gemmbench"]
runpy.run_module("gemmbench", run_name="__main__")
"""


@pytest.mark.parametrize("line", ["gemmbench compare -i ", "gemmbench sizes --precision ", "gemmbench info -i 1"])
def test_completion_neither_imports_pycuda_nor_loads_cuda(line):
    words = line.split() + ([""] if line.endswith(" ") else [])
    proc = subprocess.run([sys.executable, "-c", GUARDED], capture_output=True, text=True, timeout=120,
                          env=_gemmbench_env(_GEMMBENCH_COMPLETE="bash_complete", COMP_WORDS=" ".join(words),
                                             COMP_CWORD=str(len(words) - 1)))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.startswith("plain,")


def _source(shell: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "gemmbench"], capture_output=True, text=True, timeout=120,
                          env=_gemmbench_env(_GEMMBENCH_COMPLETE=f"{shell}_source"))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_bash_script_is_valid_bash_and_completes(tmp_path):
    script = tmp_path / "gemmbench-complete.bash"
    script.write_text(_source("bash"))
    check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and check.stderr == "", check.stderr
    if shutil.which("gemmbench", path=_gemmbench_env()["PATH"]) is None:
        pytest.skip("the gemmbench command is not installed beside this Python")
    # bash as a user's would run it: source the script, ask the function for the words after '-i'
    session = (f"source {script}\n"
               "COMP_WORDS=(gemmbench compare --device cpu -i ''); COMP_CWORD=5\n"
               "_gemmbench_completion gemmbench\n"
               "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    run = subprocess.run(["bash", "--norc", "--noprofile", "-i"], input=session, capture_output=True, text=True,
                         timeout=120, env=_gemmbench_env())
    assert run.stdout.split() == [str(s.id) for s in CPU_LADDER], run.stderr


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts(shell):
    script = _source(shell)
    assert "_GEMMBENCH_COMPLETE" in script and f"{shell}_complete" in script
    if shutil.which(shell):
        check = subprocess.run([shell, "-n"], input=script, capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stderr
