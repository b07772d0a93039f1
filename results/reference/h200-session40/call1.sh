#!/bin/bash
# session 40, call 1 (nvidia-h200): the NaN recomputation in rungs 15 and 18. The specials tests (every row, and
# rungs 15/18 at each build); rungs 18 and 15 before/after at their parameters; memcheck over the recompute path.
set +e
source .device/env.sh
D=$OUT/c1; mkdir -p $D
s=$(date +%s)
timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_specials_gpu.py > $D/pytest-specials.txt 2>&1 || \
  true
echo "pytest specials exit in $(( $(date +%s) - s )) s" >> $D/summary.txt
tail -3 $D/pytest-specials.txt; grep -E "^FAILED" $D/pytest-specials.txt | head -20
s=$(date +%s)
timeout 150 python3 .scratch/s40/old_new.py 4096x4096x4096,8192x8192x8192,2048x2048x2048,1024x1024x16384,4096x127x4096,512x512x512,127x4096x4096 7 18 > $D/r18-old-new.txt 2>&1
echo "r18 old/new exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
cat $D/r18-old-new.txt
s=$(date +%s)
timeout 60 python3 .scratch/s40/old_new.py 4096x4096x4096,1000x1000x1000 5 15 > $D/r15-old-new.txt 2>&1
echo "r15 old/new exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
cat $D/r15-old-new.txt
s=$(date +%s)
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 python3 .scratch/s40/san_specials.py 127 255 511 > $D/memcheck.txt 2>&1
echo "memcheck exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
tail -12 $D/memcheck.txt
cat $D/summary.txt
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
