"""Does gemmbench's timing agree with Nsight Compute? (GPU machine, ncu on PATH)

For each rung and size this measures the median time per call twice:
  * gemmbench: the GPU backend's event timing behind the blocking kernel;
  * ncu: ``gpu__time_duration.sum`` of every kernel a call launches, with
    ``--clock-control none --cache-control none`` (ncu's defaults lock the
    clocks to base and flush caches, which is not what a warm benchmark sees).
It also lists the kernels each call launches, which is how a library call that
costs more than its main kernel shows itself (cuBLAS split-K, for one).

Under a power cap the two need not run at one clock: ncu replays kernels one
at a time, with the GPU idle in between, while gemmbench's samples are
back-to-back calls. So each side's SM clock is recorded too (ncu's
``smsp__cycles_elapsed.avg.per_second`` per kernel; for gemmbench the SMs'
cycle counters over its samples, and NVML's mean reading beside it), and gemmbench's time is also given scaled to ncu's
clock (time x its clock / ncu's clock): for a kernel bound by the SM clock,
that is the time it would have taken at the clock ncu measured.

    python3 benchmarks/ground_truth.py --rungs 0,10,11 --sizes 128,256,512,4096
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys

from gemmbench.backend import Budget, Problem, Shape
from gemmbench.rungs import get_spec

WARMUP_CALLS = 10


def _gemm_for(rung: int, size: int):
    from gemmbench.gpu.backend import GpuBackend
    gpu = GpuBackend()
    shape = Shape(size, size, size)
    gpu.load(Problem.random(shape, seed=0))
    return gpu, gpu.prepare(get_spec("gpu", rung), shape).gemm


def launch(rung: int, size: int, calls: int) -> None:
    """The process ncu profiles: warm-up calls, then ``calls`` calls, nothing else."""
    gpu, gemm = _gemm_for(rung, size)
    for _ in range(WARMUP_CALLS + calls):
        gemm(1.0, 0.0)
    gpu.stream.synchronize()


TIME, CLOCK = "gpu__time_duration.sum", "smsp__cycles_elapsed.avg.per_second"
_SCALES = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "s": 1.0,
           "second": 1.0, "hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9, "cycle": 1.0}


def unit_scale(unit: str) -> float:
    """ncu's unit -> factor to SI (seconds, Hz): 'nsecond', 'cycle/nsecond', 'Ghz', ..."""
    parts = unit.strip().lower().split("/")
    if len(parts) == 2:
        return unit_scale(parts[0]) / unit_scale(parts[1])
    if parts[0] not in _SCALES:
        raise ValueError(f"unknown ncu unit {unit!r}")
    return _SCALES[parts[0]]


def ncu_kernels(rung: int, size: int, calls: int) -> list[tuple[str, float, float]]:
    """(kernel name, seconds, SM clock in Hz) of every kernel the launch process ran, in order."""
    cmd = ["ncu", "--clock-control", "none", "--cache-control", "none", "--metrics", f"{TIME},{CLOCK}",
           "--csv", "--print-units", "base", sys.executable, os.path.abspath(__file__),
           "--launch", str(rung), str(size), str(calls)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return parse_ncu_csv(done.stdout)


def parse_ncu_csv(text: str) -> list[tuple[str, float, float]]:
    """ncu's ``--csv --print-units base`` output -> (kernel name, seconds, SM Hz) per launch, in order."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    kernels: dict[str, dict] = {}  # by ncu's launch ID, in launch order
    for r in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        value = float(r["Metric Value"].replace(",", "")) * unit_scale(r["Metric Unit"])
        kernels.setdefault(r["ID"], {"name": r["Kernel Name"]})[r["Metric Name"]] = value
    return [(k["name"], k[TIME], k[CLOCK]) for k in kernels.values()]


def compare(rung: int, size: int, calls: int) -> dict:
    kernels = ncu_kernels(rung, size, calls)
    per_call = len(kernels) // (WARMUP_CALLS + calls)
    timed = kernels[-calls * per_call:]
    call_times = [sum(t for _, t, _ in timed[i:i + per_call]) for i in range(0, len(timed), per_call)]
    names = [name for name, _, _ in timed[:per_call]]
    by_kernel = [statistics.median(t for j, (_, t, _) in enumerate(timed) if j % per_call == i)
                 for i in range(per_call)]
    # ncu's clock over the timed calls, weighted by time (= elapsed cycles / elapsed time)
    ncu_mhz = sum(t * hz for _, t, hz in timed) / sum(t for _, t, _ in timed) / 1e6
    gpu, gemm = _gemm_for(rung, size)
    samples, notes = gpu.measure(gemm, 1.0, 0.0, Budget(0.1, 30, 300, 0.5))
    ours, truth = statistics.median(samples), statistics.median(call_times)
    our_mhz = notes.get("sm_clock_mhz")
    scaled = ours * our_mhz / ncu_mhz if our_mhz else None
    return {"rung": rung, "size": size, "gemmbench_us": ours * 1e6, "ncu_us": truth * 1e6,
            "difference_pct": 100 * (ours - truth) / truth, "kernels_per_call": per_call,
            "kernels": [{"name": n, "ncu_us": t * 1e6} for n, t in zip(names, by_kernel)],
            "sm_clock": our_mhz, "nvml_sm_clock": notes.get("nvml_sm_clock_mhz"), "ncu_sm_clock": ncu_mhz,
            "gemmbench_at_ncu_clock_us": scaled * 1e6 if scaled else None,
            "clock_scaled_difference_pct": 100 * (scaled - truth) / truth if scaled else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rungs", default="0,10,11")
    parser.add_argument("--sizes", default="128,256,512,4096")
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--json", dest="json_path", default=None, help="Also write the rows here.")
    parser.add_argument("--launch", nargs=3, type=int, metavar=("RUNG", "SIZE", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.launch:
        launch(*args.launch)
        return
    rows = [compare(r, s, args.calls) for r in map(int, args.rungs.split(","))
            for s in map(int, args.sizes.split(","))]
    print("| rung | size | gemmbench (us) | ncu (us) | difference | gemmbench MHz (NVML) | ncu MHz "
          "| gemmbench at ncu's clock (us) | difference | kernels per call (ncu us each) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        kernels = "; ".join(f"{k['name'][:48]} {k['ncu_us']:.2f}" for k in row["kernels"])
        scaled = (f"{row['gemmbench_at_ncu_clock_us']:.2f} | {row['clock_scaled_difference_pct']:+.1f}%"
                  if row["sm_clock"] else "- | -")
        print(f"| {row['rung']} | {row['size']}^3 | {row['gemmbench_us']:.2f} | {row['ncu_us']:.2f} | "
              f"{row['difference_pct']:+.1f}% | {row['sm_clock'] or 0:,.0f} ({row['nvml_sm_clock'] or 0:,.0f}) | "
              f"{row['ncu_sm_clock']:,.0f} | "
              f"{scaled} | {row['kernels_per_call']}: {kernels} |")
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
