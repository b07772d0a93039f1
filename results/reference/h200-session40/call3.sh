#!/bin/bash
# session 40, call 3 (nvidia-h200-x2): GPU 0 the whole GPU suite on the landed tree (rungs 15/18 recompute NaN
# sums; rung 18's remade table). GPU 1: a new user's GPU path in a fresh venv; issue 18's 3xTF32 bars, main
# before (2395444, its table) and after, alternated, 3 runs each; rung 18 over the shape set.
set +e
source .device/env.sh
export D=$OUT/c3; mkdir -p $D
(
  export CUDA_VISIBLE_DEVICES=1
  s=$(date +%s)
  ( unset PYTHONPATH; WHEELS=".fresh/wheels .whl2" OUT=$D/fresh FRESH=/tmp/gemmbench-fresh timeout 200 bash benchmarks/fresh_venv.sh > $D/fresh-log.txt 2>&1 )
  echo "fresh venv exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
  for r in 1 2 3; do
    timeout 45 gemmbench sizes --sweep 4096,8192 -i 18 --precision 3xtf32 --no-tune-cache --results-dir .bars > $D/bars-new-run$r.txt 2>&1
    ( cd .scratch/s40/oldtree && PYTHONPATH=/tmp/site:$PWD timeout 45 python3 -m gemmbench sizes --sweep 4096,8192 -i 18 \
        --precision 3xtf32 --no-tune-cache --results-dir /tmp/bars-old > $D/bars-old-run$r.txt 2>&1 )
  done
  tar czf $D/bars-records.tgz .bars /tmp/bars-old 2>/dev/null
  s=$(date +%s)
  timeout 330 gemmbench sizes --shapes benchmarks/shapes -i 18 --precision 3xtf32 --no-tune-cache --results-dir .set18 > $D/set-18.txt 2>&1
  echo "set 18 exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
  gzip -c .set18/*.json > $D/set-18.json.gz 2>/dev/null
) &
export CUDA_VISIBLE_DEVICES=0
s=$(date +%s)
timeout 540 python3 -m pytest -m gpu -q -p no:cacheprovider tests/ > $D/pytest-gpu-all.txt 2>&1
echo "pytest -m gpu exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
wait
cat $D/summary.txt; tail -3 $D/pytest-gpu-all.txt; grep -E "^FAILED" $D/pytest-gpu-all.txt | head -20
tail -4 $D/fresh-log.txt
for f in $D/bars-*-run*.txt; do echo "$f: $(grep -E '^ *18 ' $f)"; done
tail -25 $D/set-18.txt | cut -c1-200
gzip $D/pytest-gpu-all.txt
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
