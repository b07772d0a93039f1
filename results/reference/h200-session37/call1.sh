# session 37, call 1 (nvidia-h200-x2): the whole GPU suite on GPU 0; on GPU 1, compute-sanitizer over rung 17 with
# B3D (N a multiple of 32 but not of 128, and 1024^3), a new user's GPU path, then issue 18's 4096^3/8192^3 bars
# for rungs 17 and 18 in three runs
set +e
source .device/env.sh
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
(
  export CUDA_VISIBLE_DEVICES=1
  for tool in memcheck racecheck synccheck; do
    for shp in "127 320 511" "1024 1024 1024"; do
      s=$(date +%s)
      timeout 90 compute-sanitizer --tool $tool --print-limit 20 python3 benchmarks/sanitize.py $shp 17 > $OUT/san-$tool-${shp// /x}.txt 2>&1
      echo "$tool $shp exit $? in $(( $(date +%s) - s )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $OUT/san-$tool-${shp// /x}.txt | tail -1)" >> $OUT/san-summary.txt
    done
  done
  ( unset PYTHONPATH; WHEELS=".fresh/wheels .whl2" OUT=$OUT/fresh FRESH=/tmp/gemmbench-fresh timeout 200 bash benchmarks/fresh_venv.sh > $OUT/fresh-log.txt 2>&1; echo "fresh_venv.sh exit $?" >> $OUT/fresh-log.txt )
  for r in 1 2 3; do
    s=$(date +%s)
    timeout 150 gemmbench sizes --sweep 4096,8192 -i 17 -i 18 --precision tf32 --precision 3xtf32 --no-tune-cache --results-dir $OUT/tf32bars > $OUT/tf32-run$r.txt 2>&1
    echo "tf32 run $r exit $? in $(( $(date +%s) - s )) s" >> $OUT/san-summary.txt
  done
) &
s=$(date +%s)
CUDA_VISIBLE_DEVICES=0 timeout 540 python3 -m pytest -m gpu -q -p no:cacheprovider > $OUT/pytest-gpu-all.txt 2>&1; echo "pytest exit $? after $(( $(date +%s) - s )) s"
tail -4 $OUT/pytest-gpu-all.txt
grep -E "FAILED|ERROR" $OUT/pytest-gpu-all.txt | head
wait
cat $OUT/san-summary.txt
tail -8 $OUT/fresh-log.txt
for r in 1 2 3; do grep -E "^\S*\s*(0|17|18) |cuBLAS|rung|17 |18 " $OUT/tf32-run$r.txt | cut -c1-200 | head -20; done
gzip -f $OUT/pytest-gpu-all.txt
