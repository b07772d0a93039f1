P2="KSPLIT=2,CLUSTER=2,BM=128,BN=128,PERSISTENT=0"
S="200x4096x4096,256x4096x4096,128x8192x8192,1024x1024x16384,4096x256x4096,601x999x2049"
python3 .scratch/exp.py $S 3 bf16 "new:32;p6:32:$P2,STAGES=6" 2>&1 | grep -v precompiled > $OUT/pair128-bf16.txt
S2="127x4096x4096,4096x128x4096,64x4096x4096,128x1024x4096,33x3001x4097"
python3 .scratch/exp.py $S2 3 bf16 "new:32;s8:32:STAGES=8" 2>&1 | grep -v precompiled > $OUT/split64-bf16.txt
(cd .scratch/old && python3 ../exp.py 200x4096x4096,1024x1024x16384,127x4096x4096,64x4096x4096 3 bf16 "head:32" 2>&1 | grep -v precompiled > $OUT/head-bf16.txt)
python3 .scratch/exp.py 512x4096x4096,256x8192x8192 3 bf16 "r22s6:22:BM=128,BN=128,STAGES=6;r22s4:22:BM=128,BN=128,STAGES=4;r26s6:26:BM=128,BN=128,STAGES=6;r26s4:26:BM=128,BN=128,STAGES=4" 2>&1 | grep -v precompiled > $OUT/lower-bf16.txt
for f in $OUT/*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror|Trace' $f | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'; done
timeout 45 compute-sanitizer --tool racecheck python3 benchmarks/sanitize.py 601 999 2049 32 > $OUT/san-racecheck-601.txt 2>&1; tail -3 $OUT/san-racecheck-601.txt
timeout 45 compute-sanitizer --tool racecheck python3 benchmarks/sanitize.py 33 3001 4097 32 > $OUT/san-racecheck-33.txt 2>&1; tail -3 $OUT/san-racecheck-33.txt
