S="127x4096x4096,100x4096x4096,65x4096x4096,110x4096x4096,128x4096x4096,127x4096x8192,64x4096x4096,256x4096x4096"
T="BM=64,CLUSTER=2,KSPLIT=1,PERSISTENT=0,SHARE_A=1"
python3 .scratch/exp.py $S 3 bf16 "own:32;sa12:32:$T,BN=64,STAGES=12;sa8:32:$T,BN=64,STAGES=8;sa128:32:$T,BN=128,STAGES=6" 2>&1 | grep -v precompiled > $OUT/sa-bf16.txt
for f in $OUT/*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror|Trace' $f | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'; done
