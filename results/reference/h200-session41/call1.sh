#!/bin/bash
# session 41, call 1 (nvidia-h200-x2): the mma.sync fallbacks of rungs 15 and 18 now sum a NaN sum again in FP32.
# GPU 0: the specials tests (every row, fallbacks strict; new fallback warptiles). GPU 1: the fallback tests of
# test_gpu.py, then compute-sanitizer memcheck and racecheck on the fallbacks with specials planted.
set +e
source .device/env.sh
export D=$OUT/c1; mkdir -p $D
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader > $D/gpu.txt
(
  export CUDA_VISIBLE_DEVICES=1
  s=$(date +%s)
  timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider -k "fallback" tests/test_gpu.py > $D/pytest-fallback.txt 2>&1
  echo "pytest fallback exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 python3 .scratch/s41/san_fallback.py 127 255 511 > $D/san-memcheck.txt 2>&1
  echo "memcheck exit $?" >> $D/summary.txt
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 python3 .scratch/s41/san_fallback.py 127 255 511 > $D/san-racecheck.txt 2>&1
  echo "racecheck exit $?" >> $D/summary.txt
) &
export CUDA_VISIBLE_DEVICES=0
s=$(date +%s)
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_specials_gpu.py > $D/pytest-specials.txt 2>&1
echo "pytest specials exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
wait
cat $D/gpu.txt $D/summary.txt
tail -3 $D/pytest-specials.txt; grep -E "^FAILED" $D/pytest-specials.txt | head -20
tail -3 $D/pytest-fallback.txt; grep -E "^FAILED" $D/pytest-fallback.txt | head
grep -E "PASS|FAIL|ERROR SUMMARY" $D/san-memcheck.txt $D/san-racecheck.txt | cut -c1-200
