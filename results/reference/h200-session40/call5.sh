#!/bin/bash
# session 40, call 5 (nvidia-h200): what an Inf costs 3xTF32 with the FP32 recomputation (rungs 18, 15; cuBLAS).
set +e
source .device/env.sh
D=$OUT/c5; mkdir -p $D
timeout 250 python3 .scratch/s40/inf_cost.py 4096 4096 4096 > $D/inf-cost-4096.txt 2>&1
timeout 100 python3 .scratch/s40/inf_cost.py 1024 1024 1024 > $D/inf-cost-1024.txt 2>&1
cat $D/inf-cost-*.txt
cd $OUT && tar czf c5.tgz c5 && rm -rf c5
