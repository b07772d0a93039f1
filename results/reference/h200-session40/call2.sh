#!/bin/bash
# session 40, call 2 (nvidia-h200-x2): rung 18's table remade with its stored command on both GPUs (the NaN
# recomputation changed its source); meanwhile SASS of old and new. Then GPU 0: the 3xTF32 GPU tests; GPU 1:
# issue 18's 3xTF32 bars at 4096³ and 8192³, three runs.
set +e
source .device/env.sh
export D=$OUT/c2; mkdir -p $D
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader > $D/gpu.txt
( timeout 300 python3 .scratch/s40/sass.py > $D/sass.txt 2>&1 ) &
s=$(date +%s)
timeout 440 gemmbench tune -i 18 --shapes benchmarks/shapes --table gemmbench/rungs/3xtf32_tma_ws_h200.json --overwrite \
  --no-tune-cache --budget 0.03 --warmup 0.01 --gpus all --results-dir .tune18 > $D/tune18.txt 2>&1
echo "tune exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
wait
cp gemmbench/rungs/3xtf32_tma_ws_h200.json $D/
tar czf $D/tune18-record.tgz .tune18 2>/dev/null
(
  export CUDA_VISIBLE_DEVICES=1
  for r in 1 2 3; do
    timeout 45 gemmbench sizes --sweep 4096,8192 -i 18 --precision 3xtf32 --no-tune-cache --results-dir .bars > $D/bars-run$r.txt 2>&1
  done
  tar czf $D/bars-records.tgz .bars 2>/dev/null
) &
export CUDA_VISIBLE_DEVICES=0
s=$(date +%s)
timeout 140 python3 -m pytest -m gpu -q -p no:cacheprovider -k "rung_18 or rung18 or 3xtf32 or split_tf32 or 18_ or rung15 or rung_15" \
  tests/ > $D/pytest-3xtf32.txt 2>&1
echo "pytest exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
wait
cat $D/summary.txt $D/sass.txt; tail -3 $D/tune18.txt; tail -3 $D/pytest-3xtf32.txt; grep -E "^FAILED" $D/pytest-3xtf32.txt | head
for r in 1 2 3; do grep -E "cuBLAS|3xTF32|rung|18" $D/bars-run$r.txt | head -12; done
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
