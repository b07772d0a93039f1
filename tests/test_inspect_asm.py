"""gemmbench asm without a GPU: the listing of every rung for sm_80 and sm_90,
built as the tool builds it, and the instruction mix of its main loop."""

import shutil
from pathlib import Path
from functools import lru_cache

import pytest

from gemmbench import cli
from gemmbench.inspect import asm
from gemmbench.rungs import GPU_LADDER, get_spec

NVCC = shutil.which("nvcc")
DISASSEMBLER = next((t for t in asm.DISASSEMBLERS if asm.find_tool(t)), None)
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
needs_sass = pytest.mark.skipif(NVCC is None or DISASSEMBLER is None,
                                reason="needs nvcc and nvdisasm or cuobjdump (pip install 'gemmbench[asm]')")
RUNGS = [s for s in GPU_LADDER if not s.is_baseline]
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@lru_cache(maxsize=None)
def mix(kernel_id: int, cc: tuple, kind: str = "sass"):
    spec = get_spec("gpu", kernel_id).for_device(cc)
    listing = asm.build_listing(spec, cc, None, kind)
    return asm.loop_mix(asm.main_function(asm.parse_listing(listing)))


@needs_sass
@pytest.mark.parametrize("cc", [(8, 0), (9, 0)], ids=["sm80", "sm90"])
@pytest.mark.parametrize("spec", RUNGS, ids=lambda s: f"rung{s.id}")
def test_main_loop_mix(spec, cc):
    m = mix(spec.id, cc)
    assert m.loop is not None, "no main loop found"
    if spec.precision == "fp32":
        assert m.count("FFMA") > 0 and m.count("HMMA") == m.count("HGMMA") == 0
    elif cc == (9, 0) and spec.arch_specific:  # wgmma rungs are built for sm_90a there
        assert m.count("HGMMA") > 0 and m.count("FFMA") == 0
    else:  # their mma.sync fallback, and the 16-bit mma.sync rungs
        assert m.count("HMMA") > 0 and m.count("HGMMA") == 0
    shared = sum(m.count(k) for k in ("LDS", "LDS.128", "LDSM"))
    tma = spec.driver in ("tma", "tma16", "tma16_store") and cc == (9, 0)
    if spec.id <= 2:  # no shared memory yet: the loop reads global memory
        assert m.count("LDG") > 0 and shared == 0
    elif tma:  # TMA fills shared memory; warps wait on mbarriers, not on a block barrier
        assert m.count("LDG") == m.count("LDGSTS.128") == 0 and m.count("SYNCS") > 0
    else:  # tiles in shared memory, loaded between barriers
        assert shared > 0 and m.count("BAR") > 0
    if 6 <= spec.id <= 13:  # the rungs that vectorise their shared-memory reads
        assert m.count("LDS.128") > 0
    if 6 <= spec.id <= 11:  # float4 global loads
        assert m.count("LDG.128") > 0
    if spec.id >= 12 and not tma:  # cp.async: global straight into shared memory
        assert m.count("LDGSTS.128") > 0
        # 16-bit rows that are not 16-byte aligned go element by element (cp.async has no 2-byte form)
        assert m.count("LDG") == 0 or spec.precision in ("bf16", "fp16")


@needs_nvcc
def test_ptx_mode_finds_the_same_loop_in_ptx():
    m12 = mix(12, (9, 0), "ptx")
    assert m12.count("fma.rn.f32") > 0 and m12.count("ld.shared.v4.f32") > 0
    assert any(k.startswith("cp.async") for k in m12.mix)
    m14 = mix(14, (9, 0), "ptx")
    assert any(k.startswith("wgmma.mma_async") for k in m14.mix)


@needs_nvcc
def test_ptx_targets_the_arch_specific_virtual_architecture():
    spec = get_spec("gpu", 14).for_device((9, 0))
    cmd = asm.nvcc_command(spec, (9, 0), None, "ptx", "k.cu", "k.ptx")
    assert cmd[1:4] == ["-ptx", "-arch", "compute_90a"]
    assert asm.build_listing(spec, (9, 0), None, "ptx").text.count(".target sm_90a") == 1


SASS_NVDISASM = """
\t.section\t.text.sgemm,"ax",@progbits
.text.sgemm:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_1:
        /*0010*/                   LDS.U.128 R4, [R2] ;
        /*0020*/                   FFMA R8, R4, R5, R8 ;
        /*0030*/              @P0 BRA `(.L_x_1) ;
.L_x_2:
        /*0040*/                   FFMA R9, R4, R5, R9 ;
        /*0050*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;
        /*0060*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0070*/                   FFMA R10, R4, R5, R10 ;
        /*0080*/              @!P1 BRA `(.L_x_2) ;
        /*0090*/                   EXIT ;
"""

SASS_CUOBJDUMP = """
\t\tFunction : sgemm
        /*0000*/                   MOV R1, c[0x0][0x28] ;   /* 0x00000a00ff017b82 */
        /*0010*/                   LDS.U.128 R4, [R2] ;      /* 0x0 */
        /*0020*/                   FFMA R8, R4, R5, R8 ;     /* 0x0 */
        /*0030*/              @P0 BRA 0x10 ;                 /* 0x0 */
        /*0040*/                   FFMA R9, R4, R5, R9 ;
        /*0050*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;
        /*0060*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0070*/                   FFMA R10, R4, R5, R10 ;
        /*0080*/              @!P1 BRA 0x40 ;
        /*0090*/                   EXIT ;
"""


@pytest.mark.parametrize("text", [SASS_NVDISASM, SASS_CUOBJDUMP], ids=["nvdisasm", "cuobjdump"])
def test_main_loop_is_the_loop_with_most_math(text):
    [fn] = asm.parse_sass(text)
    assert [(loop.start, loop.end) for loop in asm.loops(fn)] == [(1, 3), (4, 8)]
    m = asm.loop_mix(fn)
    assert (m.loop.start, m.loop.end) == (4, 8)
    assert dict(m.mix) == {"FFMA": 2, "LDG.128": 1, "BAR": 1, "BRA": 1}


def test_tensor_core_loop_beats_a_longer_ffma_loop():
    text = ".text.sgemm:\n" + "\n".join(
        [f"        /*{i * 16:04x}*/ FFMA R1, R2, R3, R1 ;" for i in range(5)]
        + ["        /*0050*/ @P0 BRA 0x0 ;",
           "        /*0060*/ HGMMA.64x128x8.F32.TF32 gdesc[UR4], RZ, !UPT ;",
           "        /*0070*/ @P0 BRA 0x60 ;"])
    [fn] = asm.parse_sass(text)
    m = asm.loop_mix(fn)
    assert m.count("HGMMA") == 1 and m.count("FFMA") == 0


def test_mix_keys():
    assert asm.mix_key("LDS.U.128") == "LDS.128"
    assert asm.mix_key("LDGSTS.E.BYPASS.LTC128B.128") == "LDGSTS.128"
    assert asm.mix_key("HGMMA.64x128x8.F32.TF32") == "HGMMA"
    assert asm.mix_key("BAR.SYNC.DEFER_BLOCKING") == "BAR"
    assert asm.mix_key("ld.shared.v4.f32") == "ld.shared.v4.f32"


@pytest.mark.parametrize("arch, cc", [("sm_80", (8, 0)), ("sm_90a", (9, 0)), ("sm_120", (12, 0))])
def test_parse_arch(arch, cc):
    assert asm.parse_arch(arch) == cc


# --- through the command line ---------------------------------------------

def run(capsys, *args):
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@needs_sass
def test_asm_writes_the_listing_to_a_file(capsys, tmp_path):
    out_file = tmp_path / "r6.sass"
    code, out, err = run(capsys, "asm", "-i", "6", "--arch", "sm_80", "-o", str(out_file))
    assert code == 0
    text = out_file.read_text()
    assert "FFMA" in text and "LDS" in text
    assert "FFMA" in out and "instruction mix" in out  # the summary table
    assert "-arch sm_80" in err and "06_vectorized.cu" in err


@needs_nvcc
def test_asm_ptx_to_stdout(capsys):
    code, out, err = run(capsys, "asm", "-i", "3", "--arch", "sm_80", "--ptx")
    assert code == 0
    assert ".visible .entry sgemm(" in out and "fma.rn.f32" in out


def assert_one_line_error(code, err, *fragments):
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("gemmbench: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


@needs_nvcc
def test_missing_disassembler_is_one_line(capsys, monkeypatch, tmp_path):
    real = asm.find_tool
    monkeypatch.setattr(asm, "find_tool", lambda name: None if name in asm.DISASSEMBLERS else real(name))
    out_file = tmp_path / "x.sass"
    code, out, err = run(capsys, "asm", "-i", "3", "--arch", "sm_80", "-o", str(out_file))
    assert_one_line_error(code, err, "nvdisasm or cuobjdump", "gemmbench[asm]")
    assert not out_file.exists()


def test_missing_nvcc_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr(asm, "find_tool", lambda name: None)
    code, out, err = run(capsys, "asm", "-i", "3", "--arch", "sm_80")
    assert_one_line_error(code, err, "nvcc")


@pytest.mark.parametrize("args, fragment", [
    (["asm", "-i", "0", "--arch", "sm_90"], "library kernel"),
    (["asm", "-i", "99", "--arch", "sm_90"], "no GPU rung 99"),
    (["asm", "-i", "3", "--arch", "sm90"], "'sm90'"),
    (["asm", "-i", "3", "--arch", "sm_80", "-m", "0"], "out of range"),
])
def test_asm_bad_input(capsys, args, fragment):
    code, out, err = run(capsys, *args)
    assert_one_line_error(code, err, fragment)


@needs_nvcc
def test_both_disassemblers_give_the_same_mix(monkeypatch):
    found = [t for t in asm.DISASSEMBLERS if asm.find_tool(t)]
    if len(found) < 2:
        pytest.skip("needs both nvdisasm and cuobjdump")
    spec = get_spec("gpu", 6)
    mixes = []
    for tool in found:
        monkeypatch.setattr(asm, "DISASSEMBLERS", (tool,))
        listing = asm.build_listing(spec, (8, 0), None, "sass")
        mixes.append(asm.loop_mix(asm.main_function(asm.parse_listing(listing))).mix)
    assert mixes[0] == mixes[1] and mixes[0]["FFMA"] == 512


@needs_sass
def test_asm_of_a_kernel_file_without_a_gpu(capsys):
    """A user's kernel is built from its own header's parameters, like a rung."""
    code, out, err = run(capsys, "asm", "--kernel-file", str(EXAMPLES / "tiled_sgemm.cu"), "--param", "BM=128",
                         "--arch", "sm_80")
    assert code == 0
    assert "FFMA" in out and "instruction mix" in out
    assert "-DBM=128" in err and "tiled_sgemm.cu" in err


@pytest.mark.parametrize("args, fragment", [
    (["asm", "-i", "3", "--kernel-file", str(EXAMPLES / "tiled_sgemm.cu"), "--arch", "sm_80"], "give one kernel"),
    (["asm", "--arch", "sm_80"], "give one kernel"),
    (["asm", "--kernel-file", str(EXAMPLES / "blocked_sgemm.c"), "--arch", "sm_80"], "CUDA kernels"),
    (["asm", "--kernel-file", str(EXAMPLES / "missing.cu"), "--arch", "sm_80"], "not found"),
    (["info", "--kernel-file", str(EXAMPLES / "tiled_sgemm.cu"), "--gpu", "-1"], "out of range"),
])
def test_instruments_refuse_bad_kernel_choices(capsys, args, fragment):
    code, out, err = run(capsys, *args)
    assert_one_line_error(code, err, fragment)
