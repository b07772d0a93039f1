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
    python3 benchmarks/ground_truth.py --rungs 0:bf16,32 --shapes 2047x2047x2047,127x4096x4096
    python3 benchmarks/ground_truth.py --rungs 28 --shapes benchmarks/shapes/odd.csv

A rung is its id; ``0:P`` is the library row of precision P (``0`` alone is
cuBLAS SGEMM). ``--sizes`` gives cubes, ``--shapes`` MxNxK triples or shape
files and folders (as ``gemmbench sizes --shapes`` reads them).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys

from gemmbench.backend import Budget, Problem, Shape
from gemmbench.rungs import baselines, get_spec
from gemmbench.shapeset import read_shapes

WARMUP_CALLS = 10


def kernel_spec(token: str):
    """A rung by its id, or ``0:P``: the library row of precision class P."""
    rung, _, prec = token.strip().partition(":")
    spec = get_spec("gpu", int(rung))
    if not prec or prec == spec.precision:
        return spec
    library = baselines("gpu", (prec,)) if spec.is_baseline else []
    if not library:
        raise ValueError(f"no GPU rung {token!r}: a rung has one precision; 0:P takes fp32, tf32, bf16 or fp16")
    return library[0]


def parse_shapes(sizes: str | None, shapes: str | None) -> list[Shape]:
    """Cubes of ``--sizes``, then ``--shapes``: MxNxK triples, a bare N for N^3, or shape files and folders."""
    out = [Shape(n, n, n) for n in map(int, sizes.split(","))] if sizes else []
    for item in shapes.split(",") if shapes else []:
        item = item.strip()
        if re.fullmatch(r"\d+(x\d+x\d+)?", item):
            dims = [int(d) for d in item.split("x")]
            out.append(Shape(*(dims * 3 if len(dims) == 1 else dims)))
        else:
            out.extend(entry.shape for entry in read_shapes([item]).shapes)
    return list(dict.fromkeys(out))


def _gemm_for(token: str, shape: Shape):
    from gemmbench.gpu.backend import GpuBackend
    gpu = GpuBackend()
    gpu.load(Problem.random(shape, seed=0))
    return gpu, gpu.prepare(kernel_spec(token), shape).gemm


def launch(token: str, shape: Shape, calls: int) -> None:
    """The process ncu profiles: warm-up calls, then ``calls`` calls, nothing else."""
    gpu, gemm = _gemm_for(token, shape)
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


def ncu_kernels(token: str, shape: Shape, calls: int) -> list[tuple[str, float, float]]:
    """(kernel name, seconds, SM clock in Hz) of every kernel the launch process ran, in order."""
    cmd = ["ncu", "--clock-control", "none", "--cache-control", "none", "--metrics", f"{TIME},{CLOCK}",
           "--csv", "--print-units", "base", sys.executable, os.path.abspath(__file__),
           "--launch", token, str(shape), str(calls)]
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


def ncu_calls(kernels: list[tuple[str, float, float]], calls: int) -> dict:
    """ncu's launches of one process -> the last ``calls`` calls: the median call time, each kernel's median,
    and ncu's SM clock over them, weighted by time (= elapsed cycles / elapsed time). Launches left over
    at the start are one-time work before the first call; their names are kept as ``once``."""
    per_call = len(kernels) // (WARMUP_CALLS + calls)
    if per_call == 0:
        raise ValueError(f"ncu saw {len(kernels)} kernel launches for {WARMUP_CALLS + calls} calls")
    timed = kernels[-calls * per_call:]
    call_times = [sum(t for _, t, _ in timed[i:i + per_call]) for i in range(0, len(timed), per_call)]
    once = kernels[:len(kernels) - (WARMUP_CALLS + calls) * per_call]
    return {"per_call": per_call, "call_s": statistics.median(call_times), "once": [name for name, _, _ in once],
            "names": [name for name, _, _ in timed[:per_call]],
            "kernel_s": [statistics.median(t for j, (_, t, _) in enumerate(timed) if j % per_call == i)
                         for i in range(per_call)],
            "mhz": sum(t * hz for _, t, hz in timed) / sum(t for _, t, _ in timed) / 1e6}


def compare(token: str, shape: Shape, calls: int) -> dict:
    ncu = ncu_calls(ncu_kernels(token, shape, calls), calls)
    names, by_kernel, per_call, ncu_mhz = ncu["names"], ncu["kernel_s"], ncu["per_call"], ncu["mhz"]
    gpu, gemm = _gemm_for(token, shape)
    samples, notes = gpu.measure(gemm, 1.0, 0.0, Budget(0.1, 30, 300, 0.5))
    ours, truth = statistics.median(samples), ncu["call_s"]
    our_mhz = notes.get("sm_clock_mhz")
    scaled = ours * our_mhz / ncu_mhz if our_mhz else None
    spec = kernel_spec(token)
    return {"rung": spec.id, "precision": spec.precision, "name": spec.name, "shape": str(shape),
            "gemmbench_us": ours * 1e6, "ncu_us": truth * 1e6,
            "difference_pct": 100 * (ours - truth) / truth, "kernels_per_call": per_call,
            "kernels": [{"name": n, "ncu_us": t * 1e6} for n, t in zip(names, by_kernel)], "once": ncu["once"],
            "sm_clock": our_mhz, "nvml_sm_clock": notes.get("nvml_sm_clock_mhz"), "ncu_sm_clock": ncu_mhz,
            "gemmbench_at_ncu_clock_us": scaled * 1e6 if scaled else None,
            "clock_scaled_difference_pct": 100 * (scaled - truth) / truth if scaled else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rungs", default="0,10,11", help="Rung ids; 0:P is the library row of precision P.")
    parser.add_argument("--sizes", default=None, help="Cubes (default 128,256,512,4096 without --shapes).")
    parser.add_argument("--shapes", default=None, help="MxNxK triples, or shape files and folders.")
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--json", dest="json_path", default=None, help="Also write the rows here.")
    parser.add_argument("--launch", nargs=3, metavar=("RUNG", "SHAPE", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.launch:
        token, shape, calls = args.launch
        launch(token, parse_shapes(None, shape)[0], int(calls))
        return
    tokens = args.rungs.split(",")
    for token in tokens:
        kernel_spec(token)  # a bad id fails here, before any profiling
    shapes = parse_shapes(args.sizes or (None if args.shapes else "128,256,512,4096"), args.shapes)
    rows = [compare(t, s, args.calls) for t in tokens for s in shapes]
    print("| rung | shape | gemmbench (us) | ncu (us) | difference | gemmbench MHz (NVML) | ncu MHz "
          "| gemmbench at ncu's clock (us) | difference | kernels per call (ncu us each) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        kernels = "; ".join(f"{k['name'][:48]} {k['ncu_us']:.2f}" for k in row["kernels"])
        if row["once"]:
            kernels += f" (and once, before the first call: {', '.join(n[:48] for n in row['once'])})"
        scaled = (f"{row['gemmbench_at_ncu_clock_us']:.2f} | {row['clock_scaled_difference_pct']:+.1f}%"
                  if row["sm_clock"] else "- | -")
        print(f"| {row['rung']} {row['name']} | {row['shape']} | {row['gemmbench_us']:.2f} | {row['ncu_us']:.2f} | "
              f"{row['difference_pct']:+.1f}% | {row['sm_clock'] or 0:,.0f} ({row['nvml_sm_clock'] or 0:,.0f}) | "
              f"{row['ncu_sm_clock']:,.0f} | "
              f"{scaled} | {row['kernels_per_call']}: {kernels} |")
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
