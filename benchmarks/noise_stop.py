"""Stopping on time or on noise: what each costs and how repeatable it is.

Runs ``gemmbench compare --all`` N times stopping on time (``--budget``, or the
device's default budget) and N times stopping on the median's noise
(``--max-noise``), alternating the two so that a machine drifting during the
measurement weighs on both alike, each into a temporary results directory.
Before them one quick untimed run fills the compile caches, so the first
timed run does not pay for compiling. Then it prints a markdown table, one
line per mode:

* wall seconds of each run (verification and set-up included: the same work
  in both modes), and the seconds of samples per run (each row's samples
  times its calls per sample, summed over rows);
* run-to-run change: per row (kernel, precision, shape, threads), the largest
  of its N medians over the smallest; then the median and the largest of
  that over the rows that passed in every run;
* why the rows stopped (counts over all N runs) and how many were flagged
  unsettled.

    python3 benchmarks/noise_stop.py --device gpu
    python3 benchmarks/noise_stop.py --device cpu --runs 3 --max-noise 0.5%
    python3 benchmarks/noise_stop.py --device cpu -- -m 512 -n 512 -k 512   # more compare options after --
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gemmbench.records.store import load, row_identity
from gemmbench.timing import STOP_REASONS


def compare(device: str, results_dir: Path, stopping: list[str], extra: list[str]) -> float:
    """One ``compare --all`` run into results_dir; its wall seconds. A failed
    kernel (exit 1) still leaves a record; anything else ends the script."""
    command = [sys.executable, "-m", "gemmbench", "compare", "--all", "--device", device,
               "--results-dir", str(results_dir), *stopping, *extra]
    start = time.monotonic()
    done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    if done.returncode not in (0, 1):
        sys.exit(f"noise_stop: {' '.join(command)} exited {done.returncode}")
    return wall


def summarize(records: list, walls: list[float]) -> dict:
    """The figures of one mode's runs (records: their loaded RunRecords)."""
    medians: dict[tuple, list[float]] = {}
    stopped = dict.fromkeys(STOP_REASONS, 0)
    unsettled = 0
    sampled = []
    for record in records:
        seconds = 0.0
        for r in record.results:
            if r.status != "pass" or r.stats is None:
                continue
            medians.setdefault(row_identity(r), []).append(r.stats.median)
            seconds += sum(r.samples) * r.notes.get("calls_per_sample", 1)
            if r.notes.get("stopped") in stopped:
                stopped[r.notes["stopped"]] += 1
            unsettled += "unsettled" in r.flags
        sampled.append(seconds)
    ratios = [max(m) / min(m) for m in medians.values() if len(m) == len(records)]
    return {"walls": walls, "sampled": sampled, "rows": len(ratios),
            "median_ratio": statistics.median(ratios) if ratios else float("nan"),
            "max_ratio": max(ratios, default=float("nan")), "stopped": stopped, "unsettled": unsettled}


def table(modes: dict[str, dict], runs: int) -> str:
    lines = ["| stopping | wall s per run | samples s per run | rows | run-to-run max/min: median | max "
             f"| stopped (over {runs} runs) | unsettled |",
             "|---|---|---|---|---|---|---|---|"]
    for name, m in modes.items():
        stops = ", ".join(f"{reason} {n}" for reason, n in m["stopped"].items() if n) or "-"
        lines.append(f"| {name} | {', '.join(f'{w:.1f}' for w in m['walls'])} "
                     f"| {', '.join(f'{s:.3g}' for s in m['sampled'])} | {m['rows']} "
                     f"| {m['median_ratio']:.4f} | {m['max_ratio']:.4f} | {stops} | {m['unsettled']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--runs", type=int, default=3, help="runs per mode (default 3)")
    parser.add_argument("--budget", default=None, help="seconds of samples per row when stopping on time "
                                                       "(default: the device's)")
    parser.add_argument("--max-noise", default="0.5%", help="the noise target (default 0.5%%)")
    parser.add_argument("--min-time", default=None, help="with the noise target (default: the device's)")
    parser.add_argument("--noise-timeout", default=None, help="with the noise target (default: the device's)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the runs' records in this new folder "
                                                                 "(default: a temporary one)")
    parser.add_argument("extra", nargs="*", help="more options for every compare run, after --")
    args = parser.parse_args()
    if args.runs < 2:
        parser.error("--runs: give at least 2 (the change is between runs)")

    on_time = ["--budget", args.budget] if args.budget else []
    on_noise = ["--max-noise", args.max_noise]
    on_noise += ["--min-time", args.min_time] if args.min_time else []
    on_noise += ["--noise-timeout", args.noise_timeout] if args.noise_timeout else []
    names = {"time": f"time (--budget {args.budget or 'default'})", "noise": f"noise (--max-noise {args.max_noise})"}
    stopping = {"time": on_time, "noise": on_noise}

    with tempfile.TemporaryDirectory(prefix="noise-stop-") as tmp:
        root = args.keep or Path(tmp)
        print("filling the compile caches (untimed) ...", file=sys.stderr)
        compare(args.device, root / "fill", ["--warmup", "0", "--budget", "0", "--min-samples", "1",
                                             "--max-samples", "1", "--no-save"], args.extra)
        walls = {mode: [] for mode in stopping}
        for run in range(args.runs):
            for mode in stopping:  # alternated: drift weighs on both modes alike
                print(f"run {run + 1}/{args.runs}, stopping on {mode} ...", file=sys.stderr)
                walls[mode].append(compare(args.device, root / f"{mode}-{run}", stopping[mode], args.extra))
                print(f"  {walls[mode][-1]:.1f} s", file=sys.stderr)
        modes = {}
        for mode in stopping:
            records = [load(next((root / f"{mode}-{run}").glob("*.json"))).record for run in range(args.runs)]
            modes[names[mode]] = summarize(records, walls[mode])
    print(f"`gemmbench compare --all --device {args.device}{' ' + ' '.join(args.extra) if args.extra else ''}`, "
          f"{args.runs} runs per mode, alternated:\n")
    print(table(modes, args.runs))


if __name__ == "__main__":
    main()
