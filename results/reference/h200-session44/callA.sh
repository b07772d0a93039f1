#!/bin/bash
# session 44, call A (nvidia-h200): rungs 17 and 18 over the shape set on main's code, then a new user's GPU path.
set +e
source .device/env.sh
D=$OUT/cA; mkdir -p $D
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $D/gpu.txt 2>&1
/usr/bin/time -f "%e s" timeout 230 gemmbench sizes --shapes benchmarks/shapes -i 17 --precision tf32 --no-tune-cache --results-dir $D/set17 > $D/set-17.txt 2>&1
echo "set17 exit $?"; tail -1 $D/set-17.txt
/usr/bin/time -f "%e s" timeout 190 gemmbench sizes --shapes benchmarks/shapes -i 18 --precision 3xtf32 --no-tune-cache --results-dir $D/set18 > $D/set-18.txt 2>&1
echo "set18 exit $?"; tail -1 $D/set-18.txt
( unset PYTHONPATH; WHEELS=".device/wheels .whl2" OUT=$D/fresh FRESH=/tmp/gemmbench-fresh PYTHON=python3.12 timeout 160 bash benchmarks/fresh_venv.sh ) > $D/fresh-log.txt 2>&1
echo "fresh exit $?"; tail -4 $D/fresh-log.txt
cd $OUT && tar czf cA.tgz cA && rm -rf cA
