"""The registry: lookups, per-device records, per-shape parameters."""

import dataclasses

import pytest

from gemmbench.rungs import GPU_LADDER, baselines, get_spec
from gemmbench.precision import comparison_precision
from gemmbench.spec import KernelSpec


def test_rung_0_is_sgemm_and_cublas_tf32_is_its_companion():
    assert get_spec("gpu", 0).name == "cuBLAS" and get_spec("gpu", 0).precision == "fp32"
    assert [b.precision for b in baselines("gpu")] == ["fp32", "tf32"]
    assert [b.precision for b in baselines("cpu")] == ["fp32"]
    with pytest.raises(KeyError, match="valid: 0, 1"):
        get_spec("gpu", 99)


def test_the_gpu_ladder_is_in_id_order_with_the_library_rows_first():
    """list, info and the tables show rungs in this order (info's JSON test checks it on a GPU)."""
    ids = [s.id for s in GPU_LADDER]
    assert ids == sorted(ids) and len(set(ids)) == len(ids) - 3  # four library rows share id 0
    assert [s.name for s in GPU_LADDER[:4]] == ["cuBLAS", "cuBLAS TF32", "cuBLAS BF16", "cuBLAS FP16"]


def test_comparison_precision():
    assert comparison_precision("tf32") == "tf32"
    assert comparison_precision("3xtf32") == comparison_precision("fp32") == "fp32"


def test_arch_specific_rungs_fall_back_off_hopper():
    fallback = KernelSpec(14, "x", "gpu", "-", source="x.cu", params={"TC_BM": 64})
    spec = KernelSpec(14, "x", "gpu", "-", source="x.cu", params={"BM": 128}, arch_specific=True,
                      fallback=fallback)
    assert spec.for_device((9, 0)) is spec
    assert spec.for_device((8, 0)) is fallback and spec.for_device((10, 0)) is fallback
    plain = dataclasses.replace(spec, arch_specific=False)
    assert plain.for_device((8, 0)) is plain


def test_select_picks_parameters_per_shape():
    spec = KernelSpec(13, "x", "gpu", "-", source="x.cu", params={"SPLITS": 1},
                      select=lambda M, N, K, sms: {"SPLITS": 4 if M * N < sms * 64 * 64 else 1})
    assert spec.params_for(256, 256, 4096, 132) == {"SPLITS": 4}
    assert spec.params_for(4096, 4096, 4096, 132) == {"SPLITS": 1}
    assert dataclasses.replace(spec, select=None).params_for(1, 1, 1, 132) == {"SPLITS": 1}


@pytest.mark.parametrize("spec", [s for s in GPU_LADDER if s.search_space], ids=lambda s: f"rung{s.id}")
def test_search_spaces_name_real_parameters(spec):
    assert set(spec.search_space) <= set(spec.params)


def test_rung_13_splits_k_for_small_shapes_and_not_for_large_ones():
    spec = get_spec("gpu", 13)
    small, large = spec.params_for(256, 256, 256, 132), spec.params_for(4096, 4096, 4096, 132)
    assert small["SPLITS"] > 1 and small["BM"] * small["BN"] < large["BM"] * large["BN"]
    assert large["SPLITS"] == 1 and {k: v for k, v in large.items() if k != "SPLITS"} == get_spec("gpu", 12).params
    skinny = spec.params_for(64, 64, 16384, 132)  # two tiles of C, long K: split it
    assert skinny["SPLITS"] >= 8
