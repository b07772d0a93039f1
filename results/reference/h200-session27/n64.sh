# 16-bit: BN = 64 tiles for N <= 64 (wgmma n64), and 7 ring slots for the pairs of 64 x 128 tiles.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
A="4096x16x4096,4096x32x4096,4096x48x4096,4096x64x4096,8192x64x8192"
B="2048x64x8192,1000x17x3001,300x40x5000"
C="4096x128x4096,128x4096x4096,4096x96x4096,1024x512x4096,2048x256x4096,512x768x3072"
for pr in "32 bf16" "33 fp16"; do set -- $pr; r=$1; p=$2
  echo "### A $p" | tee -a $OUT/n64.txt
  python3 .scratch/exp.py $A 3 $p "cur:$r;n64s8:$r:BM=128,BN=64,STAGES=8,KSPLIT=4,CLUSTER=1,PERSISTENT=1;n64s4:$r:BM=128,BN=64,STAGES=4,KSPLIT=4,CLUSTER=1,PERSISTENT=1;n64s8k3:$r:BM=128,BN=64,STAGES=8,KSPLIT=3,CLUSTER=1,PERSISTENT=1" 2>&1 | grep -v precompiled | tee -a $OUT/n64.txt
  echo "### B $p" | tee -a $OUT/n64.txt
  python3 .scratch/exp.py $B 3 $p "cur:$r;n64:$r:BN=64" 2>&1 | grep -v precompiled | tee -a $OUT/n64.txt
  echo "### C $p" | tee -a $OUT/s7.txt
  python3 .scratch/exp.py $C 3 $p "cur:$r;s7:$r:STAGES=7" 2>&1 | grep -v precompiled | tee -a $OUT/s7.txt
done
