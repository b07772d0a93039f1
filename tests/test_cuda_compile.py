"""Every CUDA rung compiles with nvcc, for sm_80 and sm_90, from exactly the
text and options that the tool hands to pycuda's SourceModule."""

import shutil
import subprocess

import pytest

from gemmbench.gpu.compile import expand_source, nvcc_options
from gemmbench.ladder import GPU_LADDER

NVCC = shutil.which("nvcc")
RUNGS = [spec for spec in GPU_LADDER if not spec.is_baseline]


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("spec", RUNGS, ids=lambda s: f"rung{s.id}")
def test_rung_compiles(spec, arch, tmp_path):
    src = tmp_path / "kernel.cu"
    src.write_text(expand_source(spec))
    cmd = [NVCC, "-cubin", "-arch", arch, *nvcc_options(spec), "-Xptxas", "-warn-spills",
           "-o", str(tmp_path / "kernel.cubin"), str(src)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "spill" not in done.stderr.lower(), done.stderr  # a spilling rung is a slow rung
    assert "#include" not in src.read_text()  # else pycuda preprocesses on every cached load


@pytest.mark.parametrize("spec", RUNGS, ids=lambda s: f"rung{s.id}")
def test_default_params_are_valid(spec):
    assert spec.invalid_reason() is None
    threads = spec.block(spec.params)
    assert 32 <= threads[0] * threads[1] * threads[2] <= 1024
