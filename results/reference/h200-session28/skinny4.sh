S="16x4096x4096,32x4096x4096,48x4096x4096,16x8192x8192,32x8192x8192,64x8192x8192,16x14336x4096,16x11008x4096,16x6144x4096,48x6144x4096,16x5120x4096,16x4096x14336,17x1000x3001,4096x4096x4096"
for pr in "bf16 32" "fp16 33"; do set -- $pr
  python3 .scratch/exp.py $S 3 $1 "new:$2" 2>&1 | grep -v precompiled > $OUT/s4-new-$1.txt
  (cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $S 3 $1 "head:$2" 2>&1 | grep -v precompiled > $OUT/s4-head-$1.txt)
done
python3 .scratch/exp.py 64x4096x4096,100x4096x4096,127x4096x4096 3 bf16 "new:32;q128:32:BM=128,BN=128,KSPLIT=4,CLUSTER=1,PERSISTENT=1,STAGES=4;q128s8:32:BM=128,BN=128,KSPLIT=8,CLUSTER=1,PERSISTENT=1,STAGES=4" 2>&1 | grep -v precompiled > $OUT/s4-m128.txt
