MC="BM=64,BN=64,CLUSTER=2,KSPLIT=1,PERSISTENT=0"
S="127x4096x4096,100x4096x4096,110x4096x4096,65x4096x4096,96x4096x4096,120x4096x4096,128x4096x4096,127x4096x8192,33x200x999,200x4096x4096"
python3 .scratch/exp.py $S 3 bf16 "own:32;mc12:32:$MC,STAGES=12;mc8:32:$MC,STAGES=8;t64:32:BM=64,BN=64,CLUSTER=1,KSPLIT=1,PERSISTENT=0,STAGES=12" 2>&1 | grep -v precompiled > $OUT/lean-mc-bf16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/lean-mc-bf16.txt | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'
python3 .scratch/exp.py 127x4096x4096,100x4096x4096,65x4096x4096 3 fp16 "own:33;mc12:33:$MC,STAGES=12" 2>&1 | grep -v precompiled > $OUT/lean-mc-fp16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/lean-mc-fp16.txt | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'
