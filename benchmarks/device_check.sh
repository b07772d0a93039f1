#!/usr/bin/env bash
# One device call: GPU tests, compare --all twice (the second must start
# timing at once: nothing recompiles), ncu ground truth and a size sweep.
# Logs and records go to $OUT.
set -o pipefail
out=${OUT:-/tmp/gemmbench-out}; mkdir -p "$out"
timeout 200 python3 -m pytest -m gpu -q -rf --tb=short tests/test_gpu.py 2>&1 | tee "$out/pytest_gpu.log" | tail -15
gemmbench compare --all --results-dir "$out" 2>&1 | tee "$out/compare.log"
gemmbench compare --all --no-save -v 2>&1 | grep "^\[" | head -4
timeout 200 python3 benchmarks/ground_truth.py --rungs ${GT_RUNGS:-0,10,11} --sizes 128,256,512,4096 --json "$out/ground_truth.json" 2>&1 | tee "$out/ground_truth.log"
[ -n "$SWEEP" ] && gemmbench sizes --sweep 128..4096 --results-dir "$out" --plot "$out/sizes.png" 2>&1 | tee "$out/sizes.log"
exit 0
