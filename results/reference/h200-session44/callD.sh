#!/bin/bash
# session 44, call D (nvidia-h200): rung 17's tune at 5 shapes, as it is (N) and with the warm-up's settle
# extension off (S), alternated: N1 S1 N2 S2. Same options as session 43's profile.
set +e
source .device/env.sh
D=$OUT/cD; mkdir -p $D
O="tune -i 17 --shapes .scratch/s44/prof.csv --overwrite --no-tune-cache --budget 0.03 --warmup 0.01 --results-dir"
s=$(date +%s); timeout 80 python3 -m gemmbench $O $D/N1 --table $D/N1.json > $D/N1.txt 2>&1; echo "N1 exit $? $(( $(date +%s) - s )) s"
s=$(date +%s); timeout 45 python3 .scratch/s44/nosettle.py $O $D/S1 --table $D/S1.json > $D/S1.txt 2>&1; echo "S1 exit $? $(( $(date +%s) - s )) s"
s=$(date +%s); timeout 60 python3 -m gemmbench $O $D/N2 --table $D/N2.json > $D/N2.txt 2>&1; echo "N2 exit $? $(( $(date +%s) - s )) s"
s=$(date +%s); timeout 40 python3 .scratch/s44/nosettle.py $O $D/S2 --table $D/S2.json > $D/S2.txt 2>&1; echo "S2 exit $? $(( $(date +%s) - s )) s"
cd $OUT && tar czf cD.tgz cD && rm -rf cD
