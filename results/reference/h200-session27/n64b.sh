set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
A="4096x64x4096,8192x64x8192,4096x60x4096,16384x64x4096"
B="2048x64x8192,1000x17x3001,300x40x5000,2048x32x8192"
for pr in "32 bf16" "33 fp16"; do set -- $pr; r=$1; p=$2
  echo "### A $p" | tee -a $OUT/n64b.txt
  python3 .scratch/exp.py $A 3 $p "cur:$r;n64s8:$r:BM=128,BN=64,STAGES=8,KSPLIT=4,CLUSTER=1,PERSISTENT=1;n64s4:$r:BM=128,BN=64,STAGES=4,KSPLIT=4,CLUSTER=1,PERSISTENT=1;n64c1:$r:BM=128,BN=64,STAGES=8,KSPLIT=1,CLUSTER=1,PERSISTENT=1" 2>&1 | grep -v precompiled | tee -a $OUT/n64b.txt
  echo "### B $p" | tee -a $OUT/n64b.txt
  python3 .scratch/exp.py $B 3 $p "cur:$r;n64:$r:BN=64;n64m128:$r:BM=128,BN=64,STAGES=8" 2>&1 | grep -v precompiled | tee -a $OUT/n64b.txt
done
