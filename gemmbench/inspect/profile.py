"""Nsight Compute on one call of a rung, and a short summary of what it measured.

``ncu`` runs ``python -m gemmbench.inspect.target`` (see there: warm-up, then
one call between cuProfilerStart/Stop, ncu started with
``--profile-from-start off``), with ``--clock-control none --cache-control none``
so the kernel runs at the clocks and with the caches the timer sees, and
``--set full`` so the kept ``.ncu-rep`` opens in the GUI with every section.
The summary reads ``ncu --import REP --csv --page raw --print-units base``:
one row per profiled kernel, one column per metric, base units (ns, bytes).
Both run through ``procs.run`` (a time limit, stdin from /dev/null, its own
process group killed whole with the target): ``PROFILE_SECONDS`` and
``IMPORT_SECONDS``, overridden by ``GEMMBENCH_NCU_TIMEOUT``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from dataclasses import dataclass, field

from .. import procs
from ..errors import UserError
from .asm import find_tool
from .target import MARKER

NCU_HINT = "install Nsight Compute (it comes with the CUDA toolkit) and put ncu on PATH"
PERMISSION_HINT = ("ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root, or load "
                   "the driver with NVreg_RestrictProfilingToAdminUsers=0")


# ncu replays each kernel once per pass of --set full: minutes for a large one
PROFILE_SECONDS = 1800.0
IMPORT_SECONDS = 300.0

# where the toolkit and the Nsight Compute installer put ncu when PATH lacks it
NCU_LOCATIONS = ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu")


def find_ncu() -> str:
    path = find_tool("ncu") or next((p for p in NCU_LOCATIONS if os.access(p, os.X_OK)), None)
    if path is None:
        raise UserError(f"profile needs ncu (Nsight Compute), not found on PATH: {NCU_HINT}")
    return path


def profile_command(ncu: str, report: str, kernel_ids: list[int], m: int, n: int, k: int,
                    sections: list[str] | None = None, gpu: int = 0, kernel_file: str | None = None,
                    params: tuple[str, ...] = ()) -> list[str]:
    """ncu over the target process; ``sections`` None means ``--set full``.
    ``kernel_file`` (with its ``--param`` overrides) profiles a user's kernel."""
    what = ["--set", "full"] if sections is None else [a for s in sections for a in ("--section", s)]
    user = ["--kernel-file", kernel_file, *[a for p in params for a in ("--param", p)]] if kernel_file else []
    target = [sys.executable, "-m", "gemmbench.inspect.target", *[a for i in kernel_ids for a in ("-i", str(i))],
              *user, "-m", str(m), "-n", str(n), "-k", str(k), "--gpu", str(gpu)]
    return [ncu, "--profile-from-start", "off", "--clock-control", "none", "--cache-control", "none",
            *what, "--export", report, "--force-overwrite", *target]


def ncu_failure(output: str, returncode: int) -> str | None:
    """The one-line reason an ncu run failed, or None when it did not."""
    if "ERR_NVGPUCTRPERM" in output:
        return PERMISSION_HINT
    for line in output.splitlines():
        if line.startswith("gemmbench: error: "):  # the target's own one-line error
            return line[len("gemmbench: error: "):]
    errors = [line.split("==ERROR==", 1)[1].strip() for line in output.splitlines() if "==ERROR==" in line]
    if errors:
        return f"ncu: {errors[0]}"
    if "No kernels were profiled" in output:
        return "ncu profiled no kernel"
    if returncode != 0:
        tail = output.strip().splitlines()
        return f"ncu exited with {returncode}: {tail[-1] if tail else ''}"
    return None


def _ncu(cmd: list[str], seconds: float, env: dict | None = None) -> procs.Completed:
    return procs.run(cmd, tool="ncu", limit=procs.limit("ncu", seconds), env=env,
                     hint="profile a smaller shape, or run the ncu command by hand to see why")


def run_profile(cmd: list[str]) -> list[dict]:
    """Run ncu over the target; the target's per-rung lines (JSON)."""
    done = _ncu(cmd, PROFILE_SECONDS, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    output = done.stdout + done.stderr
    reason = ncu_failure(output, done.returncode)
    if reason:
        raise UserError(reason)
    return [json.loads(line.split(MARKER, 1)[1]) for line in done.stdout.splitlines() if line.startswith(MARKER)]


def export_csv(ncu: str, report: str) -> str:
    done = _ncu([ncu, "--import", report, "--csv", "--page", "raw", "--print-units", "base"], IMPORT_SECONDS)
    reason = ncu_failure(done.stdout + done.stderr, done.returncode)
    if reason:
        raise UserError(reason)
    return done.stdout


# --------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------

@dataclass
class KernelProfile:
    """One profiled kernel: its name and every metric of the raw page."""

    name: str
    metrics: dict = field(default_factory=dict)  # metric -> float, or str when not a number
    units: dict = field(default_factory=dict)

    def get(self, *names: str) -> float | None:
        """The first of these metrics that was measured, as a number."""
        for name in names:
            value = self.metrics.get(name)
            if isinstance(value, float):
                return value
        return None

    def matching(self, pattern: str) -> dict[str, float]:
        """Numeric metrics whose name matches the pattern (its first group, if any, as the key)."""
        regex = re.compile(pattern)
        out = {}
        for name, value in self.metrics.items():
            match = regex.fullmatch(name)
            if match and isinstance(value, float):
                out[match.group(1) if match.groups() else name] = value
        return out


_NUMBER = re.compile(r"-?[\d,]*\.?\d+(?:[eE][-+]?\d+)?")


def _value(text: str) -> float | str:
    text = text.strip()
    if _NUMBER.fullmatch(text):
        return float(text.replace(",", ""))
    return text


def parse_raw_csv(text: str) -> list[KernelProfile]:
    """``ncu --csv --page raw``: a header row, a units row, then one row per kernel."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError("no ncu raw CSV header (a line starting with \"ID\") found")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, body = rows[0], rows[1:]
    units = {}
    if body and not body[0][0].strip():
        units = {name: unit for name, unit in zip(header, body[0]) if unit}
        body = body[1:]
    kernels = []
    for row in body:
        if len(row) != len(header):
            continue
        cells = dict(zip(header, row))
        metrics = {name: _value(cell) for name, cell in cells.items()}
        kernels.append(KernelProfile(cells.get("Kernel Name", "?"), metrics, units))
    return kernels


# --------------------------------------------------------------------------
# the summary
# --------------------------------------------------------------------------

# (label, unit, metric names in order of preference): the first one measured is shown.
SUMMARY_METRICS = (
    ("duration", "ns", ("gpu__time_duration.sum",)),
    ("SM clock", "Hz", ("sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second")),
    ("theoretical occupancy", "%", ("sm__maximum_warps_per_active_cycle_pct",)),
    ("achieved occupancy", "%", ("sm__warps_active.avg.pct_of_peak_sustained_active",)),
    ("FMA pipe", "%", ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
                       "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active")),
    ("tensor pipe", "%", ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                          "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")),
    ("issue slots busy", "%", ("smsp__issue_active.avg.pct_of_peak_sustained_active",)),
    ("DRAM throughput", "%", ("dram__throughput.avg.pct_of_peak_sustained_elapsed",
                              "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")),
    ("L2 throughput", "%", ("lts__throughput.avg.pct_of_peak_sustained_elapsed",)),
    ("shared-memory throughput", "%", ("l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
                                       "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed")),
    ("DRAM bytes", "B", ("dram__bytes.sum",)),
    ("shared load bank conflicts", "", ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",)),
    ("shared store bank conflicts", "", ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",)),
    ("shared load wavefronts", "", ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",)),
)

# Warp-state statistics: cycles a warp spends in each state per issued instruction.
_STALL = r"smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio"
_STALL_SAMPLES = r"smsp__pcsamp_warps_issue_stalled_(\w+)"


def summary(kernel: KernelProfile) -> list[tuple[str, str, float]]:
    """(label, unit, value) of each summary metric that was measured."""
    out = []
    for label, unit, names in SUMMARY_METRICS:
        value = kernel.get(*names)
        if value is not None:
            out.append((label, unit, value))
    if kernel.get("dram__bytes.sum") is None and dram_bytes(kernel) is not None:
        out.append(("DRAM bytes", "B", dram_bytes(kernel)))
    return out


def dram_bytes(kernel: KernelProfile) -> float | None:
    total = kernel.get("dram__bytes.sum")
    if total is not None:
        return total
    read, write = kernel.get("dram__bytes_read.sum"), kernel.get("dram__bytes_write.sum")
    return None if read is None or write is None else read + write


def stall_reasons(kernel: KernelProfile, top: int = 8) -> list[tuple[str, float, float]]:
    """The top warp-stall reasons: (reason, cycles per issued instruction,
    share of all stall cycles). Falls back to PC-sampling counts (share only)."""
    stalls = kernel.matching(_STALL)
    stalls.pop("not_issued", None)  # the sum of the others, not a reason
    if not stalls:
        stalls = {k: v for k, v in kernel.matching(_STALL_SAMPLES).items() if not k.endswith("_not_issued")}
    total = sum(stalls.values())
    ranked = sorted(stalls.items(), key=lambda item: -item[1])[:top]
    return [(reason, value, value / total if total else 0.0) for reason, value in ranked]
