#!/bin/bash
# session 45, call 1 (nvidia-h200): a new user's GPU path; sizes --resume for real (rung 28 over the set,
# stopped by SIGTERM, then resumed); the GPU tests of both --resume paths.
set +e
source .device/env.sh
D=$OUT/c1; mkdir -p $D
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $D/gpu.txt 2>&1
( unset PYTHONPATH; WHEELS=".device/wheels .whl2" OUT=$D/fresh FRESH=/tmp/gemmbench-fresh PYTHON=python3.12 timeout 170 bash benchmarks/fresh_venv.sh ) > $D/fresh-log.txt 2>&1
echo "fresh exit $?"; tail -4 $D/fresh-log.txt
S="gemmbench sizes --shapes benchmarks/shapes -i 28 --precision fp32 --no-tune-cache --results-dir $D/set28"
/usr/bin/time -f "%e s" timeout -s TERM 90 $S > $D/set28-part1.txt 2>&1
echo "part1 exit $?"; tail -3 $D/set28-part1.txt
first=$(ls $D/set28/sizes-*.json | head -1)
/usr/bin/time -f "%e s" timeout 260 $S --resume $first > $D/set28-part2.txt 2>&1
echo "part2 exit $?"; tail -3 $D/set28-part2.txt
timeout 150 python3 -m pytest -q -m gpu tests/test_gpu.py -k "resumed" > $D/pytest-resume.txt 2>&1
echo "pytest exit $?"; tail -2 $D/pytest-resume.txt
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
