"""The process Nsight Compute profiles: ``python -m gemmbench.inspect.target``.

For each rung given: prepare it as ``run`` does, warm it up with a few calls,
then make one call between cuProfilerStart and cuProfilerStop. ncu runs with
``--profile-from-start off``, so it profiles exactly that call (every kernel
the call launches: split-K's reduction and 3xTF32's split too) and nothing of
the warm-up. One line per rung on stdout: ``gemmbench-target {json}``.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys

from ..backend import Shape, SkipKernel
from ..errors import UserError
from ..kernelfile import load, parse_overrides
from ..rungs import get_spec
from .gpu import load_shape, open_backend

MARKER = "gemmbench-target"
WARMUP_CALLS = 3


def _profiler(call: str) -> None:
    result = getattr(ctypes.CDLL("libcuda.so.1"), call)()
    if result != 0:
        raise RuntimeError(f"{call} returned CUDA error {result}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gemmbench.inspect.target")
    parser.add_argument("-i", "--kernel", type=int, action="append", default=[])
    parser.add_argument("--kernel-file", default=None)
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("-m", type=int, required=True)
    parser.add_argument("-n", type=int, required=True)
    parser.add_argument("-k", type=int, required=True)
    parser.add_argument("--gpu", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        shape = Shape(args.m, args.n, args.k)
        backend = open_backend("profile", args.gpu)
        load_shape(backend, shape)
        specs = [get_spec("gpu", i) for i in args.kernel]
        if args.kernel_file:
            specs.append(load(args.kernel_file, 0, parse_overrides(args.param)).spec)
    except (UserError, KeyError) as exc:
        print(f"gemmbench: error: {exc.args[0]}", file=sys.stderr)
        return 2
    for spec in specs:
        try:
            prepared = backend.prepare(spec, shape)  # cuBLAS too: its kernels can be profiled
        except SkipKernel as exc:
            print(MARKER, json.dumps({"id": spec.id, "name": spec.name, "skipped": str(exc)}), flush=True)
            continue
        for _ in range(WARMUP_CALLS):
            prepared.gemm(1.0, 0.0)
        backend.stream.synchronize()
        _profiler("cuProfilerStart")
        prepared.gemm(1.0, 0.0)
        backend.stream.synchronize()
        _profiler("cuProfilerStop")
        print(MARKER, json.dumps({"id": spec.id, "name": spec.name, "params": prepared.params,
                                  "params_source": prepared.params_source, "entry": prepared.spec.entry,
                                  "precision": spec.precision, "flops": shape.flops,
                                  "gpu": backend.info.name, "peak_fp32_flops": backend.info.peak_fp32_flops}),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
