# session 36, call 2 (nvidia-h200-x2): the remake of rung 17's table resumed from call 1's record (stopped by
# SIGTERM after 2378 of 2786 kernels), then rung 17 over the whole shape set on the new table
source .device/env.sh
set +e
mkdir -p .tune17 && cp .scratch/s36/tune17/*.json .tune17/
s=$(date +%s)
timeout -s TERM 250 gemmbench tune -i 17 --shapes benchmarks/shapes --table gemmbench/rungs/tf32_tma_ws_h200.json --overwrite --no-tune-cache --budget 0.03 --warmup 0.01 --gpus all --results-dir .tune17 --resume .tune17/tune-gpu-20261130-122129.json > $OUT/tune17-2.txt 2>&1
echo "resumed tune exit $? after $(( $(date +%s) - s )) s"
grep -E "resum|carried|wrote|candidates ran" $OUT/tune17-2.txt | cut -c1-220
cp gemmbench/rungs/tf32_tma_ws_h200.json $OUT/
ls -la .tune17; cp $(ls -t .tune17/tune-*.json | head -1) $OUT/
s=$(date +%s)
timeout 300 gemmbench sizes --shapes benchmarks/shapes -i 17 --precision tf32 --no-tune-cache --results-dir $OUT/set > $OUT/set-17.txt 2>&1
echo "set exit $? after $(( $(date +%s) - s )) s"
tail -4 $OUT/set-17.txt | cut -c1-220
