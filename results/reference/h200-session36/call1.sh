# session 36, call 1 (nvidia-h200-x2): rung 17 with B3D following N (each K tile of B in one 3-D TMA load)
# verified at odd shapes, then its table remade on both GPUs (a record kept, so a stopped run resumes)
source .device/env.sh
set +e
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
# correctness where N is and is not a multiple of 32, M and K odd: the rule (B3D by N), B3D forced off, K split,
# 192-row tiles; both verification passes
timeout 150 python3 .scratch/s35/exp.py 333x544x777,1001x1024x999,7x64x5,129x96x4097,4095x4096x300,100x4000x33,65x8192x2050,333x555x777 1 tf32 "rule:17;nob3d:17:B3D=0;k3:17:SPLITS=3;b192:17:BM=192,BN=128;b64:17:BM=64,BN=64,STAGES=8" > $OUT/b3d-odd.txt 2>&1
echo "odd exit $?"; grep -ciE "fail|error|mismatch" $OUT/b3d-odd.txt; cut -c1-160 $OUT/b3d-odd.txt | tail -50
s=$(date +%s)
timeout -s TERM 440 gemmbench tune -i 17 --shapes benchmarks/shapes --table gemmbench/rungs/tf32_tma_ws_h200.json --overwrite --no-tune-cache --budget 0.03 --warmup 0.01 --gpus all --results-dir .tune17 > $OUT/tune17-1.txt 2>&1
echo "tune exit $? after $(( $(date +%s) - s )) s"
tail -5 $OUT/tune17-1.txt | cut -c1-220
mkdir -p $OUT/tune17; cp -r .tune17/. $OUT/tune17/ ; ls -la $OUT/tune17
cp gemmbench/rungs/tf32_tma_ws_h200.json $OUT/ 2>/dev/null; head -c 600 gemmbench/rungs/tf32_tma_ws_h200.json
