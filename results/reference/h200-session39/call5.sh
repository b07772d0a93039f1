#!/bin/bash
# session 39, call 5: where rung 17's B path costs at M = 128. Scratch variants (results wrong but for r17):
# nolds (fragments read once a unit), ldsonly 1 (read every K tile into unused registers, waited for after the
# next issue), ldsonly 2 (waited for at once), slice; 5 interleaved rounds.
source .device/env.sh
D=$OUT/c5; mkdir -p $D
cd .scratch/s39
timeout 300 python3 exp38.py 128x11008x4096,128x12288x4096,4096x4096x4096 5 tf32 \
  "r17:17;nolds:17:XP_NOLDS=1;lds1:17:XP_LDSONLY=1;lds2:17:XP_LDSONLY=2;slice:17:XP_SLICE=1" > $D/ldsonly.txt 2>&1
grep -E "^==|   (r17|nolds|lds1|lds2|slice|cublas)" $D/ldsonly.txt | sed 's/{.*}//' | cut -c1-150
cd $OUT && tar czf c5.tgz c5 && rm -rf c5
