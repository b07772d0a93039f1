#!/bin/bash
# session 39, call 2 (nvidia-h200-x2): the 3xTF32 split's small half by tf32_small (Inf stays Inf). Rung 18's
# table remade with its stored command on both GPUs; then on GPU 0 the 3xTF32 GPU tests and the specials test,
# on GPU 1 old (cvt.rna small half, scratch) against new at the old table's parameters, 5 rounds.
set +e
source .device/env.sh
D=$OUT/c2; mkdir -p $D
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader > $D/gpu.txt
s=$(date +%s)
timeout 430 gemmbench tune -i 18 --shapes benchmarks/shapes --table gemmbench/rungs/3xtf32_tma_ws_h200.json --overwrite \
  --no-tune-cache --budget 0.03 --warmup 0.01 --gpus all --results-dir .tune18 > $D/tune18.txt 2>&1
echo "tune exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
cp gemmbench/rungs/3xtf32_tma_ws_h200.json $D/
tar czf $OUT/tune18-record.tgz .tune18 2>/dev/null
(
  export CUDA_VISIBLE_DEVICES=1
  P="BK=32,BM=128,BN=128,FLUSH=2,GROUP_M=8,PERSISTENT=1,SPLITS=1,STAGES=4,SWAP_AB=0"
  cd .scratch/s39 && timeout 130 python3 exp38.py 4096x4096x4096,8192x8192x8192,2048x2048x2048 5 3xtf32 "old:18:XP_CVT=3,$P;new:18:$P" > $D/old-new.txt 2>&1
) &
export CUDA_VISIBLE_DEVICES=0
s=$(date +%s)
timeout 130 python3 -m pytest -m gpu -q -p no:cacheprovider -k "rung_18 or rung18 or 3xtf32 or split_tf32 or 18_ or rung15 or rung_15" \
  tests/ > $D/pytest-3xtf32.txt 2>&1
echo "pytest exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
wait
cat $D/summary.txt; tail -3 $D/tune18.txt; tail -3 $D/pytest-3xtf32.txt; grep -E "^==|   (old|new|cublas)" $D/old-new.txt | cut -c1-150
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
