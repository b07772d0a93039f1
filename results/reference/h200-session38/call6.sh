# session 38, call 6 (nvidia-h200-x2): rung 18 splits the next K tile's fragments while the tensor cores work.
# Its table remade with the stored command on both GPUs; then on GPU 0 old against new (exp38, the old table's
# parameters), rung 18's GPU tests and compute-sanitizer; on GPU 1 issue 18's 4096^3/8192^3 bars in three runs.
set +e
source .device/env.sh
D=$OUT/c6; mkdir -p $D
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
s=$(date +%s)
timeout 330 gemmbench tune -i 18 --shapes benchmarks/shapes --table gemmbench/rungs/3xtf32_tma_ws_h200.json --overwrite \
  --no-tune-cache --budget 0.03 --warmup 0.01 --gpus all --results-dir .tune18 > $D/tune18.txt 2>&1
echo "tune exit $? in $(( $(date +%s) - s )) s"; tail -5 $D/tune18.txt
cp gemmbench/rungs/3xtf32_tma_ws_h200.json $D/
tar czf $D/tune18-record.tgz .tune18 2>/dev/null
(
  export CUDA_VISIBLE_DEVICES=1
  for r in 1 2 3; do
    s=$(date +%s)
    timeout 150 gemmbench sizes --sweep 4096,8192 -i 17 -i 18 --precision tf32 --precision 3xtf32 --no-tune-cache > $D/bars-run$r.txt 2>&1
    echo "bars run $r exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
  done
) &
export CUDA_VISIBLE_DEVICES=0
P="BK=32,BM=128,BN=128,FLUSH=2,GROUP_M=8,PERSISTENT=1,SPLITS=1,STAGES=4,SWAP_AB=0"
(cd .scratch/s38 && timeout 120 python3 exp38.py 4096x4096x4096,8192x8192x8192,2048x2048x2048 5 3xtf32 "old:18:XP_CVT=0,$P;new:18:$P;table:18" > $D/old-new.txt 2>&1)
s=$(date +%s)
timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -k "rung_18 or rung18 or 3xtf32 or split_tf32 or 18_" > $D/pytest-18.txt 2>&1
echo "pytest exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
for tool in memcheck racecheck synccheck; do
  for shp in "127 320 511" "1024 1024 1024"; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 20 python3 benchmarks/sanitize.py $shp 18 > $D/san-$tool-${shp// /x}.txt 2>&1
    echo "$tool $shp exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $D/san-$tool-${shp// /x}.txt | tail -1)" >> $D/summary.txt
  done
done
wait
cat $D/summary.txt; tail -3 $D/pytest-18.txt; grep -E "^==|   (old|new|table|cublas)" $D/old-new.txt | cut -c1-120
for r in 1 2 3; do grep -E " (17|18) |cuBLAS" $D/bars-run$r.txt | cut -c1-160 | head -12; done
cd $OUT && tar czf c6.tgz c6 && rm -rf c6
