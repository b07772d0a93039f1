#!/bin/bash
# session 39, call 1: NaN and Inf through every GPU row
source .device/env.sh
D=$OUT/c1; mkdir -p $D
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $D/gpu.txt
timeout 500 python3 -m pytest -q -p no:cacheprovider tests/test_specials_gpu.py -rf --tb=short > $D/specials.txt 2>&1 || true
tail -5 $D/specials.txt
grep -E "^FAILED" $D/specials.txt | sed 's/ - .*//' | sort | uniq -c | head -80
tar czf $OUT/c1.tgz -C $OUT c1
