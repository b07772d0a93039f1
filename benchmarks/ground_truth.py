"""Does gemmbench's timing agree with Nsight Compute? (GPU machine, ncu on PATH)

For each rung and size this measures the median time per call twice:
  * gemmbench: the GPU backend's event timing behind the blocking kernel;
  * ncu: ``gpu__time_duration.sum`` of every kernel a call launches, with
    ``--clock-control none --cache-control none`` (ncu's defaults lock the
    clocks to base and flush caches, which is not what a warm benchmark sees).
It also lists the kernels each call launches, which is how a library call that
costs more than its main kernel shows itself (cuBLAS split-K, for one).

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


def ncu_kernels(rung: int, size: int, calls: int) -> list[tuple[str, float]]:
    """(kernel name, seconds) of every kernel the launch process ran, in order."""
    cmd = ["ncu", "--clock-control", "none", "--cache-control", "none", "--metrics", "gpu__time_duration.sum",
           "--csv", "--print-units", "base", sys.executable, os.path.abspath(__file__),
           "--launch", str(rung), str(size), str(calls)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = csv.DictReader(io.StringIO("\n".join(lines[start:])))
    scale = {"ns": 1e-9, "nsecond": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3}
    return [(r["Kernel Name"], float(r["Metric Value"].replace(",", "")) * scale[r["Metric Unit"]])
            for r in rows if r["Metric Name"] == "gpu__time_duration.sum"]


def compare(rung: int, size: int, calls: int) -> dict:
    kernels = ncu_kernels(rung, size, calls)
    per_call = len(kernels) // (WARMUP_CALLS + calls)
    timed = kernels[-calls * per_call:]
    call_times = [sum(t for _, t in timed[i:i + per_call]) for i in range(0, len(timed), per_call)]
    names = [name for name, _ in timed[:per_call]]
    by_kernel = [statistics.median(t for j, (_, t) in enumerate(timed) if j % per_call == i)
                 for i in range(per_call)]
    gpu, gemm = _gemm_for(rung, size)
    samples, notes = gpu.measure(gemm, 1.0, 0.0, Budget(0.1, 30, 300, 0.5))
    ours, truth = statistics.median(samples), statistics.median(call_times)
    return {"rung": rung, "size": size, "gemmbench_us": ours * 1e6, "ncu_us": truth * 1e6,
            "difference_pct": 100 * (ours - truth) / truth, "kernels_per_call": per_call,
            "kernels": [{"name": n, "ncu_us": t * 1e6} for n, t in zip(names, by_kernel)],
            "sm_clock": notes.get("sm_clock_mhz")}


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
    print("| rung | size | gemmbench (us) | ncu (us) | difference | kernels per call (ncu us each) |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        kernels = "; ".join(f"{k['name'][:48]} {k['ncu_us']:.2f}" for k in row["kernels"])
        print(f"| {row['rung']} | {row['size']}^3 | {row['gemmbench_us']:.2f} | {row['ncu_us']:.2f} | "
              f"{row['difference_pct']:+.1f}% | {row['kernels_per_call']}: {kernels} |")
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
