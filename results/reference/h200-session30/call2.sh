P="KSPLIT=2,CLUSTER=2,BM=64,BN=128,PERSISTENT=0"
S="127x4096x4096,100x4096x4096,65x4096x4096,128x4096x4096,4096x128x4096,128x4096x11008"
python3 .scratch/exp.py $S 3 bf16 "new:32;s5:32:$P,STAGES=5;s7:32:$P,STAGES=7" 2>&1 | grep -v precompiled > $OUT/stages-pairs-bf16.txt
C="KSPLIT=3,CLUSTER=3,BM=64,BN=128,PERSISTENT=0"
S="64x4096x4096,16x4096x14336"
python3 .scratch/exp.py $S 3 bf16 "new:32;s4:32:$C,STAGES=4;s5:32:$C,STAGES=5" 2>&1 | grep -v precompiled > $OUT/stages-c3-bf16.txt
for f in $OUT/stages*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror' $f | awk '{print $1, $2, $3, $4, $5, $6}'; done
