#!/usr/bin/env bash
# The runs behind the README's H200 figures; everything lands in $OUT.
set -o pipefail
out=${OUT:-/tmp/gemmbench-out}; mkdir -p "$out"
{
python3 -m pytest -m gpu -q tests/test_gpu.py 2>&1 | tail -2
gemmbench run -i 10 -m 4096 -n 4096 -k 4096 --format markdown --no-save
gemmbench compare --all --format markdown --results-dir "$out"
gemmbench compare --all --no-save -v 2>&1 | grep "^\[" | head -3
gemmbench sizes --sweep 128..4096 --format markdown --plot "$out/sizes.png" --results-dir "$out"
python3 benchmarks/ground_truth.py --rungs 0,10,11 --sizes 128,256,512,4096 --json "$out/ground_truth.json"
} 2>&1 | tee "$out/figures.log"
