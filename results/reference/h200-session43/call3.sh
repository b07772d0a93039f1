#!/bin/bash
# session 43, call 3 (nvidia-h200): rung 18's table remake resumed from call 2's stopped record.
set +e
source .device/env.sh
D=$OUT/c3; mkdir -p $D
CMD=$(python3 -c "import json;print(json.load(open('gemmbench/rungs/3xtf32_tma_ws_h200.json'))['command'])")
R=$(ls .tune18/tune-gpu-*.json | head -1)
echo "$CMD --resume $R"
/usr/bin/time -f "%e s" timeout -s TERM 560 $CMD --resume $R > $D/tune18-2.txt 2>&1
echo "exit $?"
tail -n 8 $D/tune18-2.txt | cut -c1-200
cp gemmbench/rungs/3xtf32_tma_ws_h200.json $D/
ls .tune18; tar czf $OUT/tune18-2.tgz .tune18
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
