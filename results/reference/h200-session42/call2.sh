#!/bin/bash
# session 42, call 2 (nvidia-h200-x2): rung 17's table remade with its stored command on both GPUs (the shared headers
# changed: element mapping in one place, nan_recompute.cuh).
set +e
source .device/env.sh
D=$OUT/c2; mkdir -p $D
CMD=$(python3 -c "import json;print(json.load(open('gemmbench/rungs/tf32_tma_ws_h200.json'))['command'])")
echo "$CMD"
/usr/bin/time -f "%e s" timeout 575 $CMD > $D/tune17.txt 2>&1
echo "exit $?"
tail -n 15 $D/tune17.txt | cut -c1-200
cp gemmbench/rungs/tf32_tma_ws_h200.json $D/
ls .tune17 | head; tar czf $D/tune17-records.tgz .tune17 2>/dev/null
gzip $D/tune17.txt
