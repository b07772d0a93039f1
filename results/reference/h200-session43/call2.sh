#!/bin/bash
# session 43, call 2 (nvidia-h200): the final tree (element mapping in one place, vote-per-sum NaN recomputation,
# recompute_nan only declared in tf32_mma_sync.cuh): specials and fallback tests, compute-sanitizer with NaN/Inf
# planted, the fallback's finite-input cost against main; then, if all passed, rung 18's table remake with its
# stored command, stopped by SIGTERM before the call's limit (call 3 resumes it).
set +e
T0=$(date +%s)
source .device/env.sh
D=$OUT/c2; mkdir -p $D
S=.scratch/s43
( timeout 240 python3 -m pytest -m gpu -q tests/test_specials_gpu.py > $D/pytest-specials.txt 2>&1; echo "rc $?" >> $D/pytest-specials.txt ) &
( timeout 200 python3 -m pytest -m gpu -q tests/test_gpu.py -k fallback > $D/pytest-fallback.txt 2>&1; echo "rc $?" >> $D/pytest-fallback.txt ) &
for tool in memcheck racecheck synccheck; do
  ( timeout 230 compute-sanitizer --tool $tool python3 $S/san_specials.py 127 255 511 > $D/san-$tool-specials.txt 2>&1; echo "rc $?" >> $D/san-$tool-specials.txt ) &
done
for tool in memcheck racecheck; do
  ( timeout 230 compute-sanitizer --tool $tool python3 $S/san_fallback.py 127 255 511 > $D/san-$tool-fallback.txt 2>&1; echo "rc $?" >> $D/san-$tool-fallback.txt ) &
done
wait
echo "checks took $(( $(date +%s) - T0 )) s"
for f in $D/pytest-*.txt $D/san-*.txt; do echo "### $(basename $f)"; grep -v "^\s*$" $f | tail -4 | cut -c1-200; done
ok=1
for f in $D/pytest-*.txt $D/san-*.txt; do grep -q "^rc 0$" $f || ok=0; done
timeout 90 python3 $S/ab.py 18f 1024x1024x1024,2048x2048x2048,333x555x777 5 main=$S/main_tree/cuda_src new=. > $D/ab18f.txt 2>&1
grep -v "^\s*$" $D/ab18f.txt | cut -c1-200
if [ $ok = 1 ]; then
  CMD=$(python3 -c "import json;print(json.load(open('gemmbench/rungs/3xtf32_tma_ws_h200.json'))['command'])")
  LEFT=$(( 585 - ($(date +%s) - T0) ))
  echo "$CMD  (for $LEFT s)"
  timeout -s TERM $LEFT $CMD > $D/tune18-1.txt 2>&1
  echo "tune exit $?"
  tail -n 6 $D/tune18-1.txt | cut -c1-200
  ls -la .tune18; tar czf $OUT/tune18-1.tgz .tune18
else
  echo "checks failed: no remake"
fi
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
