"""ncu output parsing, the summary, the roofline and the profile command's
errors, from CSVs captured on the H200 (tests/data) and a fake ncu."""

import os
import stat
from pathlib import Path

import pytest

from gemmbench import cli
from gemmbench.backend import Shape
from gemmbench.inspect import commands
from gemmbench.inspect.profile import (PERMISSION_HINT, ncu_failure, parse_raw_csv, stall_reasons,
                                       summary)
from gemmbench.inspect.roofline import Point, Roof, executed_flops, point_for, roof_from_profile
from gemmbench.rungs import get_spec

DATA = Path(__file__).parent / "data"
FLOPS_4096 = 2 * 4096 ** 3


def kernels(name):
    return parse_raw_csv((DATA / name).read_text())


def test_raw_csv_of_rung12():
    [k] = kernels("ncu_raw_rung12_h200.csv")
    assert k.name == "sgemm"
    assert k.units["gpu__time_duration.sum"] == "ns"
    values = {label: v for label, unit, v in summary(k)}
    assert 3.0e6 < values["duration"] < 3.2e6  # ns
    assert values["theoretical occupancy"] == 12.5
    assert values["FMA pipe"] == pytest.approx(69.54)
    assert values["tensor pipe"] == 0.0
    assert values["shared load bank conflicts"] == 0  # the swizzle of rung 12 works
    assert values["DRAM bytes"] == pytest.approx(348259072 + 70378240)


def test_stall_table_of_rung14():
    [k] = kernels("ncu_raw_rung14_h200.csv")
    stalls = stall_reasons(k, top=3)
    assert [reason for reason, _, _ in stalls] == ["dispatch_stall", "wait", "selected"]
    assert stalls[0][1] == pytest.approx(1.42)
    assert sum(share for *_, share in stall_reasons(k, top=100)) == pytest.approx(1.0)
    assert dict((label, v) for label, _, v in summary(k))["tensor pipe"] == pytest.approx(54.67)


def test_launch_statistics_of_every_rung():
    rows = kernels("ncu_launch_rungs_h200.csv")
    names = [k.name for k in rows]
    assert names.count("sgemm") == 15 and "split_tf32" in names  # 3xTF32 splits A first
    regs = [k.get("launch__registers_per_thread") for k in rows if k.name == "sgemm"]
    assert regs[0] == 32 and regs[11] == 255


def test_numbers_with_thousands_separators_and_text():
    text = '"ID","Kernel Name","a","b","c"\n"","","ns","",""\n"0","sgemm","1,234.5","n/a","7"\n'
    [k] = parse_raw_csv("==PROF== noise\n" + text)
    assert k.metrics["a"] == 1234.5 and k.metrics["b"] == "n/a" and k.get("b", "c") == 7.0


def test_parse_rejects_text_without_a_header():
    with pytest.raises(ValueError):
        parse_raw_csv("==ERROR== nothing here\n")


@pytest.mark.parametrize("output, code, expected", [
    ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission", 1, PERMISSION_HINT),
    ("gemmbench: error: no usable GPU", 2, "no usable GPU"),
    ("==ERROR== Failed to connect", 1, "ncu: Failed to connect"),
    ("==WARNING== No kernels were profiled.", 0, "ncu profiled no kernel"),
    ("all fine", 0, None),
])
def test_ncu_failures(output, code, expected):
    assert ncu_failure(output, code) == expected


# --- roofline --------------------------------------------------------------

def test_roof_math():
    roof = Roof(peak_flops=60e12, peak_bandwidth=4e12, tensor_flops=480e12)
    assert roof.ridge() == 15 and roof.ridge(tensor=True) == 120
    assert roof.attainable(5) == 20e12 and roof.attainable(1000) == 60e12
    assert roof.attainable(1000, tensor=True) == 480e12
    p = Point("k", flops=8e12, dram_bytes=1e12, seconds=1.0)  # intensity 8: under the memory roof
    assert p.intensity == 8 and p.share_of_roof(roof) == pytest.approx(8e12 / 32e12)


def test_roofline_from_the_h200_profiles():
    [k12] = kernels("ncu_raw_rung12_h200.csv")
    roof = roof_from_profile(k12)
    assert roof.tensor_flops is None
    assert roof.peak_flops == pytest.approx(132 * 128 * 2 * k12.get("sm__cycles_elapsed.avg.per_second"))
    assert 4.7e12 < roof.peak_bandwidth < 4.9e12  # the H200's 4.8 TB/s
    fp32, tensor = executed_flops(k12)
    assert fp32 == pytest.approx(FLOPS_4096, rel=1e-3) and tensor == 0  # the FFMAs are the GEMM
    [k14] = kernels("ncu_raw_rung14_h200.csv")
    fp32, tensor = executed_flops(k14)
    assert tensor == FLOPS_4096 and fp32 < 1e-3 * FLOPS_4096
    roof14 = roof_from_profile(k14)
    assert roof14.tensor_flops == pytest.approx(270336 * k14.get("sm__cycles_elapsed.avg.per_second"))
    p = point_for(k14, "sgemm")
    assert p.tensor and 0 < p.share_of_roof(roof14) < 1


def test_plot_from_the_captured_profile(tmp_path):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "roofline.png"
    commands._plot(kernels("ncu_raw_rung14_h200.csv"), {"entry": "sgemm", "gpu": "NVIDIA H200"},
                   get_spec("gpu", 14), Shape(4096, 4096, 4096), plot)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["roofline.png"]  # nothing half-written left


# --- the command ------------------------------------------------------------

def fake_ncu(tmp_path, monkeypatch, body: str):
    path = tmp_path / "bin" / "ncu"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{path.parent}{os.pathsep}{os.environ['PATH']}")


def run(capsys, *args):
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_profile_without_counter_permission(capsys, tmp_path, monkeypatch):
    fake_ncu(tmp_path, monkeypatch, 'echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission"; exit 1')
    code, out, err = run(capsys, "profile", "-i", "12", "--results-dir", str(tmp_path / "res"))
    lines = err.splitlines()  # a progress note, then the one-line error
    assert code == 2 and lines[-1].startswith("gemmbench: error: ") and "ERR_NVGPUCTRPERM" in lines[-1]
    assert sum(line.startswith("gemmbench: error") for line in lines) == 1 and "Traceback" not in err
    assert not any((tmp_path / "res").iterdir())  # no partial report left behind


def test_profile_reads_what_ncu_exported(capsys, tmp_path, monkeypatch):
    csv = DATA / "ncu_raw_rung12_h200.csv"
    # profiling run: write the report; --import: print the captured CSV
    fake_ncu(tmp_path, monkeypatch, f'case "$1" in --import) cat "{csv}";; *) '
             'while [ "$1" != "--export" ]; do shift; done; echo rep > "$2";; esac')
    code, out, err = run(capsys, "profile", "-i", "12", "--export", str(tmp_path / "r12.ncu-rep"))
    assert code == 0, err
    assert "FMA pipe" in out and "69.5%" in out and "short_scoreboard" in out
    assert (tmp_path / "r12.ncu-rep").exists() and (tmp_path / "r12.csv").read_text() == csv.read_text()


def test_profile_without_ncu(capsys, monkeypatch):
    monkeypatch.setattr("gemmbench.inspect.profile.find_tool", lambda name: None)
    monkeypatch.setattr("gemmbench.inspect.profile.NCU_LOCATIONS", ())
    code, out, err = run(capsys, "profile", "-i", "12")
    assert code == 2 and err.count("\n") == 1 and "ncu" in err and "Traceback" not in err


def test_info_without_a_gpu(capsys, monkeypatch):
    from gemmbench.gpu.device import GpuUnavailable

    def unavailable(*a, **k):
        raise GpuUnavailable("no CUDA device found")
    monkeypatch.setattr("gemmbench.gpu.backend.open_device", unavailable)
    code, out, err = run(capsys, "info", "-i", "12")
    assert code == 2 and err == "gemmbench: error: info needs a GPU: no CUDA device found\n"
