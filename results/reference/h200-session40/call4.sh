#!/bin/bash
# session 40, call 4 (nvidia-h200): compute-sanitizer over rungs 15 and 18 with the NaN recomputation: racecheck
# and synccheck with NaN and Inf planted at 127 x 255 x 511 (the recompute path runs), memcheck at 1024³.
set +e
source .device/env.sh
D=$OUT/c4; mkdir -p $D
for tool in racecheck synccheck; do
  s=$(date +%s)
  timeout 150 compute-sanitizer --tool $tool --print-limit 5 python3 .scratch/s40/san_specials.py 127 255 511 > $D/san-$tool-127x255x511.txt 2>&1
  echo "$tool exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
done
s=$(date +%s)
timeout 150 compute-sanitizer --tool memcheck --print-limit 5 python3 benchmarks/sanitize.py 1024 1024 1024 15,18 > $D/san-memcheck-1024.txt 2>&1
echo "memcheck 1024 exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
cat $D/summary.txt; for f in $D/san-*; do echo "== $f"; grep -E "PASS|FAIL|SUMMARY|hazard|error" $f | tail -8; done
cd $OUT && tar czf c4.tgz c4 && rm -rf c4
