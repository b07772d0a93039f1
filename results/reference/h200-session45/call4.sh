#!/bin/bash
# session 45, call 4 (nvidia-h200): after GpuBackend.chosen (prepare's parameter choice in one place): the GPU
# tests of test_gpu.py and the kernel-file GPU tests, then compare --all.
set +e
source .device/env.sh
D=$OUT/c4; mkdir -p $D
/usr/bin/time -f "%e s" timeout 330 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py tests/test_userkernel_gpu.py tests/test_workers.py > $D/pytest-gpu.txt 2>&1
echo "pytest exit $?"; tail -3 $D/pytest-gpu.txt
/usr/bin/time -f "%e s" timeout 150 gemmbench compare --all --no-save > $D/compare-all.txt 2>&1
echo "compare exit $?"; grep -c PASS $D/compare-all.txt; grep -c FAIL $D/compare-all.txt; tail -1 $D/compare-all.txt
cd $OUT && tar czf c4.tgz c4 && rm -rf c4
