"""Where does per-call time beyond the kernel go? Times one rung with event
pairs around batches of r back-to-back calls (r = 1, 4, 16, 64), all queued
behind the blocking kernel. If the excess over ncu falls as r grows, it is the
event records; if it stays, it is the GPU's gap between consecutive launches.

    python3 benchmarks/launch_gap.py --rungs 0,10 --size 128
"""

import argparse
import statistics

from gemmbench.backend import Problem, Shape
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import get_spec


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rungs", default="0,10")
    parser.add_argument("--size", type=int, default=128)
    args = parser.parse_args()
    gpu = GpuBackend()
    shape = Shape(args.size, args.size, args.size)
    gpu.load(Problem.random(shape, seed=0))
    for rung in map(int, args.rungs.split(",")):
        gemm = gpu.prepare(get_spec("gpu", rung), shape).gemm
        for _ in range(50):
            gemm(1.0, 0.0)
        row = []
        for repeats in (1, 4, 16, 64):
            samples = []
            for _ in range(5):
                samples += gpu.timer._take(gemm, 1.0, 0.0, max(1, 256 // repeats), repeats, False)
            row.append(f"r={repeats}: {statistics.median(samples) * 1e6:.2f} us")
        print(f"rung {rung} {args.size}^3 per call: " + ", ".join(row))


if __name__ == "__main__":
    main()
