# session 37, call 2 (nvidia-h200): rung 18's tensor-core partial sums over more K tiles (FLUSH 4, 8, 16; the
# static_assert and the parameter check relaxed in the working tree only), against FLUSH 1 and 2, each beside
# cuBLAS SGEMM: speed in 5 interleaved rounds, NVML energy per call, and the max error of each (both passes)
source .device/env.sh
set +e
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
s=$(date +%s)
ESECS=1 timeout 400 python3 .scratch/s37/exp.py 4096x4096x256,2048x2048x2048,4096x4096x4096,8192x8192x8192,4096x4096x16384,4096x4096x8192,1000x1000x1000 5 3xtf32 "f1:18:FLUSH=1;f2:18:FLUSH=2;f4:18:FLUSH=4;f8:18:FLUSH=8;f16:18:FLUSH=16" > $OUT/flush.txt 2>&1
echo "exp exit $? in $(( $(date +%s) - s )) s"
cut -c1-230 $OUT/flush.txt
