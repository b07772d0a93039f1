#!/bin/bash
# session 39, call 4: rung 17 with each k8 slice of B rounded and issued as soon as its fragments are in
# (XP_SLICE, scratch copy r17x.cu), against the scratch copy as shipped and main's rung 17; 5 rounds, then energy.
source .device/env.sh
D=$OUT/c4; mkdir -p $D
cd .scratch/s39
ESECS=1 EROUNDS=3 timeout 420 python3 exp38.py 128x11008x4096,128x12288x4096,4096x4096x4096,2048x14336x4096,1000x1000x1000,127x320x511,8192x8192x8192 5 tf32 \
  "r17:17;x0:17:XP_SLICE=0;slice:17:XP_SLICE=1" > $D/slice.txt 2>&1
grep -E "^==|   (r17|x0|slice|cublas)" $D/slice.txt | sed 's/{.*}//' | cut -c1-170
cd $OUT && tar czf c4.tgz c4 && rm -rf c4
