# session 37, call 4 (nvidia-h200): rung 17 at the M = 128 shapes where cuBLAS TF32 streams DRAM faster: 7 slots of
# 128 x 128 (the most shared memory allows; the tune tries 4 and 6), 5 slots, and 64 x 128 tiles on 9 slots, each
# beside the table's choice and cuBLAS TF32, 7 interleaved rounds, both verification passes; then NVML energy
source .device/env.sh
set +e
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
s=$(date +%s)
ESECS=1 timeout 300 python3 .scratch/s37/exp.py 128x11008x4096,128x12288x4096,128x14336x4096,128x4096x11008,127x4096x4096,128x8192x8192 7 tf32 "t:17:B3D=1;s7:17:STAGES=7;s5:17:STAGES=5;b64s9:17:BM=64,STAGES=9" > $OUT/stages-m128.txt 2>&1
echo "exp exit $? in $(( $(date +%s) - s )) s"
cut -c1-200 $OUT/stages-m128.txt
