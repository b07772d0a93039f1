set -x
A="16x4096x4096,64x4096x4096,32x4096x4096"
python3 .scratch/exp.py $A 3 bf16 "dflt:32;w256s8:32:BN=256,KSPLIT=8,STAGES=5;n64s4:32:BN=64,KSPLIT=4,STAGES=8;s8:32:KSPLIT=8;s4st6:32:KSPLIT=4,STAGES=6" 2>&1 | grep -v precompiled > $OUT/skinnyA-bf16.txt
B="16x8192x8192,64x8192x8192"
python3 .scratch/exp.py $B 3 bf16 "dflt:32;pairs:32:BN=128,KSPLIT=2,CLUSTER=2,PERSISTENT=0,STAGES=6;w256s4:32:BN=256,KSPLIT=4,STAGES=5;n64:32:BN=64,STAGES=8;s4:32:KSPLIT=4,STAGES=8" 2>&1 | grep -v precompiled > $OUT/skinnyB-bf16.txt
C="16x14336x4096,64x11008x4096,32x4096x14336"
python3 .scratch/exp.py $C 3 bf16 "dflt:32;n64:32:BN=64,STAGES=8;w256:32:BN=256,STAGES=5;s4:32:KSPLIT=4,STAGES=8" 2>&1 | grep -v precompiled > $OUT/skinnyC-bf16.txt
ncu --profile-from-start off --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed python3 .scratch/prof.py bf16 16x4096x4096,64x8192x8192 "cublas:0;dflt:32" > $OUT/ncu-skinny.txt 2>&1
set +x
