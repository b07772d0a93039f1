#!/bin/bash
# session 42, call 3 (nvidia-h200-x2): rung 18's table remade with its stored command on both GPUs (the shared headers
# changed: element mapping in one place, nan_recompute.cuh).
set +e
source .device/env.sh
D=$OUT/c3; mkdir -p $D
CMD=$(python3 -c "import json;print(json.load(open('gemmbench/rungs/3xtf32_tma_ws_h200.json'))['command'])")
echo "$CMD"
/usr/bin/time -f "%e s" timeout 500 $CMD > $D/tune18.txt 2>&1
echo "exit $?"
tail -n 15 $D/tune18.txt | cut -c1-200
cp gemmbench/rungs/3xtf32_tma_ws_h200.json $D/
ls .tune18 | head; tar czf $D/tune18-records.tgz .tune18 2>/dev/null
gzip $D/tune18.txt
