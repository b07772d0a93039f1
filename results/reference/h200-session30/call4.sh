T="BM=64,BN=64,CLUSTER=1,KSPLIT=1,PERSISTENT=0"
S="127x4096x4096,100x4096x4096,65x4096x4096,110x4096x4096,128x4096x4096,127x4096x8192"
python3 .scratch/exp.py $S 3 bf16 "new:32;t8:32:$T,STAGES=8;t12:32:$T,STAGES=12;t12p:32:BM=64,BN=64,CLUSTER=1,KSPLIT=1,PERSISTENT=1,STAGES=12" 2>&1 | grep -v precompiled > $OUT/t64-bf16.txt
for f in $OUT/t64*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror' $f | awk '{print $1, $2, $3, $4, $5, $6}'; done
timeout 200 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_elapsed.max,smsp__warps_launched.sum python3 .scratch/s30/ncu16.py bf16 32 127x4096x4096 "BM=64,BN=64,CLUSTER=1,KSPLIT=1,PERSISTENT=0,STAGES=12" > $OUT/ncu-active.txt 2>&1
grep -E "^  [a-z_]+.*Device|duration|cycles" $OUT/ncu-active.txt
