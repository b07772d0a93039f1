#!/bin/bash
# session 44, call E (nvidia-h200): rung 17's tune with the settle extension off at 24 shapes where its set row
# ran throttled, to compare its choices with the shipped table's (made with the extension).
set +e
source .device/env.sh
D=$OUT/cE; mkdir -p $D
s=$(date +%s); timeout 150 python3 .scratch/s44/nosettle.py tune -i 17 --shapes .scratch/s44/capped24.csv --overwrite --no-tune-cache --budget 0.03 --warmup 0.01 --results-dir $D/S --table $D/S24.json > $D/S24.txt 2>&1; echo "S24 exit $? $(( $(date +%s) - s )) s"
cd $OUT && tar czf cE.tgz cE && rm -rf cE
