"""Every CUDA rung compiles with nvcc, for compute capability 8.0 and 9.0, from
exactly the text, options, target and command line the tool builds its cubins
with (sm_90a for the wgmma rungs on 9.0, their fallback on 8.0); and the
cubin cache builds each image once."""

import re
import shutil
import subprocess

import pytest

from gemmbench.gpu import compile as gpu_compile
from gemmbench.gpu.compile import build_command, expand_source, nvcc_options, target_for
from gemmbench.rungs import GPU_LADDER, get_spec

NVCC = shutil.which("nvcc")
RUNGS = [spec for spec in GPU_LADDER if not spec.is_baseline]


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("cc", [(8, 0), (9, 0)], ids=["cc80", "cc90"])
@pytest.mark.parametrize("spec", RUNGS, ids=lambda s: f"rung{s.id}")
def test_rung_compiles(spec, cc, tmp_path):
    spec = spec.for_device(cc)
    arch, code = target_for(spec, cc)
    src = tmp_path / "kernel.cu"
    src.write_text(expand_source(spec))
    cmd = build_command(NVCC, (*nvcc_options(spec), "-Xptxas", "-warn-spills"), arch, code,
                        str(src), str(tmp_path / "kernel.cubin"))
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "spill" not in done.stderr.lower(), done.stderr  # a spilling rung is a slow rung
    assert "warning" not in done.stderr, done.stderr
    assert "#include" not in src.read_text()  # every local header is inlined (one text, one cache key)


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
def test_a_cubin_is_built_once_then_read_from_the_cache(monkeypatch):
    spec = get_spec("gpu", 2)
    image = gpu_compile.cubin(spec, (9, 0))
    assert image[:4] == b"\x7fELF"

    def no_nvcc(cmd, **kwargs):
        raise AssertionError(f"nvcc ran: {cmd}")
    monkeypatch.setattr(gpu_compile.procs, "run", no_nvcc)
    assert gpu_compile.cubin(spec, (9, 0)) == image
    with pytest.raises(AssertionError, match="nvcc ran"):  # another target is another build
        gpu_compile.cubin(spec, (8, 0))
    with pytest.raises(AssertionError, match="nvcc ran"):  # and so are other parameters
        gpu_compile.cubin(spec, (9, 0), {**spec.params, "BLOCK": 16})


@pytest.mark.parametrize("spec", RUNGS + [s.fallback for s in RUNGS if s.fallback], ids=lambda s: f"rung{s.id}")
def test_default_params_are_valid(spec):
    assert spec.invalid_reason() is None
    threads = spec.block(spec.params)
    assert 32 <= threads[0] * threads[1] * threads[2] <= 1024
    assert spec.shared_bytes() <= 227 * 1024


SHAPES = [(1, 1, 1), (7, 13, 5), (3, 4099, 2), (4099, 3, 37), (128, 128, 128), (256, 256, 256), (1000, 1000, 1000),
          (4096, 4096, 4096), (64, 64, 16384)]


@pytest.mark.parametrize("spec", [s for s in RUNGS if s.select], ids=lambda s: f"rung{s.id}")
def test_per_shape_choices_are_valid(spec):
    for M, N, K in SHAPES:
        p = spec.params_for(M, N, K, 132)
        assert spec.invalid_reason(p) is None, (M, N, K, p)
        assert spec.grid(M, N, K, p)[1] <= 65535


def _builds_over_the_shape_set(spec):
    """The distinct compiled configurations ``tune --shapes`` tries for a rung over the shipped shape set."""
    from gemmbench.shapeset import read_shapes
    builds = {}
    for named in read_shapes(["benchmarks/shapes"]).shapes:
        for p in spec.shape_candidates(named.shape.M, named.shape.N, named.shape.K, 132):
            builds.setdefault(tuple(spec.defines(p)), p)
    return list(builds.values())


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("spec", [s for s in RUNGS if s.shape_candidates], ids=lambda s: f"rung{s.id}")
def test_every_configuration_tune_tries_over_the_shape_set_compiles_without_spills(spec, tmp_path):
    """What a shape-set tune builds (rung 17's thin 16- and 32-row tiles included) compiles for sm_90a
    without spills, and each is a valid parameter set of the rung."""
    import dataclasses
    builds = _builds_over_the_shape_set(spec)
    assert len(builds) >= 2
    for i, p in enumerate(builds):
        assert spec.invalid_reason(p) is None, p
        built = dataclasses.replace(spec, params=p)
        arch, code = target_for(built, (9, 0))
        src = tmp_path / f"kernel{i}.cu"
        src.write_text(expand_source(built))
        cmd = build_command(NVCC, (*nvcc_options(built), "-Xptxas", "-warn-spills"), arch, code,
                            str(src), str(tmp_path / f"kernel{i}.cubin"))
        done = subprocess.run(cmd, capture_output=True, text=True)
        assert done.returncode == 0, (p, done.stderr)
        assert "spill" not in done.stderr.lower() and "warning" not in done.stderr, (p, done.stderr)


@pytest.mark.parametrize("rung", [12, 13])
def test_rungs_12_and_13_share_one_inlined_main_loop(rung):
    """Rung 13 reuses rung 12's loop through multistage_loop.cuh (not by
    including rung 12's source): the expanded text holds the loop once and
    one sgemm entry point, the rung's own."""
    from gemmbench.rungs import get_spec
    text = expand_source(get_spec("gpu", rung))
    assert text.count("void multistage_mainloop(") == 1 and text.count("void multistage_store(") == 1
    assert len(re.findall(r"^sgemm\(", text, re.MULTILINE)) == 1  # the entry point, not common.cuh's comment
    assert ("float* __restrict__ partials" in text) == (rung == 13)


@pytest.mark.parametrize("rung", [14, 15, 16, 17, 18])
def test_only_the_3xtf32_rungs_hold_the_nan_recomputation(rung):
    """nan_recompute.cuh is in the text of rungs 15 and 18 alone; the mma.sync
    fallback's header only declares recompute_nan, so an edit of its body leaves
    the TF32 rungs' source digest, and rung 17's choice table, as they were."""
    from gemmbench.rungs import get_spec
    from gemmbench.sources import source_dir
    from gemmbench.tuning import code_only
    spec = get_spec("gpu", rung)
    text = code_only(expand_source(spec))
    body = code_only((source_dir("cuda_src") / "nan_recompute.cuh").read_text())
    assert (body in text) == (spec.precision == "3xtf32")
    assert "void recompute_nan(" in text  # declared (TF32) or defined (3xTF32): the fallback's call compiles


# The helper kernels each driver launches besides sgemm (gemmbench/gpu/drivers.py).
HELPERS = {"split_k": {"reduce_splits"}, "presplit_a": {"split_tf32"}, "transpose_a": {"transpose_pad"},
           "any_shape": {"transpose_pad", "copy_rows", "reduce_splits"}, "tma": {"copy_rows"},
           "tma16": {"copy_rows16"}, "tma16_store": {"copy_rows16"}}


@pytest.mark.parametrize("spec", RUNGS, ids=lambda s: f"rung{s.id}")
def test_every_kernel_the_driver_launches_is_in_the_rungs_source(spec):
    spec = spec.for_device((9, 0))
    needed = {"sgemm"} | HELPERS.get(spec.driver, set())
    if spec.driver == "tma" and "SPLITS" in spec.params:
        needed.add("reduce_splits")
    if spec.driver == "tma" and spec.precision == "3xtf32":
        needed.add("split_tf32")
    if spec.driver == "tma" and "SWAP_AB" in spec.params:
        needed.add("transpose_pad")
    defined = set(re.findall(r'extern "C" __global__ void(?: __launch_bounds__\([^)]*\))?\s+(\w+)\(',
                             expand_source(spec)))
    assert needed <= defined, f"{spec.driver} launches {sorted(needed - defined)}, not in {spec.source}"



@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("cluster", [1, 2])
@pytest.mark.parametrize("rung", [24, 26, 30, 32])
def test_only_a_cluster_of_several_blocks_is_launched_as_a_cluster(rung, cluster, tmp_path):
    """With CLUSTER > 1 the kernel declares its cluster shape (in the PTX: .reqnctapercluster); a cluster
    of one declares none, since a cluster launch costs time (H200: 0.25-0.3 us a call at 1024^3)."""
    spec = get_spec("gpu", rung).for_device((9, 0))
    params = {**spec.params, "CLUSTER": cluster}
    assert spec.invalid_reason(params) is None
    src, ptx = tmp_path / "kernel.cu", tmp_path / "kernel.ptx"
    src.write_text(expand_source(spec))
    done = subprocess.run([NVCC, "-ptx", "-arch", "compute_90a", *nvcc_options(spec, params), "-o", str(ptx),
                           str(src)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    declared = re.search(r"\.reqnctapercluster\s+(\d+)\s*,\s*1\s*,\s*1", ptx.read_text())
    assert (int(declared.group(1)) if declared else 1) == cluster
    assert (declared is None) == (cluster == 1)
