"""Rung 28's per-shape choice table, from measurement: every candidate of
gemmbench.rungs.any_shape (configuration x split-K x PACK) timed at every
shape of the shape set with gemmbench's own timer, the fastest kept.

    python3 benchmarks/any_shape_table.py gemmbench/rungs/any_shape_h200.json benchmarks/shapes

The table ships with the rung: at a shape it holds, on a GPU with the same
SM count, select() takes the measured choice; elsewhere its model's. One line
per shape is printed: the best candidate, the model's pick and its time.
"""

import datetime
import json
import statistics
import sys
import time

from gemmbench.backend import Budget, Problem, Shape, SkipKernel
from gemmbench.gpu.backend import GpuBackend
from gemmbench.rungs import any_shape, get_spec
from gemmbench.shapeset import read_shapes

# a few samples of ~200 us of back-to-back calls each (gemmbench.gpu.timing): enough to rank candidates
BUDGET = Budget(warmup_seconds=0.005, min_samples=5, max_samples=7, max_seconds=0.05)


def median_time(gpu, spec, shape, params=None) -> float:
    samples, _ = gpu.measure(gpu.prepare(spec, shape, params).gemm, 1.0, 0.0, BUDGET)
    return statistics.median(samples)


def main(out: str, paths: list[str]) -> int:
    gpu = GpuBackend()
    rung = get_spec("gpu", 28)
    sms = gpu.info.sm_count
    shapes = sorted(dict.fromkeys(e.shape for e in read_shapes(paths).shapes), key=lambda s: s.M * s.N * s.K)
    choices, started = {}, time.time()
    for shape in shapes:
        M, N, K = shape.M, shape.N, shape.K
        gpu.load(Problem.random(shape, seed=0))
        timed = []
        for name, splits, pack in any_shape.candidates(M, N, K, sms):
            try:
                t = median_time(gpu, rung, shape, {**any_shape.CONFIGS[name], "SPLITS": splits, "PACK": pack})
            except SkipKernel:
                continue
            timed.append((t, name, splits, pack))
        t, name, splits, pack = min(timed)
        choices[f"{M}x{N}x{K}"] = {"config": name, "SPLITS": splits, "PACK": pack, "us": round(t * 1e6, 2),
                                   "candidates": len(timed)}
        picked = any_shape.model_choice(M, N, K, sms)
        t_model = next(x[0] for x in timed if x[1:] == picked)
        print(f"{shape}: best {name} SPLITS={splits} PACK={pack} {t * 1e6:.1f} us of {len(timed)}; "
              f"model {picked[0]} SPLITS={picked[1]} PACK={picked[2]} {t_model * 1e6:.1f} us "
              f"({t_model / t:.2f}x) [{time.time() - started:.0f} s]", flush=True)
    table = {"gpu": gpu.info.name, "sm_count": sms, "created": datetime.date.today().isoformat(),
             "command": "python3 benchmarks/any_shape_table.py " + " ".join([out, *paths]),
             "choices": choices}
    with open(out, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
