P="BM=64,BN=128,CLUSTER=2,KSPLIT=2,PERSISTENT=0,STAGES=6"
S="65x4096x4096,72x4096x4096,80x4096x4096,90x4096x4096,96x4096x4096,100x4096x4096,110x4096x4096,127x4096x4096,128x4096x4096,100x3072x4096,127x3072x4096,127x4096x8192,80x4096x14336,90x4001x2100,128x4096x2048"
python3 .scratch/exp.py $S 3 bf16 "new:32;pairs:32:$P" 2>&1 | grep -v precompiled > $OUT/pairs64-bf16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/pairs64-bf16.txt | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'
python3 .scratch/exp.py 65x4096x4096,80x4096x4096,100x4096x4096,110x4096x4096,127x4096x4096 3 fp16 "new:33;pairs:33:$P" 2>&1 | grep -v precompiled > $OUT/pairs64-fp16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/pairs64-fp16.txt | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'
for t in memcheck racecheck synccheck; do for s in "90 4001 2100" "127 4096 2048"; do
  echo "== $t $s"; timeout 100 compute-sanitizer --tool $t --print-limit 5 python3 benchmarks/sanitize.py $s 24,30,31,32,33 2>&1 | grep -E "^rung|SUMMARY|rror"
done; done > $OUT/sanitizers-pairs64.txt 2>&1
cat $OUT/sanitizers-pairs64.txt
