#!/bin/bash
# session 40, call 7 (nvidia-h200): the warp-shared NaN recomputation (coop/, not landed) on finite inputs against
# main, rung 18's table parameters, 7 interleaved rounds: does it cost anything where nothing is recomputed?
set +e
source .device/env.sh
D=$OUT/c7; mkdir -p $D
timeout 200 python3 .scratch/s40/coop_ab.py 1024x1024x1024,512x512x512,2048x2048x2048,127x4096x4096,4096x127x4096,4096x4096x4096 7 18 > $D/coop-ab-18.txt 2>&1
grep -E "^==|main|coop" $D/coop-ab-18.txt | sed 's/{.*}//' | cut -c1-160
cd $OUT && tar czf c7.tgz c7 && rm -rf c7
