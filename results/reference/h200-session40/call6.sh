#!/bin/bash
# session 40, call 6 (nvidia-h200): a scratch NaN recomputation shared by the warp (coop/): the specials at every
# build, then what an Inf costs, main against it.
set +e
source .device/env.sh
D=$OUT/c6; mkdir -p $D
timeout 400 python3 .scratch/s40/coop_check.py > $D/coop-check.txt 2>&1
echo "exit $?" >> $D/coop-check.txt
cat $D/coop-check.txt
cd $OUT && tar czf c6.tgz c6 && rm -rf c6
