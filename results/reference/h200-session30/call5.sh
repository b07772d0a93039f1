MC="BM=64,BN=64,CLUSTER=2,KSPLIT=1"
S="127x4096x4096,100x4096x4096,110x4096x4096,65x4096x4096,128x4096x4096,127x4096x8192,120x4096x4096,96x4096x4096,129x1001x4097,33x200x999,200x4096x4096,256x4096x4096"
python3 .scratch/exp.py $S 3 bf16 "new:32;mc13:32:$MC,STAGES=13,PERSISTENT=0;mc8:32:$MC,STAGES=8,PERSISTENT=0;mc12p:32:$MC,STAGES=12,PERSISTENT=1" 2>&1 | grep -v precompiled > $OUT/mc-bf16.txt
python3 .scratch/exp.py 127x4096x4096,100x4096x4096,129x1001x4097 3 fp16 "new:33;mc13:33:$MC,STAGES=13,PERSISTENT=0" 2>&1 | grep -v precompiled > $OUT/mc-fp16.txt
python3 .scratch/exp.py 127x4096x4096,129x1001x4097 1 bf16 "r26:26:$MC,STAGES=13,PERSISTENT=0;r24:24:$MC,STAGES=13,PERSISTENT=0" 2>&1 | grep -v precompiled > $OUT/mc-24-26.txt
for f in $OUT/mc*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror|Trace' $f | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'; done
