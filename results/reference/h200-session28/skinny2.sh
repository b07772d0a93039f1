S1="16x8192x8192,32x8192x8192,64x8192x8192,16x14336x4096,64x14336x4096,16x11008x4096,64x11008x4096,16x6144x4096"
S2="16x4096x11008,16x4096x14336,64x4096x14336,128x11008x4096,128x12288x4096"
V="dflt:32;p128:32:BN=128,KSPLIT=2,CLUSTER=2,PERSISTENT=0,STAGES=6;p256:32:BM=64,BN=256,KSPLIT=2,CLUSTER=2,PERSISTENT=0,STAGES=3;w256:32:BM=64,BN=256,KSPLIT=1,CLUSTER=1,PERSISTENT=1,STAGES=5"
python3 .scratch/exp.py $S1 3 bf16 "$V" 2>&1 | grep -v precompiled > $OUT/skinny2-S1-bf16.txt
python3 .scratch/exp.py $S2 3 bf16 "$V" 2>&1 | grep -v precompiled > $OUT/skinny2-S2-bf16.txt
python3 .scratch/exp.py $S1 3 fp16 "${V//:32/:33}" 2>&1 | grep -v precompiled > $OUT/skinny2-S1-fp16.txt
python3 .scratch/exp.py 127x255x2051,33x1000x4097,64x2048x999 1 bf16 "p256:32:BM=64,BN=256,KSPLIT=2,CLUSTER=2,PERSISTENT=0,STAGES=3" 2>&1 | grep -v precompiled > $OUT/skinny2-odd.txt
for t in memcheck racecheck synccheck; do timeout 120 compute-sanitizer --tool $t --print-limit 5 python3 .scratch/san_p256.py 2>&1 | tail -2; done > $OUT/skinny2-san.txt
