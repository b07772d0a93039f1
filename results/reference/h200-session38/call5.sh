#!/bin/bash
# session 38, call 5: rung 18's split of the B fragments: two-op rounding (XP_CVT=2) and split ahead (XP_PRE=1)
source .device/env.sh
D=$OUT/c5; mkdir -p $D
cd .scratch/s38
V="r18:18;cvt2:18:XP_CVT=2;pre:18:XP_PRE=1;pre2:18:XP_PRE=1,XP_CVT=2"
timeout 120 python3 exp38.py 333x555x777,127x320x511,1000x1000x1000,4096x64x4096,129x96x4097 1 3xtf32 "$V" 2>&1 | tee $D/odd18.txt
ESECS=1 EROUNDS=3 timeout 380 python3 exp38.py 4096x4096x4096,8192x8192x8192,2048x2048x2048,4096x4096x16384 5 3xtf32 "$V" 2>&1 | tee $D/time18.txt
