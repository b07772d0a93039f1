"""The process compute-sanitizer watches: every hand-written rung verified once
at one shape, with no timing (the blocking kernel would stall a serialising
sanitizer) and a numpy reference (so only our kernels run on the GPU).

    compute-sanitizer --tool racecheck python3 benchmarks/sanitize.py 127 255 511 [12,13,14,15]

The optional fourth argument picks rungs (default: every hand-written rung).
"""

import sys

import numpy as np

from gemmbench.backend import Problem, Shape
from gemmbench.execute.local import expectations, verify_kernel
from gemmbench.gpu.backend import GpuBackend
from gemmbench.precision import precision, round_to
from gemmbench.rungs import GPU_LADDER


def main() -> int:
    shape = Shape(*map(int, sys.argv[1:4]))
    wanted = {int(i) for i in sys.argv[4].split(",")} if len(sys.argv) > 4 else None
    gpu = GpuBackend()
    problem = Problem.random(shape, seed=1)
    gpu.load(problem)
    passes = {}  # per element type of A and B: the reference of the inputs as the rung sees them

    def passes_for(element):
        if element not in passes:
            a, b = (round_to(x, element).astype(np.float64) for x in (problem.A, problem.B))
            passes[element] = expectations(problem, a @ b, np.abs(a) @ np.abs(b))
        return passes[element]
    failed = 0
    for spec in GPU_LADDER:
        if spec.is_baseline or (wanted is not None and spec.id not in wanted):
            continue
        v = verify_kernel(gpu, gpu.prepare(spec, shape).gemm, passes_for(precision(spec.precision).inputs),
                          spec.precision)
        failed += not v.passed
        print(f"rung {spec.id} {shape}: {'PASS' if v.passed else 'FAIL'} (max rel err {v.max_rel_error:.1e})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
