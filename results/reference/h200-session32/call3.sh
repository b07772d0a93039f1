T="t256:32:BM=128,BN=256,STAGES=4;t192:32:BM=192,BN=128,STAGES=4;t128:32:BM=128,BN=128,STAGES=6;t64:32:BM=64,BN=128,STAGES=8"
python3 .scratch/exp.py 6144x6144x4096,8192x8192x4096 3 bf16 "$T" 2>&1 | grep -v precompiled > $OUT/call3-rates-bf16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/call3-rates-bf16.txt | awk '{print $1, $2, $3, $4, $5, $6}'
T16="t256:33:BM=128,BN=256,STAGES=4;t192:33:BM=192,BN=128,STAGES=4;t128:33:BM=128,BN=128,STAGES=6;t64:33:BM=64,BN=128,STAGES=8"
python3 .scratch/exp.py 6144x6144x4096 3 fp16 "$T16" 2>&1 | grep -v precompiled > $OUT/call3-rates-fp16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/call3-rates-fp16.txt | awk '{print $1, $2, $3, $4, $5, $6}'
python3 .scratch/exp.py 2048x1024x4096 5 fp16 "own:33" 2>&1 | grep -v precompiled > $OUT/call3-2048x1024x4096-fp16.txt
python3 .scratch/exp.py 2048x1024x4096 5 bf16 "own:32" 2>&1 | grep -v precompiled > $OUT/call3-2048x1024x4096-bf16.txt
grep -E '^==|^   ' $OUT/call3-2048x1024x4096-*.txt | cut -c1-200
timeout 200 ncu --cache-control none --clock-control none --section SpeedOfLight --section LaunchStats python3 .scratch/s30/ncu16.py bf16 32 150x3000x4000,16x5120x4096,512x512x32768 > $OUT/call3-ncu-launch.txt 2>&1
grep -E "^  [a-zA-Z_].*\(|Duration|Cluster Size|Grid Size|Block Size|Registers Per|Shared Memory Config|Dynamic Shared|SM Frequency|Compute \(SM\) Th|Memory Through|^[0-9]+x" $OUT/call3-ncu-launch.txt | cut -c1-150 | head -150
