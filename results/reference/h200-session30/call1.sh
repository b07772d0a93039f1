set -x
cd /work 2>/dev/null; cd - >/dev/null
C3="c3:32:BM=128,BN=128,STAGES=3,CLUSTER=3,KSPLIT=3,PERSISTENT=0"
C4="c4:32:BM=128,BN=128,STAGES=3,CLUSTER=4,KSPLIT=4,PERSISTENT=0"
P4="p4:32:BM=128,BN=128,STAGES=4,CLUSTER=1,KSPLIT=4,PERSISTENT=1"
S="127x4096x4096,100x4096x4096,80x4096x4096,65x4096x4096,128x4096x4096,110x4096x4096,96x4096x4096,150x3000x4000,256x8192x8192"
python3 .scratch/exp.py $S 3 bf16 "new:32;$C3;$C4;$P4" 2>&1 | grep -v precompiled > $OUT/m128-bf16.txt
timeout 120 ncu --print-summary per-kernel --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__cluster_dim_z,launch__registers_per_thread python3 .scratch/s30/ncu16.py bf16 32 127x4096x4096,100x4096x4096,128x4096x4096,256x8192x8192 "BM=128,BN=128,STAGES=3,CLUSTER=3,KSPLIT=3,PERSISTENT=0" > $OUT/ncu-m128.txt 2>&1
for f in $OUT/m128*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror' $f | awk '{print $1, $2, $3, $4, $5, $6}'; done
grep -E "nvjet|sm90|cutlass|gemm|Kernel|duration|grid_size|cluster_dim_x" $OUT/ncu-m128.txt | head -80
